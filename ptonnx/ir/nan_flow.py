"""Which values of a graph are sure to be NaN (or a sure bool) once some inputs are NaN.

A loop whose stopping test reads a NaN never stops: PyTensor's gradient loops of
gammainc run their 100,000 trips for a NaN argument. When a NaN input makes the
stopping test surely false and keeps itself and every used result NaN, the
element's outcome is known (NaN results, not stopped) and the loop may leave
it: `lifting/scalar_loop.py` does. The analysis is exact where it answers: an op
is listed only when NumPy's result and ptonnx's lowering agree for every NaN
operand (`Pow` and `Max` are not: 1 ** NaN is 1).
"""

from __future__ import annotations

from ptonnx.ir.core import Graph, Value
from ptonnx.ir.registry import get_schema
from ptonnx.ir.types import FLOAT_DTYPES

NAN, TRUE, FALSE = "nan", "true", "false"


def nan_in_nan_out(op: str) -> bool:
    """A NaN operand gives a NaN result (the op's `nan_in_nan_out` trait)."""
    return get_schema(op).has("nan_in_nan_out")


def _constant(v: Value) -> str | None:
    if v.const is None or v.const.size != 1:
        return None
    item = v.const.reshape(()).item()
    if v.dtype == "bool":
        return TRUE if item else FALSE
    return NAN if v.dtype in FLOAT_DTYPES and item != item else None


def _step(op: str, ins: list[str | None], node) -> str | None:
    float_out = node.outputs[0].dtype in FLOAT_DTYPES
    if nan_in_nan_out(op) and float_out and NAN in ins:
        return NAN
    if op == "Cast" and float_out and node.inputs[0].dtype in FLOAT_DTYPES and ins[0] == NAN:
        return NAN
    if get_schema(op).has("nan_compares_false") and NAN in ins:
        return FALSE
    if op == "NotEqual" and NAN in ins:
        return TRUE
    if op == "IsNaN" and ins[0] == NAN:
        return TRUE
    if op == "Not" and ins[0] in (TRUE, FALSE):
        return TRUE if ins[0] == FALSE else FALSE
    if op == "And":
        return FALSE if FALSE in ins else TRUE if all(i == TRUE for i in ins) else None
    if op == "Or":
        return TRUE if TRUE in ins else FALSE if all(i == FALSE for i in ins) else None
    if op == "Where":
        cond, a, b = ins
        return a if cond == TRUE else b if cond == FALSE else a if a == b and a is not None else None
    return None


def sure_values(graph: Graph, nan_inputs: set[int]) -> list[str | None]:
    """For each output of `graph`: NAN, TRUE or FALSE when sure, given that the inputs at
    `nan_inputs` are NaN (and nothing about the others); None when not sure."""
    known: dict[Value, str | None] = {graph.inputs[i]: NAN for i in nan_inputs}

    def get(v: Value):
        return known.get(v) if v.const is None else _constant(v)

    for node in graph:
        if len(node.outputs) == 1:
            known[node.output] = _step(node.op, [get(v) for v in node.inputs], node)
    return [get(v) for v in graph.outputs]
