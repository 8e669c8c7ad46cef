"""CumOp (cumsum, cumprod) and SortOp/ArgSortOp, along a constant axis.

PyTensor's default sort kind is NumPy's quicksort, which leaves the order of
ties unspecified; ptonnx sorts stably (NumPy's `kind="stable"`), so argsort
indices of equal elements may differ from NumPy's quicksort, never the values.
"""

from __future__ import annotations

from pytensor.tensor.extra_ops import CumOp
from pytensor.tensor.sort import ArgSortOp, SortOp
from pytensor.tensor.type_other import NoneTypeT

from ptonnx.errors import LiftingError
from ptonnx.lifting.dispatch import lifts


#: dtypes NumPy's cumsum/cumprod widen (to int64/uint64) while PyTensor's type keeps them
WIDENED_BY_NUMPY = frozenset({"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32"})


@lifts(CumOp)
def lift_cumop(ctx, node):
    (x,), (out,) = node.inputs, node.outputs
    if out.type.dtype in WIDENED_BY_NUMPY:
        raise LiftingError(
            f"{node.op} of {x} ({x.type}): PyTensor types the result {out.type.dtype} but computes it in "
            f"{'uint64' if out.type.dtype.startswith('u') else 'int64'} (NumPy's cumsum widens small integers), "
            "so ptonnx cannot tell which numbers you expect. Cast first: pt.cumsum(x.astype('int64'))."
        )
    value = ctx.cast(ctx.value(x), out.type.dtype)
    axis = node.op.axis
    if axis is None:
        value, axis = ctx.op("Reshape", value, ctx.ints([-1])), 0
    ir_op = {"add": "CumSum", "mul": "CumProd"}[node.op.mode]
    return [ctx.op(ir_op, value, axis=axis % max(x.type.ndim, 1), name=out.name)]


@lifts(SortOp, ArgSortOp)
def lift_sort(ctx, node):
    x, axis = node.inputs
    value, out = ctx.value(x), node.outputs[0]
    axis_value = None if isinstance(axis.type, NoneTypeT) else ctx.value(axis)
    if axis_value is None:
        value, axis = ctx.op("Reshape", value, ctx.ints([-1])), 0
    elif axis_value.const is None:
        raise LiftingError(f"{node.op} ({out}) sorts along an axis computed at run time; give the axis as a constant")
    else:
        axis = int(axis_value.const) % value.type.ndim
    values, indices = ctx.builder.node("Sort", [value], {"axis": axis}).outputs
    result = values if isinstance(node.op, SortOp) else indices
    result.name = result.name or out.name
    return [result]
