"""Loop and If on IR built by hand: the type rules, `interpret`, loop-invariant hoisting
(checked differentially: the same numbers before and after) and the laziness rewrite
that sinks single-branch nodes into an If's body."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.errors import TypeRuleError
from ptonnx.ir import Builder, Graph, TensorType, Value, interpret, verify
from ptonnx.ir.branches import sink_into_branches
from ptonnx.passes import HoistLoopInvariants, PassManager


def _power_loop():
    """x_{t+1} = x_t * exp(w) + t, with exp(w) computed in the body; every x_t stacked."""
    g = Graph("outer")
    n, x0, w = g.add_input(TensorType("int64", ()), "n"), g.add_input(TensorType("float64", (3,)), "x0"), g.add_input(TensorType("float64", (3,)), "w")
    body = Graph("body")
    trip, x, w_in = body.add_input(TensorType("int64", ()), "trip"), body.add_input(TensorType("float64", (3,)), "x"), body.add_input(TensorType("float64", (3,)), "w")
    b = Builder(body)
    scaled = b.op("Mul", x, b.op("Exp", w_in))
    new = b.op("Add", scaled, b.op("Cast", trip, to="float64"))
    body.set_outputs([Value.constant(np.array(True)), new, new])
    loop = Builder(g).node("Loop", [n, Value.constant(np.array(True)), x0, w], dict(body=body, n_carried=1, n_scan=1))
    g.set_outputs(list(loop.outputs))
    return g


def _expected(n, x0, w):
    x, trace = x0.copy(), []
    for t in range(n):
        x = x * np.exp(w) + t
        trace.append(x)
    return x, np.stack(trace) if trace else np.zeros((0, 3))  # no trip: (0, the per-trip size)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_loop_semantics_and_types(n):
    g = _power_loop()
    verify(g)
    final, stacked = g.outputs
    assert final.type.shape == (3,) and stacked.type.shape == (None, 3)
    x0, w = np.array([1.0, -0.0, np.nan]), np.array([0.5, -1.0, 2.0])
    got = interpret(g, np.int64(n), x0, w)
    want = _expected(n, x0, w)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_hoisting_moves_the_invariant_exp_out_and_keeps_the_numbers():
    g = _power_loop()
    args = (np.int64(5), np.array([1.0, -2.0, 3.0]), np.array([0.1, 0.2, np.inf]))
    before = interpret(g, *args)
    report = PassManager([HoistLoopInvariants()], verify_each=True).run(g)
    assert report.records[0].rewrites == 1
    (loop,) = [node for node in g if node.op == "Loop"]
    assert "Exp" not in loop.attrs["body"].op_counts() and g.op_counts()["Exp"] == 1
    assert len(loop.attrs["body"].inputs) == 3  # trip, x, exp(w): w itself is no longer read
    after = interpret(g, *args)
    for a, b in zip(after, before, strict=True):
        np.testing.assert_array_equal(a, b)


def test_checks_are_not_hoisted():
    g = _power_loop()
    (loop,) = list(g)
    body = loop.attrs["body"]
    w_in = body.inputs[2]
    guarded = Builder(body, before=next(iter(body))).op("Check", w_in, Value.constant(np.array(True)), message="m", exception="builtins:ValueError")
    for user in list(w_in.users):
        if user.op == "Exp":
            body.set_input(user, 0, guarded)
    PassManager([HoistLoopInvariants()], verify_each=True).run(g)
    assert "Check" in body.op_counts() and "Exp" in body.op_counts()


def test_a_loop_body_must_match_its_node():
    g = _power_loop()
    (loop,) = list(g)
    with pytest.raises(TypeRuleError, match="n_carried"):
        Builder(g).node("Loop", loop.inputs, dict(body=loop.attrs["body"], n_carried=5, n_scan=1))


def _if_graph():
    """If(c, a, b): then returns log(a), else exp(b); log(a) and exp(b) built outside."""
    g = Graph("outer")
    c, a, b = g.add_input(TensorType("bool", ()), "c"), g.add_input(TensorType("float64", (2,)), "a"), g.add_input(TensorType("float64", (2,)), "b")
    outer = Builder(g)
    la, eb = outer.op("Log", a), outer.op("Exp", b)
    both = outer.op("Neg", a)
    bodies = {}
    for key, pick in (("then_body", 0), ("else_body", 1)):
        body = Graph(key)
        ins = [body.add_input(v.type) for v in (la, eb, both)]
        body.set_outputs([Builder(body).op("Add", ins[pick], ins[2])])
        bodies[key] = body
    node = outer.node("If", [c, la, eb, both], bodies)
    g.set_outputs([node.output, both])
    return g


@pytest.mark.parametrize("cond", [True, False])
def test_sinking_moves_single_branch_nodes_into_their_branch(cond):
    g = _if_graph()
    args = (np.bool_(cond), np.array([1.0, -1.0]), np.array([0.0, 800.0]))
    before = interpret(g, *args)
    assert sink_into_branches(g) == 2
    verify(g)
    (node,) = [n for n in g if n.op == "If"]
    assert node.attrs["then_body"].op_counts().get("Log") == 1 and node.attrs["else_body"].op_counts().get("Exp") == 1
    assert "Neg" in g.op_counts() and "Log" not in g.op_counts() and "Exp" not in g.op_counts()  # Neg is read outside too
    for a, b in zip(interpret(g, *args), before, strict=True):
        np.testing.assert_array_equal(a, b)
