"""The multivariate normal (each method), choice (with and without replacement, uniform and
weighted) and permutation, end to end from PyTensor graphs under fixed keys: both onnxruntime
levels give the same bits; shapes and dtypes are PyTensor's own draw's; the draws fit their
distribution (sample means and covariances within 6 standard errors, Cramér-von Mises for
normal marginals and a projection, chi-square for frequencies, p > 1e-3); parameters NumPy
refuses fail the run with the exception class PyTensor raises."""

from __future__ import annotations

import itertools

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.stats as st

import ptonnx
from ptonnx.keys import key
from ptonnx.testing import reference_mode, run_at_every_level

N = 10_000
P_MIN = 1e-3
SIGMAS = 6.0
METHODS = ("cholesky", "eigh", "svd")

#: IR op -> the tests that reach it from PyTensor (read by tests/ir/test_registry.py)
REACHED_BY = {
    "RandomMvNormal": ("test_mvnormal_fits", "test_mvnormal_of_a_singular_cov", "test_mvnormal_batched_params",
                       "test_shapes_and_dtypes_are_pytensors", "test_bad_parameters_raise_as_pytensor"),
    "RandomChoice": ("test_choice_without_replacement_is_uniform", "test_shapes_and_dtypes_are_pytensors",
                     "test_bad_parameters_raise_as_pytensor"),
    "RandomWeightedChoice": ("test_weighted_choice_without_replacement_is_numpys", "test_shapes_and_dtypes_are_pytensors",
                             "test_bad_parameters_raise_as_pytensor"),
    "RandomPermutation": ("test_permutation_is_uniform", "test_shapes_and_dtypes_are_pytensors"),
}


def _rng():
    return pytensor.shared(np.random.default_rng(0), name="rng")


def _draw(inputs, out, arrays, seed=7):
    """The compiled draws (alike at both onnxruntime levels), checked against PyTensor's own draw's shape and dtype."""
    cm = ptonnx.compile_function(inputs, [out])
    runs = [outs[0] for outs in run_at_every_level(cm, *arrays, key(seed)).values()]
    assert runs[0].tobytes() == runs[1].tobytes(), "the onnxruntime levels differ"
    theirs = np.asarray(pytensor.function(inputs, out, mode=reference_mode())(*arrays))
    assert runs[0].shape == theirs.shape and runs[0].dtype == theirs.dtype, (runs[0].shape, theirs.shape, runs[0].dtype, theirs.dtype)
    return runs[0]


def _batched(rv, rng, *params):
    """`rv`'s op on batched parameters (PyTensor's vectorised RV), its draws."""
    return rv.owner.op.make_node(rng, None, *params).outputs[1]


# -- the multivariate normal ------------------------------------------------------------------


def _fits_normal(x: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> None:
    """Sample mean and covariance within 6 standard errors, each marginal's and a projection's fit."""
    n = x.shape[0]
    assert np.isfinite(x).all()
    sd = np.sqrt(np.diag(cov))
    assert (np.abs(x.mean(axis=0) - mean) < SIGMAS * sd / np.sqrt(n) + 1e-12).all(), (x.mean(axis=0), mean)
    se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / n)  # of a sample covariance, normal data
    assert (np.abs(np.cov(x, rowvar=False).reshape(cov.shape) - cov) < SIGMAS * se + 1e-12).all(), (np.cov(x, rowvar=False), cov)
    for i in range(cov.shape[0]):
        if sd[i] > 0:
            assert st.cramervonmises(x[:, i], st.norm(mean[i], sd[i]).cdf).pvalue > P_MIN, i
    w = np.linspace(1.0, -2.0, cov.shape[0])
    spread = np.sqrt(w @ cov @ w)
    if spread > 0:
        assert st.cramervonmises(x @ w, st.norm(w @ mean, spread).cdf).pvalue > P_MIN


COVS = {
    "1-D": (np.array([3.0]), np.array([[2.5]])),
    "3-D": (np.array([1.0, -2.0, 0.5]), np.array([[4.0, 1.2, -0.8], [1.2, 2.0, 0.3], [-0.8, 0.3, 1.0]])),
    "scaled": (np.array([1e3, -1e3]), np.array([[1e6, -9e5], [-9e5, 1e6]])),
}


def _mvnormal(mean, cov, method, size, dtype="float64"):
    """Parameters of unknown sizes, but for batch axes (PyTensor broadcasts only static 1s)."""
    m = pt.tensor("mean", dtype="float64", shape=mean.shape[:-1] + (None,))
    c = pt.tensor("cov", dtype="float64", shape=cov.shape[:-2] + (None, None))
    return [m, c], pt.random.multivariate_normal(m, c, size=size, method=method, rng=_rng(), dtype=dtype)


@pytest.mark.one_environment  # ptonnx's formulas; the PyTensor line shows in the shapes test
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", sorted(COVS))
def test_mvnormal_fits(method, case):
    mean, cov = COVS[case]
    inputs, out = _mvnormal(mean, cov, method, (N,))
    _fits_normal(_draw(inputs, out, [mean, cov]), mean, cov)


@pytest.mark.one_environment
@pytest.mark.parametrize("method", ["eigh", "svd"])
def test_mvnormal_of_a_singular_cov(method):
    """Rank 2 in 3 dimensions (and rank 1): the draws lie in cov's range, with its covariance."""
    b = np.array([[1.0, 0.5], [-1.0, 2.0], [0.0, 1.0]])
    mean = np.array([0.5, 0.0, -1.0])
    for cov in (b @ b.T, np.outer(b[:, 0], b[:, 0])):
        inputs, out = _mvnormal(mean, cov, method, (N,))
        x = _draw(inputs, out, [mean, cov], seed=11)
        _fits_normal(x, mean, cov)
        w, v = np.linalg.eigh(cov)
        null = v[:, np.abs(w) < 1e-12]
        np.testing.assert_allclose((x - mean) @ null, 0.0, atol=1e-12)


@pytest.mark.one_environment
@pytest.mark.parametrize("method", METHODS)
def test_mvnormal_batched_params(method):
    """Means (2, 1, 3) and covs (4, 3, 3), size (N, 2, 4): each batch element its own distribution."""
    means = np.arange(6.0).reshape(2, 1, 3)
    covs = np.stack([np.diag([1.0, 2.0, 3.0]) * (k + 1) + 0.3 * (np.ones((3, 3)) - np.eye(3)) for k in range(4)])
    inputs, out = _mvnormal(means, covs, method, (N // 4, 2, 4))
    x = _draw(inputs, out, [means, covs], seed=13)
    assert x.shape == (N // 4, 2, 4, 3)
    for i, j in itertools.product(range(2), range(4)):
        _fits_normal(x[:, i, j], means[i, 0], covs[j])


# -- choice and permutation -------------------------------------------------------------------


def _chisquare_uniform(counts: np.ndarray) -> None:
    assert st.chisquare(counts.ravel()).pvalue > P_MIN, counts


@pytest.mark.one_environment
def test_choice_with_replacement_frequencies():
    """PyTensor builds it from integers and categorical (indexing a): ptonnx draws those."""
    a = pt.vector("a")
    p = pt.vector("p")
    values = np.array([10.0, 20.0, 30.0, 40.0])
    x = _draw([a], pt.random.choice(a, size=(N,), rng=_rng()), [values])
    _chisquare_uniform(np.array([(x == v).sum() for v in values]))
    weights = np.array([0.1, 0.0, 0.6, 0.3])
    x = _draw([a, p], pt.random.choice(a, size=(N,), p=p, rng=_rng()), [values, weights], seed=8)
    counts = np.array([(x == v).sum() for v in values])
    assert counts[1] == 0
    keep = weights > 0
    assert st.chisquare(counts[keep], weights[keep] * N).pvalue > P_MIN


def test_choice_without_replacement_is_uniform():
    """k = 3 of n = 7 on N batch rows: distinct, each element included k / n of the time, the
    first drawn uniform."""
    n, k = 7, 3
    a, rows = pt.vector("a"), pt.matrix("rows")
    rv = pt.random.choice(a, size=(k,), replace=False, rng=_rng())
    values = np.tile(np.arange(n, dtype=np.float64) * 2, (N, 1))
    x = _draw([rows], _batched(rv, _rng(), rows, np.array([k])), [values]).astype(int) // 2
    assert x.shape == (N, k)
    assert all(len(set(r)) == k for r in x)
    inclusion = np.bincount(x.ravel(), minlength=n)
    q = k / n  # an element's inclusion is Bernoulli(q), the counts exchangeably correlated: -q (1 - q) / (n - 1)
    stat = ((inclusion - N * q) ** 2).sum() / (N * q * (1 - q)) * (n - 1) / n
    assert st.chi2(n - 1).sf(stat) > P_MIN, inclusion
    _chisquare_uniform(np.bincount(x[:, 0], minlength=n))
    _chisquare_uniform(np.bincount(x[:, -1], minlength=n))


@pytest.mark.one_environment
def test_weighted_choice_without_replacement_is_numpys():
    """Against NumPy's own `choice(replace=False, p=...)` (10**5 draws each): ordered pairs of 5
    weighted elements (one of weight 0), 3-subsets of 6 and their elements' inclusion rates."""
    n, k = 5, 2
    weights = np.array([0.4, 0.25, 0.0, 0.2, 0.15])
    a, p, rows, ps = pt.vector("a"), pt.vector("p"), pt.matrix("rows"), pt.matrix("ps")
    rv = pt.random.choice(a, size=(k,), replace=False, p=p, rng=_rng())
    x = _draw([rows, ps], _batched(rv, _rng(), rows, ps, np.array([k])),
              [np.tile(np.arange(n, dtype=np.float64), (2 * N, 1)), np.tile(weights, (2 * N, 1))]).astype(int)
    assert (x[:, 0] != x[:, 1]).all() and not (x == 2).any()
    rng = np.random.default_rng(2026)
    reference = np.array([rng.choice(n, k, replace=False, p=weights) for _ in range(100_000)])
    ours, theirs = (np.bincount(y[:, 0] * n + y[:, 1], minlength=n * n) for y in (x, reference))
    keep = (ours + theirs) > 0
    assert st.chi2_contingency(np.stack([ours[keep], theirs[keep]])).pvalue > P_MIN
    # 3 of 6: the unordered subsets' frequencies (two-sample chi-square) and each element's
    # inclusion rate (two-sample z, 6 standard errors) against NumPy's
    n, k = 6, 3
    weights = np.array([0.05, 0.3, 0.1, 0.25, 0.2, 0.1])
    x = _draw([rows, ps], _batched(rv, _rng(), rows, ps, np.array([k])),
              [np.tile(np.arange(n, dtype=np.float64), (2 * N, 1)), np.tile(weights, (2 * N, 1))], seed=12).astype(int)
    assert all(len(set(r)) == k for r in x)
    reference = np.array([rng.choice(n, k, replace=False, p=weights) for _ in range(100_000)])
    ours, theirs = ((2 ** np.sort(y, axis=1)).sum(axis=1) for y in (x, reference))  # a subset as a bit mask
    masks = np.union1d(ours, theirs)
    table = np.array([[(y == m).sum() for m in masks] for y in (ours, theirs)])
    assert st.chi2_contingency(table).pvalue > P_MIN
    for element in range(n):
        q1, q2 = ((y == element).any(axis=1).mean() for y in (x, reference))
        pooled = (q1 * len(x) + q2 * len(reference)) / (len(x) + len(reference))
        assert abs(q1 - q2) < SIGMAS * np.sqrt(pooled * (1 - pooled) * (1 / len(x) + 1 / len(reference))), (element, q1, q2)
    # and a single weighted draw without replacement of all but the zero: inclusion is certain
    n, weights = 5, np.array([0.4, 0.25, 0.0, 0.2, 0.15])
    (y,) = ptonnx.compile_function([a, p], [pt.random.choice(a, size=(4,), replace=False, p=p, rng=_rng())])(
        np.arange(n, dtype=np.float64), weights, key(3))
    assert sorted(y) == [0.0, 1.0, 3.0, 4.0]


def test_permutation_is_uniform():
    """Permutations of 3 elements on N rows: all 6 equally frequent; of 6, each position uniform."""
    x3 = pt.vector("x")
    rv = pt.random.permutation(x3, rng=_rng())
    x = _draw([x3], rv.owner.op.make_node(_rng(), (N,), x3).outputs[1], [np.arange(3.0)]).astype(int)
    assert x.shape == (N, 3)
    codes = x @ np.array([9, 3, 1])
    perms = [p[0] * 9 + p[1] * 3 + p[2] for p in itertools.permutations(range(3))]
    _chisquare_uniform(np.array([(codes == c).sum() for c in perms]))
    rows = pt.matrix("rows")
    y = _draw([rows], _batched(rv, _rng(), rows), [np.tile(np.arange(6.0), (N, 1))], seed=9).astype(int)
    assert (np.sort(y, axis=1) == np.arange(6)).all()
    for position in range(6):
        _chisquare_uniform(np.bincount(y[:, position], minlength=6))


# -- shapes, dtypes and refusals --------------------------------------------------------------


def _shape_cases():
    """(name, inputs, out, arrays): PyTensor graphs of each op, sized, broadcast and typed."""
    cases = []
    mean, cov = COVS["3-D"]
    for method in METHODS:
        for size, dtype in ((None, "float64"), ((4, 2), "float64"), ((0,), "float64"), (None, "float32")):
            inputs, out = _mvnormal(mean, cov, method, size, dtype)
            cases.append((f"mvnormal {method} {size} {dtype}", inputs, out, [mean, cov]))
        inputs, out = _mvnormal(mean, cov, method, (3,))
        cases.append((f"mvnormal {method} of 0 dimensions", inputs, out, [np.zeros(0), np.zeros((0, 0))]))
        inputs, out = _mvnormal(np.zeros((2, 1, 3)), np.stack([cov] * 4), method, None)
        cases.append((f"mvnormal {method} batched", inputs, out, [np.zeros((2, 1, 3)), np.stack([cov] * 4)]))
    a, m, p, n = pt.vector("a"), pt.matrix("m"), pt.vector("p"), pt.scalar("n", dtype="int64")
    ai = pt.vector("ai", dtype="int32")
    vals, mat, w = np.arange(6.0), np.arange(12.0).reshape(6, 2), np.full(6, 1 / 6)
    for size in ((3,), (2, 2), (), (0,)):
        cases.append((f"choice vector {size}", [a], pt.random.choice(a, size=size, replace=False, rng=_rng()), [vals]))
        cases.append((f"choice matrix {size}", [m], pt.random.choice(m, size=size, replace=False, rng=_rng()), [mat]))
        cases.append((f"choice scalar {size}", [n], pt.random.choice(n, size=size, replace=False, rng=_rng()), [np.array(6)]))
        cases.append((f"choice weighted {size}", [m, p], pt.random.choice(m, size=size, replace=False, p=p, rng=_rng()), [mat, w]))
    cases.append(("choice int32", [ai], pt.random.choice(ai, size=(2,), replace=False, rng=_rng()), [np.arange(5, dtype=np.int32)]))
    cases.append(("permutation vector", [a], pt.random.permutation(a, rng=_rng()), [vals]))
    cases.append(("permutation matrix", [m], pt.random.permutation(m, rng=_rng()), [mat]))
    cases.append(("permutation scalar", [n], pt.random.permutation(n, rng=_rng()), [np.array(5)]))
    rv = pt.random.permutation(a, rng=_rng())
    cases.append(("permutation sized", [a], rv.owner.op.make_node(_rng(), (4, 2), a).outputs[1], [vals]))
    return cases


@pytest.mark.parametrize("case", _shape_cases(), ids=lambda c: c[0])
def test_shapes_and_dtypes_are_pytensors(case):
    _, inputs, out, arrays = case
    x = _draw(inputs, out, arrays)
    if x.size and "mvnormal" in case[0]:
        assert np.isfinite(x).all()


BAD = {
    "cholesky of a cov not positive definite": (
        lambda: _mvnormal(np.zeros(2), np.eye(2), "cholesky", None), [np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]])]),
    "svd of a cov holding NaN": (lambda: _mvnormal(np.zeros(2), np.eye(2), "svd", (3,)), [np.zeros(2), np.array([[np.nan, 0.0], [0.0, 1.0]])]),
    "choice of more than there are": (
        lambda: ([v := pt.vector("a")], pt.random.choice(v, size=(4,), replace=False, rng=_rng())), [np.arange(3.0)]),
    "choice from a scalar of more than there are": (
        lambda: ([v := pt.scalar("n", dtype="int64")], pt.random.choice(v, size=(4,), replace=False, rng=_rng())), [np.array(3)]),
    **{f"weighted choice, p = {w}": (
        lambda: ([v := pt.vector("a"), q := pt.vector("p")], pt.random.choice(v, size=(2,), replace=False, p=q, rng=_rng())),
        [np.arange(3.0), np.array(w)]) for w in ([0.5, 0.6, -0.1], [0.5, 0.6, 0.1], [1.0, 0.0, 0.0], [0.5, np.nan, 0.5])},
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_parameters_raise_as_pytensor(name):
    build, arrays = BAD[name]
    inputs, out = build()
    with pytest.raises(Exception) as pytensors:
        pytensor.function(inputs, out, mode=reference_mode())(*arrays)
    cm = ptonnx.compile_function(inputs, [out])
    with pytest.raises(pytensors.type):
        cm(*arrays, key(1))
