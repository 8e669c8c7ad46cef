"""lifting/sparse.py: products with constant sparse matrices (pytensor.sparse Dot, StructuredDot,
Transpose) as a Gather of the dense rows and a ScatterFlat-add of the nonzeros' terms; a dense product
of two constant sparse matrices is a constant; a sparse matrix that is not a constant, and a sparse
product of two sparse matrices, are refused by name."""

from __future__ import annotations

import numpy as np
import pytensor.sparse as ps
import pytensor.tensor as pt
import pytest
import scipy.sparse as sp

from ptonnx.errors import UnsupportedOpError
from tests.conftest import check_like_pytensor
from tests.lifting.helpers import check_lift, lifted, ops

S = sp.random(6, 4, density=0.4, format="csr", random_state=0)
S = S.tolil()
S[2, :] = 0  # an empty row
S = S.tocsr()
S.eliminate_zeros()
X = np.arange(12.0).reshape(4, 3) - 4.0
X[1, 0], X[3, 2] = np.inf, np.nan

@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_times_dense(fmt):
    """An inf or NaN where the matrix has no entry stays out of the result, as in SciPy."""
    s = ps.as_sparse_variable(S.asformat(fmt))
    x, v = pt.dmatrix("x"), pt.dvector("v")
    outs = [ps.dot(s, x), ps.structured_dot(s, x), ps.dot(s, v)]
    assert [type(o.owner.op).__name__ for o in outs] == ["Dot", "StructuredDot", "Dot"]
    g = check_lift([x, v], outs, [X, np.array([1.0, -0.0, np.inf, 2.0])], [np.zeros((4, 0)), np.zeros(4)])
    assert ops(g).count("ScatterFlat") == 3 and "MatMul" not in ops(g)


def test_dense_times_sparse_and_a_transpose():
    s = ps.as_sparse_variable(S)
    y = pt.dmatrix("y")
    transposed = s.T
    assert type(transposed.owner.op).__name__ == "Transpose"
    g = check_lift([y], [ps.dot(y, s), ps.dot(transposed, y.T)], [np.resize(X.ravel(), (2, 6))])
    assert ops(g).count("ScatterFlat") == 2


def test_mixed_dtypes():
    s = ps.as_sparse_variable(S.astype(np.float32))
    x = pt.fmatrix("x")
    check_lift([x], [ps.dot(s, x), ps.dot(s, pt.cast(x, "float64"))], [X.astype(np.float32)])


def test_a_sparse_input_is_refused_by_name():
    s, x = ps.csr_matrix("s", dtype="float64"), pt.dmatrix("x")
    with pytest.raises(UnsupportedOpError, match=r"(?s)refuses a sparse input \(producing s \(SparseVariable\{csr,float64\}\)\): "
                                                 r"s \(SparseVariable\{csr,float64\}\) is a sparse matrix that is not a constant.*"
                                                 r"Make it a constant"):
        lifted([s, x], [ps.dot(s, x)])


def test_a_dense_product_of_two_constant_sparse_matrices_is_a_constant():
    """PyTensor's Dot of two sparse matrices is dense (its perform: SciPy's product, densified): the
    same numbers, an inf of one matrix included; float32 with float64 is float64."""
    big = S.tolil()
    big[0, 1], big[3, 0] = np.inf, -1e308
    big = big.tocsr()
    s, b, x = ps.as_sparse_variable(S), ps.as_sparse_variable(big), pt.dmatrix("x")
    s32 = ps.as_sparse_variable(S.astype(np.float32).tocsc())
    outs = [ps.dot(s, s.T), ps.dot(b, b.T), ps.dot(s32, s.T), ps.dot(s.T, b)]
    assert all(type(o.owner.op).__name__ == "Dot" and not hasattr(o.type, "format") for o in outs)
    outs[1] = outs[1] + x
    values = [np.resize(X.ravel(), (6, 6))]
    g = check_lift([x], outs, values)
    assert [o.dtype for o in g.outputs] == ["float64"] * 4 and g.outputs[0].const is not None
    check_like_pytensor([x], outs, values)


def test_a_sparse_product_of_two_sparse_matrices_is_refused():
    from pytensor.sparse.math import StructuredDot

    s = ps.as_sparse_variable(S)
    product = StructuredDot()(s, ps.as_sparse_variable(S.T.tocsc()))
    assert hasattr(product.type, "format")
    with pytest.raises(UnsupportedOpError, match=r"refuses StructuredDot.*a product of two sparse matrices is sparse"):
        lifted([], [ps.dense_from_sparse(product)])
