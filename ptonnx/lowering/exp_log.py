"""Exp/log family with NumPy's accuracy at the ends of the range.

ONNX has no Log1p or Expm1, its Softplus overflows, and onnxruntime's Sigmoid
and float32 Tanh lose accuracy in their tails (`sigmoid(-20)` gives 0 in
float32). These are composed from Exp, Log and arithmetic in the op's own
dtype, with no intermediate that overflows where the result is finite.
"""

from __future__ import annotations

import numpy as np

from ptonnx.lowering.elementwise import where
from ptonnx.lowering.registry import emits


def _is_pos_inf(ctx, u, dtype):
    """u == +inf (opset 18's IsInf takes no float16)."""
    return ctx.emit1("Equal", [u, ctx.scalar(np.inf, dtype)])


def _nonzero(ctx, v, dtype):
    """|v| > 0: false for 0 and NaN. (Not(Equal) would do, but onnxruntime's optimiser
    turns Where(Not(c), a, b) into Where(c, b, a), and `b`'s zero sign would be lost.)"""
    return ctx.emit1("Greater", [ctx.emit1("Abs", [v]), ctx.scalar(0, dtype)])


def log1p(ctx, x, dtype) -> str:
    """Kahan's log1p: log(u) * (x / (u - 1)) with u = 1 + x; x where u rounds to 1.

    The quotient x / (u - 1) is close to 1, so nothing overflows for huge x
    (`log(u) * x` did: float32 log1p(1e37) was inf); u == inf keeps log(u).
    """
    u = ctx.emit1("Add", [x, ctx.scalar(1, dtype)])
    um1 = ctx.emit1("Sub", [u, ctx.scalar(1, dtype)])
    scaled = ctx.emit1("Mul", [ctx.emit1("Log", [u]), ctx.emit1("Div", [x, um1])])
    not_tiny = _nonzero(ctx, um1, dtype)
    result = where(ctx, _is_pos_inf(ctx, u, dtype), u, scaled, dtype)
    return where(ctx, not_tiny, result, x, dtype)  # x as `b`: log1p(-0.0) is -0.0


@emits("Log1p")
def emit_log1p(ctx, node, inputs):
    return log1p(ctx, inputs[0], node.outputs[0].dtype)


def expm1(ctx, x, dtype) -> str:
    """Kahan's expm1: (u - 1) * (x / log(u)) with u = exp(x); x where u rounds to 1,
    -1 where u - 1 rounds to -1, u where u overflows. The quotient is close to 1
    (`(u - 1) * x` overflowed: float32 expm1(85) was inf)."""
    u = ctx.emit1("Exp", [x])
    um1 = ctx.emit1("Sub", [u, ctx.scalar(1, dtype)])
    scaled = ctx.emit1("Mul", [um1, ctx.emit1("Div", [x, ctx.emit1("Log", [u])])])
    not_one = _nonzero(ctx, um1, dtype)
    minus_one = ctx.emit1("Equal", [um1, ctx.scalar(-1, dtype)])
    result = where(ctx, _is_pos_inf(ctx, u, dtype), u, scaled, dtype)
    result = where(ctx, minus_one, um1, result, dtype)
    return where(ctx, not_one, result, x, dtype)  # x as `b`: expm1(-0.0) is -0.0


@emits("Expm1")
def emit_expm1(ctx, node, inputs):
    return expm1(ctx, inputs[0], node.outputs[0].dtype)


@emits("Softplus")
def emit_softplus(ctx, node, inputs):
    """PyTensor's piecewise softplus (ONNX's Softplus overflows to inf for large inputs)."""
    (x,), dtype = inputs, node.outputs[0].dtype
    e = ctx.emit1("Exp", [x])
    middle = ctx.emit1("Add", [x, ctx.emit1("Exp", [ctx.emit1("Neg", [x])])])
    result = where(ctx, ctx.emit1("Less", [x, ctx.scalar(33.3, dtype)]), middle, x, dtype)
    result = where(ctx, ctx.emit1("Less", [x, ctx.scalar(18, dtype)]), log1p(ctx, e, dtype), result, dtype)
    return where(ctx, ctx.emit1("Less", [x, ctx.scalar(-37, dtype)]), e, result, dtype)


def sigmoid(ctx, x, dtype) -> str:
    """1 / (1 + t) for x >= 0 and t / (1 + t) below, with t = exp(-|x|) <= 1.

    onnxruntime's Sigmoid kernel is only absolutely accurate for negative x
    (float32 sigmoid(-20) is 0, not 2.06e-9), which makes log(sigmoid(x)) -inf;
    this form is within a few ulp everywhere and never overflows.
    """
    t = ctx.emit1("Exp", [ctx.emit1("Neg", [ctx.emit1("Abs", [x])])])
    r = ctx.emit1("Reciprocal", [ctx.emit1("Add", [t, ctx.scalar(1, dtype)])])
    positive = ctx.emit1("GreaterOrEqual", [x, ctx.scalar(0, dtype)])
    return where(ctx, positive, r, ctx.emit1("Mul", [t, r]), dtype)


@emits("Sigmoid")
def emit_sigmoid(ctx, node, inputs):
    return sigmoid(ctx, inputs[0], node.outputs[0].dtype)


#: below this magnitude tanh(x) rounds to x (x**2 / 3 is under half an ulp)
TANH_IDENTITY_BELOW = {"float32": 2.0**-12, "float64": 2.0**-26}
#: from this magnitude on, float64 tanh is 1 - 2 / (exp(2|x|) + 1): under 3 ulp (onnxruntime's is 9 ulp off near 17)
TANH_VIA_EXP_FROM = {"float64": 0.6}


@emits("Tanh")
def emit_tanh(ctx, node, inputs):
    """Tanh, but x itself for tiny |x| (onnxruntime's float32 Tanh is ~100 ulp off near
    the smallest normal numbers) and, in float64, sign(x) (1 - 2 / (exp(2|x|) + 1)) for
    large |x|, where the quotient is small and exp's error shrinks with it."""
    (x,), dtype = inputs, node.outputs[0].dtype
    bound = TANH_IDENTITY_BELOW.get(dtype)
    if bound is None:
        return ctx.emit("Tanh", inputs)
    magnitude = ctx.emit1("Abs", [x])
    result = ctx.emit1("Tanh", [x])
    large = TANH_VIA_EXP_FROM.get(dtype)
    if large is not None:
        e = ctx.emit1("Exp", [ctx.emit1("Add", [magnitude, magnitude])])
        tail = ctx.emit1("Sub", [ctx.scalar(1, dtype), ctx.emit1("Div", [ctx.scalar(2, dtype), ctx.emit1("Add", [e, ctx.scalar(1, dtype)])])])
        signed = where(ctx, ctx.emit1("Less", [x, ctx.scalar(0, dtype)]), ctx.emit1("Neg", [tail]), tail, dtype)
        result = where(ctx, ctx.emit1("GreaterOrEqual", [magnitude, ctx.scalar(large, dtype)]), signed, result, dtype)
    not_tiny = ctx.emit1("GreaterOrEqual", [magnitude, ctx.scalar(bound, dtype)])
    return where(ctx, not_tiny, result, x, dtype)  # x as `b` keeps the sign of a zero


#: 1 / log(2) and 1 / log(10)
INV_LN2, INV_LN10 = 1.4426950408889634, 0.4342944819032518


@emits("Exp2")
def emit_exp2(ctx, node, inputs):
    """2 ** x by Pow: onnxruntime's float64 Pow is within an ulp (exp(x log 2) is not for large x)."""
    return ctx.emit("Pow", [ctx.scalar(2, node.outputs[0].dtype), inputs[0]])


@emits("Log2", "Log10")
def emit_log2_log10(ctx, node, inputs):
    """log(x) / log(base), as one multiplication: within 2 ulp (Log is within 1)."""
    dtype = node.outputs[0].dtype
    factor = INV_LN2 if node.op == "Log2" else INV_LN10
    return ctx.emit("Mul", [ctx.emit1("Log", inputs), ctx.scalar(factor, dtype)])


@emits("Log1mexp")
def emit_log1mexp(ctx, node, inputs):
    """PyTensor's log(1 - exp(x)): log1p(-exp(x)) below log(1/2), log(-expm1(x)) from there
    (each exact where the other cancels); NaN above 0, -inf at 0, -0.0 at -inf."""
    (x,), dtype = inputs, node.outputs[0].dtype
    below = log1p(ctx, ctx.emit1("Neg", [ctx.emit1("Exp", [x])]), dtype)
    above = ctx.emit1("Log", [ctx.emit1("Neg", [expm1(ctx, x, dtype)])])
    return where(ctx, ctx.emit1("GreaterOrEqual", [x, ctx.scalar(np.log(0.5), dtype)]), above, below, dtype)
