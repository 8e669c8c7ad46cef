"""DimShuffle as Squeeze (dropped axes) -> Transpose -> Unsqueeze (new axes)."""

from __future__ import annotations

from pytensor.tensor.elemwise import DimShuffle

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
