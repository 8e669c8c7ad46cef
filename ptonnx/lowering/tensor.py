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
    """ONNX MatMul never gets a 1-D operand: a vector becomes a one-column (or one-row)
    matrix and the axis is squeezed away after. onnxruntime's extended optimiser
    (1.32) fuses `MatMul(Transpose(A), x)` with a 1-D `x` into a FusedMatMul that
    computes wrong numbers; with 2-D operands the fusion is right."""
    x, y = node.inputs
    if x.type.ndim >= 2 and y.type.ndim >= 2:
        ctx.emit("MatMul", inputs, outputs)
        return
    a, b = inputs
    squeeze = []
    if x.type.ndim == 1:
        a = ctx.emit1("Unsqueeze", [a, ctx.const(np.asarray([0], dtype=np.int64), "axes")])
        squeeze.append(-2)
    if y.type.ndim == 1:
        b = ctx.emit1("Unsqueeze", [b, ctx.const(np.asarray([-1], dtype=np.int64), "axes")])
        squeeze.append(-1)
    product = ctx.emit1("MatMul", [a, b])
    ctx.emit("Squeeze", [product, ctx.const(np.asarray(squeeze, dtype=np.int64), "axes")], outputs)


@emits("Reshape")
def emit_reshape(ctx, node, inputs, outputs):
    shape = node.attrs["shape"]
    target = ctx.const(np.asarray(shape, dtype=np.int64), "shape")
    # allowzero=1 gives 0 NumPy's meaning (an empty axis), not ONNX's default "copy this axis"
    extra = {"allowzero": 1} if 0 in shape else {}
    ctx.emit("Reshape", [inputs[0], target], outputs, **extra)
