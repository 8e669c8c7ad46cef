"""The linear-algebra ops built by hand (no PyTensor), decomposed into Loops over MatMul,
lowered and run at both onnxruntime levels against `interpret` (LAPACK through SciPy, NumPy):
one model for every size (0, 1, block edges 31-33, 100), batches (empty ones too), failures
(NaN where LAPACK refuses, LinAlgError where NumPy raises), NaN inputs, and an unread triangle
full of NaN."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.ir import TensorType as T
from tests.lowering.harness import compiled, one_node

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

COVERS = frozenset({"Cholesky", "SolveTriangular", "LUFactor", "Det", "SLogDet", "MatrixInverse", "Solve",
                    "PivotToPermutations", "Expm"})


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
    for a in (_general(6, (3,)), _general(4, (0,)), _general(0, (2,))):
        batched.check(a, compare=_close_n(6))


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
