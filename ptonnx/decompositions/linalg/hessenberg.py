"""Householder reduction to upper Hessenberg form (LAPACK's dgehd2): the first stage of the real
Schur form (`schur.py`). Unblocked: a counted Loop of n - 2 reflectors (dlarfg's), each applied to
the whole matrix from both sides and accumulated in Q (a few MatMuls a trip); the entries below
the subdiagonal are then set to exactly 0 (what the reflectors left there is rounding)."""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import arange, counted_loop, dim, mT, vec


def hessenberg(a: Ex) -> tuple[Ex, Ex]:
    """H = Q^T a Q upper Hessenberg and Q orthogonal, for a (B, n, n) (dgehd2's reflectors)."""
    count, n = dim(a, 0), dim(a, 2)
    rows = arange(n)
    eye = rows.op("Unsqueeze", axes=(1,)).eq(rows.op("Unsqueeze", axes=(0,))).cast(a.dtype)
    q0 = eye.op("Unsqueeze", axes=(0,)).op("Expand", vec(count, n, n))

    def step(j: Ex, carried, invariants):
        (h, q), (rows,) = carried, invariants
        x = h.op("Gather", j, axis=2)  # (B, n): column j
        alpha = x.op("Gather", (j + 1).op("Unsqueeze", axes=(0,)), axis=1)  # (B, 1)
        tail = where(rows > j + 1, x, 0.0)
        squares = (tail * tail).op("ReduceSum", axes=(1,), keepdims=True)
        none = squares.eq(0.0)
        norm = (squares + alpha * alpha).op("Sqrt")
        beta = where(alpha >= 0.0, -norm, norm)
        tau = where(none, 0.0, (beta - alpha) / where(none, 1.0, beta))
        v = where(rows.eq(j + 1), 1.0, tail / where(none, 1.0, alpha - beta)).op("Unsqueeze", axes=(2,))  # (B, n, 1)
        tv = tau.op("Unsqueeze", axes=(2,)) * v
        h = h - tv * mT(v).op("MatMul", h)
        h = h - h.op("MatMul", v) * mT(tv)
        q = q - q.op("MatMul", v) * mT(tv)
        return [h, q], []

    (h, q), _ = counted_loop((n - 2).op("Max", 0), [a, q0], [rows], step)
    r, c = rows.op("Unsqueeze", axes=(1,)), rows.op("Unsqueeze", axes=(0,))
    return where(r > c + 1, 0.0, h), q
