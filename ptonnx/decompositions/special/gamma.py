"""GammaLn, Gamma, Psi (digamma) and TriGamma, in float64, with SciPy's special values.

- log|Gamma(x)|, x > 0 (Cephes lgam, vectorised): from 13 on Stirling's series;
  below, x is moved into [2, 3) by the recurrence (at most 10 steps down, as one
  product of exact factors x - k, or 1-2 steps up, as -log(x) - log1p(x) terms
  below 1/2), where lgamma(2 + t) = t B(t)/C(t); on [1/2, 2), where the steps up
  would cancel near the zeros 1 and 2 (x + 1 rounds), the Taylor series of
  lgamma(2 + t) (30 terms) in the exact t = x - 2, or t = x - 1 and
  lgamma(1 + t) = lgamma(2 + t) - log1p(t).
- Gamma(x), x > 0: the same reduction, with Gamma on [2, 3) = exp(lgamma) (lgamma
  is below 0.7 there, so exp keeps full accuracy); from 13 on Stirling with
  Pow: x**(x - 1/2) e**-x, split in two halves above 143 so nothing overflows early.
- psi(x), x > 0: shifted up to 10 (psi(x) = psi(x + n) - sum 1/(x + k)), then the
  asymptotic series (7 Bernoulli terms); within 1/4 of its positive zero x0 the
  Taylor series about x0 (the shift would cancel there).
- trigamma(x), x > 0: shifted up to 10 (every term positive), asymptotic series.
- x < 0: the reflection formulas (through Gamma(-x), lgamma(-x): -x is exact), with sin(pi x) from the exactly reduced
  r = x - round(x) (no pi * x rounding at large |x|).

float16 and float32 are computed in float64 (legalise.py) and rounded once.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.signs import with_zero_sign
from ptonnx.decompositions.expr import (
    Ex,
    exp,
    floor,
    fmod,
    log,
    log1p,
    polyval,
    polyval1,
    sin_reduced,
    round_even,
    where,
)
from ptonnx.decompositions.registry import decomposes, unary

#: Cephes lgam: Stirling's series of lgamma (in 1/x**2, times 1/x), and lgamma(2 + t) = t B(t)/C(t)
LGAM_A = (8.11614167470508450300e-4, -5.95061904284301438324e-4, 7.93650340457716943945e-4,
          -2.77777777730099687205e-3, 8.33333333333331927722e-2)
LGAM_B = (-1.37825152569120859100e3, -3.88016315134637840924e4, -3.31612992738871184744e5,
          -1.16237097492762307383e6, -1.72173700820839662146e6, -8.53555664245765465627e5)
LGAM_C = (-3.51815701436523470549e2, -1.70642106651881159223e4, -2.20528590553854454839e5,
          -1.13933444367982507207e6, -2.53252307177582951285e6, -2.01889141433532773231e6)
LOG_SQRT_2PI = 0.91893853320467274178
LOG_PI = 1.14472988584940017414
SQRT_2PI = 2.50662827463100050242
#: from here Stirling's series; below it the recurrence (at most 10 steps)
STIRLING_FROM = 13.0
#: above this x**(x - 1/2) overflows before e**-x brings it back
POW_SPLIT_ABOVE = 143.0
#: below this |x|: lgamma = -log|x|, Gamma = 1/x, psi = -1/x - Euler's gamma, to 1e-17
#: (and pi x, which the reflection needs, is inexact for subnormal x)
TINY = 2.0**-54
EULER = 0.57721566490153286061
#: Gamma overflows above this
MAX_GAMMA = 171.624376956302725
#: psi and trigamma are shifted up to here before their asymptotic series
SHIFT_TO = 10.0
#: psi's positive zero as hi + lo, and its Taylor coefficients there (checks/special_constants.py)
DIGAMMA_ROOT = (1.4616321449683622, 9.549995429965697e-17)
DIGAMMA_ROOT_TAYLOR = (
    0.9676722454476212, -0.4427631689835921, 0.258499760955651, -0.16394270544240652, 0.10782405069126237,
    -0.07219956125645471, 0.04880428816414311, -0.03316112647484736, 0.022597648232218104, -0.01542476590494896,
    0.010538791616612175, -0.007204534386356869, 0.004926781395729853, -0.003369801655439328, 0.002305126326734928,
    -0.0015769367714301972, 0.0010788252019162967, -0.0007380709389960052, 0.000504953265834602,
    -0.0003454680251063077, 0.00023635601564027053, -0.00016170622091974803, 0.0001106337276874741,
    -7.569179582195066e-05, 5.178575795222081e-05, -3.5430070947659604e-05,
)
#: lgamma(2 + t) = sum c[k-1] t**k, c[0] = 1 - Euler's gamma (checks/special_constants.py), used on
#: [1/2, 2) about the zeros 1 and 2, where Cephes' shifts lgamma(x + 1) - log(x) and
#: lgamma(x + 2) - log(x (x + 1)) cancel (x + 1 rounds: gammaln(2 - 1e-10) was 8e-7 off, gammaln(1 - 2**-53) 2.5x)
LGAMMA_ABOUT_TWO = (
    0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546, -0.007385551028673986,
    0.0028905103307415234, -0.001192753911703261, 0.0005096695247430425, -0.00022315475845357939,
    9.945751278180853e-05, -4.492623673813314e-05, 2.050721277567069e-05, -9.439488275268397e-06,
    4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07, -4.492469198764566e-07,
    2.1207184805554665e-07, -1.0043224823968099e-07, 4.7698101693639804e-08, -2.2711094608943164e-08,
    1.0838659214896955e-08, -5.183475041970047e-09, 2.4836745438024785e-09, -1.1921401405860912e-09,
    5.731367241678862e-10, -2.7595228851242334e-10, 1.330476437424449e-10, -6.4229645638381e-11,
    3.1044247747322276e-11,
)
#: on [SERIES_FROM, 2) lgamma uses LGAMMA_ABOUT_TWO: about 1 below ABOUT_TWO_FROM, about 2 above
SERIES_FROM = 0.5
ABOUT_TWO_FROM = 1.5
#: |x - x0| below which psi uses the Taylor series about its zero
ROOT_WINDOW = 0.3
#: psi(y) ~ log y - 1/(2y) - sum B_2k / (2k y**2k), coefficients of 1/y**2 from the highest power
DIGAMMA_ASYMPTOTIC = (1 / 12, -691 / 32760, 1 / 132, -1 / 240, 1 / 252, -1 / 120, 1 / 12)
#: trigamma(y) ~ 1/y + 1/(2y**2) + sum B_2k / y**(2k+1), coefficients of 1/y**2 from the highest power
TRIGAMMA_ASYMPTOTIC = (7 / 6, -691 / 2730, 5 / 66, -1 / 30, 1 / 42, -1 / 30, 1 / 6)


def reduced_fraction(x: Ex) -> tuple[Ex, Ex]:
    """(k, r): k = round(x), r = x - k exactly, |r| <= 1/2."""
    k = round_even(x)
    return k, x - k


def sin_pi(r: Ex) -> Ex:
    """sin(pi r) for |r| <= 1/2: onnxruntime's Sin is accurate there, but for tiny
    arguments (30 ulp off below 2**-26, where sin(a) rounds to a)."""
    a = r * math.pi
    return where(abs(a) >= 2.0**-26, sin_reduced(a), a)


def _odd(k: Ex) -> Ex:
    return abs(fmod(k, 2.0)).eq(1.0)


def _lgamma_2_3(u: Ex) -> Ex:
    t = u - 2.0
    return t * polyval(t, LGAM_B) / polyval1(t, LGAM_C)


def _down_product(x: Ex) -> tuple[Ex, Ex]:
    """(u, z): for 2 <= x < 13, u = x - n in [2, 3) and z = (x-1)(x-2)...(x-n), each factor exact."""
    n = floor(x) - 2.0
    z = x.const(1.0)
    for k in range(1, 11):
        z = z * where(n >= float(k), x - float(k), 1.0)
    return x - n, z


def _stirling_series(x: Ex) -> Ex:
    """The correction sum of Stirling's series of lgamma, for x >= 13."""
    return polyval(1.0 / (x * x), LGAM_A) / x


def lgamma_positive(x: Ex) -> Ex:
    """log Gamma(x) for x >= 0 (inf at 0 and +inf)."""
    stirling = (x - 0.5) * log(x) - x + LOG_SQRT_2PI + _stirling_series(x)
    u_down, z = _down_product(x)
    down = log(z) + _lgamma_2_3(u_down)
    below_one = x < 1.0
    up = _lgamma_2_3(x + where(below_one, 2.0, 1.0, like=x)) - (log(x) + where(below_one, log1p(x), 0.0))
    near_one = x < ABOUT_TWO_FROM
    t = x - where(near_one, 1.0, 2.0, like=x)  # exact on [1/2, 2)
    about_two = t * polyval(t, LGAMMA_ABOUT_TWO[::-1])  # lgamma(2 + t)
    series = where(near_one, about_two - log1p(t), about_two)  # lgamma(1 + t) = lgamma(2 + t) - log1p(t)
    result = where(x >= STIRLING_FROM, stirling, where(x >= 2.0, down, where(x >= SERIES_FROM, series, up)))
    return where(x.eq(math.inf), math.inf, result)


def lgamma(x: Ex) -> Ex:
    negative = x < 0.0
    positive = lgamma_positive(abs(x))  # -x is exact (1 - x is not: its rounding costs ~x psi(x) ulp)
    _, r = reduced_fraction(x)
    s = abs(sin_pi(r))
    reflected = where(s.eq(0.0), math.inf, (LOG_PI - log(s * abs(x))) - positive)  # poles; |x| >= 2**52 too
    result = where(negative, reflected, positive)
    result = where(abs(x) < TINY, -log(abs(x)), result)  # pi x is inexact for subnormal x; inf at ±0
    return where(x.eq(-math.inf), -math.inf, result)  # SciPy's gammaln(-inf)


def gamma_factors(x: Ex) -> tuple[Ex, Ex]:
    """(a, b) with Gamma(x) = a * b for x >= 0, each finite up to x = 340: the reflection
    divides by them in turn, so Gamma(x) for -183 < x < -171.6 (subnormal) is not lost
    to an overflow of Gamma(-x)."""
    series = exp(_stirling_series(x)) * SQRT_2PI
    e = exp(x)
    whole = x.op("Pow", x - 0.5) / e * series
    half = x.op("Pow", x * 0.5 - 0.25)
    u_down, z = _down_product(x)
    down = z * exp(_lgamma_2_3(u_down))
    below_one = x < 1.0
    up = exp(_lgamma_2_3(x + where(below_one, 2.0, 1.0, like=x))) / (x * where(below_one, x + 1.0, 1.0))
    split = x > POW_SPLIT_ABOVE
    a = where(split, half, where(x >= STIRLING_FROM, whole, where(x >= 2.0, down, up)))
    b = where(split, half / e * series, 1.0)
    return a, b


def gamma(x: Ex) -> Ex:
    negative = x < 0.0
    a, b = gamma_factors(abs(x))  # -x is exact, 1 - x is not
    positive = where(x > MAX_GAMMA, math.inf, a * b)  # inf / inf beyond it
    k, r = reduced_fraction(x)
    s = sin_pi(r)
    signed_sin = where(_odd(k), -s, s)  # sin(pi x) = (-1)**k sin(pi r)
    # Gamma(x) Gamma(-x) = -pi / (x sin(pi x)); below -190 it has underflowed: a signed zero
    quotient = (-math.pi / x) / signed_sin
    magnitude = where(x <= -190.0, 0.0, quotient / a / b, like=x)  # NaN stays NaN
    reflected = with_zero_sign(magnitude, quotient < 0.0)
    result = where(x >= 0.0, positive, reflected)
    result = where(abs(x) < TINY, 1.0 / x, result)  # ±inf at ±0, as SciPy
    pole = negative & r.eq(0.0)  # negative integers and -inf: NaN, as SciPy
    return where(pole | x.eq(-math.inf), math.nan, result)


def _shift_up(x: Ex, term) -> tuple[Ex, Ex]:
    """(y, sum): y = x + n >= 10 (n <= 10 steps, for x > 0) and the sum of term(x + k), k < n."""
    total = x.const(0.0)
    y = x
    for _ in range(int(SHIFT_TO)):
        below = y < SHIFT_TO
        total = total + where(below, term(y), 0.0)
        y = where(below, y + 1.0, y)
    return y, total


def digamma_positive(x: Ex) -> Ex:
    y, total = _shift_up(x, lambda v: 1.0 / v)
    w = 1.0 / (y * y)
    asymptotic = log(y) - 0.5 / y - w * polyval(w, DIGAMMA_ASYMPTOTIC)
    t = (x - DIGAMMA_ROOT[0]) - DIGAMMA_ROOT[1]
    taylor = t * polyval(t, DIGAMMA_ROOT_TAYLOR[::-1])
    return where(abs(t) < ROOT_WINDOW, taylor, asymptotic - total)


def digamma(x: Ex) -> Ex:
    negative = x < 0.0
    positive = digamma_positive(where(negative, 1.0 - x, x))
    _, r = reduced_fraction(x)
    cos_pi_r = sin_pi(0.5 - abs(r))  # exact argument: cos(pi r) without pi/2's rounding
    reflected = positive - math.pi * cos_pi_r / sin_pi(r)
    result = where(negative, reflected, positive)
    result = where(abs(x) < TINY, -1.0 / x - EULER, result)  # ∓inf at ±0, as SciPy
    pole = negative & r.eq(0.0)  # negative integers and -inf: NaN, as SciPy
    return where(pole | x.eq(-math.inf), math.nan, result)


def trigamma(x: Ex) -> Ex:
    negative = x < 0.0
    z = where(negative, 1.0 - x, x)
    y, total = _shift_up(z, lambda v: 1.0 / (v * v))
    w = 1.0 / (y * y)
    asymptotic = (1.0 + (0.5 + polyval(w, TRIGAMMA_ASYMPTOTIC) / y) / y) / y  # 0 at +inf
    positive = asymptotic + total
    _, r = reduced_fraction(x)
    s = sin_pi(r)
    reflected = math.pi**2 / (s * s) - positive  # inf at the poles
    result = where(negative, reflected, positive)
    return where(x.eq(-math.inf), math.inf, result)  # SciPy's polygamma(1, -inf)


for _op, _fn in {"GammaLn": lgamma, "Gamma": gamma, "Psi": digamma, "TriGamma": trigamma}.items():
    decomposes(_op)(unary(_fn))
