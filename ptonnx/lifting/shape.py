"""Shape ops: DimShuffle (Squeeze -> Transpose -> Unsqueeze), Shape, Shape_i, Alloc, AllocEmpty."""

from __future__ import annotations

import numpy as np
from pytensor.tensor.basic import Alloc, AllocEmpty
from pytensor.tensor.elemwise import DimShuffle
from pytensor.tensor.shape import Shape, Shape_i

from ptonnx.ir import Value
from ptonnx.ir.dims import contents
from ptonnx.lifting.checks import check

from ptonnx.lifting.dispatch import lifts


@lifts(DimShuffle)
def lift_dimshuffle(ctx, node):
    op = node.op
    source = value = ctx.value(node.inputs[0])
    name = node.outputs[0].name
    if op.drop:
        value = ctx.op("Squeeze", value, axes=tuple(sorted(op.drop)))
    kept = [i for i in range(op.input_ndim) if i not in op.drop]
    perm = tuple(kept.index(s) for s in op.shuffle)
    if perm != tuple(range(len(perm))):
        value = ctx.op("Transpose", value, perm=perm)
    if op.augment:
        value = ctx.op("Unsqueeze", value, axes=tuple(sorted(op.augment)))
    if value is not source and value.name is None:
        value.name = name
    return [value]


@lifts(Shape)
def lift_shape(ctx, node):
    return [ctx.shape_of(ctx.value(node.inputs[0]))]


@lifts(Shape_i)
def lift_shape_i(ctx, node):
    return [ctx.dim(ctx.value(node.inputs[0]), node.op.i)]


@lifts(Alloc)
def lift_alloc(ctx, node):
    """`alloc(value, *shape)`: value broadcast to the shape (sizes may be computed).

    ONNX's Expand broadcasts both ways; Alloc broadcasts only `value`, and only its
    dims of static size 1. Every other dim of `value` is checked to equal its size."""
    value, *sizes = node.inputs
    out = node.outputs[0]
    filled = ctx.cast(ctx.value(value), out.type.dtype)
    wanted = [ctx.cast(ctx.value(s), "int64") for s in sizes]
    offset = len(wanted) - filled.type.ndim
    conds = []
    for axis, have in enumerate(filled.shape):
        want = wanted[offset + axis]
        if have == 1 or (have is not None and have == contents(want)):
            continue
        conds.append(ctx.op("Equal", ctx.dim(filled, axis), want))
    shape = check(ctx, ctx.pack(wanted), conds, f"Alloc of {value}: {Alloc._runtime_broadcast_error_msg}", ValueError)
    return [ctx.op("Expand", filled, _nonnegative(ctx, shape), name=out.name)]


def _nonnegative(ctx, shape: Value) -> Value:
    """`shape`, checked to hold no negative size (NumPy's ValueError where one does)."""
    if shape.const is not None:
        return shape
    ok = ctx.op("ReduceAll", ctx.op("GreaterOrEqual", shape, ctx.ints(0)), axes=(0,))
    return check(ctx, shape, [ok], "negative dimensions are not allowed", ValueError)


@lifts(AllocEmpty)
def lift_alloc_empty(ctx, node):
    """Uninitialised memory in PyTensor; zeros here (any contents are PyTensor's numbers)."""
    out = node.outputs[0]
    zero = Value.constant(np.zeros((), dtype=out.type.dtype))
    return [ctx.op("Expand", zero, _nonnegative(ctx, ctx.vector(node.inputs)), name=out.name)]
