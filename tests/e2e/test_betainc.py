"""BetaInc in float64 against an mpmath reference over typical and extreme (a, b, x) triples
(the accuracy sweep of tests/e2e/test_accuracy.py is unary/binary), at every onnxruntime level;
and a PyMC log-cdf that uses it, end to end."""

from __future__ import annotations

import mpmath
import numpy as np
import pytensor.tensor as pt
import pytest

import ptonnx
from references import beta_reference
from tests.conftest import run_at_every_level

#: the largest relative error accepted (measured: 2e-13)
RTOL = 1e-12


def _reference(a: float, b: float, x: float) -> float:
    """I_x(a, b) by the continued fraction in 60-digit arithmetic (mpmath.betainc is slow for huge a, b),
    in 700 digits where 1 - I_{1-x}(b, a) leaves less than 20 of them."""
    value = _fraction(a, b, x, 60)
    return value if abs(value) > 1e-40 or value == 0 and x == 0 else _fraction(a, b, x, 700)


def _fraction(a: float, b: float, x: float, digits: int) -> float:
    with mpmath.workdps(digits):
        a, b, x = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(x)
        mirror = x >= (a + 1) / (a + b + 2)
        p, q, u = (b, a, 1 - x) if mirror else (a, b, x)
        tail = beta_reference.continued_fraction(p, q, u, mpmath.log(u), mpmath.log(1 - u))
        return float(1 - tail if mirror else tail)


def _triples(rng, n=60):
    def log_uniform(lo, hi):
        return 10 ** rng.uniform(lo, hi, n)
    a, b = log_uniform(-3, 2), log_uniform(-3, 2)
    yield "typical", a, b, rng.uniform(0, 1, n)
    yield "tiny and huge", log_uniform(-300, 7), log_uniform(-300, 7), rng.uniform(0, 1, n)
    yield "x near 0", log_uniform(-5, 1), log_uniform(-5, 1), log_uniform(-12, 0)
    a = log_uniform(1, 7)
    b = a * 10 ** rng.uniform(-1, 1, n)
    mean = a / (a + b)
    sd = np.sqrt(mean * (1 - mean) / (a + b))
    yield "large near the mean", a, b, np.clip(mean + rng.normal(0, 1, n) * sd * rng.uniform(0, 12, n), 0, 1)
    a, b = log_uniform(1, 7), log_uniform(-3, 0.5)
    x = np.clip(1 - rng.exponential(1, n) * b / a * rng.uniform(0, 10, n), 0, 1)
    yield "large a, small b", a, b, x
    yield "small a, large b", b, a, 1 - x


@pytest.fixture(scope="module")
def betainc_model():
    a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    return ptonnx.compile_function([a, b, x], [pt.betainc(a, b, x)])


@pytest.mark.one_environment
@pytest.mark.parametrize("seed", [0, 1])
def test_float64_within_bound_of_mpmath(betainc_model, seed):
    for label, a, b, x in _triples(np.random.default_rng(seed)):
        exact = np.array([_reference(*t) for t in zip(a, b, x, strict=True)])
        for level, (got,) in run_at_every_level(betainc_model, a, b, x).items():
            with np.errstate(all="ignore"):
                err = np.where(got == exact, 0.0, np.abs(got - exact) / np.abs(exact))
            worst = int(np.argmax(err))
            assert err[worst] <= RTOL, (
                f"{label} at {level}: betainc({a[worst]!r}, {b[worst]!r}, {x[worst]!r}) = {got[worst]!r}, "
                f"exact {exact[worst]!r} (relative error {err[worst]:.3g})")


def test_special_values_as_scipy(betainc_model):
    import scipy.special

    inf, nan = np.inf, np.nan
    a = np.array([2.0, 2.0, 0.0, 0.0, 1.0, 1.0, inf, inf, 2.0, 0.0, inf, -1.0, 2.0, 2.0, nan, 2.0, 1e-320])
    b = np.array([3.0, 3.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, inf, 0.0, inf, 1.0, 3.0, 3.0, 1.0, nan, 1.0])
    x = np.array([0.0, 1.0, 0.0, 0.3, 0.3, 1.0, 0.3, 1.0, 0.3, 0.3, 0.3, 0.3, -0.1, 1.1, 0.3, 0.3, 0.3])
    expected = scipy.special.betainc(a, b, x)
    for level, (got,) in run_at_every_level(betainc_model, a, b, x).items():
        np.testing.assert_array_equal(got, expected, err_msg=level)


def test_a_huge_parameter_converges():
    """The fraction's trip count grows as sqrt(a) near the mean: 1e9 is within MAX_TRIPS."""
    a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    cm = ptonnx.compile_function([a, b, x], [pt.betainc(a, b, x)])
    (got,) = cm(np.array([1e9]), np.array([1e9]), np.array([0.5 - 1e-5]))
    assert abs(got[0] / _reference(1e9, 1e9, 0.5 - 1e-5) - 1) < RTOL


def test_huge_parameters_far_from_the_mean_are_0_or_1():
    """There the tail's prefactor underflows, so it is 0 whatever the fraction (at most p + 1), which
    is not run: it did not converge there (NaN for a = 5e74, b = 5e212, found by the audit)."""
    a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    cm = ptonnx.compile_function([a, b, x], [pt.betainc(a, b, x)])
    a_ = np.array([5.115352395643128e74, 1e12, 1e12, 1e300, 1e10, 3e200])
    b_ = np.array([4.578735155091031e212, 1e12, 1e12, 1e300, 1e250, 1e9])
    x_ = np.array([0.5036738340131366, 0.4999, 0.5001, 0.25, 1e-200, 0.999])
    expected = beta_reference.betainc(a_, b_, x_).astype(np.float64)
    assert set(expected) == {0.0, 1.0}
    for level, (got,) in run_at_every_level(cm, a_, b_, x_).items():
        np.testing.assert_array_equal(got, expected, err_msg=level)


def test_pymc_logcdfs():
    pm = pytest.importorskip("pymc")
    nu, mu, sigma, value = pt.dscalar("nu"), pt.dscalar("mu"), pt.dscalar("sigma"), pt.dvector("value")
    alpha, beta, p = pt.dscalar("alpha"), pt.dscalar("beta"), pt.dvector("p")
    outs = [pm.logcdf(pm.StudentT.dist(nu=nu, mu=mu, sigma=sigma), value), pm.logcdf(pm.Beta.dist(alpha, beta), p)]
    inputs = [nu, mu, sigma, value, alpha, beta, p]
    cm = ptonnx.compile_function(inputs, outs)
    import pytensor

    fn = pytensor.function(inputs, outs, mode="FAST_COMPILE")
    args = [3.5, 0.2, 1.7, np.array([-30.0, -1.0, 0.0, 0.5, 4.0, 100.0]), 0.7, 2.5,
            np.array([1e-6, 0.1, 0.5, 0.9, 1 - 1e-9])]
    for level, got in run_at_every_level(cm, *args).items():
        for g, e in zip(got, fn(*args), strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-11, err_msg=level)
