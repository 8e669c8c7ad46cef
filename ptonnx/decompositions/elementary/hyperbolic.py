"""Sinh, Cosh, ArcSinh, ArcCosh and ArcTanh in float64 (onnxruntime has no float64 kernel).

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

float16 and float32 are computed in float64 and rounded once (`ptonnx/legality.py`).
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, exp, expm1, log, log1p, sqrt, where
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
