"""Index arithmetic and reshapes of PyTensor's newer ops: Nonzero, UnravelIndex,
RavelMultiIndex, JoinDims and SplitDims, each composed of IR ops.

Index bounds are checked as NumPy checks them (ValueError), so a bad index never
becomes a wrong number; sizes are int64 values, so dims computed at run time work.
"""

from __future__ import annotations

from pytensor.tensor.basic import Nonzero
from pytensor.tensor.extra_ops import RavelMultiIndex, UnravelIndex
from pytensor.tensor.reshape import JoinDims, SplitDims

from ptonnx.ir import Value
from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts


@lifts(Nonzero)
def lift_nonzero(ctx, node):
    """One int64 vector per axis: the rows of the IR's NonZero (NaN is nonzero, as `bool()` says)."""
    rows = ctx.op("NonZero", ctx.cast(ctx.value(node.inputs[0]), "bool"))
    return [ctx.op("Gather", rows, ctx.ints(k), axis=0, name=o.name) for k, o in enumerate(node.outputs)]


def _sizes(ctx, dims_var, count: int) -> list[Value]:
    """The `count` entries of a dims vector, as int64 scalars (constants where known)."""
    dims = ctx.cast(ctx.value(dims_var), "int64")
    return [ctx.ints(dims.const[k]) if dims.const is not None else ctx.op("Gather", dims, ctx.ints(k), axis=0) for k in range(count)]


def _strides(ctx, sizes: list[Value], order: str) -> list[Value]:
    """The step of each axis in a flat index: C order, the last axis moves fastest."""
    k = len(sizes)
    if order == "C":
        return [ctx.product(sizes[i + 1 :]) for i in range(k)]
    return [ctx.product(sizes[:i]) for i in range(k)]


@lifts(UnravelIndex)
def lift_unravel_index(ctx, node):
    indices, dims_var = node.inputs
    sizes = _sizes(ctx, dims_var, len(node.outputs))
    flat = ctx.cast(ctx.value(indices), "int64")
    total = ctx.product(sizes)
    inside = ctx.op("And", ctx.op("GreaterOrEqual", flat, ctx.ints(0)), ctx.op("Less", flat, total))
    ok = ctx.op("ReduceAll", inside, axes=tuple(range(flat.type.ndim))) if flat.type.ndim else inside
    flat = check(ctx, flat, [ok], "UnravelIndex: an index is out of bounds for an array of size prod(dims)", ValueError)
    outs = []
    for size, stride, var in zip(sizes, _strides(ctx, sizes, node.op.order), node.outputs, strict=True):
        value = ctx.op("Mod", ctx.op("IntDiv", flat, stride), size)
        outs.append(ctx.cast(value, var.type.dtype))
    return outs


@lifts(RavelMultiIndex)
def lift_ravel_multi_index(ctx, node):
    *indices, dims_var = node.inputs
    sizes = _sizes(ctx, dims_var, len(indices))
    mode = node.op.mode
    terms = []
    for k, (index, size, stride) in enumerate(zip(indices, sizes, _strides(ctx, sizes, node.op.order), strict=True)):
        i = ctx.cast(ctx.value(index), "int64")
        if mode == "wrap":
            i = ctx.op("Mod", i, size)  # Python's modulo: the sign of the size, as NumPy wraps
        elif mode == "clip":
            i = ctx.op("Min", ctx.op("Max", i, ctx.ints(0)), ctx.op("Sub", size, ctx.ints(1)))
        else:
            inside = ctx.op("And", ctx.op("GreaterOrEqual", i, ctx.ints(0)), ctx.op("Less", i, size))
            ok = ctx.op("ReduceAll", inside, axes=tuple(range(i.type.ndim))) if i.type.ndim else inside
            i = check(ctx, i, [ok], f"RavelMultiIndex: invalid entry in coordinates array (axis {k})", ValueError)
        terms.append(ctx.op("Mul", i, stride))
    total = terms[0]
    for t in terms[1:]:
        total = ctx.op("Add", total, t)
    return [ctx.cast(total, node.outputs[0].type.dtype)]


@lifts(JoinDims)
def lift_join_dims(ctx, node):
    """Axes start..start+n joined into one of their product's size (1 for none). PyTensor
    reshapes with -1 there, which NumPy refuses where the other axes hold no element: so do we."""
    x = ctx.value(node.inputs[0])
    start, n = node.op.start_axis, node.op.n_axes
    joined = ctx.product([ctx.dim(x, a) for a in range(start, start + n)])
    others = ctx.product([ctx.dim(x, a) for a in range(x.type.ndim) if not start <= a < start + n])
    if others.const is None or others.const == 0:
        joined = check(ctx, joined, [ctx.op("NotEqual", others, ctx.ints(0))],
                       f"JoinDims: cannot reshape array of size 0 with -1 at axis {start}", ValueError)
    shape = ctx.op("Concat", ctx.shape_of(x, 0, start), ctx.pack([joined]), ctx.shape_of(x, start + n), axis=0)
    return [ctx.op("Reshape", x, shape, name=node.outputs[0].name)]


@lifts(SplitDims)
def lift_split_dims(ctx, node):
    """Axis `axis` split into the given sizes (checked to multiply to its size, as NumPy's reshape checks)."""
    x_var, shape_var = node.inputs
    x, axis = ctx.value(x_var), node.op.axis
    sizes = ctx.cast(ctx.value(shape_var), "int64")
    parts = ctx.product(_sizes(ctx, shape_var, node.outputs[0].type.ndim - x.type.ndim + 1))
    same = ctx.op("Equal", parts, ctx.dim(x, axis))
    sizes = check(ctx, sizes, [same], f"SplitDims: cannot reshape axis {axis} of {x_var} into the given sizes", ValueError)
    shape = ctx.op("Concat", ctx.shape_of(x, 0, axis), sizes, ctx.shape_of(x, axis + 1), axis=0)
    return [ctx.op("Reshape", x, shape, name=node.outputs[0].name)]
