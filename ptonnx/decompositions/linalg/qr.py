"""QR: blocked Householder (LAPACK's geqrf: panels factored as geqr2, the trailing matrix updated
by the panel's compact WY form, I - V T V^T, in three MatMuls), with LAPACK's reflectors.

dlarfg: for the column x = (alpha, x2) at and below the diagonal, beta = -sign(alpha) ||x||,
tau = (beta - alpha) / beta, v = (1, x2 / (alpha - beta)); x2 = 0 gives tau = 0 (H = I) and
beta = alpha, so R's diagonal may be negative and Q, R are LAPACK's to rounding. The matrix is
scaled by a power of two first (exact: no overflow at 1e160, no underflow at 1e-300).

onnxruntime's Loop costs about 1 us a body node a trip (see cholesky.py), and the column step
runs k = min(m, n) times in sequence, so it touches only its panel (m x b). A column step
reflects the panel, takes row j of R from it (a per-trip value), zeroes rows 0..j (so the next
steps read only the rows LAPACK's would: NaN and inf in finished rows stay out; not for a
matrix known finite, the SVD's, where the column read is masked instead), appends v to V (a
Concat: placing it with a Where over the panel cost some 6 times a Sub, its condition
broadcast; `benchmarks/loop_floor.py` times such nodes) and extends T (dlarft's recurrence). The matrix is padded with the identity to k' = trips * b reflectors
(equal panels; the padding's reflectors are H = I). A matrix of at most BLOCK columns is one
panel: geqr2's arithmetic, as LAPACK's below its crossover. Q is the panels' I - V T V^T applied
to the identity's first columns, last panel first (orgqr): three MatMuls a panel, a Loop that DCE
drops when only R is used. Batch axes are flattened to one.
"""

from __future__ import annotations


from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    arange,
    ceil_div,
    counted_loop,
    cut,
    dim,
    eye_like,
    flatten_batch,
    int_scalar,
    ints,
    loose,
    mT,
    power_of_two,
    restore_batch,
    unstack,
    vec,
    zeros,
)
from ptonnx.decompositions.registry import decomposes

#: most columns per panel
BLOCK = 32


def _panel(panel: Ex, start: Ex, k: Ex, rows: Ex, cols: Ex, finite: bool = False):
    """geqr2 on a panel (B, M, b) whose rows above `start` are zero: (the panel's R rows (b, B, b),
    v (b, B, M), tau (b, B, 1), beta (b, B, 1), V (B, M, b), T (B, b, b)). V grows by a column a
    step (a Concat: a Where placing it in a (B, M, b) matrix broadcasts its condition, some 6 times
    a Sub's time on onnxruntime). `finite`: the matrix holds no NaN or inf, so the rows done need
    not be zeroed (0 times them is 0): the column read is masked instead, a vector."""
    count, size, b = dim(panel, 0), dim(panel, 1), dim(panel, 2)
    v0, t0 = zeros(panel, vec(count, size, int_scalar(panel.scope, 0))), zeros(panel, vec(count, b, b))

    def step(i: Ex, carried, invariants):
        (mat, vs, t), (start, k, rows, rows_col, cols, cols_col) = carried, invariants
        j = start + i
        column = mat.op("Gather", i, axis=2)  # (B, M): rows above j are zero (unless `finite`)
        alpha = column.op("Gather", j.op("Unsqueeze", axes=(0,)), axis=1)  # (B, 1)
        is_j = rows.eq(j)
        x = where(rows <= j, 0.0, column) if finite else where(is_j, 0.0, column)
        squares = (x * x).op("ReduceSum", axes=(1,), keepdims=True)
        norm = (squares + alpha * alpha).op("Sqrt")
        none = squares.eq(0.0) | (j >= k)  # x2 = 0 (or padding): H = I, beta = alpha
        beta = where(none, alpha, where(alpha < 0.0, norm, -norm))
        tau = where(none, 0.0, (beta - alpha) / beta)
        v = where(is_j, 1.0, x * where(none, 1.0, alpha - beta).op("Reciprocal"))
        v_col = v.op("Unsqueeze", axes=(2,))
        w = where(none.op("Unsqueeze", axes=(2,)), 0.0, v.op("Unsqueeze", axes=(1,)).op("MatMul", mat))  # (B, 1, b); H = I skips inf
        tau_col = tau.op("Unsqueeze", axes=(2,))
        mat = mat - (v_col * tau_col).op("MatMul", w)
        row = mat.op("Gather", j, axis=1)
        # dlarft: T[:i, i] = -tau T[:i, :i] V[:, :i]^T v, T[i, i] = tau (V has its first i columns)
        at_i = cols.eq(i)
        done = t.op("Slice", ints(t.scope, 0), vec(i), ints(t.scope, 1), axes=(2,))
        t_col = where(cols_col.eq(i), tau_col, done.op("MatMul", mT(vs).op("MatMul", v_col)) * -tau_col)
        mat = mat if finite else where(rows_col <= j, 0.0, mat)
        return [mat, vs.op("Concat", v_col, axis=2), where(at_i, t_col, t)], [row, v, tau, beta]

    invariants = [start, k, rows, rows.op("Unsqueeze", axes=(1,)), cols, cols.op("Unsqueeze", axes=(1,))]
    (_, vs, t), (r_rows, v, tau, beta) = counted_loop(b, [panel, v0, t0], invariants, step,
                                                      [panel.value.type, loose(panel.value.type, 2), t0.value.type])
    return r_rows, v, tau, beta, vs, t


def householder(a: Ex, finite: bool = False) -> tuple[tuple[Ex, Ex, Ex], Ex, Ex]:
    """Reflectors of a (B, m, n), k = min(m, n): ((V, T) of each panel, stacked (trips, B, M, b)
    and (trips, B, b, b), and M = m + padding; R (B, k, n) upper triangular with beta on its
    diagonal; k). `finite`: a holds no NaN or inf (or its results are not used where it does)."""
    count, m, n = dim(a, 0), dim(a, 1), dim(a, 2)
    k = m.op("Min", n)
    trips = ceil_div(k, BLOCK)
    b = ceil_div(k, trips.op("Max", 1))
    pad = trips * b - k
    scale = power_of_two(abs(a).op("ReduceMax", axes=(1, 2), keepdims=True))  # (B, 1, 1)
    scaled = a / scale
    top = scaled.op("Concat", zeros(a, vec(count, m, pad)), axis=2)
    bottom = zeros(a, vec(count, pad, n)).op("Concat", eye_like(a, pad), axis=2)
    mat = top.op("Concat", bottom, axis=1)  # (B, M, N): [a 0; 0 I]
    size, width = m + pad, n + pad
    rows, cols = arange(size), arange(b)
    left_zeros = zeros(a, vec(count, b, width))

    def panel(p: Ex, carried, invariants):
        (mat,), (b, k, rows, cols, left_zeros) = carried, invariants
        start = p * b
        bv = vec(b)
        r_rows, _, _, beta, vs, t = _panel(cut(mat, 2, 0, b), start, k, rows, cols, finite)
        trailing = mat.op("Slice", bv, ints(p.scope, 2**62), ints(p.scope, 1), axes=(2,))
        trailing = trailing - vs.op("MatMul", mT(t).op("MatMul", mT(vs).op("MatMul", trailing)))
        taken = trailing.op("Slice", vec(start), vec(start + b), ints(p.scope, 1), axes=(1,))  # R's rows right of the panel
        left = left_zeros.op("Slice", ints(p.scope, 0), vec(start), ints(p.scope, 1), axes=(2,))
        r_panel = r_rows.op("Transpose", perm=(1, 0, 2))  # (b, B, b) -> (B, b, b): no Reshape in a body
        r_panel = r_panel.op("Slice", ints(p.scope, 0), bv, ints(p.scope, 1), axes=(2,))
        done = (rows < start + b).op("Unsqueeze", axes=(1,))
        return [where(done, 0.0, trailing)], [left.op("Concat", r_panel, taken, axis=2), vs, t, beta]

    _, (r, vs, ts, betas) = counted_loop(trips, [mat], [b, k, rows, cols, left_zeros], panel,
                                               [loose(mat.value.type, 2)])
    r = cut(cut(unstack(r, vec(count, trips * b, width), 1), 1, 0, k), 2, 0, n)
    diag = cut(unstack(betas.op("Reshape", vec(trips * b, count, int_scalar(a.scope, 1))), vec(count, trips * b, int_scalar(a.scope, 1)), 1),
               1, 0, k)
    i, c = arange(k).op("Unsqueeze", axes=(1,)), arange(n).op("Unsqueeze", axes=(0,))
    r = where(i > c, 0.0, where(i.eq(c), diag, r)) * scale
    return (vs, ts, size), r, k


def form_q(panels: tuple[Ex, Ex, Ex], like: Ex, m: Ex, cols: Ex) -> Ex:
    """H_0 ... H_{k-1} I[:m, :cols] (B, m, cols): each panel's I - V T V^T, last panel first."""
    vs, ts, size = panels
    count, trips = dim(like, 0), dim(vs, 0)
    eye = arange(size).op("Unsqueeze", axes=(1,)).eq(arange(cols).op("Unsqueeze", axes=(0,))).cast(like.dtype)
    q0 = eye.op("Unsqueeze", axes=(0,)).op("Expand", vec(count, size, cols))

    def step(i: Ex, carried, invariants):
        (q,), (vs, ts, last) = carried, invariants
        p = last - i
        v, t = vs.op("Gather", p, axis=0), ts.op("Gather", p, axis=0)
        return [q - v.op("MatMul", t.op("MatMul", mT(v).op("MatMul", q)))], []

    (q,), _ = counted_loop(trips, [q0], [vs, ts, trips - 1], step)
    return cut(q, 1, 0, m)


def qr(a: Ex, complete: bool) -> tuple[Ex, Ex]:
    """Q and R of a (B, m, n): (m, m) and (m, n) if `complete`, else (m, k) and (k, n)."""
    count, m, n = dim(a, 0), dim(a, 1), dim(a, 2)
    panels, r, k = householder(a)
    if complete:
        r = r.op("Concat", zeros(a, vec(count, m - k, n)), axis=1)
    return form_q(panels, a, m, m if complete else k), r


@decomposes("QR")
def qr_op(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    q, r = qr(a, node.attrs["mode"] == "complete")
    return restore_batch(q, batch, 2), restore_batch(r, batch, 2)
