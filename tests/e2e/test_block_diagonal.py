"""pt.linalg.block_diag (a Blockwise of BlockDiagonal): mixed dtypes, empty blocks, NaN and
-0.0 kept, a batch of matrices (batched by the Blockwise Loop), against PyTensor."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from tests.conftest import check_like_pytensor


def test_block_diag_of_mixed_blocks():
    a, b, c = pt.dmatrix("a"), pt.fmatrix("b"), pt.dmatrix("c")
    values = [np.arange(6.0).reshape(2, 3), np.array([[np.nan, -0.0]], np.float32), np.zeros((0, 2))]
    check_like_pytensor([a, b, c], [pt.linalg.block_diag(a, b, c)], values)
    check_like_pytensor([a], [pt.linalg.block_diag(a)], values[:1])


def test_a_batch_of_block_diagonals():
    A, B = pt.tensor3("A"), pt.tensor3("B")
    check_like_pytensor([A, B], [pt.linalg.block_diag(A, B)], [np.arange(12.0).reshape(2, 2, 3), np.full((2, 1, 1), -0.0)])
