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

The product A z is summed in order, x = (A[:, 0] z_0 + A[:, 1] z_1) + ..., a Loop over the n
columns (unrolled up to 8) and not a MatMul, so interpret and every runtime add alike, in the
draws' memory (no (batch..., n, n) products).
"""

from __future__ import annotations

import numpy as np

from ptonnx.decompositions.expr import Ex, sqrt, where
from ptonnx.decompositions.linalg.common import counted_loop
from ptonnx.decompositions.random.draws import Draws
from ptonnx.decompositions.registry import decomposes

LINALG_ERROR = "numpy.linalg:LinAlgError"
#: an eigen- or singular value at most this times n times the largest magnitude is taken as 0
NOISE = 4 * np.finfo(np.float64).eps
METHODS = ("cholesky", "eigh", "svd")


def product(a: Ex, z: Ex) -> Ex:
    """einsum("...ij,...j->...i", a, z) for z of the draws' shape (batch..., n), a's batch
    broadcasting to theirs: the columns' terms added in order, a Loop over j."""
    last = z.value.type.ndim - 1
    n = z.op("Shape", start=last, end=last + 1).op("Squeeze", axes=(0,))

    def step(j: Ex, carried: list[Ex], invariants: list[Ex]):
        (x,), (a_, z_) = carried, invariants
        column = a_.op("Gather", j, axis=a_.value.type.ndim - 1)  # A[..., :, j]
        return [x + column * z_.op("Gather", j, axis=last).op("Unsqueeze", axes=(last,))], []

    (x,), _ = counted_loop(n, [z * 0.0], [a, z], step)
    return x


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
    x = mean + product(a, d.normal())
    return d.checked(x, *conds, exception=LINALG_ERROR)


__all__ = ["factor", "mvnormal", "product"]
