"""The `simplify` pass (PyMC's parameter checks, written with fewer and smaller nodes) and the
zero-sign reasoning of lowering that lets a summed `switch` go without its sign repair: every
rewrite gives PyTensor's numbers, NaN, ±inf and the sign of zero included, at both onnxruntime
levels, and is refused where it would not (no element summed, a shape unknown)."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx import ir
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.passes.simplify import Simplify
from ptonnx.testing import assert_matches_pytensor
from tests.conftest import check_like_pytensor

EDGES = np.array([-np.inf, -1e308, -2.5, -5e-324, -0.0, 0.0, 5e-324, 1e-300, 0.5, 3.0, 1e308, np.inf, np.nan])


def _ops(cm) -> list[str]:
    return [n.op_type for n in cm.model.graph.node]


@pytest.mark.parametrize("passes", [None, []])
def test_a_sum_of_negative_zeros_is_positive_zero_as_numpy_gives(passes):
    """onnxruntime's ReduceSum of -0.0s is -0.0; NumPy's (and PyTensor's) +0.0."""
    x, m = pt.dvector("x"), pt.dmatrix("m")
    # 1 / sum: a sum read inside the graph (onnxruntime's NoopElimination drops a plain `+ 0.0` there)
    outs = [x.sum(), m.sum(axis=0), m.sum(axis=1), m.sum(), (-x).sum(), pt.reciprocal((-x).sum()), pt.reciprocal(m.sum(axis=0))]
    zeros = np.full(3, -0.0), np.full((2, 3), -0.0)
    cm = assert_matches_pytensor([x, m], outs, list(zeros), passes=passes)
    got = cm(*zeros)
    assert all(not np.signbit(g).any() for g in got[:5]) and all(np.all(g == np.inf) for g in got[5:])
    assert_matches_pytensor([x, m], outs, [np.zeros(0), np.zeros((0, 3))], passes=passes)


def test_a_sum_of_values_never_negative_zero_adds_nothing():
    x = pt.dvector("x")
    cm = ptonnx.compile_function([x], [pt.exp(x).sum()])
    assert _ops(cm) == ["Exp", "ReduceSum"]


def _checked(values, sigma, p):
    """PyMC's check_parameters: switch(all([all(c1), all(c2), all(c3)]), logp, -inf)."""
    ok = pt.all([pt.all(sigma > 0), pt.all(p >= 0), pt.all(p <= 1)])
    return pt.switch(ok, -0.5 * ((values - p) / sigma) ** 2 - pt.log(sigma), -np.inf)


def _checked_inputs(n):
    rng = np.random.default_rng(0)
    base = [rng.normal(size=n), np.float64(1.5), rng.uniform(size=n)]
    yield base
    yield [base[0], np.float64(-1.0), base[2]]  # a failed check: -inf
    yield [base[0], np.float64(np.nan), base[2]]  # NaN fails the check too
    with_nan = base[2].copy()
    with_nan[n // 2] = np.nan
    yield [base[0], np.float64(1.5), with_nan]
    yield [np.full(n, -0.0), np.float64(np.inf), np.zeros(n)]  # terms of -0.0
    yield [EDGES[:n] if n <= EDGES.size else base[0], np.float64(5e-324), base[2]]


@pytest.mark.parametrize("n", [1, 13])
def test_a_checked_log_density_summed_is_one_scalar_selection(n):
    values, p = pt.vector("values", shape=(n,), dtype="float64"), pt.vector("p", shape=(n,), dtype="float64")
    sigma = pt.dscalar("sigma")
    logp = _checked(values, sigma, p)
    cases = list(_checked_inputs(n))
    for case in cases:
        check_like_pytensor([values, sigma, p], [logp.sum()], case)
    cm = ptonnx.compile_function([values, sigma, p], [logp.sum()])
    ops = _ops(cm)
    assert ops.count("Where") == 1 and "Concat" not in ops and ops.count("ReduceMin") == 1, ops
    assert "Reciprocal" not in ops  # no sign repair: a sum cannot tell -0.0 from +0.0
    # the elementwise log-density as an output too: its selection stays per element, signs kept
    for case in cases:
        check_like_pytensor([values, sigma, p], [logp.sum(), logp], case)


def test_no_sum_of_a_switch_is_moved_where_the_count_is_unknown():
    """sum(switch(c, v, -inf)) is 0 for no elements, switch(c, sum(v), -inf) would be -inf."""
    values, sigma = pt.dvector("values"), pt.dscalar("sigma")
    logp = pt.switch(pt.all(sigma > 0), values * 2.0, -np.inf).sum()
    for case in ([np.zeros(0), np.float64(-1.0)], [np.ones(3), np.float64(-1.0)], [np.ones(3), np.float64(1.0)]):
        check_like_pytensor([values, sigma], [logp], case)


def _where_sum_graph(cond_shape, n, k):
    g = Graph()
    c = g.add_input(TensorType("bool", cond_shape), "c")
    v = g.add_input(TensorType("float64", (n,)), "v")
    b = Builder(g)
    w = b.op("Where", c, v, Value.constant(np.float64(k)))
    g.set_outputs([b.op("ReduceSum", w, axes=(0,), keepdims=False)])
    return g


@pytest.mark.parametrize("k", [-np.inf, np.inf, np.nan])
@pytest.mark.parametrize("cond_shape", [(), (1,)])
def test_sum_of_switch_gives_the_same_numbers_on_the_ir(k, cond_shape):
    g, before = _where_sum_graph(cond_shape, EDGES.size, k), _where_sum_graph(cond_shape, EDGES.size, k)
    assert Simplify().run(g).rewrites == 1
    ir.verify(g)
    for cond in (True, False):
        c = np.full(cond_shape, cond)
        for v in (EDGES, EDGES[np.isfinite(EDGES)], np.full(EDGES.size, -0.0)):
            v = np.resize(v, EDGES.size)
            np.testing.assert_array_equal(ir.interpret(g, c, v)[0], ir.interpret(before, c, v)[0])


@pytest.mark.parametrize("n, k, cond_shape", [(0, -np.inf, ()), (3, -5.0, ()), (3, -np.inf, (3,))])
def test_sum_of_switch_is_refused_where_it_would_change_a_number(n, k, cond_shape):
    """No element (the sum is 0, not k); a finite k (n copies of k do not sum to k); a
    condition per element."""
    assert Simplify().run(_where_sum_graph(cond_shape, n, k)).rewrites == 0


def test_all_of_alls_of_different_shapes_stays_correct():
    a, b = pt.dmatrix("a"), pt.dvector("b")
    ok = pt.all([pt.all(a > 0), pt.all(b < 1), pt.all(pt.isnan(b) | (b > -1))])
    for case in ([np.ones((2, 3)), np.zeros(3)], [np.ones((2, 3)), np.array([0.0, 2.0, 0.0])],
                 [np.zeros((0, 3)), np.array([np.nan])], [np.full((1, 1), np.nan), np.zeros(0)]):
        check_like_pytensor([a, b], [ok], case)


def test_sin_keeps_the_sign_of_a_zero_with_one_sin_kernel():
    """sin(-0.0) is -0.0 through the reduction (pi's parts positive, k = +0.0), and onnxruntime's
    Sin runs once (beyond 2**20 a mask, not a second Sin, gives it x itself)."""
    x = pt.dvector("x")
    check_like_pytensor([x], [pt.sin(x), 1.0 / pt.sin(x)], [np.concatenate([EDGES, [2.0**20, -(2.0**20) - 0.5, 1e5 * np.pi]])])
    ops = _ops(ptonnx.compile_function([x], [pt.sin(x)]))
    assert ops.count("Sin") == 1 and "Where" not in ops and "Mod" not in ops, ops


def test_a_selection_whose_zero_sign_is_read_keeps_it():
    """A product of the selection, returned: -0.0 from either branch survives."""
    x, y, c = pt.dvector("x"), pt.dvector("y"), pt.bvector("c")
    sel = pt.switch(c, x, y)
    outs = [sel * 2.0, (sel * 2.0).sum() + 0.0, 1.0 / sel]
    for case in ([np.full(4, -0.0), np.full(4, 0.0), np.array([1, 0, 1, 0], "int8")],
                 [np.full(4, 0.0), np.full(4, -0.0), np.array([1, 0, 1, 0], "int8")]):
        check_like_pytensor([x, y, c], outs, case)


def test_softplus_of_x_and_of_minus_x_share_one_exp():
    """A Bernoulli log-density reads log(sigmoid(x)) and log(1 - sigmoid(x)): -softplus(-x) and
    -softplus(x). |-x| is |x| to the decompositions, so the two share exp(-|x|) and its log."""
    x = pt.dvector("x")
    outs = [pt.softplus(x), pt.softplus(-x)]
    check_like_pytensor([x], outs, [EDGES])
    ops = _ops(ptonnx.compile_function([x], outs))
    assert ops.count("Exp") == 1 and ops.count("Log") == 1, ops


def test_a_check_of_a_parameter_broadcast_to_one_element_compares_the_scalar():
    """PyMC's normal likelihood checks `sigma > 0` on sigma broadcast to (1,), then takes the all
    of that one element (a Squeeze): the comparison moves to the scalar, NaN and ±0 as before."""
    y, sigma = pt.dvector("y"), pt.dscalar("sigma")
    s1 = pt.shape_padleft(sigma)
    ok = pt.all(s1 > 0.0)
    logp = pt.switch(ok, (-0.5 * ((y - 1.0) / s1) ** 2 - pt.log(s1)).sum(), -np.inf)
    # no sigma below float32's range: PyTensor's Python evaluation of its rewritten graph (a
    # Composite) takes 1e-300 > 0 and 5e-324 > 0 as False (pytensor 3.0.7); NumPy and ptonnx, True
    for value in (1.5, 0.0, -0.0, 1e-30, -2.0, np.inf, np.nan):
        check_like_pytensor([y, sigma], [logp, ok], [np.array([0.5, -1e308, np.nan]), np.float64(value)])
    cm = ptonnx.compile_function([y, sigma], [logp, ok])
    assert cm.report["simplify"].details.get("squeeze_of_elementwise", 0) >= 1, cm.report["simplify"].details
    greater = [n for n in cm.model.graph.node if n.op_type == "Greater"]
    assert len(greater) == 1 and greater[0].input[0] == "sigma", cm.model.graph.node


def test_an_all_true_constant_in_the_stacked_checks_is_dropped():
    """all(stack([a, True, b])) of scalars: `a and b` (a check PyTensor folded to True)."""
    a, b = pt.dscalar("a"), pt.dscalar("b")
    ok = pt.all([a > 0, pt.as_tensor(np.array(True)), b <= 1])  # as check_parameters builds it
    for va, vb in [(1.0, 0.5), (-1.0, 0.5), (np.nan, 0.5), (1.0, 2.0), (0.0, -0.0)]:
        check_like_pytensor([a, b], [ok, pt.switch(ok, a + b, -np.inf)], [np.float64(va), np.float64(vb)])
    ops = _ops(ptonnx.compile_function([a, b], [ok]))
    assert "Concat" not in ops and "ReduceMin" not in ops, ops


@pytest.mark.parametrize("passes", [None, []])
def test_a_sum_read_by_one_add_takes_its_positive_zero_there(passes):
    """a + sum(x), the sum owing NumPy's +0.0 for -0.0s, is one Sum(a, s, 0): -0.0 + sum(-0.0s)
    is +0.0 in NumPy, and every other value is a + s. (A gradient's `prior + sum(terms)`.)"""
    a, x = pt.dscalar("a"), pt.dvector("x")
    out = a + x.sum()
    cm = assert_matches_pytensor([a, x], [out], [np.float64(-0.0), np.full(3, -0.0)], passes=passes)
    assert not np.signbit(cm(np.float64(-0.0), np.full(3, -0.0))[0])
    assert _ops(cm).count("Sum") == 1 and "Add" not in _ops(cm)
    for a_value in (-0.0, 0.0, 1.5, -np.inf, np.inf, np.nan):
        for xs in (np.full(3, -0.0), np.zeros(0), EDGES, np.array([1e308, 1e308]), np.array([-1.5, 1.5])):
            check_like_pytensor([a, x], [out], [np.float64(a_value), xs])


def test_a_selection_under_not_swaps_its_branches():
    """Where(not c, x, y) is Where(c, y, x): the `not` goes, the numbers and zero signs stay."""
    c, x, y = (pt.tensor(name, shape=(EDGES.size,), dtype="float64") for name in "cxy")
    out = pt.switch(pt.invert(c > 0), x, y)
    values = [EDGES, np.full(EDGES.size, -0.0), -EDGES]
    cm = assert_matches_pytensor([c, x, y], [out], values)
    assert "Not" not in cm.ir.op_counts() and cm.report["simplify"].rewrites == 1
    check_like_pytensor([c, x, y], [out], values, more_values=[[EDGES[::-1], -EDGES, EDGES], [-EDGES, EDGES, -EDGES]])
    g = Graph()
    cond, a, b_ = (g.add_input(TensorType(dt, (3,)), n) for dt, n in (("bool", "c"), ("float64", "a"), ("float64", "b")))
    builder = Builder(g)
    negation = builder.op("Not", cond)
    g.set_outputs([builder.op("Where", negation, a, b_), negation])  # the `not` is read twice: kept
    assert Simplify().run(g).rewrites == 0
