"""FusedConv: one ONNX Conv (BatchNorm already in its weights) and, for SiLU, Sigmoid + Mul.

Opset 18 has no SiLU/Swish operator; only standard-domain ops are emitted.
"""

from __future__ import annotations

from ptonnx.lowering.float64 import check_float64
from ptonnx.lowering.nn import conv_attributes, conv_inputs
from ptonnx.lowering.registry import emits


@emits("FusedConv")
def emit_fused_conv(ctx, node, inputs, outputs):
    check_float64(node)
    attributes = conv_attributes(node)
    activation = attributes.pop("activation")
    inputs = conv_inputs(node, inputs)
    if activation == "none":
        ctx.emit("Conv", inputs, outputs, **attributes)
        return
    y = ctx.emit1("Conv", inputs, hint=f"{outputs[0]}_conv", **attributes)
    ctx.emit("Mul", [y, ctx.emit1("Sigmoid", [y])], outputs)
