"""Discrete draws that need no rejection: comparisons and inverse CDFs of uniform variates."""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, ceil, floor, where
from ptonnx.decompositions.random.continuous import SCIPY_DOMAIN, random_op
from ptonnx.decompositions.random.draws import Draws
from ptonnx.decompositions.random.portable import log, log1p
from ptonnx.decompositions.registry import decomposes

#: the largest float64 below 2**63: the most a geometric draw gives (NumPy's clamp)
INT64_CLAMP = 9.223372036854775e18
#: integers are drawn as floor(u range) from 53 bits: exact up to this range
MAX_RANGE = 2.0**53


@random_op("RandomBernoulli")
def bernoulli(d: Draws, p: Ex) -> Ex:
    """u < p: 1 with probability p (SciPy's bernoulli refuses p outside [0, 1], NaN too)."""
    x = where(d.unit() < p, 1.0, 0.0, like=p)
    return d.checked(x, ((p >= 0.0) & (p <= 1.0), SCIPY_DOMAIN.format(what="p must be in [0, 1]", dist="bernoulli")))


@random_op("RandomGeometric")
def geometric(d: Draws, p: Ex) -> Ex:
    """NumPy's inversion: ceil(log(u) / log1p(-p)), u in (0, 1); 1 for p = 1; at most 2**63 - 1."""
    x = ceil(log(d.open_unit(), normal=True) / log1p(-p)).op("Min", INT64_CLAMP)
    x = where(p.eq(1.0), 1.0, x)
    return d.checked(x, ((p > 0.0) & (p <= 1.0), "p <= 0, p > 1 or p contains NaNs"))


@decomposes("RandomIntegers", as_given=True)
def integers(node, inputs):
    """low + floor(u (high - low)) from a 53-bit u, below high: uniform to within range / 2**53
    of each value's share; a range beyond 2**53 is refused (the run fails, saying so)."""
    d = Draws(node, inputs)
    low, high = (p.cast("int64") for p in d.raw)
    span = high.cast("float64") - low.cast("float64")
    offset = floor(d.unit() * span).op("Min", span - 1.0)
    x = low + offset.cast("int64")
    x = d.checked(x, (low < high, "low >= high"))
    return d.checked(x, (span <= MAX_RANGE, "ptonnx draws integers over ranges up to 2**53 (high - low is larger)"),
                     exception="builtins:NotImplementedError")


@decomposes("RandomCategorical", as_given=True)
def categorical(node, inputs):
    """PyTensor's: the number of running sums of p (its last axis) below u, u in [0, 1)
    (NumPy's searchsorted; p is not normalised, as PyTensor does not normalise it)."""
    d = Draws(node, inputs)
    (p,) = d.params
    rank = d.shape.value.type.shape[0]  # the draws' rank; p's last axis is the next one
    below = p.op("CumSum", axis=p.value.type.ndim - 1) < d.unit().op("Unsqueeze", axes=(rank,))
    x = below.cast("int64").op("ReduceSum", axes=(rank,))
    # NumPy's binary search over running sums that fall somewhere decides PyTensor's draw: refused
    return d.checked(x, ((p >= 0.0), "p has a negative or NaN probability (PyTensor's draw is then NumPy's binary "
                                      "search over running sums that are not sorted; ptonnx refuses)"))
