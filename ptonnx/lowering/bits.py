"""Bit-op emitters: the IR's shifts are ONNX's BitShift (unsigned integers only, as both define them)."""

from __future__ import annotations

from ptonnx.lowering.registry import emits

#: IR shift -> BitShift's direction
DIRECTIONS = {"ShiftLeft": "LEFT", "ShiftRight": "RIGHT"}


@emits(*DIRECTIONS)
def emit_shift(ctx, node, inputs):
    return ctx.emit("BitShift", inputs, direction=DIRECTIONS[node.op])
