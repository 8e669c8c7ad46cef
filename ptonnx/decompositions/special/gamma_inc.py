"""GammaInc P(a, x), GammaIncC Q(a, x) = 1 - P (the regularized incomplete gamma functions), in
float64 (GammaL = P Gamma(a) and GammaU = Q Gamma(a): gamma_inc_products.py).

Every method gives the smaller of P and Q relatively accurately, the other is 1 minus it
(as SciPy's igam/igamc and DiDonato and Morris). By region, for finite a, x > 0:

- a >= 20 and |x - a| < 0.4 a: Temme's uniform expansion (gamma_inc_temme.py);
- x < 3, a <= 1.1 x (or a <= -0.4 / log x for x <= 1/2): Q by the series
  Q = -expm1(a log x - lgamma(1 + a)) - x**a / Gamma(a) sum_n (-x)**n / (n! (a + n)) (30 terms),
  exact where Q is tiny because a is (Q ~ a E1(x));
- else x < a: P = x**a exp(-x) / Gamma(a + 1) sum_n x**n / ((a+1)...(a+n)) (80 terms: the ratio
  of the terms is below 0.6 for a >= 20, x < 0.6 a; for a < 20 the product below e**-(n**2 / 40));
- else (x >= 3, x >= a): Q = x**a exp(-x) / Gamma(a) / f, Legendre's continued fraction
  f = x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...), evaluated backwards from depth 50.

The prefactor x**a exp(-x) / Gamma(a) is computed for a >= 13 as exp(-a phi) sqrt(a / 2 pi) /
Gamma*(a), phi = t - log1p(t), t = (x - a)/a (x - a exact for x/a in [1/2, 2]): a phi is relatively
accurate, so its exponential is to within 3 a phi ulp (below 2300, as a phi < 745 wherever
the result is not 0); below 13 as exp(a log x - x - lgamma(1 + a)).
Special values as SciPy: NaN for a < 0, x < 0, a = x = 0, a = x = inf; P(0, x > 0) = 1,
P(a, 0) = 0, P(a, inf) = 1, P(inf, x) = 0.
"""

from __future__ import annotations

import math


from ptonnx.decompositions.expr import Ex, exp, expm1, log, log1p, polyval, select, sqrt, where
from ptonnx.decompositions.registry import binary, decomposes
from ptonnx.decompositions.special.gamma import LGAMMA_ABOUT_TWO, _stirling_series, lgamma_positive
from ptonnx.decompositions.special.gamma_inc_temme import TEMME_FROM, TEMME_WIDTH, temme_bracket, temme_smaller

SERIES_TERMS = 80
CONTINUED_FRACTION_DEPTH = 50
Q_SERIES_TERMS = 30
#: below this x: the series for Q (small a) or for P; from it on the continued fraction
SMALL_X = 3.0
#: from this a on the prefactor uses Stirling's series for Gamma*(a)
STIRLING_FROM = 13.0
#: log1pmx(t) by the series in u = t / (2 + t) for |t| <= 1/2: 2 u**3 sum_j u**2j / (2j + 3) - u t
LOG1PMX_SERIES = tuple(2.0 / (2 * j + 3) for j in range(18))[::-1]
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def log1pmx(t: Ex) -> Ex:
    """log(1 + t) - t for t > -1, relatively accurate (t - 2u = u t exactly in real numbers)."""
    u = t / (t + 2.0)
    w = u * u
    series = u * w * polyval(w, LOG1PMX_SERIES) - u * t
    return where(abs(t) <= 0.5, series, log1p(t) - t)


def lgamma1p(a: Ex) -> Ex:
    """log Gamma(1 + a) for a >= 0, accurate for tiny a (1 + a is not formed there)."""
    small = a * polyval(a, LGAMMA_ABOUT_TWO[::-1]) - log1p(a)  # lgamma(2 + a) - log(1 + a)
    return where(a <= 0.5, small, lgamma_positive(a + 1.0))


def exponent(a: Ex, x: Ex) -> tuple[Ex, Ex, Ex]:
    """(t, phi, a phi): t = (x - a)/a, phi = t - log1p(t) = x/a - 1 - log(x/a) >= 0."""
    t = (x - a) / a
    phi = -log1pmx(t)
    far = (x - a) - a * log(x / a)  # x < a/2: 1 + t would lose x's digits
    a_phi = where(x / a >= 0.5, a * phi, far)
    return t, phi, a_phi


def prefactors(a: Ex, x: Ex, a_phi: Ex) -> tuple[Ex, Ex]:
    """(x**a e**-x / Gamma(a + 1), x**a e**-x / Gamma(a))."""
    big = exp(-a_phi) * sqrt(a * INV_SQRT_2PI**2) / exp(_stirling_series(a))  # over Gamma(a)
    small = exp(a * log(x) - x - lgamma1p(a))  # over Gamma(a + 1)
    large_a = a >= STIRLING_FROM
    return where(large_a, big / a, small), where(large_a, big, small * a)


def lower_series(a: Ex, x: Ex) -> Ex:
    """sum_n x**n / ((a + 1) ... (a + n))."""
    term = x.const(1.0)
    total = term
    for n in range(1, SERIES_TERMS + 1):
        term = term * x / (a + float(n))
        total = total + term
    return total


def continued_fraction(a: Ex, x: Ex) -> Ex:
    """Legendre's continued fraction f with Q = x**a e**-x / Gamma(a) / f."""
    b = x - a
    f = b + float(2 * CONTINUED_FRACTION_DEPTH + 1)
    for n in range(CONTINUED_FRACTION_DEPTH, 0, -1):
        f = (b + float(2 * n - 1)) - (float(n) - a) * float(n) / f
    return f


def q_series_sum(a: Ex, x: Ex) -> Ex:
    """sum_n (-x)**n / (n! (a + n)), n = 1 .. Q_SERIES_TERMS."""
    fac = x.const(1.0)
    total = x.const(0.0)
    minus_x = -x
    for n in range(1, Q_SERIES_TERMS + 1):
        fac = fac * minus_x * (1.0 / n)
        total = total + fac / (a + float(n))
    return total


def upper_series(a: Ex, x: Ex, q_sum: Ex | None = None) -> Ex:
    """Q for small x and a: -expm1(a log x - lgamma(1 + a)) - a x**a / Gamma(1 + a) sum_n (-x)**n / (n! (a + n))."""
    y = a * log(x) - lgamma1p(a)
    return -expm1(y) - exp(y) * a * (q_series_sum(a, x) if q_sum is None else q_sum)


def _regions(a: Ex, x: Ex, t: Ex) -> tuple[Ex, Ex, Ex]:
    """(Temme, the series for Q, the series for P (where neither before)): the method by region."""
    temme = (a >= TEMME_FROM) & (abs(t) < TEMME_WIDTH)
    small_x = x < SMALL_X
    tiny_x = x <= 0.5
    q_series = small_x & ((tiny_x & (a <= -0.4 / log(x))) | (tiny_x.op("Not") & (a <= x * 1.1)))
    return temme, q_series, small_x | (x < a)


def log_tails(a: Ex, x: Ex) -> tuple[Ex, Ex, Ex, Ex, Ex, Ex]:
    """(log P, log Q, log(R / P), log(R / Q), P, Q) for finite a, x > 0, R = x**a e**-x / Gamma(a) (so
    that d log P / d log x = R / P): the smaller tail's log from its method's own logs, accurate below
    the least double (GammaIncInv's Newton), its ratio without the exponent a phi both share, and
    the tails themselves (Q by its series where a is tiny: its log would round to eps |log Q|)."""
    t, phi, a_phi = exponent(a, x)
    temme, q_series, p_series = _regions(a, x, t)
    large_a = 0.5 * log(a * INV_SQRT_2PI**2) - _stirling_series(a)  # log R + a phi, a >= STIRLING_FROM
    log_a = log(a)
    log_over_gamma1 = where(a >= STIRLING_FROM, large_a - a_phi - log_a, a * log(x) - x - lgamma1p(a))  # log(R / a)
    log_prefactor = log_over_gamma1 + log_a
    series, fraction, bracket = log(lower_series(a, x)), log(continued_fraction(a, x)), log(temme_bracket(a, t, phi, a_phi))
    q_low = upper_series(a, x)
    log_q_series = log(q_low)
    log_small = select((temme, bracket - a_phi), (q_series, log_q_series), (p_series, log_over_gamma1 + series),
                       otherwise=log_prefactor - fraction)
    ratio_small = select((temme, large_a - bracket), (q_series, log_prefactor - log_q_series), (p_series, log_a - series),
                         otherwise=fraction)
    small_is_p = where(temme, t < 0.0, p_series & q_series.op("Not"))
    log_other = log(-expm1(log_small))
    ratio_other = log_prefactor - log_other
    small = where(q_series, q_low, exp(log_small))
    return (where(small_is_p, log_small, log_other), where(small_is_p, log_other, log_small),
            where(small_is_p, ratio_small, ratio_other), where(small_is_p, ratio_other, ratio_small),
            where(small_is_p, small, 1.0 - small), where(small_is_p, 1.0 - small, small))


def incomplete_gamma(a: Ex, x: Ex, sums: tuple[Ex, Ex, Ex] | None = None) -> tuple[Ex, Ex]:
    """(P(a, x), Q(a, x)) with SciPy's special values; `sums`: `looped_sums`' (else unrolled)."""
    t, phi, a_phi = exponent(a, x)
    over_gamma1, over_gamma = prefactors(a, x, a_phi)
    temme, q_series, p_series = _regions(a, x, t)
    series, fraction, q_sum = sums or (lower_series(a, x), continued_fraction(a, x), q_series_sum(a, x))
    p_small = over_gamma1 * series
    q_small = where(over_gamma.eq(0.0), 0.0, over_gamma / fraction)
    q_low_x = upper_series(a, x, q_sum)
    temme_small = temme_smaller(a, t, phi, a_phi)
    temme_p = t < 0.0
    p = select((temme & temme_p, temme_small), (temme, 1.0 - temme_small), (q_series, 1.0 - q_low_x),
               (p_series, p_small), otherwise=1.0 - q_small)
    q = select((temme & temme_p, 1.0 - temme_small), (temme, temme_small), (q_series, q_low_x),
               (p_series, 1.0 - p_small), otherwise=q_small)
    return _special_values(a, x, p, 0.0, 1.0), _special_values(a, x, q, 1.0, 0.0)


def _special_values(a: Ex, x: Ex, value: Ex, at_x0: float, at_xinf: float) -> Ex:
    """SciPy's: value at x = 0 and x = inf, a = 0 (x > 0) as x = inf, a = inf as x = 0; NaN outside."""
    invalid = a.isnan() | x.isnan() | (a < 0.0) | (x < 0.0) | (a.eq(0.0) & x.eq(0.0)) | (a.eq(math.inf) & x.eq(math.inf))
    return select((invalid, math.nan), (x.eq(0.0) | a.eq(math.inf), at_x0), (x.eq(math.inf) | a.eq(0.0), at_xinf),
                  otherwise=value)


def gammainc(a: Ex, x: Ex) -> Ex:
    return incomplete_gamma(a, x)[0]


def gammaincc(a: Ex, x: Ex) -> Ex:
    return incomplete_gamma(a, x)[1]


for _op, _fn in {"GammaInc": gammainc, "GammaIncC": gammaincc}.items():
    decomposes(_op)(binary(_fn))
