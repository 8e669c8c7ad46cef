"""Debye's uniform asymptotic expansions of I_v(x) and K_v(x) for large orders v.

With z = x/v, s = sqrt(1 + z**2), t = 1/s and eta = s + log(z / (1 + s)):

    I_v(v z) ~ exp(v eta) / sqrt(2 pi v s) * sum_k u_k(t) / v**k
    K_v(v z) ~ sqrt(pi / (2 v)) exp(-v eta) / sqrt(s) * sum_k (-1)**k u_k(t) / v**k

uniformly in z > 0 (DLMF 10.41.3-4). With 15 terms (k <= 14) the truncation error is
below 1e-18 for every z once v >= 25 (measured against mpmath). The scaled functions
need eta - z = 1/(s + z) - asinh(1/z), whose two terms never cancel by more than half,
written with log1p so that neither large nor small z loses digits:
asinh(1/z) = log1p((1 + 1/(s + z)) / z). exp(v (eta - z)) still carries the rounding
of its exponent: the relative error grows with |log| of the result (1e-13 near the
underflow threshold, a few ulp where the result is of order 1).

The polynomials u_k come from the recurrence (DLMF 10.41.9)
u_{k+1}(t) = t**2 (1 - t**2) u_k'(t) / 2 + (1/8) int_0^t (1 - 5 s**2) u_k(s) ds,
computed exactly (fractions) when the module is imported.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ptonnx.decompositions.expr import Ex, exp, log1p, polyval, sqrt, where

#: the orders from which the expansion is used, and its last term
FROM_ORDER = 25.0
TERMS = 15


def _polynomials(count: int) -> list[list[Fraction]]:
    """u_0..u_{count-1}, each as its coefficients of t**0, t**1, ..."""
    polys = [[Fraction(1)]]
    for _ in range(count - 1):
        u = polys[-1]
        nxt = [Fraction(0)] * (len(u) + 3)
        for i, c in enumerate(u):
            if i:  # t**2 (1 - t**2) / 2 * d/dt (c t**i)
                nxt[i + 1] += c * i / 2
                nxt[i + 3] -= c * i / 2
            nxt[i + 1] += c / 8 / (i + 1)  # (1/8) int (1 - 5 s**2) c s**i ds
            nxt[i + 3] -= 5 * c / 8 / (i + 3)
        while nxt[-1] == 0:
            nxt.pop()
        polys.append(nxt)
    return polys


#: u_k(t) = t**k P_k(t**2): P_k's coefficients, highest power first (for polyval)
U_POLYNOMIALS = tuple(tuple(float(c) for c in u[k::2][::-1]) for k, u in enumerate(_polynomials(TERMS)))


def _uniform(v: Ex, x: Ex) -> tuple[Ex, Ex, Ex]:
    """(v (eta - z), s, t) for v > 0, x >= 0; -inf, 1, 1 at x = 0; 0, inf, 0 at x = inf."""
    z = x / v
    inverse = 1.0 / z
    s = where(z > 1.0, z * sqrt(1.0 + inverse * inverse), sqrt(1.0 + z * z))  # z**2 may overflow
    r = 1.0 / (s + z)
    exponent = v * (r - log1p((1.0 + r) * inverse))
    return exponent, s, 1.0 / s


def _series(v: Ex, t: Ex, sign: float) -> Ex:
    """sum_k sign**k u_k(t) / v**k, by Horner's rule in t / v."""
    t2, step = t * t, t / v * sign
    total = None
    for coefficients in reversed(U_POLYNOMIALS):
        p = polyval(t2, coefficients) if len(coefficients) > 1 else t2.const(coefficients[0])
        total = p if total is None else total * step + p
    return total


def ive_large_order(v: Ex, x: Ex) -> Ex:
    """exp(-x) I_v(x), v >= 25, x >= 0."""
    exponent, s, t = _uniform(v, x)
    return exp(exponent) / (sqrt(v) * math.sqrt(2 * math.pi)) / sqrt(s) * _series(v, t, 1.0)


def iv_large_order(v: Ex, x: Ex) -> Ex:
    """I_v(x), v >= 25, x >= 0, without forming exp(-x) I_v (which underflows where I_v does not): the
    exponent v eta = v (eta - z) + x, its exponential as two halves (the factor before it is below 1)."""
    exponent, s, t = _uniform(v, x)
    half = exp((exponent + x) * 0.5)
    return half * (1.0 / (sqrt(v) * math.sqrt(2 * math.pi)) / sqrt(s) * _series(v, t, 1.0)) * half


def kve_large_order(v: Ex, x: Ex, shift: Ex | None = None, factor: Ex | None = None) -> Ex:
    """exp(x) K_v(x), v >= 25, x >= 0; with `shift` and `factor`, factor exp(x + shift) K_v(x),
    finite wherever the product is (exp(-exponent) alone overflows before the product does)."""
    exponent, s, t = _uniform(v, x)
    half = exp(exponent * -0.5 if shift is None else (shift - exponent) * 0.5)
    middle = (math.sqrt(math.pi / 2) / sqrt(v)) / sqrt(s) * _series(v, t, -1.0)
    return half * (middle if factor is None else middle * factor) * half
