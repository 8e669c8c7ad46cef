"""Block one-sided Jacobi (`svd.jacobi` from k' = BLOCK_FROM on): the rows of w (B, k', k') in
blocks of BLOCK rows, padded with zero rows to an even count N of blocks.

A sweep visits every row pair once, in a cyclic order that moves little data: first each block's
own pairs (all blocks at once: the blocks' Gram matrices (B N, BLOCK, BLOCK), one batched MatMul;
BLOCK - 1 rounds of rotations on them; the blocks replaced by V times themselves, one more), then
the cross pairs of the blocks, block pairs met in the round-robin ordering over blocks (N - 1
block rounds, a Loop, N / 2 disjoint block pairs a round): a block round stacks each pair's
2 BLOCK rows Z, forms G = Z Z^T, rotates the BLOCK^2 cross pairs (i, BLOCK + j) of G in BLOCK
rounds of BLOCK disjoint pairs (BLOCK + (i + r) mod BLOCK in round r), accumulating the rotations
V, and replaces Z by V Z. A pair's rotation is the scalar round's (`svd._rotate`'s formulas, on
G's entries, which each rotation updates, not on the rows; the tolerance test on squares), and
skipped for a pair orthogonal to the tolerance or with a row of squared norm at most `small`
(rounding noise, which no rotation makes orthogonal: tested once a block round, on G's diagonal,
where the scalar round tests its updated norms). So a sweep is BLOCK - 1 + BLOCK (N - 1)
rounds of disjoint rotations (about k' + BLOCK, the scalar sweep's k' - 1), but each a few dozen
nodes on (B N / 2, 2 BLOCK, 2 BLOCK) matrices, unrolled (the pairs are constants), where a scalar
round passes over all k'^2 entries some 10 times; the rows themselves are touched by two MatMuls a
block round. A rotation's matrix is built from (cos, sin) by a MatMul with a constant scatter
and applied by small MatMuls. Sweeps run while some rotation was made and the rows' Gram test
(`svd._unorthogonal`) finds a pair not orthogonal, as the scalar ones.

Measured (NumPy model, n = 50 and 200, random, graded, positive definite, repeated values):
sweeps as the scalar ordering's (9 at n = 200 random, 16 with repeated values), values as
accurate; onnxruntime, one thread: SVD at n = 200 in about 0.55 of the scalar rounds' time, Eigh
0.4, n = 1,000 in a fifth; faster from about n = 48 on, slower below about 30. One inner sweep of
all 2 BLOCK rows' pairs in every block round (2 BLOCK - 1 rounds: twice the small rounds) was
slower than the scalar rounds; so were BLOCK 4, 12 and 16 than 8 at n = 200.
"""

from __future__ import annotations

import numpy as np

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    ceil_div,
    counted_loop,
    cut,
    dim,
    int_scalar,
    ints,
    mT,
    round_robin,
    vec,
    zeros,
)
from ptonnx.decompositions.loop import iterate

#: rows a block (a pair of blocks: a 2 BLOCK x 2 BLOCK Gram matrix)
BLOCK = 8


def _round_robin(m: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The round-robin pairs (p, q) of indices 0..m-1 (m even): m - 1 rounds, every pair once."""
    h = m // 2
    i = np.arange(h)
    new_p = np.where(i == 0, 0, np.where(i == 1, h, i - 1))
    new_q = np.where(i == h - 1, (h - 1) + int(h == 1), h + i + 1)
    order, rounds = np.arange(m), []
    for _ in range(m - 1):
        rounds.append((order[:h].copy(), order[h:].copy()))
        order = order[np.concatenate([new_p, new_q])]
    return rounds


def _cross(b: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The pairs (i, b + j) of two stacked blocks of b rows: b rounds, every cross pair once."""
    return [(np.arange(b), b + (np.arange(b) + r) % b) for r in range(b)]


def _small_sweep(g: Ex, rounds: list[tuple[np.ndarray, np.ndarray]], tolerance2: Ex, small: Ex) -> tuple[Ex, Ex]:
    """Cyclic Jacobi rotations, in `rounds` of disjoint pairs, of the symmetric g (M, m, m):
    (V, rotated), V orthogonal, V g V^T with those pairs' entries annihilated in turn, and
    whether each rotation was made (bool (M, *)). A pair is rotated when
    g_pq^2 > tolerance2 g_pp g_qq, and neither g_pp nor g_qq was at most `small` (M, 1) at the
    start (such a row's entries are zeroed: no rotation moves it)."""
    scope = g.scope
    m = 1 + max(int(i.max()) for pair in rounds for i in pair)
    diag = Ex(scope, scope.constant(np.arange(m) * (m + 1)))
    keep = (g.op("Reshape", ints(scope, -1, m * m)).op("Gather", diag, axis=1) > small).cast(g.dtype)
    g = g * keep.op("Unsqueeze", axes=(2,)) * keep.op("Unsqueeze", axes=(1,))
    v, flags = None, []
    for r, (p, q) in enumerate(rounds):
        h = len(p)
        at = Ex(scope, scope.constant(np.concatenate([p * m + p, q * m + q, p * m + q])))
        picked = g.op("Reshape", ints(scope, -1, m * m)).op("Gather", at, axis=1)
        split = scope.builder.node("Split", [picked.value, ints(scope, h, h, h).value], {"axis": 1, "num_outputs": 3})
        app, aqq, apq = (Ex(scope, x) for x in split.outputs)
        rotate = (apq * apq) > tolerance2 * (app * aqq)
        u = (aqq - app) / apq  # 2 cot(2 theta): t = tan(theta), the smaller root of t^2 + u t - 1
        t = where(u < 0.0, -2.0, 2.0, like=u) / (abs(u) + (u * u + 4.0).op("Sqrt"))
        t = where(rotate, t, 0.0)
        c = (t * t + 1.0).op("Sqrt").op("Reciprocal")
        # the rotation (pairs covering 0..m-1): cos to (p, p), (q, q), sin to (p, q), -sin to (q, p)
        scatter = np.zeros((2 * h, m * m), dtype=g.dtype)
        scatter[np.arange(h), p * m + p] = scatter[np.arange(h), q * m + q] = 1.0
        scatter[h + np.arange(h), p * m + q] = 1.0
        scatter[h + np.arange(h), q * m + p] = -1.0
        rot = c.op("Concat", c * t, axis=1).op("MatMul", Ex(scope, scope.constant(scatter)))
        rot = rot.op("Reshape", ints(scope, -1, m, m))  # columns p, q -> c p - s q, s p + c q
        rot_t = mT(rot)
        v = rot_t if v is None else rot_t.op("MatMul", v)
        if r < len(rounds) - 1:
            g = rot_t.op("MatMul", g).op("MatMul", rot)
        flags.append(rotate)
    return v, flags[0].op("Concat", *flags[1:], axis=1)


def block_jacobi(w: Ex, small: Ex, tolerance: Ex, max_sweeps: int, unorthogonal) -> tuple[Ex, Ex]:
    """Block one-sided Jacobi on the rows of w (B, k', k'): (J w, still rotating after
    `max_sweeps`); `unorthogonal(rows, tolerance, small)` is the Gram test."""
    scope = w.scope
    count, kk = dim(w, 0), dim(w, 2)
    h = ceil_div(ceil_div(kk, BLOCK), 2)  # block pairs
    blocks = h * 2
    rows = blocks * BLOCK
    y = w.op("Concat", zeros(w, vec(count, rows - kk, kk)), axis=1)
    # block i of [P; Q] (P_i with Q_i) sits at 2 i (P) or 2 (i - h) + 1 (Q): pairs are adjacent
    new_p, new_q = round_robin(h)
    place = lambda x: where(x < h, x * 2, (x - h) * 2 + 1)  # noqa: E731
    order = place(new_p).op("Unsqueeze", axes=(1,)).op("Concat", place(new_q).op("Unsqueeze", axes=(1,)), axis=1)
    order = order.op("Reshape", ints(scope, -1))
    one = int_scalar(scope, 1)
    fixed = [
        order,
        vec(int_scalar(scope, -1), int_scalar(scope, 2 * BLOCK), kk),  # as block pairs
        vec(int_scalar(scope, -1), int_scalar(scope, BLOCK), kk),  # as blocks
        vec(count, blocks, int_scalar(scope, BLOCK), kk),  # blocks on an axis of their own
        vec(count, rows, kk),
        tolerance * tolerance,
        # small (B, 1, 1) for each block pair (B h, 1) and block (B N, 1), as they are stacked
        small.op("Expand", vec(count, h, one)).op("Reshape", ints(scope, -1, 1)),
        small.op("Expand", vec(count, blocks, one)).op("Reshape", ints(scope, -1, 1)),
        (blocks - 1).op("Max", 0),
        tolerance,
        small,
    ]

    def sweep(_, state):
        y, _, *fixed = state
        order, as_pairs, as_blocks, by_block, as_rows, tolerance2, small_pairs, small_blocks, trips, tolerance, small = fixed
        # every block's own pairs first (all blocks at once), then every cross pair of blocks
        z = y.op("Reshape", as_blocks)
        v, within = _small_sweep(z.op("MatMul", mT(z)), _round_robin(BLOCK), tolerance2, small_blocks)
        y = v.op("MatMul", z).op("Reshape", as_rows)

        def one_round(_, carried, invariants):
            (y,), (order, as_pairs, by_block, as_rows, tolerance2, small_pairs) = carried, invariants
            z = y.op("Reshape", as_pairs)
            v, rotated = _small_sweep(z.op("MatMul", mT(z)), _cross(BLOCK), tolerance2, small_pairs)
            z = v.op("MatMul", z).op("Reshape", by_block).op("Gather", order, axis=1)
            return [z.op("Reshape", as_rows)], [rotated.op("ReduceAny", axes=(0, 1), keepdims=False)]

        (y,), (rotated,) = counted_loop(trips, [y], [order, as_pairs, by_block, as_rows, tolerance2, small_pairs], one_round)
        moved = rotated.op("ReduceAny", axes=(0,)) | within.op("ReduceAny", axes=(0, 1))
        going = moved & unorthogonal(y, tolerance, small)
        return [y, going, *fixed], going

    start = Ex(scope, scope.constant(np.asarray(True)))
    y, going, *_ = iterate([y, start, *fixed], sweep, max_sweeps)
    return cut(y, 1, 0, kk), going
