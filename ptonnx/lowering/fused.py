"""FusedConv: one ONNX Conv (BatchNorm already in its weights) and, for SiLU, Sigmoid + Mul.

Opset 18 has no SiLU/Swish operator; only standard-domain ops are emitted.
"""

from __future__ import annotations

from ptonnx.lowering.nn import conv_attributes
from ptonnx.lowering.registry import emits


@emits("FusedConv")
def emit_fused_conv(ctx, node, inputs):
    attributes = conv_attributes(node)
    activation = attributes.pop("activation")
    if activation == "none":
        return ctx.emit("Conv", inputs, **attributes)
    y = ctx.emit1("Conv", inputs, hint="conv", **attributes)
    return ctx.emit("Mul", [y, ctx.emit1("Sigmoid", [y])])
