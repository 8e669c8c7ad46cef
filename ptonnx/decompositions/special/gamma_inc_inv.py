"""GammaIncInv (the x with P(a, x) = y) and GammaIncCInv (the x with Q(a, x) = y), in float64
(SciPy's gammaincinv, gammainccinv).

Both solve for the smaller tail, in logs: with T = P (lower tail, target p = min(y, 1 - y) on
P's side) or T = Q, and tau = log of that target (1 - y exact for y > 1/2: log1p(-y)),

    G(u) = log P(a, e**u) - tau    or    G(u) = tau - log Q(a, e**u),

both increasing in u = log x (evaluated as log(P / t) or log(t / Q) where the tail and t are
normal: the logs' own rounding, eps |tau|, would be amplified by 1 / slope, which is up to
|log x| for tiny a), by Newton's method in u inside an IR Loop (the IR Loop, decompositions/loop.py):
d log P / du = x**a e**-x / (Gamma(a) P) and d log Q / du = -x**a e**-x / (Gamma(a) Q), with
each tail's log from gamma_inc.py's methods (`log_tails`: the smaller tail keeps its log past
its underflow, so a subnormal target keeps its digits). Near x = 0, log P is a u - log
Gamma(1 + a) + O(x): Newton is exact there, and the relative error of x is that of log P over
a, which is ~eps |log x|, whatever a. A bracket [lo, hi] from the signs of G guards every
step: a Newton value outside it (or NaN) is replaced by the bracket's geometric midpoint. An
element is done once its step is below STEP_TOLERANCE (the step is applied: the error is then
~its square), its value stops changing, or a step from x <= 2**-1000 lands on 0 with G > 0
(G is linear or convex in u there: the root is below the least subnormal, the answer rounds to
0); after MAX_TRIPS trips an element not done is NaN, never a truncated value.

The start: Wilson and Hilferty's cube-root normal approximation x = a (1 - 1/9a + z/3 sqrt a)**3
(z the normal quantile of the target, from erfcinv) for a >= 1 where its base is above 1/2; else
the leading power of the tail the target lies in: x = (p Gamma(1 + a))**(1/a) for P, and
x = -tau - log Gamma(a) + (a - 1) log x (once, from x = max(-tau - log Gamma(a), 1)) for Q.

Special values (SciPy's where they are consistent): NaN for NaN, a < 0, y outside [0, 1];
y = 0 gives 0 (GammaIncInv) or inf (GammaIncCInv), y = 1 the other; at a = 0 and a = inf,
where P is a step, NaN inside (0, 1) (SciPy's are mixed: gammaincinv(0, 1 - 2**-53) = 0).

Accuracy (float64, against mpmath): see ptonnx/accuracy.py `BY_OP["GammaIncInv"]`.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, exp, log, select, sqrt, where
from ptonnx.decompositions.loop import any_above, iterate
from ptonnx.decompositions.registry import binary, decomposes
from ptonnx.decompositions.special.erfinv import erfcinv
from ptonnx.decompositions.special.gamma import lgamma_positive
from ptonnx.decompositions.special.gamma_inc import lgamma1p, log_tails

MAX_TRIPS = 200
STEP_TOLERANCE = 1e-12
SMALLEST = 2.0**-1074
LARGEST = 1.7976931348623157e308
#: from here on a tail and its target are compared directly, not by their logs
NORMAL = 2.0**-1000
#: below this x, G is linear (P) or convex (Q) in log x: a Newton step that lands on 0 is the answer
LINEAR_BELOW = 2.0**-1000


def start(a: Ex, tau: Ex, lower: Ex) -> Ex:
    """A first x in [SMALLEST, LARGEST] for the target e**tau on P's side (`lower`) or Q's."""
    target = exp(tau)
    z = erfcinv(target * 2.0) * math.sqrt(2.0)  # the upper normal quantile of the target
    z = where(lower, -z, z)
    base = 1.0 - 1.0 / (a * 9.0) + z / (sqrt(a) * 3.0)
    wilson_hilferty = a * base * base * base
    power = exp((tau + lgamma1p(a)) / a)
    log_gamma = lgamma_positive(a)
    first = -tau - log_gamma
    first = where(first > 1.0, first, 1.0)
    upper = first + (a - 1.0) * log(first)
    x = select(((a >= 1.0) & (base > 0.5), wilson_hilferty), (lower, power), otherwise=upper)
    x = where(x.isnan(), 1.0, x)
    return where(x < SMALLEST, SMALLEST, where(x > LARGEST, LARGEST, x))


def solve(a: Ex, target: Ex, lower: Ex) -> Ex:
    """x with P(a, x) = target (`lower`) or Q(a, x) = target, for 0 < a < inf and 0 < target <= 1/2;
    NaN where MAX_TRIPS trips did not suffice."""
    zero = a * 0.0
    flag = where(lower, 1.0, 0.0, like=a)
    state = [a, target, flag, zero, zero + math.inf, start(a, log(target), lower), zero]

    def step(m: Ex, state):
        a, target, flag, lo, hi, x, done_before = state
        tau = log(target)
        done = done_before > 0.5
        lower = flag > 0.5
        # done elements compute P(1, 1): their methods are cheap and finite there
        a_, x_ = where(done, 1.0, a), where(done, 1.0, x)
        log_p, log_q, ratio_p, ratio_q, p, q = log_tails(a_, x_)
        # log(T / t) where both are normal: the logs' own rounding (eps |tau|) would be amplified
        # by 1 / slope, up to |log x| where a is tiny
        tail = where(lower, p, q)
        direct = (tail >= NORMAL) & (target >= NORMAL)
        ratio = where(direct, where(lower, tail / target, target / tail), 1.0)
        g = where(direct, log(ratio), where(lower, log_p - tau, tau - log_q))
        slope = exp(where(lower, ratio_p, ratio_q))
        s = g / slope
        # in log x, but in x for Q beyond max(a, 1), where log Q ~ -x: linear in x, exponential in log x
        in_x = lower.op("Not") & (x_ > where(a_ > 1.0, a_, 1.0))
        newton = where(in_x, x_ - x_ * s, x_ * exp(-s))
        lo_, hi_ = where(g < 0.0, x_, lo), where(g > 0.0, x_, hi)
        inside = (newton >= lo_) & (newton <= hi_)  # a step that rounds away keeps x: done
        edge = newton.eq(0.0) & (x_ <= LINEAR_BELOW) & (g > 0.0)
        bottom = (x_ <= SMALLEST) & (g > 0.0)  # the root is below the least subnormal
        top = (x_ >= LARGEST) & (g < 0.0)  # ... above the largest double
        low = where(lo_ < SMALLEST, SMALLEST, lo_)
        high = where(hi_ > LARGEST, LARGEST, hi_)
        midpoint = sqrt(low) * sqrt(high)
        x_new = select((bottom, 0.0), (top, math.inf), otherwise=where(inside | edge, newton, midpoint))
        failed = g.isnan()
        now = g.eq(0.0) | edge | bottom | top | failed | (inside & (abs(s) <= STEP_TOLERANCE)) | x_new.eq(x_)
        x_new = select((g.eq(0.0), x_), (failed, math.nan), otherwise=x_new)
        finished = done | now
        keep = [where(done, old, new) for old, new in ((lo, lo_), (hi, hi_), (x, x_new))]
        flag_done = where(finished, 1.0, 0.0, like=x)
        return [a, target, flag, *keep, flag_done], any_above([1.0 - flag_done], 0.5)

    *_, x, done = iterate(state, step, MAX_TRIPS)
    return where(done > 0.5, x, math.nan)


def _inverse(a: Ex, y: Ex, of_p: bool) -> Ex:
    """The x with P(a, x) = y (`of_p`) or Q(a, x) = y, with the special values of the docstring."""
    invalid = a.isnan() | y.isnan() | (a < 0.0) | (y < 0.0) | (y > 1.0)
    at_zero, at_one = (0.0, math.inf) if of_p else (math.inf, 0.0)
    step_function = a.eq(0.0) | a.eq(math.inf)
    regular = (invalid | y.eq(0.0) | y.eq(1.0) | step_function).op("Not")
    a_, y_ = where(regular, a, 1.0), where(regular, y, 0.5)
    # the smaller tail: P's side when y <= 1/2 for P (y > 1/2 for Q)
    lower = (y_ <= 0.5) if of_p else (y_ > 0.5)
    target = where(y_ <= 0.5, y_, 1.0 - y_)  # exact
    return select((invalid, math.nan), (y.eq(0.0), at_zero), (y.eq(1.0), at_one), (step_function, math.nan),
                  otherwise=solve(a_, target, lower))


def gammaincinv(a: Ex, y: Ex) -> Ex:
    return _inverse(a, y, of_p=True)


def gammainccinv(a: Ex, y: Ex) -> Ex:
    return _inverse(a, y, of_p=False)


for _op, _fn in {"GammaIncInv": gammaincinv, "GammaIncCInv": gammainccinv}.items():
    decomposes(_op)(binary(_fn))
