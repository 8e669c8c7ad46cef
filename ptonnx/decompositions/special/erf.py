"""Erf (float64), Erfc and Erfcx, from Cephes' rational approximations (ndtr.c).

onnxruntime has no float64 Erf kernel (and no Erfc at all). Cephes splits the line:

- |x| < 1: erf(x) = x T(x**2) / U(x**2);
- |x| >= 1: erfc(|x|) = exp(-x**2) S(|x|), with S = P/Q below 8 and R/S above.

S(|x|) is erfcx itself, so erfcx(x) needs no exp(x**2) for x >= 1 (it is finite
for every such x); below 1 it is exp(x**2) erfc(x), with erfc(x) = 1 - erf(x) or
2 - erfc(|x|), which overflows exactly where erfcx does (x < -26.6).
exp(-x**2) is computed as Cephes' expx2 does: x = m + f with m a multiple of
1/128, so m**2 is exact and exp(-x**2) = exp(-m**2) exp(-(2mf + f**2)) keeps
full relative accuracy (exp(-x*x) loses |x**2| ulp: 6e-14 at x = 26).
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, exp, floor, polyval, polyval1, where
from ptonnx.decompositions.registry import decomposes, unary

#: erf(x) = x T(x**2) / U(x**2) for |x| < 1 (U's leading 1 implied)
ERF_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
         7.00332514112805075473e3, 5.55923013010394962768e4)
ERF_U = (3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
         2.26290000613890934246e4, 4.92673942608635921086e4)
#: erfcx(x) = P(x) / Q(x) for 1 <= x < 8
ERFC_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
          4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
          9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
ERFC_Q = (1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
          9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
          1.65666309194161350182e3, 5.57535340817727675546e2)
#: erfcx(x) = R(x) / S(x) for x >= 8
ERFC_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
          6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
ERFC_S = (2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
          1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)
#: from here on the asymptotic series (7 terms: the next is below 1e-18 relative) is more
#: accurate than R/S (28 ulp off near 1e8, and overflowing beyond 1e51)
ASYMPTOTIC_FROM = 50.0
#: erfcx(x) ~ 1/(sqrt(pi) x) sum_k (-1)**k (2k-1)!! / (2x**2)**k
ASYMPTOTIC = tuple((-1) ** k * math.prod(range(1, 2 * k, 2)) for k in range(7))
INV_SQRT_PI = 1 / math.sqrt(math.pi)
#: expx2 splits x at multiples of 1/SPLIT
SPLIT = 128.0


def exp_square(x: Ex, sign: float) -> Ex:
    """exp(sign * x**2) with full relative accuracy (Cephes' expx2); |x| is capped at 40,
    where it is 0 or inf already (and inf - inf would make the split NaN)."""
    x = abs(x).op("Min", 40.0)
    m = floor(x * SPLIT + 0.5) * (1 / SPLIT)
    f = x - m
    return exp(m * m * sign) * exp((m * f * 2.0 + f * f) * sign)


def erf_small(x: Ex) -> Ex:
    """erf(x) for |x| < 1 (-0.0 stays -0.0)."""
    z = x * x
    return x * polyval(z, ERF_T) / polyval1(z, ERF_U)


def erfcx_large(a: Ex) -> Ex:
    """erfcx(a) for a >= 1 (+inf gives 0)."""
    middle = polyval(a, ERFC_P) / polyval1(a, ERFC_Q)
    tail = polyval(a, ERFC_R) / polyval1(a, ERFC_S)
    w = 0.5 / (a * a)  # 0 for huge a: the series is 1/(sqrt(pi) a) there
    asymptotic = polyval(w, ASYMPTOTIC[::-1]) * (INV_SQRT_PI / a)
    return where(a < 8.0, middle, where(a < ASYMPTOTIC_FROM, tail, asymptotic))


def erfc_large(a: Ex) -> Ex:
    """erfc(a) for a >= 1."""
    return exp_square(a, -1.0) * erfcx_large(a)


def erf(x: Ex) -> Ex:
    a = abs(x)
    one_minus = 1.0 - erfc_large(a)
    large = where(x < 0.0, -one_minus, one_minus)
    return where(a >= 1.0, large, erf_small(x))  # the small branch second: erf(-0.0) = -0.0


def erfc(x: Ex) -> Ex:
    a = abs(x)
    large = erfc_large(a)
    return where(a < 1.0, 1.0 - erf_small(x), where(x < 0.0, 2.0 - large, large))


def erfcx(x: Ex) -> Ex:
    """erfcx_large once, of |x|: for x <= -1 erfc(x) = 2 - exp(-x**2) erfcx(|x|)."""
    a = abs(x)
    large = erfcx_large(a)
    below = where(a < 1.0, 1.0 - erf_small(x), 2.0 - exp_square(a, -1.0) * large)  # erfc(x), x < 1
    return where(x >= 1.0, large, exp_square(x, 1.0) * below)


#: onnxruntime's Erf below float64 (within 2 ulp); Cephes' in float64, which it lacks
decomposes("Erf", widen=False)(unary(erf))
decomposes("Erfc")(unary(erfc))
decomposes("Erfcx")(unary(erfcx))
