"""QR, SVD, singular values (pt.linalg.norm with ord 2, -2 and "nuc") and pinv from PyTensor graphs
against PyTensor's own evaluation (LAPACK through NumPy and SciPy), plain and rewritten graphs, at
both onnxruntime levels: sizes 0, 1, 2, 5, 50 and 200 through one model (unknown sizes), tall and
wide matrices, batches (empty ones too), float32, rank-deficient, ill-conditioned (~1e8) and
huge or tiny (1e150, 1e-150, 1e-300) matrices, NaN and inf, and gradients.

QR of a full-rank matrix is unique with LAPACK's signs, and singular values and pinv are unique:
compared with `normwise` (within C n eps of the largest magnitude, helpers.C = 8). Singular
vectors are not: A = U diag(s) V^T within C n eps ||A|| and U^T U = V^T V = I within C n eps.
PyTensor's QR gradient fails inside PyTensor ('module' object is not callable): not tested here.
"""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx.errors import UnsupportedOpError
from ptonnx.testing import ORT_LEVELS, session_options
from tests.conftest import check_like_pytensor
from tests.linalg.helpers import C, EPS, SIZES, compare_for as _compare_for, normwise, rng as _rng

REACHED_BY = {"QR": ("test_qr_sizes_modes_like_lapack", "test_qr_nan_inf_and_rank_deficient", "test_qr_float32_batched"),
              "SVD": ("test_svd_properties_through_one_model", "test_svd_gradient_and_batches"),
              "SingularValues": ("test_singular_values_and_norms", "test_singular_values_hard_matrices"),
              "MatrixPinv": ("test_pinv_and_its_gradient", "test_pinv_hermitian_float32_and_failures")}


def test_every_linalg_orthogonal_op_is_reached_from_pytensor():
    x = pt.dmatrix("x")
    programs = {"QR": pt.linalg.qr(x)[1], "SVD": pt.linalg.svd(x)[0], "SingularValues": pt.linalg.norm(x, ord=2),
                "MatrixPinv": pt.linalg.pinv(x)}
    for op, out in programs.items():
        assert op in ptonnx.lift(ptonnx.api.function_graph([x], [out])).op_counts(), op
    assert set(REACHED_BY) == set(programs) == {n for n, s in ptonnx.ir.all_schemas().items() if s.family == "linalg_orthogonal"}
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)


def _shapes():
    return [(n, n) for n in SIZES] + [(7, 3), (3, 7), (0, 4), (4, 0)]


def test_qr_sizes_modes_like_lapack():
    """Full-rank matrices: Q and R as LAPACK's (geqrf, orgqr), in every mode, one model for all."""
    x = pt.dmatrix("x")
    outs = [*pt.linalg.qr(x), *pt.linalg.qr(x, mode="economic"), pt.linalg.qr(x, mode="r")]
    rng = _rng(20)
    # not (0, 4) or (4, 0): SciPy's geqrf wrapper refuses them (lwork=0), so PyTensor fails
    lists = [[rng.normal(size=s)] for s in _shapes() if min(s) > 0 or s == (0, 0)]
    lists += [[rng.normal(size=(9, 6)) * scale] for scale in (1e150, 1e-150, 1e-300)]
    check_like_pytensor([x], outs, lists[0], more_values=lists[1:], compare_for=_compare_for)


def test_qr_nan_inf_and_rank_deficient():
    """NaN and inf land where LAPACK puts them; rank-deficient matrices (zero and repeated columns)
    give an orthogonal Q and an upper triangular R with Q R = A (their trailing reflectors are
    rounding noise, LAPACK's as well as ptonnx's)."""
    x = pt.dmatrix("x")
    outs = list(pt.linalg.qr(x))
    bad = [np.array([[1.0, np.nan], [2.0, 3.0]]), np.array([[1.0, np.inf], [2.0, 3.0]]), np.full((2, 2), np.nan),
           np.array([[-np.inf, 0.0], [0.0, 1.0]]), np.zeros((3, 2))]
    check_like_pytensor([x], outs, [bad[0]], more_values=[[b] for b in bad[1:]], compare=normwise)
    rng = _rng(21)
    repeated = rng.normal(size=(8, 5))
    repeated[:, 3] = repeated[:, 1]
    zero = rng.normal(size=(6, 6))
    zero[:, 2] = 0.0
    cm = ptonnx.compile_function([x], outs)
    for a in (repeated, zero, repeated.T):
        for level in ORT_LEVELS:
            q, r = cm.with_session_options(session_options(level))(a)
            n = max(a.shape)
            assert np.abs(q.T @ q - np.eye(len(q))).max() <= C * n * EPS
            assert np.abs(q @ r - a).max() <= C * n * EPS * np.abs(a).max()
            assert np.array_equal(r, np.triu(r))


def test_qr_float32_batched():
    x = pt.tensor3("x", dtype="float32")
    outs = list(pt.linalg.qr(x, mode="economic"))
    rng = _rng(22)
    compare = lambda a, e, c: normwise(a, e, c, n=8)  # noqa: E731
    check_like_pytensor([x], outs, [rng.normal(size=(3, 6, 4)).astype("float32")],
                        more_values=[[rng.normal(size=(0, 3, 3)).astype("float32")], [rng.normal(size=(2, 3, 5)).astype("float32")]],
                        compare=compare)


def test_qr_pivoting_and_raw_are_refused():
    x = pt.dmatrix("x")
    for out in (pt.linalg.qr(x, pivoting=True)[0], pt.linalg.qr(x, mode="raw")[0]):
        with pytest.raises(UnsupportedOpError, match="QR"):
            ptonnx.compile_function([x], [out])


def _check_svd(cm, a, full):
    """A = U diag(s) V^T, U and V orthonormal, s as LAPACK's, at both onnxruntime levels."""
    m, n = a.shape[-2:]
    k, big = min(m, n), max(m, n, 1)
    expected = np.linalg.svd(a, compute_uv=False)
    size = np.abs(a).max(initial=0.0)
    for level in ORT_LEVELS:
        u, s, vt = cm.with_session_options(session_options(level))(a)
        assert u.shape == a.shape[:-2] + ((m, m) if full else (m, k)) and vt.shape == a.shape[:-2] + ((n, n) if full else (k, n))
        assert u.dtype == s.dtype == vt.dtype == a.dtype
        eps = np.finfo(a.dtype).eps
        assert np.abs(s - expected).max(initial=0.0) <= C * big * eps * size, (level, a.shape)
        rebuilt = (u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :]
        assert np.abs(rebuilt - a).max(initial=0.0) <= C * big * eps * size, (level, a.shape)
        for gram in (np.swapaxes(u, -1, -2) @ u, vt @ np.swapaxes(vt, -1, -2)):
            assert np.abs(gram - np.eye(gram.shape[-1])).max(initial=0.0) <= C * big * eps, (level, a.shape)


@pytest.mark.one_environment  # the decomposition's numbers; SVD's lifting in both lines: the other tests
def test_svd_properties_through_one_model():
    """Every size through one model (full and reduced), tall and wide, rank-deficient (zero and
    repeated columns: U and V still orthonormal), ill-conditioned (~1e8), huge and tiny."""
    x = pt.dmatrix("x")
    rng = _rng(23)
    repeated = rng.normal(size=(7, 5))
    repeated[:, 4] = repeated[:, 0]
    zero = rng.normal(size=(6, 6))
    zero[:, [1, 3]] = 0.0
    u, _ = np.linalg.qr(rng.normal(size=(30, 30)))
    v, _ = np.linalg.qr(rng.normal(size=(30, 30)))
    ill = (u * np.logspace(0, -8, 30)) @ v.T
    matrices = [rng.normal(size=s) for s in _shapes()] + [repeated, repeated.T, zero, np.zeros((2, 3)), ill,
                                                         rng.normal(size=(8, 8)) * 1e150, rng.normal(size=(8, 8)) * 1e-150,
                                                         rng.normal(size=(8, 8)) * 1e-300]
    for full in (False, True):
        cm = ptonnx.compile_function([x], list(pt.linalg.svd(x, full_matrices=full)))
        for a in matrices if full else matrices[:4] + matrices[6:]:
            _check_svd(cm, a, full)


def test_svd_nan_raises_and_inf_gives_nan():
    """NaN: LinAlgError as NumPy's SVD (PyTensor's); inf: LAPACK's singular values are NaN, and so
    are ptonnx's vectors (LAPACK's depend on its iteration)."""
    x = pt.dmatrix("x")
    error = check_like_pytensor([x], list(pt.linalg.svd(x)), [np.array([[1.0, np.nan], [2.0, 3.0]])])
    assert isinstance(error, np.linalg.LinAlgError)
    (u, s, vt) = ptonnx.compile_function([x], list(pt.linalg.svd(x)))(np.array([[1.0, np.inf], [2.0, 3.0]]))
    assert np.isnan(u).all() and np.isnan(s).all() and np.isnan(vt).all()


def test_singular_values_and_norms():
    """compute_uv=False and pt.linalg.norm with ord 2, -2 and "nuc" (built from it) against
    PyTensor, every size through one model; NaN raises LinAlgError, inf gives NaN, as PyTensor."""
    x = pt.dmatrix("x")
    outs = [pt.linalg.svd(x, compute_uv=False), pt.linalg.norm(x, ord=2), pt.linalg.norm(x, ord="nuc")]
    rng = _rng(24)
    lists = [[rng.normal(size=s)] for s in _shapes() if min(s) > 0 and s != (200, 200)]  # 200: in the next test

    def compare_for(values):
        """Within C n eps ||A||_2 (the smallest singular value too, not its own size), or of the
        nuclear norm (a sum of n values)."""
        a = values[0]

        def compare(actual, expected, context):
            bound = C * max(a.shape) * EPS * max(np.linalg.norm(a, 2), np.abs(expected).max())
            np.testing.assert_allclose(actual, expected, rtol=0, atol=bound, err_msg=context)

        return compare

    check_like_pytensor([x], outs + [pt.linalg.norm(x, ord=-2)], lists[0], more_values=lists[1:], compare_for=compare_for)
    check_like_pytensor([x], outs, [np.array([[1.0, np.inf], [2.0, 3.0]])], compare=normwise)
    error = check_like_pytensor([x], outs, [np.array([[1.0, np.nan], [2.0, 3.0]])])
    assert isinstance(error, np.linalg.LinAlgError)


def test_singular_values_hard_matrices():
    """Ill-conditioned (~1e8), rank-deficient, huge and tiny, float32, and batches (empty too)."""
    x = pt.dmatrix("x")
    rng = _rng(25)
    u, _ = np.linalg.qr(rng.normal(size=(40, 40)))
    v, _ = np.linalg.qr(rng.normal(size=(40, 40)))
    ill = (u * np.logspace(0, -8, 40)) @ v.T
    repeated = rng.normal(size=(6, 6))
    repeated[:, 5] = repeated[:, 2]
    cases = [[ill], [repeated], [rng.normal(size=(9, 5)) * 1e150], [rng.normal(size=(5, 9)) * 1e-150], [rng.normal(size=(6, 6)) * 1e-300],
             [rng.normal(size=(200, 200))]]
    check_like_pytensor([x], [pt.linalg.svd(x, compute_uv=False)], cases[0], more_values=cases[1:], compare_for=_compare_for)
    xf = pt.tensor3("xf", dtype="float32")
    batch = rng.normal(size=(3, 5, 4)).astype("float32")
    check_like_pytensor([xf], [pt.linalg.svd(xf, compute_uv=False)], [batch], more_values=[[batch[:0]], [batch[:, :0]]],
                        compare=lambda a, e, c: normwise(a, e, c, n=8))


@pytest.mark.one_environment  # the decomposition's numbers
def test_svd_in_blocks_batched_and_static():
    """From k' = 48 on, the Jacobi runs in blocks of rows (`svd_block.py`): a batch whose matrices
    differ (random, rank 5, graded to 1e-8, tall and wide), through a model of unknown sizes (an
    If picks the path) and one of sizes the graph fixes (chosen at compile time)."""
    rng = _rng(31)
    tall = rng.normal(size=(3, 60, 52))
    tall[1] = rng.normal(size=(60, 5)) @ rng.normal(size=(5, 52))
    tall[2] *= np.logspace(0, -8, 52)
    xb = pt.dtensor3("xb")
    cm = ptonnx.compile_function([xb], list(pt.linalg.svd(xb, full_matrices=False)))
    for a in (tall, np.swapaxes(tall, -1, -2), rng.normal(size=(2, 47, 47)), rng.normal(size=(1, 49, 49))):
        _check_svd(cm, a, False)
    fixed = pt.tensor("fixed", dtype="float64", shape=(3, 60, 52))
    _check_svd(ptonnx.compile_function([fixed], list(pt.linalg.svd(fixed, full_matrices=False))), tall, False)


def test_svd_gradient_and_batches():
    """PyTensor's gradient of the reduced SVD (a cost unchanged by the vectors' signs), batches, and
    float32 (computed in float64, rounded once: within float32's eps)."""
    x = pt.dmatrix("x")
    u, s, vt = pt.linalg.svd(x, full_matrices=False)
    weights = np.arange(1.0, 21.0).reshape(5, 4)
    cost = s.sum() + (u ** 2 * weights[:, :4]).sum() + (vt ** 2 * weights[:4, :4]).sum()
    rng = _rng(26)
    check_like_pytensor([x], [cost, pytensor.grad(cost, x)], [rng.normal(size=(5, 4))], compare_for=_compare_for)
    xb = pt.dtensor3("xb")
    cm = ptonnx.compile_function([xb], list(pt.linalg.svd(xb, full_matrices=False)))
    for a in (rng.normal(size=(3, 6, 4)), rng.normal(size=(0, 3, 3)), rng.normal(size=(2, 3, 7))):
        _check_svd(cm, a, False)
    xf = pt.tensor3("xf", dtype="float32")
    cm = ptonnx.compile_function([xf], list(pt.linalg.svd(xf)))
    _check_svd(cm, rng.normal(size=(2, 5, 3)).astype("float32"), True)


def test_pinv_and_its_gradient():
    """pinv of square, tall, wide and rank-deficient matrices through one model, 200 x 200 too,
    and PyTensor's gradient graph (which uses pinv's output)."""
    x = pt.dmatrix("x")
    rng = _rng(27)
    repeated = rng.normal(size=(6, 4))
    repeated[:, 3] = repeated[:, 0]
    lists = [[rng.normal(size=s)] for s in _shapes()] + [[repeated], [np.zeros((3, 2))], [rng.normal(size=(9, 9)) * 1e-300]]

    def compare_for(values):  # pinv's error grows with the condition number: the well-conditioned bound, times 10
        return lambda a, e, c: normwise(a, e, c, n=10 * max(values[0].shape + (1,)))

    check_like_pytensor([x], [pt.linalg.pinv(x)], lists[0], more_values=lists[1:], compare_for=compare_for)
    out = pt.linalg.pinv(x)
    cost = (out * np.arange(1.0, 16.0).reshape(3, 5)).sum()
    check_like_pytensor([x], [cost, pytensor.grad(cost, x)], [rng.normal(size=(5, 3))], compare_for=compare_for)


def test_pinv_hermitian_float32_and_failures():
    """hermitian reads the lower triangle (NumPy's eigh): NaN above it is never read, NaN in it
    raises LinAlgError (as NumPy's eigh from n = 3 to some 10: ptonnx at every size); float32; a
    NaN matrix raises LinAlgError (NumPy's SVD) and inf gives NaN, as PyTensor."""
    x = pt.dmatrix("x")
    rng = _rng(28)
    g = rng.normal(size=(5, 5))
    sym = g + g.T
    upper_nan, lower_nan = sym.copy(), sym.copy()
    upper_nan[0, 3], lower_nan[3, 0] = np.nan, np.nan
    check_like_pytensor([x], [pt.linalg.pinv(x, hermitian=True)], [sym], more_values=[[upper_nan]],
                        compare=lambda a, e, c: normwise(a, e, c, n=50))
    error = check_like_pytensor([x], [pt.linalg.pinv(x, hermitian=True)], [lower_nan])
    assert isinstance(error, np.linalg.LinAlgError)
    error = check_like_pytensor([x], [pt.linalg.pinv(x)], [np.array([[1.0, np.nan], [2.0, 3.0]])])
    assert isinstance(error, np.linalg.LinAlgError)
    check_like_pytensor([x], [pt.linalg.pinv(x)], [np.array([[1.0, np.inf], [2.0, 3.0]])], compare=normwise)
    xf = pt.tensor3("xf", dtype="float32")
    check_like_pytensor([xf], [pt.linalg.pinv(xf)], [rng.normal(size=(2, 4, 3)).astype("float32")],
                        compare=lambda a, e, c: normwise(a, e, c, n=40))
