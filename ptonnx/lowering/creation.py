"""Creation emitters: Range."""

from __future__ import annotations

from ptonnx.lowering.registry import emits


@emits("Range")
def emit_range(ctx, node, inputs):
    return ctx.emit("Range", inputs)
