"""PyTensor's ScalarLoop (the loops its gradients of gammainc, betainc and hyp2f1
build) as an ONNX Loop: per-element trip counts and stopping, mixed-dtype state,
broadcast constants, the ends of the range, against PyTensor at every
onnxruntime level, for the plain and the ONNX mode's rewritten graph."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.scalar as ps
import pytensor.tensor as pt
import pytest
from pytensor.scalar.loop import ScalarLoop
from pytensor.tensor.elemwise import Elemwise

import ptonnx
from ptonnx.contracts import UNIFIED
from ptonnx.errors import VerificationError
from ptonnx.ir import Graph, verify
from ptonnx.lifting import lift
from tests.conftest import REFERENCE_MODE, check_like_pytensor, check_onnx_matches_pytensor, run_at_every_level

EDGES = np.array([0.0, -0.0, 1.0, -1.5, 5e-324, -2.2e-308, 1e-300, 1e300, -1.7e308, np.inf, -np.inf, np.nan, 7.25])


def _geometric_until():
    """x <- x * c + 1 until x > 100 (a while loop: each element stops on its own)."""
    x, c = ps.float64("x"), ps.float64("c")
    new = x * c + 1
    return ScalarLoop(init=[x], update=[new], constant=[c], until=new > 100)


def _harmonic_counter(dtype="float64"):
    """k <- k + 1, s <- s + a / (k + 1): a for loop with an int32 and a float state."""
    k, s, a = ps.int32("k"), ps.ScalarType(dtype)("s"), ps.ScalarType(dtype)("a")
    return ScalarLoop(init=[k, s], update=[k + 1, s + a / ps.cast(k + 1, dtype)], constant=[a])


@pytest.mark.parametrize("n", [0, 1, 7, 200, -3])
def test_while_loop_stops_each_element_on_its_own(n):
    steps, x, c = pt.iscalar("steps"), pt.dvector("x"), pt.dvector("c")
    out, done = Elemwise(_geometric_until())(steps, x, c)
    xs = np.concatenate([EDGES, EDGES[::-1]])
    cs = np.concatenate([np.full(EDGES.size, 1.1), EDGES])
    check_like_pytensor([steps, x, c], [out, done], [np.int32(n), xs, cs])


def test_loop_reading_a_value_that_is_also_an_output():
    """The body reads `c` from the outer scope; `c` is also a model output, renamed as one."""
    steps, x, c = pt.iscalar("steps"), pt.dvector("x"), pt.dvector("c")
    scaled = pt.exp(c)
    out, done = Elemwise(_geometric_until())(steps, x, scaled)
    check_like_pytensor([steps, x, c], [out, scaled, done], [np.int32(30), np.array([1.0, 2.0, -0.0]), np.array([0.5, 0.0, -3.0])])


def test_while_loop_broadcasts_its_inputs():
    steps, x, c = pt.ivector("steps"), pt.dmatrix("x"), pt.dscalar("c")
    out, done = Elemwise(_geometric_until())(steps, x, c)
    check_like_pytensor([steps, x, c], [out, done], [np.array([0, 5, 500], np.int32), np.array([[0.5, -0.0, 99.0]] * 2), np.float64(2.0)])


@pytest.mark.parametrize("shape", [(0,), (3, 0)])
def test_loop_of_no_elements(shape):
    steps, x, c = pt.iscalar("steps"), pt.tensor("x", dtype="float64", shape=(None,) * len(shape)), pt.dscalar("c")
    out, done = Elemwise(_geometric_until())(steps, x, c)
    check_like_pytensor([steps, x, c], [out, done], [np.int32(9), np.zeros(shape), np.float64(2.0)])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_for_loop_with_mixed_state_and_per_element_counts(dtype):
    steps, k, s, a = pt.ivector("steps"), pt.ivector("k"), pt.tensor("s", dtype=dtype, shape=(None, None)), pt.scalar("a", dtype=dtype)
    o1, o2 = Elemwise(_harmonic_counter(dtype))(steps, k, s, a)
    # (PyTensor's Python evaluation raises OverflowError for k + 1 beyond int8 (its constant 1 is int8): the C code does not)
    values = [np.array([0, 3, 40], np.int32), np.array([0, 100, -7], np.int32),
              np.array([[0.0, -0.0, 1.5], [np.inf, np.nan, -3.0]], dtype), np.asarray(2.0, dtype)]
    check_like_pytensor([steps, k, s, a], [o1, o2], values)


def test_for_loop_refuses_a_negative_count_as_pytensor_does():
    steps, k, s, a = pt.ivector("steps"), pt.ivector("k"), pt.dvector("s"), pt.dscalar("a")
    outs = Elemwise(_harmonic_counter())(steps, k, s, a)
    raised = check_like_pytensor([steps, k, s, a], list(outs), [np.array([2, -1], np.int32), np.zeros(2, np.int32), np.zeros(2), np.float64(1)])
    assert isinstance(raised, ValueError)


def test_body_with_special_functions():
    """A body like PyTensor's gammainc gradient: psi, gammaln, log1p, exp, converging terms."""
    total, term_log, k, x = ps.float64("total"), ps.float64("g"), ps.float64("k"), ps.float64("x")
    term = ps.exp(k * ps.log(x) - term_log) * ps.psi(k + 1)
    loop = ScalarLoop(init=[total, term_log, k], update=[total + term, term_log + ps.log1p(k), k + 1],
                      constant=[x], until=abs(term) <= 1e-12)
    kv, xv = pt.dvector("k"), pt.dvector("x")
    out = Elemwise(loop)(np.int32(100_000), pt.zeros_like(kv), pt.gammaln(kv + 1), kv, xv)
    ks = np.array([0.5, 1.0, 3.0, 20.0, 1e-3, 150.0])
    xs = np.array([0.1, 1.0, 2.5, 30.0, 1e-300, 100.0])
    check_like_pytensor([kv, xv], list(out), [ks, xs])


def _nested_reference(x, c):
    """The nested loop below, element by element in Python. (PyTensor's Python evaluation
    of a loop inside a loop's body is wrong: it gives 0.5, 0.5, 0, 0.5 here; its C code
    gives these numbers.)"""
    out = []
    for acc, cc in zip(x, c, strict=True):
        for _ in range(4):
            for _ in range(50):
                acc = acc * cc + 1
                if acc > 100:
                    break
            acc = acc * 0.5
        out.append(acc)
    return [np.array(out)]


def test_nested_loops():
    """A loop whose body runs another loop."""
    inner = _geometric_until()
    acc, c = ps.float64("acc"), ps.float64("c")
    inner_out, _ = inner(np.int32(50), acc, c)
    outer = ScalarLoop(init=[acc], update=[inner_out * 0.5], constant=[c])
    x, cv = pt.dvector("x"), pt.dvector("c")
    out = Elemwise(outer)(np.int32(4), x, cv)
    values = [np.array([1.0, -0.0, 50.0, np.nan, 1e300]), np.array([2.0, 1.5, 0.5, 3.0, -1e10])]
    check_onnx_matches_pytensor([x, cv], [out], values, reference=_nested_reference)


def test_the_body_is_verified_printed_and_unified():
    steps, x, c = pt.iscalar("steps"), pt.dvector("x"), pt.dvector("c")
    out, done = Elemwise(_geometric_until())(steps, x, c)
    cm = ptonnx.compile_function([steps, x, c], [out, done])
    text = str(cm.ir)
    assert "Loop" in text and "graph " in text.split("Loop", 1)[1], text
    (loop,) = [n for n in cm.ir if n.op == "Loop"]  # one IR Loop, as a Scan's: the passes see it
    body = loop.attrs["body"]
    steps_ops = [n for n in body if n.op in ("Add", "Greater")]
    assert steps_ops and all({v.dtype for v in n.inputs} in ({"float64"}, {"int64"}) for n in steps_ops), body  # int8 constants unified
    verify(cm.ir)
    assert not list(UNIFIED.faults(cm.ir))  # the body too
    broken = Graph("broken")
    broken.add_input(body.inputs[0].type)
    broken.set_outputs([])
    loop.attrs["body"] = broken
    with pytest.raises(VerificationError, match="Loop"):
        verify(cm.ir)


#: the loop op -> the tests of this module that compare programs reaching it with PyTensor (read by
#: tests/ir/test_registry.py; test_lifted_graph_keeps_the_loop_as_one_node lifts one); Scan: test_scan.py
REACHED_BY = {"Loop": ("test_while_loop_stops_each_element_on_its_own", "test_for_loop_with_mixed_state_and_per_element_counts",
                       "test_nested_loops", "test_pytensor_gradient_loops_of_the_incomplete_gamma_functions")}


def test_lifted_graph_keeps_the_loop_as_one_node():
    steps, x, c = pt.iscalar("steps"), pt.dvector("x"), pt.dvector("c")
    out, done = Elemwise(_geometric_until())(steps, x, c)
    from pytensor.graph.fg import FunctionGraph

    graph = lift(FunctionGraph([steps, x, c], [out, done], clone=False))
    counts = graph.op_counts()
    assert counts["Loop"] == 1
    assert counts.get("Mul", 0) == 0  # the body's ops live in the body
    assert set(REACHED_BY) == {"Loop"} and all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)


#: (k, x) where PyTensor's gradient series of gammainc/gammaincc in k are well conditioned,
#: and its special values (x = 0, inf, invalid k, subnormal x, k -> 0). Not NaN k or x, nor
#: k = inf: they never meet the series' stopping test, so PyTensor's Python evaluation runs
#: 100,000 trips (9 s a point); ptonnx leaves NaN elements early (test below) but runs k = inf
#: to the end (docs/limits.md, known limits)
GAMMA_GRAD_POINTS = np.array([
    (0.5, 0.1), (1.0, 1.0), (3.0, 2.5), (1e-3, 1e-3), (5.0, 4.0), (2.0, 0.0), (1.0, np.inf),
    (2.0, 5e-324), (1e-300, 1.0), (0.0, 1.0),
]).T


@pytest.mark.parametrize("fn", [pt.gammainc, pt.gammaincc])
def test_pytensor_gradient_loops_of_the_incomplete_gamma_functions(fn):
    """d/dk of gammainc and gammaincc: PyTensor builds them from ScalarLoops (Stan's series)."""
    k, x = pt.dvector("k"), pt.dvector("x")
    grad = pt.grad(fn(k, x).sum(), k)
    check_like_pytensor([k, x], [grad], list(GAMMA_GRAD_POINTS))


@pytest.mark.one_environment
@pytest.mark.parametrize("fn", [pt.gammainc, pt.gammaincc])
def test_pytensor_gradient_loops_at_an_invalid_k(fn):
    """PyTensor's series runs 100,000 trips here: its C backend is the reference (its Python
    implementation takes 10 s a graph)."""
    from pytensor.compile.mode import Mode

    k, x = pt.dvector("k"), pt.dvector("x")
    grad = pt.grad(fn(k, x).sum(), k)
    check_like_pytensor([k, x], [grad], [np.array([-1.0]), np.array([1.0])], reference_mode=Mode(linker="cvm", optimizer=None))


def test_ill_conditioned_gradient_loop_agrees_to_its_conditioning():
    """At k = 20, x = 30 PyTensor's gammaincc gradient (-Q (log x - psi(k)) + a sum) cancels: it is
    itself 5e-4 off the exact 0.01096...; ptonnx runs the same series in onnxruntime's arithmetic,
    and a 1-ulp difference in Q comes out at 1e-9 relative."""
    k, x = pt.dvector("k"), pt.dvector("x")
    grad = pt.grad(pt.gammaincc(k, x).sum(), k)
    cm = ptonnx.compile_function([k, x], [grad])
    expected = pytensor.function([k, x], grad, mode=REFERENCE_MODE)(np.array([20.0]), np.array([30.0]))
    for level, (actual,) in run_at_every_level(cm, np.array([20.0]), np.array([30.0])).items():
        np.testing.assert_allclose(actual, expected, rtol=1e-8, err_msg=level)


#: (a, b, x) inside the domain, from tiny to large parameters
BETA_GRAD_POINTS = [(0.5, 0.5, 0.3), (2.0, 3.0, 0.4), (10.0, 20.0, 0.3), (1.0, 1.0, 0.5), (0.1, 5.0, 0.9),
                    (50.0, 2.0, 0.95), (1e-3, 1e-3, 0.5), (200.0, 300.0, 0.4)]


def _betainc_derivatives(points):
    import mpmath

    mpmath.mp.dps = 30

    def regularized(a, b, x):
        return mpmath.betainc(a, b, 0, x, regularized=True)

    da, db = [], []
    for a, b, x in points:
        a, b, x = (mpmath.mpf(v) for v in (a, b, x))
        da.append(float(mpmath.diff(lambda t: regularized(t, b, x), a)))
        db.append(float(mpmath.diff(lambda t: regularized(a, t, x), b)))
    return [np.array(da), np.array(db)]


def test_pytensor_gradient_loops_of_betainc_are_exact():
    """d/da and d/db of betainc (PyTensor's continued-fraction ScalarLoops, Boik & Robison-Cox)
    against mpmath: within 1e-12. PyTensor's own Python evaluation of these loops is up to 1.2e-7
    off (at a = b = 1e-3, x = 1/2) and its C code 1.5e-10 (a = 10, b = 20, x = 0.3), so the
    reference here is the exact derivative."""
    a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    grads = pt.grad(pt.betainc(a, b, x).sum(), [a, b])
    values = [np.array(column) for column in zip(*BETA_GRAD_POINTS, strict=True)]
    exact = _betainc_derivatives(BETA_GRAD_POINTS)
    cm = ptonnx.compile_function([a, b, x], grads)
    for level, actual in run_at_every_level(cm, *values).items():
        for got, want in zip(actual, exact, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=level)


def test_betainc_gradient_loops_at_the_edges():
    """x = 0 and 1, NaN, invalid parameters: PyTensor's special values."""
    a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    grads = pt.grad(pt.betainc(a, b, x).sum(), [a, b])
    points = [(3.0, 3.0, 0.0), (3.0, 3.0, 1.0), (2.0, 2.0, np.nan), (-1.0, 2.0, 0.5), (2.0, 0.0, 0.5), (2.0, 2.0, 1.5)]
    check_like_pytensor([a, b, x], grads, [np.array(column) for column in zip(*points, strict=True)])


def _series_until_small():
    """total += exp(k log x - g) psi(k + 1); g += log1p(k); k += 1; until the term is below 1e-12
    (the shape of PyTensor's gammainc gradient loops): a NaN x or k never stops it."""
    total, g, k, log_x = ps.float64("total"), ps.float64("g"), ps.float64("k"), ps.float64("log_x")
    term = ps.exp(k * log_x - g) * ps.psi(k + 1)
    return ScalarLoop(init=[total, g, k], update=[total + term, g + ps.log1p(k), k + 1],
                      constant=[log_x], until=abs(term) <= 1e-12)


def test_loop_leaves_elements_a_nan_settles():
    """An element whose NaN keeps the stopping test false and the used result NaN is left at
    once (ptonnx.ir.nan_flow) instead of running all its trips; the numbers stay PyTensor's."""
    k, log_x = pt.dvector("k"), pt.dvector("log_x")
    total, _, _, done = Elemwise(_series_until_small())(np.int32(3_000), pt.zeros_like(k), pt.gammaln(k + 1), k, log_x)
    values = [np.array([1.0, np.nan, 2.0, 0.5, np.inf]), np.array([np.nan, 0.0, -1.0, np.nan, 0.0])]
    check_like_pytensor([k, log_x], [total, done], values)
    compiled = ptonnx.compile_function([k, log_x], [total, done])
    (loop,) = [n for n in compiled.model.graph.node if n.op_type == "Loop"]
    assert any(n.op_type == "IsNaN" for n in loop.attribute[0].g.node), "the NaN shortcut is missing"


def test_loop_keeps_running_elements_whose_nan_is_replaced():
    """x <- (x is NaN ? 0 : x) + 1 until x > 5: a NaN does not settle anything; no shortcut."""
    x = ps.float64("x")
    new = ps.switch(ps.isnan(x), np.float64(0.0), x) + 1
    loop = ScalarLoop(init=[x], update=[new], until=new > 5)
    xv = pt.dvector("x")
    out, done = Elemwise(loop)(np.int32(100), xv)
    check_like_pytensor([xv], [out, done], [np.array([np.nan, 1.0, -np.inf, np.inf, 10.0])])
