"""Discrete draws that need no rejection: comparisons and inverse CDFs of uniform variates."""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, ceil, floor, where
from ptonnx.decompositions.linalg.common import counted_loop
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
    """PyTensor's draw, NumPy's searchsorted(cumsum(p), u) (side left) over p's last axis, u in
    [0, 1): NumPy's binary search, lo = mid + 1 where sums[mid] < u else hi = mid, mid = lo +
    (hi - lo) // 2, for bit_length(n) steps. PyTensor neither normalises nor checks p, and the
    search answers for any sums (unsorted, from negative p; NaN compares as not below u), so
    every p draws as in PyTensor. Each row searches its own slice of the flattened sums."""
    d = Draws(node, inputs)
    (p,) = d.params
    last = p.value.type.ndim - 1
    u = d.unit()
    sizes = p.op("Shape", start=last, end=last + 1)
    sums = p.op("CumSum", axis=last).op("Expand", d.shape.op("Concat", sizes, axis=0)).op("Reshape", sizes.const([-1]))
    n = sizes.op("Squeeze", axes=(0,))
    start = (n.const(0).op("Range", d.n, n.const(1)) * n).op("Reshape", d.shape)  # each row's offset in sums
    top = d.n * n - 1
    static = p.value.type.shape[last]
    if isinstance(static, int):
        steps = n.const(static.bit_length())
    else:  # at least bit_length(n) steps (one more is a no-op: lo = hi stays); none for n = 0
        steps = floor(log(n.op("Max", n.const(1)).cast("float64")) / math.log(2)).cast("int64") + 2
        steps = where(n > 0, steps, 0)

    def step(trip, carried, invariants):
        (lo, hi), (sums_, u_, top_) = carried, invariants
        mid = lo + (hi - lo).op("IntDiv", 2)
        right = (lo < hi) & (sums_.op("Gather", mid.op("Min", top_), axis=0) < u_)
        return [where(right, mid + 1, lo), where(right, hi, mid)], []

    (lo, _), _ = counted_loop(steps, [start, start + n], [sums, u, top], step)
    return lo - start
