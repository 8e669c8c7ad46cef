"""Indexing emitters: Slice (axes as an int64 input in opset 18), Gather."""

from __future__ import annotations

import numpy as np

from ptonnx.ir.dims import contents
from ptonnx.lowering.iree_forms import constant_scatter
from ptonnx.lowering.registry import emits

INT64_MIN = np.iinfo(np.int64).min


def _may_step_back(node) -> bool:
    steps = contents(node.inputs[3])
    return not (isinstance(steps, tuple) and all(isinstance(k, int) and k > 0 for k in steps))


def _python_bounds(ctx, x, starts, ends, steps, axes):
    """Bounds for negative steps, normalised as Python's `slice.indices` does, then
    written the way onnxruntime reads them: an empty slice as 0:0, "before the
    first element" as INT64_MIN. (onnxruntime 1.32 gives wrong results for
    out-of-range bounds with negative steps: `[0][-2::-1]` gives `[0]`, not `[]`.)"""
    i64 = lambda v: ctx.scalar(v, "int64")  # noqa: E731
    sizes = ctx.emit1("Gather", [ctx.emit1("Shape", [x]), axes], axis=0)
    last = ctx.emit1("Sub", [sizes, i64(1)])

    def clipped(bound):
        wrapped = ctx.emit1("Where", [ctx.emit1("Less", [bound, i64(0)]), ctx.emit1("Add", [bound, sizes]), bound])
        return ctx.emit1("Min", [ctx.emit1("Max", [wrapped, i64(-1)]), last])

    start, end = clipped(starts), clipped(ends)
    empty = ctx.emit1("LessOrEqual", [start, end])
    start = ctx.emit1("Where", [empty, i64(0), start])
    end = ctx.emit1("Where", [ctx.emit1("Less", [end, i64(0)]), i64(INT64_MIN), end])
    end = ctx.emit1("Where", [empty, i64(0), end])
    back = ctx.emit1("Less", [steps, i64(0)])
    return ctx.emit1("Where", [back, start, starts]), ctx.emit1("Where", [back, end, ends])


@emits("Slice")
def emit_slice(ctx, node, inputs):
    """Python slicing (opset 18's Slice clamps like Python for positive steps)."""
    x, starts, ends, steps = inputs
    axes = ctx.const(np.asarray(node.attrs["axes"], dtype=np.int64), "axes")
    if _may_step_back(node):
        starts, ends = _python_bounds(ctx, x, starts, ends, steps, axes)
    return ctx.emit("Slice", [x, starts, ends, axes, steps])


@emits("Gather")
def emit_gather(ctx, node, inputs):
    return ctx.emit("Gather", inputs, axis=node.attrs["axis"])


@emits("NonZero")
def emit_nonzero(ctx, node, inputs):
    return ctx.emit("NonZero", inputs)


@emits("ScatterFlat")
def emit_scatter_flat(ctx, node, inputs):
    """ScatterElements on the flattened tensor (onnxruntime keeps the last of repeated
    writes with reduction none, and accumulates them with add)."""
    x, positions, updates = inputs
    flat = ctx.const(np.asarray([-1], dtype=np.int64), "flat")
    flat_x = ctx.emit1("Reshape", [x, flat])
    flat_pos, flat_upd = (ctx.emit1("Reshape", [v, flat]) for v in (positions, updates))
    reduction = node.attrs["reduction"]
    scattered = constant_scatter(ctx, node, flat_x) if ctx.target == "iree" else None
    if scattered is None:
        scattered = ctx.emit1("ScatterElements", [flat_x, flat_pos, flat_upd], axis=0, reduction=reduction)
    return ctx.emit("Reshape", [scattered, ctx.emit1("Shape", [x])], allowzero=1)
