"""Schur: the real Schur form A = Z T Z^T by Householder reduction to Hessenberg form and the
Francis double-shift QR iteration (LAPACK's dgehd2 and dlahqr, wantt and wantz), then every 2 x 2
block standardised (dlanv2).

1. **Hessenberg** (`hessenberg.py`): n - 2 reflectors (dlarfg's), each applied to the whole matrix
   from both sides and accumulated in Q: a counted Loop of n - 2 trips, a few MatMuls each.
   Entries below the subdiagonal are then set to exactly 0.
2. **QR iteration** (`_francis`): a while-Loop (`iterate`); a trip does, for every matrix at once:
   - the negligible subdiagonals (dlahqr's test, Ahues and Tisseur's refinement, and anything
     below the safe minimum) set to exactly 0;
   - deflation: the bottom of the active window `hi` moves up to the last row i with
     h[i, i-1] and h[i-1, i-2] both nonzero (so every converged 1 x 1 or 2 x 2 block below it is
     done, several in one trip), the window starts at the last zero subdiagonal `lo` above it;
   - the shifts: the eigenvalues of the window's trailing 2 x 2 block (dlahqr's form: both equal
     to the one nearer h[i, i] when real), and its exceptional shifts after 10 and 20 iterations
     without deflation; a matrix that needs more than 30 max(10, n) of them fails (NaN);
   - the start m: the last m in [lo, hi - 2] where the bulge would not disturb h[m, m-1] beyond
     rounding (two consecutive small subdiagonals; dlahqr's test), for every m at once;
   - the bulge chase (`_chase`) over k = m, ..., hi - 1, each step a 3 x 3 reflector (2 x 2 at
     the end: its third component set to 0) applied to rows k..k+2 (all columns) and columns
     k..k+2 (all rows) of H, and to Z. The steps go in chunks of CHUNK (dlaqr5's accumulation):
     a chunk chases on a (CHUNK + 4)-square block of H around the diagonal and accumulates the
     reflectors' product U, which then reaches the rest of the block's rows and columns and Z in
     three MatMuls (a step copies the block, not the matrix: ONNX values are never updated in
     place). A batch chases over the union of its windows; a matrix outside its own gets the
     identity (tau = 0), so a single matrix chases only its window.
   The matrices are padded with the identity (never in a window): a row and column before them
   (a chunk's block starts one row above its first step) and CHUNK + 1 after (the block fits).
3. **Standard blocks** (`_standardise`): dlanv2 on every 2 x 2 block (h[p+1, p] != 0: blocks are
   disjoint), all rotations applied at once as one block-diagonal orthogonal G (T <- G^T T G,
   Z <- Z G), and the blocks' entries set to dlanv2's. Every subdiagonal entry is then exactly 0
   except in a 2 x 2 block with complex eigenvalues (equal diagonal entries, off-diagonal entries of
   opposite signs); no two consecutive subdiagonal entries are nonzero; below the subdiagonal is 0.

The matrix is scaled by a power of two near its largest magnitude first (exact), so 1e300 and
1e-300 neither overflow nor underflow. A matrix holding inf or NaN gives NaN for T and Z (zeros
stand in for it while the others iterate). Cost (ONNX nodes after the default passes): a chase
step is some 60 nodes (a chunk of CHUNK = 8 steps is unrolled into one Loop trip of 520 nodes),
an iteration's own work (tests, shifts, the start) 383 nodes a trip; a random 200 x 200 matrix
takes some 3 s (docs/limits.md).
"""

from __future__ import annotations

import numpy as np

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    BIG,
    UNROLL,
    arange,
    ceil_div,
    counted_loop,
    cut,
    dim,
    fill_nan,
    flatten_batch,
    int_scalar,
    ints,
    loose,
    mT,
    non_finite,
    pad_identity,
    power_of_two,
    restore_batch,
    static,
    vec,
    zeros,
)
from ptonnx.decompositions.linalg.hessenberg import hessenberg
from ptonnx.decompositions.linalg.schur_blocks import dlanv2
from ptonnx.decompositions.loop import iterate
from ptonnx.decompositions.registry import decomposes

#: dlamch('P') and dlamch('S') in float64
ULP = float(np.finfo(np.float64).eps)
SAFMIN = float(np.finfo(np.float64).tiny)
#: dlahqr's exceptional shifts: after KEXSH iterations without deflation, and its constants
KEXSH = 10
DAT1, DAT2 = 0.75, -0.4375
#: dlahqr's limit: a matrix fails (NaN) after ITERATIONS max(10, n) sweeps without a deflation
ITERATIONS = 30
#: a while-Loop needs a bound; the per-matrix limit (30 max(10, n) sweeps a deflation) stops it first
MAX_TRIPS = 1 << 40
#: bulge-chase steps per block (`_chase`; fewer for a size the graph fixes below CHUNK + 2); at most
#: UNROLL, so a chunk's steps are unrolled and their positions in the block are constants
CHUNK = 8
assert CHUNK <= UNROLL


def _not(x: Ex) -> Ex:
    return x.op("Not")


def _pick(x: Ex, idx: Ex) -> Ex:
    """x[b, idx[b]] for x (B, N) and int64 idx (B,) (clamped into range): (B,)."""
    count, size = dim(x, 0), dim(x, 1)
    safe = idx.op("Max", 0).op("Min", size - 1)
    return x.op("Reshape", vec(count * size)).op("Gather", safe + arange(count) * size, axis=0)


def _positions(size: Ex) -> dict[str, Ex]:
    """Where h[k + dr, k + dc] is in the flattened (N * N) matrices, for k = 0..N-1 (clamped)."""
    k = arange(size)
    last = size - 1

    def at(dr: int, dc: int) -> Ex:
        r = (k + dr).op("Max", 0).op("Min", last) if dr else k
        c = (k + dc).op("Max", 0).op("Min", last) if dc else k
        return r * size + c

    return {"d0": at(0, 0), "dm": at(-1, -1), "dp": at(1, 1), "s0": at(0, -1), "sm": at(-1, -2), "sp": at(1, 0),
            "s2": at(2, 1), "u0": at(-1, 0), "up": at(0, 1)}


NAMES = ("d0", "dm", "dp", "s0", "sm", "sp", "s2", "u0", "up")


def _entries(h: Ex, index: list[Ex], flat_shape: Ex) -> dict[str, Ex]:
    """h's entries near the diagonal, (B, N) each: d0 = h[k, k], dm = h[k-1, k-1], dp = h[k+1, k+1],
    s0 = h[k, k-1], sm = h[k-1, k-2], sp = h[k+1, k], s2 = h[k+2, k+1], u0 = h[k-1, k], up = h[k, k+1]."""
    flat = h.op("Reshape", flat_shape)
    return {name: flat.op("Gather", i, axis=1) for name, i in zip(NAMES, index, strict=True)}


def _chase(h: Ex, z: Ex, kmin: Ex, trips: Ex, m: Ex, hi: Ex, chasing: Ex, first: Ex, chunk: int) -> tuple[Ex, Ex]:
    """One double-shift sweep per chasing matrix, over k = kmin, ..., kmin + trips - 1: m, hi,
    chasing (B,) and the first reflector's vector `first` (B, 3, 1).

    In chunks of `chunk` steps (dlaqr5's accumulation): a chunk starting at k0 chases on the block
    h[p:p+L, p:p+L] (p = k0 - 1, L = chunk + 4: every entry its reflectors read or write) and
    accumulates their product U; then the rows of the block right of it, the columns above it and
    Z's columns get U in three MatMuls. A step so copies an L x L block, not the whole matrix (a
    Loop body's values are new tensors every trip). What depends only on k and the windows (which
    matrices reflect, the 2 x 2 reflector at the end, where to write) is computed for every step
    before the Loops and gathered by trip number: the step body is the arithmetic."""
    scope, count = h.scope, dim(h, 0)
    chunks = ceil_div(trips, chunk)
    width = chunk + 4
    k0 = kmin + arange(chunks) * chunk  # (C,)
    p = k0 - 1  # k0 >= 1: row 0 is the identity's
    ks = k0.op("Unsqueeze", axes=(1,)) + arange(int_scalar(scope, chunk)).op("Unsqueeze", axes=(0,))  # (C, c)
    at = dict(axes=(2, 3, 4))
    k5 = ks.op("Unsqueeze", **at)
    m5, hi5 = m.op("Unsqueeze", axes=(0, 1, 3, 4)), hi.op("Unsqueeze", axes=(0, 1, 3, 4))  # (1, 1, B, 1, 1)
    three = arange(int_scalar(scope, 3))
    at_m = m5.eq(k5)  # (C, c, B, 1, 1): the first reflector (from the shifts)
    active = chasing.op("Unsqueeze", axes=(0, 1, 3, 4)) & (m5 <= k5) & (hi5 > k5)
    rows_in = (three.op("Unsqueeze", axes=(1,)) + k5) <= hi5  # (C, c, B, 3, 1): the 2 x 2 reflector at k = hi - 1
    allow = (active & rows_in).cast(h.dtype)
    use_beta = active & at_m.op("Not")
    from_column = where(at_m, 0.0, allow)  # x = column * from_column + from_shifts
    from_shifts = where(at_m, first.op("Unsqueeze", axes=(0, 1)), 0.0) * allow
    e0 = Ex(scope, scope.constant(np.asarray([[1.0], [0.0], [0.0]], dtype=h.dtype)))
    idx = arange(int_scalar(scope, width))
    eye = idx.op("Unsqueeze", axes=(1,)).eq(idx.op("Unsqueeze", axes=(0,))).cast(h.dtype)
    u0 = eye.op("Unsqueeze", axes=(0,)).op("Expand", vec(count, int_scalar(scope, width), int_scalar(scope, width)))
    per_step = [from_column, from_shifts, use_beta]
    row = vec(count, int_scalar(scope, 1), int_scalar(scope, 3))  # (B, 3, 1) -> (B, 1, 3)

    def step(t: Ex, carried, invariants):
        (w, u), (from_column, from_shifts, use_beta, row, e0) = carried, invariants
        from_column, from_shifts, use_beta = (x.op("Gather", t, axis=0) for x in (from_column, from_shifts, use_beta))
        j = static(t)  # step j of the chunk is k = p + j + 1: rows j+1..j+3 of the block, column j
        start, stop, left = ints(t.scope, j + 1), ints(t.scope, j + 4), ints(t.scope, j)
        at_col = Ex(t.scope, t.scope.constant((np.arange(width) == j).reshape(1, width)))
        one = ints(t.scope, 1)
        rows = w.op("Slice", start, stop, one, axes=(1,))  # (B, 3, L): rows k..k+2
        column = rows.op("Gather", left, axis=2)  # (B, 3, 1): h[k:k+3, k-1]
        x = column * from_column + from_shifts  # 0 for a matrix that does not reflect here: tau = 0
        # dlarfg: beta = -sign(alpha) ||x||, tau = (beta - alpha) / beta, v = (1, x[1:] / (alpha - beta))
        alpha = cut(x, 1, 0, 1)  # (B, 1, 1)
        scale = abs(x).op("ReduceSum", axes=(1,), keepdims=True).op("Max", SAFMIN)
        tail = (x / scale) * (1.0 - e0)
        squares = (tail * tail).op("ReduceSum", axes=(1,), keepdims=True)
        norm = (squares + (alpha / scale) * (alpha / scale)).op("Sqrt") * scale
        none = squares.eq(0.0)
        beta = where(none, alpha, where(alpha >= 0.0, -norm, norm))
        tau = where(none, 0.0, (beta - alpha) / beta)
        v = tail * (scale / where(none, 1.0, alpha - beta)) + e0  # (B, 3, 1)
        tv = tau * v
        rows = rows - tv * v.op("Reshape", row).op("MatMul", rows)
        # column k-1 becomes (beta, 0, 0); at k = m, (h[m, m-1] (1 - tau), 0, 0) as dlahqr; a matrix
        # that does not reflect keeps its (h[k, k-1], 0, 0)
        fix = where(use_beta, beta, cut(column, 1, 0, 1) * (1.0 - tau)) * e0
        rows = where(at_col, fix, rows)
        zero, end = ints(t.scope, 0), ints(t.scope, BIG)
        w = w.op("Slice", zero, start, one, axes=(1,)).op("Concat", rows, w.op("Slice", stop, end, one, axes=(1,)), axis=1)
        tv_row = tv.op("Reshape", row)

        def columns(x: Ex) -> Ex:
            block = x.op("Slice", start, stop, one, axes=(2,))  # (B, L, 3)
            block = block - block.op("MatMul", v) * tv_row
            return x.op("Slice", zero, start, one, axes=(2,)).op("Concat", block, x.op("Slice", stop, end, one, axes=(2,)), axis=2)

        return [columns(w), columns(u)], []

    def one_chunk(i: Ex, carried, invariants):
        (h, z), (p, u0, row, e0, *per_step) = carried, invariants
        one = ints(i.scope, 1)
        lo = p.op("Gather", i.op("Unsqueeze", axes=(0,)), axis=0)  # (1,)
        up = lo + width
        zero, end = ints(i.scope, 0), ints(i.scope, BIG)
        block_rows = h.op("Slice", lo, up, one, axes=(1,))  # (B, L, N)
        w = block_rows.op("Slice", lo, up, one, axes=(2,))
        mine = [x.op("Gather", i, axis=0) for x in per_step]
        (w, u), _ = counted_loop(int_scalar(i.scope, chunk), [w, u0], [*mine, row, e0], step)
        right = mT(u).op("MatMul", block_rows.op("Slice", up, end, one, axes=(2,)))
        above = h.op("Slice", zero, lo, one, axes=(1,))  # (B, p, N)
        top = above.op("Slice", zero, lo, one, axes=(2,)).op(
            "Concat", above.op("Slice", lo, up, one, axes=(2,)).op("MatMul", u), above.op("Slice", up, end, one, axes=(2,)), axis=2)
        middle = block_rows.op("Slice", zero, lo, one, axes=(2,)).op("Concat", w, right, axis=2)
        h = top.op("Concat", middle, h.op("Slice", up, end, one, axes=(1,)), axis=1)
        z = z.op("Slice", zero, lo, one, axes=(2,)).op(
            "Concat", z.op("Slice", lo, up, one, axes=(2,)).op("MatMul", u), z.op("Slice", up, end, one, axes=(2,)), axis=2)
        return [h, z], []

    types = [loose(h.value.type, 1), loose(z.value.type, 1)]
    (h, z), _ = counted_loop(chunks, [h, z], [p, u0, row, e0, *per_step], one_chunk, types)
    return h, z


def _francis(h: Ex, z: Ex, n: Ex, chunk: int) -> tuple[Ex, Ex, Ex]:
    """The QR iteration on Hessenberg matrices h (B, N, N), N = n + 1 (the last row and column
    the identity's), accumulating into z: (T quasi-triangular, with every negligible subdiagonal
    exactly 0 and no two consecutive nonzero ones; Z; failed (B,))."""
    count, size = dim(h, 0), dim(h, 2)
    index = _positions(size)
    k = arange(size).op("Unsqueeze", axes=(0,))  # (1, N)
    flat_shape = vec(count, size * size)
    nf = n.cast(h.dtype)
    smlnum = SAFMIN * (nf / ULP)
    itmax = n.op("Max", 10) * ITERATIONS
    r = arange(size)
    is_sub = r.op("Unsqueeze", axes=(1,)).eq(r.op("Unsqueeze", axes=(0,)) + 1)  # (N, N): row = col + 1
    hi = n.op("Expand", vec(count))
    kdefl = int_scalar(h.scope, 0).op("Expand", vec(count))
    failed = hi < -1
    fixed = [*(index[name] for name in NAMES), k, flat_shape, n, smlnum, itmax, is_sub]

    def trip(_, state):
        (h, z, hi, kdefl, failed), fixed = state[:5], state[5:]
        index, (k, flat_shape, n, smlnum, itmax, is_sub) = fixed[:9], fixed[9:]
        e = _entries(h, index, flat_shape)
        d0, dm, dp, s0, sm, sp, s2, u0, up = (e[name] for name in NAMES)
        # negligible subdiagonals h[k, k-1] (dlahqr's tests, for every k at once)
        a_s = abs(s0)
        tst = abs(dm) + abs(d0)
        near = where(k >= 3, abs(sm), 0.0) + where(k + 1 <= n, abs(sp), 0.0)
        tst = where(tst.eq(0.0), tst + near, tst)
        ab, ba = a_s.op("Max", abs(u0)), a_s.op("Min", abs(u0))
        aa, bb = abs(d0).op("Max", abs(dm - d0)), abs(d0).op("Min", abs(dm - d0))
        s = aa + ab
        refined = (ba * (ab / s)) <= (bb * (aa / s) * ULP).op("Max", smlnum)
        zero = (a_s <= smlnum) | ((a_s <= tst * ULP) & refined) | (k < 2) | (k > n)  # (B, N)
        h = where(is_sub & zero.op("Unsqueeze", axes=(2,)), 0.0, h)
        # deflation: the new bottom is the last row with two nonzero subdiagonals (h[i, i-1], h[i-1, i-2])
        above = zero.op("Gather", (arange(dim(zero, 1)) - 1).op("Max", 0), axis=1)
        old = hi.op("Unsqueeze", axes=(1,))
        top = where(_not(zero) & _not(above) & (k <= old), k, -1).op("ReduceMax", axes=(1,), keepdims=False)
        lo = where(zero & (k <= top.op("Unsqueeze", axes=(1,))), k, 0).op("ReduceMax", axes=(1,), keepdims=False)
        kdefl = where(top.ne(hi), 0, kdefl)
        chasing = top >= 0
        kdefl = kdefl + chasing.cast("int64")
        over = chasing & (kdefl > itmax)
        failed = failed | over
        chasing = chasing & _not(over)
        hi = where(over, -1, top)
        # the shifts (dlahqr's, exceptional every KEXSH iterations without deflation)
        hii, hi1, hsub, hsup, hsub2 = (_pick(x, hi) for x in (d0, dm, s0, u0, sm))
        hll, hl1, hl2 = (_pick(x, lo) for x in (d0, sp, s2))
        ex2 = kdefl.op("Mod", 2 * KEXSH).eq(0)
        exceptional = kdefl.op("Mod", KEXSH).eq(0)
        s_ex = where(ex2, abs(hsub) + abs(hsub2), abs(hl1) + abs(hl2))
        diag_ex = s_ex * DAT1 + where(ex2, hii, hll)
        h11 = where(exceptional, diag_ex, hi1)
        h12 = where(exceptional, s_ex * DAT2, hsup)
        h21 = where(exceptional, s_ex, hsub)
        h22 = where(exceptional, diag_ex, hii)
        s = abs(h11) + abs(h12) + abs(h21) + abs(h22)
        s = where(s.eq(0.0), 1.0, s)
        h11, h12, h21, h22 = h11 / s, h12 / s, h21 / s, h22 / s
        tr = (h11 + h22) * 0.5
        det = (h11 - tr) * (h22 - tr) - h12 * h21
        rtdisc = abs(det).op("Sqrt")
        complex_ = det >= 0.0
        nearer = where(abs(tr + rtdisc - h22) <= abs(tr - rtdisc - h22), tr + rtdisc, tr - rtdisc)
        sr = (where(complex_, tr, nearer) * s).op("Unsqueeze", axes=(1,))  # both shifts' real part
        si = (where(complex_, rtdisc * s, 0.0)).op("Unsqueeze", axes=(1,))  # +- imaginary part
        # the first column of (H - s1)(H - s2) at every start m, and where two small subdiagonals allow it
        dd = d0 - sr
        s = abs(dd) + abs(si) + abs(sp)
        s = where(s.eq(0.0), 1.0, s)
        h21s = sp / s
        v1 = h21s * up + dd * (dd / s) + si * (si / s)
        v2 = h21s * (d0 + dp - sr - sr)
        v3 = h21s * s2
        s = abs(v1) + abs(v2) + abs(v3)
        s = where(s.eq(0.0), 1.0, s)
        v1, v2, v3 = v1 / s, v2 / s, v3 / s
        h00 = abs(s0) * (abs(v2) + abs(v3))
        h01 = abs(v1) * (abs(dm) + abs(d0) + abs(dp))
        lo_, hi_ = lo.op("Unsqueeze", axes=(1,)), hi.op("Unsqueeze", axes=(1,))
        start_ok = (k.eq(lo_) | (h00 <= h01 * ULP)) & (k >= lo_) & (k <= hi_ - 2)
        m = where(start_ok, k, -1).op("ReduceMax", axes=(1,), keepdims=False)
        first = _pick(v1, m).op("Unsqueeze", axes=(1,)).op("Concat", _pick(v2, m).op("Unsqueeze", axes=(1,)),
                                                          _pick(v3, m).op("Unsqueeze", axes=(1,)), axis=1)
        sentinel_lo, sentinel_hi = ints(h.scope, BIG), ints(h.scope, -1)
        kmin = where(chasing, m, BIG).op("Concat", sentinel_lo, axis=0).op("ReduceMin", axes=(0,), keepdims=False)
        kmax = where(chasing, hi - 1, -1).op("Concat", sentinel_hi, axis=0).op("ReduceMax", axes=(0,), keepdims=False)
        trips = (kmax - kmin + 1).op("Max", 0)
        h, z = _chase(h, z, kmin, trips, m, hi, chasing, first.op("Unsqueeze", axes=(2,)), chunk)
        keep_going = chasing.op("Concat", _false(chasing), axis=0).op("ReduceAny", axes=(0,), keepdims=False)
        return [h, z, hi, kdefl, failed, *fixed], keep_going

    final = iterate([h, z, hi, kdefl, failed, *fixed], trip, MAX_TRIPS)
    return final[0], final[1], final[4]


def _false(like: Ex) -> Ex:
    """A bool vector [False] (so a reduction over an empty batch has an element)."""
    return Ex(like.scope, like.scope.constant(np.asarray([False])))


def _standardise(h: Ex, z: Ex, n: Ex) -> tuple[Ex, Ex]:
    """dlanv2 on every 2 x 2 block of the converged h (B, N, N) (a nonzero h[p+1, p]), all rotations
    at once; then every entry off the blocks below the diagonal exactly 0."""
    count, size = dim(h, 0), dim(h, 2)
    index = _positions(size)
    e = _entries(h, [index[name] for name in NAMES], vec(count, size * size))
    k = arange(size)
    start = e["sp"].ne(0.0) & (k + 1 <= n)  # (B, N): a block at rows p, p+1
    a, b, c, d, cs, sn = dlanv2(e["d0"], e["up"], e["sp"], e["dp"])
    prev = (k - 1).op("Max", 0)
    after = start.op("Gather", prev, axis=1) & (k >= 1)  # row p+1 of a block

    def shifted(x: Ex) -> Ex:
        return x.op("Gather", prev, axis=1)

    ones = where(start, cs, 1.0)
    g_diag = where(after, shifted(cs), ones)
    g_sup = where(start, -sn, 0.0)  # g[p, p+1], by row
    g_sub = where(start, sn, 0.0)  # g[p+1, p], by column
    rows, cols = k.op("Unsqueeze", axes=(1,)), k.op("Unsqueeze", axes=(0,))
    is_diag, is_sup, is_sub = rows.eq(cols), (rows + 1).eq(cols), rows.eq(cols + 1)
    by_row, by_col = dict(axes=(2,)), dict(axes=(1,))
    g = where(is_diag, g_diag.op("Unsqueeze", **by_col),
              where(is_sup, g_sup.op("Unsqueeze", **by_row), where(is_sub, g_sub.op("Unsqueeze", **by_col), 0.0)))
    t = mT(g).op("MatMul", h).op("MatMul", g)
    z = z.op("MatMul", g)
    diag = where(start, a, where(after, shifted(d), e["d0"]))
    sub = where(after, shifted(c), 0.0)  # h[p+1, p], by row p+1
    t = where(is_diag, diag.op("Unsqueeze", **by_col), t)
    t = where(is_sub, sub.op("Unsqueeze", **by_row), t)
    t = where(is_sup & start.op("Unsqueeze", **by_row), b.op("Unsqueeze", **by_row), t)
    return where(rows > cols + 1, 0.0, t), z


def _front(x: Ex) -> Ex:
    """[1 0; 0 x] for matrices x (B, n, n)."""
    count, n = dim(x, 0), dim(x, 2)
    first = (arange(n + 1).eq(0)).cast(x.dtype).op("Expand", vec(count, int_scalar(x.scope, 1), n + 1))
    return first.op("Concat", zeros(x, vec(count, n, int_scalar(x.scope, 1))).op("Concat", x, axis=2), axis=1)


def schur(a: Ex) -> tuple[Ex, Ex]:
    """T and Z of matrices a (B, n, n): a = Z T Z^T."""
    n = dim(a, 2)
    bad = non_finite(a)
    a = where(bad.op("Unsqueeze", axes=(1, 2)), 0.0, a)
    scale = power_of_two(abs(a).op("ReduceMax", axes=(1, 2), keepdims=True))  # (B, 1, 1); an empty matrix: 1
    h, q = hessenberg(a / scale)
    # a chase is at most n - 2 steps: a size the graph fixes takes chunks no longer
    chunk = CHUNK if static(n) is None else max(1, min(CHUNK, static(n) - 2))
    # a row and column of the identity before it (a chunk's block starts a row before its first step)
    # and chunk + 1 after it (the block never passes the end): rows 1..n are the matrix's
    size = n + (chunk + 2)
    h, z, failed = _francis(pad_identity(_front(h), size), pad_identity(_front(q), size), n, chunk)
    t, z = _standardise(h, z, n)
    t = cut(cut(t, 1, 1, n + 1), 2, 1, n + 1) * scale
    z = cut(cut(z, 1, 1, n + 1), 2, 1, n + 1)
    return fill_nan(bad | failed, t), fill_nan(bad | failed, z)


@decomposes("Schur")
def schur_op(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    t, z = schur(a)
    return restore_batch(t, batch, 2), restore_batch(z, batch, 2)
