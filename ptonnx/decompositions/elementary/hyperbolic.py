"""Sinh, Cosh, ArcSinh, ArcCosh and ArcTanh in float64 (onnxruntime has no float64 kernel),
and Tanh in every float dtype.

Each is a classical rearrangement (as in fdlibm) that keeps relative accuracy
where the textbook formula cancels or overflows:

- sinh(x) = (u + u / (u + 1)) / 2 with u = expm1(|x|) below 1, no cancellation
  near 0; (e - 1/e) / 2 with e = exp(|x|) from 1 on;
  cosh(x) = (e + 1/e) / 2. From |x| = 22 on, e**-|x| is below half an ulp and
  both are h * (h / 2) with h = exp(|x| / 2): finite up to the true overflow
  threshold 710.48 (exp(|x|) itself overflows at 709.78).
- asinh, acosh: log1p of an exactly-formed small argument near their zeros,
  log(2|x| + ...) in the middle, log(|x|) + log 2 beyond 2**28 (where squaring
  would overflow).
- atanh(x) = log1p(2|x| / (1 - |x|)) / 2 (1 - |x| is exact for |x| >= 1/2).
- tanh(x) as Cephes computes it: x + x s P(s) / Q(s) with s = x**2 below |x| = 0.625
  (additions, products and a quotient only: 1 ulp, and the same bits folded and run),
  1 - 2 / (exp(2|x|) + 1) above (exp's error, shrunk by the quotient: under 3 ulp), x
  itself for tiny |x|. onnxruntime's own Tanh is 9 ulp off near 17 in float64, 5 ulp in
  float32, 0 for float32 subnormals: it is not used.

float16 and float32 are computed in float64 and rounded once (`ptonnx/onnxruntime_dtypes.py`; Tanh of
float16 in float32).
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, exp, expm1, log, log1p, polyval, polyval1, sqrt, where
from ptonnx.decompositions.registry import decomposes, unary

#: from here on exp(-|x|) is under half an ulp of exp(|x|) (float64)
EXP_DOMINATES_FROM = 22.0
#: below this |x| the odd functions round to x itself
IDENTITY_BELOW = 2.0**-28
#: above this, x**2 + 1 rounds to x**2: asinh, acosh = log(x) + log(2)
LOG_ONLY_ABOVE = 2.0**28
LN2 = math.log(2)


def _odd(x: Ex, at_magnitude: Ex) -> Ex:
    """An odd function from its value at |x|; x itself for tiny |x| (a zero keeps its sign, NaN stays)."""
    signed = where(x < 0.0, -at_magnitude, at_magnitude)
    return where(abs(x) >= IDENTITY_BELOW, signed, x)


def _half_exp_squared(a: Ex) -> Ex:
    h = exp(a * 0.5)
    return h * 0.5 * h


@decomposes("Sinh")
@unary
def sinh(x: Ex) -> Ex:
    a = abs(x)
    u = expm1(a)
    small = (u + u / (u + 1.0)) * 0.5
    e = exp(a)
    middle = (e - 1.0 / e) * 0.5  # no cancellation from 1 on; more accurate than expm1's 3 ulp
    return _odd(x, where(a < 1.0, small, where(a < EXP_DOMINATES_FROM, middle, _half_exp_squared(a))))


@decomposes("Cosh")
@unary
def cosh(x: Ex) -> Ex:
    a = abs(x)
    e = exp(a)
    return where(a < EXP_DOMINATES_FROM, (e + 1.0 / e) * 0.5, _half_exp_squared(a))


@decomposes("ArcSinh")
@unary
def arcsinh(x: Ex) -> Ex:
    a = abs(x)
    t = a * a
    small = log1p(a + t / (1.0 + sqrt(1.0 + t)))
    middle = log(a * 2.0 + 1.0 / (sqrt(t + 1.0) + a))
    large = log(a) + LN2
    return _odd(x, where(a > LOG_ONLY_ABOVE, large, where(a > 2.0, middle, small)))


@decomposes("ArcCosh")
@unary
def arccosh(x: Ex) -> Ex:
    t = x - 1.0
    small = log1p(t + sqrt(t * 2.0 + t * t))
    middle = log(x * 2.0 - 1.0 / (x + sqrt(x * x - 1.0)))
    large = log(x) + LN2
    result = where(x > LOG_ONLY_ABOVE, large, where(x > 2.0, middle, small))
    return where(x >= 1.0, result, math.nan)  # NaN below 1 (and for NaN)


@decomposes("ArcTanh")
@unary
def arctanh(x: Ex) -> Ex:
    a = abs(x)
    twice = a * 2.0
    small = log1p(twice + twice * a / (1.0 - a)) * 0.5
    large = log1p(twice / (1.0 - a)) * 0.5  # ±inf at ±1, NaN beyond
    return _odd(x, where(a < 0.5, small, large))


#: Cephes' tanh for |x| <= 0.625: x + x s P(s) / Q(s), s = x**2 (Q's leading coefficient 1)
TANH_P = (-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3)
TANH_Q = (1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3)
#: from here on tanh(x) = sign(x) (1 - 2 / (exp(2|x|) + 1)): the quotient is small, exp's error shrinks with it
TANH_VIA_EXP_FROM = 0.625
#: below this |x|, x**3 / 3 is under half an ulp of x: tanh(x) = x (the rational would lose -0.0's sign)
TANH_IDENTITY_BELOW = {"float32": 2.0**-12, "float64": 2.0**-27}


@decomposes("Tanh", any_float=True)
@unary
def tanh(x: Ex) -> Ex:
    """Cephes' rational approximation below 0.625, exp above, x itself for tiny |x| (a zero
    keeps its sign, NaN stays NaN); ±1 from exp's overflow on, never NaN."""
    a = abs(x)
    s = x * x
    middle = x + x * s * (polyval(s, TANH_P) / polyval1(s, TANH_Q))
    tail = 1.0 - 2.0 / (exp(a + a) + 1.0)
    result = where(a >= TANH_VIA_EXP_FROM, where(x < 0.0, -tail, tail), middle)
    return where(a >= TANH_IDENTITY_BELOW[x.dtype], result, x)
