"""Bring the inputs that share a type variable to one dtype, the one PyTensor chose.

`x * 2` lifts to `Mul(x: f32, 2: i8)`; ONNX needs both inputs of `Mul` to be
float32. A constant is re-materialised in the target dtype when its value
survives the conversion; any other value gets a `Cast` (one per value and
dtype, placed right after the value's definition so every user can share it).

Integer arithmetic ONNX does not define for a small dtype (`Neg` of uint8,
`Pow` of int8) is computed in a wider integer dtype and cast back: it wraps
modulo 2**bits, so the bits are the ones NumPy gives.
"""

from __future__ import annotations

import attrs
import numpy as np

from ptonnx.errors import DtypeError
from ptonnx.ir import Builder, Graph, Node, Value, get_schema
from ptonnx.ir.registry import disallowed_dtypes, mixed_inputs
from ptonnx.ir.printer import format_node
from ptonnx.ir.types import ALL_DTYPES, promote
from ptonnx.passes.base import PassResult


@attrs.define
class UnifyDtypes:
    name: str = "unify_dtypes"

    def run(self, graph: Graph) -> PassResult:
        casts: dict[tuple[Value, str], Value] = {}
        counts = {"constants_converted": 0, "casts_inserted": 0}
        for node in list(graph):
            var_of = get_schema(node.op).vars_of_inputs(len(node.inputs))
            for i, _, dtype in mixed_inputs(node):
                v = node.inputs[i]
                if v.const is not None:
                    new = _convert_constant(node, i, v, dtype, truthiness=var_of[i] in ALL_DTYPES)
                    counts["constants_converted"] += 1
                else:
                    new = casts.get((v, dtype))
                    if new is None:
                        new = casts[(v, dtype)] = _cast_after_definition(graph, v, dtype)
                        counts["casts_inserted"] += 1
                graph.set_input(node, i, new)
            if _widen(graph, node):
                counts["ops_widened"] = counts.get("ops_widened", 0) + 1
        total = sum(counts.values())
        return PassResult(total > 0, total, {k: n for k, n in counts.items() if n})


#: integer ops whose result modulo 2**bits only depends on the inputs modulo 2**bits
WRAPPING_OPS = frozenset({"Neg", "Pow", "Add", "Sub", "Mul", "Abs"})
#: wider integer dtypes to try, narrowest first
WIDER = {
    "int8": ("int16", "int32", "int64"),
    "int16": ("int32", "int64"),
    "int32": ("int64",),
    "uint8": ("int16", "int32", "int64"),
    "uint16": ("int32", "int64"),
    "uint32": ("int64",),
    "uint64": ("int64",),
}


def _widen(graph: Graph, node: Node) -> bool:
    """Compute a wrapping integer op ONNX lacks in its dtype in a wider one, cast back."""
    problems = disallowed_dtypes(node)
    if len(problems) != 1 or node.op not in WRAPPING_OPS:
        return False
    _, dtype, allowed = problems[0]
    wide = next((w for w in WIDER.get(dtype, ()) if w in allowed), None)
    if wide is None:
        return False
    builder = Builder(graph, before=node)
    with np.errstate(all="ignore"):
        inputs = [
            Value.constant(v.const.astype(wide), v.name) if v.const is not None else builder.op("Cast", v, to=wide)
            for v in node.inputs
        ]
    wide_node = builder.node(node.op, inputs, node.attrs)
    for old, new in zip(node.outputs, wide_node.outputs):
        graph.replace_all_uses(old, builder.op("Cast", new, to=old.dtype, name=old.name))
    graph.remove(node)
    return True


def _convert_constant(node: Node, index: int, v: Value, dtype: str, truthiness: bool) -> Value:
    """The constant in `dtype`. Converting to the promoted dtype is what PyTensor does itself;
    anything narrower must keep the value (a condition may become bool by truthiness)."""
    with np.errstate(all="ignore"):
        converted = v.const.astype(dtype)
        back = converted.astype(v.dtype)
    widening = promote(v.dtype, dtype) == dtype
    exact = np.array_equal(back, v.const, equal_nan=v.const.dtype.kind == "f")
    if not (widening or exact or truthiness):
        raise DtypeError(
            f"{format_node(node)}\n  input {index} is the constant {v.const!r} ({v.dtype}), which does "
            f"not survive conversion to {dtype}, the dtype this op computes in. Give the constant "
            f"an explicit dtype that holds its value (e.g. pt.constant(value, dtype=...))."
        )
    return Value.constant(converted, v.name)


def _cast_after_definition(graph: Graph, v: Value, dtype: str) -> Value:
    if v.producer is not None:
        builder = Builder(graph, after=v.producer)
    elif len(graph):
        builder = Builder(graph, before=next(iter(graph)))
    else:
        builder = Builder(graph)
    name = f"{v.name}_{dtype}" if v.name else None
    return builder.op("Cast", v, to=dtype, name=name)
