"""SLogDet and MatrixInverse of matrices the graph fixes at 1 x 1: closed forms, no factorisation.

A univariate state-space model's innovation covariance F is 1 x 1 at every step of its Kalman
filter's Scan, and its log-likelihood takes log det F (SLogDet) and, in the gradient, inv(F).
The general decompositions pad, factor and branch (SLogDet's symmetry test and Cholesky-or-LU
are two Ifs, ~150 ONNX nodes in a Loop body run once a time step); for 1 x 1 LAPACK's getrf does
no arithmetic at all (the pivot is the element), so NumPy's answers are these, to the bit:

- slogdet([[a]]) = (sign, log|a|), sign 0 and log|det| -inf for a == 0 (either zero: getrf's
  singular answer), sign +1 for NaN (NumPy takes a NaN pivot's sign as +), log|det| NaN;
- inv([[a]]) = [[1 / a]] (getrs's one division), LinAlgError for a == 0, NaN for NaN.

`fixed_one_by_one` is the test: both core axes of the type are the integer 1, not unknown.
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where


def fixed_one_by_one(x: Ex) -> bool:
    """Whether the type fixes x's last two axes at 1 (a batch of 1 x 1 matrices)."""
    return tuple(x.value.type.shape[-2:]) == (1, 1)


def _elements(a: Ex) -> Ex:
    r = a.value.type.ndim
    return a.op("Squeeze", axes=(r - 2, r - 1))


def slogdet(a: Ex) -> tuple[Ex, Ex]:
    """(sign, log|det|) of 1 x 1 matrices (*batch, 1, 1), each (*batch): NumPy's values."""
    x = _elements(a)
    sign = where(x.eq(0.0), 0.0, where(x < 0.0, -1.0, 1.0, like=x))
    return sign, abs(x).op("Log")


def inverse(a: Ex) -> Ex:
    """inv of 1 x 1 matrices (*batch, 1, 1); a zero element raises as NumPy's singular matrix."""
    ok = a.eq(0.0).op("ReduceAny", axes=tuple(range(a.value.type.ndim)), keepdims=False).op("Not")
    return (1.0 / a).op("Check", ok, message="Singular matrix", exception="numpy.linalg:LinAlgError")
