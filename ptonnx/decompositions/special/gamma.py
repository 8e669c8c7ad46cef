"""GammaLn, Gamma, Psi (digamma) and TriGamma, in float64, with SciPy's special values.

- lgamma, psi and trigamma of x > 0, branch-free (every branch runs on every element
  in onnxruntime, so few nodes is what makes them fast): below 4, x is shifted by 4
  at once, lgamma(x) = lgamma(x + 4) - log(x (x+1) (x+2) (x+3)), psi(x) = psi(x + 4)
  - sum 1/(x + k), trigamma(x) = trigamma(x + 4) + sum 1/(x + k)**2, with a fitted
  asymptotic series at z = x + 4 (or x) >= 4; the product is q (q + 2), q = x (x + 3).
  lgamma is then absolutely accurate (to 5e-15) below 8; within ZERO_WINDOW of its
  zeros 1 and 2 the Taylor series of lgamma(2 + t) in the exact t = x - 2, or t = x - 1
  and lgamma(1 + t) = lgamma(2 + t) - log(x), keeps it relative; likewise psi's Taylor
  series within ROOT_WINDOW of its zero x0 (the shift cancels near zeros).
- Gamma(x), x > 0 (Cephes, vectorised: Gamma is relative, 32 ulp): from 13 on Stirling
  with Pow: x**(x - 1/2) e**-x, split in two halves above 143 so nothing overflows early;
  below, moved into [2, 3) by the recurrence (at most 10 steps down, as one product of
  exact factors x - k, or 1-2 up), where Gamma = exp(lgamma(2 + t)), lgamma = t B(t)/C(t).
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
    polyval,
    polyval1,
    round_even,
    sin_kernel,
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
#: Gamma: from here Stirling's series (LGAM_A); below it the recurrence (at most 10 steps)
STIRLING_FROM = 13.0
#: above this x**(x - 1/2) overflows before e**-x brings it back
POW_SPLIT_ABOVE = 143.0
#: below this |x|: lgamma = -log|x|, Gamma = 1/x, psi = -1/x - Euler's gamma, to 1e-17
#: (and pi x, which the reflection needs, is inexact for subnormal x)
TINY = 2.0**-54
EULER = 0.57721566490153286061
#: Gamma overflows above this
MAX_GAMMA = 171.624376956302725
#: lgamma, psi and trigamma of x below this are computed at x + SHIFT (references/special_constants.GAMMA_SHIFT)
SHIFT = 4.0
#: the remainders R(w), w = 1/z**2, of their asymptotic series on z >= SHIFT, highest power first, fitted
#: (references/special_constants.asymptotic_fit: 6e-17 absolute for lgamma, 2e-16 psi, 3e-17 relative trigamma):
#: lgamma(z) = (z - 1/2)(log z - 1) + log sqrt(2 pi) - 1/2 + R(w) / z
LGAMMA_ASYMPTOTIC = (-0.00931334808113529, 0.00490682204421289, -0.0018493812825542046, 0.0008399241063903852,
                     -0.0005952106416391851, 0.0007936505874366478, -0.002777777777181388, 0.08333333333333305)
#: psi(z) = log z - 1/(2z) - w R(w)
DIGAMMA_ASYMPTOTIC = (-0.12255846973412977, 0.060306768304803596, -0.020066984245334686, 0.007548527509749344,
                      -0.004166259928592623, 0.003968250925656223, -0.008333333324559695, 0.08333333333332915)
#: trigamma(z) = 1/z + 1/(2 z**2) + R(w) / z**3
TRIGAMMA_ASYMPTOTIC = (-46.54901142480885, 21.397051255347286, -5.323415396325552, 1.1017431437952983,
                       -0.2515302496045941, 0.07573313909749425, -0.03333311165493268, 0.02380952277325337,
                       -0.033333333331435816, 0.1666666666666661)
#: psi's positive zero as hi + lo, and its Taylor coefficients there (references/special_constants.py)
DIGAMMA_ROOT = (1.4616321449683622, 9.549995429965697e-17)
DIGAMMA_ROOT_TAYLOR = (
    0.9676722454476212, -0.4427631689835921, 0.258499760955651, -0.16394270544240652, 0.10782405069126237,
    -0.07219956125645471,
)
#: lgamma(2 + t) = sum c[k-1] t**k, c[0] = 1 - Euler's gamma (references/special_constants.py): about lgamma's
#: zeros 1 and 2 (ZERO_TERMS of them), where the shift cancels (gammaln(2 - 1e-10) = -4e-11 would be ~1e-15 off), and
#: for the incomplete gamma functions' lgamma(1 + a), a <= 1/2 (all)
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
#: |x - 1|, |x - 2| below which lgamma is the series of ZERO_TERMS terms (the next is below 4e-16 relative);
#: beyond, the shift is within 5e-15 absolutely (the bound's 1e-14 floor)
ZERO_WINDOW = 0.007
ZERO_TERMS = 6
#: |x - x0| below which psi is its Taylor series about its zero (the next term is below 8e-16 relative);
#: beyond, the shift is within 1e-15 absolutely (the bound's floor: 4e-15)
ROOT_WINDOW = 0.005


def reduced_fraction(x: Ex) -> tuple[Ex, Ex]:
    """(k, r): k = round(x), r = x - k exactly, |r| <= 1/2."""
    k = round_even(x)
    return k, x - k


def sin_pi(r: Ex) -> Ex:
    """sin(pi r) for |r| <= 1/2: onnxruntime's Sin is accurate there, but for tiny
    arguments (30 ulp off below 2**-26, where sin(a) rounds to a)."""
    a = r * math.pi
    return where(abs(a) >= 2.0**-26, sin_kernel(a), a)


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


def _shifted(x: Ex) -> tuple[Ex, Ex, Ex]:
    """(small, z, 1/z): small = x < SHIFT, z = x + SHIFT there, else x (z >= SHIFT)."""
    small = x < SHIFT
    z = where(small, x + SHIFT, x)
    return small, z, 1.0 / z


def _rising(x: Ex) -> tuple[Ex, Ex, Ex, Ex]:
    """(x + 3, q, q + 2, q (q + 2)) with q = x (x + 3): q (q + 2) = x (x+1) (x+2) (x+3), exact for subnormal x."""
    x3 = x + 3.0
    q = x * x3
    q2 = q + 2.0
    return x3, q, q2, q * q2


def lgamma_positive(x: Ex) -> Ex:
    """log Gamma(x) for x >= 0 (inf at 0 and +inf; no inf - inf: (z - 1/2)(log z - 1))."""
    small, z, r = _shifted(x)
    stirling = (z - 0.5) * (log(z) - 1.0) + (LOG_SQRT_2PI - 0.5) + polyval(r * r, LGAMMA_ASYMPTOTIC) * r
    shifted = stirling - where(small, log(_rising(x)[3]), 0.0)  # log 0 = -inf: inf at 0
    below = x < 1.5
    t = x - where(below, 1.0, 2.0, like=x)  # exact on [1/2, 4)
    about_two = t * polyval(t, LGAMMA_ABOUT_TWO[ZERO_TERMS - 1::-1])  # lgamma(2 + t)
    series = about_two - where(below, log(x), 0.0)  # log x is relatively accurate near 1 (x = 1 + t exactly)
    return where(abs(t) < ZERO_WINDOW, series, shifted)


def lgamma(x: Ex) -> Ex:
    negative = x < 0.0
    positive = lgamma_positive(abs(x))  # -x is exact (1 - x is not: its rounding costs ~x psi(x) ulp)
    _, r = reduced_fraction(x)
    s = abs(sin_pi(r))
    reflected = where(s.eq(0.0), math.inf, (LOG_PI - log(s * abs(x))) - positive)  # poles; |x| >= 2**52 too
    reflected = where(x > -TINY, -log(abs(x)), reflected)  # pi x is inexact for subnormal x (x >= 0: exact anyway)
    result = where(negative, reflected, positive)
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
    below_one = x < 1.0
    # one rational lgamma(u), u in [2, 3): moved down from x >= 2, or up from x < 2
    u = where(x >= 2.0, u_down, x + where(below_one, 2.0, 1.0, like=x))
    gamma_u = exp(_lgamma_2_3(u))
    down = z * gamma_u
    up = gamma_u / (x * where(below_one, x + 1.0, 1.0))
    split = x > POW_SPLIT_ABOVE
    a = where(split, half, where(x >= STIRLING_FROM, whole, where(x >= 2.0, down, up)))
    b = where(split, half / e * series, 1.0)
    return a, b


def gamma_positive(x: Ex) -> Ex:
    """Gamma(x) for x >= 0 (inf at +0, -inf at -0.0, as `gamma`), without the reflection."""
    a, b = gamma_factors(x)
    return where(x < TINY, 1.0 / x, where(x > MAX_GAMMA, math.inf, a * b))


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


def digamma_positive(x: Ex) -> Ex:
    """psi(x) for x >= 0, and for -0.0: +inf (the sum is 6 / -0.0)."""
    small, z, r = _shifted(x)
    asymptotic = log(z) - r * (0.5 + r * polyval(r * r, DIGAMMA_ASYMPTOTIC))
    x3, q, q2, product = _rising(x)
    total = (x + x3) * (q + q2) / product  # 1/x + 1/(x+3) + 1/(x+1) + 1/(x+2) = (2x + 3)(1/q + 1/(q + 2))
    t = (x - DIGAMMA_ROOT[0]) - DIGAMMA_ROOT[1]
    taylor = t * polyval(t, DIGAMMA_ROOT_TAYLOR[::-1])
    return where(abs(t) < ROOT_WINDOW, taylor, asymptotic - where(small, total, 0.0))


def digamma(x: Ex) -> Ex:
    negative = x < 0.0
    positive = digamma_positive(where(negative, 1.0 - x, x))
    _, r = reduced_fraction(x)
    cos_pi_r = sin_pi(0.5 - abs(r))  # exact argument: cos(pi r) without pi/2's rounding
    reflected = positive - math.pi * cos_pi_r / sin_pi(r)
    reflected = where(x > -TINY, -1.0 / x - EULER, reflected)  # x >= 0 needs none: -inf at 0, +inf at -0.0
    result = where(negative, reflected, positive)
    pole = negative & r.eq(0.0)  # negative integers and -inf: NaN, as SciPy
    return where(pole | x.eq(-math.inf), math.nan, result)


def trigamma(x: Ex) -> Ex:
    negative = x < 0.0
    z = where(negative, 1.0 - x, x)
    small, _, r = _shifted(z)
    asymptotic = (1.0 + (0.5 + polyval(r * r, TRIGAMMA_ASYMPTOTIC) * r) * r) * r  # 0 at +inf
    total = sum((1.0 / ((z + float(k)) * (z + float(k))) for k in range(1, int(SHIFT))), 1.0 / (z * z))
    positive = asymptotic + where(small, total, 0.0)  # every term positive
    _, r = reduced_fraction(x)
    s = sin_pi(r)
    reflected = math.pi**2 / (s * s) - positive  # inf at the poles
    result = where(negative, reflected, positive)
    return where(x.eq(-math.inf), math.inf, result)  # SciPy's polygamma(1, -inf)


for _op, _fn in {"GammaLn": lgamma, "Gamma": gamma, "Psi": digamma, "TriGamma": trigamma}.items():
    decomposes(_op)(unary(_fn))
