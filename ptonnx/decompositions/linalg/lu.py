"""LU with partial pivoting (LAPACK's getrf), and what is computed from it: LU, LUFactor, Solve,
Det, SLogDet (`determinant.py`), MatrixInverse, PivotToPermutations.

Blocked, as getrf. onnxruntime's Loop costs about 1 us a body node a trip (see cholesky.py), so
the column step, which runs n times in sequence whatever the blocking, is kept short (`_panel`,
27 nodes with the Loop's condition, 29 for LU and LUFactor: the pivot search is 15 of them, its
ArgMax ranking NaN as +inf, 2 nodes where NumPy's first-NaN rule took 6; taking two columns a
trip saves no nodes, the trip's fixed cost is small; inverting L11 after the Loop, 7 nodes a
column, was slower than carrying it, scaled, in the columns the panel has done with). The step
works on the panel transposed, (b, B, m): a column is a contiguous row and the rank-1 update
broadcasts over rows of m (as (B, m, b), over rows of b, its Mul was 2.5 times slower at
m = 500: 6-11% of SLogDet and Solve at n = 1,000). The matrix is padded with the identity to
trips * b, b = ceil(n / trips), trips = ceil(n / BLOCK): every panel has b columns, and a size
the graph fixes gives constant trip counts (small ones are unrolled by `counted_loop`).

LUFactor and LU (`lu_factor`) are right-looking: the Loop over panels carries the whole matrix
(later swaps reorder earlier L columns); a trip factors its panel and applies the panel's row
order to the rows right of it; U12 = inv(L11) A12 and A22 -= L21 U12 are MatMuls.

Det, SLogDet, Solve and MatrixInverse (`lu_upper`) are left-looking (Crout's order, as
cholesky.py): a trip reads its panel's columns of the matrix in the current row order less
L_done U_done (one MatMul), factors it, and gives the panel's rows of U right of it as
inv(L11) (A12 - L10 U_done), as they are final; the Loop carries L's columns done for the rows
not pivoted yet and U's rows done from the panel's column on, no trailing matrix. Right-looking
(carrying the trailing matrix, four passes over it a trip: the columns' Slice, the rows' Gather,
MatMul, Sub) was 8-14% slower at n = 1,000 (SLogDet, Solve) and 1-3% at n = 200, the flops the
same; carrying the whole matrix, as `lu_factor`, had been twice slower still at n = 1,000. With
the transposed panel, 16-18% faster than before at n = 1,000, 4-6% at n = 200, 1-2% slower at
n <= 50 (a panel trip is 66 nodes, 69 with b, not 85 and 89, but more run outside the Loop).
Both are getrf's to rounding; left-looking rounds differently from the third panel on (n > 80).
Solve and MatrixInverse append b (the identity) to the matrix: the factorisation leaves
L^-1 P b there, and only the upper solve is left. A zero pivot
(singular) is found from U's diagonal once, after the factorisation. LU and LUFactor go on
past it as getrf does (the column is left unscaled), which is what LU (scipy.linalg.lu)
returns; `lu_upper` divides by it (2 nodes a column fewer): NaN then fills the rest of that
matrix, whose Det, SLogDet, Solve and MatrixInverse are the singular answer whatever it holds.
BLOCK: 40 (with the 27-node step, 40 to 64 were 5-12% faster than 32 at n = 1,000, Solve and
SLogDet; n = 200 is 5 panels of 40 with 40 or 48; 24 was slower; with the transposed panel,
still right-looking, 64 and 96 were 1-9% and 6-28% slower than 40 at n = 50 to 1,000;
left-looking, 32 and 24 were 2-8% and 2-4% slower at n = 1,000).

Tried and dropped (same-run medians on a loaded machine, SLogDet and Solve at n = 10 to 1,000):
the panel in sub-panels, LAPACK's dgetrf2 idea (5 groups of 8 columns, unrolled, each group's
steps updating only its columns, then the rest of the panel in one MatMul by the group's
pivot rows, inv(L11 of the group) times them; 47 nodes a group, in an If on m >= 160): SLogDet
3-6% slower at every size, Solve 0-6%; 2 groups of 20: 4-5% slower at n = 200 and 1,000; BLOCK
80 or 120 in groups of 16 to 24 from n = 600 on: -1 to +2% at n = 1,000. At m = 500 the rank-1
update (Mul, Sub over 40 x m) is some 10 us of a step's ~50 (single-node models: about 1 us a
node, onnxruntime's Gather of m elements by index 5 us, its Where 2-3 us), and a group's nodes
and its MatMul of inner size 8 (40 x 8 x 500: 23 us, 14 GFlop/s) cost what its 8 steps save.
Taken positions read as a -1 appended to |column| (a Max with a per-step table in place of the
mask's Where and Equal, the pivot rows a per-trip output): 2-6% slower at n = 50 to 1,000.

Batch axes are flattened to one at the start and restored at the end.
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg import one_by_one
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
    loose,
    mirror,
    mT,
    non_finite,
    pad_identity,
    restore_batch,
    reverse,
    take_rows,
    unstack,
    vec,
    zeros,
)
from ptonnx.decompositions.linalg.triangular import solve_lower
from ptonnx.decompositions.registry import decomposes

#: most columns per panel
BLOCK = 40


def _panel(p: Ex, m: Ex, w: Ex, zero_pivots: bool, count: Ex | None = None) -> tuple[Ex, Ex, Ex, Ex, Ex, Ex]:
    """Unblocked LU with partial pivoting of panels p (B, m, w) (`count`: B, if the caller has it):
    (the factored panels (B, m, w), their row order (B, m), the same as rows of the flattened batch
    (B * m), the pivot row of each column (B, w), inv(L11) (B, w, w), the pivots' values (B, w)).

    Rows are not moved: a carried permutation `perm` (B, m, as rows of the flattened batch) says
    which row stands at each position, as getrf's swaps would have put it, so the candidates are
    compared in getrf's order (ties: the first) and a swap costs a few nodes on (B, m), not
    passes over the panel (swapping in place took three: Where, ReduceSum, Where). A step takes
    the pivot row and column j (the unscaled multipliers) out as per-trip outputs (they are
    final) and subtracts column j / pivot times the pivot row, but for column j. Column j then
    goes on as column j of inv(L11), scaled by -pivot j (it starts as column j, which is the
    multipliers times the pivot; the updates are linear): one Mul and one Sub pass over the
    panel, of w columns, a trip (the panel as (w, B, m): see above). Taken rows get garbage nobody reads (an inf pivot's row turns
    NaN: inf / inf): the search ranks them -1, and a NaN candidate first (as +inf). `zero_pivots`:
    a zero pivot leaves its column unscaled, as getrf (without it, its 0 / 0 makes the rest NaN).

    Without the mask, taken rows would mostly hold exact zeros (the step taking a row subtracts
    it from itself, multiplier pivot / pivot = 1), but an inf pivot's is NaN, and picking it
    again turned LAPACK's det = inf (one inf entry) and det = 0 (a zero row and an inf) into NaN."""
    count = dim(p, 0) if count is None else count
    idx, cols = arange(m), arange(w)
    offsets = (arange(count) * m).op("Unsqueeze", axes=(1,))  # (B, 1): row b*m starts matrix b
    perm = idx.op("Unsqueeze", axes=(0,)) + offsets
    steps = cols.op("Unsqueeze", axes=(1,))
    is_step = steps.eq(cols.op("Unsqueeze", axes=(0,)))  # (w, w)
    flat_rows, flat_mat = vec(count * m), vec(w, count * m)  # not -1: an empty batch

    def step(j: Ex, carried, invariants):
        (mat, perm), (idx, offsets, flat_rows, flat_mat, is_step) = carried, invariants
        column = mat.op("Gather", j, axis=0)  # (B, m), by row
        ordered = abs(column).op("Reshape", flat_rows).op("Gather", perm, axis=0)  # (B, m), by position
        # (B, 1): the first largest; a NaN ranks as +inf (the first NaN or inf), taken rows below all
        pos = where(idx >= j, ordered, -1.0).op("ArgMax", axis=1, keepdims=True, nan="inf")
        row = perm.op("Reshape", flat_rows).op("Gather", pos + offsets, axis=0)  # (B, 1)
        row_p = mat.op("Reshape", flat_mat).op("Gather", row, axis=1)  # (w, B, 1)
        perm = where(idx.eq(j), row, where(idx.eq(pos), perm.op("Gather", j.op("Unsqueeze", axes=(0,)), axis=1), perm))
        pivot = row_p.op("Gather", j, axis=0)  # (B, 1)
        multipliers = column / (where(pivot.eq(0.0), 1.0, pivot) if zero_pivots else pivot)
        update = where(is_step.op("Gather", j, axis=0), 0.0, row_p)  # (w, B, 1)
        return [mat - multipliers * update, perm], [row_p, pos, column]

    by_column = p.op("Transpose", perm=(2, 0, 1))
    (_, perm), (rows, pivots, columns) = counted_loop(w, [by_column, perm], [idx, offsets, flat_rows, flat_mat,
                                                                          is_step.op("Unsqueeze", axes=(2, 3))], step)
    # rows: (w, w, B, 1) -> (B, w, w), row t: -pivot_j inv(L11)[t, j] left of t, the pivot, U's row right of it
    rows = rows.op("Transpose", perm=(2, 0, 1, 3)).op("Reshape", vec(count, w, w))
    pivot_values = rows.op("Reshape", vec(count, w * w)).op("Gather", cols * (w + 1), axis=1)
    # a zero pivot leaves its column unscaled, as getrf does (it holds zeros then): no 0 / 0
    safe = where(pivot_values.eq(0.0), 1.0, pivot_values).op("Unsqueeze", axes=(1,))
    # the multipliers (w, B, m) by row -> (B, m, w) by position
    low = mT(unstack(columns, vec(count, w, m), 1)).op("Reshape", vec(count * m, w)).op("Gather", perm, axis=0) / safe
    strict = steps > cols.op("Unsqueeze", axes=(0,))  # (w, w)
    factored = where(strict, cut(low, 1, 0, w), rows).op("Concat", cut(low, 1, w, m), axis=1)
    inverse = where(strict, -(rows / safe), is_step.cast(p.dtype))
    return factored, perm - offsets, perm, unstack(pivots, vec(count, w), 1), inverse, pivot_values


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
        factored, local, _, pivots, inverse, _ = _panel(cut(lower, 2, k, stop), size - k, b, zero_pivots=True)
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

    Left-looking: the Loop carries the rows not yet pivoted as their row numbers in the matrix
    (in getrf's current order) and their L columns done so far (B, m, k), and the rows of U done,
    from the panel's column on (B, k, width - k). A trip reads the panel's columns of those rows
    from the matrix, less L_done U_done(panel columns) (one MatMul), factors it, and gives the
    panel's rows of U right of it as inv(L11) (A12 - L10 U_done(right)): no pass over the
    trailing matrix, only over L_done (m x k) and U_done (k x width - k)."""
    count, n = dim(a, 0), dim(a, 2)
    trips, b, size = _blocking(n)
    mat = pad_identity(a, size)
    if rhs is not None:
        mat = mat.op("Concat", rhs.op("Concat", zeros(rhs, vec(count, size - n, dim(rhs, 2))), axis=1), axis=2)
    width = dim(mat, 2)
    flat = mat.op("Reshape", vec(count * size, width))  # the rows of every matrix, one after another
    order = arange(size).op("Unsqueeze", axes=(0,)) + (arange(count) * size).op("Unsqueeze", axes=(1,))  # (B, s): rows of `flat`
    invariants = [mat, flat, size, b, count, vec(count * size, b)]
    invariants += [] if rhs is None else [zeros(a, vec(count, b, size))]

    def panel(t: Ex, carried, invariants):
        (low, up, order), (mat, flat, size, b, count, panel_shape) = carried, invariants[:6]
        k = t * b
        m = size - k
        stop = k + b
        # the panel's columns of the rows left, in getrf's order, less what the panels done take off
        columns = cut(mat, 2, k, stop).op("Reshape", panel_shape).op("Gather", order, axis=0)
        p = columns - low.op("MatMul", cut(up, 2, 0, b))
        # picked (B, m): rows of the flattened (B * m) carried values, the panel's pivot rows first
        factored, _, picked, pivots, inverse, values = _panel(p, m, b, zero_pivots=False, count=count)
        top, rest = cut(picked, 1, 0, b), cut(picked, 1, b, BIG)
        order = order.op("Reshape", vec(count * m))
        done = low.op("Reshape", vec(count * m, k))
        right = cut(up, 2, b, BIG)  # (B, k, width - stop)
        a12 = cut(flat.op("Gather", order.op("Gather", top, axis=0), axis=0), 2, stop, BIG)
        u12 = inverse.op("MatMul", a12 - done.op("Gather", top, axis=0).op("MatMul", right))
        low = done.op("Gather", rest, axis=0).op("Concat", cut(factored, 1, b, BIG), axis=2)
        out = [pivots + k, values]
        if rhs is not None:  # the panel's rows of U, zeros left of it (the width of a stacked value is fixed)
            left = cut(invariants[6], 2, 0, k)
            out.append(left.op("Concat", cut(factored, 1, 0, b), u12, axis=2))
        return [low, right.op("Concat", u12, axis=1), order.op("Gather", rest, axis=0)], out

    carried = [cut(mat, 2, 0, 0), cut(mat, 1, 0, 0), order]  # no L columns, no U rows yet
    _, stacked = counted_loop(trips, carried, invariants, panel,
                              [loose(mat.value.type, 1), loose(mat.value.type, 1), loose(order.value.type, 1)])
    pivots = cut(unstack(stacked[0], vec(count, size), 1), 1, 0, n)
    diag = unstack(stacked[1], vec(count, size), 1)
    singular = diag.eq(0.0).op("ReduceAny", axes=(1,), keepdims=False)
    rows = unstack(stacked[2], vec(count, size, width), 1) if rhs is not None else None
    return pivots, diag, singular, rows


def swap_parity(pivots: Ex, like: Ex) -> Ex:
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
    if one_by_one.fixed_one_by_one(inputs[0]):
        return one_by_one.inverse(inputs[0])
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
