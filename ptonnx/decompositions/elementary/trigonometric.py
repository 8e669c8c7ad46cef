"""Sin, Cos and Tan in float64 with NumPy's relative accuracy near their zeros.

onnxruntime's float64 Sin/Cos (1.32, CPU) are only absolutely accurate for
1 <= |x| < 100: `sin(pi)` gives -0.0, not 1.22e-16, and values near the other
zeros are up to ~1e5 ulp off (`onnxruntime_kernels.KERNEL_QUIRKS`). Reducing the
argument first (Cody and Waite: x - k*pi with pi split in three parts, each product
exact) leaves onnxruntime's Sin (the IR's `SinKernel`) an argument in [-pi/2, pi/2] (give or
take 7e-4, `REDUCED_REACH`), where it is accurate: sin(x) = (-1)**k sin(x - k*pi) and
cos(x) = (-1)**(k+1) sin(x - (k + 1/2)*pi). Tan is Cephes' rational tan(r) of
r = x - k*pi/2 (onnxruntime has no float64 Tan). From |x| = 2**20 on the reduction's
products are no longer exact: there onnxruntime's Sin and Cos (`SinKernel`,
`CosKernel`) get x itself, which they reduce exactly.

float32 Sin and Cos are onnxruntime's kernels as they are (within 1 ulp; float16 through
float32): the decomposition is written for every float dtype (`any_float`) and below
float64 is the kernel op. Tan of float16 and float32 is computed in float64 and rounded once.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, cos_kernel, floor, fmod, polyval, polyval1, round_even, sin_kernel, where
from ptonnx.decompositions.registry import decomposes, unary

#: pi and pi/2, each as three float64 parts; the first two have 30 significant bits,
#: so k * part is exact for |k| < 2**23. pi's parts are its truncations, all positive: x - k*part
#: for k = +0.0 subtracts +0.0 at every step, which keeps the -0.0 of sin(-0.0)
PI = (3.141592651605606, 1.9841871583270443e-09, 1.034036596358821e-18)
HALF_PI = (1.5707963276654482, -8.705515692000731e-10, -3.50343439808993e-19)
#: beyond this |x| the reduction's products are no longer exact; onnxruntime reduces itself
REDUCE_BELOW = 2.0**20
#: the largest |reduced argument| onnxruntime's Sin is given below REDUCE_BELOW: pi/2, plus pi times
#: how far x / PI[0] (which picks k) strays from x / pi there (2.1e-4 turns): 1.57146
REDUCED_REACH = math.pi / 2 + math.pi * REDUCE_BELOW * (1 / PI[0] - 1 / math.pi)
#: below this |x|, sin(x) and tan(x) round to x (and keep the sign of a zero)
SIN_IS_X_BELOW = 2.0**-26
#: Cephes tan.c: tan(r) = r + r**3 P(r**2) / Q(r**2) for |r| <= pi/4 (Q's leading 1 implied)
TAN_P = (-1.30936939181383777646e4, 1.15351664838587416140e6, -1.79565251976484877988e7)
TAN_Q = (1.36812963470692954678e4, -1.32089234440210967447e6, 2.50083801823357915839e7, -5.38695755929454629881e7)


def _reduced(x: Ex, multiple: Ex, parts) -> Ex:
    """x - multiple * (parts[0] + parts[1] + parts[2]), each product exact."""
    r = x
    for part in parts:
        r = r - multiple * part
    return r


def _sign_of_parity(k: Ex, odd_sign: float) -> Ex:
    """`odd_sign` where the integer-valued float k is odd, -odd_sign where it is even: with
    h = k / 2, h - floor(h) is 1/2 or 0 (exact below 2**52). No FMod: onnxruntime's float64 fmod
    costs ~7 ns an element, a Floor 1.2 (`benchmarks/results/elementwise_budget.md`)."""
    half = k * 0.5
    return (half - floor(half)) * (4.0 * odd_sign) + (-odd_sign)


def sin(x: Ex) -> Ex:
    """sin(x), float64, with one Sin kernel: beyond 2**20 the multiple k is 0 (a mask, not a
    Select: onnxruntime's float64 Where costs ~6 ns an element), so x itself reaches the kernel,
    which reduces it; a NaN or infinite x makes k NaN, and sin(x) is NaN. `+ 0.0` makes k = -0.0
    a +0.0 (lowered as ONNX's Sum, which onnxruntime's optimiser keeps), so x - k*pi (pi's parts
    all positive) keeps the -0.0 of sin(-0.0); below 2**-26 k is 0 and onnxruntime's Sin gives x
    itself (checked by the accuracy tests at subnormals and ±0)."""
    turns = x * (1 / PI[0]) + 0.0
    reducible = (abs(x) < REDUCE_BELOW).cast(x.dtype)
    k = round_even(turns) * reducible
    return _sign_of_parity(k, -1.0) * sin_kernel(_reduced(x, k, PI))  # (-1)**k sin(r)


def cos(x: Ex) -> Ex:
    """cos(x), float64: (-1)**(k+1) sin(x - (2k + 1) pi/2), k = floor(x / pi); beyond 2**20
    onnxruntime's Cos of x itself (x - (2k + 1) pi/2 is no longer exact there), and NaN for
    NaN and ±inf. cos is never zero at a float, so the Select loses no zero sign."""
    k = floor(x * (1 / PI[0]))
    m = (k + k) + 1.0  # 2k + 1
    reduced = _sign_of_parity(k, 1.0) * sin_kernel(_reduced(x, m, HALF_PI))  # (-1)**(k+1) sin(r)
    return where(abs(x) < REDUCE_BELOW, reduced, cos_kernel(x))


def tan(x: Ex) -> Ex:
    """r = x - k pi/2, reduced in three exact parts (|r| <= pi/4), then Cephes' rational
    tan(r), or -1 / tan(r) for odd k (onnxruntime has no float64 Tan, and sin(r) / cos(r)
    from its Sin and Cos is 5 ulp off). Beyond 2**20 the products are inexact: onnxruntime's
    Sin(x) / Cos(x), which reduce exactly. Below 2**-26 x itself, the Select's second branch,
    so a zero keeps its sign; NaN and ±inf give NaN."""
    k = round_even(x * (2 / PI[0]))
    r = _reduced(x, k, HALF_PI)
    z = r * r
    t = r + r * (z * polyval(z, TAN_P) / polyval1(z, TAN_Q))
    odd = abs(fmod(k, 2.0)).eq(1.0)
    reduced = where(odd, -1.0 / t, t)
    plain = sin_kernel(x) / cos_kernel(x)
    result = where(abs(x) < REDUCE_BELOW, reduced, plain)
    return where(abs(x) >= SIN_IS_X_BELOW, result, x)


def _float64_or_kernel(reduced, kernel):
    """A decomposition computed in the node's own float dtype (`any_float`): `reduced` in float64,
    onnxruntime's kernel as it is below (float32; float16 is computed in float32)."""

    def decomposition(node, inputs):
        (x,) = inputs
        return reduced(x) if x.dtype == "float64" else kernel(x)

    decomposition.__doc__ = reduced.__doc__
    decomposition.__qualname__ = reduced.__qualname__
    return decomposition


decomposes("Sin", any_float=True)(_float64_or_kernel(sin, sin_kernel))
decomposes("Cos", any_float=True)(_float64_or_kernel(cos, cos_kernel))


decomposes("Tan")(unary(tan))  # float16 and float32 computed in float64, rounded once
