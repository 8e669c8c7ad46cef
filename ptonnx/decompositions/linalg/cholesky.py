"""Cholesky: blocked, right-looking, the flops in MatMul.

A Loop over panels of BLOCK columns carries the trailing matrix S (it shrinks by BLOCK
rows and columns a trip). A trip factors S's leading w x w block D = L11 L11^T (an
unblocked Loop of w trips on w x w values), inverts L11 (`invert_lower`), and then
L21 = S21 inv(L11)^T and S <- S22 - L21 L21^T are two MatMuls. Each trip gives its panel,
padded to n rows and BLOCK columns; the stacked panels are L. Sequential trips: about
2 BLOCK per panel, n / BLOCK panels.

As LAPACK's potrf (OpenBLAS's, which SciPy and so PyTensor call), only the lower triangle is
read, and a pivot <= 0 means the matrix is not positive definite: PyTensor then gives NaN for
the whole matrix (per batch element). A NaN pivot is not a failure there: NaN flows on, and
the upper triangle stays zero.
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    arange,
    batch_shape,
    counted_loop,
    cut,
    dim,
    fill_nan,
    loose,
    mT,
    vec,
    zeros,
)
from ptonnx.decompositions.linalg.triangular import invert_lower, lower_only
from ptonnx.decompositions.registry import decomposes

#: columns per panel
BLOCK = 32


def factor_block(d: Ex, failed: Ex) -> tuple[Ex, Ex]:
    """The lower Cholesky factor of small matrices (*batch, w, w), unblocked: trip j sets column
    j to l = D[:, j] / sqrt(D[j, j]) and subtracts l l^T from the columns right of it. `failed`
    (*batch,) is or-ed with whether a pivot was <= 0 (LAPACK's test: a NaN pivot passes it)."""
    r = d.value.type.ndim
    w = dim(d, r - 1)

    def step(j: Ex, carried, invariants):
        (mat, bad), (idx,) = carried, invariants
        here, below = idx.eq(j), idx > j
        column = mat.op("Gather", j, axis=r - 1)
        square = column.op("Gather", j, axis=r - 2)
        pivot = square.op("Sqrt").op("Unsqueeze", axes=(r - 2,))
        low = where(below, column / pivot, where(here, pivot, 0.0))
        right = where(below, low, 0.0)
        update = mat - low.op("Unsqueeze", axes=(r - 1,)) * right.op("Unsqueeze", axes=(r - 2,))
        # columns left of j are kept by selection, not by multiplying by 0 (a NaN or inf in
        # column j must not reach the finished columns: LAPACK leaves them alone)
        mat = where(below, update, where(here, low.op("Unsqueeze", axes=(r - 1,)), mat))
        return [mat, bad | (square <= 0.0)], []

    (mat, failed), _ = counted_loop(w, [d, failed], [arange(w)], step)
    return lower_only(mat), failed


def cholesky_lower(a: Ex) -> Ex:
    r = a.value.type.ndim
    n, batch = dim(a, r - 1), batch_shape(a)
    trips = (n + (BLOCK - 1)).op("IntDiv", BLOCK)

    def panel(t: Ex, carried, invariants):
        (s, failed), (size,) = carried, invariants
        m = dim(s, r - 1)
        w = m.op("Min", BLOCK)
        l11, failed = factor_block(cut(cut(s, r - 2, 0, w), r - 1, 0, w), failed)
        below = cut(s, r - 2, w, m)
        l21 = cut(below, r - 1, 0, w).op("MatMul", mT(invert_lower(l11)))
        rest = cut(below, r - 1, w, m) - l21.op("MatMul", mT(l21))
        rows = batch_shape(s)
        top = zeros(s, rows.op("Concat", vec(size - m, w), axis=0))
        right = zeros(s, rows.op("Concat", vec(size, w.const(BLOCK) - w), axis=0))
        column = top.op("Concat", l11, l21, axis=r - 2).op("Concat", right, axis=r - 1)
        return [rest, failed], [column]

    none = Ex(a.scope, a.scope.scalar(False, "bool")).op("Expand", batch)
    (_, failed), (panels,) = counted_loop(trips, [a, none], [n], panel, [loose(a.value.type, r - 2), none.value.type])
    # (trips, *batch, n, BLOCK) -> (*batch, n, trips * BLOCK) -> the first n columns
    joined = panels.op("Transpose", perm=(*range(1, r), 0, r))
    low = joined.op("Reshape", batch.op("Concat", vec(n, trips * BLOCK), axis=0))
    low = cut(low, r - 1, 0, n)
    return fill_nan(failed, low)


@decomposes("Cholesky")
def cholesky(node, inputs):
    (a,) = inputs
    if node.attrs["lower"]:
        return cholesky_lower(a)
    return mT(cholesky_lower(mT(a)))  # the upper factor of a is the lower factor of a^T, transposed
