"""pytensor.tensor.extra_ops: Repeat, FillDiagonal(Offset), SearchsortedOp, Unique,
composed from IR ops (ONNX has no searchsorted; its Unique splits NaNs).

- Repeat with computed repeats: the source index of each output position is the
  number of running totals of `repeats` at or below it (a ScatterFlat of ones at
  the totals, then a CumSum); negative repeats are NumPy's ValueError.
- SearchsortedOp: per value, how many sorted elements sort before it (side left)
  or not after it (right), in NumPy's order, where NaN is the largest.
- Unique (axis None): a stable Sort, the first of each run of equal values (NaNs
  are equal, as NumPy's unique), and from it the index, inverse and counts.
"""

from __future__ import annotations

import numpy as np
from pytensor.tensor.extra_ops import (
    FillDiagonal,
    FillDiagonalOffset,
    Repeat,
    SearchsortedOp,
    Unique,
)

from ptonnx.errors import LiftingError
from ptonnx.ir import Value
from ptonnx.lifting.advanced import write
from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts


def _arange(ctx, n: Value) -> Value:
    return ctx.op("Range", ctx.ints(0), n, ctx.ints(1))


@lifts(Repeat)
def lift_repeat(ctx, node):
    (x, reps), out = node.inputs, node.outputs[0]
    value = ctx.value(x)
    axis = node.op.axis
    if axis is None:
        value, axis = ctx.op("Reshape", value, ctx.ints([-1])), 0
    n = ctx.dim(value, axis)
    counts = ctx.cast(ctx.value(reps), "int64")
    if counts.type.ndim == 0:
        counts = ctx.op("Expand", counts, ctx.pack([n]))
    else:  # NumPy: one count per element along the axis, or its broadcasting ValueError
        counts = check(ctx, counts, [ctx.op("Equal", ctx.dim(counts, 0), n)],
                       "repeat: operands could not be broadcast together (one count per element along the axis)", ValueError)
    counts = check(ctx, counts, [ctx.op("ReduceAll", ctx.op("GreaterOrEqual", counts, ctx.ints(0)), axes=(0,))],
                   "repeat: negative dimensions are not allowed", ValueError)
    totals = ctx.op("CumSum", counts, axis=0)
    total = ctx.op("ReduceSum", counts, axes=(0,))
    marks = ctx.op("Expand", ctx.ints(0), ctx.pack([ctx.op("Add", total, ctx.ints(1))]))
    ones = ctx.op("Expand", ctx.ints(1), ctx.shape_of(totals))
    marks = ctx.op("ScatterFlat", marks, totals, ones, reduction="add")
    source = ctx.op("CumSum", ctx.op("Slice", marks, ctx.ints([0]), ctx.pack([total]), ctx.ints([1]), axes=(0,)), axis=0)
    return [ctx.op("Gather", value, source, axis=axis, name=out.name)]


def _fill(ctx, node, rows: Value, cols: Value):
    a, val = node.inputs[:2]
    return write(ctx, node, a, val, (rows, cols), set_instead_of_inc=True)


@lifts(FillDiagonal)
def lift_fill_diagonal(ctx, node):
    """a[i, i, ...] = val for i < the smallest dim (PyTensor's rule also for tall matrices);
    an array of 3 or more dims must have them all equal (NumPy's fill_diagonal raises)."""
    a = ctx.value(node.inputs[0])
    size = ctx.dim(a, 0)
    for axis in range(1, a.type.ndim):
        size = ctx.op("Min", size, ctx.dim(a, axis))
    if a.type.ndim > 2:
        equal = [ctx.op("Equal", ctx.dim(a, 0), ctx.dim(a, axis)) for axis in range(1, a.type.ndim)]
        size = check(ctx, size, equal, f"{FILL_DIAGONAL_DIMS} (fill_diagonal of {node.inputs[0]}, of {a.type.ndim} dims)", ValueError)
    steps = _arange(ctx, size)
    return write(ctx, node, node.inputs[0], node.inputs[1], (steps,) * a.type.ndim, set_instead_of_inc=True)


#: what NumPy's fill_diagonal (PyTensor's perform) raises for an array of unequal dims
FILL_DIAGONAL_DIMS = "All dimensions of input must be of equal length"


@lifts(FillDiagonalOffset)
def lift_fill_diagonal_offset(ctx, node):
    """a[i, i + offset] = val (offset >= 0) or a[i - offset, i]; never wrapped."""
    a = ctx.value(node.inputs[0])
    offset = ctx.cast(ctx.value(node.inputs[2]), "int64")
    height, width = ctx.dim(a, 0), ctx.dim(a, 1)
    up = ctx.op("GreaterOrEqual", offset, ctx.ints(0))
    short = ctx.op("Min", height, width)
    count = ctx.op("Where", up, ctx.op("Min", short, ctx.op("Sub", width, offset)),
                   ctx.op("Min", short, ctx.op("Add", height, offset)))
    steps = _arange(ctx, ctx.op("Max", count, ctx.ints(0)))
    rows = ctx.op("Add", steps, ctx.op("Max", ctx.op("Neg", offset), ctx.ints(0)))
    cols = ctx.op("Add", steps, ctx.op("Max", offset, ctx.ints(0)))
    return _fill(ctx, node, rows, cols)


def _before(ctx, a: Value, b: Value, strict: bool) -> Value:
    """a sorts before b (strict) or not after it, in NumPy's order (NaN largest)."""
    if not a.dtype.startswith("float"):
        return ctx.op("Less" if strict else "LessOrEqual", a, b)
    if not strict:
        return ctx.op("Not", _before(ctx, b, a, True))
    return ctx.op("Or", ctx.op("Less", a, b), ctx.op("And", ctx.op("IsNaN", b), ctx.op("Not", ctx.op("IsNaN", a))))


@lifts(SearchsortedOp)
def lift_searchsorted(ctx, node):
    a, v, *sorter = node.inputs
    out = node.outputs[0]
    sorted_a = ctx.value(a)
    if sorter:
        sorted_a = ctx.op("Gather", sorted_a, ctx.cast(ctx.value(sorter[0]), "int64"), axis=0)
    values = ctx.value(v)
    dtype = np.promote_types(sorted_a.dtype, values.dtype).name  # NumPy's searchsorted compares in it
    sorted_a, values = ctx.cast(sorted_a, dtype), ctx.cast(values, dtype)
    grid = ctx.op("Unsqueeze", values, axes=(values.type.ndim,))  # (..., 1) against (n,)
    before = _before(ctx, sorted_a, grid, strict=node.op.side == "left")
    counted = ctx.op("ReduceSum", ctx.cast(before, "int64"), axes=(values.type.ndim,))
    return [ctx.cast(counted, out.type.dtype)]


@lifts(Unique)
def lift_unique(ctx, node):
    op = node.op
    if op.axis is not None:
        raise LiftingError(f"unique along an axis ({node.outputs[0]}) is not supported; use axis=None")
    flat = ctx.op("Reshape", ctx.value(node.inputs[0]), ctx.ints([-1]))
    values, order = ctx.builder.node("Sort", [flat], {"axis": 0}).outputs
    n = ctx.dim(flat, 0)
    head, tail = (ctx.op("Slice", values, ctx.ints([s]), ctx.ints([e]), ctx.ints([1]), axes=(0,))
                  for s, e in ((1, np.iinfo(np.int64).max), (0, -1)))
    new = ctx.op("NotEqual", head, tail)
    if values.dtype.startswith("float"):
        new = ctx.op("And", new, ctx.op("Not", ctx.op("And", ctx.op("IsNaN", head), ctx.op("IsNaN", tail))))
    first = ctx.op("Less", ctx.op("Range", ctx.ints(0), ctx.op("Min", n, ctx.ints(1)), ctx.ints(1)), ctx.ints(1))
    starts_mask = ctx.op("Concat", first, new, axis=0)
    starts = ctx.op("Gather", ctx.op("NonZero", starts_mask), ctx.ints(0), axis=0)
    results = [ctx.op("Gather", values, starts, axis=0)]
    if op.return_index:
        results.append(ctx.op("Gather", order, starts, axis=0))
    if op.return_inverse:
        group = ctx.op("Sub", ctx.op("CumSum", ctx.cast(starts_mask, "int64"), axis=0), ctx.ints(1))
        inverse = ctx.op("ScatterFlat", ctx.op("Expand", ctx.ints(0), ctx.pack([n])), order, group)
        target = node.outputs[len(results)]
        if target.type.ndim != 1:
            inverse = ctx.op("Reshape", inverse, ctx.shape_of(ctx.value(node.inputs[0])))
        results.append(inverse)
    if op.return_counts:
        ends = ctx.op("Concat", ctx.op("Slice", starts, ctx.ints([1]), ctx.ints([np.iinfo(np.int64).max]), ctx.ints([1]),
                                       axes=(0,)), ctx.pack([n]), axis=0)
        results.append(ctx.op("Sub", ends, starts))
    return [ctx.cast(r, o.type.dtype) for r, o in zip(results, node.outputs, strict=True)]
