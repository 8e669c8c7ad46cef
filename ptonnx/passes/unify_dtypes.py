"""Bring the inputs that share a type variable to one dtype, the one PyTensor chose.

`x * 2` lifts to `Mul(x: f32, 2: i8)`; ONNX needs both inputs of `Mul` to be
float32. A constant is re-materialised in the target dtype when its value
survives the conversion; any other value gets a `Cast` (one per value and
dtype, placed right after the value's definition so every user can share it).

What an op computes in (integer arithmetic ONNX lacks for a small dtype, float16)
is not decided here: the `legalise` stage does that, last (`ptonnx/legality.py`).
"""

from __future__ import annotations

import attrs
import numpy as np

from ptonnx.errors import DtypeError
from ptonnx.ir import Builder, Graph, Node, Value, get_schema
from ptonnx.ir.printer import format_node
from ptonnx.ir.registry import mixed_inputs
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
        total = sum(counts.values())
        return PassResult(total > 0, total, {k: n for k, n in counts.items() if n})


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
