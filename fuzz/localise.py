"""Where a mismatch comes from: the first node that is wrong on the values it was given.

The graph is compiled again with every intermediate value as an output; each
node is then fed the values onnxruntime computed for its inputs and judged
against the node's own PyTensor `perform` on those same values. The first
node that differs is the culprit, and is re-checked alone (one-node graph,
fresh inputs) for a minimal reproducer. When every node matches, the whole
graph only amplified rounding differences: the outcome is "inexact".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.graph.basic import Constant
from pytensor.graph.fg import FunctionGraph
from pytensor.tensor.elemwise import Elemwise
from pytensor.tensor.type import TensorType

import ptonnx
from fuzz.compare import (
    dot_bound,
    narrowest,
    reference_precision,
    session_options,
    wrong_elements,
)

#: matrix-product ops (by class name), and the positions of their two matrix operands and scalar alpha
DOT_OPERANDS = {
    "Dot": (0, 1, None), "Dot22": (0, 1, None), "BatchedDot": (0, 1, None), "Blockwise": (0, 1, None),
    "Dot22Scalar": (0, 1, 2), "Gemv": (2, 3, 1), "CGemv": (2, 3, 1), "Gemm": (2, 3, 1), "Ger": (2, 3, 1), "CGer": (2, 3, 1),
}


@dataclass
class Culprit:
    """The node found wrong; `alone` says whether the one-node graph reproduces it."""

    op: str
    signature: str
    detail: str
    alone: bool | None
    text: str


def op_label(node) -> str:
    op = node.op
    scalar = getattr(op, "scalar_op", None)
    if scalar is not None:
        inner = re.sub(r"\s+", " ", str(scalar))[:100] if type(scalar).__name__ == "Composite" else type(scalar).__name__
        return f"Elemwise{{{inner}}}"
    core = getattr(op, "core_op", None)
    return f"Blockwise{{{type(core).__name__}}}" if core is not None else type(op).__name__


def signature(node) -> str:
    ins = ",".join(getattr(v.type, "dtype", "?") for v in node.inputs)
    outs = ",".join(getattr(v.type, "dtype", "?") for v in node.outputs)
    label = op_label(node)
    if label.startswith("Elemwise{Composite"):
        label = "Elemwise{Composite}"
    return f"{label}({ins})->{outs}"


def node_dtypes(node) -> set[str]:
    dtypes = {getattr(v.type, "dtype", "") for v in (*node.inputs, *node.outputs)}
    inner = getattr(getattr(node.op, "scalar_op", None), "fgraph", None)
    if inner is not None:
        dtypes |= {v.type.dtype for v in inner.variables}
    return dtypes


def perform(node, values):
    """The node's PyTensor `perform` on `values` (copied: inplace ops overwrite their inputs)."""
    storage = [[None] for _ in node.outputs]
    node.op.perform(node, [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in values], storage)
    return [np.asarray(s[0]) for s in storage]


def bound_of(node, values, dtype: str):
    spec = DOT_OPERANDS.get(type(node.op).__name__)
    if spec is None:
        return None
    a, b, alpha = spec
    bound = dot_bound(values[a], values[b], dtype)
    if type(node.op).__name__ in ("Ger", "CGer"):
        bound = dot_bound(np.asarray(values[a])[:, None], np.asarray(values[b])[None, :], dtype)
    if alpha is not None:
        bound = bound * max(1.0, float(np.abs(np.asarray(values[alpha], dtype=np.float64)).max(initial=0)))
    return bound


def tensor_outputs(fgraph):
    seen, outs = set(), []
    for node in fgraph.toposort():
        for o in node.outputs:
            if isinstance(o.type, TensorType) and o not in seen:
                seen.add(o)
                outs.append(o)
    return outs


def expand_composite(node):
    """The node's Composite as a graph of Elemwise ops over fresh inputs (its inner nodes, one by one)."""
    composite = node.op.scalar_op
    inputs = [v.type() for v in node.inputs]
    env = dict(zip(composite.fgraph.inputs, inputs, strict=True))
    for apply in composite.fgraph.toposort():
        args = [env[v] if v in env else pt.constant(np.asarray(v.data, dtype=v.type.dtype)) for v in apply.inputs]
        env.update(zip(apply.outputs, Elemwise(apply.op)(*args, return_list=True), strict=True))
    return FunctionGraph(inputs, [env[o] for o in composite.fgraph.outputs], clone=False)


def is_composite(node) -> bool:
    return type(getattr(node.op, "scalar_op", None)).__name__ == "Composite"


def localise(fgraph, arrays, level: str, expected, inside: bool = False) -> tuple[str, Culprit | None, str]:
    """('mismatch', culprit, note) | ('inexact', None, note) | ('mismatch', None, why not localised).

    A Composite found wrong is expanded into its scalar ops and searched again:
    an ill-conditioned chain inside one Composite (cos of a huge expm1) is
    "inexact" too, and a wrong inner op is named.
    """
    outs = tensor_outputs(fgraph)
    try:
        cm = ptonnx.compile(FunctionGraph(list(fgraph.inputs), outs, clone=True))
        got = cm.with_session_options(session_options(level))(*arrays)
    except Exception as exc:
        return "mismatch", None, f"not localised: the graph with its intermediates as outputs fails: {type(exc).__name__}: {str(exc)[:200]}"
    values = dict(zip(outs, got, strict=True))
    values.update((v, a) for v, a in zip(fgraph.inputs, arrays, strict=True))
    computed_in = narrowest({v.dtype for v in cm.ir.inputs} | {o.dtype for n in cm.ir for o in n.outputs})
    still = False
    for var, exp in zip(fgraph.outputs, expected, strict=True):
        if var in values and wrong_elements(np.asarray(values[var]), np.asarray(exp), computed_in).any():
            still = True
    if not still:
        return "mismatch", None, "not localised: exposing the intermediates makes the difference vanish (an onnxruntime optimisation across nodes?)"
    for node in fgraph.toposort():
        if not all(isinstance(o.type, TensorType) for o in node.outputs):
            continue
        try:
            ins = [v.data if isinstance(v, Constant) else values[v] for v in node.inputs]
            reference = perform(node, ins)
        except Exception:
            continue  # no Python implementation to judge by
        dtype = narrowest(node_dtypes(node) | {reference_precision([node]) or ""})
        for out, ref in zip(node.outputs, reference, strict=True):
            ort_value = np.asarray(values[out])
            if ort_value.dtype != ref.dtype or ort_value.shape != ref.shape:
                bad = np.ones(ref.shape, bool) if ort_value.shape == ref.shape else None
            else:
                bad = wrong_elements(ort_value, ref, dtype, bound_of(node, ins, ref.dtype.name) if ref.dtype.kind == "f" else None)
            if bad is None or bad.any():
                if not inside and is_composite(node):
                    found = _inside(node, ins, reference, level)
                    if found is not None:
                        return found
                return "mismatch", culprit(node, ins, ref, ort_value, bad, level), ""
    return "inexact", None, "every node matches PyTensor on the values onnxruntime gave it: rounding amplified by the graph"


def _inside(node, ins, reference, level):
    """Localise within a wrong Composite; None when its expansion does not show the difference."""
    try:
        status, found, note = localise(expand_composite(node), [np.asarray(x) for x in ins], level, reference, inside=True)
    except Exception:
        return None
    if status == "inexact":
        return "inexact", None, f"every scalar op inside the Composite matches PyTensor on the values onnxruntime gave it: {op_label(node)}"
    if found is not None:
        found.text = f"inside {op_label(node)}:\n{found.text}"
        return status, found, note
    return None


def element(x, shape, index) -> str:
    """The input element that meets output element `index` (or the input's dtype and shape)."""
    x = np.asarray(x)
    if x.size == 1:
        return repr(x.reshape(()).item()) + f":{x.dtype}"
    try:
        return repr(np.broadcast_to(x, shape)[index].item()) + f":{x.dtype}"
    except ValueError:
        return f"{x.dtype}{x.shape}"


def culprit(node, ins, ref, ort_value, bad, level) -> Culprit:
    """Describe the wrong node, and check whether it is wrong alone (a one-node graph)."""
    lines = [f"culprit: {op_label(node)} at {level}", pytensor.dprint(node.outputs, file="str").rstrip()]
    if bad is None or ort_value.dtype != ref.dtype:
        detail = f"dtype/shape {ort_value.dtype}{ort_value.shape} vs PyTensor's {ref.dtype}{ref.shape}"
    else:
        idx = [tuple(int(i) for i in ix) for ix in np.argwhere(bad)[:3]]
        parts = []
        for i in idx:
            args = ", ".join(element(x, ref.shape, i) for x in ins)
            parts.append(f"inputs ({args}) -> PyTensor {ref[i]!r}, ONNX {ort_value[i]!r}")
        detail = f"{int(bad.sum())}/{bad.size} wrong; " + "; ".join(parts)
    lines.append(detail)
    alone = None
    try:
        fresh = [v if isinstance(v, Constant) else v.type() for v in node.inputs]
        single = node.op.make_node(*fresh)
        variables = [v for v in fresh if not isinstance(v, Constant)]
        feed = [x for v, x in zip(fresh, ins, strict=True) if not isinstance(v, Constant)]
        cm = ptonnx.compile(FunctionGraph(variables, single.outputs, clone=True))
        got = cm.with_session_options(session_options(level))(*feed)
        exp = perform(single, [v.data if isinstance(v, Constant) else x for v, x in zip(fresh, ins, strict=True)])
        dtype = narrowest(node_dtypes(node) | {reference_precision([node]) or ""})
        alone = any(
            g.dtype != e.dtype or g.shape != e.shape or wrong_elements(g, e, dtype, bound_of(node, ins, e.dtype.name) if e.dtype.kind == "f" else None).any()
            for g, e in zip(map(np.asarray, got), exp, strict=True)
        )
        lines.append(f"one-node graph: {'reproduces' if alone else 'does NOT reproduce'} the difference")
        if alone:
            from fuzz.generate import array_code

            lines.append("inputs: " + ", ".join(array_code(np.asarray(x)) for x in feed))
    except Exception as exc:
        lines.append(f"one-node graph: could not be built or run ({type(exc).__name__}: {str(exc)[:150]})")
    return Culprit(op_label(node), signature(node), detail, alone, "\n".join(lines))
