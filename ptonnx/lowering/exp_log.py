"""Sigmoid and Tanh with NumPy's accuracy at the ends of the range (the rest of the
exp/log family is decomposed in the IR: `decompositions/elementary/exp_log.py`)."""

from __future__ import annotations

from ptonnx.lowering.elementwise import where
from ptonnx.lowering.registry import emits


def sigmoid(ctx, x, dtype) -> str:
    """1 / (1 + t) for x >= 0 and t / (1 + t) below, with t = exp(-|x|) <= 1.

    onnxruntime's Sigmoid kernel is only absolutely accurate for negative x (float32
    sigmoid(-20) is 0, not 2.06e-9), which makes log(sigmoid(x)) -inf; this form is within
    a few ulp everywhere and never overflows. Still an emitter, not a decomposition: the
    Conv+BatchNorm+SiLU fusion (a pass, after decomposition) matches `x * Sigmoid(x)`;
    `benchmarks/sigmoid_cost.py` measures it inside the fused CNN ops."""
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
