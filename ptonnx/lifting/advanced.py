"""NumPy indexing in full: AdvancedSubtensor(1) (integer arrays, boolean masks, mixed
with slices and newaxis) and every *IncSubtensor (set and increment).

Reading: slices become a Slice, newaxis an Unsqueeze, a boolean mask the rows of
its NonZero, and the integer arrays (checked in bounds: out-of-range indices are
IndexError, as in NumPy, never another element) are merged into one flat index
over their axes for a single Gather. NumPy's placement holds: the broadcast
index dims replace the indexed axes when those are adjacent, else come first.

Writing: the same index applied to `arange(x.size)` shaped as `x` gives the flat
positions of the selected elements; `ScatterFlat` writes there (set: the last of
repeated writes wins; increment: repeats accumulate, as `np.add.at`).
"""

from __future__ import annotations

import pytensor.tensor as pt
from pytensor.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    IncSubtensor,
    indices_from_subtensor,
)
from pytensor.tensor.type_other import NoneTypeT, SliceType

from ptonnx.errors import LiftingError
from ptonnx.ir import Value
from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts
from ptonnx.lifting.subtensor import in_bounds, slice_value


def index_tuple(node, first: int) -> tuple:
    """The index of a *Subtensor node: slices, None (newaxis) and index variables."""
    inputs = node.inputs[first:]
    idx_list = getattr(node.op, "idx_list", None)
    if idx_list is not None:
        return tuple(indices_from_subtensor(inputs, idx_list))
    # pytensor 2.38's Advanced*Subtensor: slices arrive as MakeSlice variables, newaxis as NoneConst
    return tuple(_v238_entry(v) for v in inputs)


def _v238_entry(v):
    if isinstance(v.type, SliceType):
        if v.owner is None:
            s = v.data
            return slice(*(None if b is None else pt.constant(b) for b in (s.start, s.stop, s.step)))
        return slice(*(None if isinstance(b.type, NoneTypeT) else b for b in v.owner.inputs))
    if isinstance(v.type, NoneTypeT):
        return None
    return v


def _size(ctx, value: Value, axes) -> Value:
    """The product of the sizes of `axes` (0-D int64)."""
    total = ctx.ints(1)
    for a in axes:
        total = ctx.op("Mul", total, ctx.dim(value, a))
    return total


def _masks_to_arrays(ctx, x: Value, entries: list, where) -> list:
    """Each boolean mask replaced by one int64 index array per axis it covers (its NonZero rows)."""
    out, axis = [], 0
    for e in entries:
        if e is None or isinstance(e, slice) or e.type.dtype != "bool":
            out.append(e)
            axis += e is not None
            continue
        if e.type.ndim == 0:
            raise LiftingError(f"indexing {where} with a 0-D boolean is not supported; index with a 1-D mask instead")
        mask = ctx.value(e)
        conds = [ctx.op("Equal", ctx.dim(mask, k), ctx.dim(x, axis + k)) for k in range(e.type.ndim)
                 if not (isinstance(mask.shape[k], int) and mask.shape[k] == x.shape[axis + k])]
        mask = check(ctx, mask, conds, f"boolean index did not match the indexed array {where} along axes "
                     f"{axis}..{axis + e.type.ndim - 1}", IndexError)
        rows = ctx.op("NonZero", mask)
        out += [ctx.op("Gather", rows, ctx.ints(k), axis=0) for k in range(e.type.ndim)]
        axis += e.type.ndim
    return out


def index(ctx, x: Value, entries: tuple, where) -> Value:
    """`x[entries]` with NumPy's semantics; entries are slices, None, or index variables/values."""
    entries = _masks_to_arrays(ctx, x, list(entries), where)
    new_axes = tuple(i for i, e in enumerate(entries) if e is None)
    if new_axes:
        x = ctx.op("Unsqueeze", x, axes=new_axes)
        entries = [slice(None) if e is None else e for e in entries]
    x = slice_value(ctx, x, [(a, s) for a, s in enumerate(entries) if isinstance(s, slice) and s != slice(None)])
    arrays = [(a, e if isinstance(e, Value) else ctx.value(e)) for a, e in enumerate(entries) if not isinstance(e, slice)]
    if not arrays:
        return x
    axes = [a for a, _ in arrays]
    unused = None
    if len(arrays) > 1:
        checked, unused = _broadcastable(ctx, [idx for _, idx in arrays], where)
        arrays = [(a, idx) for (a, _), idx in zip(arrays, checked, strict=True)]
    flat = None
    for a, idx in arrays:
        size = ctx.dim(x, a)
        idx = in_bounds(ctx, idx, size, a, where, unused if idx.type.ndim else None)  # NumPy checks a 0-D index always
        flat = idx if flat is None else ctx.op("Add", ctx.op("Mul", flat, size), idx)
    if len(axes) == 1:
        return ctx.op("Gather", x, flat, axis=axes[0])
    adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
    if not adjacent:
        rest = [a for a in range(x.type.ndim) if a not in axes]
        x = ctx.op("Transpose", x, perm=(*axes, *rest))
        axes = list(range(len(axes)))
    start, end = axes[0], axes[-1] + 1
    dims = [ctx.dim(x, a) for a in range(start)] + [_size(ctx, x, axes)] + [ctx.dim(x, a) for a in range(end, x.type.ndim)]
    merged = ctx.op("Reshape", x, ctx.pack(dims))
    return ctx.op("Gather", merged, flat, axis=start)


def _broadcastable(ctx, arrays: list[Value], where) -> tuple[list[Value], Value]:
    """The index arrays, checked to broadcast together (NumPy's IndexError otherwise),
    and a 0-D bool: their broadcast selects nothing (size 0)."""
    ndim = max(a.type.ndim for a in arrays)
    conds, size = [], ctx.ints(1)
    for p in range(1, ndim + 1):
        dims = [(a, a.shape[-p], ctx.dim(a, a.type.ndim - p)) for a in arrays if a.type.ndim >= p]
        static = {d for _, d, _ in dims}
        if all(isinstance(d, int) for d in static) and len(static - {1}) <= 1:
            size = ctx.op("Mul", size, ctx.ints(next(iter(static - {1}), 1)))
            continue
        widest = dims[0][2]  # the broadcast size: the first that is not 1 (0 included)
        for _, _, d in dims[1:]:
            widest = ctx.op("Where", ctx.op("Equal", widest, ctx.ints(1)), d, widest)
        conds += [ctx.op("Or", ctx.op("Equal", d, ctx.ints(1)), ctx.op("Equal", d, widest)) for _, _, d in dims]
        size = ctx.op("Mul", size, widest)
    message = f"shape mismatch: indexing arrays of {where} could not be broadcast together"
    arrays = [check(ctx, arrays[0], conds, message, IndexError), *arrays[1:]]
    return arrays, ctx.op("Equal", size, ctx.ints(0))


def _broadcastable_to(ctx, y: Value, target: Value, where: str) -> Value:
    """y, checked to broadcast to `target`'s shape (NumPy's ValueError otherwise), where
    the static shapes do not already say so."""
    offset = target.type.ndim - y.type.ndim
    conds = []
    for axis in range(y.type.ndim):
        mine, theirs = y.shape[axis], target.shape[axis + offset]
        if mine == 1 or (mine == theirs and mine is not None):
            continue
        size = ctx.dim(y, axis)
        conds.append(ctx.op("Or", ctx.op("Equal", size, ctx.ints(1)), ctx.op("Equal", size, ctx.dim(target, axis + offset))))
    message = f"shape mismatch: value array could not be broadcast to the indexing result of {where}"
    return check(ctx, y, conds, message, ValueError)


def write(ctx, node, x_var, y_var, entries, set_instead_of_inc: bool, accumulate: bool = True):
    """x with x[entries] set to, or incremented by, y (broadcast to the selection)."""
    x = ctx.value(x_var)
    out = node.outputs[0]
    where = x_var.name or "x"
    size = _size(ctx, x, range(x.type.ndim))
    iota = ctx.op("Reshape", ctx.op("Range", ctx.ints(0), size, ctx.ints(1)), ctx.shape_of(x))
    positions = index(ctx, iota, entries, where)
    y = ctx.cast(ctx.value(y_var), x.dtype)
    if not set_instead_of_inc and not accumulate:  # x[idx] += y: a repeated index adds once
        y = ctx.op("Add", index(ctx, x, entries, where), y)
        set_instead_of_inc = True
    y = _broadcastable_to(ctx, y, positions, where)
    updates = ctx.op("Expand", y, ctx.shape_of(positions))
    if updates.type.shape != positions.type.shape:  # y's static sizes where the index's are unknown
        positions = ctx.op("Reshape", positions, ctx.shape_of(updates))
    reduction = "none" if set_instead_of_inc else "add"
    return [ctx.op("ScatterFlat", x, positions, updates, reduction=reduction, name=out.name)]


@lifts(AdvancedSubtensor, AdvancedSubtensor1)
def lift_advanced_subtensor(ctx, node):
    x = node.inputs[0]
    value = index(ctx, ctx.value(x), index_tuple(node, 1), x.name or "x")
    if value.name is None:
        value.name = node.outputs[0].name
    return [value]


@lifts(IncSubtensor, AdvancedIncSubtensor)
def lift_inc_subtensor(ctx, node):
    op = node.op
    accumulate = not getattr(op, "ignore_duplicates", False)
    return write(ctx, node, node.inputs[0], node.inputs[1], index_tuple(node, 2), op.set_instead_of_inc, accumulate)


@lifts(AdvancedIncSubtensor1)
def lift_advanced_inc_subtensor1(ctx, node):
    """x[idx] = y (or += y). PyTensor's AdvancedIncSubtensor1 refuses to broadcast a y dim of
    size 1 at run time that its type does not mark as broadcastable, by its own rule (both
    lines' `_check_runtime_broadcasting`): y's first dim against the number of indices, and
    each of y's dims, from the last, against x's (x's first too); so does the lifted graph."""
    x, y, idx = node.inputs
    y_value, x_value = ctx.value(y), ctx.value(x)

    def ok(axis: int, other: Value) -> Value:  # y's dim `axis` is not 1, or `other` is 1
        return ctx.op("Or", ctx.op("Not", ctx.op("Equal", ctx.dim(y_value, axis), ctx.ints(1))), ctx.op("Equal", other, ctx.ints(1)))

    conds = []
    if y.type.ndim and y.type.shape[0] != 1:
        conds.append(ok(0, ctx.dim(ctx.value(idx), 0)))
    for k in range(min(y.type.ndim, x.type.ndim)):
        if y.type.shape[y.type.ndim - 1 - k] != 1:
            conds.append(ok(y.type.ndim - 1 - k, ctx.dim(x_value, x.type.ndim - 1 - k)))
    if not conds:
        return write(ctx, node, x, y, (idx,), node.op.set_instead_of_inc)
    ctx.values[y] = check(ctx, y_value, conds, RUNTIME_BROADCAST_Y, ValueError)  # for this write only
    try:
        return write(ctx, node, x, y, (idx,), node.op.set_instead_of_inc)
    finally:
        ctx.values[y] = y_value


#: what PyTensor's AdvancedIncSubtensor1 raises for a y it would have to broadcast at run time
RUNTIME_BROADCAST_Y = ("Runtime broadcasting not allowed. AdvancedIncSubtensor1 was asked to broadcast the second input (y) "
                       "along a dimension that was not marked as broadcastable. If broadcasting was intended, use "
                       "`specify_broadcastable` on the relevant dimension(s).")
