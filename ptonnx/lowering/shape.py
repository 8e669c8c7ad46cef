"""Layout emitters. Opset 18 takes axes, shapes and split sizes as int64 inputs."""

from __future__ import annotations

import numpy as np

from ptonnx.lowering.registry import emits


@emits("Transpose")
def emit_transpose(ctx, node, inputs):
    """A transpose that moves only size-1 axes moves no data: a Squeeze and an Unsqueeze
    (onnxruntime's transpose optimiser leaves those where they are; it would push a
    Transpose back through the elementwise ops the layout pass transposed)."""
    perm, shape = node.attrs["perm"], node.inputs[0].shape
    moved = [a for a in perm if shape[a] != 1]
    if moved != sorted(moved):
        return ctx.emit("Transpose", inputs, perm=list(perm))
    unit_in = [a for a, d in enumerate(shape) if d == 1]
    if not unit_in:
        return inputs[:1]
    squeezed = ctx.emit1("Squeeze", [inputs[0], ctx.const(np.asarray(unit_in, dtype=np.int64), "axes")])
    unit_out = [i for i, a in enumerate(perm) if shape[a] == 1]
    return ctx.emit("Unsqueeze", [squeezed, ctx.const(np.asarray(unit_out, dtype=np.int64), "axes")])


@emits("Unsqueeze", "Squeeze")
def emit_axes_op(ctx, node, inputs):
    if not node.attrs["axes"]:  # ONNX reads empty axes as "every size-1 axis"
        return inputs[0]
    axes = ctx.const(np.asarray(node.attrs["axes"], dtype=np.int64), "axes")
    return ctx.emit(node.op, [inputs[0], axes])


@emits("Reshape")
def emit_reshape(ctx, node, inputs):
    # allowzero=1 gives 0 NumPy's meaning (an empty axis), not ONNX's default "copy this axis"
    return ctx.emit("Reshape", inputs, allowzero=1)


@emits("Expand")
def emit_expand(ctx, node, inputs):
    return ctx.emit("Expand", inputs)


@emits("Shape")
def emit_shape(ctx, node, inputs):
    start, end = node.attrs["start"], node.attrs["end"]
    return ctx.emit("Shape", inputs, **({"start": start} if start else {}), **({} if end is None else {"end": end}))


@emits("Concat")
def emit_concat(ctx, node, inputs):
    return ctx.emit("Concat", inputs, axis=node.attrs["axis"])


@emits("Split")
def emit_split(ctx, node, inputs):
    if len(node.outputs) == 1:
        return inputs[:1]
    return ctx.emit("Split", inputs, len(node.outputs), axis=node.attrs["axis"])
