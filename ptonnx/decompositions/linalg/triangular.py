"""SolveTriangular, and the inverse of small triangular blocks both solves and LU use.

Blocked forward substitution: `a` is padded with the identity to trips * size rows, size =
ceil(n / trips) and trips = ceil(n / BLOCK) (n = 10 is one block of 10, not 32: a 1,000 x 4 x 4
batch costs 4 trips, not 32); its diagonal blocks are inverted all at once, batched, in one Loop
of `size` trips (`invert_lower`, 7 nodes a trip); then a Loop over the row blocks computes
x_t = inv(A_tt) (b_t - A[t, :t] x_:t) with two MatMuls a trip. So the sequential work is
size + trips trips, and the flops are in MatMul. An upper triangular system is the lower one
with rows and columns reversed.

Only the triangle named by `lower` is read (the other may hold anything, NaN included); a
zero on the diagonal (and `unit_diagonal` false) gives NaN, as LAPACK's trtrs refuses it.
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    common_batch,
    arange,
    batch_shape,
    ceil_div,
    counted_loop,
    cut,
    diagonal,
    dim,
    eye_like,
    fill_nan,
    ints,
    loose,
    pad_identity,
    reverse,
    unstack,
    vec,
    zeros,
)
from ptonnx.decompositions.registry import decomposes

#: most rows per block: the sequential trips are about BLOCK + n / BLOCK (64 and 128 were slower at n = 200)
BLOCK = 32


def lower_only(a: Ex, unit_diagonal: bool = False) -> Ex:
    """The lower triangle of square matrices, zeros above (ones on the diagonal if `unit_diagonal`)."""
    r = a.value.type.ndim
    idx = arange(dim(a, r - 1))
    rows, cols = idx.op("Unsqueeze", axes=(1,)), idx.op("Unsqueeze", axes=(0,))
    out = where(rows < cols, 0.0, a)
    return where(rows.eq(cols), 1.0, out) if unit_diagonal else out


def invert_lower(low: Ex) -> Ex:
    """inv(L) of lower-triangular matrices (*batch, w, w), zeros above the diagonal (only L's lower
    triangle is read). Right-looking, one row a trip: X starts as I; trip j takes row j of the
    inverse, x_j = X[j] / L[j, j], and subtracts L[:, j] x_j from X (7 nodes a trip)."""
    r = low.value.type.ndim
    w = dim(low, r - 1)

    def step(j: Ex, carried, invariants):
        (x,), (mat, diag) = carried, invariants
        at = j.op("Unsqueeze", axes=(0,))
        row = x.op("Gather", at, axis=r - 2) / diag.op("Gather", at, axis=r - 2)
        # rows above j change too (by L[:j, j] row): they are finished and taken already
        return [x - mat.op("Gather", at, axis=r - 1).op("MatMul", row)], [row]

    diag = diagonal(low).op("Unsqueeze", axes=(r - 1,))
    _, (rows,) = counted_loop(w, [eye_like(low, w)], [low, diag], step)
    return unstack(rows, batch_shape(low).op("Concat", vec(w, w), axis=0), r - 2)


def _diagonal_blocks(a: Ex, trips: Ex, size: Ex) -> Ex:
    """The diagonal blocks (*batch, trips, size, size) of square matrices (*batch, trips * size, ...)."""
    r = a.value.type.ndim
    batch, s = batch_shape(a), vec(size)
    grid = a.op("Reshape", batch.op("Concat", vec(trips), s, vec(trips), s, axis=0))
    grid = grid.op("Transpose", perm=(*range(r - 2), r - 2, r, r - 1, r + 1))
    flat = grid.op("Reshape", batch.op("Concat", vec(trips * trips), s, s, axis=0))
    return flat.op("Gather", arange(trips) * (trips + 1), axis=r - 2)  # (a Slice of step trips + 1 costs 20 nodes)


def solve_lower(a: Ex, b: Ex, unit_diagonal: bool) -> Ex:
    """x with L x = b, L the lower triangle of `a` (*batch, n, n), b (*batch, n, k): same batch."""
    r = a.value.type.ndim
    n, batch = dim(a, r - 1), batch_shape(a)
    trips = ceil_div(n, BLOCK).op("Max", 1)  # one trip for n = 0
    size = ceil_div(n, trips)  # the blocks' size: n = 10 is one block of 10
    padded = pad_identity(lower_only(a, unit_diagonal), trips * size)
    inverses = invert_lower(_diagonal_blocks(padded, trips, size))
    k = dim(b, r - 1)
    rhs = b.op("Concat", zeros(b, batch.op("Concat", vec(trips * size - n, k), axis=0)), axis=r - 2)

    def step(t: Ex, carried, invariants):
        (x,), (mat, inv, right, size) = carried, invariants
        start = t * size
        stop = start + size
        left = cut(cut(mat, r - 2, start, stop), r - 1, 0, start)
        part = cut(right, r - 2, start, stop) - left.op("MatMul", x)
        new = inv.op("Gather", t, axis=r - 2).op("MatMul", part)
        return [x.op("Concat", new, axis=r - 2)], []

    x0 = zeros(b, batch.op("Concat", ints(b.scope, 0), vec(k), axis=0))
    (x,), _ = counted_loop(trips, [x0], [padded, inverses, rhs, size], step, [loose(x0.value.type, r - 2)])
    return cut(x, r - 2, 0, n)


@decomposes("SolveTriangular")
def solve_triangular(node, inputs):
    a, b = inputs
    lower, unit, b_ndim = node.attrs["lower"], node.attrs["unit_diagonal"], node.attrs["b_ndim"]
    if b_ndim == 1:
        b = b.op("Unsqueeze", axes=(b.value.type.ndim,))
    a, b = common_batch(a, b)
    r = a.value.type.ndim
    if lower:
        x = solve_lower(a, b, unit)
    else:  # reversing rows and columns makes the upper triangle the lower one
        x = reverse(solve_lower(reverse(a, (r - 2, r - 1)), reverse(b, (r - 2,)), unit), (r - 2,))
    if not unit:
        singular = diagonal(a).eq(0.0).op("ReduceAny", axes=(r - 2,))
        x = fill_nan(singular, x)
    return x.op("Squeeze", axes=(r - 1,)) if b_ndim == 1 else x
