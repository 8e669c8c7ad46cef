"""Tensor emitters: Concat, Split (opset 18: sizes as an int64 input), Softmax
(opset 13+: along one axis), MatMul, Reshape (shape as an int64 initializer)."""

from __future__ import annotations

import numpy as np

from ptonnx.lowering.registry import emits


@emits("Concat", "Softmax")
def emit_axis_op(ctx, node, inputs, outputs):
    ctx.emit(node.op, inputs, outputs, axis=node.attrs["axis"])


@emits("Split")
def emit_split(ctx, node, inputs, outputs):
    sizes = ctx.const(np.asarray(node.attrs["split"], dtype=np.int64), "split")
    ctx.emit("Split", [inputs[0], sizes], outputs, axis=node.attrs["axis"])


@emits("MatMul")
def emit_matmul(ctx, node, inputs, outputs):
    ctx.emit("MatMul", inputs, outputs)


@emits("Reshape")
def emit_reshape(ctx, node, inputs, outputs):
    shape = node.attrs["shape"]
    target = ctx.const(np.asarray(shape, dtype=np.int64), "shape")
    # allowzero=1 gives 0 NumPy's meaning (an empty axis), not ONNX's default "copy this axis"
    extra = {"allowzero": 1} if 0 in shape else {}
    ctx.emit("Reshape", [inputs[0], target], outputs, **extra)
