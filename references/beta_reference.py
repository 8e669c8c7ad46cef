"""References for BetaInc I_x(a, b) and BetaIncInv (the x with I_x(a, b) = y), float64's as long
doubles from mpmath, for `audit/function_table.py`.

- I_x(a, b): the continued fraction (Numerical Recipes' betacf, DLMF 8.17.22) from the side below
  the mean, x < (a + 1) / (a + b + 2) (else I_{1-x}(b, a) with 1 - x exact in mpmath), times the
  prefactor x**a (1 - x)**b / (a B(a, b)) in logs, in 60 digits (plus those of lgamma(a + b) for
  huge a, b, whose lgamma differences cancel); where the wanted value is 1 minus that tail and
  the difference keeps fewer than 25 digits, again in as many more digits as it lost (700 when
  it rounded to 0): 1 - I_{1-x}(b, 1e-300) keeps its 1e-300. mpmath's own
  betainc (a 2F1) is slow for large a, b; the fraction near the mean takes ~sqrt(max(a, b))
  terms. Checked against `mpmath.betainc(a, b, 0, x, regularized=True)` at 200 bits
  (`python -m references.beta_reference`).
- BetaIncInv: Newton's method on the log of the smaller tail (log I - log y for y <= 1/2,
  log(1 - y) - log(1 - I) above, both increasing in x), in s = log x where I_{1/2} >= y (x <= 1/2)
  and s = log(1 - x) otherwise, so whichever of x and 1 - x is small keeps its digits; started
  from SciPy's betaincinv, a step leaving the bracket of the signs met is a bisection; to 1e-40 in s.
  An x below the least subnormal (tiny a) is 0, a 1 - x below 2**-70 is 1.
Outside the interior (a, b not finite and positive, x or y not in (0, 1)): SciPy's conventions.
"""

from __future__ import annotations

import functools
import math
import warnings

import mpmath
import numpy as np
import scipy.special

DIGITS = 60


def continued_fraction(p, q, u, log_u, log_v):
    """I_u(p, q) (mpf arguments, u below the mean, log_u = log u, log_v = log(1 - u)) by the
    continued fraction, in the current precision."""
    tiny = mpmath.mpf(10) ** (5 - mpmath.mp.dps)
    c, d = mpmath.mpf(1), 1 / (1 - (p + q) * u / (p + 1))
    h, m = d, 1
    while True:
        for aa in (m * (q - m) * u / ((p - 1 + 2 * m) * (p + 2 * m)),
                   -(p + m) * (p + q + m) * u / ((p + 2 * m) * (p + 1 + 2 * m))):
            d = 1 / (1 + aa * d)
            c = 1 + aa / c
            h *= d * c
        if abs(d * c - 1) < tiny:
            break
        m += 1
    log_pre = p * log_u + q * log_v + mpmath.loggamma(p + q) - mpmath.loggamma(p) - mpmath.loggamma(q) - mpmath.log(p)
    return mpmath.exp(log_pre) * h


def digits_for(a: float, b: float) -> int:
    """DIGITS more than the digits of lgamma(a + b) before the point: the prefactor's lgamma(a + b)
    - lgamma(b) cancels to ~a log b (1e104 - 1e104 at b = 7.7e101, a = 3.4e12)."""
    top = max(float(a), float(b), 1.0)
    return DIGITS + int(math.log10(top * (math.log(top) + 1))) + 1


def tails(a, b, x, z=None, log_x=None, log_z=None):
    """(I_x(a, b), 1 - I_x(a, b)) as mpf values, each to 25+ digits. x a float (z = 1 - x, its
    log from log1p(-x)), or mpf x, z = 1 - x with their logs (the inverse's iterates)."""
    digits = digits_for(a, b)
    while True:
        with mpmath.workdps(digits):
            am, bm, xm = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(x)
            zm = 1 - xm if z is None else +z
            lx = mpmath.log(xm) if log_x is None else +log_x
            lz = mpmath.log1p(-xm) if log_z is None else +log_z
            below = xm * (am + bm + 2) < am + 1
            tail = continued_fraction(am, bm, xm, lx, lz) if below else continued_fraction(bm, am, zm, lz, lx)
            other = 1 - tail
            if other != 0 and abs(other) > mpmath.mpf(10) ** (25 - digits) or digits >= 3000:
                return (tail, other) if below else (other, tail)
            digits = max(700, digits) if other == 0 else digits + int(-mpmath.log10(abs(other))) + 30


def _hi(value) -> np.longdouble:
    with warnings.catch_warnings():  # beyond the long double range: 0
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.longdouble(mpmath.nstr(value, 25, min_fixed=1, max_fixed=0))


def _interior(*values: float) -> bool:
    return all(math.isfinite(v) and v > 0 for v in values)


@functools.lru_cache(maxsize=1 << 16)
def _betainc_one(a: float, b: float, x: float) -> np.longdouble:
    if not (_interior(a, b) and 0 < x < 1):
        return np.longdouble(scipy.special.betainc(a, b, x))
    with mpmath.workdps(DIGITS):
        return _hi(tails(a, b, x)[0])


def newton(h, s, lo, hi, tol, small):
    """The root of the increasing h(s) -> (value, slope) in (lo, hi), from s: Newton's steps, a
    bisection where one leaves the bracket of the signs met or |h| did not halve; done at |h|
    below `small` or a step below `tol` (relative to max(1, |s|)), h's own rounding."""
    previous = mpmath.inf
    for _ in range(600):
        value, slope = h(s)
        if abs(value) <= small:
            return s
        lo, hi = (s, hi) if value < 0 else (lo, s)
        step = value / slope if slope > 0 and mpmath.isfinite(slope) else None
        if step is not None and abs(step) <= tol * max(1, abs(s)):
            return s - step
        new = s - step if step is not None and abs(value) < previous / 2 else None
        if new is None or not lo < new < hi:
            new = (lo + hi) / 2
        if abs(new - s) <= tol * max(1, abs(s)):
            return new
        s, previous = new, abs(value)
    raise ArithmeticError("no convergence")


def inverse(a: float, b: float, y: float):
    """(x, 1 - x, log x, log(1 - x)) as mpf values, I_x(a, b) = y, for a, b > 0 and 0 < y < 1."""
    with mpmath.workdps(digits_for(a, b)):
        upper_tail = y > 0.5
        ym = mpmath.mpf(y)
        target = mpmath.log1p(-ym) if upper_tail else mpmath.log(ym)
        log_kernel = -(mpmath.loggamma(a) + mpmath.loggamma(b) - mpmath.loggamma(mpmath.mpf(a) + b))

        def g(x, z, lx, lz):
            """(log tail - log target, increasing in x; d/dx of it times x z)."""
            lower, upper = tails(a, b, x, z, lx, lz)
            tail = upper if upper_tail else lower
            value = target - mpmath.log(upper) if upper_tail else mpmath.log(lower) - target
            return value, mpmath.exp(a * lx + b * lz + log_kernel) / tail  # I' x z = x**a z**b / B

        half = mpmath.mpf(0.5)
        lower_side = g(half, half, mpmath.log(half), mpmath.log(half))[0] >= 0

        def h(s):  # s = log x (dx/ds = x), or log(1 - x) (dx/ds = -(1 - x): h = -G increases)
            e = mpmath.exp(s)
            if lower_side:
                value, slope = g(e, 1 - e, s, mpmath.log1p(-e))
                return value, slope / (1 - e)
            value, slope = g(1 - e, e, mpmath.log1p(-e), s)
            return -value, slope / (1 - e)

        # beyond these the answer rounds to 0 (x < e**-800) or to 1 (1 - x < 2**-70)
        lowest = mpmath.mpf(-800 if lower_side else -70 * math.log(2))
        if h(lowest)[0] >= 0:
            return (mpmath.mpf(0), mpmath.mpf(1), -mpmath.inf, mpmath.mpf(0)) if lower_side else (
                mpmath.mpf(1), mpmath.mpf(0), mpmath.mpf(0), -mpmath.inf)
        start = float(scipy.special.betaincinv(a, b, y))
        if lower_side and 0 < start <= 0.5:
            s0 = mpmath.log(start)
        elif not lower_side and 0.5 <= start < 1:
            s0 = mpmath.log1p(-start)
        else:  # the leading power of the tail: I ~ x**a / (a B), 1 - I ~ (1 - x)**b / (b B)
            p, tail = (a, ym) if lower_side else (b, 1 - ym)
            s0 = (mpmath.log(p * tail) - log_kernel) / p
        s0 = min(max(s0, lowest), mpmath.log(half))
        s = newton(h, s0, lowest, mpmath.log(half), mpmath.mpf(10) ** -40, mpmath.mpf(10) ** -50)
        e = mpmath.exp(s)
        return (e, 1 - e, s, mpmath.log1p(-e)) if lower_side else (1 - e, e, mpmath.log1p(-e), s)


@functools.lru_cache(maxsize=1 << 16)
def _betaincinv_one(a: float, b: float, y: float) -> np.longdouble:
    if not (_interior(a, b) and 0 < y < 1):
        return np.longdouble(scipy.special.betaincinv(a, b, y))
    x, z, log_x, log_z = inverse(a, b, y)
    return np.longdouble(0.0) if log_x < -800 else np.longdouble(1.0) if log_z < -70 * math.log(2) else _hi(x)


def _vectorised(one):
    ufunc = np.frompyfunc(lambda *args: one(*(float(v) for v in args)), 3, 1)
    return lambda *arrays: np.asarray(ufunc(*arrays)).astype(np.longdouble)


betainc, betaincinv = _vectorised(_betainc_one), _vectorised(_betaincinv_one)


def _check(n: int = 40, seed: int = 0) -> None:
    """The fraction against mpmath.betainc at 200 bits; the inverse's round trip in 60 digits."""
    rng = np.random.default_rng(seed)
    a, b = 10 ** rng.uniform(-3, 3, n), 10 ** rng.uniform(-3, 3, n)
    worst = 0.0
    for ai, bi, xi in zip(a, b, rng.uniform(0, 1, n), strict=True):
        with mpmath.workprec(200):
            worst = max(worst, float(abs(tails(ai, bi, xi)[0] / mpmath.betainc(ai, bi, 0, xi, regularized=True) - 1)))
    print(f"betainc vs mpmath.betainc: max relative difference {worst:.2e}")
    a, b = 10 ** rng.uniform(-12, 8, n), 10 ** rng.uniform(-12, 8, n)
    y = np.concatenate([rng.uniform(0, 1, n - n // 2 - n // 4), 10 ** rng.uniform(-320, -1, n // 4), 1 - 10 ** rng.uniform(-16, -1, n // 4)])
    trip, rounded = mpmath.mpf(0), 0
    with mpmath.workdps(DIGITS):
        for ai, bi, yi in zip(a, b, y, strict=True):
            root = inverse(ai, bi, yi)
            if mpmath.isinf(root[2]) or mpmath.isinf(root[3]):
                rounded += 1  # the answer rounds to 0 or 1
                continue
            tail = tails(ai, bi, *root)[int(yi > 0.5)]
            trip = max(trip, abs(tail / (1 - mpmath.mpf(yi) if yi > 0.5 else yi) - 1))
    print(f"the smaller tail at betaincinv(y) / its target - 1 in mpmath: max {float(trip):.2e} ({rounded} round to 0 or 1)")


if __name__ == "__main__":
    _check()
