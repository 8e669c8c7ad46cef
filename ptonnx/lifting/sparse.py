"""Products with constant sparse matrices (pytensor.sparse's Dot, StructuredDot, Transpose),
kept sparse in the model: only the nonzeros' data, rows and columns are initializers.

S @ X with S in CSR form (rows r, columns c, data d, in row order) is
    out = ScatterFlat-add of d[:, None] * X[c] into the rows r of an (m, k) zero array,
which sums each row's terms in CSR order from +0.0, as SciPy's sparse product does, and
never multiplies by an absent entry (an inf in X where S has no entry stays out of the
result, as in SciPy, where a dense product would give NaN). X @ S is (S.T @ X.T).T.
A product of two constant sparse matrices that PyTensor types dense (its Dot) is a constant,
computed by SciPy as PyTensor's `perform` computes it.
Only constant sparse matrices are taken: a sparse input is refused by name.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from pytensor.sparse.basic import Transpose
from pytensor.sparse.math import Dot, StructuredDot
from pytensor.sparse.variable import SparseConstant

from ptonnx.errors import UnsupportedOpError
from ptonnx.ir import Value
from ptonnx.lifting.context import ir_type
from ptonnx.lifting.dispatch import lifts


def _is_sparse(var) -> bool:
    return hasattr(var.type, "format")


def _named(var) -> str:
    """The user's name of a sparse variable (its str() omits it) and its type."""
    return f"{var.name} ({var})" if var.name else str(var)


def _matrix(ctx, var):
    """The SciPy matrix of a constant sparse operand (through sparse transposes)."""
    if isinstance(var, SparseConstant):
        return var.data
    known = ctx.sparse.get(var)
    if known is not None:
        return known
    raise UnsupportedOpError(var.owner.op if var.owner else "a sparse input", _named(var), (), reason=(
        f"{_named(var)} is a sparse matrix that is not a constant: ptonnx compiles products with constant sparse "
        "matrices only. Make it a constant (pytensor.sparse.as_sparse_variable(scipy_matrix)) or densify it "
        "before the graph you compile."))


@lifts(Transpose)
def lift_sparse_transpose(ctx, node):
    """Recorded for the product that reads it; the output itself is a stand-in no op reads."""
    ctx.sparse[node.outputs[0]] = _matrix(ctx, node.inputs[0]).T
    t = ir_type(node.outputs[0])
    return [Value.constant(np.zeros((0,) * t.ndim, t.dtype))]


def _sparse_times_dense(ctx, matrix, dense: Value, dtype: str) -> Value:
    csr = sp.csr_matrix(matrix)
    csr.sort_indices()
    m = csr.shape[0]
    rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(csr.indptr))
    cols = Value.constant(csr.indices.astype(np.int64))
    data = Value.constant(csr.data.astype(dtype))
    dense = ctx.cast(dense, dtype)
    picked = ctx.op("Gather", dense, cols, axis=0)  # (nnz, k) or (nnz,)
    if dense.type.ndim == 1:
        terms = ctx.op("Mul", picked, data)
        zeros = Value.constant(np.zeros(m, dtype))
        return ctx.op("ScatterFlat", zeros, Value.constant(rows), terms, reduction="add")
    k = ctx.dim(dense, 1)
    terms = ctx.op("Mul", picked, ctx.op("Unsqueeze", data, axes=(1,)))
    first = ctx.op("Mul", ctx.op("Unsqueeze", Value.constant(rows), axes=(1,)), k)
    positions = ctx.op("Add", first, ctx.op("Unsqueeze", ctx.op("Range", ctx.ints(0), k, ctx.ints(1)), axes=(0,)))
    zeros = ctx.op("Expand", Value.constant(np.zeros((), dtype)), ctx.pack([ctx.ints(m), k]))
    return ctx.op("ScatterFlat", zeros, positions, terms, reduction="add")


@lifts(Dot, StructuredDot)
def lift_sparse_dot(ctx, node):
    a, b = node.inputs
    out = node.outputs[0]
    dtype = out.type.dtype
    if _is_sparse(out):
        raise UnsupportedOpError(node.op, out, (), reason="a product of two sparse matrices is sparse; ptonnx takes sparse @ dense only")
    if _is_sparse(a) and _is_sparse(b):  # PyTensor's perform: the sparse product, densified
        dense = (_matrix(ctx, a) @ _matrix(ctx, b)).toarray()
        return [Value.constant(np.asarray(dense, dtype=dtype), out.name)]
    if _is_sparse(a):
        result = _sparse_times_dense(ctx, _matrix(ctx, a), ctx.value(b), dtype)
    else:
        x = ctx.value(a)  # (p, m) @ S (m, n) = (S.T @ x.T).T
        xt = ctx.op("Transpose", x, perm=(1, 0)) if x.type.ndim == 2 else x
        result = _sparse_times_dense(ctx, _matrix(ctx, b).T, xt, dtype)
        if x.type.ndim == 2:
            result = ctx.op("Transpose", result, perm=(1, 0))
    result.name = result.name or out.name
    return [result]
