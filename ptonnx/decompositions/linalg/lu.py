"""LU with partial pivoting (LAPACK's getrf), and what is computed from it: LUFactor, Solve,
Det, SLogDet, MatrixInverse, PivotToPermutations.

Blocked right-looking, as getrf: a Loop over panels of BLOCK columns carries the whole matrix
(rows swapped as the pivots are chosen) and the row order. A trip factors its panel (all rows
below the diagonal, BLOCK columns) with an unblocked Loop: pick the largest |value| of the
column at or below the diagonal (the first of equals, as LAPACK's idamax), swap it up, scale
the column by the pivot (not when the pivot is 0: LAPACK leaves that column and reports the
matrix singular), update the panel's columns to the right. The swaps are then applied to the
whole rows, U12 = inv(L11) A12 and A22 -= L21 U12 are MatMuls.

Batch axes are flattened to one at the start (a batched row gather is a Gather on the
flattened rows) and restored at the end.
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    arange,
    counted_loop,
    cut,
    dim,
    fill_nan,
    ints,
    loose,
    vec,
    zeros,
)
from ptonnx.decompositions.linalg.triangular import invert_lower, lower_only, solve_lower
from ptonnx.decompositions.registry import decomposes

#: columns per panel
BLOCK = 32


def flatten_batch(x: Ex, core: int) -> tuple[Ex, Ex]:
    """x with its batch axes (all but the last `core`) as one leading axis, and the batch shape."""
    r = x.value.type.ndim
    batch = x.op("Shape", start=0, end=r - core)
    count = batch.op("ReduceProd", axes=(0,), keepdims=True) if r > core else ints(x.scope, 1)
    return x.op("Reshape", count.op("Concat", x.op("Shape", start=r - core), axis=0)), batch


def restore_batch(x: Ex, batch: Ex, core: int) -> Ex:
    """The inverse of `flatten_batch`."""
    return x.op("Reshape", batch.op("Concat", x.op("Shape", start=x.value.type.ndim - core), axis=0))


def take_rows(x: Ex, rows: Ex) -> Ex:
    """x[b, rows[b, i], :] for x (B, m, c) and int64 rows (B, k): one Gather on the flattened rows."""
    count, m = dim(x, 0), dim(x, 1)
    flat = x.op("Reshape", vec(count * m).op("Concat", x.op("Shape", start=2), axis=0))
    offsets = (arange(count) * m).op("Unsqueeze", axes=(1,))
    picked = flat.op("Gather", (rows + offsets).op("Reshape", ints(x.scope, -1)), axis=0)
    return picked.op("Reshape", vec(count, dim(rows, 1)).op("Concat", x.op("Shape", start=2), axis=0))


def _panel(p: Ex, failed: Ex) -> tuple[Ex, Ex, Ex, Ex]:
    """Unblocked LU with partial pivoting of panels p (B, m, w): (factored panels, row order
    (B, m), the pivot row of each column (B, w), failed | a pivot was 0)."""
    m, w = dim(p, 1), dim(p, 2)
    order = arange(m).op("Unsqueeze", axes=(0,)).op("Expand", vec(dim(p, 0), m))

    def step(j: Ex, carried, invariants):
        (mat, rows, bad), (idx, cols) = carried, invariants
        column = mat.op("Gather", j, axis=2)
        candidates = where(idx >= j, abs(column), -1.0)
        pivot_row = candidates.op("ArgMax", axis=1, keepdims=True)  # (B, 1): the first largest
        is_p, is_j = idx.op("Unsqueeze", axes=(0,)).eq(pivot_row), idx.eq(j)
        row_j = mat.op("Gather", j, axis=1).op("Unsqueeze", axes=(1,))
        row_p = where(is_p.op("Unsqueeze", axes=(2,)), mat, 0.0).op("ReduceSum", axes=(1,), keepdims=True)
        mat = where(is_j.op("Unsqueeze", axes=(1,)), row_p, where(is_p.op("Unsqueeze", axes=(2,)), row_j, mat))
        at_j = rows.op("Gather", j, axis=1).op("Unsqueeze", axes=(1,))
        at_p = where(is_p, rows, 0).op("ReduceSum", axes=(1,), keepdims=True)
        rows = where(is_j, at_p, where(is_p, at_j, rows))
        pivot = row_p.op("Gather", j, axis=2)  # (B, 1)
        column = mat.op("Gather", j, axis=2)
        zero = pivot.eq(0.0)
        below = idx > j
        low = where(below, where(zero, column, column / pivot), 0.0)  # (B, m)
        update = mat - low.op("Unsqueeze", axes=(2,)) * row_p
        right = below.op("Unsqueeze", axes=(1,)) & (cols > j).op("Unsqueeze", axes=(0,))
        mat = where(right, update, where(below.op("Unsqueeze", axes=(1,)) & cols.eq(j).op("Unsqueeze", axes=(0,)),
                                          low.op("Unsqueeze", axes=(2,)), mat))
        return [mat, rows, bad | zero.op("Squeeze", axes=(1,))], [pivot_row.op("Squeeze", axes=(1,))]

    (mat, rows, failed), (pivots,) = counted_loop(w, [p, order, failed], [arange(m), arange(w)], step)
    return mat, rows, pivots.op("Transpose", perm=(1, 0)), failed


def lu_factor(a: Ex) -> tuple[Ex, Ex, Ex, Ex]:
    """LU of matrices a (B, n, n): (packed L and U, pivots (B, n) as getrf's, row order (B, n):
    a[order] = L U, and singular (B,): a pivot was exactly 0)."""
    count, n = dim(a, 0), dim(a, 2)
    trips = (n + (BLOCK - 1)).op("IntDiv", BLOCK)
    order = arange(n).op("Unsqueeze", axes=(0,)).op("Expand", vec(count, n))
    none = Ex(a.scope, a.scope.scalar(False, "bool")).op("Expand", vec(count))

    def panel(t: Ex, carried, invariants):
        (mat, rows, bad), (size,) = carried, invariants
        k = t * BLOCK
        w = (size - k).op("Min", BLOCK)
        lower_rows = cut(mat, 1, k, size)  # (B, m, n)
        factored, local, pivots, bad = _panel(cut(lower_rows, 2, k, k + w), bad)
        lower_rows = take_rows(lower_rows, local)
        rows = cut(rows, 1, 0, k).op("Concat", take_rows(cut(rows, 1, k, size).op("Unsqueeze", axes=(2,)), local)
                                        .op("Squeeze", axes=(2,)), axis=1)
        l11 = lower_only(cut(factored, 1, 0, w), unit_diagonal=True)
        right = cut(lower_rows, 2, k + w, size)
        u12 = invert_lower(l11).op("MatMul", cut(right, 1, 0, w))
        a22 = cut(right, 1, w, size) - cut(factored, 1, w, size).op("MatMul", u12)
        below = cut(lower_rows, 2, 0, k).op("Concat", factored, u12.op("Concat", a22, axis=1), axis=2)
        mat = cut(mat, 1, 0, k).op("Concat", below, axis=1)
        padded = (pivots + k).op("Concat", zeros(pivots, vec(dim(pivots, 0), w.const(BLOCK) - w)), axis=1)
        return [mat, rows, bad], [padded]

    (lu, order, singular), (stacked,) = counted_loop(
        trips, [a, order, none], [n], panel, [a.value.type.with_shape((None,) * 3), loose(order.value.type, 0), none.value.type])
    pivots = stacked.op("Transpose", perm=(1, 0, 2)).op("Reshape", vec(count, trips * BLOCK))
    return lu, cut(pivots, 1, 0, n), order, singular


def _diagonal(lu: Ex) -> Ex:
    n = dim(lu, 2)
    flat = lu.op("Reshape", vec(dim(lu, 0), n * n))
    return flat.op("Slice", ints(lu.scope, 0), vec(n * n), vec(n + 1), axes=(1,))


def _swap_parity(pivots: Ex, like: Ex) -> Ex:
    """(-1) ** (the number of rows swapped with another), in like's dtype (B,)."""
    swaps = pivots.op("NotEqual", arange(dim(pivots, 1)).op("Unsqueeze", axes=(0,))).cast("int64").op("ReduceSum", axes=(1,))
    odd = (swaps.op("Mod", 2)).eq(1)
    return where(odd, -1.0, 1.0, like=like)


def solve_lu(lu: Ex, order: Ex, b: Ex) -> Ex:
    """x with a x = b, from a's LU (B, n, n) and row order, b (B, n, k)."""
    y = solve_lower(lu, take_rows(b, order), unit_diagonal=True)
    return _solve_upper(lu, y)


def _solve_upper(a: Ex, b: Ex) -> Ex:
    from ptonnx.decompositions.linalg.common import reverse

    return reverse(solve_lower(reverse(a, (1, 2)), reverse(b, (1,)), unit_diagonal=False), (1,))


@decomposes("LUFactor")
def lu_factor_op(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    lu, pivots, _, singular = lu_factor(a)
    return restore_batch(fill_nan(singular, lu), batch, 2), restore_batch(pivots, batch, 1)


@decomposes("Det")
def det(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    lu, pivots, _, _ = lu_factor(a)
    value = _diagonal(lu).op("ReduceProd", axes=(1,)) * _swap_parity(pivots, lu)
    return value.op("Reshape", batch)


@decomposes("SLogDet")
def slogdet(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    lu, pivots, _, singular = lu_factor(a)
    diagonal = _diagonal(lu)
    sign = diagonal.op("Sign").op("ReduceProd", axes=(1,)) * _swap_parity(pivots, lu)
    logdet = abs(diagonal).op("Log").op("ReduceSum", axes=(1,))
    sign, logdet = where(singular, 0.0, sign), where(singular, float("-inf"), logdet)  # NumPy's, for a zero pivot
    return sign.op("Reshape", batch), logdet.op("Reshape", batch)


@decomposes("Solve")
def solve(node, inputs):
    a, b = inputs
    kind, lower, b_ndim = node.attrs["assume_a"], node.attrs["lower"], node.attrs["b_ndim"]
    if b_ndim == 1:
        b = b.op("Unsqueeze", axes=(b.value.type.ndim,))
    a, b = _broadcast(a, b)
    a, batch = flatten_batch(a, 2)
    b, _ = flatten_batch(b, 2)
    if kind in ("sym", "her", "pos"):  # only the triangle `lower` names is read: mirror it
        half = lower_only(a if lower else a.op("Transpose", perm=(0, 2, 1)))
        strict = where(arange(dim(a, 2)).op("Unsqueeze", axes=(1,)).eq(arange(dim(a, 2))), 0.0, half)
        a = half + strict.op("Transpose", perm=(0, 2, 1))
    if kind == "pos":
        low = Ex(a.scope, a.scope.builder.node("Cholesky", [a.value], {"lower": True}).output)
        x = _solve_upper(low.op("Transpose", perm=(0, 2, 1)), solve_lower(low, b, unit_diagonal=False))
    else:
        lu, _, order, singular = lu_factor(a)
        x = fill_nan(singular, solve_lu(lu, order, b))
    x = restore_batch(x, batch, 2)
    return x.op("Squeeze", axes=(x.value.type.ndim - 1,)) if b_ndim == 1 else x


def _broadcast(a: Ex, b: Ex) -> tuple[Ex, Ex]:
    if a.value.type.ndim == b.value.type.ndim == 2:
        return a, b
    ones = ints(a.scope, 1, 1)
    return (a.op("Expand", b.op("Shape", start=0, end=b.value.type.ndim - 2).op("Concat", ones, axis=0)),
            b.op("Expand", a.op("Shape", start=0, end=a.value.type.ndim - 2).op("Concat", ones, axis=0)))


@decomposes("MatrixInverse")
def inverse(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    lu, _, order, singular = lu_factor(a)
    n = dim(a, 2)
    idx = arange(n)
    eye = idx.op("Unsqueeze", axes=(1,)).eq(idx.op("Unsqueeze", axes=(0,))).cast(a.dtype).op("Expand", vec(dim(a, 0), n, n))
    x = solve_lu(lu, order, eye)
    ok = singular.op("ReduceAny", axes=(0,)).op("Not")
    x = x.op("Check", ok, message="Singular matrix", exception="numpy.linalg:LinAlgError")
    return restore_batch(x, batch, 2)


@decomposes("PivotToPermutations", own_dtype=True)
def pivot_to_permutations(node, inputs):
    pivots, batch = flatten_batch(inputs[0], 1)
    count, n = dim(pivots, 0), dim(pivots, 1)
    order0 = arange(n).op("Unsqueeze", axes=(0,)).op("Expand", vec(count, n))

    def step(i: Ex, carried, invariants):
        (order,), (piv, idx) = carried, invariants
        p = piv.op("Gather", i, axis=1).op("Unsqueeze", axes=(1,))
        is_p, is_i = idx.op("Unsqueeze", axes=(0,)).eq(p), idx.eq(i)
        at_i = order.op("Gather", i, axis=1).op("Unsqueeze", axes=(1,))
        at_p = where(is_p, order, 0).op("ReduceSum", axes=(1,), keepdims=True)
        return [where(is_i, at_p, where(is_p, at_i, order))], []

    (order,), _ = counted_loop(n, [order0], [pivots, arange(n)], step)
    if not node.attrs["inverse"]:  # the inverse permutation: where each row went
        order = _invert_permutation(order)
    return restore_batch(order, batch, 1)


def _invert_permutation(order: Ex) -> Ex:
    """inv with inv[order[i]] = i, by a one-hot comparison (B, n, n) summed: exact for ints."""
    n = dim(order, 1)
    idx = arange(n)
    hits = order.op("Unsqueeze", axes=(2,)).eq(idx.op("Unsqueeze", axes=(0,)).op("Unsqueeze", axes=(0,)))  # [b, i, v]
    return where(hits, idx.op("Unsqueeze", axes=(0,)).op("Unsqueeze", axes=(2,)), 0).op("ReduceSum", axes=(1,))
