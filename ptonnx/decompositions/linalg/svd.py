"""SVD, singular values and the pseudo-inverse: Householder QR, then one-sided Jacobi (Hestenes)
on the rows of the triangular factor.

The matrix, or its transpose when it is wide (m < n), is made tall, Y (N, k) with N = max(m, n),
k = min(m, n) (both as one flat vector chosen by `Where`, since the sizes are known only at run
time), and factored Y = Q R (`qr.py`). One-sided Jacobi orthogonalises R's rows (R^T's columns:
fewer sweeps than R's columns), J R = G: relative accuracy for small singular values, which the
eigenvalues of A^T A lack. Rows, not columns: a pair's dot products and rotation read contiguous
memory. A sweep is k' - 1 rounds (k' = k rounded up to even, a zero row padding it) of the
round-robin ordering: a round rotates the k' / 2 disjoint row pairs at once, from their dot
products (elementwise products and ReduceSum), and moves the rows by one fixed permutation (two
Gathers), so they are back in place after a sweep. Sweeps run while some pair is not orthogonal
to TOLERANCE k' relative to the product of their norms (a while-Loop, at most MAX_SWEEPS: one
still rotating then raises LinAlgError, LAPACK's "SVD did not converge", never seen). A row
of norm at most eps ||R||_F is rounding noise (a rank-deficient matrix): it is not rotated (no
rotation makes it orthogonal, only smaller), and its singular vectors are completed. R is scaled
by a power of two first (exact): no sum of squares overflows or underflows at 1e150 or 1e-300.

R = J^T diag(s) X^T: the singular values are G's row norms, sorted descending (stable: ties in
row order, so the padding comes last); V_R = X = (G / s)^T, whose columns for negligible s are
those of a complete QR of V_R (orthonormal, orthogonal to the others: an `If`, only when some s
is negligible). U_R = J^T is the orthogonal factor of R V_R = U_R diag(s) (a second QR, its signs
fixed; J is not accumulated, which would double every round's work), U_Y = Q U_R. For a wide
matrix the roles of U and V swap. NaN in the matrix raises LinAlgError, as NumPy's SVD; inf (and
no NaN) gives NaN (LAPACK gives NaN singular values there). Batch axes are flattened to one.
onnxruntime's Loop costs about 1 us a body node a trip, and a round's elementwise work is
O(k^2): n = 200 takes some 10 sweeps of 199 rounds, far more than LAPACK's bidiagonal SVD. From
k' = BLOCK_FROM on the sweeps run in blocks of rows (`svd_block`: the same pairs' rotations,
computed on small Gram matrices, the rows updated by MatMuls), about half the time at n = 200.
"""

from __future__ import annotations

import numpy as np

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    arange,
    branch,
    ceil_div,
    counted_loop,
    cut,
    diagonal,
    dim,
    emit,
    fill_nan,
    flatten_batch,
    int_scalar,
    ints,
    mT,
    power_of_two,
    restore_batch,
    round_robin,
    static,
    take_flat,
    vec,
    zeros,
)
from ptonnx.decompositions.linalg.qr import form_q, householder
from ptonnx.decompositions.linalg.svd_block import block_jacobi
from ptonnx.decompositions.loop import iterate
from ptonnx.decompositions.registry import decomposes
from ptonnx.ir.ops.linalg_orthogonal import RCOND

EPS = float(np.finfo(np.float64).eps)
#: a pair is rotated while |p.q| > TOLERANCE k' ||p|| ||q||, k' the rows' length: k' eps bounds
#: the rounding error of a k'-term dot product (a round's ReduceSum, the Gram test's MatMul), so
#: rounding alone cannot keep a pair rotating (LAPACK's gesvj stops at sqrt(m) eps, the typical
#: rounding error rather than its bound)
TOLERANCE = EPS
#: the most sweeps (quadratic convergence: some 8 to 11 are needed at n = 200)
MAX_SWEEPS = 30
#: the least k' Jacobi runs on in blocks (`svd_block`): measured faster from about 48 (SVD at
#: n = 200 in 0.55 of the time), slower below about 30
BLOCK_FROM = 48
#: the least s_min / s_max for which U is CholeskyQR2's (`_left_factor`), not Householder's
FAST_RATIO = 1e-6


def _flat(x: Ex, count: Ex, size: Ex) -> Ex:
    return x.op("Reshape", vec(count, size))


def pick(t: Ex, yes: Ex, no: Ex, rows: Ex, cols: Ex) -> Ex:
    """`yes` if the bool scalar t else `no`, both (B, r, c) of sizes that differ unless chosen, as
    (B, rows, cols): the flat matrices concatenated, and the chosen one sliced out."""
    count = dim(yes, 0)
    len_no, len_yes = dim(no, 1) * dim(no, 2), dim(yes, 1) * dim(yes, 2)
    both = _flat(no, count, len_no).op("Concat", _flat(yes, count, len_yes), axis=1)
    start = where(t, len_no, int_scalar(t.scope, 0))
    end = where(t, len_no + len_yes, len_no)
    return both.op("Slice", vec(start), vec(end), ints(t.scope, 1), axes=(1,)).op("Reshape", vec(count, rows, cols))


def _squares(x: Ex) -> Ex:
    return (x * x).op("ReduceSum", axes=(2,), keepdims=True)


def _rotate(p: Ex, q: Ex, pp: Ex, qq: Ex, tolerance: Ex, small: Ex) -> tuple[Ex, Ex, Ex, Ex]:
    """The Jacobi rotation of each row pair (p_i, q_i) (squared norms pp, qq) making them
    orthogonal: (cos, sin, t p.q, rotated), cos 1 and sin 0 for pairs orthogonal to `tolerance`, or
    with a row whose squared norm is at most `small` (negligible: rounding noise of a rank-deficient
    matrix, which no rotation makes orthogonal, only smaller). The rotated rows' squared norms are
    pp - t p.q and qq + t p.q (Rutishauser)."""
    pq = (p * q).op("ReduceSum", axes=(2,), keepdims=True)
    rotate = (abs(pq) > tolerance * (pp * qq).op("Sqrt")) & (pp.op("Min", qq) > small)
    zeta = (qq - pp) / (pq + pq)
    t = where(zeta < 0.0, -1.0, 1.0, like=zeta) / (abs(zeta) + (zeta * zeta + 1.0).op("Sqrt"))
    t = where(rotate, t, 0.0)
    c = (t * t + 1.0).op("Sqrt").op("Reciprocal")
    return c, c * t, t * pq, rotate


def jacobi(w: Ex, small: Ex) -> Ex:
    """One-sided Jacobi on the rows of square w (B, k', k'), k' even: J w, J orthogonal and J w's
    rows orthogonal; in blocks (`svd_block`) from k' = BLOCK_FROM on."""
    def blocked(args):
        w, small = args
        tolerance = dim(w, 2).cast(w.dtype) * TOLERANCE
        g, moved = block_jacobi(w, small, tolerance, MAX_SWEEPS, _unorthogonal)
        return [_converged(g, moved)]

    known = static(dim(w, 2))
    if known is not None:  # sizes the graph fixes: no If
        return blocked([w, small])[0] if known >= BLOCK_FROM else _jacobi(w, small)
    return branch(dim(w, 2) >= BLOCK_FROM, [w, small], blocked, lambda args: [_jacobi(*args)])[0]


def _converged(g: Ex, moved: Ex) -> Ex:
    """g, checked not still rotating after MAX_SWEEPS (never seen): LAPACK's failure, not a number."""
    return g.op("Check", moved.op("Not"), message="SVD did not converge", exception="numpy.linalg:LinAlgError")


def _jacobi(w: Ex, small: Ex) -> Ex:
    """One-sided Jacobi on the rows of square w (B, k', k'), k' even: J w, J orthogonal and J w's
    rows orthogonal (J itself is not accumulated: see `svd`).

    The rows' squared norms are computed at the start of each sweep and updated by each rotation
    (a round then reads the rows twice fewer times); an update that cancels (a norm much smaller
    than before) is only inaccurate until the next sweep: a rotation angle, not a result, depends
    on it. After a sweep that rotated, every pair is tested at once on the rows' Gram matrix
    (`_unorthogonal`: one MatMul, some 1/20 of a sweep's time at k = 200), which saves the sweep
    that would rotate nothing; the iteration also ends after a sweep that rotated nothing (the
    Gram's rounding may differ from a round's)."""
    kk = dim(w, 2)
    h = ceil_div(kk, 2)
    new_p, new_q = round_robin(h)
    tolerance = kk.cast(w.dtype) * TOLERANCE
    rounds = (kk - 1).op("Max", 0)

    def sweep(_, state):
        p, q, _, new_p, new_q, tolerance, small, rounds = state

        def one_round(_, carried, invariants):
            (p, q, pp, qq), (new_p, new_q, tolerance, small) = carried, invariants
            c, s, moved, rotated = _rotate(p, q, pp, qq, tolerance, small)
            both = (c * p - s * q).op("Concat", s * p + c * q, axis=1)
            norms = (pp - moved).op("Concat", qq + moved, axis=1)
            out = [both.op("Gather", new_p, axis=1), both.op("Gather", new_q, axis=1),
                   norms.op("Gather", new_p, axis=1), norms.op("Gather", new_q, axis=1)]
            return out, [rotated]  # reduced once a sweep

        (p, q, _, _), (rotated,) = counted_loop(rounds, [p, q, _squares(p), _squares(q)], [new_p, new_q, tolerance, small], one_round)
        moved = rotated.op("ReduceAny", axes=tuple(range(rotated.value.type.ndim)))
        going = moved & _unorthogonal(p.op("Concat", q, axis=1), tolerance, small)
        return [p, q, going, new_p, new_q, tolerance, small, rounds], going

    start = Ex(w.scope, w.scope.constant(np.asarray(True)))
    p, q, moved, *_ = iterate([cut(w, 1, 0, h), cut(w, 1, h, kk), start, new_p, new_q, tolerance, small, rounds], sweep, MAX_SWEEPS)
    return _converged(p.op("Concat", q, axis=1), moved)


def _unorthogonal(w: Ex, tolerance: Ex, small: Ex) -> Ex:
    """Whether some pair of w's rows (B, k', k'), both of squared norm above `small`, has
    |w_i . w_j| > tolerance ||w_i|| ||w_j|| (a round's test, on exact dot products)."""
    gram = w.op("MatMul", mT(w))
    d = diagonal(gram)
    di, dj = d.op("Unsqueeze", axes=(2,)), d.op("Unsqueeze", axes=(1,))
    idx = arange(dim(w, 1))
    off = idx.op("Unsqueeze", axes=(1,)).ne(idx.op("Unsqueeze", axes=(0,)))
    due = (abs(gram) > (di * dj).op("Sqrt") * tolerance) & (di.op("Min", dj) > small) & off
    return due.op("ReduceAny", axes=(0, 1, 2), keepdims=False)


def _row_norms(g: Ex) -> Ex:
    """||g[:, i, :]|| (B, k'), scaled by each row's largest magnitude."""
    largest = abs(g).op("ReduceMax", axes=(2,), keepdims=True).op("Max", 5e-324)
    scaled = g / largest
    return ((scaled * scaled).op("ReduceSum", axes=(2,), keepdims=True).op("Sqrt") * largest).op("Squeeze", axes=(2,))


def right_singular(r0: Ex, k: Ex, vectors: bool = True, complete: bool = True,
                   ascending: bool = False) -> tuple[Ex, Ex | None]:
    """The singular values (B, k), descending (or `ascending`; ties in row order either way), and
    right singular vectors (B, k, k) (columns; None unless `vectors`) of square r0 (B, k, k),
    scaled to |r| < 2: one-sided Jacobi on its rows (padded with a zero row to an even count),
    g = J r0, whose row norms are the values and whose normalised rows the vectors' transposes.
    Vectors for negligible values are completed to an orthonormal basis only if `complete`."""
    count = dim(r0, 0)
    kk = ceil_div(k, 2) * 2
    pad = kk - k
    r = r0.op("Concat", zeros(r0, vec(count, k, pad)), axis=2).op("Concat", zeros(r0, vec(count, pad, kk)), axis=1)
    # rows at most eps ||R||_F long are rounding noise: not rotated, their vectors completed
    small = (r * r).op("ReduceSum", axes=(1, 2), keepdims=True) * EPS**2
    g = jacobi(r, small)  # g = J R: R = J^T diag(s) X^T, X^T = g's rows normalised
    norms = _row_norms(g)
    key = where(arange(kk) < k, norms, float("inf")) if ascending else -norms  # the padding last
    order = Ex(r0.scope, r0.scope.builder.node("Sort", [key.value], {"axis": 1}).outputs[1])
    s = cut(take_flat(norms, order), 1, 0, k)
    if not vectors:
        return s, None
    moves = order.op("Unsqueeze", axes=(2,)).eq(arange(kk).op("Unsqueeze", axes=(0,)).op("Unsqueeze", axes=(0,))).cast(g.dtype)
    g = cut(cut(moves.op("MatMul", g), 1, 0, k), 2, 0, k)
    zero = ((s * s).op("Unsqueeze", axes=(2,)) <= small) | s.eq(0.0).op("Unsqueeze", axes=(2,))
    v_r = mT(where(zero, 0.0, g / where(zero, 1.0, s.op("Unsqueeze", axes=(2,)))))
    if complete:  # only when some value is negligible: the QR is a Loop of k trips
        def completed(args):
            v_r, zero = args
            completion, _, _ = householder(v_r)
            return [where(zero, form_q(completion, v_r, dim(v_r, 1), dim(v_r, 2)), v_r)]

        (v_r,) = branch(zero.op("ReduceAny", axes=(0, 1, 2)), [v_r, mT(zero)], completed, lambda args: [args[0]])
    return s, v_r


def _left_factor(product: Ex, s: Ex, k: Ex) -> Ex:
    """U_R, the orthogonal factor of R V_R = U_R diag(s) (B, k, k), columns in descending s (so a
    column for a small s loses only its rounding along the larger ones), signs as R V_R's. J^T is
    not accumulated rotation by rotation (that doubles every round's work).

    Where every s of every matrix is at least FAST_RATIO times its largest, R V_R diag(1/s) is
    orthogonal but for rounding of order eps s_max / s_i <= eps / FAST_RATIO, and CholeskyQR2
    (twice: X <- X L^-T, L L^T = X^T X; Yamamoto et al. 2015: orthogonal to eps for condition up
    to eps^-1/2) gives its orthogonal factor with two Cholesky factorisations and two triangular
    solves of k x k matrices; otherwise (a value negligible or small) Householder QR, whose
    column steps cost some 50 nodes each (qr.py)."""
    def cholesky_qr2(args):
        product, s = args
        x = product / s.op("Unsqueeze", axes=(1,))
        for _ in range(2):
            (low,) = emit(x.scope, "Cholesky", [mT(x).op("MatMul", x)], lower=True)
            (xt,) = emit(x.scope, "SolveTriangular", [low, mT(x)], lower=True, unit_diagonal=False, b_ndim=2)
            x = mT(xt)
        return [x]

    def householder_qr(args):
        product, _ = args
        u_panels, u_tri, _ = householder(product)
        signs = where(diagonal(u_tri) < 0.0, -1.0, 1.0, like=u_tri)
        return [form_q(u_panels, product, dim(product, 1), dim(product, 2)) * signs.op("Unsqueeze", axes=(1,))]

    # s is descending: the last over the first (0 for k = 0: no fast path for nothing)
    first, last = cut(s, 1, 0, 1), cut(s, 1, k - 1, k)
    small = (last > first * FAST_RATIO).op("Not").op("ReduceAny", axes=(0, 1), keepdims=False)
    fast = small.op("Not") & (k > 0)
    return branch(fast, [product, s], cholesky_qr2, householder_qr)[0]


def svd(a: Ex, vectors: bool, full: bool, complete: bool = True):
    """(U, s, V^T) of a (B, m, n) (reduced unless `full`; U's columns for s = 0 completed only if
    `complete`), or s alone if not `vectors`."""
    count, m, n = dim(a, 0), dim(a, 1), dim(a, 2)
    wide = m < n
    big, k = m.op("Max", n), m.op("Min", n)
    y = where(wide, _flat(mT(a), count, m * n), _flat(a, count, m * n)).op("Reshape", vec(count, big, k))
    panels, r, _ = householder(y, finite=True)  # r (B, k, k); NaN raised, inf's results replaced
    scale = power_of_two(abs(r).op("ReduceMax", axes=(1, 2), keepdims=True))
    r0 = r / scale
    s, v_r = right_singular(r0, k, vectors, complete)
    values = s * scale.op("Squeeze", axes=(2,))
    if not vectors:
        return values
    u_r = _left_factor(r0.op("MatMul", v_r), s, k)
    q = form_q(panels, y, big, big if full else k)
    u_y = cut(q, 2, 0, k).op("MatMul", u_r)
    if full:
        u_y = u_y.op("Concat", cut(q, 2, k, big), axis=2)
    u = pick(wide, v_r, u_y, m, m if full else k)
    vt = pick(wide, mT(u_y), mT(v_r), n if full else k, n)
    return u, values, vt


def _guarded(a: Ex, hermitian: bool = False) -> tuple[Ex, Ex]:
    """a checked free of NaN (NumPy's SVD raises LinAlgError; for `hermitian`, its eigh raises on
    inf too), and which matrices hold inf (B,)."""
    nan, inf = a.op("IsNaN"), a.op("IsInf")
    bad = (nan | inf) if hermitian else nan
    message = "Eigenvalues did not converge" if hermitian else "SVD did not converge"
    a = a.op("Check", bad.op("ReduceAny", axes=(0, 1, 2)).op("Not"), message=message, exception="numpy.linalg:LinAlgError")
    return a, inf.op("ReduceAny", axes=(1, 2))


@decomposes("SVD")
def svd_op(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    a, infinite = _guarded(a)
    u, s, vt = svd(a, True, node.attrs["full_matrices"])
    s = where(infinite.op("Unsqueeze", axes=(1,)), float("nan"), s)
    return (restore_batch(fill_nan(infinite, u), batch, 2), restore_batch(s, batch, 1),
            restore_batch(fill_nan(infinite, vt), batch, 2))


@decomposes("SingularValues")
def singular_values(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    a, infinite = _guarded(a)
    s = where(infinite.op("Unsqueeze", axes=(1,)), float("nan"), svd(a, False, False))
    return restore_batch(s, batch, 1)


@decomposes("MatrixPinv")
def pinv(node, inputs):
    """NumPy's pinv: V diag(1/s) U^T, with 1/s taken as 0 for s <= RCOND max(s). hermitian reads
    the lower triangle (NumPy's eigh, which raises LinAlgError on NaN or inf there from n = 3 to
    some 10; ptonnx raises at every size)."""
    a, batch = flatten_batch(inputs[0], 2)
    hermitian = node.attrs["hermitian"]
    if hermitian:
        i, j = arange(dim(a, 1)).op("Unsqueeze", axes=(1,)), arange(dim(a, 2)).op("Unsqueeze", axes=(0,))
        a = where(i < j, mT(a), a)
    a, infinite = _guarded(a, hermitian)
    u, s, vt = svd(a, True, False, complete=False)
    largest = s.op("Concat", zeros(s, vec(dim(s, 0), int_scalar(s.scope, 1))), axis=1).op("ReduceMax", axes=(1,), keepdims=True)
    inverse = where(s > largest * RCOND, s.op("Reciprocal"), 0.0)
    out = (mT(vt) * inverse.op("Unsqueeze", axes=(1,))).op("MatMul", mT(u))
    return restore_batch(fill_nan(infinite, out), batch, 2)
