"""Hypergeometric draws: NumPy's `random_hypergeometric`, on vectors of the draws' elements.

With N = ngood + nbad and m = min(nsample, N - nsample) (the sample or the items left out, the
fewer), for m < 10 the m items are drawn one by one (NumPy's `hypergeometric_sample`, unrolled:
item i is good with probability goods left / (N - i)); from m = 10 on it is Stadlober's HRUA
ratio-of-uniforms rejection (NumPy's `hypergeometric_hrua`) as a rejection loop
(`rejection.py`). Both count the goods among the m items for the rarer of good and bad, then
turn that into the goods in the sample.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, floor, sqrt, where
from ptonnx.decompositions.random.bits import lane_bits, unit
from ptonnx.decompositions.random.draws import Draws
from ptonnx.decompositions.random.continuous import random_op
from ptonnx.decompositions.random.gamma import flat
from ptonnx.decompositions.random.poisson import log_factorial
from ptonnx.decompositions.random.portable import log
from ptonnx.decompositions.random.rejection import sampler_key, until_accepted

#: NumPy's HRUA constants: 2 sqrt(2 / e) and 3 - 2 sqrt(3 / e)
D1, D2 = 2 * math.sqrt(2 / math.e), 3 - 2 * math.sqrt(3 / math.e)
#: below this many items, they are drawn one by one (NumPy's threshold)
HRUA_FROM = 10
#: HRUA accepts a quarter of its candidates at worst (a narrow law near 0): 255 trips (a sampler key's
#: every lane) leave an element out with probability below 1e-30
HRUA_TRIPS = 255
#: NumPy refuses ngood or nbad from this on
POPULATION_MAX = 1e9


def _hrua(trip, params: list[Ex]) -> tuple[Ex, Ex]:
    a, h, bound, g, fewer, more, m = params
    u, v = trip.uniforms
    x = a + h * (v - 0.5) / u
    inside = (x >= 0.0) & (x < bound)
    k = floor(where(inside, x, 0.0))
    t = g - (log_factorial(k) + log_factorial(fewer - k) + log_factorial(m - k) + log_factorial(more - m + k))
    quick = u * (4.0 - u) - 3.0 <= t
    slow = (u * (u - t) < 1.0) & (2.0 * log(u, normal=True) <= t)
    return k, inside & (quick | slow)


def _one_by_one(key: tuple[Ex, Ex], count: Ex, good: Ex, total: Ex, m: Ex) -> Ex:
    """The goods among m < HRUA_FROM items drawn without replacement."""
    left = good
    for i in range(HRUA_FROM - 1):
        u = unit(lane_bits(key, i, count))
        picked = (u * (total - float(i)) < left) & (m > float(i))
        left = left - where(picked, 1.0, 0.0, like=left)
    return good - left


@random_op("RandomHyperGeometric")
def hypergeometric(d: Draws, ngood: Ex, nbad: Ex, nsample: Ex) -> Ex:
    """NumPy's hypergeometric (see the module doc); it refuses negative counts, nsample above
    ngood + nbad, and ngood or nbad of 1e9 or more."""
    good, bad, sample = flat(d, ngood), flat(d, nbad), flat(d, nsample)
    ok = ((good >= 0.0) & (bad >= 0.0) & (sample >= 0.0) & (sample <= good + bad)
          & (good < POPULATION_MAX) & (bad < POPULATION_MAX))
    good, bad, sample = (where(ok, v, 0.0) for v in (good, bad, sample))
    total = good + bad
    m = sample.op("Min", total - sample)
    large = m >= float(HRUA_FROM)
    fewer, more = good.op("Min", bad), good.op("Max", bad)
    # HRUA, with 50 good, 50 bad and 20 drawn where it is not used
    fewer, more, mh = where(large, fewer, 50.0), where(large, more, 50.0), where(large, m, 20.0)
    size = fewer + more
    p, q = fewer / size, more / size
    a = mh * p + 0.5
    c = sqrt((size - mh) * mh * p * q / (size - 1.0) + 0.5)
    h = D1 * c + D2
    mode = floor((mh + 1.0) * (fewer + 1.0) / (size + 2.0))
    g = log_factorial(mode) + log_factorial(fewer - mode) + log_factorial(mh - mode) + log_factorial(more - mh + mode)
    bound = (mh.op("Min", fewer) + 1.0).op("Min", floor(a + 16.0 * c))
    key = sampler_key(d.key, 0)
    k = until_accepted(key, d.n, [a, h, bound, g, fewer, more, mh], _hrua, normals=0, uniforms=2, op=d.op,
                       max_trips=HRUA_TRIPS, skip=large.op("Not"))
    k = where(good > bad, mh - k, k)
    small = _one_by_one(sampler_key(d.key, 1), d.n, good, total, where(large, 0.0, m))
    k = where(large, k, small)
    x = where(m < sample, good - k, k)
    checks = [(ngood >= 0.0, "ngood < 0"), (nbad >= 0.0, "nbad < 0"), (nsample >= 0.0, "nsample < 0"),
              ((ngood + nbad >= nsample), "ngood + nbad < nsample"),
              ((ngood < POPULATION_MAX) & (nbad < POPULATION_MAX), "both ngood and nbad must be less than 1000000000")]
    return d.checked(d.shaped(x), *checks)


__all__ = ["hypergeometric"]
