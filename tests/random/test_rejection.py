"""The rejection samplers (gamma, invgamma, beta, t, gengamma, dirichlet, vonmises; chisquare through gamma),
end to end: a PyTensor graph compiled by ptonnx draws 20000 values per parameter set under a fixed
key; both onnxruntime levels give the same bits, the draws have the shape and dtype of PyTensor's
own, and they fit SciPy's distribution (Cramér-von Mises, p > 1e-3; mean and variance within 6
standard errors). Draws that underflow (shapes near 0: NumPy's are 0 there too) are tested as a
censored sample: how many fall inside (lo, hi), and the fit of those inside. Parameters NumPy or
SciPy refuse fail the run with the exception class PyTensor raises."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
import scipy.stats as st

from ptonnx.keys import key
from tests.random.drawing import compile_draws, draws

N = 20000
KEY = key(2026)
#: a fit this unlikely fails (the key is fixed: the p-values are too)
P_MIN = 1e-3
#: standard errors a mean or a variance may be off by
SIGMAS = 6.0

#: IR op -> the tests that reach it (read by tests/ir/test_registry.py)
REACHED_BY = {
    "RandomGamma": ("test_gamma_fits", "test_gamma_broadcasts_its_parameters", "test_gamma_edges", "test_chisquare_is_a_gamma", "test_float32_draws", "test_bad_parameters_raise_as_pytensor"),
    "RandomInvGamma": ("test_invgamma_fits", "test_invgamma_edges", "test_float32_draws", "test_bad_parameters_raise_as_pytensor"),
    "RandomBeta": ("test_beta_fits", "test_beta_of_the_least_parameters", "test_float32_draws", "test_bad_parameters_raise_as_pytensor"),
    "RandomStudentT": ("test_t_fits", "test_t_edges", "test_float32_draws", "test_bad_parameters_raise_as_pytensor"),
    "RandomGenGamma": ("test_gengamma_fits", "test_float32_draws", "test_bad_parameters_raise_as_pytensor"),
    "RandomDirichlet": ("test_dirichlet_fits", "test_dirichlet_edges", "test_float32_draws", "test_bad_parameters_raise_as_pytensor"),
    "RandomVonMises": ("test_vonmises_fits", "test_vonmises_edges", "test_float32_draws", "test_bad_parameters_raise_as_pytensor"),
}


def _float_array(p):
    return np.asarray(p, dtype=np.float64)


def _compile(rv, params, dtype="float64", size=(N,)):
    return compile_draws(rv, params, dtype, size, _float_array)


def draw(rv, params, dtype="float64", size=(N,)) -> np.ndarray:
    return draws(rv, params, dtype, size, _float_array, KEY)


def fits(x, dist, lo=None, hi=None) -> None:
    """`x` fits `dist`: Cramér-von Mises on the draws in (lo, hi) against the distribution given
    (lo, hi), and the count inside within SIGMAS binomial standard errors."""
    x = np.asarray(x, dtype=np.float64).ravel()
    assert not np.isnan(x).any()
    if lo is None and hi is None:
        assert st.cramervonmises(x, dist.cdf).pvalue > P_MIN
        return
    f_lo = dist.cdf(lo) if lo is not None else 0.0
    f_hi = dist.cdf(hi) if hi is not None else 1.0
    inside = x[(x > (lo if lo is not None else -np.inf)) & (x < (hi if hi is not None else np.inf))]
    share = f_hi - f_lo
    assert abs(inside.size - x.size * share) <= SIGMAS * np.sqrt(x.size * share * (1 - share)) + 1, (inside.size, x.size * share)
    assert st.cramervonmises(inside, lambda t: (dist.cdf(t) - f_lo) / share).pvalue > P_MIN


def moments(x, dist) -> None:
    """Mean and variance within SIGMAS standard errors, where the distribution has them (and its
    fourth moment, for the variance)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    mean, var, kurtosis = (float(m) for m in dist.stats(moments="mvk"))
    if np.isfinite(mean) and np.isfinite(var):
        assert abs(x.mean() - mean) <= SIGMAS * np.sqrt(var / x.size), (x.mean(), mean)
    if np.isfinite(var) and np.isfinite(kurtosis):
        assert abs(x.var() - var) <= SIGMAS * var * np.sqrt((kurtosis + 2) / x.size), (x.var(), var)


def _gamma(shape, scale, **kw):
    return pt.random.gamma(shape, scale=scale, **kw)


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize(("params", "lo"), [((1e-3, 1.0), 1e-300), ((0.5, 2.0), None), ((3.0, 1.0), None), ((1e6, 1e-6), None)])
def test_gamma_fits(params, lo):
    x = draw(_gamma, params)
    dist = st.gamma(params[0], scale=params[1])
    fits(x, dist, lo=lo)
    moments(x, dist)


def test_gamma_broadcasts_its_parameters():
    """A (N, 3) draw from parameters of shape (3,): the same bits at every level (the samplers
    compute on vectors, whatever layout onnxruntime's optimiser picks for the matrix)."""
    shapes, scales = [0.5, 2.0, 40.0], [1.0, 0.5, 2.0]
    x = draw(_gamma, (shapes, scales), size=(N, 3))
    for i, (a, s) in enumerate(zip(shapes, scales, strict=True)):
        fits(x[:, i], st.gamma(a, scale=s))
        moments(x[:, i], st.gamma(a, scale=s))


def test_gamma_edges():
    assert (draw(_gamma, (0.0, 1.0)) == 0).all()  # NumPy's standard_gamma(0)
    assert draw(_gamma, (2.0, 1.0), size=(0, 3)).shape == (0, 3)
    assert (draw(_gamma, (2.0, 0.0)) == 0).all()
    assert np.isnan(draw(_gamma, (np.nan, 1.0))).all()  # NumPy lets NaN through
    assert np.isnan(draw(_gamma, (-np.float64(np.nan), 1.0))).all()  # even with its sign bit set
    assert np.isinf(draw(_gamma, (np.inf, 1.0))).all()


@pytest.mark.parametrize("df", [0.5, 3.0, 1e4])
def test_chisquare_is_a_gamma(df):
    x = draw(lambda d, dtype, **kw: pt.random.chisquare(d, **kw), (df,))
    fits(x, st.chi2(df))
    moments(x, st.chi2(df))


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize("params", [(0.5, 1.0), (3.0, 2.0), (1e6, 1.0)])
def test_invgamma_fits(params):
    x = draw(pt.random.invgamma, params)
    dist = st.invgamma(params[0], scale=params[1])
    fits(x, dist)
    moments(x, dist)


def test_invgamma_edges():
    assert (draw(pt.random.invgamma, (2.0, 0.0)) == 0).all()
    assert np.isinf(draw(pt.random.invgamma, (0.0, 1.0))).all()


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize(("params", "lo", "hi"), [((0.5, 0.5), None, None), ((2.0, 5.0), None, None),
                                                  ((1e-3, 1e-3), 1e-300, 1 - 1e-12), ((1e6, 1e6), None, None)])
def test_beta_fits(params, lo, hi):
    x = draw(pt.random.beta, params)
    dist = st.beta(*params)
    fits(x, dist, lo=lo, hi=hi)
    moments(x, dist)


def test_beta_of_the_least_parameters():
    """Beta(a, a) as a -> 0 is 0 or 1, each with probability 1/2 (the gammas underflow: logs)."""
    x = draw(pt.random.beta, (1e-300, 1e-300))
    assert set(np.unique(x)) == {0.0, 1.0}
    assert abs(x.mean() - 0.5) <= SIGMAS * 0.5 / np.sqrt(N)
    x = draw(pt.random.beta, (5e-324, 5e-324))  # both gammas' logs -inf
    assert set(np.unique(x)) == {0.0, 1.0}
    assert abs(x.mean() - 0.5) <= SIGMAS * 0.5 / np.sqrt(N)


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize("params", [(0.5, 0.0, 1.0), (3.0, 1.0, 2.0), (1e6, 0.0, 1.0)])
def test_t_fits(params):
    x = draw(pt.random.t, params)
    dist = st.t(params[0], loc=params[1], scale=params[2])
    fits(x, dist)
    moments(x, dist)


def test_t_edges():
    assert (draw(pt.random.t, (3.0, 1.5, 0.0)) == 1.5).all()
    assert np.isnan(draw(pt.random.t, (np.inf, 0.0, 1.0))).all()  # SciPy's (NumPy's standard_t(inf))


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize(("params", "lo"), [((0.5, 2.0, 1.0), None), ((3.0, 0.5, 2.0), None), ((-2.0, -1.0, 1.0), None),
                                            ((1e-3, 2.0, 1.0), 1e-150)])
def test_gengamma_fits(params, lo):
    x = draw(pt.random.gengamma, params)
    alpha, p, lambd = params
    dist = st.gengamma(alpha / p, p, scale=lambd)
    fits(x, dist, lo=lo)
    moments(x, dist)


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize(("alphas", "lo", "hi"), [([1.0, 2.0, 3.0], None, None), ([0.3, 5.0], None, None),
                                                  ([1e-3, 1e-3, 1e-3], 1e-300, 1 - 1e-12), ([1e5, 2e5], None, None)])
def test_dirichlet_fits(alphas, lo, hi):
    x = draw(pt.random.dirichlet, (alphas,))
    assert x.shape == (N, len(alphas))
    np.testing.assert_allclose(x.sum(axis=1), 1.0, rtol=1e-13)
    total = sum(alphas)
    for i, a in enumerate(alphas):  # each share is a beta
        dist = st.beta(a, total - a)
        fits(x[:, i], dist, lo=lo, hi=hi)
        moments(x[:, i], dist)


def test_dirichlet_edges():
    assert draw(pt.random.dirichlet, ([1.0, 2.0],), size=(0,)).shape == (0, 2)
    np.testing.assert_array_equal(draw(pt.random.dirichlet, ([0.0, 1.0],)), np.tile([0.0, 1.0], (N, 1)))
    np.testing.assert_array_equal(draw(pt.random.dirichlet, ([-0.0, 1.0],)), np.tile([0.0, 1.0], (N, 1)))  # NumPy takes -0.0
    assert (draw(pt.random.dirichlet, ([0.0, 0.0],)) == 0).all()  # NumPy's
    x = draw(pt.random.dirichlet, ([[1.0, 1.0], [2.0, 0.5]],), size=(N // 2, 2))
    assert x.shape == (N // 2, 2, 2)
    fits(x[:, 1, 0], st.beta(2.0, 0.5))


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize("params", [(0.0, 1.0), (2.0, 3.0), (-3.0, 50.0), (0.0, 1e-9), (0.0, 1e-6), (1.0, 1e7)])
def test_vonmises_fits(params):
    """Draws on [-pi, pi]: their angle from mu, folded there too, is von Mises about 0 (SciPy's
    vonmises with loc 0 lives on [-pi, pi])."""
    mu, kappa = params
    x = draw(pt.random.vonmises, params)
    assert (np.abs(x) <= np.pi).all()
    offset = np.mod(x - mu + np.pi, 2 * np.pi) - np.pi
    fits(offset, st.vonmises(kappa))
    moments(offset, st.vonmises(kappa))


def test_vonmises_edges():
    assert np.isnan(draw(pt.random.vonmises, (0.0, np.nan))).all()  # NumPy lets NaN through
    assert np.isnan(draw(pt.random.vonmises, (np.nan, 1.0))).all()
    assert np.isnan(draw(pt.random.vonmises, (0.0, -np.float64(np.nan)))).all()  # a NaN with its sign bit set passes


FLOAT32 = [(_gamma, (0.5, 2.0), st.gamma(0.5, scale=2.0)), (pt.random.invgamma, (3.0, 2.0), st.invgamma(3.0, scale=2.0)),
           (pt.random.beta, (2.0, 5.0), st.beta(2.0, 5.0)), (pt.random.t, (3.0, 1.0, 2.0), st.t(3.0, loc=1.0, scale=2.0)),
           (pt.random.gengamma, (3.0, 0.5, 2.0), st.gengamma(6.0, 0.5, scale=2.0)),
           (lambda a, **kw: pt.random.dirichlet(a, **kw)[..., 0], ([2.0, 5.0],), st.beta(2.0, 5.0)),
           (pt.random.vonmises, (0.0, 2.0), st.vonmises(2.0))]


@pytest.mark.parametrize(("rv", "params", "dist"), FLOAT32, ids=["gamma", "invgamma", "beta", "t", "gengamma", "dirichlet", "vonmises"])
def test_float32_draws(rv, params, dist):
    x = draw(rv, params, dtype="float32")
    assert x.dtype == np.float32
    fits(x, dist)


#: NumPy's non-negative parameters refuse -0.0 (it checks the sign bit), not NaN
BAD = [(_gamma, (-1.0, 1.0)), (_gamma, (1.0, -1.0)), (_gamma, (-0.0, 1.0)), (_gamma, (1.0, -0.0)),
       (pt.random.invgamma, (-1.0, 1.0)), (pt.random.invgamma, (1.0, -1.0)), (pt.random.invgamma, (1.0, -np.inf)),
       (pt.random.beta, (0.0, 1.0)), (pt.random.beta, (1.0, -1.0)), (pt.random.t, (-1.0, 0.0, 1.0)),
       (pt.random.t, (np.nan, 0.0, 1.0)), (pt.random.t, (1.0, 0.0, -1.0)), (pt.random.gengamma, (-1.0, 1.0, 1.0)),
       (pt.random.gengamma, (1.0, 1.0, np.nan)), (pt.random.dirichlet, ([1.0, -1.0],)),
       (pt.random.vonmises, (0.0, -1.0)), (pt.random.vonmises, (0.0, -0.0))]


@pytest.mark.parametrize(("rv", "params"), BAD)
def test_bad_parameters_raise_as_pytensor(rv, params):
    cm, f, arrays = _compile(rv, params, size=(10,))
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - the class PyTensor raises is the point
        f(*arrays)
    with pytest.raises(type(theirs.value)):
        cm(*arrays, KEY)
