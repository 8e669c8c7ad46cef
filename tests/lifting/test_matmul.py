"""lifting/matmul.py: Dot, the Matmul Blockwise, the BLAS forms of compiled graphs (Dot22,
Dot22Scalar, BatchedDot, Gemv, Gemm, Ger) as MatMul with Mul/Add for their scalars, BlockDiagonal."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pytensor.tensor.blas import BatchedDot, _dot22, _dot22scalar, gemm_no_inplace, gemv_no_inplace, ger

from ptonnx.lifting.matmul import BlockDiagonal
from tests.lifting.helpers import check_lift, ops

A = np.array([[1.0, -0.0, 2.5], [np.inf, 1.0, 0.0], [3.0, 5e-324, -1.0]])
B = np.array([[0.5, 2.0], [-1.0, 0.0], [4.0, -0.0]])
V3 = np.array([1.0, -2.0, 0.25])


def test_dot_of_matrices_and_vectors():
    x, y, v = pt.dmatrix("x"), pt.dmatrix("y"), pt.dvector("v")
    outs = [pt.dot(x, y), pt.dot(v, v), pt.dot(x, v), pt.dot(v, y)]
    assert {type(o.owner.op).__name__ for o in outs[:1]} == {"Dot"}
    g = check_lift([x, y, v], outs, [A, B, V3], [np.zeros((0, 3)), np.zeros((3, 0)), np.zeros(3)],
                   [np.zeros((2, 0)), np.zeros((0, 2)), np.zeros(0)], [A, B[:2], V3])  # inner sizes differ: ValueError
    assert ops(g).count("MatMul") >= 2


def test_dot_in_another_output_dtype():
    i, f = pt.imatrix("i"), pt.fmatrix("f")
    y = pt.dot(i, f)
    check_lift([i, f], [y], [np.array([[1, -2], [3, 2**20]], np.int32), np.array([[0.5, -0.0], [1e-30, 2.0]], np.float32)])


def test_matmul_is_a_batched_matmul():
    x, y = pt.dtensor3("x"), pt.dmatrix("y")
    out = x @ y
    assert type(out.owner.op).__name__ == "Blockwise"
    cube = np.stack([A, A[::-1]])
    g = check_lift([x, y], [out], [cube, B], [np.zeros((0, 3, 3)), B])
    assert ops(g) == ["Unsqueeze", "MatMul"]  # y broadcast by a DimShuffle


def test_blas_forms_of_a_compiled_graph():
    x, y, z, a, b = pt.dmatrix("x"), pt.dmatrix("y"), pt.dmatrix("z"), pt.dscalar("a"), pt.dscalar("b")
    v, w = pt.dvector("v"), pt.dvector("w")
    outs = [_dot22(x, y), _dot22scalar(x, y, a), gemm_no_inplace(z, a, x, y, b), gemv_no_inplace(w, a, x, v, b),
            ger(z, a, v, w[:2])]
    assert [type(o.owner.op).__name__ for o in outs] == ["Dot22", "Dot22Scalar", "Gemm", "Gemv", "Ger"]
    z0, w0 = np.full((3, 2), -0.0), np.array([1.0, np.nan, -3.0])
    g = check_lift([x, y, z, a, b, v, w], outs, [A, B, z0, np.float64(2.0), np.float64(0.5), V3, w0],
                   [A, B, z0, np.float64(1.0), np.float64(1.0), V3, w0])
    assert ops(g).count("MatMul") == 5


def test_beta_zero_ignores_the_accumulator():
    """BLAS: beta == 0 means the accumulator is not read (its NaN does not reach the result)."""
    x, y, z = pt.dmatrix("x"), pt.dmatrix("y"), pt.dmatrix("z")
    out = gemm_no_inplace(z, np.float64(1.0), x, y, np.float64(0.0))
    g = check_lift([x, y, z], [out], [A, B, np.full((3, 2), np.nan)])
    assert ops(g) == ["MatMul"]


def test_batched_dot():
    x, y = pt.dtensor3("x"), pt.dtensor3("y")
    out = BatchedDot()(x, y)
    assert type(out.owner.op).__name__ == "BatchedDot"
    g = check_lift([x, y], [out], [np.stack([A, -A]), np.stack([B, B * 2])], [np.zeros((0, 3, 3)), np.zeros((0, 3, 2))])
    assert ops(g) == ["MatMul"]


def test_block_diagonal():
    a, b, c = pt.dmatrix("a"), pt.imatrix("b"), pt.dmatrix("c")
    core = BlockDiagonal(3)(a, b, c)
    blockwise = pt.linalg.block_diag(a, c)
    g = check_lift([a, b, c], [core, blockwise], [A, np.array([[1, 2]], np.int32), B], [np.zeros((0, 2)), np.zeros((2, 0), np.int32), B])
    assert "Concat" in ops(g)
