"""BetaInc: the regularized incomplete beta function I_x(a, b), in float64.

I_x(a, b) = P(a, b, x) F(a, b, x), with the prefactor P = x**a (1 - x)**b / (a B(a, b)) and
F DiDonato and Morris' continued fraction bfrac (TOMS 708; the contracted fraction of
Numerical Recipes' betacf, written in lambda = a - (a + b) x and 1 - x so that no
coefficient cancels near the mean), which converges quickly for x below the mean
a / (a + b); above it, I = 1 - I_{1-x}(b, a) in the mirrored variables (log x and log(1 - x) = log1p(-x) are taken from x, never from a
rounded 1 - x). The fraction's trip count is data-dependent (up to ~sqrt(max(a, b)) / 4
near the mean): it runs in an IR Loop (the IR Loop, decompositions/loop.py) until every element has
converged, at most MAX_TRIPS trips (a, b up to ~1e10); an element not converged by then
is NaN, never a truncated value.

log P, in the variables of the orientation taken (p, q, u = x', v = 1 - x'):
- min(p, q) >= 10: DiDonato and Morris' brcomp, with lambda = p - (p + q) u:
  log[u**p v**q / B] = log sqrt(pq / (2 pi (p + q))) - p phi(-lambda/p) - q phi(lambda/q)
  - (del(p) + del(q) - del(p + q)), phi(t) = t - log1p(t) and del Stirling's correction
  (lgamma differences of huge arguments would cancel);
- one of p, q >= 10 (the other below): lgamma(s) - lgamma(r + s) of the large s by Stirling
  (DiDonato and Morris' algdiv), the small one through lgamma;
- both below 10: lgamma directly (lgamma(p + 1) = log(p Gamma(p)), exact for tiny p).

Accuracy (float64, against mpmath): see ptonnx/accuracy.py `BY_OP["BetaInc"]`. The
exponent of P is computed to ~eps times its size, so with large parameters the tails
(where P is exp(-E)) carry a relative error ~sqrt(max(a, b) E) eps, the condition of
lambda = a - (a + b) x. Above the mean with b < 0.1 (where 1 - I_{1-x}(b, a) would cancel):
beta_small.py.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, expm1, log, log1p, polyval, select, where
from ptonnx.decompositions.loop import any_above, iterate
from ptonnx.decompositions.registry import decomposes
from ptonnx.decompositions.special.beta_small import (SERIES_UP_TO, SMALL_B, gamma_ratio_log, lgamma1p_small, pochhammer_sum,
                                                power_series, small_b_log_complement)
from ptonnx.decompositions.special.gamma import lgamma

#: Stirling's series of lgamma(x) - ((x - 1/2) log x - x + log sqrt(2 pi)): B_2k / (2k (2k - 1)) x**(1 - 2k),
#: highest first; 9 terms reach 1e-17 from x = 10
STIRLING = (43867 / 244188, -3617 / 122400, 1 / 156, -691 / 360360, 1 / 1188, -1 / 1680, 1 / 1260, -1 / 360, 1 / 12)
#: from here on a parameter's lgamma is replaced by Stirling's series
LARGE = 10.0
#: phi(t) = t - log1p(t) by the atanh series within this |t| (t - log1p(t) cancels near 0)
PHI_SERIES_WITHIN = 0.5
#: beyond this |t|, phi(t) = t - log(1 + t) takes 1 + t from the ratio it is
RATIO_BEYOND = 0.6
LOG_INV_SQRT_2PI = -0.5 * math.log(2 * math.pi)
#: the continued fraction: convergence to a relative change <= TOLERANCE, at most MAX_TRIPS trips
TOLERANCE = 2.3e-16
MAX_TRIPS = 40000
#: Dekker's splitting constant 2**27 + 1, and where splitting would overflow
SPLITTER = 134217729.0
SPLIT_BELOW = 1e290
#: the fraction is evaluated at p >= SMALLEST_P (its scaled start would be subnormal)
SMALLEST_P = 1e-280
#: below this log, a tail rounds to 0 (half the least subnormal is e**-745.13)
NEGLIGIBLE_LOG = -746.0


def stirling_correction(x: Ex) -> Ex:
    """del(x) = lgamma(x) - ((x - 1/2) log x - x + log sqrt(2 pi)), for x >= 10."""
    r = 1.0 / x
    return polyval(r * r, STIRLING) * r


def phi(t: Ex) -> Ex:
    """t - log1p(t) for t > -1, relatively accurate (log1p(t) = 2 atanh(r), r = t / (2 + t))."""
    r = t / (t + 2.0)
    r2 = r * r
    # t - 2r = t**2 / (2 + t); the rest of 2 atanh(r): 2 r**3 (1/3 + r**2/5 + ...)
    tail = polyval(r2, [2.0 / (2 * k + 3) for k in range(17, -1, -1)]) * r2 * r
    series = t * t / (t + 2.0) - tail
    return where(abs(t) <= PHI_SERIES_WITHIN, series, t - log1p(t))


def phi_of_ratio(t: Ex, ratio: Ex) -> Ex:
    """phi(t) given also 1 + t as the ratio it is (u / u0): far from 0, log of the ratio
    itself (TOMS 708 brcomp), not log1p of a t whose rounding 1 + t would magnify."""
    return where(abs(t) > RATIO_BEYOND, t - log(ratio), phi(t))


def log1p_ratio_stirling(small: Ex, large: Ex) -> Ex:
    """lgamma(large) - lgamma(small + large), for large >= 10 (algdiv): no lgamma of a large argument."""
    total = small + large
    return (-(total - 0.5) * log1p(small / large) - small * log(large) + small
            + stirling_correction(large) - stirling_correction(total))


def log_prefactor(p: Ex, q: Ex, u: Ex, v: Ex, lu: Ex, lv: Ex, lam: Ex) -> Ex:
    """log(u**p v**q / (p B(p, q))), v = 1 - u, lu = log u, lv = log v, lam = p - (p + q) u."""
    total = p + q
    # both large (brcomp)
    both = (LOG_INV_SQRT_2PI + 0.5 * (log(p) + log(q) - log(total))
            - p * phi_of_ratio(-lam / p, u * total / p) - q * phi_of_ratio(lam / q, v * total / q)
            - (stirling_correction(p) + stirling_correction(q) - stirling_correction(total)) - log(p))
    # q large, p small: -lgamma(p + 1) - [lgamma(q) - lgamma(p + q)]
    q_large = p * lu + q * lv - lgamma(p + 1.0) - log1p_ratio_stirling(p, q)
    # p large, q small: -lgamma(q) - [lgamma(p) - lgamma(p + q)] - log p
    p_large = p * lu + q * lv - lgamma(q) - log1p_ratio_stirling(q, p) - log(p)
    small = p * lu + q * lv + lgamma(total) - lgamma(p + 1.0) - lgamma(q)
    p_big, q_big = p >= LARGE, q >= LARGE
    return select((p_big & q_big, both), (q_big, q_large), (p_big, p_large), otherwise=small)


def continued_fraction(p: Ex, q: Ex, u: Ex, v: Ex, lam: Ex) -> Ex:
    """p B(p, q) I_u(p, q) / (u**p v**q) by DiDonato and Morris' bfrac, for lam = p - (p + q) u >= 0
    (v = 1 - u); NaN where MAX_TRIPS trips did not suffice."""
    p = where(p < SMALLEST_P, SMALLEST_P, p)  # the fraction is smooth in p down to 0
    c = lam + 1.0
    zero = p * 0.0
    start = [zero, zero + 1.0, p, c * p / (p + 1.0), (p + 1.0) / c, zero + 1.0]

    def step(m: Ex, state):
        p, q, u, v, c, a0, b0, a1, b1, r, err_before = state
        s = p + (m * 2.0 - 1.0)
        w = m * (q - m) * u
        alpha = (p + (m - 1.0)) * (p + q + (m - 1.0)) * w * u / (s * s)
        beta = m + w / s + (p + m) / (p + 1.0 + m * 2.0) * (c + m * (v + 1.0))
        a2, b2 = alpha * a0 + beta * a1, alpha * b0 + beta * b1
        ratio = a2 / b2
        # an element stops once converged: more trips would only add rounding
        done = err_before <= TOLERANCE
        err = where(done, err_before, abs(ratio - r) / ratio)
        frozen = [where(done, old, new) for old, new in
                  ((a0, a1 / b2), (b0, b1 / b2), (a1, ratio), (b1, b2 / b2), (r, ratio))]
        return [p, q, u, v, c, *frozen, err], any_above([err], TOLERANCE)

    *_, r, err = iterate([p, q, u, v, c, *start], step, MAX_TRIPS)
    return where(err <= TOLERANCE, r, math.nan)


def _split(v: Ex) -> tuple[Ex, Ex]:
    """Dekker's split: v = hi + lo exactly, each with at most 26 significant bits."""
    c = v * SPLITTER
    hi = c - (c - v)
    return hi, v - hi


def exact_lambda(p: Ex, q: Ex, u: Ex) -> Ex:
    """p - (p + q) u to within an ulp or two of the result (not of (p + q) u): the rounding errors of
    p + q (TwoSum) and of the product (Dekker's TwoProduct) are added back; the plain formula is
    off by ~(p + q) eps, which the tails of huge p, q turn into a relative error sqrt(p E) eps."""
    s = p + q
    bv = s - p
    e1 = (p - (s - bv)) + (q - bv)  # p + q = s + e1 exactly
    h = s * u
    (sh, sl), (uh, ul) = _split(s), _split(u)
    lo = ((sh * uh - h) + sh * ul + sl * uh) + sl * ul  # s u = h + lo exactly
    plain = p - h
    corrected = (plain - lo) - e1 * u
    return where(abs(s) < SPLIT_BELOW, corrected, p - s * u)


def betainc(a: Ex, b: Ex, x: Ex) -> Ex:
    nan = a.isnan() | b.isnan() | x.isnan()
    invalid = nan | (a < 0.0) | (b < 0.0) | (x < 0.0) | (x > 1.0)
    at_zero = a.eq(0.0) | b.eq(math.inf)  # all the mass at 0
    at_one = b.eq(0.0) | a.eq(math.inf)  # all the mass at 1
    invalid = invalid | (at_zero & at_one)
    ends = x.eq(0.0) | x.eq(1.0)
    regular = (invalid | at_zero | at_one | ends).op("Not")
    # the other elements compute I_{1/2}(1, 1), kept away from the loop's convergence test
    a_, b_, x_ = where(regular, a, 1.0), where(regular, b, 1.0), where(regular, x, 0.5)
    tail, flip, use_small_b, log_j = regular_parts(a_, b_, x_)[:4]
    result = where(use_small_b, -expm1(log_j), where(flip, 1.0 - tail, tail))
    return select(
        (invalid, math.nan),
        (at_zero, where(x > 0.0, 1.0, 0.0, like=x)),
        (at_one, where(x < 1.0, 0.0, 1.0, like=x)),
        (ends, x),
        otherwise=result,
    )


def regular_parts(a_: Ex, b_: Ex, x_: Ex, logs: bool = False) -> tuple[Ex, ...]:
    """For 0 < a_, b_ < inf, 0 < x_ < 1: (tail, flip, use_small_b, log_j). Where use_small_b,
    I = -expm1(log_j) and 1 - I = exp(log_j); elsewhere tail is I (flip false) or 1 - I (flip true),
    relatively accurate. With `logs` (BetaIncInv's Newton steps, beta_inv.py), also log(tail), absolutely
    accurate to ~eps (p log u) also for tiny p, and log(x**a (1 - x)**b / B(a, b))."""
    lx, ly = log(x_), log1p(-x_)
    y_ = 1.0 - x_  # exact where x >= 1/2
    # lambda = a - (a + b) x, from the side that does not cancel
    lam = where(a_ > b_, -exact_lambda(b_, a_, y_), exact_lambda(a_, b_, x_))
    mirror = lam < 0.0  # x above the mean a / (a + b)
    # the method: small-b complement, power series in x, in 1 - x (mirrored), else the fraction
    use_small_b = (b_ < SMALL_B) & (y_ <= SERIES_UP_TO) & (a_ * y_ <= 1.0)
    use_series = use_small_b.op("Not") & (x_ <= SERIES_UP_TO) & (b_ * x_ <= 1.0)
    use_mirrored_series = (use_small_b | use_series).op("Not") & mirror & (y_ <= SERIES_UP_TO) & (a_ * y_ <= 1.0)
    series = use_series | use_mirrored_series
    flip = where(use_series, 0.0, where(use_mirrored_series, 1.0, where(mirror, 1.0, 0.0, like=x_))) > 0.5
    p, q = where(flip, b_, a_), where(flip, a_, b_)
    u, v = where(flip, y_, x_), where(flip, x_, y_)
    lu, lv = where(flip, ly, lx), where(flip, lx, ly)
    lam = where(flip, -lam, lam)
    log_pre = log_prefactor(p, q, u, v, lu, lv, lam)
    # the fraction's elements that take another method compute I_{1/2}(1, 1) (two trips); so do
    # those whose tail rounds to 0 whatever the fraction: I = P sum_n (p + q)_n / (p + 1)_n u**n
    # (a series of ratio (p + q + n) u / (p + 1 + n) <= p / (p + 1) where lam >= 0), so the
    # fraction is at most p + 1 (far from the mean of huge p, q, where it would not converge)
    cf = use_small_b.op("Not") & series.op("Not")
    negligible = None if logs else cf & (log_pre + log(p + 1.0) < NEGLIGIBLE_LOG)
    cf = cf if negligible is None else cf & negligible.op("Not")
    fraction = continued_fraction(where(cf, p, 1.0), where(cf, q, 1.0), where(cf, u, 0.5), where(cf, v, 0.5),
                                  where(cf, lam, 0.0))
    tail = where(series, power_series(p, q, u, log_pre, lv), log_pre.op("Exp") * fraction)
    tail = tail if negligible is None else where(negligible, 0.0, tail)
    log_j = small_b_log_complement(a_, where(use_small_b, b_, 0.05), y_, ly)
    if not logs:
        return tail, flip, use_small_b, log_j
    # the series' log(u**p / (p B(p, q))) for p < SMALL_B without lgamma differences ~eps lgamma(q) off
    tiny_p = where(p < SMALL_B, p, 0.05)
    log_pb = lgamma1p_small(tiny_p) + gamma_ratio_log(q, tiny_p)
    log_lead = where(p < SMALL_B, p * lu - log_pb, log_pre - q * lv)
    log_series = log_lead + log1p(p * pochhammer_sum(p, q, u))
    log_tail = where(series, log_series, log_pre + log(fraction))
    return tail, flip, use_small_b, log_j, log_tail, log_pre + log(p)


@decomposes("BetaInc")
def decompose_betainc(node, inputs):
    return betainc(*inputs)
