"""SolveSylvester (A X + X B = C): up to SMALL unknowns one LU of the Kronecker system (`kronecker`),
beyond it the Hessenberg-Schur idea of Golub, Nash and Van Loan with a real Schur form of B only
(a size the graph fixes picks its path at compile time; otherwise an If does, at run time).

B = V T V^T (the IR's `Schur`: T upper quasi-triangular, 1 x 1 blocks and standard 2 x 2 ones,
never two adjacent nonzero subdiagonal entries) turns the equation into A Y + Y T = F with
Y = X V, F = C V. Column k of Y T is sum_{j <= k + 1} y_j T[j, k], so the columns of Y come out
left to right: a trip of a while-Loop takes a window of two columns (k, k + 1) with the columns
before it known, and solves

    [A + T[k, k] I        T[k + 1, k] I    ] [y_k    ]   [f_k     - Y_<k T[<k, k]    ]
    [T[k, k + 1] I        A + T[k+1, k+1] I] [y_{k+1}] = [f_{k+1} - Y_<k T[<k, k + 1]]

(2m x 2m) with the IR's `Solve` (LU with partial pivoting). That is exact for both columns when
column k + 2 does not reach back into them (T[k + 2, k + 1] = 0): a 2 x 2 block at k, or two 1 x 1
blocks, and the window moves on by two. Where a 2 x 2 block starts at k + 1 (or k is the last
column) only y_k is taken: the second block row is then replaced by the identity (its shift
T[k+1, k+1] is half a complex pair and could make the system singular when the equation is not),
and the window moves on by one. Trips: between n / 2 and n; batched matrices move their windows
independently (an element whose window is past its end writes to a pad column nobody reads).

Why not LAPACK's way (Bartels-Stewart, trsyl: A in Schur form too and 1 x 1 to 2 x 2 systems
element by element): that is m n sequential steps, some 20 body nodes each, where a window is one
Solve of 2m unknowns whose flops are in MatMul. The cost is O(n m^3) flops and 2m sequential LU
column steps per window (so O(n m) in all), plus B's Schur form. For few unknowns the Kronecker
system is cheaper still: one LU of mn unknowns, no Schur form (SMALL, measured). Accuracy: each window's solve is
backward stable, as trsyl's steps are; the result agrees with PyTensor's to the equation's
condition times eps.

Where an input holds inf or NaN the result is NaN (as PyTensor's, whose Schur forms are NaN
there); the matrix is not iterated on (zeros stand in). A singular equation (A and -B share an
eigenvalue) makes a window's system singular: an exactly zero pivot gives NaN (Solve's), a rounded
one a large finite number; LAPACK perturbs the small systems there and gives another large finite
number (PyTensor passes it on).
"""

from __future__ import annotations

import numpy as np

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    arange,
    branch,
    common_batch,
    cut,
    dim,
    emit,
    fill_nan,
    flatten_batch,
    index_masks,
    int_scalar,
    mT,
    non_finite,
    restore_batch,
    solve,
    static,
    take_flat,
    take_rows,
    vec,
    zeros,
)
from ptonnx.decompositions.loop import iterate
from ptonnx.decompositions.registry import decomposes

#: m n up to which one LU of the Kronecker system (mn unknowns, O((mn)^3) flops) is cheaper than
#: B's Schur form and the windows (`python -m benchmarks.sylvester_paths`, onnxruntime on 1 thread:
#: m = n = 20, 35 against 82 ms; 30, 164 against 162 ms)
SMALL = 900


def _pad(x: Ex, rows: int, cols: int) -> Ex:
    """x (B, r, c) with `rows` zero rows and `cols` zero columns appended."""
    count, r, c = dim(x, 0), dim(x, 1), dim(x, 2)
    if cols:
        x = x.op("Concat", zeros(x, vec(count, r, int_scalar(x.scope, cols))), axis=2)
    if rows:
        x = x.op("Concat", zeros(x, vec(count, int_scalar(x.scope, rows), c + cols)), axis=1)
    return x


def solve_quasi_triangular(a: Ex, t: Ex, f: Ex) -> Ex:
    """Y with A Y + Y T = F: a (B, m, m), t (B, n, n) upper quasi-triangular in real Schur form,
    f (B, m, n)."""
    count, m, n = dim(a, 0), dim(a, 1), dim(t, 1)
    scope = a.scope
    # transposed, two pad rows: row k is T's column k (F's, Y's), for windows up to (n, n + 1)
    tp = _pad(t, 2, 2)
    tt, ft = mT(tp), mT(_pad(f, 0, 2))
    sub = t.op("Reshape", vec(count, n * n)).op("Gather", arange(n - 1) * (n + 1) + n, axis=1)  # T[i + 1, i]
    starts_block = sub.ne(0.0).cast(a.dtype).op("Concat", zeros(a, vec(count, int_scalar(scope, 3))), axis=1) > 0.0  # (B, n + 2)
    eye = arange(m).op("Unsqueeze", axes=(1,)).eq(arange(m).op("Unsqueeze", axes=(0,))).cast(a.dtype)
    second = arange(int_scalar(scope, 2)).eq(1).op("Unsqueeze", axes=(0, 2))  # (1, 2, 1): the window's second column
    rows = arange(n + 2).op("Unsqueeze", axes=(0, 2))  # (1, n + 2, 1)

    def trip(_, state):
        yt, k, a, tp, tt, ft, starts_block, eye, second, rows, n = state
        count, m = dim(a, 0), dim(a, 1)
        at = k.op("Unsqueeze", axes=(1,))  # (B, 1)
        pair = at.op("Concat", at + 1, axis=1)  # (B, 2)
        t_cols = take_rows(tt, pair)  # (B, 2, n + 2): T's columns k and k + 1
        rhs = take_rows(ft, pair) - t_cols.op("MatMul", yt)  # (B, 2, m)
        # T[k, k], T[k + 1, k], T[k, k + 1], T[k + 1, k + 1]
        width = n + 2
        corner = at * width + at
        s = take_flat(tp, corner.op("Concat", corner + width, corner + 1, corner + width + 1, axis=1))
        s = s.op("Unsqueeze", axes=(2, 3))  # (B, 4, 1, 1)

        def shift(i):
            return s.op("Gather", int_scalar(a.scope, i), axis=1) * eye  # (B, m, m)

        coupled = take_flat(starts_block, at)  # T[k + 1, k] != 0: a 2 x 2 block at k
        next_block = take_flat(starts_block, at + 1)
        single = coupled.op("Not") & (next_block | (at + 1 >= n))  # (B, 1): take y_k only
        one = single.op("Unsqueeze", axes=(2,))  # (B, 1, 1)
        top = (a + shift(0)).op("Concat", shift(1), axis=2)
        bottom = where(one, 0.0, shift(2)).op("Concat", where(one, eye, a + shift(3)), axis=2)
        rhs = where(one & second, 0.0, rhs)
        y = solve(top.op("Concat", bottom, axis=1), rhs.op("Reshape", vec(count, m + m, int_scalar(a.scope, 1))))
        y = y.op("Reshape", vec(count, int_scalar(a.scope, 2), m))
        here = rows.eq(at.op("Unsqueeze", axes=(2,)))  # (B, n + 2, 1)
        yt = where(here, cut(y, 1, 0, 1), yt)
        yt = where(rows.eq((at + 1).op("Unsqueeze", axes=(2,))) & one.op("Not"), cut(y, 1, 1, 2), yt)
        k = where(k < n, k + where(single.op("Squeeze", axes=(1,)), 1, 2, like=k), k)
        return [yt, k, a, tp, tt, ft, starts_block, eye, second, rows, n], (k < n).op("ReduceAny", axes=(0,))

    state = [zeros(a, vec(count, n + 2, m)), arange(count) * 0, a, tp, tt, ft, starts_block, eye, second, rows, n]
    yt = iterate(state, trip, int(np.iinfo(np.int64).max))[0]
    return mT(cut(yt, 1, 0, n))


def kronecker(a: Ex, b: Ex, c: Ex) -> Ex:
    """X with A X + X B = C as one system of mn unknowns: with X flattened by rows,
    K = A (x) I_n + I_m (x) B^T, K[(i, j), (k, l)] = A[i, k] [j = l] + [i = k] B[l, j], built by
    selection (never a product with 0, which would turn an inf into NaN) and solved by LU."""
    count, m, n = dim(a, 0), dim(a, 2), dim(b, 2)
    eye_m, eye_n = index_masks(m)[2], index_masks(n)[2]
    zero = a.const(0.0)
    left = eye_n.op("Unsqueeze", axes=(0, 1, 3)).op("Select", a.op("Unsqueeze", axes=(2, 4)), zero)
    right = eye_m.op("Unsqueeze", axes=(0, 2, 4)).op("Select", mT(b).op("Unsqueeze", axes=(1, 3)), zero)
    size = m * n
    system = (left + right).op("Reshape", vec(count, size, size))
    x = solve(system, c.op("Reshape", vec(count, size, int_scalar(c.scope, 1))))
    return x.op("Reshape", vec(count, m, n))


def schur_windows(a: Ex, b: Ex, c: Ex) -> Ex:
    """X with A X + X B = C through B's real Schur form and windows of two columns."""
    t, v = emit(a.scope, "Schur", [b])
    return solve_quasi_triangular(a, t, c.op("MatMul", v)).op("MatMul", mT(v))


@decomposes("SolveSylvester")
def solve_sylvester(node, inputs):
    a, b, c = common_batch(*inputs)
    a, batch = flatten_batch(a, 2)
    b, _ = flatten_batch(b, 2)
    c, _ = flatten_batch(c, 2)
    bad = non_finite(a) | non_finite(b) | non_finite(c)
    quiet = bad.op("Unsqueeze", axes=(1, 2))
    a, b, c = (where(quiet, 0.0, x) for x in (a, b, c))  # not iterated on
    size = dim(a, 2) * dim(b, 2)
    known = static(size)
    if known is not None:
        x = (kronecker if known <= SMALL else schur_windows)(a, b, c)
    else:
        (x,) = branch(size <= SMALL, [a, b, c], lambda args: [kronecker(*args)], lambda args: [schur_windows(*args)])
    return restore_batch(fill_nan(bad, x), batch, 2)
