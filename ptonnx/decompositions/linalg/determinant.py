"""Det and SLogDet: from LU with partial pivoting (`lu.lu_upper`, LAPACK's getrf, as NumPy's), and
SLogDet of symmetric positive definite matrices from Cholesky.

The product of U's diagonal (Det) or the sum of its logs (SLogDet), the sign from the pivots'
parity; a zero pivot is NumPy's singular answer (0, or sign 0 and log|det| -inf).

SLogDet first checks, for the whole batch, that every matrix equals its transpose exactly; if so
it factors them by Cholesky (`cholesky.py`, half the flops of LU and a 9-node column step
against LU's 27), and if every factor's diagonal is positive and finite (the matrices are
positive definite) the answer is sign 1 and log|det| = 2 sum log L_ii. Otherwise (not
symmetric, not positive definite, NaN or inf: the Cholesky is then NaN, or inf on its diagonal)
it runs LU as before: so those cost a symmetry test, and symmetric ones also the Cholesky. Both
are backward stable; log|det|'s absolute error is det's relative error, some n cond eps either
way, so the two agree as LU with another rounding order would (the tests hold both to NumPy's).
Covariance matrices (a Kalman filter's innovations, a GP's kernel) are the common case: at
n = 1,000 their SLogDet takes about a third of the time of a non-symmetric matrix's
(benchmarks/linalg.py, `SLogDet` against `SLogDet (not symmetric)`). Det keeps LU alone: its product of Cholesky's diagonal squared
would not overflow or underflow where NumPy's product of U's diagonal does.
"""

from __future__ import annotations

import numpy as np

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import branch, cholesky_diagonal, dim, flatten_batch, mT, vec, zeros
from ptonnx.decompositions.linalg.lu import lu_upper, swap_parity
from ptonnx.decompositions.linalg import one_by_one
from ptonnx.decompositions.registry import decomposes


def _diagonal_and_parity(x: Ex) -> tuple[Ex, Ex, Ex]:
    pivots, diag, singular, _ = lu_upper(x)
    return diag, swap_parity(pivots, diag), singular  # the padding's diagonal is 1


@decomposes("Det")
def det(node, inputs):
    a, batch = flatten_batch(inputs[0], 2)
    diag, parity, singular = _diagonal_and_parity(a)
    value = where(singular, 0.0, diag.op("ReduceProd", axes=(1,), keepdims=False) * parity)
    return value.op("Reshape", batch)


def _all(x: Ex) -> Ex:
    """Whether every element of bool x holds (a scalar; True for none)."""
    return x.op("Not").op("ReduceAny", axes=tuple(range(x.value.type.ndim)), keepdims=False).op("Not")


def _by_lu(args: list[Ex]) -> list[Ex]:
    _, a = args
    diag, parity, singular = _diagonal_and_parity(a)
    # NumPy's sign: the product of the pivots' signs, a NaN pivot's taken as + (its log|det| is NaN)
    sign = where(diag < 0.0, -1.0, 1.0, like=diag).op("ReduceProd", axes=(1,), keepdims=False) * parity
    logdet = abs(diag).op("Log").op("ReduceSum", axes=(1,), keepdims=False)
    return [where(singular, 0.0, sign), where(singular, float("-inf"), logdet)]  # NumPy's, for a zero pivot


def _by_cholesky(args: list[Ex]) -> list[Ex]:
    factor_diagonal, _ = args  # all positive and finite
    return [factor_diagonal.op("Sign").op("ReduceProd", axes=(1,), keepdims=False),
            factor_diagonal.op("Log").op("ReduceSum", axes=(1,), keepdims=False) * 2.0]


@decomposes("SLogDet")
def slogdet(node, inputs):
    if one_by_one.fixed_one_by_one(inputs[0]):
        return one_by_one.slogdet(inputs[0])
    a, batch = flatten_batch(inputs[0], 2)

    def cholesky(args):
        return list(cholesky_diagonal(args[0]))

    def not_symmetric(args):
        (a,) = args
        return [zeros(a, vec(dim(a, 0), dim(a, 2))), Ex(a.scope, a.scope.constant(np.asarray(False)))]

    d, definite = branch(_all(a.eq(mT(a))), [a], cholesky, not_symmetric)
    sign, logdet = branch(definite, [d, a], _by_cholesky, _by_lu)
    return sign.op("Reshape", batch), logdet.op("Reshape", batch)
