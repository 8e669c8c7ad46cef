"""Portable elementary functions for the draws: the same bits on every runtime.

A runtime's Exp, Log, Sin or Cos kernel rounds as its own polynomial does (onnxruntime's
Eigen/MLAS kernels are not NumPy's libm), so a draw through one would differ in its last
bits between `interpret`, constant folding and each runtime. These are written only in ops
IEEE 754 defines exactly (Add, Sub, Mul, Div, Sqrt, Floor, comparisons, Select, Cast of
small integers, Gather from a table of powers of two), so every runtime and NumPy compute
the same bits. They are fdlibm's algorithms (Sun's, as in musl and FreeBSD's libm) without
its bit manipulation: an exponent is found by exact compare-and-scale steps, and 2**k is a
table lookup (no Pow). All are float64. Errors measured against mpmath
(`tests/random/test_portable.py`) are stated in ulps of the result.
"""

from __future__ import annotations

import math

import numpy as np

from ptonnx.decompositions.elementary.inverse_trig import arctan2
from ptonnx.decompositions.expr import Ex, floor, sqrt, where

#: 2**j for j in [-POW2_BIAS, 1023], every power of two a double holds (subnormals too)
POW2_BIAS = 1074
_POW2 = np.ldexp(1.0, np.arange(-POW2_BIAS, 1024)).astype(np.float64)

#: ln 2 split as fdlibm's: LN2_HI has 21 trailing zero bits, so k LN2_HI is exact for |k| < 2**21
LN2_HI, LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
INV_LN2 = 1.44269504088896338700e+00
#: fdlibm e_log.c: log(1 + f) = f - f**2/2 + s (f**2/2 + R(s**2)), s = f / (2 + f)
LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
      1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01)
#: fdlibm e_exp.c: the Remez coefficients of exp(r) on |r| <= ln2 / 2
EXP_P = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
         -1.65339022054652515390e-06, 4.13813679705723846039e-08)
#: exp(x) overflows above EXP_MAX and is 0 below EXP_MIN: arguments are clamped there first
EXP_MAX, EXP_MIN = 710.0, -746.0
#: fdlibm k_sin.c and k_cos.c on [-pi/4, pi/4]
SIN_S = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
         2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
COS_C = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
         -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)
#: pi / 2 as a double, its halves of 26 bits (Veltkamp's split by SPLITTER) and what the double misses
HALF_PI = math.pi / 2
SPLITTER = 2.0**27 + 1.0
HALF_PI_HI = HALF_PI * SPLITTER - (HALF_PI * SPLITTER - HALF_PI)
HALF_PI_LO = HALF_PI - HALF_PI_HI
HALF_PI_REST = 6.123233995736766e-17
SQRT2, SQRT_HALF = math.sqrt(2.0), math.sqrt(0.5)
TINY = 2.0**-1022  # the least normal double


def _horner(x: Ex, coefficients) -> Ex:
    """c[0] + x (c[1] + x (c[2] + ...)): lowest degree first, as fdlibm writes them."""
    acc = x.const(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = acc * x + c
    return acc


def pow2(k: Ex) -> Ex:
    """2**k for integer-valued float64 k in [-1074, 1023], from a table (exact)."""
    index = (k + float(POW2_BIAS)).cast("int64")
    return Ex(k.scope, k.scope.op("Gather", [k.scope.scalar(_POW2, "float64"), index.value], {"axis": 0}))


def scale(x: Ex, k: Ex) -> Ex:
    """x 2**k for integer-valued float64 k in [-2148, 2046], rounded once: x 2**(k//2) is exact
    where x is within 2**500 of 1, the second factor rounds (overflow, subnormal results)."""
    half = floor(k * 0.5)
    return x * pow2(half) * pow2(k - half)


def _finite_positive(x: Ex) -> Ex:
    return (x > 0.0) & (x < math.inf)


def log(x: Ex, *, normal: bool = False) -> Ex:
    """Natural log, fdlibm's e_log.c: within 1 ulp (0.79 measured); log(0) = -inf, log(inf) =
    inf, NaN for x < 0 and NaN, as NumPy's. `normal`: the caller knows x is a positive normal
    double (a uniform, 1 - a uniform), and the special cases are left out.

    x = 2**k m with m in [sqrt(1/2), sqrt(2)): the runtime's Log only guesses k (the nearest
    integer to log2 x, within 1 of it for any Log within 1e-10), and one exact compare-and-scale
    step each way corrects m into that range, so no bit of the result depends on the runtime's Log."""
    if normal:
        xs = x
    else:
        ok = _finite_positive(x)
        xs = where(ok, x, 1.0)
        tiny = xs < TINY
        xs = where(tiny, xs * 2.0**54, xs)  # subnormals: exact
    k = floor(xs.op("Log") * INV_LN2 + 0.5)  # a guess, corrected exactly below
    m = xs * pow2(-k)  # exact: m is within a factor 4 of 1
    high, low = m >= SQRT2, m < SQRT_HALF  # one of them at most
    m = m * where(high, 0.5, where(low, 2.0, 1.0, like=m))
    k = k + where(high, 1.0, where(low, -1.0, 0.0, like=k))
    if not normal:
        k = where(tiny, k - 54.0, k)
    f = m - 1.0  # exact (Sterbenz)
    s = f / (f + 2.0)
    z = s * s
    w = z * z
    r = z * _horner(w, LG[0::2]) + w * _horner(w, LG[1::2])
    hfsq = f * f * 0.5
    result = k * LN2_HI - ((hfsq - (s * (hfsq + r) + k * LN2_LO)) - f)
    if normal:
        return result
    special = where(x.eq(0.0), -math.inf, where(x.eq(math.inf), math.inf, math.nan, like=x), like=x)
    return where(ok, result, special)


def exp(x: Ex) -> Ex:
    """e**x, fdlibm's e_exp.c: within 1 ulp (0.82 measured), subnormal results rounded once;
    inf above 709.78, 0 below -745.13, exp(-inf) = 0, NaN for NaN, as NumPy's.

    x = k ln2 + r, |r| <= ln2 / 2 (k ln2 in two parts, the high one exact), exp(r) by a
    rational form of fdlibm's polynomial, then 2**k by `scale`."""
    xs = where(x > EXP_MAX, EXP_MAX, where(x < EXP_MIN, EXP_MIN, x))
    xs = where(xs.isnan(), 0.0, xs)
    k = floor(xs * INV_LN2 + 0.5)
    hi = xs - k * LN2_HI
    lo = k * LN2_LO
    r = hi - lo
    t = r * r
    c = r - t * _horner(t, EXP_P)
    y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi)
    return where(x.isnan(), x, scale(y, k))


def _nonzero(v: Ex) -> Ex:
    """|v| > 0, false for 0 and NaN (a Select keeps the zero sign of its second branch only)."""
    return abs(v) > 0.0


def log1p(x: Ex, *, small: bool = False) -> Ex:
    """log(1 + x) accurate near 0: log(u) + c / u for u = 1 + x and c its exact rounding error
    (Fast2Sum); within 2 ulps (1.32 measured); -0.0 and tiny x give x, -1 gives -inf, NaN below.
    `small`: the caller knows x is in (-1 + 2**-53, 1) (minus a uniform), special cases left out."""
    u = x + 1.0
    if small:
        return where(_nonzero(u - 1.0), log(u, normal=True) + (x - (u - 1.0)) / u, x)
    c = where(abs(x) < 1.0, x - (u - 1.0), 1.0 - (u - x))
    correction = where(_finite_positive(u), c / u, 0.0)
    return where(_nonzero(u - 1.0), log(u) + correction, x)


def expm1(x: Ex) -> Ex:
    """e**x - 1 accurate near 0: Kahan's (u - 1) (x / log u) for u = exp(x) (the quotient is
    near 1: no overflow); within 2.5 ulps (2.09 measured); x where u rounds to 1 (-0.0 kept),
    -1 where u - 1 rounds to -1, inf where u overflows."""
    u = exp(x)
    um1 = u - 1.0
    result = where(u.eq(math.inf), u, um1 * (x / log(u)))
    result = where(um1.eq(-1.0), um1, result)
    return where(_nonzero(um1), result, x)


def _odd_integer(y: Ex) -> Ex:
    """y is an odd integer (y / 2 is exact, and not an integer)."""
    half = y * 0.5
    return floor(y).eq(y) & floor(half).ne(half)


def power(x: Ex, y: Ex) -> Ex:
    """x**y as C's pow: exp(y log |x|), within 1 + 2 |y log x| ulps (the rounding of y log x,
    magnified by exp, as a rounding of y itself would be: 1 + 0.8 |y log x| measured); pow(x, 0) = pow(1, y) = 1 (NaN too), pow(-1, +-inf)
    = 1, a finite negative x gives NaN unless y is an integer (then the sign of an odd power),
    pow(+-0, y < 0) = inf (-inf for -0 and odd y), 0 and inf as C's for infinite x or y."""
    ax = abs(x)
    magnitude = exp(y * log(ax))
    negative = (x < 0.0) | (x.eq(0.0) & (x.op("Reciprocal") < 0.0))  # -0.0 too
    result = magnitude * where(negative & _odd_integer(y), -1.0, 1.0, like=x)  # a factor: zero signs kept
    result = where((x < 0.0) & (x > -math.inf) & floor(y).ne(y), math.nan, result)
    one = y.eq(0.0) | x.eq(1.0) | (x.eq(-1.0) & abs(y).eq(math.inf))
    return where(one, 1.0, result)


def _sin_kernel(t: Ex, tail: Ex) -> Ex:
    """sin(t + tail) on [0, pi/4], |tail| below t's last bit (fdlibm k_sin.c): below 1 ulp."""
    z = t * t
    v = z * t
    r = _horner(z, SIN_S[1:])
    return t - (((z * (tail * 0.5 - v * r)) - tail) - v * SIN_S[0])


def _cos_kernel(t: Ex, tail: Ex) -> Ex:
    """cos(t + tail) on [0, pi/4] (fdlibm k_cos.c): 1 - q exact for q = t/4 cut to 24 bits (or
    0.28125 above 0.78125), which leaves 1 - t**2/2 a small rounded part."""
    z = t * t
    r = z * _horner(z, COS_C)
    q = where(t > 0.78125, 0.28125, floor(t * 2.0**22) * 2.0**-24)
    q = where(t < 0.3, 0.0, q)
    return (1.0 - q) - ((z * 0.5 - q) - (z * r - t * tail))


def _times_half_pi(g: Ex) -> tuple[Ex, Ex]:
    """g pi / 2 as t + tail (|tail| below t's last bit): Dekker's exact product of g and pi/2's
    double, the product's rounding error in the tail, plus g times the rest of pi / 2."""
    t = g * HALF_PI
    c = g * SPLITTER
    g_hi = c - (c - g)
    g_lo = g - g_hi
    error = ((g_hi * HALF_PI_HI - t) + g_hi * HALF_PI_LO + g_lo * HALF_PI_HI) + g_lo * HALF_PI_LO
    return t, error + g * HALF_PI_REST


def _quarter(f: Ex) -> tuple[Ex, Ex]:
    """(sin, cos) of f pi / 2 for f in [0, 1]: past f = 1/2 as the cofunctions of (1 - f) pi / 2
    (1 - f is exact), so the kernels see [0, pi/4] and a result near 0 keeps its relative accuracy."""
    over = f > 0.5
    t, tail = _times_half_pi(where(over, 1.0 - f, f))
    s, c = _sin_kernel(t, tail), _cos_kernel(t, tail)
    return where(over, c, s), where(over, s, c)


def sincos_pi(t: Ex) -> tuple[Ex, Ex]:
    """(sin(pi t), cos(pi t)) for t in [0, 2) (a uniform's turn 2u): reduced on t itself, exactly
    (quadrant q = floor(2t), f = 2t - q), and f pi / 2 is carried in two parts (`_times_half_pi`):
    within 1 ulp (0.81 measured); exact 0 and +-1 at the quarter turns."""
    t2 = t * 2.0
    q = floor(t2)
    s1, c1 = _quarter(t2 - q)
    odd = q.eq(1.0) | q.eq(3.0)
    s, c = where(odd, c1, s1), where(odd, s1, c1)
    # signs as factors: a Select would lose a -0.0 taken from its first branch on onnxruntime
    s = s * where(q >= 2.0, -1.0, 1.0, like=t)
    c = c * where(q.eq(1.0) | q.eq(2.0), -1.0, 1.0, like=t)
    return s, c


def tan_pi(v: Ex) -> Ex:
    """tan(pi v) for v in (-1/2, 1/2) (the Cauchy's inverse CDF): sin / cos of pi |v| (each from
    `_quarter`, accurate near the pole), signed as v; within 2.5 ulps (2.07 measured)."""
    s, c = _quarter(abs(v) * 2.0)
    return s / c * where(v < 0.0, -1.0, 1.0, like=v)


def acos(x: Ex) -> Ex:
    """arccos on [-1, 1] as the IR's ArcCos decomposes (`elementary/inverse_trig.py`): 2 atan2(sqrt(1 - x),
    sqrt(1 + x)) by Cephes' rational arctangent, only exact ops; within 2.5 ulps (2.13 measured); NaN outside."""
    return arctan2(sqrt(1.0 - x), sqrt(1.0 + x)) * 2.0


__all__ = ["acos", "exp", "expm1", "log", "log1p", "pow2", "power", "scale", "sincos_pi", "tan_pi"]
