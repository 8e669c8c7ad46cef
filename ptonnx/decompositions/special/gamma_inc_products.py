"""GammaU(a, x) = Q(a, x) Gamma(a) and GammaL(a, x) = P(a, x) Gamma(a): PyTensor's products, the
non-regularized incomplete gamma functions, in float64, finite wherever they are.

Formed as products, they are 0 where the tail underflows and inf where Gamma(a) overflows
(a > 171.6, a < 5.6e-309) though the value is finite: GammaU(154.3, 1460.1) = 1.15e-149 has
Q = 1e-419. So, by gamma_inc.py's regions:

- the continued fraction (GammaU) and the series of P (GammaL) without Gamma(a):
  x**a e**-x / f and x**a e**-x / a sum_n x**n / ((a+1)...(a+n)), with x**a e**-x as two halves of
  exp(a log x - x), whose exponent is computed to about eps (|a log x - x| + a / 2) (`power_exponent`:
  a plain a log x would carry a |log x| eps, 2e-12 at a = 1000, x = 9000);
- GammaU by the series of Q as Gamma(1 + a) (-expm1(y) / a - e**y sum_n (-x)**n / (n! (a + n))),
  y = a u, u = log x - lgamma(1 + a) / a: no 1 / a formed (E1(x) as a -> 0);
- elsewhere Gamma(a) times the larger tail (or Temme's, not below e**-0.07 a), through logs
  (exp(lgamma(a) + log tail), two halves) where Gamma(a) alone overflows.

At x = 0 or inf, a = 0 or inf, and outside the domain, the products of P and Q with Gamma(a),
as PyTensor (GammaU(0, x) = 0 inf = NaN).

Node count: the three sums (P's series, the continued fraction, Q's series) are computed once
each, unrolled (as one Loop they are 764 nodes instead of 1,422, but every trip runs every body
node: slower at run time, and a Loop neither folds nor compiles on IREE); Gamma(a) is computed
once, without the reflection (`gamma_positive`), and lgamma(a) from the lgamma(1 + a) the
prefactors need.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, exp, expm1, log, log1p, polyval, select, where
from ptonnx.decompositions.registry import binary, decomposes
from ptonnx.decompositions.special.beta import SPLIT_BELOW, _split
from ptonnx.decompositions.special.gamma import LGAMMA_ABOUT_TWO, gamma_positive, lgamma_positive
from ptonnx.decompositions.special.gamma_inc import (
    _regions,
    continued_fraction,
    exponent,
    incomplete_gamma,
    lgamma1p,
    lower_series,
    q_series_sum,
)
from ptonnx.decompositions.special.gamma_inc_temme import temme_bracket

#: below this a, log1p(a) / a as 1 - a / 2 + a**2 / 3 (Kahan's log1p would divide 0 by 0)
TINY_A = 2.0**-30
#: log 2 as a 42-bit head (times an exponent k, |k| <= 1075, exact) and the rest
LN2_HEAD = float.fromhex("0x1.62e42fefa3800p-1")
LN2_TAIL = 5.497923018708371e-14


def power_exponent(a: Ex, x: Ex) -> Ex:
    """a log x - x for a > 0, to about eps (|a log x - x| + a / 2) where x >= 1 (a plain a log x would
    carry a |log x| eps: 2e-12 at a = 1000, x = 9000, where the difference is 100): log x =
    k log 2 + log1p(m - 1), x = 2**k m exactly, k log 2 in two parts whose head times k is exact,
    a times it as an exact product (Dekker's), so only a log1p(m - 1) (|log m| < 0.35) and the sum round."""
    k = (log(x) * (1 / math.log(2))).op("Round")
    m = x * x.const(2.0).op("Pow", -k)  # exact: a power of two
    head = k * LN2_HEAD  # exact: k has at most 11 bits
    product = a * head
    (ah, al), (hh, hl) = _split(a), _split(head)
    error = ((ah * hh - product) + ah * hl + al * hh) + al * hl  # a head = product + error exactly
    accurate = ((product - x) + error) + (a * (k * LN2_TAIL) + a * log1p(m - 1.0))
    return where((x >= 1.0) & (a < SPLIT_BELOW), accurate, a * log(x) - x)


def _power_halves(a: Ex, x: Ex) -> Ex:
    """exp((a log x - x) / 2): x**a e**-x is its square, finite as long as the result is."""
    return exp(power_exponent(a, x) * 0.5)


def _lgamma1p_over_a(a: Ex) -> Ex:
    """lgamma(1 + a) / a for a > 0 (-Euler's gamma as a -> 0), without dividing a tiny product."""
    ratio = where(a < TINY_A, 1.0 - a * (0.5 - a * (1.0 / 3.0)), log1p(a) / a)
    return where(a <= 0.5, polyval(a, LGAMMA_ABOUT_TWO[::-1]) - ratio, lgamma_positive(a + 1.0) / a)


def _upper_series_times_gamma(a: Ex, x: Ex, q_sum: Ex) -> Ex:
    """Q Gamma(a) for the series region of Q (x < 3, small a); `q_sum`: `q_series_sum`."""
    u = log(x) - _lgamma1p_over_a(a)
    y = a * u
    expm1_over_y = where(y.eq(0.0), 1.0, expm1(y) / y)
    return exp(lgamma1p(a)) * (-u * expm1_over_y - exp(y) * q_sum)


def _product(a: Ex, x: Ex, lower: bool) -> Ex:
    """GammaL (`lower`) or GammaU."""
    t, phi, a_phi = exponent(a, x)
    temme, q_series, p_series = _regions(a, x, t)
    sums = series, fraction, q_sum = lower_series(a, x), continued_fraction(a, x), q_series_sum(a, x)
    p, q = incomplete_gamma(a, x, sums)
    tail = p if lower else q
    g = gamma_positive(a)  # a < 0: the tail is NaN
    # tail Gamma(a) as exp(lgamma(a) + log tail) (two halves) where Gamma(a) overflows. The log of
    # Temme's smaller tail e**-a phi times its bracket, which may underflow where the product is inf
    # (GammaL(8413, 5048): P = e**-932); elsewhere the tail multiplied is not small
    log_small = log(temme_bracket(a, t, phi, a_phi)) - a_phi
    small_is_tail = t < 0.0 if lower else t >= 0.0
    log_tail = where(temme, where(small_is_tail, log_small, log1p(-exp(log_small))), log(tail))
    half_log = exp((lgamma1p(a) - log(a) + log_tail) * 0.5)  # lgamma(a): its lgamma(1 + a) is computed anyway
    times_gamma = where(g.eq(float("inf")), half_log * half_log, g * tail)
    half = _power_halves(a, x)
    if lower:
        value = where(p_series & (temme | q_series).op("Not"), half * (half * series / a), times_gamma)
    else:
        value = select((q_series, _upper_series_times_gamma(a, x, q_sum)), (temme | p_series, times_gamma),
                       otherwise=half * (half / fraction))
    regular = (a > 0.0) & (x > 0.0) & (a < float("inf")) & (x < float("inf"))
    return where(regular, value, tail * g)


def gamma_lower(a: Ex, x: Ex) -> Ex:
    return _product(a, x, lower=True)


def gamma_upper(a: Ex, x: Ex) -> Ex:
    return _product(a, x, lower=False)


for _op, _fn in {"GammaL": gamma_lower, "GammaU": gamma_upper}.items():
    decomposes(_op)(binary(_fn))
