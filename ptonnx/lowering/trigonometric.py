"""Sin, Cos and Tan in float64 with NumPy's relative accuracy near their zeros.

onnxruntime's float64 Sin/Cos (1.32, CPU) are only absolutely accurate for
1 <= |x| < 100: `sin(pi)` gives -0.0, not 1.22e-16, and values near the other
zeros are up to ~1e5 ulp off. Reducing the argument first (Cody and Waite:
x - k*pi with pi split in three parts, each product exact) leaves onnxruntime
an argument in [-pi/2, pi/2], where its Sin is accurate:
sin(x) = (-1)**k sin(x - k*pi) and cos(x) = (-1)**(k+1) sin(x - (k + 1/2)*pi).
"""

from __future__ import annotations

from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.elementwise import emit_direct, plus_zero, where
from ptonnx.lowering.expr import Ex, polyval, polyval1, raw_cos, raw_sin, round_even
from ptonnx.lowering.expr import where as select
from ptonnx.lowering.registry import emits

#: pi and pi/2, each as three float64 parts; the first two have 30 significant bits,
#: so k * part is exact for |k| < 2**23. pi's parts are its truncations, all positive: x - k*part
#: for k = +0.0 subtracts +0.0 at every step, which keeps the -0.0 of sin(-0.0)
PI = (3.141592651605606, 1.9841871583270443e-09, 1.034036596358821e-18)
HALF_PI = (1.5707963276654482, -8.705515692000731e-10, -3.50343439808993e-19)
#: beyond this |x| the reduction's products are no longer exact; onnxruntime reduces itself
REDUCE_BELOW = 2.0**20
#: below this |x|, sin(x) and tan(x) round to x (and keep the sign of a zero)
SIN_IS_X_BELOW = 2.0**-26


def _reduced(ctx, x, multiple, parts, dtype):
    """x - multiple * (parts[0] + parts[1] + parts[2]), each product exact."""
    r = x
    for part in parts:
        r = ctx.emit1("Sub", [r, ctx.emit1("Mul", [multiple, ctx.scalar(part, dtype)])])
    return r


def _sign_of_parity(ctx, k, dtype, odd_sign):
    """`odd_sign` where the integer-valued float k is odd, -odd_sign where it is even: with
    h = k / 2, h - floor(h) is 1/2 or 0 (exact below 2**52). No Mod: onnxruntime's float64 fmod
    costs ~7 ns an element, a Floor 1.2 (`benchmarks/results/elementwise_budget.md`)."""
    half = ctx.emit1("Mul", [k, ctx.scalar(0.5, dtype)])
    odd_half = ctx.emit1("Sub", [half, ctx.emit1("Floor", [half])])
    return ctx.emit1("Add", [ctx.emit1("Mul", [odd_half, ctx.scalar(4.0 * odd_sign, dtype)]), ctx.scalar(-odd_sign, dtype)])


def _sin(ctx, x, dtype):
    """sin(x) with one Sin kernel: beyond 2**20 the multiple k is 0 (a mask, not a Where:
    onnxruntime's float64 Where costs ~6 ns an element), so x itself reaches the kernel, which
    reduces it; a NaN or infinite x makes k NaN, and sin(x) is NaN. `plus_zero` makes k = -0.0 a
    +0.0, so x - k*pi (pi's parts all positive) keeps the -0.0 of sin(-0.0); below 2**-26 k is 0 and onnxruntime's Sin
    gives x itself (checked by the accuracy tests at subnormals and ±0)."""
    turns = plus_zero(ctx, ctx.emit1("Mul", [x, ctx.scalar(1 / PI[0], dtype)]), dtype)
    reducible = ctx.emit1("Cast", [ctx.emit1("Less", [ctx.emit1("Abs", [x]), ctx.scalar(REDUCE_BELOW, dtype)])],
                          to=onnx_dtype(dtype))
    k = ctx.emit1("Mul", [ctx.emit1("Round", [turns]), reducible])
    r = _reduced(ctx, x, k, PI, dtype)
    return ctx.emit1("Mul", [_sign_of_parity(ctx, k, dtype, -1.0), ctx.emit1("Sin", [r])])  # (-1)**k sin(r)


def sin_cos(ctx, x: str, op: str, dtype: str) -> str:
    """float64 sin (op "Sin") or cos ("Cos") of x, reduced first (Cody-Waite)."""
    if op == "Sin":
        return _sin(ctx, x, dtype)
    turns = ctx.emit1("Mul", [x, ctx.scalar(1 / PI[0], dtype)])
    k = ctx.emit1("Floor", [turns])
    m = ctx.emit1("Add", [ctx.emit1("Add", [k, k]), ctx.scalar(1, dtype)])  # 2k + 1
    r = _reduced(ctx, x, m, HALF_PI, dtype)
    reduced = ctx.emit1("Mul", [_sign_of_parity(ctx, k, dtype, 1.0), ctx.emit1("Sin", [r])])  # (-1)**(k+1) sin(r)
    # beyond 2**20 onnxruntime's Cos reduces x itself (x - (2k + 1) pi/2 is no longer exact there)
    near = ctx.emit1("Less", [ctx.emit1("Abs", [x]), ctx.scalar(REDUCE_BELOW, dtype)])
    return where(ctx, near, reduced, ctx.emit1("Cos", [x]), dtype)


@emits("Sin", "Cos")
def emit_sin_cos(ctx, node, inputs):
    (x,), dtype = inputs, node.outputs[0].dtype
    if dtype != "float64":
        return emit_direct(ctx, node, inputs)
    return sin_cos(ctx, x, node.op, dtype)


#: Cephes tan.c: tan(r) = r + r**3 P(r**2) / Q(r**2) for |r| <= pi/4 (Q's leading 1 implied)
TAN_P = (-1.30936939181383777646e4, 1.15351664838587416140e6, -1.79565251976484877988e7)
TAN_Q = (1.36812963470692954678e4, -1.32089234440210967447e6, 2.50083801823357915839e7, -5.38695755929454629881e7)


@emits("Tan")
def emit_tan(ctx, node, inputs):
    """r = x - k pi/2, reduced in three exact parts (|r| <= pi/4), then Cephes' rational
    tan(r), or -1 / tan(r) for odd k (onnxruntime has no float64 Tan, and sin(r) / cos(r)
    from its Sin and Cos is 5 ulp off). Beyond 2**20 the products are inexact: onnxruntime's
    Sin(x) / Cos(x), which reduce exactly."""
    dtype = node.outputs[0].dtype
    x = Ex(ctx, inputs[0], dtype)
    k = round_even(x * (2 / PI[0]))
    r = Ex(ctx, _reduced(ctx, x.name, k.name, HALF_PI, dtype), dtype)
    z = r * r
    t = r + r * (z * polyval(z, TAN_P) / polyval1(z, TAN_Q))
    odd = abs(k.op("Mod", 2.0, fmod=1)).eq(1.0)
    reduced = select(odd, -1.0 / t, t)
    plain = raw_sin(x) / raw_cos(x)
    result = select(abs(x) < REDUCE_BELOW, reduced, plain)
    return select(abs(x) >= SIN_IS_X_BELOW, result, x).name  # tan(x) = x below 2**-26, and keeps a zero's sign
