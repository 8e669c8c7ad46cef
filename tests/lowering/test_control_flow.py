"""`Loop` and `If` built by hand with their bodies, lowered (lowering/control_flow.py: ONNX
Loop and If, bodies in child contexts reading invariants and args from the outer scope) and
run at both onnxruntime levels against `interpret` (`run_loop`, `run_if`): for loops with
carried, invariant and per-trip values of mixed dtypes; zero trips and negative counts;
while loops stopped by their condition or never started; the elementwise loop ScalarLoop
lifts to; a Scan-style loop over a sequence; nested bodies; branches whose sizes differ or
that return constants; a check in the untaken branch (never fires) and in a body (raises)."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx import ir
from ptonnx.ir import Builder, Graph, Value
from ptonnx.ir import TensorType as T
from tests.lowering.harness import compiled

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

COVERS = frozenset({"Loop", "If"})
I64, F64, BOOL = T("int64", ()), T("float64", ()), T("bool", ())
TRUE = np.array(True)


def _body(name: str, types, make) -> Graph:
    """A body graph of inputs `types`, whose outputs are `make(builder, *inputs)`."""
    g = Graph(name)
    inputs = [g.add_input(t, f"{name}_in{k}") for k, t in enumerate(types)]
    g.set_outputs(make(Builder(g), *inputs))
    return g


def _graph(name: str, types, make):
    """A builder of the outer graph (built afresh for compiling and for interpret)."""
    return lambda: _body(name, types, make)


def _for_loop_body():
    """(trip, x, k, w) -> (true, x * w + trip, k + 1, per-trip: x * w + trip, trip)."""
    def make(b, trip, x, k, w):
        new_x = b.op("Add", b.op("Mul", x, w), b.op("Cast", trip, to="float64"))
        return [Value.constant(TRUE), new_x, b.op("Add", k, Value.constant(np.int64(1))), new_x, trip]

    return _body("for_body", [I64, T("float64", (None,)), I64, T("float64", (None,))], make)


def test_for_loop_with_carried_invariant_and_per_trip_values():
    def make(b, n, x0, k0, w):
        return b.node("Loop", [n, Value.constant(TRUE), x0, k0, w], {"body": _for_loop_body(), "n_carried": 2, "n_scan": 2}).outputs

    case = compiled(_graph("for_loop", [I64, T("float64", (None,)), I64, T("float64", (None,))], make))
    x0 = np.array([1.5, -0.0, np.nan, np.inf, 5e-324])
    w = np.array([2.0, -1.0, 0.5, -np.inf, 1e300])
    for n in (3, 1, 0, -1):
        case.check(np.int64(n), x0, np.int64(2**63 - 2), w)
    case.check(np.int64(2), x0[:0], np.int64(-(2**63)), w[:0])  # size-0 carried values


def test_while_loop_stopped_by_its_condition_or_never_started():
    def body_make(b, trip, s, limit):
        doubled = b.op("Mul", s, Value.constant(np.float64(2.0)))
        return [b.op("Less", doubled, limit), doubled, b.op("Neg", doubled)]

    body = _body("while_body", [I64, F64, F64], body_make)

    def make(b, n, cond, s0, limit):
        return b.node("Loop", [n, cond, s0, limit], {"body": body, "n_carried": 1, "n_scan": 1}).outputs

    case = compiled(_graph("while_loop", [I64, BOOL, F64, F64], make))
    big = np.int64(2**63 - 1)
    for cond, s0, limit in [(True, 1.0, 100.0), (False, 1.0, 100.0), (True, np.nan, 100.0), (True, -0.0, -1.0),
                            (True, 1.0, -np.inf), (True, 5e-324, 1e-320)]:
        case.check(big, np.array(cond), np.float64(s0), np.float64(limit))
    case.check(np.int64(2), TRUE, np.float64(1.0), np.float64(np.inf))  # the trip count stops it first


def test_elementwise_loop_as_scalar_loop_lifts_it():
    """Every element steps until its own count or until it settles; `keep_going` is whether any
    element is still active (lifting/scalar_loop.py's shape of Loop)."""
    def body_make(b, trip, x, done, steps):
        active = b.op("And", b.op("Less", trip, steps), b.op("Not", done))
        step = b.op("Add", b.op("Mul", x, Value.constant(np.float64(0.5))), Value.constant(np.float64(1.0)))
        settled = b.op("Or", done, b.op("Equal", step, x))
        new_x = b.op("Where", active, step, x)
        return [b.op("ReduceAny", active, axes=(0,)), new_x, b.op("Where", active, settled, done)]

    body = _body("elementwise_body", [I64, T("float64", (None,)), T("bool", (None,)), T("int64", (None,))], body_make)

    def make(b, x0, steps):
        trips = b.op("ReduceMax", b.op("Concat", steps, Value.constant(np.zeros(1, np.int64)), axis=0), axes=(0,))
        done = b.op("Expand", Value.constant(np.array(False)), b.op("Shape", x0))
        return b.node("Loop", [trips, Value.constant(TRUE), x0, done, steps], {"body": body, "n_carried": 2, "n_scan": 0}).outputs

    case = compiled(_graph("elementwise_loop", [T("float64", (None,)), T("int64", (None,))], make))
    case.check(np.array([0.0, -0.0, 2.0, np.nan, np.inf, -np.inf, 1e300]), np.array([0, 3, 200, 5, 1, 2, 60]))
    case.check(np.zeros(0), np.zeros(0, np.int64))


def _scan_loop(width):
    """A Scan-style loop: no carried value, the sequence an invariant whose row `trip` the body
    gathers (lifting/scan.py), each row times 3 stacked; rows of `width` (None: unknown)."""
    def body_make(b, trip, seq):
        row = b.op("Gather", seq, trip, axis=0)
        return [Value.constant(TRUE), b.op("Mul", row, Value.constant(np.int32(3)))]

    body = _body("scan_body", [I64, T("int32", (None, width))], body_make)

    def make(b, seq):
        n = b.op("Gather", b.op("Shape", seq), Value.constant(np.int64(0)), axis=0)
        return b.node("Loop", [n, Value.constant(TRUE), seq], {"body": body, "n_carried": 0, "n_scan": 1}).outputs

    return compiled(_graph("scan_loop", [T("int32", (None, width))], make))


@pytest.mark.parametrize("width", [2, "w", None])
def test_scan_style_loop_over_a_sequence_with_no_carried_value(width):
    """No trip: (0, width) where the width is static or an outer value's symbolic dim (as
    PyTensor's Scan gives), (0, 0) where the body's type does not know it."""
    case = _scan_loop(width)
    case.check(np.array([[1, -2], [2**31 - 1, -(2**31)], [0, 7]], np.int32))  # 3 * INT32_MAX wraps
    for cols in (2,) if width == 2 else (0, 2, 5):
        (stacked,) = case.check(seq := np.zeros((0, cols), np.int32))
        assert stacked.shape == (0, 0 if width is None else seq.shape[1])


def _if_node(b, cond, args, then_make, else_make, types):
    then_body = _body("then", types, then_make)
    else_body = _body("else", types, else_make)
    return b.node("If", [cond, *args], {"then_body": then_body, "else_body": else_body}).outputs


def test_if_with_outputs_of_mixed_dtypes_and_sizes_the_branches_disagree_on():
    types = [T("float64", (None,)), I64]

    def make(b, cond, a, k):
        return _if_node(
            b, cond, [a, k],
            lambda bb, a, k: [bb.op("Exp", a), bb.op("Add", k, Value.constant(np.int64(1))), a],
            lambda bb, a, k: [bb.op("Neg", a), bb.op("Mul", k, Value.constant(np.int64(2))), bb.op("Concat", a, a, axis=0)],
            types,
        )

    case = compiled(_graph("if_mixed", [BOOL, *types], make))
    a = np.array([0.0, -0.0, 710.0, -np.inf, np.nan, 5e-324])
    for cond in (True, False):
        case.check(np.array(cond), a, np.int64(2**63 - 1))
        case.check(np.array(cond), a[:0], np.int64(-(2**63)))


def test_if_without_args_whose_branches_return_constants():
    def make(b, cond):
        return _if_node(b, cond, [], lambda bb: [Value.constant(np.array([1.0, np.nan]))],
                        lambda bb: [Value.constant(np.array([-0.0]))], [])

    case = compiled(_graph("if_constants", [BOOL], make))
    for cond in (True, False):
        case.check(np.array(cond))


def test_a_check_in_the_untaken_branch_never_fires_and_in_the_taken_one_raises():
    def checked(bb, x, ok):
        return [bb.op("Check", x, ok, message="the taken branch's check", exception="builtins:ValueError")]

    def make(b, cond, x, ok):
        return _if_node(b, cond, [x, ok], checked, lambda bb, x, ok: [bb.op("Abs", x)], [T("float32", (None,)), BOOL])

    case = compiled(_graph("if_check", [BOOL, T("float32", (None,)), BOOL], make))
    x = np.array([-1.5, np.nan, -0.0], np.float32)
    case.check(np.array(False), x, np.array(False))
    case.check(np.array(True), x, np.array(True))
    case.check_fails(np.array(True), x, np.array(False), exception=ValueError, match="the taken branch's check")


def test_nested_bodies_and_a_check_that_fails_on_a_later_trip():
    """A Loop whose body holds an If, and whose check fails only once the carried sum passes a bound."""
    def body_make(b, trip, total, bound):
        big = b.op("Greater", total, Value.constant(np.float64(2.0)))
        (step,) = _if_node(b, big, [total], lambda bb, t: [bb.op("Mul", t, Value.constant(np.float64(0.5)))],
                           lambda bb, t: [bb.op("Add", t, Value.constant(np.float64(1.0)))], [F64])
        ok = b.op("LessOrEqual", step, bound)
        return [Value.constant(TRUE), b.op("Check", step, ok, message="the sum passed its bound"), step]

    body = _body("nested_body", [I64, F64, F64], body_make)

    def make(b, n, total, bound):
        return b.node("Loop", [n, Value.constant(TRUE), total, bound], {"body": body, "n_carried": 1, "n_scan": 1}).outputs

    case = compiled(_graph("nested", [I64, F64, F64], make))
    case.check(np.int64(5), np.float64(0.0), np.float64(3.0))
    case.check(np.int64(0), np.float64(np.nan), np.float64(-np.inf))
    case.check_fails(np.int64(5), np.float64(0.0), np.float64(2.5), match="the sum passed its bound")


def test_loop_and_if_are_the_control_family():
    assert {n for n, s in ir.all_schemas().items() if s.family == "control"} == COVERS
