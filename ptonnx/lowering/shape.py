"""Layout emitters; opset 18 takes Unsqueeze/Squeeze axes as an int64 input."""

from __future__ import annotations

import numpy as np

from ptonnx.lowering.registry import emits


@emits("Transpose")
def emit_transpose(ctx, node, inputs, outputs):
    ctx.emit("Transpose", inputs, outputs, perm=list(node.attrs["perm"]))


@emits("Unsqueeze", "Squeeze")
def emit_axes_op(ctx, node, inputs, outputs):
    if not node.attrs["axes"]:  # ONNX reads empty axes as "every size-1 axis"
        ctx.emit("Identity", inputs[:1], outputs)
        return
    axes = ctx.const(np.asarray(node.attrs["axes"], dtype=np.int64), "axes")
    ctx.emit(node.op, [inputs[0], axes], outputs)
