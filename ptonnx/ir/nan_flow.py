"""Which values of a graph are sure to be NaN (or a sure bool) once some inputs are NaN.

A loop whose stopping test reads a NaN never stops: PyTensor's gradient loops of
gammainc run their 100,000 trips for a NaN argument. When a NaN input makes the
stopping test surely false and keeps itself and every used result NaN, the
element's outcome is known (NaN results, not stopped) and the loop may leave
it: `lifting/scalar_loop.py` does. The analysis is exact where it answers, and reads
only what the ops' declarations say: the traits `nan_in_nan_out` (not `Pow`: 1 ** NaN
is 1), `nan_compares_false`, `nan_compares_true` and `selects`; an elementwise bool op
of bools is run (its semantics) on every value its unsure operands may take.
"""

from __future__ import annotations

import itertools

import numpy as np

from ptonnx.ir.core import Graph, Value
from ptonnx.ir.registry import evaluate, get_schema
from ptonnx.ir.types import FLOAT_DTYPES

NAN, TRUE, FALSE = "nan", "true", "false"


def _constant(v: Value) -> str | None:
    if v.const is None or v.const.size != 1:
        return None
    item = v.const.reshape(()).item()
    if v.dtype == "bool":
        return TRUE if item else FALSE
    return NAN if v.dtype in FLOAT_DTYPES and item != item else None


#: the most unsure bool operands an op is run over (2**k runs)
MAX_UNSURE = 3


def _step(node, ins: list[str | None]) -> str | None:
    schema = get_schema(node.op)
    out = node.outputs[0].dtype
    if NAN in ins and out in FLOAT_DTYPES and schema.has("nan_in_nan_out"):
        return NAN
    if NAN in ins and schema.has("nan_compares_false"):
        return FALSE
    if NAN in ins and schema.has("nan_compares_true"):
        return TRUE
    if schema.has("selects"):
        cond, a, b = ins
        return a if cond == TRUE else b if cond == FALSE else a if a == b and a is not None else None
    if out == "bool" and schema.has("elementwise") and all(v.dtype == "bool" for v in node.inputs):
        return _run_over_unsure(node, ins)
    return None


def _run_over_unsure(node, ins: list[str | None]) -> str | None:
    """TRUE or FALSE when the op gives it for every value of its unsure (bool) operands."""
    unsure = [i for i, v in enumerate(ins) if v not in (TRUE, FALSE)]
    if len(unsure) > MAX_UNSURE:
        return None
    results = set()
    for values in itertools.product((False, True), repeat=len(unsure)):
        arrays = [np.bool_(v == TRUE) for v in ins]
        for i, value in zip(unsure, values, strict=True):
            arrays[i] = np.bool_(value)
        results.add(bool(evaluate(node.op, arrays, node.attrs)[0]))
    return (TRUE if results == {True} else FALSE) if len(results) == 1 else None


def sure_values(graph: Graph, nan_inputs: set[int]) -> list[str | None]:
    """For each output of `graph`: NAN, TRUE or FALSE when sure, given that the inputs at
    `nan_inputs` are NaN (and nothing about the others); None when not sure."""
    known: dict[Value, str | None] = {graph.inputs[i]: NAN for i in nan_inputs}

    def get(v: Value):
        return known.get(v) if v.const is None else _constant(v)

    for node in graph:
        if len(node.outputs) == 1:
            known[node.output] = _step(node, [get(v) for v in node.inputs])
    return [get(v) for v in graph.outputs]
