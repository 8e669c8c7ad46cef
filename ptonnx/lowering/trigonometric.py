"""Sin and Cos in float64 with NumPy's relative accuracy near their zeros.

onnxruntime's float64 Sin/Cos (1.32, CPU) are only absolutely accurate for
1 <= |x| < 100: `sin(pi)` gives -0.0, not 1.22e-16, and values near the other
zeros are up to ~1e5 ulp off. Reducing the argument first (Cody and Waite:
x - k*pi with pi split in three parts, each product exact) leaves onnxruntime
an argument in [-pi/2, pi/2], where its Sin is accurate:
sin(x) = (-1)**k sin(x - k*pi) and cos(x) = (-1)**(k+1) sin(x - (k + 1/2)*pi).
"""

from __future__ import annotations

from ptonnx.lowering.elementwise import emit_direct, where
from ptonnx.lowering.registry import emits

#: pi and pi/2, each as three float64 parts; the first two have 30 significant bits,
#: so k * part is exact for |k| < 2**23
PI = (3.1415926553308964, -1.7411031384001463e-09, -7.00686879617986e-19)
HALF_PI = (1.5707963276654482, -8.705515692000731e-10, -3.50343439808993e-19)
#: beyond this |x| the reduction's products are no longer exact; onnxruntime reduces itself
REDUCE_BELOW = 2.0**20
#: below this |x|, sin(x) rounds to x (and keeps the sign of a zero)
SIN_IS_X_BELOW = 2.0**-26


def _reduced(ctx, x, multiple, parts, dtype):
    """x - multiple * (parts[0] + parts[1] + parts[2]), each product exact."""
    r = x
    for part in parts:
        r = ctx.emit1("Sub", [r, ctx.emit1("Mul", [multiple, ctx.scalar(part, dtype)])])
    return r


def _sign_of_parity(ctx, k, dtype, odd_sign):
    """`odd_sign` where the integer-valued float k is odd, -odd_sign where it is even."""
    odd = ctx.emit1("Abs", [ctx.emit1("Mod", [k, ctx.scalar(2, dtype)], fmod=1)])
    return ctx.emit1("Mul", [ctx.emit1("Sub", [ctx.emit1("Add", [odd, odd]), ctx.scalar(1, dtype)]), ctx.scalar(odd_sign, dtype)])


@emits("Sin", "Cos")
def emit_sin_cos(ctx, node, inputs):
    (x,), dtype = inputs, node.outputs[0].dtype
    if dtype != "float64":
        return emit_direct(ctx, node, inputs)
    turns = ctx.emit1("Mul", [x, ctx.scalar(1 / PI[0], dtype)])
    if node.op == "Sin":
        k = ctx.emit1("Round", [turns])
        r = _reduced(ctx, x, k, PI, dtype)
        sign = _sign_of_parity(ctx, k, dtype, -1.0)  # (-1)**k
    else:
        k = ctx.emit1("Floor", [turns])
        m = ctx.emit1("Add", [ctx.emit1("Add", [k, k]), ctx.scalar(1, dtype)])  # 2k + 1
        r = _reduced(ctx, x, m, HALF_PI, dtype)
        sign = _sign_of_parity(ctx, k, dtype, 1.0)  # (-1)**(k+1)
    reduced = ctx.emit1("Mul", [sign, ctx.emit1("Sin", [r])])
    magnitude = ctx.emit1("Abs", [x])
    plain = ctx.emit1(node.op, [x])
    result = where(ctx, ctx.emit1("Less", [magnitude, ctx.scalar(REDUCE_BELOW, dtype)]), reduced, plain, dtype)
    if node.op == "Sin":
        not_tiny = ctx.emit1("GreaterOrEqual", [magnitude, ctx.scalar(SIN_IS_X_BELOW, dtype)])
        result = where(ctx, not_tiny, result, x, dtype)  # x as `b` keeps the sign of a zero
    return result
