"""Basic indexing: Subtensor (slices and integer indices) as Slice then Gather."""

from __future__ import annotations

import numpy as np
from pytensor.tensor.subtensor import Subtensor, indices_from_subtensor

from ptonnx.ir import Value
from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts

INT64 = np.iinfo(np.int64)


def _bound(ctx, var, default_up: int, default_down: int, step: Value) -> Value:
    """A slice bound as a 0-D int64 value; None takes the default for the step's direction."""
    if var is not None:
        return ctx.cast(ctx.value(var), "int64")
    if step.const is not None:
        return ctx.ints(default_up if step.const > 0 else default_down)
    down = ctx.op("Less", step, ctx.ints(0))
    return ctx.op("Where", down, ctx.ints(default_down), ctx.ints(default_up))


def slice_value(ctx, x: Value, slices: list[tuple[int, slice]]) -> Value:
    """`x` sliced by Python slices (of PyTensor scalars or None) on the given axes."""
    if not slices:
        return x
    starts, ends, steps = [], [], []
    for _, s in slices:
        step = ctx.cast(ctx.value(s.step), "int64") if s.step is not None else ctx.ints(1)
        starts.append(_bound(ctx, s.start, 0, INT64.max, step))
        ends.append(_bound(ctx, s.stop, INT64.max, INT64.min, step))
        steps.append(step)
    return ctx.op("Slice", x, ctx.pack(starts), ctx.pack(ends), ctx.pack(steps), axes=tuple(a for a, _ in slices))


def in_bounds(ctx, index: Value, size: Value, axis: int, where, unused: Value | None = None) -> Value:
    """`index` as int64 counted from 0, after checking -size <= index < size (else
    IndexError, as NumPy: onnxruntime would fail with its own message, or, inside
    a flattened index, silently read another element). Where `unused` (0-D bool) is
    true, the index selects nothing and NumPy does not look at its values."""
    index = ctx.cast(index, "int64")
    if index.const is not None and size.const is not None and ((-size.const <= index.const) & (index.const < size.const)).all():
        return ctx.ints(np.where(index.const < 0, index.const + size.const, index.const))
    ok = ctx.op("And", ctx.op("GreaterOrEqual", index, ctx.op("Neg", size)), ctx.op("Less", index, size))
    if unused is not None:
        ok = ctx.op("Or", ok, unused)
    index = check(ctx, index, [ok], f"index out of bounds for axis {axis} of {where}", IndexError)
    return ctx.op("Where", ctx.op("Less", index, ctx.ints(0)), ctx.op("Add", index, size), index)


@lifts(Subtensor)
def lift_subtensor(ctx, node):
    x = ctx.value(node.inputs[0])
    indices = indices_from_subtensor(node.inputs[1:], node.op.idx_list)
    slices = [(axis, s) for axis, s in enumerate(indices) if isinstance(s, slice) and s != slice(None)]
    value = slice_value(ctx, x, slices)
    picks = [(axis, i) for axis, i in enumerate(indices) if not isinstance(i, slice)]
    for axis, i in reversed(picks):
        position = in_bounds(ctx, ctx.value(i), ctx.dim(value, axis), axis, node.inputs[0].name or "x")
        value = ctx.op("Gather", value, position, axis=axis)
    if value is not x and value.name is None:
        value.name = node.outputs[0].name
    return [value]
