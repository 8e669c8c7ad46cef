"""The linear-algebra ops (LU among them: non-square, singular) built by hand (no PyTensor),
decomposed into Loops over MatMul, lowered and run at both onnxruntime levels against `interpret`
(LAPACK through SciPy, NumPy): one model for every size (0, 1, block edges 31-33, 100), batches
(empty ones too), failures (NaN where LAPACK refuses, LinAlgError where NumPy raises), NaN inputs,
and an unread triangle full of NaN."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.ir import TensorType as T
from tests.lowering.harness import compiled, one_node

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

COVERS = frozenset({"Cholesky", "SolveTriangular", "LUFactor", "Det", "SLogDet", "MatrixInverse", "Solve",
                    "PivotToPermutations", "Expm", "LU"})


def _spd(n, batch=(), seed=0):
    g = np.random.default_rng(seed).normal(size=batch + (n, n))
    return g @ np.swapaxes(g, -1, -2) / max(n, 1) + np.eye(n)


def _close(actual, expected, context=""):
    assert np.array_equal(np.isnan(actual), np.isnan(expected)), context
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12, err_msg=context)


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky(lower):
    case = compiled(one_node("Cholesky", [T("float64", (None, None))], {"lower": lower}))
    for n in (0, 1, 2, 31, 32, 33, 100):
        case.check(_spd(n), compare=_close, context=str(n))
    failing = _spd(6)
    failing[4, 4] = -3.0
    with_nan = _spd(5)
    with_nan[3, 1] = with_nan[1, 3] = np.nan
    for a in (failing, with_nan, np.zeros((3, 3))):
        case.check(a, compare=_close)
    batched = compiled(one_node("Cholesky", [T("float64", ("b", None, None))], {"lower": lower}))
    some_fail = _spd(40, (3,))
    some_fail[2, 35, 35] = -1.0
    for a in (some_fail, _spd(4, (0,)), _spd(0, (2,))):
        batched.check(a, compare=_close)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular(lower, unit):
    rng = np.random.default_rng(1)
    matrix = compiled(one_node("SolveTriangular", [T("float64", (None, None)), T("float64", (None, 3))],
                               {"lower": lower, "unit_diagonal": unit, "b_ndim": 2}))
    vector = compiled(one_node("SolveTriangular", [T("float64", (2, None, None)), T("float64", (None,))],
                               {"lower": lower, "unit_diagonal": unit, "b_ndim": 1}))
    for n in (0, 1, 5, 33, 70):
        tri = np.linalg.cholesky(_spd(n, seed=n))
        tri = tri if lower else tri.T
        unread = np.triu(np.full((n, n), np.nan), 1) if lower else np.tril(np.full((n, n), np.nan), -1)
        matrix.check(np.where(np.isnan(unread), unread, tri), rng.normal(size=(n, 3)), compare=_close, context=str(n))
        pair = np.stack([tri, tri * 2.0])
        vector.check(pair, rng.normal(size=n), compare=_close, context=str(n))
    zero = np.linalg.cholesky(_spd(4))
    zero = zero if lower else zero.T
    zero[2, 2] = 0.0
    matrix.check(zero, rng.normal(size=(4, 3)), compare=_close)


def _general(n, batch=(), seed=0):
    return np.random.default_rng(seed).normal(size=batch + (n, n)) / np.sqrt(max(n, 1)) + 2 * np.eye(n)


def _close_n(n):
    def compare(actual, expected, context=""):
        assert actual.shape == expected.shape, context
        assert np.array_equal(np.isnan(actual), np.isnan(expected)), context
        if expected.dtype.kind in "iu":
            assert np.array_equal(actual, expected), context
            return
        finite = np.isfinite(expected)
        assert np.array_equal(actual[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)]), context
        scale = np.max(np.abs(expected[finite]), initial=1.0)
        assert np.max(np.abs(actual[finite] - expected[finite]), initial=0.0) <= 8 * max(n, 1) * 2.2e-16 * scale, context

    return compare


@pytest.mark.parametrize("op", ["LUFactor", "Det", "SLogDet", "MatrixInverse"])
def test_lu_and_functions_of_it(op):
    case = compiled(one_node(op, [T("float64", (None, None))], {}))
    for n in (0, 1, 2, 5, 33, 70):
        case.check(_general(n, seed=n), compare=_close_n(n), context=f"{op} {n}")
    singular = _general(5)
    singular[:, 2] = 0.0
    if op == "MatrixInverse":
        case.check_fails(singular, exception=np.linalg.LinAlgError, match="Singular matrix")
    else:
        for a in (singular, np.zeros((3, 3))):
            case.check(a, compare=_close_n(5))
    batched = compiled(one_node(op, [T("float64", ("b", None, None))], {}))
    # ties between pivot candidates (small integers), each matrix of a batch pivoting its own way
    # across panels (n = 40: two panels of 20)
    ties = np.random.default_rng(4).integers(-2, 3, size=(3, 40, 40)).astype(float)
    for a in (_general(6, (3,)), _general(4, (0,)), _general(0, (2,)), _general(40, (2,), seed=1), ties):
        batched.check(a, compare=_close_n(40))


@pytest.mark.parametrize("kind", ["gen", "sym", "pos"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve(kind, lower):
    rng = np.random.default_rng(2)
    case = compiled(one_node("Solve", [T("float64", (None, None)), T("float64", (None, 2))],
                             {"assume_a": kind, "lower": lower, "b_ndim": 2}))
    for n in (0, 1, 4, 40):
        a = _general(n, seed=n)
        a = a @ a.T if kind != "gen" else a
        case.check(a, rng.normal(size=(n, 2)), compare=_close_n(n), context=f"{kind} {n}")
    case.check(np.zeros((3, 3)), rng.normal(size=(3, 2)), compare=_close_n(3))  # singular: NaN


@pytest.mark.parametrize("inverse", [True, False])
def test_pivot_to_permutations(inverse):
    case = compiled(one_node("PivotToPermutations", [T("int64", (None,))], {"inverse": inverse}))
    for pivots in ([2, 2, 3, 3], [0], [], [4, 1, 4, 3, 4]):
        case.check(np.array(pivots, dtype=np.int64), compare=_close_n(1))
    batched = compiled(one_node("PivotToPermutations", [T("int64", (2, None))], {"inverse": inverse}))
    batched.check(np.array([[1, 1, 2], [2, 2, 2]], dtype=np.int64), compare=_close_n(1))


def test_expm():
    """Scaling and squaring with Padé 13 against SciPy's expm (a different degree choice): within
    5e-12 of the largest entry, norms up to about 2,000, each matrix of a batch squared its own
    number of times, inf and NaN matrices NaN."""
    rng = np.random.default_rng(3)

    def compare(actual, expected, context=""):
        assert actual.shape == expected.shape and np.array_equal(np.isnan(actual), np.isnan(expected)), context
        ok = np.isfinite(expected)
        scale = np.max(np.abs(expected[ok]), initial=1e-300)
        assert np.max(np.abs(actual[ok] - expected[ok]), initial=0.0) <= 5e-12 * scale, context

    case = compiled(one_node("Expm", [T("float64", (None, None))], {}))
    for n, size in [(0, 1.0), (1, 1.0), (2, 1.0), (3, 1e-3), (5, 20.0), (30, 0.5), (40, 50.0)]:
        case.check(rng.normal(size=(n, n)) * size, compare=compare, context=f"{n} {size}")
    case.check(np.zeros((3, 3)), compare=compare)
    # a matrix holding inf or NaN is NaN everywhere (SciPy special-cases diagonal and triangular
    # matrices, where it may give finite entries: docs/limits.md)
    for bad in (np.array([[-np.inf, 0.0], [0.0, 1.0]]), np.array([[np.nan, 0.5], [0.0, 1.0]])):
        for run in case.runs.values():
            assert np.isnan(run(bad)[0]).all()
    batched = compiled(one_node("Expm", [T("float64", ("b", None, None))], {}))
    batched.check(np.stack([rng.normal(size=(4, 4)) * s for s in (0.01, 1.0, 30.0)]), compare=compare)
    batched.check(np.zeros((0, 4, 4)), compare=compare)


@pytest.mark.parametrize("permute_l", [False, True])
def test_lu(permute_l):
    """scipy.linalg.lu through one model: square sizes across block edges, non-square both ways,
    singular and rank-deficient matrices (a zero pivot: finite L and U, as getrf), ties between
    pivot candidates (the first), batches (empty ones too); inf or NaN raises ValueError."""
    rng = np.random.default_rng(4)
    case = compiled(one_node("LU", [T("float64", (None, None))], {"permute_l": permute_l}))
    for shape in [(0, 0), (1, 1), (2, 2), (5, 5), (33, 33), (70, 70), (3, 7), (7, 3), (1, 4), (4, 1), (0, 3), (3, 0), (40, 45)]:
        case.check(rng.normal(size=shape), compare=_close_n(max(shape)), context=f"{shape}")
    zero_column = _general(5)
    zero_column[:, 1] = 0.0
    ties = np.array([[1.0, 2.0, 3.0], [-1.0, 5.0, 1.0], [1.0, 2.0, 4.0]])
    for a in (np.zeros((4, 4)), zero_column, ties, np.ones((3, 5)), zero_column[:, :3], np.ones((4, 2))):
        case.check(a, compare=_close_n(8), context=str(a))
    # rank 2 in rounding: the trailing pivots are rounding errors, whose order is the kernels' own;
    # the factorisation is held to what getrf promises (|L| <= 1, P L U = a to c n eps)
    rank_two = rng.normal(size=(6, 2)) @ rng.normal(size=(2, 6))
    for run in case.runs.values():
        low, up, p = run(rank_two)
        assert_lu_factors(rank_two, low, up, p, permute_l)
    for bad in (np.array([[1.0, np.nan], [0.0, 1.0]]), np.array([[np.inf, 0.0], [0.0, 1.0]])):
        case.check_fails(bad, exception=ValueError, match="infs or NaNs")
    batched = compiled(one_node("LU", [T("float64", ("b", None, None))], {"permute_l": permute_l}))
    for a in (rng.normal(size=(3, 4, 4)), rng.normal(size=(2, 3, 5)), np.zeros((0, 4, 4)), np.zeros((2, 0, 0))):
        batched.check(a, compare=_close_n(5))


def assert_lu_factors(a, low, up, p, permute_l, eps=2.2e-16):
    """L unit lower triangular with |L| <= 1 (partial pivoting), U upper, (L U)[p] = a (P L U with
    permute_l) to c n eps of a's largest entry."""
    assert np.array_equal(np.sort(p, axis=-1), np.broadcast_to(np.arange(p.shape[-1]), p.shape))
    if permute_l:
        inverse = np.argsort(p, axis=-1)
        low = np.take_along_axis(low, inverse[..., None], axis=-2)
    assert np.array_equal(np.triu(low, 1), np.zeros_like(low)) and np.all(np.diagonal(low, axis1=-2, axis2=-1) == 1.0)
    assert np.abs(low).max(initial=0.0) <= 1.0 and np.array_equal(np.tril(up, -1), np.zeros_like(up))
    rebuilt = np.take_along_axis(low @ up, p[..., None], axis=-2)
    assert np.abs(rebuilt - a).max(initial=0.0) <= 8 * max(a.shape[-2:]) * eps * np.abs(a).max(initial=1.0)
