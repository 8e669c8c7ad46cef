"""QR, SVD, SingularValues and MatrixPinv built by hand (no PyTensor), decomposed into Loops,
lowered and run at both onnxruntime levels against `interpret` (LAPACK through NumPy): one model
for every size (0, 1, 2, 5, 33, tall and wide), batches (empty ones too), rank-deficient
matrices, NaN (LinAlgError for the SVD, NaN through QR as LAPACK) and inf (NaN).

QR of a full-rank matrix is unique with LAPACK's signs: compared entrywise. Singular vectors are
not unique: their defining properties are checked, and the singular values against LAPACK's."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.ir import TensorType as T
from tests.lowering.harness import compiled, interpret, one_node

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

COVERS = frozenset({"QR", "SVD", "SingularValues", "MatrixPinv"})
EPS = np.finfo(np.float64).eps
#: c in the bounds c max(m, n) eps ||A|| (values, reconstruction) and c max(m, n) eps (orthogonality)
C = 8.0
SHAPES = [(0, 0), (1, 1), (2, 2), (5, 5), (7, 3), (3, 7), (0, 3), (4, 0), (33, 33), (40, 12)]


def _rng(seed=0):
    return np.random.default_rng(seed)


def _bound(a):
    return C * max(a.shape[-2:] + (1,)) * EPS


def _close(scale):
    def compare(actual, expected, context=""):
        assert actual.shape == expected.shape and actual.dtype == expected.dtype, context
        assert np.array_equal(np.isnan(actual), np.isnan(expected)), context
        infinite = np.isinf(expected)
        assert np.array_equal(actual[infinite], expected[infinite]), context
        ok = np.isfinite(expected)
        assert np.abs(actual[ok] - expected[ok]).max(initial=0.0) <= scale, context

    return compare


@pytest.mark.parametrize("mode", ["complete", "reduced"])
def test_qr(mode):
    case = compiled(one_node("QR", [T("float64", (None, None))], {"mode": mode}))
    rng = _rng(1)
    for shape in SHAPES + [(32, 32), (70, 33), (64, 97)]:  # panels of 32 columns at most: one, two and three
        a = rng.normal(size=shape)
        case.check(a, compare=_close(_bound(a) * max(np.abs(a).max(initial=1.0), 1.0)), context=str(shape))
    # NaN and inf flow as through LAPACK's geqr2 (a zero sub-column reflects nothing)
    for a in (np.array([[1.0, np.nan], [2.0, 3.0]]), np.array([[1.0, np.inf], [2.0, 3.0]]), np.full((2, 2), np.nan),
              np.array([[-np.inf, 0.0], [0.0, 1.0]]), np.zeros((3, 2))):
        case.check(a, compare=_close(1e-15), context=str(a))
    batched = compiled(one_node("QR", [T("float64", ("b", None, None))], {"mode": mode}))
    for a in (rng.normal(size=(3, 6, 4)), rng.normal(size=(0, 3, 5)), rng.normal(size=(2, 0, 3))):
        batched.check(a, compare=_close(_bound(a) * 4), context=str(a.shape))


def _check_svd(case, a, full):
    """Values against LAPACK's; A = U diag(s) V^T and U, V orthonormal, at every level."""
    _, expected, _ = interpret(case.reference, a)
    for level, run in case.runs.items():
        u, s, vt = run(a)
        m, n = a.shape[-2:]
        k = min(m, n)
        assert u.shape == a.shape[:-2] + ((m, m) if full else (m, k)) and vt.shape == a.shape[:-2] + ((n, n) if full else (k, n))
        size = np.abs(a).max(initial=0.0)
        assert np.abs(s - expected).max(initial=0.0) <= _bound(a) * size, (level, a.shape)
        rebuilt = (u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :]
        assert np.abs(rebuilt - a).max(initial=0.0) <= _bound(a) * size, (level, a.shape)
        for q in (np.swapaxes(u, -1, -2) @ u, vt @ np.swapaxes(vt, -1, -2)):
            assert np.abs(q - np.eye(q.shape[-1])).max(initial=0.0) <= _bound(a), (level, a.shape)


@pytest.mark.parametrize("full", [False, True])
def test_svd(full):
    case = compiled(one_node("SVD", [T("float64", (None, None))], {"full_matrices": full}))
    rng = _rng(2)
    repeated = rng.normal(size=(6, 4))
    repeated[:, 2] = repeated[:, 0]
    zero_column = rng.normal(size=(5, 5))
    zero_column[:, 1] = 0.0
    low_rank = rng.normal(size=(40, 20)) @ rng.normal(size=(20, 40))
    for a in [rng.normal(size=s) for s in SHAPES] + [repeated, repeated.T, zero_column, low_rank, np.zeros((3, 2)), rng.normal(size=(9, 9)) * 1e150,
                                                      rng.normal(size=(9, 9)) * 1e-300]:
        _check_svd(case, a, full)
    case.check_fails(np.array([[1.0, np.nan], [2.0, 3.0]]), exception=np.linalg.LinAlgError, match="SVD did not converge")
    for run in case.runs.values():
        assert all(np.isnan(x).all() for x in run(np.array([[1.0, np.inf], [2.0, 3.0]])))
    batched = compiled(one_node("SVD", [T("float64", ("b", None, None))], {"full_matrices": full}))
    for a in (rng.normal(size=(3, 6, 4)), rng.normal(size=(0, 3, 5)), rng.normal(size=(2, 0, 3))):
        _check_svd(batched, a, full)
    some_inf = rng.normal(size=(3, 4, 4))
    some_inf[1, 2, 0] = -np.inf  # only that matrix is NaN
    for run in batched.runs.values():
        u, s, vt = run(some_inf)
        assert all(np.isnan(x[1]).all() and not np.isnan(x[[0, 2]]).any() for x in (u, s, vt))
        assert np.abs(s[[0, 2]] - np.linalg.svd(some_inf[[0, 2]], compute_uv=False)).max() <= 1e-14


def test_singular_values_and_pinv():
    values = compiled(one_node("SingularValues", [T("float64", ("b", None, None))], {}))
    rng = _rng(3)
    for a in (rng.normal(size=(2, 5, 5)), rng.normal(size=(1, 4, 9)), rng.normal(size=(0, 2, 2)), rng.normal(size=(3, 1, 0))):
        values.check(a, compare=_close(_bound(a) * max(np.abs(a).max(initial=1.0), 1.0)), context=str(a.shape))
    values.check_fails(np.full((1, 2, 2), np.nan), exception=np.linalg.LinAlgError)
    values.check(np.array([[[1.0, np.inf], [2.0, 3.0]]]), compare=_close(0.0))

    def relative(actual, expected, context=""):
        scale = max(np.abs(expected[~np.isnan(expected)]).max(initial=0.0), 1e-300)
        _close(1e3 * _bound(expected) * scale)(actual, expected, context)

    for hermitian in (False, True):
        case = compiled(one_node("MatrixPinv", [T("float64", (None, None))], {"hermitian": hermitian}))
        repeated = rng.normal(size=(5, 5))
        repeated[:, 3] = repeated[:, 1]
        repeated = repeated @ repeated.T  # rank 4, symmetric
        for a in (rng.normal(size=(0, 0)), rng.normal(size=(1, 1)), rng.normal(size=(4, 4)), repeated, np.zeros((3, 3)),
                  rng.normal(size=(30, 30)) * 1e-300):
            case.check(a, compare=relative, context=str(a.shape))
        if hermitian:  # NumPy's eigh reads the lower triangle: NaN above it is never read
            case.check(np.array([[2.0, np.nan], [1.0, 3.0]]), compare=relative)
            case.check_fails(np.array([[2.0, 1.0], [np.inf, 3.0]]), exception=np.linalg.LinAlgError)
        else:
            for a in (rng.normal(size=(3, 5)), rng.normal(size=(6, 2))):
                case.check(a, compare=relative, context=str(a.shape))
            case.check_fails(np.array([[1.0, np.nan], [2.0, 3.0]]), exception=np.linalg.LinAlgError)


def test_jacobi_that_does_not_converge_raises(monkeypatch):
    """Still rotating after MAX_SWEEPS sweeps: LinAlgError (LAPACK's failure), never the numbers."""
    from ptonnx.decompositions.linalg import svd

    monkeypatch.setattr(svd, "MAX_SWEEPS", 1)
    case = compiled(one_node("SingularValues", [T("float64", (None, None))], {}))
    for run in case.runs.values():
        with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
            run(_rng(4).normal(size=(12, 12)))
        assert run(np.diag([3.0, 2.0, 1.0]))[0].tolist() == [3.0, 2.0, 1.0]  # orthogonal rows: one sweep is enough
