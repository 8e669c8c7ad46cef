"""Orthogonal factorisations IR ops: QR, SVD, SingularValues, MatrixPinv (family `linalg_orthogonal`).

Batched as the `linalg` family (matrices in the last two axes, any leading batch axes); their
semantics, the interpreter's reference, are PyTensor's `perform` (LAPACK through NumPy and SciPy).
Where LAPACK's result is not defined by the input the semantics say what ptonnx gives instead:
an SVD of a matrix holding NaN raises LinAlgError ("SVD did not converge", NumPy's), and one
holding inf (no NaN) is NaN throughout (LAPACK gives NaN singular values there, and vectors that
depend on its iteration). Each op has a decomposition (`decompositions/linalg/qr.py`, `svd.py`).
"""

from __future__ import annotations

import numpy as np

from ptonnx.ir.ops.linalg import _batched
from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir.schema import define
from ptonnx.ir.types import FLOAT_DTYPES, TensorType

#: QR's modes: PyTensor's "full" and "economic" (NumPy's names); "r" and "raw" lift to these
QR_MODES = ("complete", "reduced")
#: NumPy's default cut-off of pinv: singular values at most RCOND * the largest count as zero
RCOND = 1e-15


def _matrix(op: str, a: TensorType):
    _need(a.ndim >= 2, op, lambda: f"needs a matrix (2 or more axes), got {a}")
    m, n = a.shape[-2:]
    k = min(m, n) if isinstance(m, int) and isinstance(n, int) else (0 if 0 in (m, n) else None)
    return m, n, k


def _qr_rule(types, attrs):
    (a,) = types
    _need(attrs["mode"] in QR_MODES, "QR", lambda: f"mode must be one of {QR_MODES}, got {attrs['mode']!r}")
    m, n, k = _matrix("QR", a)
    batch = a.shape[:-2]
    if attrs["mode"] == "complete":
        return [TensorType(a.dtype, batch + (m, m)), TensorType(a.dtype, batch + (m, n))]
    return [TensorType(a.dtype, batch + (m, k)), TensorType(a.dtype, batch + (k, n))]


def _qr(x, mode):
    """PyTensor's QR.perform: LAPACK geqrf and orgqr (NumPy's qr calls the same)."""
    q = _batched(lambda a: np.linalg.qr(a, mode=mode)[0], x, core=(2,)).astype(x.dtype, copy=False)
    r = _batched(lambda a: np.linalg.qr(a, mode=mode)[1], x, core=(2,)).astype(x.dtype, copy=False)
    return q, r


def _svd_rule(types, attrs):
    (a,) = types
    m, n, k = _matrix("SVD", a)
    batch = a.shape[:-2]
    if attrs["full_matrices"]:
        return [TensorType(a.dtype, batch + (m, m)), TensorType(a.dtype, batch + (k,)), TensorType(a.dtype, batch + (n, n))]
    return [TensorType(a.dtype, batch + (m, k)), TensorType(a.dtype, batch + (k,)), TensorType(a.dtype, batch + (k, n))]


def _values_rule(types, attrs):
    (a,) = types
    _, _, k = _matrix("SingularValues", a)
    return [TensorType(a.dtype, a.shape[:-2] + (k,))]


def _pinv_rule(types, attrs):
    (a,) = types
    m, n, _ = _matrix("MatrixPinv", a)
    return [TensorType(a.dtype, a.shape[:-2] + (n, m))]


def _not_converged(x):
    """NumPy's SVD raises LinAlgError on NaN (LAPACK's gesdd refuses a NaN norm): so does the model."""
    from ptonnx.errors import CheckFailedError

    if np.isnan(x).any():
        raise CheckFailedError("SVD did not converge")


def _svd_one(a, full_matrices):
    with np.errstate(all="ignore"):
        u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
    if not np.isfinite(a).all():  # inf: LAPACK's NaN values, and NaN vectors (see the module doc)
        u, s, vt = (np.full_like(v, np.nan) for v in (u, s, vt))
    return u, s, vt


def _svd(x, full_matrices):
    _not_converged(x)
    return tuple(_batched(lambda a, i=i: _svd_one(a, full_matrices)[i], x, core=(2,)).astype(x.dtype, copy=False)
                 for i in range(3))


def _singular_values(x):
    _not_converged(x)
    return _batched(lambda a: _svd_one(a, False)[1], x, core=(2,)).astype(x.dtype, copy=False)


def _pinv_one(a, hermitian):
    if hermitian:  # NumPy's eigh reads the lower triangle, and (mostly) raises on NaN or inf there
        a = np.tril(a) + np.tril(a, -1).T
        if not np.isfinite(a).all():
            from ptonnx.errors import CheckFailedError

            raise CheckFailedError("Eigenvalues did not converge")
    elif not np.isfinite(a).all():
        return np.full(a.T.shape, np.nan, a.dtype)
    return np.linalg.pinv(a, rcond=RCOND)


def _pinv(x, hermitian):
    if not hermitian:
        _not_converged(x)
    return _batched(lambda a: _pinv_one(a, hermitian), x, core=(2,)).astype(x.dtype, copy=False)


define("QR", inputs=("a: T",), outputs=("q: T", "r: T"), dtypes={"T": FLOAT_DTYPES}, type_rule=_qr_rule, semantics=_qr,
       attributes={"mode": (str, "complete")}, traits=("no_fold",), family="linalg_orthogonal",
       doc="Householder QR with LAPACK's signs (geqrf, orgqr): Q (m, m) and R (m, n), or (m, k) and (k, n) when reduced")
define("SVD", inputs=("a: T",), outputs=("u: T", "s: T", "vt: T"), dtypes={"T": FLOAT_DTYPES}, type_rule=_svd_rule,
       semantics=_svd, attributes={"full_matrices": (bool, True)}, traits=("no_fold",), family="linalg_orthogonal",
       doc="U, the singular values (descending) and V^T; NaN input raises LinAlgError, inf gives NaN")
define("SingularValues", inputs=("a: T",), outputs=("s: T",), dtypes={"T": FLOAT_DTYPES}, type_rule=_values_rule,
       semantics=_singular_values, traits=("no_fold",), family="linalg_orthogonal",
       doc="the singular values, descending (SVD with compute_uv=False)")
define("MatrixPinv", inputs=("a: T",), outputs=("out: T",), dtypes={"T": FLOAT_DTYPES}, type_rule=_pinv_rule,
       semantics=_pinv, attributes={"hermitian": (bool, False)}, traits=("no_fold",), family="linalg_orthogonal",
       doc="NumPy's pinv: V diag(1/s) U^T, singular values at most 1e-15 * max(s) taken as zero")
