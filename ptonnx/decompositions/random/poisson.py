"""Poisson and negative binomial draws: NumPy's algorithms as IR `Loop`s, on vectors of the draws'
elements (`gamma.flat`).

Poisson of lam >= 10 is Hörmann's (1993) PTRS transformed rejection, as NumPy's
`random_poisson_ptrs`, a rejection loop (`rejection.py`): from uniforms U, V, with
us = 1/2 - |U - 1/2|, the candidate k = floor((2 a / us + b)(U - 1/2) + lam + 0.43) is accepted
at once where us >= 0.07 and V <= vr (about 0.86 of the draws), else where
log V + log(1/alpha) - log(a / us**2 + b) <= -lam + k log lam - log k! (rearranged: no
cancellation between terms of size lam log lam). Below lam = 10 it is
inversion by sequential search (`invert`): the least k whose CDF, summed term by term
(p_0 = exp(-lam), p_k = p_(k-1) lam / k), reaches a uniform u. lam = 0 gives 0.

A negative binomial (SciPy's nbinom, NumPy's `negative_binomial`) is a Poisson of a gamma
of shape n and scale (1 - p) / p; NumPy refuses n and p whose gamma may exceed LAM_MAX (its mean
plus 10 standard deviations does).

`log_factorial` is Stirling's series with its tail tabulated below k = 16 (as TensorFlow's
binomial sampler does for k < 10); `invert` is the sequential search the binomial's small
means share.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ptonnx.decompositions.expr import Ex, floor, sqrt, where
from ptonnx.decompositions.loop import iterate
from ptonnx.decompositions.random.bits import lane_bits, unit
from ptonnx.decompositions.random.continuous import SCIPY_DOMAIN, random_op
from ptonnx.decompositions.random.draws import Draws
from ptonnx.decompositions.random.gamma import Gamma, flat
from ptonnx.decompositions.random.portable import exp, log, log1p
from ptonnx.decompositions.random.rejection import sampler_key, until_accepted

#: NumPy's POISSON_LAM_MAX: int64's maximum less 10 of its square roots
LAM_MAX = float(np.iinfo(np.int64).max - np.sqrt(np.iinfo(np.int64).max) * 10)
#: below this mean, Poisson draws are by inversion (NumPy's threshold)
PTRS_FROM = 10.0
#: the most trips a sequential search runs (it stops once every element's CDF reached its
#: uniform or stopped growing: about the mean plus 40 for means below 10)
SEARCH_TRIPS = 256
#: below this k, log k! takes its Stirling tail from a table
_TABLE = 16
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_TAILS = np.array([math.lgamma(k + 1) - ((k + 0.5) * math.log(k + 1) - (k + 1) + _HALF_LOG_2PI) for k in range(_TABLE)])


def stirling_tail(k: Ex) -> Ex:
    """log k! - ((k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2), for integers k >= 0 (a float64
    vector): tabulated below 16, else 1/(12 x) - 1/(360 x**3) + 1/(1260 x**5) - 1/(1680 x**7), x = k + 1
    (the next term is below 1e-14)."""
    scope = k.scope
    index = k.op("Min", float(_TABLE - 1)).op("Max", 0.0).cast("int64")
    table = Ex(scope, scope.op("Gather", [scope.constant(_TAILS), index.value], {"axis": 0}))
    r = 1.0 / (k + 1.0)
    r2 = r * r
    series = r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680))))
    return where(k < float(_TABLE), table, series)


def log_factorial(k: Ex) -> Ex:
    """log k! for integers k >= 0 (float64)."""
    return (k + 0.5) * log(k + 1.0) - (k + 1.0) + _HALF_LOG_2PI + stirling_tail(k)


def invert(u: Ex, first: Ex, ratio: Callable[[Ex, list[Ex]], Ex], params: list[Ex]) -> Ex:
    """Inversion by sequential search: for each element (float64 vectors), the least k with
    u <= p_0 + ... + p_k, where p_0 = `first` and p_k = p_(k-1) ratio(k, params) (k a float64
    scalar, `params` the body's copies of `params`). An element whose sum stops growing (its terms
    fell below its last bit) stops where it is. A `Loop` of at most SEARCH_TRIPS trips, each a few
    elementwise nodes; it ends when no element is left searching."""

    def step(m: Ex, state: list[Ex]) -> tuple[list[Ex], Ex]:
        k, term, cdf, uu, *ps = state
        k = where(uu > cdf, m, k)
        term = term * ratio(m, ps)
        grown = cdf + term
        cdf = where(grown > cdf, grown, math.inf)
        going = (uu > cdf).op("ReduceAny", axes=(0,))
        return [k, term, cdf, uu, *ps], going

    k, *_ = iterate([first * 0.0, first, first, u, *params], step, SEARCH_TRIPS)
    return k


def _lam_over_k(m: Ex, params: list[Ex]) -> Ex:
    (lam,) = params
    return lam / m


def _ptrs(trip, params: list[Ex]) -> tuple[Ex, Ex]:
    lam, a, b, log_inv_alpha, vr = params
    u, v = trip.uniforms
    u = u - 0.5
    us = 0.5 - abs(u)
    k = floor((2.0 * a / us + b) * u + lam + 0.43)
    fast = (us >= 0.07) & (v <= vr)
    kk = k.op("Max", 0.0)
    lhs = log(v, normal=True) + log_inv_alpha - log(a / (us * us) + b)
    # k log lam - lam - log k!, without the cancellation of terms of size lam log lam
    excess = kk + 1.0 - lam
    rhs = excess - kk * log1p(excess / lam) - 0.5 * log(kk + 1.0) - _HALF_LOG_2PI - stirling_tail(kk)
    slow = (k >= 0.0) & ((us < 0.013) & (v > us)).op("Not") & (lhs <= rhs)
    return k, fast | slow


def poisson_vector(key: tuple[Ex, Ex], count: Ex, lam: Ex, op: str) -> Ex:
    """Poisson draws (a float64 vector of `count`) of means `lam` (a vector of `count`, each in
    [0, LAM_MAX]), under the sampler key `key`: inversion's uniforms on its lane 0, PTRS's
    trips on lanes 1, 2, ..."""
    large = lam >= PTRS_FROM
    big = where(large, lam, PTRS_FROM)
    slam = sqrt(big)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    rejected = until_accepted(key, count, [big, a, b, log(inv_alpha), vr], _ptrs, normals=0, uniforms=2, op=op,
                              skip=large.op("Not"))
    small = where(large, 0.0, lam)
    u = unit(lane_bits(key, 0, count))
    searched = invert(u, exp(-small), _lam_over_k, [small])
    return where(large, rejected, searched)


@random_op("RandomPoisson")
def poisson(d: Draws, lam: Ex) -> Ex:
    """NumPy's poisson (see the module doc); it refuses NaN, negative and too large means."""
    m = flat(d, lam)
    m = where((m >= 0.0) & (m <= LAM_MAX), m, 0.0)
    x = d.shaped(poisson_vector(sampler_key(d.key, 0), d.n, m, d.op))
    return d.checked(x, ((lam > LAM_MAX).op("Not"), "lam value too large"), (lam >= 0.0, "lam < 0 or lam is NaN"))


@random_op("RandomNegBinomial")
def negative_binomial(d: Draws, n: Ex, p: Ex) -> Ex:
    """SciPy's nbinom (NumPy's negative_binomial): a Poisson of mean G (1 - p) / p, G a gamma of
    shape n; SciPy refuses n <= 0 and p outside (0, 1] (NaN too)."""
    nn, pp = flat(d, n), flat(d, p)
    ok = (pp > 0.0) & (pp <= 1.0)
    mean = Gamma(d, where(nn > 0.0, nn, 1.0)).value * where(ok, (1.0 - pp) / pp, 0.0)
    mean = where(mean >= 0.0, mean.op("Min", LAM_MAX), 0.0)
    x = d.shaped(poisson_vector(sampler_key(d.key, 1), d.n, mean, d.op))
    x = d.checked(x, ((n > 0.0) & (p > 0.0) & (p <= 1.0), SCIPY_DOMAIN.format(what="n must be > 0 and p in (0, 1]", dist="nbinom")))
    # NumPy's bound on the Poisson means: 10 standard deviations of the gamma above its mean
    most = (1.0 - p) / p * (n + 10.0 * sqrt(n))
    return d.checked(x, ((most > LAM_MAX).op("Not"), "n too large or p too small, see Generator.negative_binomial Notes"))


__all__ = ["LAM_MAX", "invert", "log_factorial", "negative_binomial", "poisson", "poisson_vector", "stirling_tail"]
