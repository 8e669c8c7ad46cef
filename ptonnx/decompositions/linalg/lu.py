"""LU with partial pivoting (LAPACK's getrf), and what is computed from it: LU, LUFactor, Solve,
Det, SLogDet, MatrixInverse, PivotToPermutations.

Blocked right-looking, as getrf. onnxruntime's Loop costs about 1 us a body node a trip (see
cholesky.py), so the column step, which runs n times in sequence whatever the blocking, is
kept short (`_panel`, 27 nodes, 29 for LU and LUFactor: the pivot search is 15 of them, its
ArgMax ranking NaN as +inf, 2 nodes where NumPy's first-NaN rule took 6; taking two columns a
trip saves no nodes, the trip's fixed cost is small; inverting L11 after the Loop, 7 nodes a
column, was slower than carrying it, scaled, in the columns the panel has done with). The
matrix is padded with the identity to trips * b, b = ceil(n / trips), trips = ceil(n / BLOCK):
every panel has b columns, and a size the graph fixes gives constant trip counts (small ones
are unrolled by `counted_loop`). A trip of the Loop over panels factors its panel and applies
the panel's row order to the rows right of it; U12 = inv(L11) A12 and A22 -= L21 U12 are
MatMuls.

Det, SLogDet, Solve and MatrixInverse (`lu_upper`) carry only the trailing matrix and give
each panel's rows of U as they are final (no trip copies the whole matrix: at n = 1,000 that
halved the time); LUFactor and LU (`lu_factor`) carry the whole one, whose earlier L columns
later swaps reorder. Solve and MatrixInverse append b (the identity) to the matrix: the
factorisation leaves L^-1 P b there, and only the upper solve is left. A zero pivot
(singular) is found from U's diagonal once, after the factorisation. LU and LUFactor go on
past it as getrf does (the column is left unscaled), which is what LU (scipy.linalg.lu)
returns; `lu_upper` divides by it (2 nodes a column fewer): NaN then fills the rest of that
matrix, whose Det, SLogDet, Solve and MatrixInverse are the singular answer whatever it holds.
BLOCK: 40 (with the 27-node step, 40 to 64 were 5-12% faster than 32 at n = 1,000, Solve and
SLogDet; n = 200 is 5 panels of 40 with 40 or 48; 24 was slower).

Batch axes are flattened to one at the start and restored at the end.
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    arange,
    BIG,
    ceil_div,
    common_batch,
    counted_loop,
    cut,
    diagonal,
    dim,
    emit,
    fill_nan,
    flatten_batch,
    ints,
    loose,
    mirror,
    mT,
    non_finite,
    pad_identity,
    restore_batch,
    reverse,
    unstack,
    vec,
    zeros,
)
from ptonnx.decompositions.linalg.triangular import solve_lower
from ptonnx.decompositions.registry import decomposes

#: most columns per panel
BLOCK = 40


def take_rows(x: Ex, rows: Ex) -> Ex:
    """x[b, rows[b, i], :] for x (B, m, c) and int64 rows (B, k): one Gather on the flattened rows."""
    count, m = dim(x, 0), dim(x, 1)
    flat = x.op("Reshape", vec(count * m).op("Concat", x.op("Shape", start=2), axis=0))
    offsets = (arange(count) * m).op("Unsqueeze", axes=(1,))
    picked = flat.op("Gather", (rows + offsets).op("Reshape", ints(x.scope, -1)), axis=0)
    return picked.op("Reshape", vec(count, dim(rows, 1)).op("Concat", x.op("Shape", start=2), axis=0))


def _panel(p: Ex, m: Ex, w: Ex, zero_pivots: bool) -> tuple[Ex, Ex, Ex, Ex, Ex]:
    """Unblocked LU with partial pivoting of panels p (B, m, w): (the factored panels (B, m, w),
    their row order (B, m), the pivot row of each column (B, w), inv(L11) (B, w, w), the pivots'
    values (B, w)).

    Rows are not moved: a carried permutation `perm` (B, m, as rows of the flattened batch) says
    which row stands at each position, as getrf's swaps would have put it, so the candidates are
    compared in getrf's order (ties: the first) and a swap costs a few nodes on (B, m), not
    passes over the panel (swapping in place took three: Where, ReduceSum, Where). A step takes
    the pivot row and column j (the unscaled multipliers) out as per-trip outputs (they are
    final) and subtracts column j / pivot times the pivot row, but for column j. Column j then
    goes on as column j of inv(L11), scaled by -pivot j (it starts as column j, which is the
    multipliers times the pivot; the updates are linear): one Mul and one Sub pass over the
    panel, of w columns, a trip. Taken rows get garbage nobody reads (an inf pivot's row turns
    NaN: inf / inf): the search ranks them -1, and a NaN candidate first (as +inf). `zero_pivots`:
    a zero pivot leaves its column unscaled, as getrf (without it, its 0 / 0 makes the rest NaN).

    Without the mask, taken rows would mostly hold exact zeros (the step taking a row subtracts
    it from itself, multiplier pivot / pivot = 1), but an inf pivot's is NaN, and picking it
    again turned LAPACK's det = inf (one inf entry) and det = 0 (a zero row and an inf) into NaN."""
    count = dim(p, 0)
    idx, cols = arange(m), arange(w)
    offsets = (arange(count) * m).op("Unsqueeze", axes=(1,))  # (B, 1): row b*m starts matrix b
    perm = idx.op("Unsqueeze", axes=(0,)) + offsets
    steps = cols.op("Unsqueeze", axes=(1,))
    is_step = steps.eq(cols.op("Unsqueeze", axes=(0,)))  # (w, w)
    flat_rows, flat_mat = vec(count * m), vec(count * m, w)  # not -1: an empty batch

    def step(j: Ex, carried, invariants):
        (mat, perm), (idx, offsets, flat_rows, flat_mat, is_step) = carried, invariants
        at = j.op("Unsqueeze", axes=(0,))
        column = mat.op("Gather", at, axis=2)  # (B, m, 1), by row
        ordered = abs(column).op("Reshape", flat_rows).op("Gather", perm, axis=0)  # (B, m), by position
        # (B, 1): the first largest; a NaN ranks as +inf (the first NaN or inf), taken rows below all
        pos = where(idx >= j, ordered, -1.0).op("ArgMax", axis=1, keepdims=True, nan="inf")
        row = perm.op("Reshape", flat_rows).op("Gather", pos + offsets, axis=0)  # (B, 1)
        row_p = mat.op("Reshape", flat_mat).op("Gather", row, axis=0)  # (B, 1, w)
        perm = where(idx.eq(j), row, where(idx.eq(pos), perm.op("Gather", at, axis=1), perm))
        pivot = row_p.op("Gather", at, axis=2)
        multipliers = column / (where(pivot.eq(0.0), 1.0, pivot) if zero_pivots else pivot)
        update = where(is_step.op("Gather", at, axis=0), 0.0, row_p)
        return [mat - multipliers * update, perm], [row_p, pos, column]

    (_, perm), (rows, pivots, columns) = counted_loop(w, [p, perm], [idx, offsets, flat_rows, flat_mat, is_step], step)
    # rows: (B, w, w), row t: -pivot_j inv(L11)[t, j] left of t, the pivot, U's row right of it
    rows = unstack(rows, vec(count, w, w), 1)
    pivot_values = rows.op("Reshape", vec(count, w * w)).op("Gather", cols * (w + 1), axis=1)
    # a zero pivot leaves its column unscaled, as getrf does (it holds zeros then): no 0 / 0
    safe = where(pivot_values.eq(0.0), 1.0, pivot_values).op("Unsqueeze", axes=(1,))
    # the multipliers (B, w, m) by row -> (B, m, w) by position
    low = mT(unstack(columns, vec(count, w, m), 1)).op("Reshape", flat_mat).op("Gather", perm, axis=0) / safe
    strict = steps > cols.op("Unsqueeze", axes=(0,))  # (w, w)
    factored = where(strict, cut(low, 1, 0, w), rows).op("Concat", cut(low, 1, w, m), axis=1)
    inverse = where(strict, -(rows / safe), is_step.cast(p.dtype))
    return factored, perm - offsets, unstack(pivots, vec(count, w), 1), inverse, pivot_values


def _blocking(n: Ex) -> tuple[Ex, Ex, Ex]:
    """(trips, b, size = trips * b): panels of b <= BLOCK columns, all equal."""
    trips = ceil_div(n, BLOCK).op("Max", 1)  # one trip for n = 0
    b = ceil_div(n, trips)
    return trips, b, trips * b


def lu_factor(a: Ex) -> tuple[Ex, Ex, Ex, Ex, Ex]:
    """LU of matrices a (B, n, n), padded to (B, s, s): (the packed L and U (B, s, s); the pivots
    (B, n) as getrf's; the row order (B, s): a[order] = L U; singular (B,): a pivot was exactly
    0; s). The Loop carries the whole matrix: later panels' row swaps reach L's earlier columns."""
    count, n = dim(a, 0), dim(a, 2)
    trips, b, size = _blocking(n)
    mat = pad_identity(a, size)
    order = arange(size).op("Unsqueeze", axes=(0,)).op("Expand", vec(count, size))

    def panel(t: Ex, carried, invariants):
        (mat, rows), (b, size) = carried, invariants
        k = t * b
        stop = k + b
        lower = cut(mat, 1, k, size)
        factored, local, pivots, inverse, _ = _panel(cut(lower, 2, k, stop), size - k, b, zero_pivots=True)
        lower = take_rows(lower, local)
        rows = cut(rows, 1, 0, k).op("Concat", take_rows(cut(rows, 1, k, size).op("Unsqueeze", axes=(2,)), local).op("Squeeze", axes=(2,)), axis=1)
        right = cut(lower, 2, stop, size)
        u12 = inverse.op("MatMul", cut(right, 1, 0, b))
        a22 = cut(right, 1, b, size) - cut(factored, 1, b, size).op("MatMul", u12)
        below = cut(lower, 2, 0, k).op("Concat", factored, u12.op("Concat", a22, axis=1), axis=2)
        return [cut(mat, 1, 0, k).op("Concat", below, axis=1), rows], [pivots + k]

    (mat, order), (pivots,) = counted_loop(trips, [mat, order], [b, size], panel,
                                           [loose(mat.value.type, 0), loose(order.value.type, 0)])
    pivots = cut(unstack(pivots, vec(count, size), 1), 1, 0, n)
    singular = diagonal(mat).eq(0.0).op("ReduceAny", axes=(1,), keepdims=False)
    return mat, pivots, order, singular, size


def lu_upper(a: Ex, rhs: Ex | None = None) -> tuple[Ex, Ex, Ex, Ex | None]:
    """U of LU of matrices a (B, n, n), padded to (B, s, s), and what Det and Solve need of it:
    (the pivots (B, n) as getrf's; U's diagonal (B, s); singular (B,): a pivot was exactly 0;
    if `rhs` (B, n, k) is given, the rows of U (B, s, s + k), L^-1 P rhs in the last k columns
    (the strict lower triangle holds L11, which an upper solve does not read)).

    The Loop carries only the trailing matrix (b rows and columns fewer a trip) and gives each
    panel's rows of U as they are final, so no trip copies the whole matrix."""
    count, n = dim(a, 0), dim(a, 2)
    trips, b, size = _blocking(n)
    mat = pad_identity(a, size)
    if rhs is not None:
        mat = mat.op("Concat", rhs.op("Concat", zeros(rhs, vec(count, size - n, dim(rhs, 2))), axis=1), axis=2)
    width = dim(mat, 2)
    invariants = [b] if rhs is None else [b, zeros(a, vec(count, b, size))]

    def panel(t: Ex, carried, invariants):
        (s,), b = carried, invariants[0]
        factored, local, pivots, inverse, values = _panel(cut(s, 2, 0, b), dim(s, 1), b, zero_pivots=False)
        right = cut(s, 2, b, BIG)
        u12 = inverse.op("MatMul", take_rows(right, cut(local, 1, 0, b)))
        a22 = take_rows(right, cut(local, 1, b, BIG)) - cut(factored, 1, b, BIG).op("MatMul", u12)
        out = [pivots + t * b, values]
        if rhs is not None:  # the panel's rows of U, zeros left of it (the width of a stacked value is fixed)
            left = cut(invariants[1], 2, 0, t * b)
            out.append(left.op("Concat", cut(factored, 1, 0, b), u12, axis=2))
        return [a22], out

    _, stacked = counted_loop(trips, [mat], invariants, panel, [loose(mat.value.type, 0)])
    pivots = cut(unstack(stacked[0], vec(count, size), 1), 1, 0, n)
    diag = unstack(stacked[1], vec(count, size), 1)
    singular = diag.eq(0.0).op("ReduceAny", axes=(1,), keepdims=False)
    rows = unstack(stacked[2], vec(count, size, width), 1) if rhs is not None else None
    return pivots, diag, singular, rows


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
    _, _, singular, rows = lu_upper(a, rhs)
    size = dim(rows, 1)
    x = _solve_upper(cut(rows, 2, 0, size), cut(rows, 2, size, size + dim(rhs, 2)))
    return cut(x, 1, 0, n), singular


@decomposes("LUFactor")
def lu_factor_op(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    n = dim(a, 2)
    lu, pivots, _, singular, _ = lu_factor(a)
    lu = cut(cut(lu, 1, 0, n), 2, 0, n)
    # inf or NaN: LAPACK's factors then depend on how its idamax orders NaN; NaN is the one
    # answer that is never a different finite number (the pivots are ptonnx's own there)
    return restore_batch(fill_nan(singular | non_finite(a), lu), batch, 2), restore_batch(pivots, batch, 1)


def _diagonal_and_parity(x: Ex) -> tuple[Ex, Ex, Ex]:
    pivots, diag, singular, _ = lu_upper(x)
    return diag, _swap_parity(pivots, diag), singular  # the padding's diagonal is 1


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
        a = mirror(a, lower)
    if kind == "pos":
        (low,) = emit(a.scope, "Cholesky", [a], lower=True)
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
    ok = (a.op("IsNaN") | a.op("IsInf")).op("ReduceAny", axes=tuple(range(a.value.type.ndim)), keepdims=False).op("Not")
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
