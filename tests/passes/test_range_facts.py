"""Range facts (`ptonnx/ir/ranges.py`) and the `range_facts` pass: what they know, what
they decide, and that a decided selection never changes a number (NaN, ±inf, ±0 included)."""

from __future__ import annotations

import math

import numpy as np
import pytensor.tensor as pt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptonnx
from ptonnx import ir
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.ir.ranges import analyse
from ptonnx.passes.manager import DEFAULT_PASSES
from ptonnx.passes.range_facts import RangeFacts
from tests.conftest import check_like_pytensor

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

HARD = np.array([-np.inf, -1e308, -800.0, -2.5, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1e-300, 0.5, 1.0, 3.0, 700.0,
                 710.0, 1e308, np.inf, np.nan])


def _graph():
    g = Graph()
    return g, g.add_input(TensorType("float64", (HARD.size,)), "x"), Builder(g)


def _c(value) -> Value:
    return Value.constant(np.float64(value))


def _same_numbers(g: Graph, build_again) -> int:
    """Run the pass on `g`; a fresh copy (`build_again()`) is the reference. Returns decisions."""
    result = RangeFacts().run(g)
    ir.verify(g)
    (got,) = ir.interpret(g, HARD)
    (expected,) = ir.interpret(build_again(), HARD)
    np.testing.assert_array_equal(got, expected)
    numbers = ~np.isnan(expected)  # a NaN's sign bit means nothing
    assert (np.signbit(got) == np.signbit(expected))[numbers].all()
    return result.rewrites


def test_facts_of_exp_squares_comparisons_and_shapes():
    g, x, b = _graph()
    e = b.op("Exp", x)
    sq = b.op("Mul", x, x)
    ge = b.op("GreaterOrEqual", e, _c(0.0))
    lt = b.op("Less", sq, _c(-1.0))
    shape = b.op("Shape", x)
    g.set_outputs([ge, lt, shape])
    facts = analyse(g)
    assert (facts[e].lo, facts[e].hi) == (0.0, math.inf) and facts[e].roots == {x} and facts[e].poison == {x}
    assert facts[sq].lo == 0.0
    assert facts[ge].true and facts[ge].nan_false == {x}  # true for every x but NaN, false for NaN
    assert facts[lt].false
    assert facts[shape].lo == 0.0 and not facts[shape].roots


def test_a_range_is_bounded_by_its_start_and_limit():
    g = Graph()
    n, step = g.add_input(TensorType("int64", ()), "n"), g.add_input(TensorType("int64", ()), "step")
    b = Builder(g)
    i64 = lambda v: Value.constant(np.int64(v))  # noqa: E731
    up, down, either = b.op("Range", i64(0), n, i64(1)), b.op("Range", i64(5), n, i64(-2)), b.op("Range", i64(3), i64(9), step)
    g.set_outputs([up, down, either])
    facts = analyse(g)
    assert facts[up].lo == 0 and facts[up].hi == math.inf  # 0, 1, ... short of n: never negative
    assert facts[down].lo == -math.inf and facts[down].hi == 5
    assert (facts[either].lo, facts[either].hi) == (3, 9)
    for n_, step_ in ((3, 1), (-4, 2), (0, -1), (12, 5)):  # what runs stays within the facts
        for value, got in zip((up, down, either), ir.interpret(g, np.int64(n_), np.int64(step_)), strict=True):
            assert all(facts[value].lo <= v <= facts[value].hi for v in got.tolist())


def _select_exp(cond_op: str, bound: float, first, second):
    """Select(cond_op(exp(x), bound), first, second); `first`/`second` are "x2" (x * 2) or a number."""
    g, x, b = _graph()
    cond = b.op(cond_op, b.op("Exp", x), _c(bound))
    branch = {"x2": lambda: b.op("Mul", x, _c(2.0))}
    a = branch[first]() if first in branch else _c(first)
    c = branch[second]() if second in branch else _c(second)
    g.set_outputs([b.op("Select", cond, a, c)])
    return g


def test_a_condition_a_nan_keeps_on_the_chosen_side_is_decided():
    """exp(x) < 0 is false for every x, NaN too: the selection is its second branch."""
    make = lambda: _select_exp("Less", 0.0, -1.0, "x2")  # noqa: E731
    g = make()
    assert _same_numbers(g, make) == 1
    assert "Select" not in g.op_counts()


def test_a_condition_a_nan_flips_is_not_decided():
    """exp(x) >= 0 holds for every x but NaN, where it is false and the other branch (5) is taken."""
    make = lambda: _select_exp("GreaterOrEqual", 0.0, "x2", 5.0)  # noqa: E731
    g = make()
    assert _same_numbers(g, make) == 0
    assert ir.interpret(g, HARD)[0][-1] == 5.0


def test_the_first_branch_of_a_select_that_may_be_negative_zero_is_kept():
    """onnxruntime's Where gives +0.0 for a -0.0 from its first branch: `Select` says so."""
    g, x, b = _graph()
    cond = b.op("Not", b.op("IsNaN", _c(1.0)))
    g.set_outputs([b.op("Select", cond, b.op("Neg", x), x)])
    assert _same_numbers(g, lambda: g) == 0
    g2, x2, b2 = _graph()
    g2.set_outputs([b2.op("Where", b2.op("Not", b2.op("IsNaN", _c(1.0))), b2.op("Neg", x2), x2)])
    assert RangeFacts().run(g2).rewrites == 1  # IR Where keeps the sign: decided


def test_moved_elements_are_their_own_roots():
    """A reshaped x is a root of its own: its NaN elements need not line up with x's."""
    g, x, b = _graph()
    moved = b.op("Reshape", x, Value.constant(np.array([HARD.size], np.int64)))
    cond = b.op("GreaterOrEqual", b.op("Mul", moved, moved), _c(0.0))
    g.set_outputs([b.op("Select", cond, b.op("Add", x, _c(1.0)), b.op("Sub", x, _c(1.0)))])
    assert analyse(g)[cond].roots == {moved}
    assert RangeFacts().run(g).rewrites == 0


UNARY = ["Exp", "Abs", "Neg", "Sqrt", "Log", "Log1p", "Expm1", "Sigmoid", "Floor", "Tanh"]
COMPARE = ["Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal"]
NUMBERS = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, 13.0, 1e-300, math.inf, -math.inf, math.nan])


@st.composite
def programs(draw):
    """A random expression of x: unary ops, arithmetic with constants, and selections on
    comparisons of its parts (what decompositions are made of)."""
    kinds = ["unary", "binary", "select", "isnan", "softmax", "all", "any", "within"]
    steps = draw(st.lists(st.tuples(st.sampled_from(kinds), st.integers(0, 1 << 30),
                                    st.sampled_from(UNARY), st.sampled_from(["Add", "Sub", "Mul", "Div", "Max"]),
                                    st.sampled_from(COMPARE), NUMBERS, st.sampled_from(["Select", "Where"])),
                          min_size=1, max_size=12))
    return steps


def _build(steps):
    g, x, b = _graph()
    values = [x]
    for kind, pick, unary, binary, compare, number, select in steps:
        v = values[pick % len(values)]
        w = values[(pick >> 8) % len(values)]
        if kind == "unary":
            values.append(b.op(unary, v))
        elif kind == "binary":
            values.append(b.op(binary, v, w if pick & 1 else _c(number)))
        elif kind == "softmax":
            values.append(b.op("Softmax", v, axis=0))
        elif kind in ("all", "any", "within"):  # a check over every element, as PyMC writes them
            test = b.op(compare, v, _c(number))
            if kind == "within":  # lo <= v <= hi
                test = b.op("And", b.op("GreaterOrEqual", v, _c(-abs(number))), b.op("LessOrEqual", v, _c(abs(number))))
            test = b.op("ReduceAny" if kind == "any" else "ReduceAll", test, axes=(0,))
            values.append(b.op(select, test, w, v if pick & 2 else _c(number)))
        else:
            test = b.op("IsNaN", v) if kind == "isnan" else b.op(compare, v, _c(number))
            values.append(b.op(select, test, w, v if pick & 2 else _c(number)))
    g.set_outputs([values[-1]])
    return g


@settings(max_examples=300)
@given(programs())
def test_decisions_never_change_a_number(steps):
    """Bit for bit on every hard value (NaN as NaN) whatever the pass decides."""
    with np.errstate(all="ignore"):
        _same_numbers(_build(steps), lambda: _build(steps))


@pytest.mark.parametrize("name", ["gammaln(exp(y))", "psi(exp(y))", "gammaln(1 + exp(y))"])
def test_special_functions_of_positive_arguments_lose_their_negative_branches(name):
    y = pt.dvector("y")
    out = {"gammaln(exp(y))": pt.gammaln(pt.exp(y)), "psi(exp(y))": pt.psi(pt.exp(y)),
           "gammaln(1 + exp(y))": pt.gammaln(1 + pt.exp(y))}[name]
    check_like_pytensor([y], [out], [HARD])
    check_like_pytensor([y], [out], [np.zeros(0)])  # size 0
    without = ptonnx.compile_function([y], [out], passes=[p for p in DEFAULT_PASSES if p != "range_facts"])
    with_facts = ptonnx.compile_function([y], [out])
    assert with_facts.report["range_facts"].rewrites >= 2
    assert len(with_facts.model.graph.node) < len(without.model.graph.node)


def test_integer_bounds_that_may_have_wrapped_are_unknown():
    """int64 max + 1 wraps to min: the facts of a sum past 2**53 are unknown, so `> 0` is not decided."""
    g = Graph()
    x = g.add_input(TensorType("int64", (2,)), "x")
    b = Builder(g)
    big = b.op("Add", Value.constant(np.array(np.iinfo(np.int64).max)), Value.constant(np.array(1, np.int64)))
    positive = b.op("Greater", big, Value.constant(np.array(0, np.int64)))
    g.set_outputs([b.op("Where", positive, x, b.op("Neg", x))])
    facts = analyse(g)
    assert (facts[big].lo, facts[big].hi) == (-math.inf, math.inf)
    assert RangeFacts().run(g).rewrites == 0
    limits = np.array([np.iinfo(np.int64).min + 1, np.iinfo(np.int64).max])
    np.testing.assert_array_equal(ir.interpret(g, limits)[0], -limits)  # the wrapped sum is negative


def test_a_verdict_every_element_shares_decides_a_check_over_all():
    """any(softmax(x) > 1) is false for every x, NaN too (NaN > 1 is false): PyMC's check of a
    Categorical's p goes, and its -inf branch with it."""
    g, x, b = _graph()
    soft = b.op("Softmax", x, axis=0)
    above = b.op("ReduceAny", b.op("Greater", soft, _c(1.0)), axes=(0,))
    below = b.op("ReduceAny", b.op("Less", soft, _c(0.0)), axes=(0,))
    g.set_outputs([b.op("Where", b.op("Or", above, below), _c(-math.inf), b.op("ReduceSum", soft, axes=(0,)))])
    facts = analyse(g)
    assert facts[above].false and facts[above].nan_false == facts[above].roots == {soft}
    assert RangeFacts().run(g).rewrites == 1
    assert "Where" not in g.op_counts()  # the checks are dead now: `dce` takes them
    (got,) = ir.interpret(g, HARD)
    assert np.isnan(got)  # HARD holds a NaN (and both infinities): the softmax is NaN, so is its sum


def test_any_of_a_verdict_a_nan_root_may_flip_is_not_decided():
    """A verdict that holds only while x is not NaN (x * x >= 0) says nothing of all(...) or any(...)."""
    g, x, b = _graph()
    square = b.op("Mul", x, x)
    every = b.op("ReduceAll", b.op("GreaterOrEqual", square, _c(0.0)), axes=(0,))
    g.set_outputs([b.op("Where", every, x, b.op("Neg", x))])
    assert not analyse(g)[every].true
    assert RangeFacts().run(g).details.get("decided", 0) == 0


@pytest.mark.parametrize("check", ["all(exp(x) >= 0)", "all(0 <= p <= 1)", "all(x*x >= 0) 2-d"])
def test_a_check_a_value_cannot_fail_but_for_nan_is_its_sum_compared_with_itself(check):
    """all(c(x)), with c(x) true wherever x is not NaN, is sum(x) == sum(x): a NaN anywhere makes
    the check fail, as before, at two ONNX nodes. At every onnxruntime level, like PyTensor."""
    x = pt.dmatrix("x") if "2-d" in check else pt.dvector("x")
    value = {"all(exp(x) >= 0)": pt.exp(x), "all(0 <= p <= 1)": pt.special.softmax(x), "all(x*x >= 0) 2-d": x * x}[check]
    ok = pt.all(value >= 0) if "p <=" not in check else pt.all((value >= 0) & (value <= 1))
    out = pt.switch(ok, value.sum(), -np.inf)
    cases = [HARD[HARD == HARD], HARD, np.array([np.inf, -np.inf, 1.0]), np.zeros(0), np.array([np.nan])]
    if "2-d" in check:
        cases = [np.stack([c, c]) for c in cases] + [np.zeros((0, 3)), np.array([[1.0, np.nan], [2.0, 3.0]])]
    check_like_pytensor([x], [out], [cases[0]], more_values=[[c] for c in cases[1:]])
    cm = ptonnx.compile_function([x], [out])
    assert cm.report["range_facts"].details.get("checks") == 1
    ops = [n.op_type for n in cm.model.graph.node]
    assert "ReduceMin" not in ops and "Cast" not in ops


def test_a_range_check_of_a_value_with_both_infinities_keeps_its_reduction():
    """x >= -inf holds for every x but NaN, yet sum([inf, -inf]) is NaN: no rewrite."""
    x = pt.dvector("x")
    out = pt.switch(pt.all(x >= -np.inf), 1.0, 0.0)
    check_like_pytensor([x], [out], [np.array([np.inf, -np.inf])], more_values=[[HARD]])
    assert ptonnx.compile_function([x], [out]).report["range_facts"].details.get("checks") is None


# -- text in, text out (tests/passes/text.py) -------------------------------------------------

from tests.passes.text import assert_rewrites  # noqa: E402


def test_text_a_selection_a_range_decides_is_its_branch():
    """exp(x) < 0 is false for every x, NaN too: the Select is its second branch (the dead
    comparison is left to `dce`)."""
    assert_rewrites("range_facts", """
        graph g(%x: f64[5]) {
          %e: f64[5] = Exp(%x)
          %neg: i1[5] = Less(%e, const(0.: f64[]))
          %x2: f64[5] = Mul(%x, const(2.: f64[]))
          %y: f64[5] = Select(%neg, const(-1.: f64[]), %x2)
          return %y
        }
    """, """
        graph g(%x: f64[5]) {
          %e: f64[5] = Exp(%x)
          %neg: i1[5] = Less(%e, const(0.: f64[]))
          %x2: f64[5] = Mul(%x, const(2.: f64[]))
          return %x2
        }
    """)


def test_text_a_selection_a_nan_may_flip_is_kept():
    """exp(x) >= 0 holds for every x but NaN, which takes the other branch: nothing decided."""
    text = """
        graph g(%x: f64[5]) {
          %e: f64[5] = Exp(%x)
          %pos: i1[5] = GreaterOrEqual(%e, const(0.: f64[]))
          %x2: f64[5] = Mul(%x, const(2.: f64[]))
          %y: f64[5] = Select(%pos, %x2, const(5.: f64[]))
          return %y
        }
    """
    _, result = assert_rewrites("range_facts", text, text)
    assert not result.modified


def test_text_a_check_that_fails_only_for_nan_is_a_sum_compared_with_itself():
    """all(exp(x) >= 0) is false exactly where some element is NaN: sum(exp(x)) == itself
    (exp(x) is never -inf, so no sum is inf - inf)."""
    assert_rewrites("range_facts", """
        graph g(%x: f64[2,3]) {
          %e: f64[2,3] = Exp(%x)
          %pos: i1[2,3] = GreaterOrEqual(%e, const(0.: f64[]))
          %ok: i1[2] = ReduceAll(%pos) {axes=(1,), keepdims=False}
          return %ok
        }
    """, """
        graph g(%x: f64[2,3]) {
          %e: f64[2,3] = Exp(%x)
          %pos: i1[2,3] = GreaterOrEqual(%e, const(0.: f64[]))
          %0: f64[2] = ReduceSum(%e) {axes=(1,), keepdims=False}
          %ok: i1[2] = Equal(%0, %0)
          return %ok
        }
    """)


def test_a_copy_of_a_constant_stays_known_and_an_int_compare_stays_settled():
    """A Reshape of a constant has no roots (nothing unknown to be NaN), so `all(c >= 0)` of it is
    decided; an integer operand's root counts as settling a comparison (it is never NaN)."""
    from ptonnx.ir import Builder, Graph, TensorType, Value

    g = Graph()
    n = g.add_input(TensorType("int64", ()), "n")
    b = Builder(g)
    c = b.op("Reshape", Value.constant(np.array([[1.0, 2.0]])), Value.constant(np.array([2])))
    decided = b.op("ReduceAll", b.op("GreaterOrEqual", c, Value.constant(np.float64(0.0))), axes=(0,))
    compared = b.op("GreaterOrEqual", n, Value.constant(np.int64(0)))
    g.set_outputs([decided, compared])
    facts = analyse(g)
    assert facts[decided].true
    assert n in facts[compared].nan_false
