"""Bring the inputs that share a type variable to one dtype, the one PyTensor chose.

`x * 2` lifts to `Mul(x: f32, 2: i8)`; ONNX needs both inputs of `Mul` to be
float32. A constant is re-materialised in the target dtype when its value
survives the conversion; any other value gets a `Cast` (one per value and
dtype: the first, placed before the value's first user, serves the later ones). Each
mismatched node is rebuilt by the rewrite driver, never edited in place.

What an op computes in (integer arithmetic ONNX lacks for a small dtype, float16)
is not decided here: the `legalise` stage does that, last (`ptonnx/onnxruntime_dtypes.py`).
"""

from __future__ import annotations

import attrs
import numpy as np

from ptonnx.errors import DtypeError
from ptonnx.ir import Builder, Graph, Node, Value, get_schema
from ptonnx.ir.printer import format_node
from ptonnx.ir.registry import mixed_inputs
from ptonnx.ir.types import ALL_DTYPES, promote
from ptonnx.ir.rewrite import Replacement, Rewrite, apply_rewrites
from ptonnx.passes.base import PassResult
from ptonnx.passes.cse import CommonSubexpressionElimination


@attrs.define
class UnifyDtypes:
    name: str = "unify_dtypes"

    def run(self, graph: Graph) -> PassResult:
        counts = {"constants_converted": 0, "casts_inserted": 0}

        def rewrite(builder: Builder, node: Node):
            return _unified(builder, node, counts)

        apply_rewrites(graph, [Rewrite("unify_dtypes", None, rewrite)])
        # one Cast per value and dtype: the first (placed before its first user) serves them all
        counts["casts_inserted"] -= CommonSubexpressionElimination(only=frozenset({"Cast"})).run(graph).rewrites
        total = sum(counts.values())
        return PassResult(total > 0, total, {k: n for k, n in counts.items() if n})


def _unified(builder: Builder, node: Node, counts: dict) -> Replacement | None:
    """`node` rebuilt on inputs of the dtypes its type variables need (its declared output types kept)."""
    mixed = mixed_inputs(node)
    if not mixed:
        return None
    var_of = get_schema(node.op).vars_of_inputs(len(node.inputs))
    inputs = list(node.inputs)
    for i, _, dtype in mixed:
        v = inputs[i]
        if v.const is not None:
            inputs[i] = _convert_constant(node, i, v, dtype, truthiness=var_of[i] in ALL_DTYPES)
            counts["constants_converted"] += 1
        else:
            inputs[i] = builder.op("Cast", v, to=dtype, name=f"{v.name}_{dtype}" if v.name else None)
            counts["casts_inserted"] += 1
    unified = builder.node(node.op, inputs, node.attrs, out_types=[o.type for o in node.outputs])
    return Replacement(dict(zip(node.outputs, unified.outputs, strict=True)))


def _convert_constant(node: Node, index: int, v: Value, dtype: str, truthiness: bool) -> Value:
    """The constant in `dtype`. Converting to the promoted dtype is what PyTensor does itself;
    anything narrower must keep the value (a condition may become bool by truthiness)."""
    with np.errstate(all="ignore"):
        converted = v.const.astype(dtype)
        back = converted.astype(v.dtype)
    widening = promote(v.dtype, dtype) == dtype
    # a round trip misses a wrap between signed and unsigned of one width (uint64 2**64 - 1 is
    # int64 -1 and back): the sign must survive too
    exact = np.array_equal(back, v.const, equal_nan=v.const.dtype.kind == "f") and (
        "bool" in (dtype, v.dtype) or np.array_equal(converted < 0, v.const < 0))
    if not (widening or exact or truthiness):
        raise DtypeError(
            f"{format_node(node)}\n  input {index} is the constant {v.const!r} ({v.dtype}), which does "
            f"not survive conversion to {dtype}, the dtype this op computes in. Give the constant "
            f"an explicit dtype that holds its value (e.g. pt.constant(value, dtype=...))."
        )
    return Value.constant(converted, v.name)
