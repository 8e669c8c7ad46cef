"""Cholesky: blocked, left-looking, the flops in MatMul, few nodes per sequential trip.

onnxruntime's Loop costs about 1 us a body node a trip, whatever the sizes here, so the time is
the sequential trips times their nodes. The factor is computed as rows of U = L^T (which Gather
and MatMul take without transposes). The matrix is padded with the identity to trips * b,
b = the even number >= n / trips, trips = ceil(n / BLOCK): every panel has b columns (n = 50
is two panels of 26, not 48 + 2) and n = 10 is one panel of 10, not 48.

A Loop over panels carries the rows of U done so far, from the next panel's column on (b
columns fewer and b rows more a trip), and reads the panel's b rows of the matrix (upper
layout: for `lower`, its b columns transposed) from the diagonal on, less U_done^T U_done, one
MatMul: left-looking, as potrf's flops (n^3 / 3; updating the whole trailing matrix a trip, as
right-looking did, took twice that, and a Slice and a Sub pass over it: 22% slower at
n = 1,000, the same below). Its diagonal block D, as an upper triangle, is eliminated together
with the identity, [D | I], in an inner Loop of b / 2 trips (`eliminate`): the rows taken are
U11's and inv(L11)'s at once (no second Loop inverts L11), two a trip. Then L21^T = inv(L11)
T12 is a MatMul. What a trip spoils (rows taken already, the other triangle) is never read
again; U11 keeps its upper triangle by selection, with sqrt(pivot) on the diagonal, LAPACK's
value. Eliminating 4 or 8 columns a trip at constant places (a trip dropping the rows and
columns it has done; 6 to 7 nodes a column, not 10, but a rank-1 update a column) was no faster
at n = 200 with 4 and 10% faster with 8, which was 10% slower at n = 50 (more padding) and
three times slower on a batch of 4 x 4 matrices (padded to 8 x 8).

As LAPACK's potrf (OpenBLAS's, which SciPy and so PyTensor call), only the lower triangle is
read (the upper for `lower=False`), and a pivot <= 0 means the matrix is not positive
definite: PyTensor then gives NaN for the whole matrix (per batch element). A NaN pivot is
not a failure there: NaN flows on, and the other triangle stays zero.
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    BIG,
    arange,
    batch_shape,
    ceil_div,
    counted_loop,
    dim,
    eye_like,
    fill_nan,
    index_masks,
    ints,
    loose,
    mT,
    pad_identity,
    slice2,
    unstack,
    vec,
    zeros,
)
from ptonnx.decompositions.registry import decomposes

#: most columns per panel (32 to 64 within noise up to n = 400; 48 best at n = 1,000, 32, 64, 96 slower)
BLOCK = 48


def eliminate(aug: Ex, half: Ex, width: Ex) -> Ex:
    """Symmetric elimination on [D | I] (*batch, b, 2b), b = 2 half, D's upper triangle read
    (`width`: [b]), two rows a trip (half the trips, one rank-2 MatMul for two rank-1 updates):
    the rows before scaling, row_j with the pivot row_j[j] (u_j = row_j / sqrt(row_j[j])),
    stacked (half, *batch, 2, 2b).

    The update reaches every row and column: the trailing ones (right of j1) get their true
    values, which read nothing else, and the rest (rows taken already, the lower triangle, maybe
    NaN) get garbage nobody reads; masking it would cost two nodes a trip."""
    r = aug.value.type.ndim

    def step(i: Ex, carried, invariants):
        (t,), (width, evens, odds) = carried, invariants
        j0, j1 = evens.op("Gather", i, axis=0), odds.op("Gather", i, axis=0)
        row0, row1 = t.op("Gather", j0, axis=r - 2), t.op("Gather", j1, axis=r - 2)
        pivot0 = row0.op("Gather", j0, axis=r - 1)
        u0 = row0 / pivot0.op("Sqrt")
        row1 = row1 - u0.op("Gather", j1, axis=r - 1) * u0
        pivot1 = row1.op("Gather", j1, axis=r - 1)
        u = u0.op("Concat", row1 / pivot1.op("Sqrt"), axis=r - 2)
        multipliers = mT(u.op("Slice", ints(t.scope, 0), width, ints(t.scope, 1), axes=(r - 1,)))
        # one stacked value, the rows before scaling (their pivots on the diagonal), not u and
        # two pivots: each stacked value costs about a node
        return [t - multipliers.op("MatMul", u)], [row0.op("Concat", row1, axis=r - 2)]

    evens = (arange(half) * 2).op("Unsqueeze", axes=(1,))
    _, (rows,) = counted_loop(half, [aug], [width, evens, evens + 1], step)
    return rows


def factor_rows(a: Ex, lower: bool) -> Ex:
    """U with U^T U = A (*batch, n, n), read in its lower triangle (upper if not `lower`), as rows
    of U (NaN where LAPACK fails)."""
    r, scope = a.value.type.ndim, a.scope
    k = r - 2  # batch axes
    n, batch = dim(a, r - 1), batch_shape(a)
    trips = ceil_div(n, BLOCK).op("Max", 1)  # one trip for n = 0 (b = 0)
    half = ceil_div(n, trips * 2)
    b = half * 2  # even: two columns a trip
    size = trips * b
    invariants = [half, vec(b), eye_like(a, b), *index_masks(b), batch.op("Concat", vec(b, b + b), axis=0),
                  batch.op("Concat", vec(b * (b + b)), axis=0), arange(b) * (b + b + 1),
                  zeros(a, batch.op("Concat", vec(b, size), axis=0))]

    def panel(_, carried, invariants):
        (done_rows, done), (matrix, half, bv, eye, above, below, diag, rows_shape, flat_shape, on_diagonal, left_zeros) = carried, invariants
        sc = done_rows.scope
        # the panel's b rows of the matrix from its diagonal on, less what the rows done take off
        if lower:  # the panel's b columns from the diagonal down, transposed (b columns: a small copy)
            block = mT(matrix.op("Slice", done.op("Concat", done, axis=0), ints(sc, BIG).op("Concat", done + bv, axis=0),
                                 ints(sc, 1, 1), axes=(r - 2, r - 1)))
        else:
            block = matrix.op("Slice", done.op("Concat", done, axis=0), (done + bv).op("Concat", ints(sc, BIG), axis=0),
                              ints(sc, 1, 1), axes=(r - 2, r - 1))
        taken = done_rows.op("Slice", ints(sc, 0), bv, ints(sc, 1), axes=(r - 1,))  # (*batch, done, b)
        block = block - mT(taken).op("MatMul", done_rows)
        d = block.op("Slice", ints(sc, 0), bv, ints(sc, 1), axes=(r - 1,))
        t12 = block.op("Slice", bv, ints(sc, BIG), ints(sc, 1), axes=(r - 1,))
        rows = unstack(eliminate(d.op("Concat", eye, axis=r - 1), half, bv), rows_shape, k)
        pivots = rows.op("Reshape", flat_shape).op("Gather", on_diagonal, axis=r - 2)  # (*batch, b)
        rows = rows / pivots.op("Sqrt").op("Unsqueeze", axes=(r - 1,))  # as the trip scaled them
        # the rows' garbage (left of the diagonal, above it in inv(L11)) is dropped by selection;
        # U's diagonal is sqrt(pivot), as LAPACK's (not pivot / sqrt(pivot))
        inverse = where(above, 0.0, rows.op("Slice", bv, ints(sc, BIG), ints(sc, 1), axes=(r - 1,)))
        u11 = rows.op("Slice", ints(sc, 0), bv, ints(sc, 1), axes=(r - 1,))
        u11 = where(below, 0.0, where(diag, pivots.op("Sqrt").op("Unsqueeze", axes=(r - 1,)), u11))
        l21t = inverse.op("MatMul", t12)
        rest = done_rows.op("Slice", bv, ints(sc, BIG), ints(sc, 1), axes=(r - 1,)).op("Concat", l21t, axis=r - 2)
        left = left_zeros.op("Slice", ints(sc, 0), done, ints(sc, 1), axes=(r - 1,))
        return [rest, done + bv], [left.op("Concat", u11, l21t, axis=r - 1), pivots]

    # the rows of U done so far, from the next panel's column on: none yet
    carried = [zeros(a, batch.op("Concat", ints(scope, 0), vec(size), axis=0)), ints(scope, 0)]
    invariants = [pad_identity(a, size), *invariants]
    _, (panels, pivots) = counted_loop(trips, carried, invariants, panel, [loose(a.value.type, k), carried[1].value.type])
    failed = (pivots <= 0.0).op("ReduceAny", axes=(0, r - 1))
    # (trips, *batch, b, size) -> (*batch, size, size) -> the first n rows and columns
    u = slice2(unstack(panels, batch.op("Concat", vec(size, size), axis=0), k), None, vec(n))
    return fill_nan(failed, u)


@decomposes("Cholesky")
def cholesky(node, inputs):
    (a,) = inputs
    lower = node.attrs["lower"]
    u = factor_rows(a, lower)
    return mT(u) if lower else u
