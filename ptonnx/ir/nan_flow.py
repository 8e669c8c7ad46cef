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
from ptonnx.ir.types import FLOAT_DTYPES

NAN, TRUE, FALSE = "nan", "true", "false"

#: float ops whose result is NaN when any operand is NaN
NAN_IN_NAN_OUT = frozenset({
    "Abs", "Add", "Sub", "Mul", "Div", "Neg", "Reciprocal", "Exp", "Exp2", "Expm1", "Log", "Log2", "Log10",
    "Log1p", "Log1mexp", "Sqrt", "Sin", "Cos", "Tan", "Sinh", "Cosh", "Tanh", "ArcSin", "ArcCos", "ArcTan",
    "ArcSinh", "ArcCosh", "ArcTanh", "Sigmoid", "Softplus", "Erf", "Erfc", "Erfcx", "Erfinv", "Erfcinv",
    "Gamma", "GammaLn", "Psi", "TriGamma", "Floor", "Ceil", "Round", "RoundHalfAwayFromZero", "Trunc",
    "Identity",
})
#: comparisons: false when any operand is NaN
ORDERED = frozenset({"Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Equal"})


def _constant(v: Value) -> str | None:
    if v.const is None or v.const.size != 1:
        return None
    item = v.const.reshape(()).item()
    if v.dtype == "bool":
        return TRUE if item else FALSE
    return NAN if v.dtype in FLOAT_DTYPES and item != item else None


def _step(op: str, ins: list[str | None], node) -> str | None:
    float_out = node.outputs[0].dtype in FLOAT_DTYPES
    if op in NAN_IN_NAN_OUT and float_out and NAN in ins:
        return NAN
    if op == "Cast" and float_out and node.inputs[0].dtype in FLOAT_DTYPES and ins[0] == NAN:
        return NAN
    if op in ORDERED and NAN in ins:
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
