"""Hyp2F1: the Gauss hypergeometric function 2F1(a, b; c; z), in float64.

Candidate Gauss series run side by side in one IR Loop (the IR Loop, decompositions/loop.py), each
element until its tail is below 1e-17 of its sum:
- 0 <= z < 1: F(a, b; c; z), and Euler's (1 - z)**(c - a - b) F(c - a, c - b; c; z);
- z < 0 (w = z / (z - 1) in (0, 1)): Pfaff's (1 - z)**-a F(a, c - b; c; w) and
  (1 - z)**-b F(b, c - a; c; w);
- a or b a non-positive integer (a polynomial), any finite z: the series that terminates (for
  z < 0 also F(a, b; c; z) itself).
No transformation needs Gamma functions. Along each series a first-order bound of its rounding
errors is carried: the relative error of each term (the roundings of its factors, and of a
computed parameter such as c - b, whose factor (c - b + k) may be small) times the term, plus
that of the summation. The candidate with the smaller bound (with that of its prefactor) is
taken; where even that bound exceeds ACCEPT, or the series variable is beyond X_MAX (and the
series does not terminate), or MAX_TRIPS trips did not suffice, the result is NaN: never a
number with an unknown error. Cancelling series (large negative parameters, z near the
polynomial's roots) are refused by the bound.

z = 1: Gauss's theorem Gamma(c) Gamma(c - a - b) / (Gamma(c - a) Gamma(c - b)) for c - a - b > 0
with a bound of the Gamma functions' errors; for c - a - b <= 0 the limit z -> 1-, infinite with
the sign of Gamma(c) / (Gamma(a) Gamma(b)) (SciPy says +inf for some negative ones: docs/numerics.md).
Special values as SciPy: z = 0 gives 1 (for NaN parameters too), else NaN in, NaN out; c a non-positive integer -m gives inf
unless the series terminates first (a or b in -m..0). Departures (NaN where SciPy returns a
number): z > 1 and z = -inf (the function is complex there or needs a Gamma-function connection
formula; SciPy says inf), infinite parameters, 0.95 < z < 1 and z < -19 outside polynomials.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, exp, floor, log, log1p, select, where
from ptonnx.decompositions.loop import any_above, iterate
from ptonnx.decompositions.registry import decomposes
from ptonnx.decompositions.special.gamma import gamma

EPS = 2.0**-53
#: a series has converged when its tail bound is below TOLERANCE times its sum
TOLERANCE = 1e-17
#: the largest relative error bound accepted (the result is NaN above it)
ACCEPT = 5e-13
#: the largest series variable (z or w) of a series that does not terminate
X_MAX = 0.95
MAX_TRIPS = 4000
#: the roundings of one step of the term recurrence (three factors, a product, a quotient, x, t)
STEP_ROUNDINGS = 6.0
#: Gauss's theorem: its Gamma functions' own errors, in ulp
GAMMA_ULP = 40.0
#: Gauss's theorem is taken for |a|, |b|, |c| up to this (the Gamma functions stay finite)
GAUSS_MAX = 60.0


def _nonpositive_integer(v: Ex) -> Ex:
    return (v <= 0.0) & floor(v).eq(v) & (v > -math.inf)


def _gamma_negative(v: Ex) -> Ex:
    """Gamma(v) < 0 (off its poles): v < 0 with an odd floor."""
    f = floor(v)
    return (v < 0.0) & (floor(f * 0.5) * 2.0).eq(f).op("Not")


def _finite(v: Ex) -> Ex:
    return abs(v) < math.inf


class Series:
    """A candidate: prefactor exp(expo) times F(p, q; r; x); sp, sq the error scales of p, q (0 where
    exact, |c| + |b| for a computed c - b); xe the rounding of x in ulp; pre_err the prefactor's
    relative error bound."""

    def __init__(self, p, q, r, x, sp, sq, xe, expo, pre_err, enabled):
        self.params = [where(enabled, v, 0.0) for v in (p, q, r)]
        self.params[2] = where(enabled, r, 1.0)
        self.params += [where(enabled, x, 0.0), sp, sq, xe]
        self.expo, self.pre_err, self.enabled = expo, pre_err, enabled


def _factor(p: Ex, scale: Ex, k: Ex) -> tuple[Ex, Ex]:
    """(p + k, its relative error bound in ulp); a computed p + k that is 0 is replaced by the
    size of its error (the series goes on, with terms the bound counts as wholly wrong)."""
    f = p + k
    computed = scale > 0.0
    f = where(f.eq(0.0) & computed, scale * EPS, f)
    return f, where(computed, 1.0 + scale / abs(f), 1.0)


def _step(m: Ex, params: list[Ex], carried: list[Ex]) -> tuple[list[Ex], Ex]:
    p, q, r, x, sp, sq, xe = params
    t, s, rel, err, done = carried
    done = done > 0.5
    k = m - 1.0
    fp, ep = _factor(p, sp, k)
    fq, eq = _factor(q, sq, k)
    fr = r + k
    numerator = fp * fq
    ratio = where(numerator.eq(0.0), 0.0, numerator / (fr * m) * x)  # an exact end: 0 even where r + k = 0
    t_new = t * ratio
    s_new = s + t_new
    rel_new = rel + (ep + eq + xe + (STEP_ROUNDINGS + 1.0)) * EPS
    err_new = err + where(t_new.eq(0.0), 0.0, abs(t_new) * rel_new) + abs(s_new) * EPS
    # the tail: once every factor is positive, by a geometric bound with the larger of the next ratio and |x|
    ahead = (p + m > 0.0) & (q + m > 0.0) & (r + m > 0.0)
    bound = abs((p + m) * (q + m) / ((r + m) * (m + 1.0)) * x)
    bound = where(bound > abs(x), bound, abs(x))
    small = abs(t_new) * bound <= abs(s_new) * (1.0 - bound) * TOLERANCE
    converged = t_new.eq(0.0) | (ahead & (bound < 1.0) & small) | _finite(s_new).op("Not")
    new = [where(done, old, value) for old, value in ((t, t_new), (s, s_new), (rel, rel_new), (err, err_new))]
    done_new = where(done | converged, 1.0, 0.0, like=t)
    return new + [done_new], where(done_new > 0.5, 0.0, 1.0, like=t)


def run_series(candidates: list[Series]) -> list[tuple[Ex, Ex]]:
    """(sum, relative error bound including the prefactor's) of each candidate; inf bound where not converged."""
    width = 7
    state = []
    for cand in candidates:
        zero = cand.params[3] * 0.0
        state += cand.params + [zero + 1.0, zero + 1.0, zero, zero, zero]

    def step(m: Ex, st: list[Ex]):
        out, pending = [], []
        for i in range(len(candidates)):
            block = st[i * (width + 5):(i + 1) * (width + 5)]
            carried, flag = _step(m, block[:width], block[width:])
            out += block[:width] + carried
            pending.append(flag)
        return out, any_above(pending, 0.5)

    final = iterate(state, step, MAX_TRIPS)
    results = []
    for i, cand in enumerate(candidates):
        _, s, _, err, done = final[i * (width + 5) + width:(i + 1) * (width + 5)]
        bound = err / abs(s) + cand.pre_err
        bound = where(cand.enabled & (done > 0.5) & (bound <= math.inf), bound, math.inf)  # NaN too
        results.append((s, bound))
    return results


def _scaled(s: Ex, expo: Ex) -> Ex:
    """exp(expo) s, without an overflow or underflow of exp(expo) alone."""
    plain = s * exp(expo)
    sign = where(s < 0.0, -1.0, 1.0, like=s)
    joint = sign * exp(expo + log(abs(s)))
    return where(abs(expo) < 600.0, plain, joint)


def _distance_to_pole(x: Ex) -> Ex:
    """The distance of x from the nearest non-positive integer (x itself for x > 0)."""
    nearest = floor(x + 0.5)
    return where(x > 0.5, x, abs(x - nearest))


def gauss_at_one(a: Ex, b: Ex, c: Ex, scale: Ex) -> tuple[Ex, Ex]:
    """(2F1(a, b; c; 1) by Gauss's theorem, its relative error bound), for c - a - b > 0."""
    s = c - a - b
    args = (c, c - a, c - b, s)
    value = gamma(c) * gamma(s) / (gamma(c - a) * gamma(c - b))
    # a computed argument x is off by up to scale eps: d log Gamma(x) = psi(x) dx, |psi(x)| <= log(|x| + 2) + 1 / d(x)
    sens = sum((log(abs(x) + 2.0) + 1.0 / _distance_to_pole(x) for x in args[1:]), c.const(0.0))
    bound = (sens * scale + 4.0 * GAMMA_ULP) * EPS
    small = (abs(a) <= GAUSS_MAX) & (abs(b) <= GAUSS_MAX) & (abs(c) <= GAUSS_MAX)
    bound = where(small & (bound <= math.inf), bound, math.inf)
    return value, bound


def hyp2f1(a: Ex, b: Ex, c: Ex, z: Ex) -> Ex:
    nan = a.isnan() | b.isnan() | c.isnan() | z.isnan()
    finite = _finite(a) & _finite(b) & _finite(c) & _finite(z)
    a_int, b_int = _nonpositive_integer(a), _nonpositive_integer(b)
    poly = a_int | b_int
    degree = select((a_int & b_int, where(a > b, -a, -b)), (a_int, -a), otherwise=where(b_int, -b, math.inf, like=b))
    c_int = _nonpositive_integer(c)
    c_pole = c_int & (poly & (degree <= -c)).op("Not")
    # c = -n with a polynomial of degree n: SciPy's value depends on whether a or b is c (2.0 for
    # (-2, 1; -2; 1/2), 1.75 for (1, -2; -2; 1/2), the terminating sum); NaN
    ambiguous = c_int & poly & degree.eq(-c)
    at_zero = z.eq(0.0)
    at_one = z.eq(1.0) & poly.op("Not")
    regular = (nan | finite.op("Not") | c_pole | ambiguous | at_zero | at_one | ((z > 1.0) & poly.op("Not"))).op("Not")
    z_ = where(regular, z, 0.0)
    negative = z_ < 0.0
    below_one = z_ < 1.0
    one_minus = 1.0 - z_
    big_l = where(below_one, log1p(-z_), 0.0)  # log(1 - z)
    w = where(negative, -z_ / one_minus, z_)
    x = w
    xe = where(negative, 3.0, 0.0, like=z_)
    zero = z_ * 0.0
    sa, sb, sc = abs(a), abs(b), abs(c)
    cand1_expo = where(negative, -a * big_l, 0.0)
    cand1_err = where(negative, (sa * abs(big_l) * 2.0 + sa + 2.0) * EPS, 0.0)
    ends1 = a_int | (b_int & negative.op("Not"))
    cand1 = Series(a, where(negative, c - b, b), c, x, zero, where(negative, sc + sb, 0.0), xe, cand1_expo, cand1_err,
                   regular & ((x <= X_MAX) | ends1))
    euler = c - a - b
    cand2_expo = where(negative, -b * big_l, euler * big_l)
    scale2 = where(negative, sb, (sa + sb + sc) * 2.0)
    cand2_err = (scale2 * abs(big_l) * 2.0 + abs(cand2_expo) * 2.0 + sb + 4.0) * EPS
    ends2 = b_int & negative
    cand2 = Series(where(negative, b, c - a), where(negative, c - a, c - b), c, x, where(negative, 0.0, sc + sa),
                   sc + where(negative, sa, sb), xe, cand2_expo, cand2_err,
                   regular & below_one & ((x <= X_MAX) | ends2))
    # a polynomial for z < 0: also its own sum (all terms of one sign for b, c > 0, where Pfaff's alternate)
    cand3 = Series(a, b, c, z_, zero, zero, zero, zero, zero, regular & poly & negative)
    (s1, bound1), (s2, bound2), (s3, bound3) = run_series([cand1, cand2, cand3])
    first = bound1 <= bound2
    series = where(first, _scaled(s1, cand1_expo), _scaled(s2, cand2_expo))
    best = where(first, bound1, bound2)
    series, best = where(bound3 < best, s3, series), where(bound3 < best, bound3, best)
    series = where(best <= ACCEPT, series, math.nan)
    # z = 1
    gauss, gauss_bound = gauss_at_one(where(at_one, a, 0.0), where(at_one, b, 0.0), where(at_one, c, 1.0), sa + sb + sc)
    positive_excess = (c - a - b) > 0.0
    # c - a - b <= 0: the limit z -> 1-, infinite with the sign of Gamma(c) / (Gamma(a) Gamma(b))
    negative = _gamma_negative(a).op("Xor", _gamma_negative(b)).op("Xor", _gamma_negative(c))
    diverging = where(negative, -math.inf, math.inf, like=c)
    at_one_value = where(positive_excess, where(gauss_bound <= ACCEPT, gauss, math.nan), diverging)
    return select(
        (at_zero, 1.0),  # as SciPy, for NaN parameters too
        (nan, math.nan),
        (finite.op("Not"), math.nan),
        (c_pole, math.inf),
        (ambiguous, math.nan),
        (at_one, at_one_value),
        (regular, series),
        otherwise=zero + math.nan,
    )


@decomposes("Hyp2F1")
def decompose_hyp2f1(node, inputs):
    return hyp2f1(*inputs)
