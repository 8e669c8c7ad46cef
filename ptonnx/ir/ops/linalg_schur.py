"""The real Schur decomposition as an IR op (family `linalg_schur`): A = Z T Z^T with Z
orthogonal and T upper quasi-triangular (1 x 1 blocks for real eigenvalues, 2 x 2 blocks in
LAPACK's standard form for complex pairs: equal diagonal, off-diagonal entries of opposite sign).

Batched as the other linear-algebra ops. The form is not unique (the order of the eigenvalues
on T's diagonal, the signs of Z's columns): what is defined is the reconstruction, Z's
orthogonality, T's structure and its eigenvalues. SolveSylvester's decomposition is built on it.

Semantics, the interpreter's reference: PyTensor's Schur(output="real", sort=None), i.e. LAPACK
gees through scipy; a matrix holding inf or NaN gives NaN for T and Z (PyTensor's own rule), and
so does one where the QR algorithm does not converge (gees' info > 0).
"""

from __future__ import annotations

import numpy as np

from ptonnx.ir.ops.linalg import _batched, _square
from ptonnx.ir.schema import define
from ptonnx.ir.types import FLOAT_DTYPES


def _schur_rule(types, attrs):
    (a,) = types
    _square("Schur", a)
    return [a, a]


def _schur_one(a):
    import scipy.linalg

    if a.size == 0:
        return np.zeros(a.shape, a.dtype), np.zeros(a.shape, a.dtype)
    if not np.isfinite(a).all():
        return np.full(a.shape, np.nan, a.dtype), np.full(a.shape, np.nan, a.dtype)
    (gees,) = scipy.linalg.get_lapack_funcs(("gees",), (a,))
    t, _sdim, _wr, _wi, z, _work, info = gees(lambda *args: None, a, lwork=max(1, 3 * a.shape[-1]), sort_t=0)
    if info != 0:
        return np.full(a.shape, np.nan, a.dtype), np.full(a.shape, np.nan, a.dtype)
    return t, z


def _schur(a):
    with np.errstate(all="ignore"):
        def part(k):
            return _batched(lambda m: _schur_one(m)[k], a, core=(2,)).astype(a.dtype, copy=False)

        return part(0), part(1)


define("Schur", inputs=("a: T",), outputs=("t: T", "z: T"), dtypes={"T": FLOAT_DTYPES}, type_rule=_schur_rule,
       semantics=_schur, traits=("no_fold",), family="linalg_schur",
       doc="the real Schur form a = z t z^T (z orthogonal, t upper quasi-triangular, 2 x 2 blocks standard); "
           "NaN where a matrix holds inf or NaN or the QR algorithm does not converge")
