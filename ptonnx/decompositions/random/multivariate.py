"""The multivariate normal: mean + A z for standard normals z, A from the covariance by the
method PyTensor's `MvNormalRV` uses (its `method` property, the IR op's attribute).

- cholesky: A = L, cov's Cholesky factor (its lower triangle read, as NumPy's). NumPy refuses a
  matrix that is not positive definite (LinAlgError), where the IR's Cholesky gives NaN: the run
  fails with LinAlgError where a factor holds NaN and its matrix none (NaN in, NaN out, as NumPy).
- eigh: A = V sqrt(w) (eigenvectors in columns, scaled); svd: A = U sqrt(s). As NumPy's, eigh
  gives NaN for a cov holding NaN or inf, and svd refuses NaN (LinAlgError: the IR's SVD). An
  eigen- or singular value within 4 n eps of the largest magnitude is rounding noise of a
  singular (rank-deficient) covariance and taken as 0: NumPy's rounding puts such a w either
  side of 0, and PyTensor's sqrt gives NaN draws for a slightly negative one; a w clearly below
  0 (cov not positive semi-definite) still gives NaN, as PyTensor's. So every runtime draws
  alike there.

The product A z is summed in order (a running sum's last element, not a MatMul), so interpret
and every runtime add alike: (batch..., n, n) products, fine for the small n of covariances.
"""

from __future__ import annotations

import numpy as np

from ptonnx.decompositions.expr import Ex, sqrt, where
from ptonnx.decompositions.random.draws import Draws
from ptonnx.decompositions.registry import decomposes

LINALG_ERROR = "numpy.linalg:LinAlgError"
#: an eigen- or singular value at most this times n times the largest magnitude is taken as 0
NOISE = 4 * np.finfo(np.float64).eps
METHODS = ("cholesky", "eigh", "svd")


def _ints(x: Ex, values) -> Ex:
    return Ex(x.scope, x.scope.constant(np.asarray(values, dtype=np.int64)))


def last(x: Ex, axis: int) -> Ex:
    """x's last element along `axis`, the axis kept."""
    return x.op("Slice", _ints(x, [-1]), _ints(x, [np.iinfo(np.int64).max]), _ints(x, [1]), axes=(axis,))


def _scaled_columns(vectors: Ex, values: Ex) -> Ex:
    """vectors * sqrt(values) (one value a column), values within noise of 0 taken as 0."""
    rank = values.value.type.ndim
    n = values.op("Shape", start=rank - 1, end=rank).cast("float64")
    top = abs(values).op("ReduceMax", axes=(rank - 1,), keepdims=True)
    clean = where(abs(values) <= top * (n * NOISE), 0.0, values)
    return vectors * sqrt(clean).op("Unsqueeze", axes=(rank - 1,))


def factor(cov: Ex, method: str) -> tuple[Ex, list[tuple[Ex, str]]]:
    """A with A A^T = cov by `method`, and the conditions the run fails without (LinAlgError)."""
    if method == "cholesky":
        low = cov.op("Cholesky", lower=True)
        rank = cov.value.type.ndim
        axes = (rank - 2, rank - 1)
        failed = low.isnan().op("ReduceAny", axes=axes) & cov.isnan().op("ReduceAny", axes=axes).op("Not")
        return low, [(failed.op("Not"), "Matrix is not positive definite")]
    if method == "eigh":
        w, v = cov.scope.builder.node("Eigh", [cov.value], {"lower": True}).outputs
        return _scaled_columns(Ex(cov.scope, v), Ex(cov.scope, w)), []
    if method == "svd":
        u, s, _ = cov.scope.builder.node("SVD", [cov.value], {"full_matrices": True}).outputs
        return _scaled_columns(Ex(cov.scope, u), Ex(cov.scope, s)), []
    raise ValueError(f"RandomMvNormal: unknown method {method!r}, not one of {METHODS}")


@decomposes("RandomMvNormal", as_given=True)
def mvnormal(node, inputs):
    """PyTensor's rng_fn: mean + einsum("...ij,...j->...i", A, z), z standard normal in the
    draws' shape (batch..., n)."""
    d = Draws(node, inputs)
    mean, cov = d.params
    a, conds = factor(cov, node.attrs["method"])
    rank = d.shape.value.type.shape[0]
    z = d.normal()
    terms = a * z.op("Unsqueeze", axes=(rank - 1,))  # (batch..., n, n): A_ij z_j
    x = mean + last(terms.op("CumSum", axis=rank), rank).op("Reshape", d.shape)  # (n, 1) rows, or (0, 0)
    return d.checked(x, *conds, exception=LINALG_ERROR)


__all__ = ["factor", "last", "mvnormal"]
