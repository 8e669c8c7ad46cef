"""References for GammaIncInv (the x with P(a, x) = y) and GammaIncCInv (Q(a, x) = y), float64's
as long doubles from mpmath, for `audit/function_table.py` (ptonnx does not lower them yet: the
table skips them until it does).

Newton's method in s = log x on the log of the smaller tail, G = log P - log t or log t - log Q
(t = y, or 1 - y, exact, for y > 1/2: P for GammaIncInv with y <= 1/2 and GammaIncCInv with
y > 1/2, else Q), both increasing in x, with dG/ds = x**a exp(-x) / (Gamma(a) tail); each tail
from `audit/gamma_inc_reference.smaller` (mpmath at 100 bits, Temme's expansion from a = 1e4),
the other as 1 minus it. Started from SciPy's answer; a step leaving the bracket of the signs
met (within [-800, log(max double)]) is a bisection; to 1e-24 in s or 1e-27 in G. The tail's 2**-100 costs
2**-100 / a in x for tiny a (P ~ x**a / Gamma(a + 1)): below 1e-19 for a >= 1e-11. An x below
e**-800 is 0, one beyond the largest double inf. Outside the interior (a not finite and
positive, y not in (0, 1)): SciPy's conventions.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import scipy.special

from references.beta_reference import newton
from references.gamma_inc_reference import smaller

PREC = 100
LOWEST, HIGHEST = -800.0, math.log(np.finfo(np.float64).max)


def _tails(a, x):
    """(P, Q) at 100 bits, the smaller from mpmath (or Temme's expansion), the other 1 minus it."""
    s, is_p = smaller(a, x)
    with mpmath.workprec(PREC):
        return (s, 1 - s) if is_p else (1 - s, s)


def inverse(a: float, y: float, complement: bool):
    """log x as an mpf (-inf, +inf where x rounds to 0, overflows) with P(a, x) = y, or Q(a, x) = y
    if `complement`, for finite a > 0 and 0 < y < 1."""
    with mpmath.workprec(PREC):
        am = mpmath.mpf(a)
        upper = (y > 0.5) != complement  # the tail solved for is Q
        t = 1 - mpmath.mpf(y) if y > 0.5 else mpmath.mpf(y)
        log_t, log_gamma = mpmath.log(t), mpmath.loggamma(am)

        def h(s):
            x = mpmath.exp(s)
            p, q = _tails(a, x)
            tail = q if upper else p
            value = log_t - mpmath.log(q) if upper else mpmath.log(p) - log_t
            return value, mpmath.exp(am * s - x - log_gamma) / tail if tail > 0 else mpmath.inf

        lo, hi = mpmath.mpf(LOWEST), mpmath.mpf(HIGHEST)
        # P ~ x**a / Gamma(a + 1) for tiny x: its root far below e**-800 needs no tail (slow there)
        p = 1 - mpmath.mpf(y) if complement else mpmath.mpf(y)
        if (mpmath.log(p) + mpmath.loggamma(am + 1)) / am < 1.1 * LOWEST:
            return -mpmath.inf
        if h(lo)[0] >= 0:
            return -mpmath.inf
        if h(hi)[0] < 0:
            return mpmath.inf
        start = float((scipy.special.gammainccinv if complement else scipy.special.gammaincinv)(a, y))
        s0 = mpmath.log(start) if 0 < start < math.inf else mpmath.log(am)
        return newton(h, min(max(s0, lo), hi), lo, hi, mpmath.mpf(10) ** -24, mpmath.mpf(10) ** -27)


@functools.lru_cache(maxsize=1 << 16)
def _one(a: float, y: float, complement: bool) -> np.longdouble:
    if not (math.isfinite(a) and a > 0 and 0 < y < 1):
        return np.longdouble((scipy.special.gammainccinv if complement else scipy.special.gammaincinv)(a, y))
    s = inverse(a, y, complement)
    if mpmath.isinf(s):
        return np.longdouble(0.0 if s < 0 else math.inf)
    with mpmath.workprec(PREC):
        return np.longdouble(mpmath.nstr(mpmath.exp(s), 25, min_fixed=1, max_fixed=0))


def _vectorised(complement: bool):
    ufunc = np.frompyfunc(lambda a, y: _one(float(a), float(y), complement), 2, 1)
    return lambda a, y: np.asarray(ufunc(a, y)).astype(np.longdouble)


gammaincinv, gammainccinv = _vectorised(False), _vectorised(True)


def _check(n: int = 30, seed: int = 0) -> None:
    """The tail at the root against its target, in mpmath (`python -m references.gamma_inv_reference`)."""
    rng = np.random.default_rng(seed)
    a = 10 ** rng.uniform(-10, 5, n)
    y = np.concatenate([rng.uniform(0, 1, n // 2), 10 ** rng.uniform(-300, -1, n // 4), 1 - 10 ** rng.uniform(-16, -1, n - n // 2 - n // 4)])
    worst, rounded = mpmath.mpf(0), 0
    for complement in (False, True):
        for ai, yi in zip(a, y, strict=True):
            s = inverse(ai, yi, complement)
            if mpmath.isinf(s):
                rounded += 1
                continue
            with mpmath.workprec(PREC):
                p, q = _tails(ai, mpmath.exp(s))
                tail, t = (q, yi) if complement else (p, yi)
                if yi > 0.5:
                    tail, t = (p if complement else q), 1 - mpmath.mpf(yi)
                worst = max(worst, abs(tail / t - 1))
    print(f"the solved tail / its target - 1: max {float(worst):.2e} ({rounded} round to 0 or overflow)")


if __name__ == "__main__":
    _check()
