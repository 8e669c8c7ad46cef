"""`ptonnx.ir.nan_flow`: what a NaN input surely makes of a graph's outputs."""

from __future__ import annotations

import numpy as np

from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.ir.nan_flow import FALSE, NAN, TRUE, sure_values


def _graph():
    g = Graph("g")
    x, y = g.add_input(TensorType("float64", ())), g.add_input(TensorType("float64", ()))
    return g, Builder(g), x, y


def test_arithmetic_carries_nan_and_comparisons_turn_false():
    g, b, x, y = _graph()
    s = b.op("Exp", b.op("Add", x, y))
    g.set_outputs([s, b.op("Less", s, y), b.op("Not", b.op("Less", s, y)), b.op("IsNaN", s), b.op("NotEqual", s, y)])
    assert sure_values(g, {0}) == [NAN, FALSE, TRUE, TRUE, TRUE]
    assert sure_values(g, set()) == [None] * 5


def test_ops_that_can_hide_a_nan_are_unsure():
    """1 ** NaN is 1; a Where may pick the other branch; Max propagates NaN (NumPy's maximum,
    onnxruntime's Max, IREE's after `lowering/iree_forms.py`): its trait says so."""
    g, b, x, y = _graph()
    one = Value.constant(np.float64(1.0))
    g.set_outputs([b.op("Pow", one, x), b.op("Max", x, y), b.op("Where", b.op("Less", y, one), x, y)])
    assert sure_values(g, {0}) == [None, "nan", None]


def test_where_with_a_sure_condition_or_equal_branches():
    g, b, x, y = _graph()
    false = b.op("Less", x, y)
    g.set_outputs([b.op("Where", false, y, x), b.op("Where", b.op("IsNaN", y), x, x), b.op("And", false, b.op("IsNaN", y))])
    assert sure_values(g, {0}) == [NAN, NAN, FALSE]


def test_integer_casts_of_nan_are_unsure():
    g, b, x, _ = _graph()
    g.set_outputs([b.op("Cast", x, to="int64"), b.op("Cast", x, to="float32")])
    assert sure_values(g, {0}) == [None, NAN]
