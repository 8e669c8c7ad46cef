"""Symmetric eigendecomposition IR ops: Eigh (values and vectors) and Eigvalsh (values).

Batched as the other linear-algebra ops (matrices in the last two axes, leading batch axes
broadcast between a and b). Only the triangle `lower` names is read (LAPACK's syevr/sygvd);
the eigenvalues are ascending, the eigenvectors are the columns of v. With b (positive
definite), the generalised problem a v = w b v, v normalised as v^T b v = I (scipy.linalg.eigh).

Semantics, the interpreter's reference: scipy.linalg.eigh with check_finite=False, except that a
matrix holding inf or NaN in its read triangle (of a or b) gives NaN for its eigenvalues and
eigenvectors (LAPACK's outcome there is arbitrary); a b that is not positive definite raises
LinAlgError, as scipy does. What PyTensor raises before LAPACK (scipy's check_finite, NumPy's
"Eigenvalues did not converge") is checked by lifting (`lifting/linalg_eigen.py`).
"""

from __future__ import annotations

import numpy as np

from ptonnx.errors import TypeRuleError
from ptonnx.ir.ops.linalg import _batched, _square
from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir.schema import define
from ptonnx.ir.types import FLOAT_DTYPES, TensorType, broadcast_shapes, promote


def _shapes(op: str, types) -> tuple[str, tuple, object]:
    a = types[0]
    n = _square(op, a)
    batch = a.shape[:-2]
    dtype = a.dtype
    if len(types) > 1:
        b = types[1]
        m = _square(op, b)
        _need(not (isinstance(n, int) and isinstance(m, int) and n != m), op,
              lambda: f"a {a} and b {b} have different sizes")
        try:
            batch = broadcast_shapes(batch, b.shape[:-2])
        except TypeRuleError as exc:
            raise TypeRuleError(f"{op}: batch axes of {a} and {b} do not broadcast: {exc}") from None
        dtype = promote(dtype, b.dtype)
        n = n if isinstance(n, int) else m
    return dtype, batch, n


def _eigh_rule(types, attrs):
    dtype, batch, n = _shapes("Eigh", types)
    return [TensorType(dtype, batch + (n,)), TensorType(dtype, batch + (n, n))]


def _eigvalsh_rule(types, attrs):
    dtype, batch, n = _shapes("Eigvalsh", types)
    return [TensorType(dtype, batch + (n,))]


def _read(x, lower: bool):
    """The matrix the triangle `lower` names stands for (symmetric)."""
    half = np.tril(x) if lower else np.triu(x)
    return half + np.swapaxes(half, -1, -2) - np.diag(np.diagonal(x))


def _eigh_one(a, b, lower: bool):
    import scipy.linalg

    from ptonnx.errors import CheckFailedError

    n = a.shape[-1]
    if n == 0:
        return np.zeros(0, a.dtype), np.zeros((0, 0), a.dtype)
    sa = _read(a, lower)
    sb = None if b is None else _read(b, lower)
    if not np.isfinite(sa).all() or (sb is not None and not np.isfinite(sb).all()):
        return np.full(n, np.nan, a.dtype), np.full((n, n), np.nan, a.dtype)
    try:
        return scipy.linalg.eigh(sa, sb, lower=lower, check_finite=False)
    except np.linalg.LinAlgError as exc:  # b is not positive definite: scipy raises, so does the model
        raise CheckFailedError(str(exc)) from exc


def _eigh(a, b=None, *, lower=True):
    dtype = a.dtype if b is None else np.promote_types(a.dtype, b.dtype)
    arrays = (a,) if b is None else (a, b)
    arrays = tuple(x.astype(dtype, copy=False) for x in arrays)

    def part(k):
        return _batched(lambda *m: _eigh_one(m[0], m[1] if len(m) > 1 else None, lower)[k], *arrays,
                        core=(2,) * len(arrays)).astype(dtype, copy=False)

    return part(0), part(1)


def _eigvalsh(a, b=None, *, lower=True):
    return _eigh(a, b, lower=lower)[0]


define("Eigh", inputs=("a: T", "b?: T"), outputs=("w: T", "v: T"), dtypes={"T": FLOAT_DTYPES}, type_rule=_eigh_rule,
       semantics=_eigh, attributes={"lower": (bool, True)}, traits=("no_fold",), family="linalg_eigen",
       doc="eigenvalues (ascending) and eigenvectors (columns) of symmetric a, one triangle read; with b "
           "(positive definite) of a v = w b v; NaN where a matrix holds inf or NaN")
define("Eigvalsh", inputs=("a: T", "b?: T"), outputs=("w: T",), dtypes={"T": FLOAT_DTYPES}, type_rule=_eigvalsh_rule,
       semantics=_eigvalsh, attributes={"lower": (bool, True)}, traits=("no_fold",), family="linalg_eigen",
       doc="the eigenvalues (ascending) of symmetric a, one triangle read (of a v = w b v with b); NaN where "
           "a matrix holds inf or NaN")
