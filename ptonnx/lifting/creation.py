"""Creation ops: ARange (NumPy's arange; bounds may be computed), Eye, ExtractDiag (diagonal)."""

from __future__ import annotations

import numpy as np
from pytensor.tensor.basic import ARange, ExtractDiag, Eye

from ptonnx.errors import LiftingError
from ptonnx.ir import Value
from ptonnx.lifting.advanced import index
from ptonnx.lifting.dispatch import lifts


@lifts(ARange)
def lift_arange(ctx, node):
    """Range in the output dtype. NumPy's arange of float bounds into an integer dtype
    steps in floats and casts (`arange(0.5, 2.6, 0.5, dtype=int)`): only constants do that."""
    out = node.outputs[0]
    dtype = out.type.dtype
    bounds = [ctx.value(v) for v in node.inputs]
    if all(b.const is not None for b in bounds):
        return [Value.constant(np.arange(*(b.const.item() for b in bounds), dtype=dtype), out.name)]
    if dtype.startswith(("int", "uint")) and any(b.dtype.startswith("float") for b in bounds):
        raise LiftingError(f"arange with float bounds into {dtype} ({out}): cast the bounds to an integer dtype first")
    return [ctx.op("Range", *(ctx.cast(b, dtype) for b in bounds), name=out.name)]


@lifts(Eye)
def lift_eye(ctx, node):
    """np.eye(n, m, k): 1 where column - row == k."""
    n, m, k = (ctx.cast(ctx.value(v), "int64") for v in node.inputs)
    out = node.outputs[0]
    rows = ctx.op("Unsqueeze", ctx.op("Range", ctx.ints(0), n, ctx.ints(1)), axes=(1,))
    cols = ctx.op("Unsqueeze", ctx.op("Range", ctx.ints(0), m, ctx.ints(1)), axes=(0,))
    on = ctx.op("Equal", ctx.op("Sub", cols, rows), k)
    return [ctx.cast(on, out.type.dtype)]


@lifts(ExtractDiag)
def lift_extract_diag(ctx, node):
    """x.diagonal(offset, axis1, axis2): the two axes indexed by (i, i + offset), the diagonal last."""
    op, (x,) = node.op, node.inputs
    value = ctx.value(x)
    ndim = value.type.ndim
    a1, a2, offset = op.axis1 % ndim, op.axis2 % ndim, int(op.offset)
    n1, n2 = ctx.dim(value, a1), ctx.dim(value, a2)
    first1, first2 = ctx.ints(max(0, -offset)), ctx.ints(max(0, offset))
    length = ctx.op("Max", ctx.op("Min", ctx.op("Sub", n1, first1), ctx.op("Sub", n2, first2)), ctx.ints(0))
    steps = ctx.op("Range", ctx.ints(0), length, ctx.ints(1))
    entries = [slice(None)] * ndim
    entries[a1], entries[a2] = ctx.op("Add", steps, first1), ctx.op("Add", steps, first2)
    picked = index(ctx, value, tuple(entries), x.name or "x")
    low, high = sorted((a1, a2))
    at = low if high == low + 1 else 0  # where indexing put the diagonal (NumPy's placement); diagonal() wants it last
    if at != ndim - 2:
        picked = ctx.op("Transpose", picked, perm=(*[a for a in range(ndim - 1) if a != at], at))
    return [picked]
