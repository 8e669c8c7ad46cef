"""Values known to be empty or all zeros before anything runs, emitted as such for IREE.

IREE 3.13's compiler crashes (SIGFPE, in its dispatch annotation) on a dispatch over a
tensor with a static size of 0. ptonnx's linear algebra meets such tensors at its first
block (a Cholesky's `L[:, :0] @ L[:0, :]`), so for IREE (`ctx.target == "iree"`):

- a node whose outputs all have static shapes, each with a 0, is a constant of that shape;
- a matrix product over an inner size of 0 is zeros of its output's shape (a constant where
  static; else Expand of a zero to the broadcast batch sizes and the rows and columns).

No value is read, so nothing a check would guard is skipped (Check, Loop and If are kept).
"""

from __future__ import annotations

import numpy as np

from ptonnx.ir import get_schema
from ptonnx.ir.core import bodies



def known_zeros(ctx, node, inputs) -> list[str] | None:
    """The output names of `node` as zeros known without running it, or None."""
    if get_schema(node.op).has("effect") or bodies(node):  # it runs: a check may fail, a body may hold one
        return None
    static = all(all(isinstance(d, int) for d in v.shape) for v in node.outputs)
    empty = static and all(0 in v.shape for v in node.outputs)
    empty_product = node.op == "MatMul" and node.inputs[0].shape[-1:] == (0,)
    if empty or (empty_product and static):
        return [ctx.const(np.zeros(v.shape, v.dtype), v.name or "zeros") for v in node.outputs]
    if empty_product and min(len(v.shape) for v in node.inputs) >= 2:
        return [_expanded_zeros(ctx, node, inputs)]
    return None


def _expanded_zeros(ctx, node, inputs) -> str:
    """Zeros of (broadcast batch sizes, rows of a, columns of b)."""
    (a, b), (ta, tb), out = inputs, node.inputs, node.outputs[0]
    batch = len(out.shape) - 2
    sizes = []
    for axis in range(batch):
        da, db = _dim(ctx, a, ta, axis - batch - 2), _dim(ctx, b, tb, axis - batch - 2)
        if da is None or db is None:
            sizes.append(da or db)
            continue
        one = ctx.emit1("Equal", [da, ctx.ints([1])])
        sizes.append(ctx.emit1("Where", [one, db, da]))
    sizes += [_dim(ctx, a, ta, -2), _dim(ctx, b, tb, -1)]
    return ctx.emit1("Expand", [ctx.scalar(0, out.dtype), ctx.emit1("Concat", sizes, axis=0)])


def _dim(ctx, name: str, value, axis: int) -> str | None:
    """Size `axis` (from the end) of `name` as a 1-vector; None where its rank has no such axis."""
    k = len(value.shape) + axis
    if k < 0:
        return None
    d = value.shape[k]
    return ctx.ints([d]) if isinstance(d, int) else ctx.emit1("Shape", [name], start=k, end=k + 1)
