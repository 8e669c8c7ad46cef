"""Reductions: CAReduce (Sum, Prod, Max, Min, All, Any, ProdWithoutZeros) and Argmax.

PyTensor reduces in `acc_dtype` and returns `dtype`: both become Casts around
the IR reduction. Max, Min and Argmax of an empty slice raise ValueError in
PyTensor (NumPy has no identity for them): a `Check` says so at run time.
"""

from __future__ import annotations

import numpy as np
import pytensor.scalar.basic as ps
from pytensor.tensor.elemwise import CAReduce
from pytensor.tensor.math import Argmax, ProdWithoutZeros

from ptonnx.errors import UnsupportedOpError
from ptonnx.ir import Value
from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts

#: scalar op of a CAReduce -> IR reduction
REDUCTIONS = {
    ps.Add: "ReduceSum", ps.Mul: "ReduceProd", ps.ScalarMaximum: "ReduceMax", ps.ScalarMinimum: "ReduceMin",
    ps.AND: "ReduceAll", ps.OR: "ReduceAny",
}
#: NumPy's error for a reduction without identity over an empty slice
NO_IDENTITY = {"ReduceMax": "maximum", "ReduceMin": "minimum"}


def _axes(op, ndim: int) -> tuple[int, ...]:
    axis = op.axis
    return tuple(range(ndim)) if axis is None else tuple(sorted(a % ndim for a in axis))


def not_empty(ctx, value: Value, axes, message: str) -> Value:
    """`value`, checked to have a non-zero size on every axis of `axes`."""
    conds = [ctx.op("Greater", ctx.dim(value, a), ctx.ints(0)) for a in axes
             if not (isinstance(value.shape[a], int) and value.shape[a] > 0)]
    return check(ctx, value, conds, message, ValueError)


@lifts(CAReduce)
def lift_careduce(ctx, node):
    op, (x,), (out,) = node.op, node.inputs, node.outputs
    ir_op = "ReduceProd" if isinstance(op, ProdWithoutZeros) else next(
        (ir for cls, ir in REDUCTIONS.items() if isinstance(op.scalar_op, cls)), None)
    if ir_op is None:
        raise UnsupportedOpError(op, out, (c.__name__ for c in REDUCTIONS), family="CAReduce scalar ops")
    axes = _axes(op, x.type.ndim)
    value = ctx.cast(ctx.value(x), getattr(op, "acc_dtype", None) or out.type.dtype)
    if not axes:
        return [ctx.cast(value, out.type.dtype)]
    if ir_op in NO_IDENTITY:
        value = not_empty(ctx, value, axes, f"zero-size array to reduction operation {NO_IDENTITY[ir_op]} which has no identity")
    if isinstance(op, ProdWithoutZeros):
        return [_prod_without_zeros(ctx, value, axes, out)]
    return [ctx.cast(ctx.op(ir_op, value, axes=axes, name=out.name), out.type.dtype)]


def _prod_without_zeros(ctx, value: Value, axes, out) -> Value:
    """The product of the non-zero elements; 0 where there are none (PyTensor's `mul_without_zeros`)."""
    zero, one = (Value.constant(np.asarray(k, dtype=value.dtype)) for k in (0, 1))
    nonzero = ctx.op("NotEqual", value, zero)
    product = ctx.op("ReduceProd", ctx.op("Where", nonzero, value, one), axes=axes)
    result = ctx.op("Where", ctx.op("ReduceAny", nonzero, axes=axes), product, zero, name=out.name)
    return ctx.cast(result, out.type.dtype)


@lifts(Argmax)
def lift_argmax(ctx, node):
    """Argmax over several axes is over their flattening, the kept axes first (as PyTensor's perform)."""
    (x,), (out,) = node.inputs, node.outputs
    value = ctx.value(x)
    axes = _axes(node.op, x.type.ndim)
    if not axes:
        return [ctx.op("Expand", ctx.ints(0), ctx.shape_of(value))]
    value = not_empty(ctx, value, axes, "attempt to get argmax of an empty sequence")
    if len(axes) > 1:
        kept = [i for i in range(x.type.ndim) if i not in axes]
        value = ctx.op("Transpose", value, perm=(*kept, *axes))
        size = ctx.dim(value, len(kept))
        for a in range(len(kept) + 1, x.type.ndim):
            size = ctx.op("Mul", size, ctx.dim(value, a))
        value = ctx.op("Reshape", value, ctx.pack([*(ctx.dim(value, a) for a in range(len(kept))), size]))
        axes = (len(kept),)
    return [ctx.op("ArgMax", value, axis=axes[0], name=out.name)]
