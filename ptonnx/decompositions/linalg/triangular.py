"""SolveTriangular, and the inverse of small triangular blocks both solves and Cholesky use.

Blocked forward substitution: the diagonal blocks of `a` (BLOCK rows each, the last padded
with the identity) are inverted all at once, batched, in one Loop of BLOCK trips; then a Loop
over the row blocks computes x_t = inv(A_tt) (b_t - A[t, :t] x_:t) with two MatMuls a trip.
So the sequential work is BLOCK + n / BLOCK trips, and the flops are in MatMul. An upper
triangular system is the lower one with rows and columns reversed.

Only the triangle named by `lower` is read (the other may hold anything, NaN included); a
zero on the diagonal (and `unit_diagonal` false) gives NaN, as LAPACK's trtrs refuses it.
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    arange,
    batch_shape,
    counted_loop,
    cut,
    diagonal,
    dim,
    fill_nan,
    ints,
    loose,
    reverse,
    vec,
    zeros,
)
from ptonnx.decompositions.registry import decomposes

#: rows per block: the substitution's sequential trips are BLOCK + n / BLOCK
BLOCK = 32


def lower_only(a: Ex, unit_diagonal: bool = False) -> Ex:
    """The lower triangle of square matrices, zeros above (ones on the diagonal if `unit_diagonal`)."""
    r = a.value.type.ndim
    idx = arange(dim(a, r - 1))
    rows, cols = idx.op("Unsqueeze", axes=(1,)), idx.op("Unsqueeze", axes=(0,))
    out = where(rows < cols, 0.0, a)
    return where(rows.eq(cols), 1.0, out) if unit_diagonal else out


def invert_lower(low: Ex) -> Ex:
    """inv(L) of lower-triangular matrices (*batch, w, w), zeros above the diagonal: row j of the
    inverse is (e_j - L[j, :j] X[:j]) / L[j, j], one row a trip."""
    r = low.value.type.ndim
    w = dim(low, r - 1)

    def step(j: Ex, carried, invariants):
        (x,), (mat, idx) = carried, invariants
        here = idx.eq(j)
        row = mat.op("Gather", j, axis=r - 2)
        d = row.op("Gather", j, axis=r - 2).op("Unsqueeze", axes=(r - 2,))
        before = where(idx < j, row, 0.0)
        t = before.op("Unsqueeze", axes=(r - 2,)).op("MatMul", x).op("Squeeze", axes=(r - 2,))
        new_row = (here.cast(low.dtype) - t) / d
        return [where(here.op("Unsqueeze", axes=(1,)), new_row.op("Unsqueeze", axes=(r - 2,)), x)], []

    (x,), _ = counted_loop(w, [zeros(low, low.op("Shape"))], [low, arange(w)], step)
    return x


def _diagonal_blocks(a: Ex, trips: Ex) -> tuple[Ex, Ex]:
    """`a` padded to trips * BLOCK rows and columns (identity in the corner), and its diagonal
    blocks (*batch, trips, BLOCK, BLOCK)."""
    r, scope = a.value.type.ndim, a.scope
    n, batch = dim(a, r - 1), batch_shape(a)
    size = trips * BLOCK
    pad = size - n
    idx = arange(pad)
    eye = idx.op("Unsqueeze", axes=(1,)).eq(idx.op("Unsqueeze", axes=(0,))).cast(a.dtype)
    eye = eye.op("Expand", batch.op("Concat", vec(pad, pad), axis=0))
    top = a.op("Concat", zeros(a, batch.op("Concat", vec(n, pad), axis=0)), axis=r - 1)
    bottom = zeros(a, batch.op("Concat", vec(pad, n), axis=0)).op("Concat", eye, axis=r - 1)
    padded = top.op("Concat", bottom, axis=r - 2)
    b = ints(scope, BLOCK)
    grid = padded.op("Reshape", batch.op("Concat", vec(trips), b, vec(trips), b, axis=0))
    grid = grid.op("Transpose", perm=(*range(r - 2), r - 2, r, r - 1, r + 1))
    flat = grid.op("Reshape", batch.op("Concat", vec(trips * trips), b, b, axis=0))
    blocks = flat.op("Slice", ints(scope, 0), vec(trips * trips), vec(trips + 1), axes=(r - 2,))
    return padded, blocks


def solve_lower(a: Ex, b: Ex, unit_diagonal: bool) -> Ex:
    """x with L x = b, L the lower triangle of `a` (*batch, n, n), b (*batch, n, k): same batch."""
    r = a.value.type.ndim
    n, batch = dim(a, r - 1), batch_shape(a)
    trips = (n + (BLOCK - 1)).op("IntDiv", BLOCK)
    padded, blocks = _diagonal_blocks(lower_only(a, unit_diagonal), trips)
    inverses = invert_lower(blocks)
    k = dim(b, r - 1)
    rhs = b.op("Concat", zeros(b, batch.op("Concat", vec(trips * BLOCK - n, k), axis=0)), axis=r - 2)

    def step(t: Ex, carried, invariants):
        (x,), (mat, inv, right) = carried, invariants
        start = t * BLOCK
        stop = start + BLOCK
        left = cut(cut(mat, r - 2, start, stop), r - 1, 0, start)
        part = cut(right, r - 2, start, stop) - left.op("MatMul", x)
        new = inv.op("Gather", t, axis=r - 2).op("MatMul", part)
        return [x.op("Concat", new, axis=r - 2)], []

    x0 = zeros(b, batch.op("Concat", ints(b.scope, 0), vec(k), axis=0))
    (x,), _ = counted_loop(trips, [x0], [padded, inverses, rhs], step, [loose(x0.value.type, r - 2)])
    return cut(x, r - 2, 0, n)


def _common_batch(a: Ex, b: Ex) -> tuple[Ex, Ex]:
    """a and b broadcast to one batch shape (both ways, as Blockwise broadcasts them)."""
    ra, rb = a.value.type.ndim, b.value.type.ndim
    if ra == rb == 2:
        return a, b
    ones = ints(a.scope, 1, 1)
    return (a.op("Expand", batch_shape(b).op("Concat", ones, axis=0)),
            b.op("Expand", batch_shape(a).op("Concat", ones, axis=0)))


@decomposes("SolveTriangular")
def solve_triangular(node, inputs):
    a, b = inputs
    lower, unit, b_ndim = node.attrs["lower"], node.attrs["unit_diagonal"], node.attrs["b_ndim"]
    if b_ndim == 1:
        b = b.op("Unsqueeze", axes=(b.value.type.ndim,))
    a, b = _common_batch(a, b)
    r = a.value.type.ndim
    if lower:
        x = solve_lower(a, b, unit)
    else:  # reversing rows and columns makes the upper triangle the lower one
        x = reverse(solve_lower(reverse(a, (r - 2, r - 1)), reverse(b, (r - 2,)), unit), (r - 2,))
    if not unit:
        singular = diagonal(a).eq(0.0).op("ReduceAny", axes=(r - 2,))
        x = fill_nan(singular, x)
    return x.op("Squeeze", axes=(r - 1,)) if b_ndim == 1 else x
