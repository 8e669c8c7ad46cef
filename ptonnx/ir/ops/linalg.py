"""Linear algebra IR ops: factorisations and solves of (batched) matrices.

Each takes matrices in its last two axes and any number of leading batch axes
(broadcast between operands, as MatMul's). Their semantics, the interpreter's
reference, are PyTensor's `perform`: LAPACK through SciPy, and a failure (a matrix
that is not positive definite, a zero on a triangular matrix's diagonal) gives NaN
where PyTensor gives NaN, and an error where it raises (inv of a singular matrix, LU
of inf or NaN). onnxruntime has none of them: each has a decomposition into Loops
over MatMul (`ptonnx/decompositions/linalg/`).
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


# -- LU and what is computed from it -----------------------------------------------------


def _lu_factor_rule(types, a):
    (x,) = types
    n = _square("LUFactor", x)
    return [TensorType(x.dtype, x.shape[:-2] + (n, n)), TensorType("int64", x.shape[:-2] + (n,))]


def _lu_factor_one(x):
    """PyTensor's LUFactor.perform: LAPACK getrf; LU all NaN where a pivot is exactly zero."""
    from scipy.linalg import get_lapack_funcs

    if x.size == 0:
        return np.zeros(x.shape, x.dtype), np.zeros(0, np.int64)
    (getrf,) = get_lapack_funcs(("getrf",), (x,))
    lu, piv, info = getrf(x, overwrite_a=False)
    if info != 0 or not np.isfinite(x).all():  # inf or NaN: NaN (ptonnx's choice, see lu.py)
        lu[...] = np.nan
    return lu, piv.astype(np.int64)


def _lu_factor(x):
    lus = _batched(lambda m: _lu_factor_one(m)[0], x, core=(2,)).astype(x.dtype, copy=False)
    pivots = _batched(lambda m: _lu_factor_one(m)[1], x, core=(2,)).astype(np.int64, copy=False)
    return lus, pivots


def _pivots_rule(types, a):
    return [TensorType("int64", types[0].shape)]


def _pivot_to_permutation_one(pivots, inverse: bool):
    """PyTensor's PivotToPermutations.perform: LAPACK's row swaps applied in order."""
    order = np.arange(len(pivots), dtype=np.int64)
    for i, p in enumerate(pivots):
        order[i], order[p] = order[p], order[i]
    return order if inverse else np.argsort(order)


def _pivot_to_permutation(pivots, inverse):
    return _batched(lambda p: _pivot_to_permutation_one(p, inverse), pivots, core=(1,)).astype(np.int64, copy=False)


def _solve_rule(types, a):
    x, b = types
    _need(a["assume_a"] in SOLVE_KINDS, "Solve", lambda: f"assume_a must be one of {sorted(SOLVE_KINDS)}, got {a['assume_a']!r}")
    return _solve_triangular_rule(types, {"b_ndim": a["b_ndim"]})


#: what `Solve` takes for assume_a: LU with partial pivoting for all but "pos" (Cholesky)
SOLVE_KINDS = frozenset({"gen", "sym", "her", "pos", "tridiagonal"})


def _solve_one(x, b, assume_a: str, lower: bool):
    """PyTensor's Solve.perform (scipy.linalg.solve), NaN where it raises LinAlgError (PyTensor
    gives NaN of a's shape there, which is b's only when b is square: ptonnx keeps b's)."""
    import warnings

    import scipy.linalg

    if b.size == 0 or x.size == 0:
        return np.zeros(b.shape, b.dtype)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # LinAlgWarning: ill-conditioned, solved all the same
            return scipy.linalg.solve(x, b, lower=lower, assume_a=assume_a, check_finite=False)
    except np.linalg.LinAlgError:
        return np.full(b.shape, np.nan, b.dtype)


def _solve(x, b, assume_a, lower, b_ndim):
    dtype = promote(x.dtype.name, b.dtype.name)
    x, b = x.astype(dtype, copy=False), b.astype(dtype, copy=False)
    return _batched(lambda m, v: _solve_one(m, v, assume_a, lower), x, b, core=(2, b_ndim)).astype(dtype, copy=False)


def _det_rule(types, a):
    (x,) = types
    _square("Det", x)
    return [TensorType(x.dtype, x.shape[:-2])]


def _slogdet_rule(types, a):
    (x,) = types
    _square("SLogDet", x)
    return [TensorType(x.dtype, x.shape[:-2])] * 2


def _inverse_rule(types, a):
    (x,) = types
    n = _square("MatrixInverse", x)
    return [TensorType(x.dtype, x.shape[:-2] + (n, n))]


def _slogdet(x):
    with np.errstate(all="ignore"):
        sign, logdet = np.linalg.slogdet(x)
    return sign.astype(x.dtype), logdet.astype(x.dtype)


def _inverse(x):
    from ptonnx.errors import CheckFailedError

    try:
        return np.linalg.inv(x).astype(x.dtype, copy=False)
    except np.linalg.LinAlgError as exc:  # PyTensor raises it; so does the model (a Check)
        raise CheckFailedError(str(exc)) from exc


define("LUFactor", inputs=("a: T",), outputs=("lu: T", "pivots: int64"), dtypes={"T": FLOAT_DTYPES}, type_rule=_lu_factor_rule,
       semantics=_lu_factor, traits=("no_fold",), family="linalg",
       doc="LAPACK getrf: L (unit, below) and U packed, and the row swapped with each row in turn; LU all NaN where singular or not finite")
define("PivotToPermutations", inputs=("pivots: int64",), outputs=("out: int64",), dtypes={}, type_rule=_pivots_rule,
       semantics=_pivot_to_permutation, attributes={"inverse": (bool, True)}, traits=("no_fold",), family="linalg",
       doc="LAPACK's row swaps applied in order: the row order (inverse) or its inverse permutation")
define("Solve", inputs=("a: T", "b: T"), outputs=("out: T",), dtypes={"T": FLOAT_DTYPES}, type_rule=_solve_rule,
       semantics=_solve, attributes={"assume_a": (str, "gen"), "lower": (bool, False), "b_ndim": (int, REQUIRED)},
       traits=("no_fold",), family="linalg",
       doc="x with a @ x = b (scipy.linalg.solve); NaN where a is singular (or, for pos, not positive definite)")
define("Det", inputs=("a: T",), outputs=("out: T",), dtypes={"T": FLOAT_DTYPES}, type_rule=_det_rule,
       semantics=lambda x: np.asarray(np.linalg.det(x), x.dtype), traits=("no_fold",), family="linalg",
       doc="the determinant (NumPy's: the product of LU's diagonal, signed by the row swaps)")
define("SLogDet", inputs=("a: T",), outputs=("sign: T", "logabsdet: T"), dtypes={"T": FLOAT_DTYPES}, type_rule=_slogdet_rule,
       semantics=_slogdet, traits=("no_fold",), family="linalg",
       doc="sign and log|det| (NumPy's: 0 and -inf for a singular matrix); fixed 1 x 1 matrices (a univariate "
           "Kalman filter's F) in closed form, no symmetry test or If (`linalg/one_by_one.py`)")
define("MatrixInverse", inputs=("a: T",), outputs=("out: T",), dtypes={"T": FLOAT_DTYPES}, type_rule=_inverse_rule,
       semantics=_inverse, traits=("no_fold",), family="linalg",
       doc="the inverse (NumPy's inv); a singular matrix raises LinAlgError, as in PyTensor; a matrix the type "
           "fixes at 1 x 1 is 1 / a, NumPy's to the bit, no factorisation (`linalg/one_by_one.py`)")


def _expm_rule(types, a):
    (x,) = types
    n = _square("Expm", x)
    return [TensorType(x.dtype, x.shape[:-2] + (n, n))]


def _expm(x):
    import scipy.linalg

    return _batched(scipy.linalg.expm, x, core=(2,)).astype(x.dtype, copy=False)


define("Expm", inputs=("a: T",), outputs=("out: T",), dtypes={"T": FLOAT_DTYPES}, type_rule=_expm_rule,
       semantics=_expm, traits=("no_fold",), family="linalg",
       doc="the matrix exponential (scipy.linalg.expm)")


def _lu_rule(types, a):
    (x,) = types
    _need(x.ndim >= 2, "LU", lambda: f"needs a matrix (2 or more axes), got {x}")
    m, n = x.shape[-2:]
    k = min(m, n) if isinstance(m, int) and isinstance(n, int) else m if m == n else None
    batch = x.shape[:-2]
    rows = m if m == n or (isinstance(n, int) and n > 0) else 0 if n == 0 else None  # scipy: none for (m, 0)
    return [TensorType(x.dtype, batch + (m, k)), TensorType(x.dtype, batch + (k, n)), TensorType("int64", batch + (rows,))]


def _lu_one(x, permute_l: bool):
    """PyTensor's LU.perform: scipy.linalg.lu, whose check_finite raises ValueError on inf or NaN;
    a singular matrix is no error (getrf's info > 0: U has a zero on its diagonal)."""
    from scipy.linalg import lu

    from ptonnx.errors import CheckFailedError

    if not np.isfinite(x).all():
        raise CheckFailedError("array must not contain infs or NaNs")
    p, low, up = lu(x, p_indices=True, check_finite=False)
    return (low[p] if permute_l else low), up, p.astype(np.int64)


def _lu(x, permute_l):
    dtypes = (x.dtype, x.dtype, np.int64)
    return tuple(_batched(lambda m, k=k: _lu_one(m, permute_l)[k], x, core=(2,)).astype(dtypes[k], copy=False) for k in range(3))


define("LU", inputs=("a: T",), outputs=("l: T", "u: T", "p: int64"), dtypes={"T": FLOAT_DTYPES}, type_rule=_lu_rule,
       semantics=_lu, attributes={"permute_l": (bool, False)}, traits=("no_fold",), family="linalg",
       doc="scipy.linalg.lu of (m, n) matrices, k = min(m, n): L (m, k; P L with permute_l), U (k, n) and p (a = (L U)[p]); "
           "a singular matrix is factored (a zero pivot), inf or NaN raises ValueError")
