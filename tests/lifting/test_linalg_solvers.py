"""lifting/linalg_solvers.py: Cholesky, SolveTriangular, Solve, CholeskySolve, LU, LUFactor,
PivotToPermutations, Det, SLogDet, MatrixInverse and Expm, alone or under Blockwise, lift to one
batched IR node each (no Loop over the batch), with PyTensor's run-time errors as checks only where
the types leave them open; `interpret` (LAPACK through SciPy) against PyTensor. Eig, QZ and Schur's
complex form are refused by name (the real Schur form: test_linalg_schur.py)."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

from ptonnx.errors import UnsupportedOpError

from tests.lifting.helpers import check_lift, lifted, ops


def _spd(n, batch=()):
    g = np.random.default_rng(n).normal(size=batch + (n, n))
    return g @ np.swapaxes(g, -1, -2) + np.eye(n)


def test_blockwise_cholesky_is_one_batched_node():
    x = pt.dtensor3("x")
    g = check_lift([x], [pt.linalg.cholesky(x), pt.linalg.cholesky(x, lower=False)], [_spd(4, (2,))], [_spd(0, (3,))])
    assert ops(g).count("Cholesky") == 2 and "Loop" not in ops(g)
    assert "Check" in ops(g)  # square? (unknown sizes)


def test_static_square_matrices_need_no_check():
    x = pt.tensor("x", shape=(3, 3), dtype="float64")
    g = check_lift([x], [pt.linalg.cholesky(x)], [_spd(3)])
    assert ops(g) == ["Cholesky"]


def test_solve_triangular_checks_rows_and_broadcasts_batches():
    a, b, v = pt.dtensor3("a"), pt.dtensor3("b"), pt.dvector("v")
    low = np.linalg.cholesky(_spd(3, (2,)))
    rhs = np.arange(12.0).reshape(2, 3, 2)
    g = check_lift([a, b, v], [pt.linalg.solve_triangular(a, b, lower=True), pt.linalg.solve_triangular(a, v, lower=True)],
                   [low, rhs, np.array([1.0, -0.0, 2.0])])
    assert ops(g).count("SolveTriangular") == 2
    assert "Expand" in ops(g)  # two batched operands of unknown batch sizes: broadcast as Blockwise checks them


def test_a_batch_dim_pytensor_types_as_1_broadcasts_where_the_ir_does_not_know_it():
    """`alloc(m, max([0, 1]), 3, 3)`: PyTensor types it (1, 3, 3), the IR (?, 3, 3); PyTensor's type decides."""
    m, b = pt.dmatrix("m"), pt.dmatrix("b")
    a = pt.alloc(m, pt.max(pt.as_tensor(np.array([0, 1]))), 3, 3)
    assert a.type.shape == (1, 3, 3)
    check_lift([m, b], [pt.linalg.solve(a, b, b_ndim=1)], [_spd(3), np.arange(6.0).reshape(2, 3)])


@pytest.mark.parametrize("build", [lambda x: pt.linalg.eig(x)[0], lambda x: pt.linalg.schur(x, output="complex")[0],
                                   lambda x: pt.linalg.qz(x, x)[0]])
def test_complex_results_are_refused_by_name(build):
    """Eig, QZ and the complex Schur form: complex results in general."""
    x = pt.dmatrix("x")
    with pytest.raises(UnsupportedOpError, match="complex numbers are out of ptonnx's scope"):
        lifted([x], [build(x)])


def test_solves_and_functions_of_matrices_lift_to_their_ir_ops():
    """Solve, CholeskySolve, LUFactor with PivotToPermutations (lu_solve), Det, SLogDet,
    MatrixInverse and Expm: each lifts to its IR op (CholeskySolve to two SolveTriangular)."""
    try:
        from pytensor.tensor.linalg import SLogDet
    except ImportError:
        from pytensor.tensor.nlinalg import SLogDet
    x, b = pt.dmatrix("x"), pt.dmatrix("b")
    a = _spd(3)
    outs = [pt.linalg.solve(x, b), pt.linalg.cho_solve((x, True), b), pt.linalg.lu_solve(pt.linalg.lu_factor(x), b),
            pt.linalg.det(x), SLogDet()(x)[1], pt.linalg.inv(x), pt.linalg.expm(x * 0.1)]
    g = check_lift([x, b], outs, [a, np.arange(6.0).reshape(3, 2)])
    for op in ("Solve", "SolveTriangular", "LUFactor", "PivotToPermutations", "Det", "SLogDet", "MatrixInverse", "Expm"):
        assert op in ops(g), op


def test_lu_forms_lift_to_one_lu_node():
    """LU (scipy.linalg.lu) in its three forms: one IR LU node each (P L with permute_l), the row
    indices cast to PyTensor's int32, the permutation matrix built from them by comparison."""
    x, xb = pt.dmatrix("x"), pt.dtensor3("xb")
    rng = np.random.default_rng(3)
    outs = [*pt.linalg.lu(x), *pt.linalg.lu(x, p_indices=True), *pt.linalg.lu(x, permute_l=True), *pt.linalg.lu(xb)]

    def compare(actual, expected, context=""):  # PyTensor's Python LU hands on scipy's int64 indices
        np.testing.assert_allclose(actual, expected.astype(actual.dtype), rtol=1e-12, atol=1e-14, err_msg=context)

    g = check_lift([x, xb], outs, [rng.normal(size=(4, 4)), rng.normal(size=(2, 3, 3))],
                   [rng.normal(size=(2, 5)), rng.normal(size=(2, 4, 2))], compare_with=compare)
    assert ops(g).count("LU") == 4 and "Loop" not in ops(g)
