"""Lifting of the `ptonnx.nn` Ops: each becomes the IR op of the same meaning."""

from __future__ import annotations

import numpy as np

from ptonnx.errors import LiftingError
from ptonnx.ir import Value
from ptonnx.lifting.dispatch import lifts
from ptonnx.nn import BatchNorm, Conv2D, GlobalPool2D, Pool2D, Resize, SiLU

#: ptonnx.nn pooling mode -> IR op
POOL_OPS = {"max": "MaxPool", "avg": "AveragePool"}
GLOBAL_POOL_OPS = {"max": "GlobalMaxPool", "avg": "GlobalAveragePool"}


def _name(node):
    return node.outputs[0].name


@lifts(Conv2D)
def lift_conv2d(ctx, node):
    op = node.op
    x, w = (ctx.value(v) for v in node.inputs[:2])
    if len(node.inputs) == 3:
        b = ctx.value(node.inputs[2])
    else:
        channels = w.shape[0]
        if not isinstance(channels, int):
            raise LiftingError(
                f"conv2d without bias at {node.outputs[0]}: the weight {w} has no static output-channel count, "
                "so ptonnx cannot make the zero bias the IR's Conv takes; give the weight a static shape or pass a bias"
            )
        b = Value.constant(np.zeros(channels, dtype=x.dtype), "zero_bias")
    attrs = dict(strides=op.strides, pads=op.pads, dilations=op.dilations, group=op.group)
    return [ctx.op("Conv", x, w, b, name=_name(node), **attrs)]


@lifts(BatchNorm)
def lift_batch_norm(ctx, node):
    inputs = [ctx.value(v) for v in node.inputs]
    return [ctx.op("BatchNorm", *inputs, name=_name(node), epsilon=node.op.epsilon)]


@lifts(Pool2D)
def lift_pool2d(ctx, node):
    op = node.op
    attrs = dict(kernel_shape=op.kernel, strides=op.strides, pads=op.pads, ceil_mode=int(op.ceil_mode))
    if op.mode == "avg":
        attrs["count_include_pad"] = int(op.count_include_pad)
    return [ctx.op(POOL_OPS[op.mode], ctx.value(node.inputs[0]), name=_name(node), **attrs)]


@lifts(GlobalPool2D)
def lift_global_pool2d(ctx, node):
    return [ctx.op(GLOBAL_POOL_OPS[node.op.mode], ctx.value(node.inputs[0]), name=_name(node))]


@lifts(Resize)
def lift_resize(ctx, node):
    op = node.op
    return [
        ctx.op(
            "Resize",
            ctx.value(node.inputs[0]),
            name=_name(node),
            axes=op.axes,
            scales=op.scales,
            sizes=op.sizes,
            mode=op.mode,
            coordinate_transformation_mode=op.coordinate_transformation_mode,
        )
    ]


@lifts(SiLU)
def lift_silu(ctx, node):
    return [ctx.op("SiLU", ctx.value(node.inputs[0]), name=_name(node))]
