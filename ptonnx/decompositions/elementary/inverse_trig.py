"""ArcTan, ArcTan2, ArcSin and ArcCos in float64 (onnxruntime has no float64 kernel).

One core, Cephes' arctangent: |x| is reduced to [0, 0.66] (through pi/2 - atan(1/x)
above tan(3pi/8) and pi/4 + atan((x-1)/(x+1)) above 0.66), where
atan(t) = t + t**3 P(t**2)/Q(t**2) (relative error 2.6e-18), and pi/2, pi/4 are
added with their low-order bits. The others are exact rearrangements around it:
atan2 divides the smaller magnitude by the larger (no overflow, no lost
quotient) and picks the quadrant; asin(x) = atan2(x, sqrt((1-x)(1+x))) and
acos(x) = 2 atan2(sqrt(1-x), sqrt(1+x)), whose factors are exact or nearly so.
float16 and float32 are computed in float64 and rounded once (`ptonnx/onnxruntime_dtypes.py`).
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, polyval, polyval1, sqrt, where
from ptonnx.decompositions.registry import binary, decomposes, unary
from ptonnx.decompositions.signs import is_negative, with_zero_sign

#: Cephes atan.c: atan(t) = t + t**3 P(t**2) / Q(t**2) on [0, 0.66]
ATAN_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1, -7.500855792314704667340e1,
          -1.228866684490136173410e2, -6.485021904942025371773e1)
ATAN_Q = (2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
          4.853903996359136964868e2, 1.945506571482613964425e2)
#: tan(3 pi / 8), and the low-order bits of pi/2 (pi/2 = HALF_PI + MOREBITS)
T3P8 = 2.41421356237309504880
MOREBITS = 6.123233995736765886130e-17
HALF_PI = math.pi / 2
#: below this |x|, atan(x), asin(x) round to x
IDENTITY_BELOW = 2.0**-27


def atan_of_magnitude(a: Ex) -> Ex:
    """atan(a) for a >= 0 (+inf too; NaN stays NaN)."""
    big, mid = a > T3P8, a > 0.66
    t = where(big, -1.0 / a, where(mid, (a - 1.0) / (a + 1.0), a))
    base = where(big, HALF_PI, where(mid, HALF_PI / 2, 0.0, like=a))
    extra = where(big, MOREBITS, where(mid, MOREBITS / 2, 0.0, like=a))
    z = t * t
    return base + (t + (t * z * (polyval(z, ATAN_P) / polyval1(z, ATAN_Q)) + extra))


def arctan2(y: Ex, x: Ex) -> Ex:
    """C's atan2(y, x), special values and zero signs included."""
    ay, ax = abs(y), abs(x)
    steep = ay > ax
    q = where(steep, ax, ay) / where(steep, ay, ax)  # in [0, 1], or NaN for 0/0 and inf/inf
    both_inf = ay.eq(math.inf) & ax.eq(math.inf)
    t = where(both_inf, HALF_PI / 2, where(ay.eq(0.0) & ax.eq(0.0), 0.0, atan_of_magnitude(q)))
    r = where(steep, (HALF_PI - t) + MOREBITS, t)
    r = where(is_negative(x), (math.pi - r) + 2 * MOREBITS, r)
    return with_zero_sign(r, is_negative(y))


@decomposes("ArcTan")
@unary
def arctan(x: Ex) -> Ex:
    """An odd function: x itself for tiny |x| (a zero keeps its sign)."""
    at_magnitude = atan_of_magnitude(abs(x))
    signed = where(x < 0.0, -at_magnitude, at_magnitude)
    return where(abs(x) >= IDENTITY_BELOW, signed, x)


@decomposes("ArcSin")
@unary
def arcsin(x: Ex) -> Ex:
    """asin(x) = atan2(x, sqrt((1 - x)(1 + x))): NaN beyond ±1 from the sqrt."""
    return arctan2(x, sqrt((1.0 - x) * (1.0 + x)))


@decomposes("ArcCos")
@unary
def arccos(x: Ex) -> Ex:
    """acos(x) = 2 atan2(sqrt(1 - x), sqrt(1 + x)): 1 - x is exact where acos is small."""
    return arctan2(sqrt(1.0 - x), sqrt(1.0 + x)) * 2.0


decomposes("ArcTan2")(binary(arctan2))
