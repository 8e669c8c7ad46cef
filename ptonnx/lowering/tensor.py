"""Tensor emitters: Softmax (opset 13+: along one axis), MatMul."""

from __future__ import annotations

import numpy as np

from ptonnx.lowering.registry import emits


@emits("Softmax")
def emit_softmax(ctx, node, inputs):
    return ctx.emit(node.op, inputs, axis=node.attrs["axis"])


@emits("MatMul")
def emit_matmul(ctx, node, inputs):
    """ONNX MatMul never gets a 1-D operand: a vector becomes a one-column (or one-row)
    matrix and the axis is squeezed away after. onnxruntime's extended optimiser
    (1.32) fuses `MatMul(Transpose(A), x)` with a 1-D `x` into a FusedMatMul that
    computes wrong numbers; with 2-D operands the fusion is right."""
    x, y = node.inputs
    if x.type.ndim >= 2 and y.type.ndim >= 2:
        return ctx.emit("MatMul", inputs)
    a, b = inputs
    squeeze = []
    if x.type.ndim == 1:
        a = ctx.emit1("Unsqueeze", [a, ctx.const(np.asarray([0], dtype=np.int64), "axes")])
        squeeze.append(-2)
    if y.type.ndim == 1:
        b = ctx.emit1("Unsqueeze", [b, ctx.const(np.asarray([-1], dtype=np.int64), "axes")])
        squeeze.append(-1)
    product = ctx.emit1("MatMul", [a, b])
    return ctx.emit("Squeeze", [product, ctx.const(np.asarray(squeeze, dtype=np.int64), "axes")])
