"""The `cse` pass: a repeated node is one node; `a + b` and `b + a` are one; `x and x` is x.
Each merge keeps every number (the pass property tests run it on random graphs too)."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx import ir
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.passes.cse import CommonSubexpressionElimination
from tests.conftest import check_like_pytensor

EDGES = np.array([-np.inf, -1e308, -2.5, -5e-324, -0.0, 0.0, 5e-324, 1e-300, 0.5, 3.0, 1e308, np.inf, np.nan])


def _graph():
    g = Graph()
    x = g.add_input(TensorType("float64", (EDGES.size,)), "x")
    return g, x, Builder(g)


def test_a_repeated_node_is_merged_and_one_with_other_attributes_is_not():
    g, x, b = _graph()
    one, two = b.op("ReduceSum", x, axes=(0,)), b.op("ReduceSum", x, axes=(0,))
    kept = b.op("ReduceSum", x, axes=(0,), keepdims=True)
    g.set_outputs([b.op("Add", one, two), kept])
    assert CommonSubexpressionElimination().run(g).rewrites == 1
    assert g.op_counts()["ReduceSum"] == 2


@pytest.mark.parametrize("op", ["Add", "Mul", "Equal"])
def test_operands_of_a_commutative_op_in_either_order_are_one_node(op):
    g, x, b = _graph()
    c = Value.constant(np.float64(1.0))
    first, second = b.op(op, c, x), b.op(op, x, c)
    g.set_outputs([first, second])
    before = ir.interpret(g, EDGES)
    assert CommonSubexpressionElimination().run(g).rewrites == 1
    assert g.outputs[0] is g.outputs[1]
    for got, expected in zip(ir.interpret(g, EDGES), before, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_operands_of_an_op_that_does_not_commute_keep_their_order():
    g, x, b = _graph()
    c = Value.constant(np.float64(1.0))
    g.set_outputs([b.op("Sub", c, x), b.op("Sub", x, c), b.op("Div", c, x), b.op("Div", x, c)])
    assert CommonSubexpressionElimination().run(g).rewrites == 0


@pytest.mark.parametrize("op", ["And", "Or", "Max", "Min"])
def test_an_idempotent_op_of_one_value_twice_is_that_value(op):
    g, x, b = _graph()
    v = b.op("Greater", x, Value.constant(np.float64(0.0))) if op in ("And", "Or") else x
    g.set_outputs([b.op(op, v, v)])
    before = ir.interpret(g, EDGES)
    assert CommonSubexpressionElimination().run(g).rewrites == 1
    assert op not in g.op_counts()
    np.testing.assert_array_equal(ir.interpret(g, EDGES)[0], before[0])


def test_one_plus_x_written_both_ways_is_computed_once_end_to_end():
    x = pt.dvector("x")
    outs = [pt.log1p(x), 1.0 / (1 + x)]  # log1p's u = x + 1.0 and the gradient-like 1 + [1.0]
    check_like_pytensor([x], outs, [EDGES])
    cm = ptonnx.compile_function([x], outs)
    assert cm.report["cse"].rewrites >= 1
    assert [n.op_type for n in cm.model.graph.node].count("Add") <= 1


# -- text in, text out (tests/passes/text.py) -------------------------------------------------

from tests.passes.text import assert_rewrites  # noqa: E402


def test_text_operands_in_either_order_of_a_commutative_op_merge():
    assert_rewrites("cse", """
        graph g(%x: f32[3], %y: f32[3]) {
          %a: f32[3] = Add(%x, %y)
          %b: f32[3] = Add(%y, %x)
          %c: f32[3] = Sub(%x, %y)
          %d: f32[3] = Sub(%y, %x)
          %e: f32[3] = Mul(%a, %b)
          %f: f32[3] = Mul(%c, %d)
          return %e, %f
        }
    """, """
        graph g(%x: f32[3], %y: f32[3]) {
          %a: f32[3] = Add(%x, %y)
          %c: f32[3] = Sub(%x, %y)
          %d: f32[3] = Sub(%y, %x)
          %e: f32[3] = Mul(%a, %a)
          %f: f32[3] = Mul(%c, %d)
          return %e, %f
        }
    """)


def test_text_equal_constants_merge_by_content_and_a_merge_lets_its_users_merge():
    """Two `x * 0.5` merge, then the sums of them; `x + 0.0` and `x + -0.0` differ (at x = -0.0),
    as do sums kept to another rank."""
    assert_rewrites("cse", """
        graph g(%x: f64[4]) {
          %h1: f64[4] = Mul(%x, const(0.5: f64[]))
          %h2: f64[4] = Mul(const(0.5: f64[]), %x)
          %p: f64[4] = Add(%x, const(0.: f64[]))
          %n: f64[4] = Add(%x, const(-0.: f64[]))
          %s1: f64[] = ReduceSum(%h1) {axes=(0,), keepdims=False}
          %s2: f64[] = ReduceSum(%h2) {axes=(0,), keepdims=False}
          %k: f64[1] = ReduceSum(%h2) {axes=(0,), keepdims=True}
          return %s1, %s2, %k, %p, %n
        }
    """, """
        graph g(%x: f64[4]) {
          %h1: f64[4] = Mul(%x, const(0.5: f64[]))
          %p: f64[4] = Add(%x, const(0.: f64[]))
          %n: f64[4] = Add(%x, const(-0.: f64[]))
          %s1: f64[] = ReduceSum(%h1) {axes=(0,), keepdims=False}
          %k: f64[1] = ReduceSum(%h1) {axes=(0,), keepdims=True}
          return %s1, %s1, %k, %p, %n
        }
    """)


def test_text_an_idempotent_op_of_one_value_twice_is_that_value():
    assert_rewrites("cse", """
        graph g(%x: f32[3]) {
          %pos: i1[3] = Greater(%x, const(0.: f32[]))
          %both: i1[3] = And(%pos, %pos)
          %m: f32[3] = Max(%x, %x)
          %y: f32[3] = Where(%both, %m, const(1.: f32[]))
          return %y
        }
    """, """
        graph g(%x: f32[3]) {
          %pos: i1[3] = Greater(%x, const(0.: f32[]))
          %y: f32[3] = Where(%pos, %x, const(1.: f32[]))
          return %y
        }
    """)
