"""Lifting of the `ptonnx.nn` Ops: each becomes the IR op of the same meaning."""

from __future__ import annotations

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
    inputs = [ctx.value(v) for v in node.inputs]  # x, w and the bias, if there is one
    attrs = dict(strides=op.strides, pads=op.pads, dilations=op.dilations, group=op.group)
    return [ctx.op("Conv", *inputs, name=_name(node), **attrs)]


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
