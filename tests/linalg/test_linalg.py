"""Cholesky, SolveTriangular and the LU family (LU itself: square and not, singular) from PyTensor
graphs against PyTensor's own evaluation (LAPACK through SciPy), plain and rewritten graphs, at
both onnxruntime levels: sizes 0, 1, 2, 5, 50 and 200 through one model (unknown n), batches,
upper and lower, well- and ill-conditioned (~1e8) inputs, matrices that are not positive definite
or singular (NaN, as PyTensor), NaN inputs, gradients, and PyTensor's errors for non-square
matrices."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.linalg
from pytensor.tensor.blockwise import Blockwise

import ptonnx
from ptonnx.errors import CheckFailedError, UnsupportedOpError
from tests.conftest import REFERENCE_MODE, check_like_pytensor
from tests.linalg.helpers import C, EPS, SIZES, compare_for as _compare_for, general as _general, normwise, rng as _rng, spd

REACHED_BY = {"Cholesky": ("test_cholesky_sizes_batches_and_failures", "test_cholesky_gradient"),
              "SolveTriangular": ("test_solve_triangular_forms", "test_solve_triangular_ill_conditioned"),
              "Solve": ("test_solve_det_inverse", "test_solve_symmetric_and_positive_definite"),
              "Det": ("test_solve_det_inverse", "test_det_slogdet_solve_gradients"),
              "MatrixInverse": ("test_solve_det_inverse",),
              "LUFactor": ("test_lu_factor_and_lu_solve",),
              "PivotToPermutations": ("test_lu_factor_and_lu_solve",),
              "SLogDet": ("test_slogdet_op", "test_slogdet_positive_definite_by_cholesky"),
              "Expm": ("test_expm_and_its_gradient",),
              "LU": ("test_lu_forms_sizes_and_singular_matrices", "test_lu_batches_float32_and_gradients")}


def test_cholesky_sizes_batches_and_failures():
    x = pt.dmatrix("x")
    lists = [[spd(n)] for n in SIZES[1:]]
    not_pd = spd(5)
    not_pd[3, 3] = -1.0
    nan_in_lower, nan_in_upper = spd(4), spd(4)
    nan_in_lower[2, 1], nan_in_upper[1, 2] = np.nan, np.nan
    lists += [[not_pd], [nan_in_lower], [nan_in_upper], [np.full((3, 3), np.nan)], [np.zeros((2, 2))]]
    for lower in (True, False):
        check_like_pytensor([x], [pt.linalg.cholesky(x, lower=lower)], [spd(0)], more_values=lists, compare=normwise)
    xb = pt.tensor3("xb", dtype="float64")
    batch = spd(33, (3,))
    batch[1, 4, 4] = -5.0  # one matrix of the batch fails: only it is NaN
    check_like_pytensor([xb], [pt.linalg.cholesky(xb)], [batch], more_values=[[spd(3, (0,))], [spd(0, (2,))]], compare=normwise)


def test_cholesky_ill_conditioned():
    """Condition ~1e8: L L^T reproduces the matrix to c n eps (backward stability, as LAPACK's),
    and L is as close to LAPACK's as the condition allows."""
    a = spd(50, cond=1e8)
    x = pt.dmatrix("x")
    (low,) = ptonnx.compile_function([x], [pt.linalg.cholesky(x)])(a)
    assert np.abs(low @ low.T - a).max() <= C * 50 * EPS * np.abs(a).max()
    expected = scipy.linalg.cholesky(a, lower=True)
    assert np.abs(low - expected).max() <= 1e4 * C * 50 * EPS * np.abs(expected).max()


def test_cholesky_float32_and_static_shapes():
    x = pt.tensor("x", shape=(6, 6), dtype="float32")
    check_like_pytensor([x], [pt.linalg.cholesky(x)], [spd(6).astype("float32")], compare=normwise)


def test_cholesky_gradient():
    """PyTensor's gradient graph of Cholesky (solve_triangular and triangular masks)."""
    x = pt.dmatrix("x")
    chol = pt.linalg.cholesky(x)
    cost = (chol * np.arange(1.0, 26.0).reshape(5, 5)).sum()
    check_like_pytensor([x], [cost, pytensor.grad(cost, x)], [spd(5)], compare=normwise)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", [0, 1])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_forms(lower, trans, unit):
    a, b, v = pt.dmatrix("a"), pt.dmatrix("b"), pt.dvector("v")
    outs = [pt.linalg.solve_triangular(a, b, lower=lower, trans=trans, unit_diagonal=unit),
            pt.linalg.solve_triangular(a, v, lower=lower, trans=trans, unit_diagonal=unit)]
    rng = _rng(1)

    def case(n, k=3):
        tri = np.linalg.cholesky(spd(n, seed=n))
        noise = rng.normal(size=(n, n))
        a = tri + np.triu(noise, 1) if lower else tri.T + np.tril(noise, -1)  # the other triangle is never read
        return [a, rng.normal(size=(n, k)), rng.normal(size=n)]

    singular = case(4)
    singular[0][2, 2] = 0.0  # NaN unless the diagonal is taken as ones
    check_like_pytensor([a, b, v], outs, case(0), more_values=[case(n) for n in SIZES[1:]] + [singular, case(7, 0)],
                        compare=normwise)


def test_solve_triangular_ill_conditioned():
    """A triangular factor of a matrix of condition ~1e8: the residual is small (backward
    stability), as LAPACK's is; the solution itself is as close as the condition allows."""
    low = np.linalg.cholesky(spd(50, cond=1e8))
    rhs = _rng(2).normal(size=(50, 2))
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    cm = ptonnx.compile_function([a, b], [pt.linalg.solve_triangular(a, b, lower=True)])
    (x,) = cm(low, rhs)
    expected = scipy.linalg.solve_triangular(low, rhs, lower=True)
    residual = np.abs(low @ x - rhs).max() / (np.abs(low).max() * np.abs(x).max())
    assert residual <= C * 50 * EPS, residual
    assert np.abs(x - expected).max() <= 1e8 * C * 50 * EPS * np.abs(expected).max()


def test_batched_solve_triangular_broadcasts_like_blockwise():
    a, b = pt.tensor3("a", dtype="float64"), pt.tensor3("b", dtype="float64")
    out = pt.linalg.solve_triangular(a, b, lower=True)
    low = np.linalg.cholesky(spd(6, (4,)))
    check_like_pytensor([a, b], [out], [low, _rng(3).normal(size=(4, 6, 2))], compare=normwise)
    a1 = pt.tensor("a1", shape=(1, None, None), dtype="float64")
    check_like_pytensor([a1, b], [pt.linalg.solve_triangular(a1, b, lower=True)], [low[:1], _rng(3).normal(size=(4, 6, 2))],
                        compare=normwise)


def test_non_square_and_mismatched_rows_raise_like_pytensor():
    x = pt.dmatrix("x")
    cm = ptonnx.compile_function([x], [pt.linalg.cholesky(x)])
    with pytest.raises(CheckFailedError) as info:
        cm(np.ones((2, 3)))
    assert isinstance(info.value, ValueError)
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    cm = ptonnx.compile_function([a, b], [pt.linalg.solve_triangular(a, b, lower=True)])
    with pytest.raises(ValueError):
        cm(np.eye(3), np.ones((4, 1)))


def test_every_linalg_op_is_reached_from_pytensor():
    x, b = pt.dmatrix("x"), pt.dvector("b")
    programs = {"Cholesky": pt.linalg.cholesky(x), "SolveTriangular": pt.linalg.solve_triangular(x, b, lower=True),
                "Solve": pt.linalg.solve(x, b), "Det": pt.linalg.det(x), "MatrixInverse": pt.linalg.inv(x),
                "LUFactor": pt.linalg.lu_factor(x)[0], "PivotToPermutations": pt.linalg.lu_solve(pt.linalg.lu_factor(x), b),
                "SLogDet": _slogdet_op(x)[1], "Expm": pt.linalg.expm(x), "LU": pt.linalg.lu(x)[1]}
    for op, out in programs.items():
        assert op in ptonnx.lift(ptonnx.api.function_graph([x, b], [out])).op_counts(), op
    assert set(REACHED_BY) == set(programs) == {n for n, s in ptonnx.ir.all_schemas().items() if s.family == "linalg"}
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)


def _slogdet_op(x):
    """PyTensor's SLogDet op itself (pt.linalg.slogdet builds sign and log|det| from Det)."""
    try:
        from pytensor.tensor.linalg import SLogDet
    except ImportError:
        from pytensor.tensor.nlinalg import SLogDet
    return SLogDet()(x)


def test_solve_det_inverse():
    """LU with partial pivoting: sizes through one model, a singular matrix (Solve NaN, Det 0, inv
    raises LinAlgError as PyTensor), batches."""
    x, b, v = pt.dmatrix("x"), pt.dmatrix("b"), pt.dvector("v")
    rng = _rng(4)
    lists = [[_general(n, n), rng.normal(size=(n, 2)), rng.normal(size=n)] for n in SIZES]
    outs = [pt.linalg.det(x), pt.linalg.solve(x, b), pt.linalg.solve(x, v), pt.linalg.inv(x)]
    check_like_pytensor([x, b, v], outs, lists[0], more_values=lists[1:], compare_for=_compare_for)
    singular = _general(5)
    singular[:, 2] = 0.0
    # b square: where scipy raises LinAlgError PyTensor gives NaN of a's shape, not b's (ptonnx: b's)
    check_like_pytensor([x, b], [pt.linalg.det(x), pt.linalg.solve(x, b)], [singular, rng.normal(size=(5, 5))], compare_for=_compare_for)
    (nan,) = ptonnx.compile_function([x, b], [pt.linalg.solve(x, b)])(singular, rng.normal(size=(5, 2)))
    assert nan.shape == (5, 2) and np.isnan(nan).all()
    error = check_like_pytensor([x], [pt.linalg.inv(x)], [singular])
    assert isinstance(error, np.linalg.LinAlgError)
    xb, bb = pt.dtensor3("xb"), pt.dtensor3("bb")
    batch = np.stack([_general(6, k) for k in range(3)])
    batch[1, :, 3] = 0.0  # one singular matrix: only its solution is NaN, its determinant 0
    check_like_pytensor([xb, bb], [pt.linalg.det(xb), pt.linalg.solve(xb, bb)], [batch, rng.normal(size=(3, 6, 6))],
                        more_values=[[batch[:0], rng.normal(size=(0, 6, 6))]], compare_for=_compare_for)


def test_solve_symmetric_and_positive_definite():
    """assume_a sym and pos read one triangle (the other may hold anything); pos of a matrix that is
    not positive definite is NaN, as PyTensor."""
    x, b = pt.dmatrix("x"), pt.dmatrix("b")
    a = spd(6)
    a_lower, a_upper = np.tril(a) + np.triu(np.full((6, 6), 7.5), 1), np.triu(a) + np.tril(np.full((6, 6), -3.0), -1)
    not_pd = spd(6)
    not_pd[4, 4] = -2.0
    rhs = _rng(5).normal(size=(6, 6))  # square: see test_solve_det_inverse on PyTensor's NaN of a's shape
    for kind in ("sym", "pos"):
        outs = [pt.linalg.solve(x, b, assume_a=kind, lower=True)]
        check_like_pytensor([x, b], outs, [a_lower, rhs], more_values=[[not_pd, rhs], [spd(40), _rng(6).normal(size=(40, 40))]],
                            compare_for=_compare_for)
        check_like_pytensor([x, b], [pt.linalg.solve(x, b, assume_a=kind)], [a_upper, rhs], compare_for=_compare_for)


def test_lu_factor_and_lu_solve():
    x, b = pt.dmatrix("x"), pt.dmatrix("b")
    lu_and_pivots = pt.linalg.lu_factor(x)
    outs = [*lu_and_pivots, pt.linalg.lu_solve(lu_and_pivots, b)]
    check_like_pytensor([x, b], outs, [_general(5), _rng(7).normal(size=(5, 2))],
                        more_values=[[_general(n, n), _rng(n).normal(size=(n, 2))] for n in (1, 50)], compare_for=_compare_for)
    # inf or NaN anywhere: LAPACK's factors depend on how its idamax orders NaN (finite entries
    # where ptonnx's order would give NaN, and the reverse): ptonnx's LU is all NaN, never a
    # different finite number; PyTensor's holds NaN too
    lu = ptonnx.compile_function([x], [lu_and_pivots[0]])
    for bad in (np.nan, np.inf):
        a = _general(40)
        a[7, 3] = bad
        (got,) = lu(a)
        expected = pytensor.function([x], lu_and_pivots[0], mode=REFERENCE_MODE)(a)
        assert np.isnan(got).all() and not np.isfinite(expected).all()


def test_slogdet_op():
    x = pt.dmatrix("x")
    singular = _general(4)
    singular[1] = 0.0
    negative = _general(5)
    negative[[0, 1]] = negative[[1, 0]]
    huge = _general(200) * 1e3  # |det| overflows float64: log|det| does not
    check_like_pytensor([x], list(_slogdet_op(x)), [negative], more_values=[[singular], [huge], [_general(0)]], compare_for=_compare_for)


def test_slogdet_positive_definite_by_cholesky():
    """SLogDet of a batch of symmetric positive definite matrices goes through Cholesky
    (`determinant.py`), anything else through LU: both like PyTensor's (NumPy's LU), at every size,
    condition 1e8, magnitudes 1e300 and 1e-300; a batch with one non-symmetric matrix, a
    symmetric indefinite one, a singular positive semidefinite one, NaN and inf (Cholesky's NaN
    or inf diagonal sends them to LU), an empty batch."""
    x = pt.dtensor3("x")
    outs = list(Blockwise(_slogdet_op(pt.dmatrix("m"))[0].owner.op)(x))
    values = [[spd(n, (2,), seed=n)] for n in SIZES]
    values += [[spd(30, (2,)) * 1e300], [spd(30, (2,)) * 1e-300]]
    mixed = spd(6, (3,))
    mixed[1, 0, 3] += 1e-3  # one matrix not symmetric: the batch goes to LU
    indefinite = spd(6, (1,))
    indefinite[0, 0, 0] = -1.0
    semidefinite = np.zeros((1, 5, 5))
    semidefinite[0, :2, :2] = 1.0
    nan, inf = spd(5, (2,)), spd(5, (2,))
    nan[1, 2, 2], inf[0, 1, 1] = np.nan, np.inf
    values += [[mixed], [indefinite], [semidefinite], [nan], [inf], [np.zeros((0, 4, 4))]]
    check_like_pytensor([x], outs, values[0], more_values=values[1:], compare_for=_compare_for)

    def within_condition(actual, expected, context):  # log|det|'s error: up to n cond eps
        assert np.abs(actual - expected).max() <= 1e8 * C * 50 * EPS * max(1.0, np.abs(expected).max() / 50), context

    check_like_pytensor([x], outs, [spd(50, (2,), cond=1e8)], compare=within_condition)


def test_det_slogdet_solve_gradients():
    """PyTensor's gradient graphs of det, solve and cho_solve (they use solve and inv themselves)."""
    x, v = pt.dmatrix("x"), pt.dvector("v")
    cost = pt.log(pt.abs(pt.linalg.det(x))) + pt.linalg.solve(x, v).sum() + pt.linalg.inv(x)[0, 1]
    check_like_pytensor([x, v], [cost, *pytensor.grad(cost, [x, v])], [_general(5), _rng(8).normal(size=5)], compare_for=_compare_for)


def test_kron_matrix_power_and_direct_discrete_lyapunov():
    """PyTensor builds these from ops ptonnx lifts: KroneckerProduct (an OpFromGraph), Dot, and
    solve_discrete_lyapunov(method="direct") as a Solve of the n**2 x n**2 Kronecker system (n up
    to 50); with the gradient through the solve."""
    a, q = pt.dmatrix("a"), pt.dmatrix("q")
    lyapunov = pt.linalg.solve_discrete_lyapunov(a, q, method="direct")
    outs = [pt.linalg.kron(a, q), lyapunov, pt.linalg.matrix_power(a, 3), pytensor.grad(lyapunov.sum(), a)]
    stable = _rng(9).normal(size=(3, 3)) * 0.3
    check_like_pytensor([a, q], outs, [stable, spd(3)], more_values=[[_rng(10).normal(size=(5, 5)) * 0.2, spd(5)]],
                        compare_for=lambda values: lambda x, e, c: normwise(x, e, c, n=values[0].shape[0] ** 2))
    # n = 50: a 2,500 x 2,500 system (n = 200 would be 40,000 x 40,000, 12.8 GB: in PyTensor too)
    check_like_pytensor([a, q], [lyapunov], [_rng(11).normal(size=(50, 50)) * 0.05, spd(50)],
                        compare=lambda x, e, c: normwise(x, e, c, n=2500))


@pytest.mark.parametrize("n", [1, 3, 8, 9])
def test_static_small_sizes_are_unrolled(n):
    """Sizes the graph fixes at UNROLL or below: every Loop unrolled (a state-space model's 3 x 3
    solves in a scan then cost no per-trip overhead), the numbers unchanged; n = 9 keeps Loops."""
    from ptonnx.decompositions.linalg.common import UNROLL

    x = pt.tensor("x", shape=(n, n), dtype="float64")
    b = pt.tensor("b", shape=(n, 2), dtype="float64")
    outs = [pt.linalg.cholesky(x), pt.linalg.solve_triangular(x, b, lower=True), pt.linalg.solve(x, b),
            pt.linalg.solve(x, b, assume_a="pos"), pt.linalg.det(x), pt.linalg.inv(x)]
    check_like_pytensor([x, b], outs, [spd(n), _rng(n).normal(size=(n, 2))],
                        compare=lambda a, e, c: normwise(a, e, c, n=max(n, 4)))
    loops = [node for node in ptonnx.compile_function([x, b], outs).model.graph.node if node.op_type == "Loop"]
    assert (len(loops) == 0) == (n <= UNROLL)


def test_expm_and_its_gradient():
    """Padé 13 with scaling and squaring; PyTensor's gradient is the Expm of a 2n x 2n block matrix."""
    x = pt.dmatrix("x")
    out = pt.linalg.expm(x)
    cost = (out * np.arange(1.0, 17.0).reshape(4, 4)).sum()
    rel = 5e-12

    def compare(actual, expected, context):
        assert actual.shape == expected.shape and np.array_equal(np.isnan(actual), np.isnan(expected)), context
        ok = np.isfinite(expected)
        scale = np.max(np.abs(expected[ok]), initial=1e-300)
        assert np.max(np.abs(actual[ok] - expected[ok]), initial=0.0) <= rel * scale, context

    rng = _rng(11)
    grad = pytensor.grad(cost, x)
    from pytensor.graph.traversal import applys_between

    if any(type(getattr(n.op, "core_op", n.op)).__name__ == "Eig" for n in applys_between([x], [grad])):
        # PyTensor 2.38 differentiates expm through the eigendecomposition (complex): refused by name
        with pytest.raises(UnsupportedOpError, match="Eig"):
            ptonnx.compile_function([x], [grad])
        outs = [out, cost]
    else:
        outs = [out, cost, grad]
    check_like_pytensor([x], outs, [rng.normal(size=(4, 4))],
                        more_values=[[rng.normal(size=(4, 4)) * 10], [np.zeros((4, 4))]], compare=compare)


def test_solve_and_slogdet_ill_conditioned():
    """A general matrix of condition ~1e8: the residual of the solve is small (backward stability,
    as LAPACK's getrs), the solution and log|det| as close to LAPACK's as the condition allows
    (log|det|'s absolute error is det's relative error: up to about n cond eps)."""
    rng = _rng(12)
    u, _ = np.linalg.qr(rng.normal(size=(50, 50)))
    v, _ = np.linalg.qr(rng.normal(size=(50, 50)))
    a = (u * np.logspace(0, -8, 50)) @ v.T
    rhs = rng.normal(size=(50, 2))
    x, b = pt.dmatrix("x"), pt.dmatrix("b")
    solution, logdet = ptonnx.compile_function([x, b], [pt.linalg.solve(x, b), _slogdet_op(x)[1]])(a, rhs)
    residual = np.abs(a @ solution - rhs).max() / (np.abs(a).max() * np.abs(solution).max())
    assert residual <= C * 50 * EPS, residual
    expected = scipy.linalg.solve(a, rhs)
    assert np.abs(solution - expected).max() <= 1e8 * C * 50 * EPS * np.abs(expected).max()
    assert abs(logdet - np.linalg.slogdet(a)[1]) <= 1e8 * C * 50 * EPS


@pytest.mark.parametrize("scale", [1e150, 1e-150, 1e-300])
def test_huge_and_tiny_magnitudes(scale):
    """Matrices scaled to the ends of float64's range (1e-300: subnormal products in the updates)
    factor and solve as LAPACK does, within c n eps of the result's size."""
    x, b = pt.dmatrix("x"), pt.dmatrix("b")
    a, rhs = spd(40) * scale, _rng(13).normal(size=(40, 2)) * scale
    outs = [pt.linalg.cholesky(x), pt.linalg.solve(x, b), pt.linalg.solve_triangular(x, b, lower=True)]
    check_like_pytensor([x, b], outs, [a, rhs], more_values=[[spd(5) * scale, rhs[:5]]], compare_for=_compare_for)


def _lu_compare(values):
    """normwise; p_indices by value: PyTensor types them int32, and its Python implementation hands
    on scipy's int64 (ptonnx gives the type's int32)."""
    n = max(values[0].shape[-2:] + (1,))

    def compare(actual, expected, context):
        if expected.dtype.kind in "iu":
            assert actual.dtype == np.int32 and np.array_equal(actual, expected), context
            return
        normwise(actual, expected, context, n=n)

    return compare


@pytest.mark.parametrize("form", [{}, {"p_indices": True}, {"permute_l": True}])
def test_lu_forms_sizes_and_singular_matrices(form):
    """scipy.linalg.lu (PyTensor's LU): sizes 0 to 200 and non-square matrices through one model;
    singular matrices factor with a zero pivot (finite, as getrf: no NaN); inf or NaN raises
    ValueError, as scipy's check_finite."""
    x = pt.dmatrix("x")
    outs = list(pt.linalg.lu(x, **form))
    rng = _rng(20)
    zero_column = _general(5)
    zero_column[:, 2] = 0.0
    lists = [[_general(n, n)] for n in SIZES[1:]] + [[rng.normal(size=s)] for s in ((3, 6), (6, 3), (1, 3), (0, 2))]
    lists += [[np.zeros((3, 3))], [zero_column], [np.ones((4, 6))], [np.array([[0.0, 1.0], [0.0, 2.0]])]]
    check_like_pytensor([x], outs, [_general(0)], more_values=lists, compare_for=_lu_compare)
    for bad in (np.array([[1.0, np.nan], [0.0, 1.0]]), np.array([[1.0, 2.0], [np.inf, 1.0]])):
        error = check_like_pytensor([x], outs, [bad])
        assert isinstance(error, ValueError)


def test_lu_rank_deficient_and_ill_conditioned():
    """Pivots that are rounding errors (rank 3 of 8) or tiny (condition ~1e12): the factors are
    held to what getrf promises, |L| <= 1 and P L U = a to c n eps, not to LAPACK's rounding."""
    from tests.decompositions.test_linalg import assert_lu_factors

    x = pt.dmatrix("x")
    cm = ptonnx.compile_function([x], list(pt.linalg.lu(x, p_indices=True)))
    rng = _rng(21)
    u, _ = np.linalg.qr(rng.normal(size=(40, 40)))
    ill = (u * np.logspace(0, -12, 40)) @ u.T
    for a in (rng.normal(size=(8, 3)) @ rng.normal(size=(3, 8)), ill):
        p, low, up = cm(a)
        assert_lu_factors(a, low, up, p, permute_l=False)


def test_lu_batches_float32_and_gradients():
    """Batches (an empty batch: PyTensor cannot evaluate it, ptonnx gives empty factors), a static
    non-square shape, float32, and PyTensor's gradient graphs of each form (solve_triangular, and a second LU for permute_l)."""
    xb = pt.dtensor3("xb")
    check_like_pytensor([xb], list(pt.linalg.lu(xb)), [np.stack([_general(4, k) for k in range(3)])],
                        more_values=[[_rng(22).normal(size=(2, 3, 5))]], compare_for=_lu_compare)
    p, low, up = ptonnx.compile_function([xb], list(pt.linalg.lu(xb)))(np.zeros((0, 4, 4)))
    assert p.shape == low.shape == up.shape == (0, 4, 4)
    wide = pt.tensor("wide", shape=(2, 3), dtype="float64")  # static: PyTensor types L as (2, 3), scipy's is (2, 2)
    check_like_pytensor([wide], list(pt.linalg.lu(wide)), [_rng(23).normal(size=(2, 3))], compare_for=_lu_compare)
    x32 = pt.fmatrix("x32")
    check_like_pytensor([x32], list(pt.linalg.lu(x32, p_indices=True)), [_general(6).astype("float32")],
                        more_values=[[_general(30, 3).astype("float32")]], compare_for=_lu_compare)
    x = pt.dmatrix("x")
    weights = np.arange(1.0, 26.0).reshape(5, 5)
    outs = []
    for form in ({}, {"p_indices": True}, {"permute_l": True}):
        *_, low, up = pt.linalg.lu(x, **form)
        cost = (low * weights).sum() + (up * weights.T).sum()
        outs += [cost, pytensor.grad(cost, x)]
    check_like_pytensor([x], outs, [_general(5, 5)], compare_for=_lu_compare)
