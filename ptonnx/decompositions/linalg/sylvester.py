"""SolveSylvester (A X + X B = C) as the Kronecker system, solved by the IR's Solve.

With X (m, n) flattened by rows, A X + X B = C is K vec(X) = vec(C), K = A ⊗ I_n + I_m ⊗ B^T
(mn x mn): K[(i, j), (k, l)] = A[i, k] [j = l] + [i = k] B[l, j], built by selection (never a
product with 0, which would turn an inf into NaN) and solved by LU with partial pivoting
(`lu.py`), backward stable for K, so the residual of the equation is small.

Bartels-Stewart (what LAPACK's trsyl, PyTensor and SciPy use) costs O(m^3 + n^3) after real Schur
forms, which need the QR algorithm with shifts and deflation: an iteration whose count depends on
the data, and not in ptonnx's IR yet. The Kronecker system costs O((mn)^3) flops and (mn)^2
entries per matrix: 30 x 30 state-space matrices make an 900 x 900 system (6.5 MB, float64).
`MAX_SYSTEM` refuses, at compile time, sizes the graph fixes beyond reason.

Where an input holds inf or NaN the result is NaN (as PyTensor's, whose Schur forms fail there).
A singular equation (A and -B share an eigenvalue) is a singular K: an exactly zero pivot gives
NaN (Solve's), a rounded one a large finite number; LAPACK perturbs the Schur forms there and
gives another large finite number (PyTensor passes it on).
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex
from ptonnx.decompositions.linalg.common import (
    common_batch,
    dim,
    fill_nan,
    flatten_batch,
    index_masks,
    int_scalar,
    mT,
    non_finite,
    restore_batch,
    solve,
    static,
    vec,
)
from ptonnx.decompositions.registry import decomposes
from ptonnx.errors import UnsupportedOpError

#: the largest m n (rows of the Kronecker system) a size the graph fixes may give: 4096 rows are a
#: 128 MB float64 system per matrix and some 4.6e10 flops
MAX_SYSTEM = 4096


def _refuse_absurd(node, m: Ex, n: Ex) -> None:
    rows = (static(m) or 0) * (static(n) or 0)
    if rows > MAX_SYSTEM:
        source = getattr(node, "source", None)
        made = f" (made at {source.created_at})" if source is not None and source.created_at else ""
        what = (source.variable if source is not None else node.outputs[0].name or str(node.outputs[0].type)) + made
        raise UnsupportedOpError(node.op, what, (), reason=(
            f"ptonnx solves it as the Kronecker system of {rows} x {rows} (m n = {static(m)} x {static(n)}), "
            f"beyond the {MAX_SYSTEM} rows it accepts: O((mn)^3) flops and (mn)^2 memory"))


@decomposes("SolveSylvester")
def solve_sylvester(node, inputs):
    _refuse_absurd(node, dim(inputs[0], inputs[0].value.type.ndim - 1), dim(inputs[1], inputs[1].value.type.ndim - 1))
    a, b, c = common_batch(*inputs)
    a, batch = flatten_batch(a, 2)
    b, _ = flatten_batch(b, 2)
    c, _ = flatten_batch(c, 2)
    count, m, n = dim(a, 0), dim(a, 2), dim(b, 2)
    eye_m, eye_n = index_masks(m)[2], index_masks(n)[2]
    # (B, i, j, k, l): A[i, k] where j = l, plus B^T[j, l] where i = k
    zero = a.const(0.0)
    left = eye_n.op("Unsqueeze", axes=(0, 1, 3)).op("Select", a.op("Unsqueeze", axes=(2, 4)), zero)
    right = eye_m.op("Unsqueeze", axes=(0, 2, 4)).op("Select", mT(b).op("Unsqueeze", axes=(1, 3)), zero)
    size = m * n
    system = (left + right).op("Reshape", vec(count, size, size))
    x = solve(system, c.op("Reshape", vec(count, size, int_scalar(c.scope, 1))))
    x = x.op("Reshape", vec(count, m, n))
    x = fill_nan(non_finite(a) | non_finite(b) | non_finite(c), x)
    return restore_batch(x, batch, 2)
