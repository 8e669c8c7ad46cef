"""The discrete draws built on loops (poisson, binomial, negative_binomial, betabinom, hypergeometric,
multinomial), end to end: a PyTensor graph compiled by ptonnx draws 20000 values per parameter set
under a fixed key; both onnxruntime levels give the same bits, the draws have the shape and dtype
of PyTensor's own, and they fit SciPy's pmf (chi-square over the values, the tails binned until
each bin expects 5 draws, p > 1e-3; mean and variance within 6 standard errors). Parameters NumPy
or SciPy refuse fail the run with the exception class PyTensor raises."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.stats as st

import ptonnx
from ptonnx.keys import key
from ptonnx.testing import run_at_every_level
from tests.random.drawing import compile_draws, draws

N = 20000
KEY = key(2027)
#: a fit this unlikely fails (the key is fixed: the p-values are too)
P_MIN = 1e-3
#: standard errors a mean or a variance may be off by
SIGMAS = 6.0
#: each chi-square bin expects at least this many draws
MIN_EXPECTED = 5.0
#: a law spread over more values than this is binned between its quantiles, in this many bins
WIDE, QUANTILE_BINS = 2000, 100

#: IR op -> the tests that reach it (read by tests/ir/test_registry.py)
REACHED_BY = {
    "RandomPoisson": ("test_poisson_fits", "test_poisson_edges", "test_huge_means_are_normal", "test_poisson_broadcasts_across_both_samplers",
                      "test_int32_draws", "test_bad_parameters_raise_as_pytensor"),
    "RandomBinomial": ("test_binomial_fits", "test_binomial_edges", "test_huge_means_are_normal", "test_int32_draws", "test_bad_parameters_raise_as_pytensor"),
    "RandomNegBinomial": ("test_negative_binomial_fits", "test_negative_binomial_edges", "test_bad_parameters_raise_as_pytensor"),
    "RandomBetaBinomial": ("test_betabinom_fits", "test_betabinom_edges", "test_bad_parameters_raise_as_pytensor"),
    "RandomHyperGeometric": ("test_hypergeometric_fits", "test_hypergeometric_edges", "test_bad_parameters_raise_as_pytensor"),
    "RandomMultinomial": ("test_multinomial_fits", "test_multinomial_edges", "test_multinomial_of_categories_known_at_run_time",
                          "test_bad_parameters_raise_as_pytensor"),
}


def _array(p):
    """Python ints (or lists of them) as int64, as PyTensor's integer parameters; else float64."""
    whole = isinstance(p, int) or (isinstance(p, list) and all(isinstance(v, int) for v in p))
    return np.asarray(p, dtype=np.int64 if whole else np.float64)


def _compile(rv, params, dtype="int64", size=(N,)):
    return compile_draws(rv, params, dtype, size, _array)


def draw(rv, params, dtype="int64", size=(N,)) -> np.ndarray:
    return draws(rv, params, dtype, size, _array, KEY)


def fits(x, dist) -> None:
    """Chi-square of the draws' values against `dist`'s pmf: one bin per value, the tails (and
    values expecting fewer than MIN_EXPECTED draws) merged into their neighbours."""
    x = np.asarray(x, dtype=np.int64).ravel()
    lo, hi = int(dist.ppf(1e-12)), int(dist.ppf(1 - 1e-12))
    assert x.min() >= dist.support()[0] and x.max() <= dist.support()[1], (x.min(), x.max(), dist.support())
    if lo == hi:
        assert (x == lo).all()
        return
    if hi - lo > WIDE:  # bins between quantiles (edges[i] <= x < edges[i + 1])
        edges = np.unique(dist.ppf(np.linspace(0, 1, QUANTILE_BINS + 1)[1:-1]).astype(np.int64))
        cdf = dist.cdf(edges - 1)
        probs = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
        observed = np.bincount(np.searchsorted(edges, x, side="right"), minlength=probs.size).astype(np.float64)
    else:
        ks = np.arange(lo, hi + 1)
        probs = dist.pmf(ks)
        probs[0], probs[-1] = dist.cdf(lo), dist.sf(hi - 1)
        observed = np.bincount(np.clip(x, lo, hi) - lo, minlength=ks.size).astype(np.float64)
    expected = probs * x.size
    groups, obs, exp, acc_o, acc_e = [], [], [], 0.0, 0.0
    for o, e in zip(observed, expected, strict=True):
        acc_o, acc_e = acc_o + o, acc_e + e
        if acc_e >= MIN_EXPECTED:
            obs.append(acc_o)
            exp.append(acc_e)
            acc_o = acc_e = 0.0
    if acc_e or acc_o:
        obs[-1] += acc_o
        exp[-1] += acc_e
    groups = np.asarray(obs), np.asarray(exp)
    if groups[0].size < 2:
        return
    observed, expected = groups
    expected *= observed.sum() / expected.sum()
    assert st.chisquare(observed, expected).pvalue > P_MIN, (observed, expected)


def moments(x, dist) -> None:
    """Mean and variance within SIGMAS standard errors."""
    x = np.asarray(x, dtype=np.float64).ravel()
    mean, var, kurtosis = (float(m) for m in dist.stats(moments="mvk"))
    assert abs(x.mean() - mean) <= SIGMAS * np.sqrt(var / x.size) + 1e-12 * abs(mean), (x.mean(), mean)
    if var > 0 and np.isfinite(kurtosis):
        # the sample variance's variance, var**2 (kurtosis / n + 2 / (n - 1)): not 0 for two-point laws
        assert abs(x.var() - var) <= SIGMAS * var * np.sqrt(kurtosis / x.size + 2 / (x.size - 1)), (x.var(), var)


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize("lam", [1e-10, 0.5, 3.0, 9.99, 10.0, 10.5, 50.0, 1e3, 1e6])
def test_poisson_fits(lam):
    x = draw(pt.random.poisson, (lam,))
    fits(x, st.poisson(lam))
    moments(x, st.poisson(lam))


def test_poisson_edges():
    assert (draw(pt.random.poisson, (0.0,)) == 0).all()
    assert (draw(pt.random.poisson, (-0.0,)) == 0).all()  # NumPy takes -0.0
    assert draw(pt.random.poisson, (2.0,), size=(0, 3)).shape == (0, 3)


@pytest.mark.parametrize(("rv", "params", "mean", "var"), [(pt.random.poisson, (1e15,), 1e15, 1e15),
                                                           (pt.random.binomial, (10**15, 0.3), 3e14, 2.1e14)])
def test_huge_means_are_normal(rv, params, mean, var):
    """Means of 1e15, where SciPy's pmf and ppf fail (NaN) and the laws are normal to within their
    skewness (3e-8): the standardised draws fit N(0, 1), so the samplers' acceptance tests (taken
    without cancellation between terms of size mean log mean) hold there."""
    z = (draw(rv, params).astype(np.float64) - mean) / np.sqrt(var)
    assert st.cramervonmises(z, "norm").pvalue > P_MIN
    assert abs(z.mean()) <= SIGMAS / np.sqrt(N) and abs(z.var() - 1) <= SIGMAS * np.sqrt(2 / N)


def test_poisson_broadcasts_across_both_samplers():
    """A (N, 5) draw whose columns take inversion and PTRS: the same bits at every level."""
    lams = [0.0, 0.5, 9.99, 10.0, 1e3]
    x = draw(pt.random.poisson, (lams,), size=(N, 5))
    for i, lam in enumerate(lams):
        fits(x[:, i], st.poisson(lam))


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize(("n", "p"), [(1, 0.5), (10, 0.3), (24, 0.4), (25, 0.4), (50, 0.9), (1000, 0.3), (10**9, 1e-12),
                                      (10**9, 0.5), (10**9, 1 - 1e-12), (200, 0.999)])
def test_binomial_fits(n, p):
    x = draw(pt.random.binomial, (n, p))
    fits(x, st.binom(n, p))
    moments(x, st.binom(n, p))


def test_binomial_edges():
    assert (draw(pt.random.binomial, (0, 0.5)) == 0).all()
    assert (draw(pt.random.binomial, (10**9, 0.0)) == 0).all()
    assert (draw(pt.random.binomial, (7, -0.0)) == 0).all()
    assert (draw(pt.random.binomial, (10**9, 1.0)) == 10**9).all()
    assert (draw(pt.random.binomial, (7, 1.0)) == 7).all()
    x = draw(pt.random.binomial, ([0, 5, 100, 10**6], [0.5, 0.5, 0.5, 0.3]), size=(N, 4))
    for i, (n, p) in enumerate([(0, 0.5), (5, 0.5), (100, 0.5), (10**6, 0.3)]):
        fits(x[:, i], st.binom(n, p))


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize(("n", "p"), [(0.5, 0.5), (5.0, 0.3), (100.0, 0.9), (3.0, 0.01), (1e-3, 0.5)])
def test_negative_binomial_fits(n, p):
    x = draw(pt.random.negative_binomial, (n, p))
    fits(x, st.nbinom(n, p))
    moments(x, st.nbinom(n, p))


def test_negative_binomial_edges():
    assert (draw(pt.random.negative_binomial, (5.0, 1.0)) == 0).all()
    x = draw(pt.random.negative_binomial, (5.0, 1e-17))  # NumPy's largest means: gammas of mean 5e17
    assert abs(x.mean() / 5e17 - 1) <= SIGMAS / np.sqrt(5 * N)


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize(("n", "a", "b"), [(1, 1.0, 1.0), (10, 2.0, 3.0), (1000, 0.5, 0.5), (50, 100.0, 0.1)])
def test_betabinom_fits(n, a, b):
    x = draw(pt.random.betabinom, (n, a, b))
    fits(x, st.betabinom(n, a, b))
    moments(x, st.betabinom(n, a, b))


def test_betabinom_edges():
    assert (draw(pt.random.betabinom, (0, 1.0, 1.0)) == 0).all()


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
@pytest.mark.parametrize(("ngood", "nbad", "nsample"), [(5, 7, 4), (50, 60, 30), (3, 100, 50), (100, 3, 50), (1000, 10, 1005),
                                                        (20, 20, 15), (10**6, 10**6, 10**5), (10, 10**8, 10**7),
                                                        (10, 1000, 10), (1, 10**8, 10**7)])  # HRUA's worst: 1 in 4 accepted
def test_hypergeometric_fits(ngood, nbad, nsample):
    x = draw(pt.random.hypergeometric, (ngood, nbad, nsample))
    dist = st.hypergeom(ngood + nbad, ngood, nsample)
    fits(x, dist)
    moments(x, dist)


def test_hypergeometric_edges():
    assert (draw(pt.random.hypergeometric, (0, 5, 3)) == 0).all()
    assert (draw(pt.random.hypergeometric, (5, 0, 3)) == 3).all()
    assert (draw(pt.random.hypergeometric, (5, 6, 0)) == 0).all()
    assert (draw(pt.random.hypergeometric, (5, 6, 11)) == 5).all()


@pytest.mark.one_environment  # the fits check ptonnx's formulas; shapes and refusals run in both
def test_multinomial_fits():
    """Each category's count is a binomial; the counts sum to n."""
    p = [0.2, 0.3, 0.5]
    x = draw(pt.random.multinomial, (100, p))
    assert x.shape == (N, 3) and (x.sum(axis=1) == 100).all()
    for i, pi in enumerate(p):
        fits(x[:, i], st.binom(100, pi))
        moments(x[:, i], st.binom(100, pi))
    x = draw(pt.random.multinomial, ([5, 10**6], [[0.1, 0.9, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]]), size=(N // 2, 2))
    assert x.shape == (N // 2, 2, 4)
    np.testing.assert_array_equal(x.sum(axis=2), np.tile([5, 10**6], (N // 2, 1)))
    assert (x[:, 0, 2:] == 0).all()
    fits(x[:, 0, 0], st.binom(5, 0.1))
    for i in range(4):
        fits(x[:, 1, i], st.binom(10**6, 0.25))


def test_multinomial_edges():
    assert (draw(pt.random.multinomial, (0, [0.5, 0.5])) == 0).all()
    x = draw(pt.random.multinomial, (5, [0.5, 0.6]))  # NumPy checks p[:-1] only: the last takes what is left
    assert (x.sum(axis=1) == 5).all()
    fits(x[:, 0], st.binom(5, 0.5))
    assert draw(pt.random.multinomial, (5, [0.5, 0.5]), size=(0,)).shape == (0, 2)


def test_multinomial_of_categories_known_at_run_time():
    """p of unknown length (a Loop over the categories, whatever their count): the same draws."""
    rng = pytensor.shared(np.random.default_rng(0))
    n, p = pt.scalar("n", dtype="int64"), pt.vector("p")
    cm = ptonnx.compile_function([n, p], [pt.random.multinomial(n, p, size=(N,), rng=rng)])
    for probs in ([0.2, 0.3, 0.5], [1.0], [0.1] * 10):
        runs = [outs[0] for outs in run_at_every_level(cm, np.int64(40), np.asarray(probs), KEY).values()]
        assert runs[0].tobytes() == runs[1].tobytes(), "the onnxruntime levels differ"
        assert runs[0].shape == (N, len(probs)) and (runs[0].sum(axis=1) == 40).all()
        for i, pi in enumerate(probs):
            fits(runs[0][:, i], st.binom(40, pi))
    np.testing.assert_array_equal(cm(np.int64(40), np.asarray([0.2, 0.3, 0.5]), KEY)[0],
                                  draw(pt.random.multinomial, (40, [0.2, 0.3, 0.5])))


@pytest.mark.parametrize(("rv", "params", "dist"), [(pt.random.poisson, (3.0,), st.poisson(3.0)),
                                                    (pt.random.binomial, (100, 0.3), st.binom(100, 0.3))])
def test_int32_draws(rv, params, dist):
    x = draw(rv, params, dtype="int32")
    assert x.dtype == np.int32
    fits(x, dist)


BAD = [(pt.random.poisson, (-1.0,)), (pt.random.poisson, (np.nan,)), (pt.random.poisson, (1e19,)),
       (pt.random.binomial, (-1, 0.5)), (pt.random.binomial, (5, -0.1)), (pt.random.binomial, (5, 1.1)),
       (pt.random.binomial, (5, np.nan)),
       (pt.random.negative_binomial, (0.0, 0.5)), (pt.random.negative_binomial, (5.0, 0.0)),
       (pt.random.negative_binomial, (5.0, np.nan)), (pt.random.negative_binomial, (np.nan, 0.5)),
       (pt.random.negative_binomial, (5.0, 1e-20)),
       (pt.random.betabinom, (5, 0.0, 1.0)), (pt.random.betabinom, (5, 1.0, -1.0)), (pt.random.betabinom, (-1, 1.0, 1.0)),
       (pt.random.betabinom, (5, np.nan, 1.0)),
       (pt.random.hypergeometric, (-1, 1, 1)), (pt.random.hypergeometric, (1, 1, -1)), (pt.random.hypergeometric, (2, 2, 5)),
       (pt.random.hypergeometric, (10**9, 1, 1)),
       (pt.random.multinomial, (-1, [0.5, 0.5])), (pt.random.multinomial, (5, [-0.1, 1.1])),
       (pt.random.multinomial, (5, [np.nan, 1.0])), (pt.random.multinomial, (5, [0.7, 0.7, 0.0]))]


@pytest.mark.parametrize(("rv", "params"), BAD)
def test_bad_parameters_raise_as_pytensor(rv, params):
    cm, f, arrays = _compile(rv, params, size=(10,))
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - the class PyTensor raises is the point
        f(*arrays)
    with pytest.raises(type(theirs.value)):
        cm(*arrays, KEY)
