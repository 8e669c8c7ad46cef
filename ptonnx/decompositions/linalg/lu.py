"""LU with partial pivoting (LAPACK's getrf), and what is computed from it: LU, LUFactor, Solve,
Det, SLogDet, MatrixInverse, PivotToPermutations.

Blocked right-looking, as getrf. onnxruntime's Loop costs about 1 us a body node a trip (see
cholesky.py), so the column step, which runs n times in sequence, is kept short (`_panel`).
The matrix is padded with the identity to trips * b, b = ceil(n / trips), trips = ceil(n /
BLOCK): every panel has b columns, and a size the graph fixes gives constant trip counts (small
ones are unrolled by `counted_loop`). A Loop over panels carries the whole matrix (rows swapped
as the pivots are chosen, right-hand sides as extra columns); a trip factors its panel, applies
the panel's row order to the whole rows, U12 = inv(L11) A12 and A22 -= L21 U12 are MatMuls.

Solve and MatrixInverse append b (the identity) to the matrix: the factorisation leaves
L^-1 P b there, and only the upper solve is left. A zero pivot (singular) is found from U's
diagonal once, after the factorisation; the factorisation itself goes on past it as getrf does
(the column is left unscaled), which is what LU (scipy.linalg.lu) returns.

Batch axes are flattened to one at the start and restored at the end.
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    common_batch,
    arange,
    ceil_div,
    diagonal,
    counted_loop,
    cut,
    dim,
    fill_nan,
    ints,
    loose,
    pad_identity,
    reverse,
    unstack,
    vec,
    zeros,
)
from ptonnx.decompositions.linalg.triangular import lower_only, solve_lower
from ptonnx.decompositions.registry import decomposes

#: most columns per panel
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


def _panel(p: Ex, m: Ex, w: Ex) -> tuple[Ex, Ex, Ex, Ex]:
    """Unblocked LU with partial pivoting of panels p (B, m, w): (the factored panels (B, m, w),
    their row order (B, m), the pivot row of each column (B, w), inv(L11) (B, w, w)).

    A step takes the pivot row out (a per-trip output: it is final) and moves the row at the
    diagonal into its place; the rows above the diagonal are then stale and never read. The
    update subtracts column j (unscaled) times the pivot row masked to the columns right of j,
    so column j keeps the unscaled multipliers, divided by the pivots once after the Loop. Two
    kinds of extra columns ride along: the row index (masked out of the update) and inv(L11),
    eliminated with the panel (the pivot row gets e_j there, where it holds 0)."""
    count = dim(p, 0)
    width = w + w + 1
    idx = arange(m)
    aux = idx.cast(p.dtype).op("Unsqueeze", axes=(1,)).op("Concat", zeros(p, vec(m, w)), axis=1)
    aug = p.op("Concat", aux.op("Unsqueeze", axes=(0,)).op("Expand", vec(count, m, w + 1)), axis=2)
    steps, cols = arange(w).op("Unsqueeze", axes=(1,)), arange(width).op("Unsqueeze", axes=(0,))
    extra = cols - (w + 1)  # the column of inv(L11), or < 0
    masks = ((cols > steps) & (cols < w)) | ((extra >= 0) & (extra < steps))  # (w, width)
    units = extra.eq(steps).cast(p.dtype)

    def step(j: Ex, carried, invariants):
        (mat,), (idx, idx_col, masks, units) = carried, invariants
        column = mat.op("Gather", j, axis=2)
        candidates = where(idx >= j, abs(column), -1.0)
        pivot_row = candidates.op("ArgMax", axis=1, keepdims=True)  # (B, 1): the first largest
        is_p = idx_col.eq(pivot_row.op("Unsqueeze", axes=(2,)))  # (B, m, 1)
        at = j.op("Unsqueeze", axes=(0,))
        row_p = where(is_p, mat, 0.0).op("ReduceSum", axes=(1,), keepdims=True)  # (B, 1, width)
        mat = where(is_p, mat.op("Gather", at, axis=1), mat)
        pivot = row_p.op("Gather", at, axis=2)
        multipliers = mat.op("Gather", at, axis=2) / where(pivot.eq(0.0), 1.0, pivot)
        update = where(masks.op("Gather", at, axis=0), row_p, units.op("Gather", at, axis=0))
        return [mat - multipliers * update], [row_p, pivot_row]

    (mat,), (rows, pivots) = counted_loop(w, [aug], [idx, idx.op("Unsqueeze", axes=(1,)), masks, units], step)
    rows = unstack(rows, vec(count, w, width), 1)  # (B, w, width): the pivot rows in order
    rows = rows.op("Concat", cut(mat, 1, w, m), axis=1)  # with the rows left below the panel
    pivot_values = rows.op("Reshape", vec(count, m * width)).op("Gather", arange(w) * (width + 1), axis=1)
    panel = cut(rows, 2, 0, w)
    strict = idx.op("Unsqueeze", axes=(1,)) > arange(w).op("Unsqueeze", axes=(0,))
    # a zero pivot leaves its column unscaled, as getrf does (it holds zeros then): no 0 / 0
    safe = where(pivot_values.eq(0.0), 1.0, pivot_values)
    factored = where(strict, panel / safe.op("Unsqueeze", axes=(1,)), panel)
    order = rows.op("Gather", w, axis=2)  # NaN multipliers (inf or NaN entries) spoil it: any index then
    order = where(order.op("IsNaN"), 0.0, order).cast("int64")
    inverse = cut(cut(rows, 1, 0, w), 2, w + 1, width) + steps.eq(arange(w)).cast(p.dtype)
    return factored, order, unstack(pivots, vec(count, w), 1), inverse


def lu_factor(a: Ex, rhs: Ex | None = None) -> tuple[Ex, Ex, Ex, Ex, Ex]:
    """LU of matrices a (B, n, n), padded to (B, s, s): (the packed L and U (B, s, s + k), with
    L^-1 P rhs in the last k columns if `rhs` (B, n, k) is given; the pivots (B, n) as getrf's;
    the row order (B, s): a[order] = L U; singular (B,): a pivot was exactly 0; s)."""
    count, n = dim(a, 0), dim(a, 2)
    trips = ceil_div(n, BLOCK).op("Max", 1)  # one trip for n = 0
    b = ceil_div(n, trips)
    size = trips * b
    mat = pad_identity(a, size)
    if rhs is not None:
        mat = mat.op("Concat", rhs.op("Concat", zeros(rhs, vec(count, size - n, dim(rhs, 2))), axis=1), axis=2)
    width = dim(mat, 2)
    order = arange(size).op("Unsqueeze", axes=(0,)).op("Expand", vec(count, size))

    def panel(t: Ex, carried, invariants):
        (mat, rows), (b, size, width) = carried, invariants
        k = t * b
        stop = k + b
        lower = cut(mat, 1, k, size)
        factored, local, pivots, inverse = _panel(cut(lower, 2, k, stop), size - k, b)
        lower = take_rows(lower, local)
        rows = cut(rows, 1, 0, k).op("Concat", take_rows(cut(rows, 1, k, size).op("Unsqueeze", axes=(2,)), local).op("Squeeze", axes=(2,)), axis=1)
        right = cut(lower, 2, stop, width)
        u12 = inverse.op("MatMul", cut(right, 1, 0, b))
        a22 = cut(right, 1, b, size) - cut(factored, 1, b, size).op("MatMul", u12)
        below = cut(lower, 2, 0, k).op("Concat", factored, u12.op("Concat", a22, axis=1), axis=2)
        return [cut(mat, 1, 0, k).op("Concat", below, axis=1), rows], [pivots + k]

    (mat, order), (pivots,) = counted_loop(trips, [mat, order], [b, size, width], panel,
                                           [loose(mat.value.type, 0), loose(order.value.type, 0)])
    pivots = cut(unstack(pivots, vec(count, size), 1), 1, 0, n)
    singular = diagonal(cut(mat, 2, 0, size)).eq(0.0).op("ReduceAny", axes=(1,), keepdims=False)
    return mat, pivots, order, singular, size


def _swap_parity(pivots: Ex, like: Ex) -> Ex:
    """(-1) ** (the number of rows swapped with another), in like's dtype (B,)."""
    swaps = pivots.op("NotEqual", arange(dim(pivots, 1)).op("Unsqueeze", axes=(0,))).cast("int64").op("ReduceSum", axes=(1,))
    odd = (swaps.op("Mod", 2)).eq(1)
    return where(odd, -1.0, 1.0, like=like)


def _solve_upper(a: Ex, b: Ex) -> Ex:
    return reverse(solve_lower(reverse(a, (1, 2)), reverse(b, (1,)), unit_diagonal=False), (1,))


def _solve_factored(a: Ex, rhs: Ex) -> tuple[Ex, Ex]:
    """x with a x = rhs (B, n, k) and singular (B,): the upper solve of the augmented factorisation."""
    n = dim(a, 2)
    mat, _, _, singular, size = lu_factor(a, rhs)
    x = _solve_upper(cut(mat, 2, 0, size), cut(mat, 2, size, size + dim(rhs, 2)))
    return cut(x, 1, 0, n), singular


@decomposes("LUFactor")
def lu_factor_op(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    n = dim(a, 2)
    lu, pivots, _, singular, _ = lu_factor(a)
    lu = cut(cut(lu, 1, 0, n), 2, 0, n)
    return restore_batch(fill_nan(singular, lu), batch, 2), restore_batch(pivots, batch, 1)


def _diagonal_and_parity(x: Ex) -> tuple[Ex, Ex, Ex]:
    lu, pivots, _, singular, size = lu_factor(x)
    return diagonal(cut(lu, 2, 0, size)), _swap_parity(pivots, lu), singular  # the padding's diagonal is 1


@decomposes("Det")
def det(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    diag, parity, singular = _diagonal_and_parity(a)
    value = where(singular, 0.0, diag.op("ReduceProd", axes=(1,), keepdims=False) * parity)
    return value.op("Reshape", batch)


@decomposes("SLogDet")
def slogdet(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    diag, parity, singular = _diagonal_and_parity(a)
    sign = diag.op("Sign").op("ReduceProd", axes=(1,), keepdims=False) * parity
    logdet = abs(diag).op("Log").op("ReduceSum", axes=(1,), keepdims=False)
    sign, logdet = where(singular, 0.0, sign), where(singular, float("-inf"), logdet)  # NumPy's, for a zero pivot
    return sign.op("Reshape", batch), logdet.op("Reshape", batch)


@decomposes("Solve")
def solve(node, inputs):
    a, b = inputs
    kind, lower, b_ndim = node.attrs["assume_a"], node.attrs["lower"], node.attrs["b_ndim"]
    if b_ndim == 1:
        b = b.op("Unsqueeze", axes=(b.value.type.ndim,))
    a, b = common_batch(a, b)
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
        x, singular = _solve_factored(a, b)
        x = fill_nan(singular, x)
    x = restore_batch(x, batch, 2)
    return x.op("Squeeze", axes=(x.value.type.ndim - 1,)) if b_ndim == 1 else x


@decomposes("MatrixInverse")
def inverse(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    n = dim(a, 2)
    idx = arange(n)
    eye = idx.op("Unsqueeze", axes=(1,)).eq(idx.op("Unsqueeze", axes=(0,))).cast(a.dtype).op("Expand", vec(dim(a, 0), n, n))
    x, singular = _solve_factored(a, eye)
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


@decomposes("LU")
def lu(node, inputs):
    """scipy.linalg.lu. An (m, n) matrix is factored as the square one of size max(m, n) with zero
    rows or columns appended: a zero row is never a pivot before the real rows run out (ArgMax
    takes the first largest |value|, as idamax), and a zero column pivots on its own row, so the
    first min(m, n) steps are getrf's of the matrix itself and the rest swap nothing."""
    (a,) = inputs
    ok = a.op("IsNaN").op("Or", a.op("IsInf")).op("Reshape", ints(a.scope, -1)).op("ReduceAny", axes=(0,), keepdims=False).op("Not")
    a = a.op("Check", ok, message="array must not contain infs or NaNs", exception="builtins:ValueError")
    a, batch = flatten_batch(a, 2)
    count, m, n = dim(a, 0), dim(a, 1), dim(a, 2)
    rows, cols = a.value.type.shape[1:]
    if rows == cols and rows is not None:
        s = k = n
        square = a
    else:
        s, k = m.op("Max", n), m.op("Min", n)
        square = a.op("Concat", zeros(a, vec(count, m, s - n)), axis=2).op("Concat", zeros(a, vec(count, s - m, s)), axis=1)
    packed, _, order, _, _ = lu_factor(square)
    packed = cut(cut(packed, 1, 0, s), 2, 0, s)
    idx = arange(s)
    on_or_above = idx.op("Unsqueeze", axes=(1,)) <= idx.op("Unsqueeze", axes=(0,))
    unit = idx.op("Unsqueeze", axes=(1,)).eq(idx.op("Unsqueeze", axes=(0,))).cast(a.dtype)
    low = cut(cut(where(on_or_above, unit, packed), 1, 0, m), 2, 0, k)
    up = cut(cut(where(on_or_above.op("Not"), 0.0, packed), 1, 0, k), 2, 0, n)
    p = _invert_permutation(cut(order, 1, 0, m))
    if not (rows == cols and rows is not None):  # scipy gives no row order for an (m, 0) matrix
        p = cut(p, 1, 0, m * n.op("Min", 1))
    if node.attrs["permute_l"]:
        low = take_rows(low, p)
    return restore_batch(low, batch, 2), restore_batch(up, batch, 2), restore_batch(p, batch, 1)
