"""Linear algebra IR ops: factorisations and solves of (batched) matrices.

Each takes matrices in its last two axes and any number of leading batch axes
(broadcast between operands, as MatMul's). Their semantics, the interpreter's
reference, are PyTensor's `perform`: LAPACK through SciPy, and a failure (a matrix
that is not positive definite, a zero on a triangular matrix's diagonal) gives NaN
where PyTensor gives NaN. onnxruntime has none of them: each has a decomposition
into Loops over MatMul (`ptonnx/decompositions/linalg/`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.errors import TypeRuleError
from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir.schema import REQUIRED, define
from ptonnx.ir.types import FLOAT_DTYPES, Dim, TensorType, broadcast_shapes, promote


def _square(op: str, a: TensorType) -> Dim:
    _need(a.ndim >= 2, op, lambda: f"needs a matrix (2 or more axes), got {a}")
    m, n = a.shape[-2:]
    _need(not (isinstance(m, int) and isinstance(n, int) and m != n), op, lambda: f"needs square matrices, got {a}")
    return n if isinstance(n, int) else m


def _cholesky_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (x,) = types
    n = _square("Cholesky", x)
    return [TensorType(x.dtype, x.shape[:-2] + (n, n))]


def _batched(fn, *arrays, core: Sequence[int]):
    """`fn` on each batch element of `arrays` (core dims `core` each), batch axes broadcast."""
    batch = np.broadcast_shapes(*(a.shape[: a.ndim - c] for a, c in zip(arrays, core, strict=True)))
    full = [np.broadcast_to(a, batch + a.shape[a.ndim - c:]) for a, c in zip(arrays, core, strict=True)]
    results = [fn(*(f[i] for f in full)) for i in np.ndindex(*batch)]
    if not results:  # an empty batch: the core function's shape on zeros
        probe = fn(*(np.zeros(f.shape[len(batch):], f.dtype) for f in full))
        return np.zeros(batch + probe.shape, probe.dtype)
    return np.stack(results).reshape(batch + results[0].shape)


def _cholesky_one(x, lower: bool):
    """PyTensor's Cholesky.perform: LAPACK potrf, the other triangle zeroed; NaN if it fails."""
    from scipy.linalg import get_lapack_funcs

    if x.size == 0:
        return np.zeros(x.shape, x.dtype)
    (potrf,) = get_lapack_funcs(("potrf",), (x,))
    c, info = potrf(x, lower=lower, overwrite_a=False, clean=True)
    if info != 0:
        c[...] = np.nan
    return c


def _cholesky(x, lower):
    return _batched(lambda m: _cholesky_one(m, lower), x, core=(2,)).astype(x.dtype, copy=False)


def _solve_triangular_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    x, b = types
    n = _square("SolveTriangular", x)
    core = a["b_ndim"]
    _need(core in (1, 2), "SolveTriangular", lambda: f"b_ndim must be 1 or 2, got {core!r}")
    _need(b.ndim >= core, "SolveTriangular", lambda: f"b must have at least {core} axes, got {b}")
    rows = b.shape[b.ndim - core]
    _need(not (isinstance(rows, int) and isinstance(n, int) and rows != n), "SolveTriangular",
          lambda: f"a {x} and b {b} have different numbers of rows")
    try:
        batch = broadcast_shapes(x.shape[:-2], b.shape[: b.ndim - core])
    except TypeRuleError as exc:
        raise TypeRuleError(f"SolveTriangular: batch axes of {x} and {b} do not broadcast: {exc}") from None
    rows = n if isinstance(n, int) else rows
    return [TensorType(promote(x.dtype, b.dtype), batch + (rows,) + b.shape[b.ndim - core + 1:])]


def _solve_triangular_one(x, b, lower: bool, unit_diagonal: bool):
    """PyTensor's SolveTriangular.perform: LAPACK trtrs, which refuses (NaN) a zero on the diagonal."""
    from scipy.linalg import solve_triangular

    if b.size == 0:
        return np.zeros(b.shape, b.dtype)
    if not unit_diagonal and np.any(np.diagonal(x) == 0):
        return np.full(b.shape, np.nan, b.dtype)
    with np.errstate(all="ignore"):
        return solve_triangular(x, b, lower=lower, unit_diagonal=unit_diagonal, check_finite=False)


def _solve_triangular(x, b, lower, unit_diagonal, b_ndim):
    dtype = promote(x.dtype.name, b.dtype.name)
    x, b = x.astype(dtype, copy=False), b.astype(dtype, copy=False)
    return _batched(lambda m, v: _solve_triangular_one(m, v, lower, unit_diagonal), x, b, core=(2, b_ndim)).astype(dtype, copy=False)


define("Cholesky", inputs=("a: T",), outputs=("out: T",), dtypes={"T": FLOAT_DTYPES}, type_rule=_cholesky_rule,
       semantics=_cholesky, attributes={"lower": (bool, True)}, traits=("no_fold",), family="linalg",
       doc="the Cholesky factor of each matrix (read from its lower, or upper, triangle); NaN where one is not positive definite")
define("SolveTriangular", inputs=("a: T", "b: T"), outputs=("out: T",), dtypes={"T": FLOAT_DTYPES},
       type_rule=_solve_triangular_rule, semantics=_solve_triangular,
       attributes={"lower": (bool, REQUIRED), "unit_diagonal": (bool, False), "b_ndim": (int, REQUIRED)},
       traits=("no_fold",), family="linalg",
       doc="x with a @ x = b, a triangular (its lower or upper triangle read); NaN where a has a zero on its diagonal")
