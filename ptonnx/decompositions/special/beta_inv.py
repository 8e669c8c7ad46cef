"""BetaIncInv: the x in [0, 1] with I_x(a, b) = y, in float64 (SciPy's betaincinv).

Newton's method in an IR Loop (the IR Loop, decompositions/loop.py), on the smaller tail in logs:

    G(x) = log I_x(a, b) - log y              (y <= 1/2),
    G(x) = log(1 - y) - log(1 - I_x(a, b))    (y > 1/2, 1 - y exact; log1p(-y)),

both increasing in x, with each tail from BetaInc's own methods (beta.py `regular_parts`, whose
logs of x and 1 - x are taken from x itself), in logs so that a subnormal y keeps its bits and a
tiny parameter p, where G ~ p log x, keeps ~eps p |log x| of absolute accuracy (the series'
log(x**p / (p B(p, q))) without lgamma differences). The step is taken in log x where x <= 1/2
and in log(1 - x) above (1 - x exact there), so whichever of x, 1 - x is small keeps its
relative digits: d G / d log x = x I' / T with x I' = x**a (1 - x)**b / (B (1 - x)) and T the
tail. A bracket [lo, hi] (from the signs of G met) guards every step: a Newton value outside it
(or NaN) is replaced by the bracket's geometric midpoint in x (below 1/2) or in 1 - x (above).
An element is done once its log step is below STEP_TOLERANCE (that step is applied: Newton's
error is then ~its square), its value stops changing (a bracket one ulp wide), or a step from
x <= 2**-1000 (1 - x <= 2**-50) lands on 0 (on 1), where G is linear in log x and the answer
rounds there, or G > 0 at the least subnormal (G < 0 at 1 - 2**-53): 0 (1); after MAX_TRIPS trips an element not done is NaN, never a truncated value.

The start: for a, b >= 1 the normal approximation of Abramowitz and Stegun 26.5.22 (the
quantile from erfcinv); otherwise the leading power of the tail it lies in, x = (a y w)**(1/a)
or 1 - x = (b (1 - y) w)**(1/b), w = (a/(a+b))**a / a + (b/(a+b))**b / b, in logs.

Accuracy (float64, against mpmath): see ptonnx/accuracy.py `BY_OP["BetaIncInv"]`.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, exp, expm1, log, log1p, select, sqrt, where
from ptonnx.decompositions.loop import any_above, iterate
from ptonnx.decompositions.registry import decomposes
from ptonnx.decompositions.special.beta import regular_parts
from ptonnx.decompositions.special.beta_small import SERIES_UP_TO, SMALL_B, small_b_log_complement
from ptonnx.decompositions.special.erfinv import erfcinv

MAX_TRIPS = 200
STEP_TOLERANCE = 1e-12
#: the least x > 0 and 1 - x > 0 the bracket's midpoints reach
SMALLEST = 2.0**-1074
NEAREST_ONE = 2.0**-53
#: where G is linear in log x (log(1 - x)): a Newton step that lands on 0 (1) is the answer
LINEAR_BELOW = 2.0**-1000
LINEAR_ABOVE = 2.0**-50
#: from here on a tail is compared with its target directly (both normal)
DIRECT_FROM = 2.0**-1000


def logaddexp(u: Ex, v: Ex) -> Ex:
    hi = where(u > v, u, v)
    return hi + log1p(exp(-abs(u - v)))


def start(a: Ex, b: Ex, y: Ex) -> Ex:
    """A first x, within (0, 1)."""
    # normal approximation (a, b >= 1): x = a / (a + b exp(2 w))
    t = where(y > 0.5, 1.0 - y, y)
    z = erfcinv(t * 2.0) * math.sqrt(2.0)  # the upper quantile of min(y, 1 - y)
    z = where(y > 0.5, -z, z)
    al = (z * z - 3.0) / 6.0
    ia, ib = 1.0 / (a * 2.0 - 1.0), 1.0 / (b * 2.0 - 1.0)
    h = 2.0 / (ia + ib)
    w = z * sqrt(al + h) / h - (ib - ia) * (al + 5.0 / 6.0 - 2.0 / (h * 3.0))
    normal = 1.0 / (1.0 + (b / a) * exp(w * 2.0))
    # leading powers of the two tails
    la, lb, ls = log(a), log(b), log(a + b)
    lt, lu = a * (la - ls) - la, b * (lb - ls) - lb
    lw = logaddexp(lt, lu)
    lower = exp((la + lw + log(y)) / a)
    upper = -expm1((lb + lw + log1p(-y)) / b)
    powers = where(log(y) < lt - lw, lower, upper)
    x = where((a >= 1.0) & (b >= 1.0), normal, powers)
    x = where(x.isnan(), 0.5, x)
    return where(x < SMALLEST, SMALLEST, where(x > 1.0 - NEAREST_ONE, 1.0 - NEAREST_ONE, x))


def midpoint(lo: Ex, hi: Ex) -> Ex:
    """Geometric midpoint in x (hi <= 1/2), in 1 - x (lo >= 1/2), else 1/2."""
    low = sqrt(where(lo < SMALLEST, SMALLEST, lo)) * sqrt(hi)
    one_minus_hi = 1.0 - hi
    high = 1.0 - sqrt(where(one_minus_hi < NEAREST_ONE, NEAREST_ONE, one_minus_hi)) * sqrt(1.0 - lo)
    return select((hi <= 0.5, low), (lo >= 0.5, high), otherwise=lo * 0.0 + 0.5)


def solve(a: Ex, b: Ex, y: Ex) -> Ex:
    """x with I_x(a, b) = y for 0 < a, b < inf, 0 < y < 1; NaN where MAX_TRIPS trips did not suffice."""
    zero = y * 0.0
    state = [a, b, y, zero, zero + 1.0, start(a, b, y), zero]

    def step(m: Ex, state):
        a, b, y, lo, hi, x, done_before = state
        done = done_before > 0.5
        # done elements compute I_{1/2}(1, 1): their fractions end at once
        a_, b_, x_ = where(done, 1.0, a), where(done, 1.0, b), where(done, 0.5, x)
        tail, flip, use_small_b, log_j, log_tail, log_kernel = regular_parts(a_, b_, x_, logs=True)
        other = log1p(-exp(log_tail))
        log_lower = where(use_small_b, log(-expm1(log_j)), where(flip, other, log_tail))
        log_upper = where(use_small_b, log_j, where(flip, log_tail, other))
        # tiny a, x in the series' range: I ~ 1 - a |log x|, so 1 - I from the complement in a's terms
        small_a = (use_small_b | flip).op("Not") & (a_ < SMALL_B) & (x_ <= SERIES_UP_TO) & (b_ * x_ <= 1.0)
        log_i = small_b_log_complement(b_, where(small_a, a_, 0.05), x_, log(x_))
        complement = -expm1(log_i)
        log_upper = where(small_a, log(complement), log_upper)
        upper = y > 0.5
        g = where(upper, log1p(-y) - log_upper, log_lower - log(y))
        # there 1 - I against 1 - y (exact) directly: the difference of their logs (~-20) costs eps 20,
        # which x's sensitivity (d log x = dG / (a x**a / (1 - I)): 600 at a = 3e-12, 1 - y = 2e-9) magnifies
        direct = upper & small_a & (complement >= DIRECT_FROM)
        g = where(direct, log((1.0 - y) / where(direct, complement, 1.0)), g)
        lower_half = x_ <= 0.5
        slope = exp(log_kernel - where(lower_half, log1p(-x_), log(x_)) - where(upper, log_upper, log_lower))
        s = g / slope
        z = 1.0 - x_
        newton = where(lower_half, x_ * exp(-s), 1.0 - z * exp(s))
        lo_, hi_ = where(g < 0.0, x_, lo), where(g > 0.0, x_, hi)
        inside = (newton > lo_) & (newton < hi_)
        edge = (newton.eq(0.0) & (x_ <= LINEAR_BELOW) & (g > 0.0)) | (newton.eq(1.0) & (z <= LINEAR_ABOVE) & (g < 0.0))
        # G > 0 at the least subnormal (G < 0 at 1 - 2**-53): the answer rounds to 0 (1)
        bottom, top = (x_ <= SMALLEST) & (g > 0.0), (x_ >= 1.0 - NEAREST_ONE) & (g < 0.0)
        x_new = select((bottom, 0.0), (top, 1.0), otherwise=where(inside | edge, newton, midpoint(lo_, hi_)))
        now = g.eq(0.0) | edge | bottom | top | (inside & (abs(s) <= STEP_TOLERANCE)) | x_new.eq(x_)
        x_new = where(g.eq(0.0), x_, x_new)
        finished = done | now
        keep = [where(done, old, new) for old, new in ((lo, lo_), (hi, hi_), (x, x_new))]
        flag = where(finished, 1.0, 0.0, like=x)
        return [a, b, y, *keep, flag], any_above([1.0 - flag], 0.5)

    *_, x, done = iterate(state, step, MAX_TRIPS)
    return where(done > 0.5, x, math.nan)


def betaincinv(a: Ex, b: Ex, y: Ex) -> Ex:
    invalid = a.isnan() | b.isnan() | y.isnan() | (a <= 0.0) | (b <= 0.0) | (y < 0.0) | (y > 1.0)
    ends = y.eq(0.0) | y.eq(1.0)
    infinite = a.eq(math.inf) | b.eq(math.inf)  # SciPy: NaN inside (0, 1)
    regular = (invalid | ends | infinite).op("Not")
    a_, b_, y_ = where(regular, a, 1.0), where(regular, b, 1.0), where(regular, y, 0.5)
    half = a.eq(b) & y.eq(0.5)  # exact by symmetry (for tiny a = b, I_x(a, a) is 1/2 to ~a over most of (0, 1))
    # SciPy's limits x = y**(1/a) (b = 1) and 1 - (1 - y)**(1/b) (a = 1): 1 at a = inf, 0 at b = inf
    power = (a.eq(math.inf) & b.eq(1.0)) | (a.eq(1.0) & b.eq(math.inf))
    return select((invalid, math.nan), (ends, y), (power, where(a.eq(1.0), 0.0, 1.0, like=y)), (infinite, math.nan),
                  (half, 0.5), otherwise=solve(a_, b_, y_))


@decomposes("BetaIncInv")
def decompose_betaincinv(node, inputs):
    return betaincinv(*inputs)
