"""Eigh and Eigvalsh: two-sided cyclic Jacobi with the parallel (round-robin) ordering.

Why Jacobi: it is backward stable with relative accuracy for the eigenvalues (Demmel and
Veselic 1992), its step is a few elementwise formulas (no data-dependent shapes, no pivoting,
no deflation bookkeeping that a Loop body pays for on every trip), and its convergence is
quadratic (measured: 6 sweeps at n = 10, 11 at n = 200, 14 for graded or clustered spectra).
Householder tridiagonalisation with QR or divide and conquer (LAPACK's syevr, syevd) does fewer
flops but needs sequential recurrences of n steps per eigenvalue search and data-dependent
deflation; on graded matrices Jacobi is the more accurate (measured: relative error 5e-15 on
eigenvalues from 1 to 1e-19, LAPACK's 9e-13).

The matrix (its read triangle mirrored) is scaled by a power of two near its largest magnitude
(exact; no overflow at 1e300, no underflow at 1e-300) and padded to n' = even >= 2 rows (a pad
row and column of the identity, never rotated: their off-diagonal is zero). A round rotates the
n' / 2 disjoint pairs (p_i, q_i) = (i, i + n'/2) at once, with Rutishauser's
t = sign(theta) / (|theta| + sqrt(1 + theta^2)) from a_pp, a_qq, a_pq, and moves rows and columns
by one fixed permutation (the circle method: index 0 stays, the others move one place round) so
the next pairs are at (i, i + n'/2) again; after n' - 1 rounds (a sweep) every pair has met once
and the order is the original one. Rotation and move are one operator R on rows, R x = c x[first]
+ s x[second] (two row Gathers: O(n^2) a round, not an n x n MatMul), and A <- R (R A)^T (A is
symmetric; a Gather of columns costs some ten times one of rows plus a Transpose). The rotated
a_pq are then set to 0 (not left at the rotation's rounding error, which may stay above the
threshold for ever). A pair is rotated only while |a_pq| > EPS sqrt(|a_pp a_qq|) (the relative
test of Demmel and Veselic); the sweeps run until no pair of any matrix is due (tested for all
pairs at once after a sweep, `_unconverged`; a while-Loop, at most MAX_SWEEPS). Time: sweeps
x (n' - 1) trips of some 45 body nodes; at n = 200 it is the elementwise passes over the matrix
(some 15 a trip), at n <= 50 the nodes.

The eigenvalues are the diagonal, sorted ascending (the pad's set to inf to come last, then cut);
the eigenvectors are the accumulated rotations' rows, permuted with them. A matrix holding inf or
NaN in its read triangle gives NaN (it is not iterated: zeros stand in for it). The generalised
problem a v = w b v is reduced with b's Cholesky factor L: C = L^-1 a L^-T, v = L^-T y.
Batch axes are flattened to one; all matrices of a batch sweep until the last has converged.
"""

from __future__ import annotations

import numpy as np

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    arange,
    ceil_div,
    common_batch,
    counted_loop,
    cut,
    dim,
    emit,
    fill_nan,
    flatten_batch,
    mirror,
    mT,
    non_finite,
    pad_identity,
    power_of_two,
    restore_batch,
    round_robin,
    vec,
)
from ptonnx.decompositions.loop import iterate
from ptonnx.decompositions.registry import decomposes

EPS = float(np.finfo(np.float64).eps)
#: the most sweeps (quadratic convergence: 6 to 14 are needed up to n = 200)
MAX_SWEEPS = 30


def _rotation(flat: Ex, pp: Ex, qq: Ex, pq: Ex, sign: Ex) -> tuple[Ex, Ex]:
    """cos and sin of the rotations zeroing a_pq (cos 1, sin 0 where no rotation is due), shaped
    as the indices pp, qq, pq (each pair's entries, where they are in the flat matrices); the sin
    times `sign` (-1 for a p row, 1 for a q row). `flat`: the matrices (B, n'^2), scaled to |a| < 2.

    sqrt(|a_pp a_qq|) may underflow to 0 (both below 1e-154): then the pair is rotated, which is
    never wrong. theta^2 may overflow (|a_pq| < 1e-154 |a_qq - a_pp|): t = 0 then, and a_pq, set
    to 0 after the round, moves the eigenvalues by a_pq^2 / |a_qq - a_pp|, far below rounding."""
    app, aqq, apq = (flat.op("Gather", k, axis=1) for k in (pp, qq, pq))
    rotate = abs(apq) > (app * aqq).op("Abs").op("Sqrt") * EPS
    theta = (aqq - app) / where(rotate, apq + apq, 1.0)
    t = where(theta < 0.0, -sign, sign) / (abs(theta) + (theta * theta + 1.0).op("Sqrt"))
    t = where(rotate, t, 0.0)
    c = (t * t + 1.0).op("Sqrt").op("Reciprocal")
    return c, c * t


def _turn(x: Ex, c: Ex, s: Ex, first: Ex, second: Ex, axis: int) -> Ex:
    """x's rows (or columns) rotated in pairs and moved for the next round at once: row k of the
    result is c[k] x[first[k]] + s[k] x[second[k]] (first: where row k comes from, second: that
    row's partner; c, s: the row's cos and signed sin, moved alike)."""
    return c * x.op("Gather", first, axis=axis) + s * x.op("Gather", second, axis=axis)


def jacobi(a: Ex, vectors: bool) -> tuple[Ex, Ex | None]:
    """The converged matrices (B, n', n'), n' even, and (if `vectors`) the accumulated rotations
    J (B, n', n') with J a J^T diagonal: J's rows are the eigenvectors."""
    count, size = dim(a, 0), dim(a, 2)
    h = ceil_div(size, 2)
    new_p, new_q = round_robin(h)
    first = new_p.op("Concat", new_q, axis=0)  # where each row of the next round comes from
    i = arange(h)
    partner = (i + h).op("Concat", i, axis=0)
    second = partner.op("Gather", first, axis=0)
    # for row r of the next round: its pair k (it comes from row first[r], p_k = k or q_k = k + h),
    # where a_pp, a_qq, a_pq of that pair are in the flat matrix, and the sign of its sin
    is_p = first < h
    k = where(is_p, first, first - h)
    pp, qq, pq = (x.op("Unsqueeze", axes=(1,)) for x in (k * (size + 1), (k + h) * (size + 1), k * size + k + h))
    sign = where(is_p, -1.0, 1.0, like=a).op("Unsqueeze", axes=(1,))
    state = [a]
    if vectors:
        idx = arange(size)
        eye = idx.op("Unsqueeze", axes=(1,)).eq(idx.op("Unsqueeze", axes=(0,))).cast(a.dtype)
        state.append(eye.op("Unsqueeze", axes=(0,)).op("Expand", vec(count, size, size)))
    rounds = size - 1
    flat_shape = vec(count, size * size)
    # 0 where the pairs just rotated are after the move: their a_pq is set to 0, not left at the
    # rounding error of the rotation (which may exceed the threshold: sweeps without end). A
    # product, not a Where (some 5 times slower broadcast): every entry is finite here
    keep = first.op("Unsqueeze", axes=(0,)).ne(second.op("Unsqueeze", axes=(1,))).cast(a.dtype)
    fixed = [first, second, pp, qq, pq, flat_shape, keep, sign]

    def sweep(_, state):
        count = len(state) - 10
        mats, (rounds, off_diagonal), fixed = state[:count], state[count:count + 2], state[count + 2:]

        def one_round(_, carried, invariants):
            mats, (first, second, pp, qq, pq, flat_shape, keep, sign) = carried, invariants
            c, s = _rotation(mats[0].op("Reshape", flat_shape), pp, qq, pq, sign)  # (B, n', 1), by row
            out = [_turn(mT(_turn(mats[0], c, s, first, second, 1)), c, s, first, second, 1) * keep]
            if len(mats) > 1:  # the rotations' product, as rows
                out.append(_turn(mats[1], c, s, first, second, 1))
            return out, []

        mats, _ = counted_loop(rounds, mats, fixed, one_round)
        return [*mats, rounds, off_diagonal, *fixed], _unconverged(mats[0], off_diagonal)

    final = iterate([*state, rounds, _off_diagonal(size), *fixed], sweep, MAX_SWEEPS)
    return final[0], (final[1] if vectors else None)


def _off_diagonal(size: Ex) -> Ex:
    idx = arange(size)
    return idx.op("Unsqueeze", axes=(1,)).ne(idx.op("Unsqueeze", axes=(0,)))


def _unconverged(m: Ex, off_diagonal: Ex) -> Ex:
    """Whether the next sweep would rotate a pair of some matrix (B, n', n'): whether some
    |a_ij| > EPS sqrt(|a_ii a_jj|), i != j (no rotation changes what a sweep without rotations
    tests, so this is the test of every pair at once, and the sweep that would find nothing to
    rotate is saved). The smaller of |a_ij| and |a_ji|: a test true for it is true for what the
    rotation reads, so a sweep it asks for makes progress."""
    size = dim(m, 2)
    d = abs(m.op("Reshape", vec(dim(m, 0), size * size)).op("Gather", arange(size) * (size + 1), axis=1))
    bound = (d.op("Unsqueeze", axes=(2,)) * d.op("Unsqueeze", axes=(1,))).op("Sqrt") * EPS
    size_of = abs(m).op("Min", mT(abs(m)))  # a pair reads a_ij or a_ji (equal up to rounding)
    return ((size_of > bound) & off_diagonal).op("ReduceAny", axes=(0, 1, 2), keepdims=False)


def eigh(a: Ex, lower: bool, vectors: bool) -> tuple[Ex, Ex | None]:
    """Eigenvalues (B, n) ascending and eigenvectors (B, n, n) (columns) of a (B, n, n), read in
    its lower (or upper) triangle; NaN for a matrix holding inf or NaN there."""
    count, n = dim(a, 0), dim(a, 2)
    a = mirror(a, lower)
    bad = non_finite(a)
    a = where(bad.op("Unsqueeze", axes=(1, 2)), 0.0, a)
    scale = power_of_two(abs(a).op("ReduceMax", axes=(1, 2), keepdims=True))
    size = (ceil_div(n, 2) * 2).op("Max", 2)
    m, j = jacobi(pad_identity(a / scale, size), vectors)
    diag = m.op("Reshape", vec(count, size * size)).op("Gather", arange(size) * (size + 1), axis=1)
    diag = where(arange(size) < n, diag, float("inf"))  # the pad comes last
    values, order = (Ex(a.scope, v) for v in a.scope.builder.node("Sort", [diag.value], {"axis": 1}).outputs)
    w = cut(values, 1, 0, n) * scale.op("Squeeze", axes=(2,))
    w = where(bad.op("Unsqueeze", axes=(1,)), float("nan"), w)
    if not vectors:
        return w, None
    offsets = (arange(count) * size).op("Unsqueeze", axes=(1,))
    rows = j.op("Reshape", vec(count * size, size)).op("Gather", cut(order, 1, 0, n) + offsets, axis=0)
    v = mT(cut(rows, 2, 0, n))  # (B, n, n): column k is eigenvector k
    return w, fill_nan(bad, v)


def generalised(a: Ex, b: Ex, lower: bool, vectors: bool) -> tuple[Ex, Ex | None]:
    """a v = w b v through b = L L^T (IR Cholesky and SolveTriangular, decomposed in turn):
    eig(L^-1 a L^-T) = (w, y), v = L^-T y. A b that is not positive definite (its factor NaN
    while b is finite) raises LinAlgError, as scipy's eigh."""
    scope = a.scope
    (factor,) = emit(scope, "Cholesky", [b], lower=lower)
    low = factor if lower else mT(factor)
    b_bad = non_finite(mirror(b, lower))
    failed = factor.op("IsNaN").op("ReduceAny", axes=(1, 2), keepdims=False) & b_bad.op("Not")
    ok = failed.op("ReduceAny", axes=(0,), keepdims=False).op("Not")
    low = low.op("Check", ok, message="the leading minor of B is not positive definite: no eigenvalues or eigenvectors "
                  "were computed", exception="numpy.linalg:LinAlgError")
    full = mirror(a, lower)
    (half,) = emit(scope, "SolveTriangular", [low, full], lower=True, unit_diagonal=False, b_ndim=2)
    (c,) = emit(scope, "SolveTriangular", [low, mT(half)], lower=True, unit_diagonal=False, b_ndim=2)
    a_bad = non_finite(full)
    w, y = eigh(fill_nan(a_bad | b_bad, c), True, vectors)
    if not vectors:
        return w, None
    (v,) = emit(scope, "SolveTriangular", [mT(low), y], lower=False, unit_diagonal=False, b_ndim=2)
    return w, v


def _eigen(node, inputs, vectors: bool):
    lower = node.attrs["lower"]
    if len(inputs) == 2:
        a, b = common_batch(*inputs)
        a, batch = flatten_batch(a, 2)
        b, _ = flatten_batch(b, 2)
        w, v = generalised(a, b, lower, vectors)
    else:
        a, batch = flatten_batch(inputs[0], 2)
        w, v = eigh(a, lower, vectors)
    w = restore_batch(w, batch, 1)
    return (w, restore_batch(v, batch, 2)) if vectors else w


@decomposes("Eigh")
def eigh_op(node, inputs):
    return _eigen(node, inputs, True)


@decomposes("Eigvalsh")
def eigvalsh_op(node, inputs):
    return _eigen(node, inputs, False)

