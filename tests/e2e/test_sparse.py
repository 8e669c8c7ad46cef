"""Products with constant sparse matrices (pytensor.sparse Dot, StructuredDot, Transpose),
CSR and CSC, sparse @ dense and dense @ sparse, vectors, empty rows, inf and NaN where the
matrix has no entry (SciPy never multiplies those), mixed dtypes; the model keeps the
matrix sparse; a sparse matrix that is not a constant is refused by name."""

from __future__ import annotations

import numpy as np
import pytensor.sparse as ps
import pytensor.tensor as pt
import pytest
import scipy.sparse as sp

import ptonnx
from ptonnx.errors import UnsupportedOpError
from tests.conftest import check_like_pytensor

S = sp.random(6, 4, density=0.4, format="csr", random_state=0)
S[2, :] = 0  # an empty row
S.eliminate_zeros()
X = np.arange(12.0).reshape(4, 3) - 4.0
X[1, 0], X[3, 2] = np.inf, np.nan


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_times_dense(fmt):
    s = ps.as_sparse_variable(S.asformat(fmt))
    x, v = pt.dmatrix("x"), pt.dvector("v")
    check_like_pytensor([x, v], [ps.dot(s, x), ps.structured_dot(s, x), ps.dot(s, v)], [X, np.array([1.0, -0.0, np.inf, 2.0])])


def test_dense_times_sparse_and_transposes():
    s = ps.as_sparse_variable(S)
    y = pt.dmatrix("y")
    values = np.resize(X.ravel(), (2, 6))
    check_like_pytensor([y], [ps.dot(y, s), ps.dot(s.T, y.T)], [values])


def test_mixed_dtypes_and_no_rows():
    s = ps.as_sparse_variable(S.astype(np.float32))
    x = pt.dmatrix("x")
    check_like_pytensor([x], [ps.dot(s, x)], [X])
    check_like_pytensor([x], [ps.dot(s, x)], [np.zeros((4, 0))])


def test_the_model_stays_sparse():
    big = sp.random(2000, 1000, density=0.001, format="csr", random_state=1)
    x = pt.dmatrix("x")
    cm = ptonnx.compile_function([x], [ps.dot(ps.as_sparse_variable(big), x)])
    stored = sum(int(np.prod(t.dims)) for t in cm.model.graph.initializer)
    assert stored < 4 * big.nnz  # data, rows and columns: nothing the size of the dense 2000 x 1000


def test_a_sparse_input_is_refused_by_name():
    s = ps.csr_matrix("s", dtype="float64")
    x = pt.dmatrix("x")
    with pytest.raises(UnsupportedOpError, match=r"s \(SparseVariable\{csr,float64\}\) is a sparse matrix that is not a constant"):
        ptonnx.compile_function([s, x], [ps.dot(s, x)])
