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


def log1p(ctx, x, dtype, outputs=1) -> str:
    """Kahan's log1p: log(u) * (x / (u - 1)) with u = 1 + x; x where u rounds to 1.

    The quotient x / (u - 1) is close to 1, so nothing overflows for huge x
    (`log(u) * x` did: float32 log1p(1e37) was inf); u == inf keeps log(u).
    """
    u = ctx.emit1("Add", [x, ctx.scalar(1, dtype)])
    um1 = ctx.emit1("Sub", [u, ctx.scalar(1, dtype)])
    scaled = ctx.emit1("Mul", [ctx.emit1("Log", [u]), ctx.emit1("Div", [x, um1])])
    tiny = ctx.emit1("Equal", [u, ctx.scalar(1, dtype)])
    result = where(ctx, _is_pos_inf(ctx, u, dtype), u, scaled, dtype)
    return where(ctx, tiny, x, result, dtype, outputs)


@emits("Log1p")
def emit_log1p(ctx, node, inputs, outputs):
    log1p(ctx, inputs[0], node.outputs[0].dtype, outputs)


@emits("Expm1")
def emit_expm1(ctx, node, inputs, outputs):
    """Kahan's expm1: (u - 1) * (x / log(u)) with u = exp(x); x where u rounds to 1,
    -1 where u - 1 rounds to -1, u where u overflows. The quotient is close to 1
    (`(u - 1) * x` overflowed: float32 expm1(85) was inf)."""
    (x,), dtype = inputs, node.outputs[0].dtype
    u = ctx.emit1("Exp", [x])
    um1 = ctx.emit1("Sub", [u, ctx.scalar(1, dtype)])
    scaled = ctx.emit1("Mul", [um1, ctx.emit1("Div", [x, ctx.emit1("Log", [u])])])
    one = ctx.emit1("Equal", [u, ctx.scalar(1, dtype)])
    minus_one = ctx.emit1("Equal", [um1, ctx.scalar(-1, dtype)])
    result = where(ctx, _is_pos_inf(ctx, u, dtype), u, scaled, dtype)
    result = where(ctx, minus_one, um1, result, dtype)
    where(ctx, one, x, result, dtype, outputs)


@emits("Softplus")
def emit_softplus(ctx, node, inputs, outputs):
    """PyTensor's piecewise softplus (ONNX's Softplus overflows to inf for large inputs)."""
    (x,), dtype = inputs, node.outputs[0].dtype
    e = ctx.emit1("Exp", [x])
    middle = ctx.emit1("Add", [x, ctx.emit1("Exp", [ctx.emit1("Neg", [x])])])
    result = where(ctx, ctx.emit1("Less", [x, ctx.scalar(33.3, dtype)]), middle, x, dtype)
    result = where(ctx, ctx.emit1("Less", [x, ctx.scalar(18, dtype)]), log1p(ctx, e, dtype), result, dtype)
    where(ctx, ctx.emit1("Less", [x, ctx.scalar(-37, dtype)]), e, result, dtype, outputs)


@emits("Sigmoid")
def emit_sigmoid(ctx, node, inputs, outputs):
    """1 / (1 + t) for x >= 0 and t / (1 + t) below, with t = exp(-|x|) <= 1.

    onnxruntime's Sigmoid kernel is only absolutely accurate for negative x
    (float32 sigmoid(-20) is 0, not 2.06e-9), which makes log(sigmoid(x)) -inf;
    this form is within a few ulp everywhere and never overflows.
    """
    (x,), dtype = inputs, node.outputs[0].dtype
    t = ctx.emit1("Exp", [ctx.emit1("Neg", [ctx.emit1("Abs", [x])])])
    r = ctx.emit1("Reciprocal", [ctx.emit1("Add", [t, ctx.scalar(1, dtype)])])
    positive = ctx.emit1("GreaterOrEqual", [x, ctx.scalar(0, dtype)])
    where(ctx, positive, r, ctx.emit1("Mul", [t, r]), dtype, outputs)


#: below this magnitude tanh(x) rounds to x (x**2 / 3 is under half an ulp)
TANH_IDENTITY_BELOW = {"float32": 2.0**-12, "float64": 2.0**-26}


@emits("Tanh")
def emit_tanh(ctx, node, inputs, outputs):
    """Tanh, but x itself for tiny |x|: onnxruntime's float32 Tanh is ~100 ulp off
    near the smallest normal numbers (tanh(2.3e-38) is not 2.3e-38)."""
    (x,), dtype = inputs, node.outputs[0].dtype
    bound = TANH_IDENTITY_BELOW.get(dtype)
    if bound is None:
        ctx.emit("Tanh", inputs, outputs)
        return
    tiny = ctx.emit1("Less", [ctx.emit1("Abs", [x]), ctx.scalar(bound, dtype)])
    where(ctx, tiny, x, ctx.emit1("Tanh", [x]), dtype, outputs)
