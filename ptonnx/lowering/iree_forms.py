"""Target "iree": the forms of ops whose IREE 3.13 kernels depart from ONNX, chosen by the
emitters (`ctx.target == "iree"`); the default form is unchanged.

- Max, Min and Sign of floats drop a NaN on IREE (`max(nan, -inf)` is -inf, `sign(nan)` 0):
  a NaN operand selects NaN (`nan_kept`).
- A scatter of constant positions and updates into data of static size IREE folds wrongly
  (`set_subtensor(x[2], 5.0)` wrote the index's bits, 1e-323, as the value): it is a
  selection from constants (`constant_scatter`).
- A float TopK over sizes known only at run time does not compile (`'memref.alloca' op stack
  allocation size overflows 64 bits`): a float sort there is refused by name (`refuse_float_sort`).
"""

from __future__ import annotations

import math

import numpy as np

from ptonnx.errors import LoweringError

#: the IR ops whose float form IREE computes without NaN
NAN_DROPPING = ("Max", "Min", "Sign")


def nan_kept(ctx, op: str, inputs: list[str]) -> str:
    """`op` on `inputs`, NaN wherever an operand is NaN (the operand itself, or a + b, is NaN there)."""
    value = ctx.emit1(op, inputs)
    if op == "Sign":
        (x,) = inputs
        return ctx.emit1("Where", [ctx.emit1("IsNaN", [x]), x, value])
    a, b = inputs
    nan = ctx.emit1("Or", [ctx.emit1("IsNaN", [a]), ctx.emit1("IsNaN", [b])])
    return ctx.emit1("Where", [nan, ctx.emit1("Add", [a, b]), value])


def constant_scatter(ctx, node, flat_x: str) -> str | None:
    """The scattered flat data as a Where over constants, or None where IREE scatters right
    (positions or updates not constant, data of unknown size). An add keeps the untouched
    elements as they are (-0.0 + 0.0 would be +0.0); repeated positions of an add are refused."""
    x, positions, updates = node.inputs
    if positions.const is None or updates.const is None or not all(isinstance(d, int) for d in x.shape):
        return None
    n, reduction = math.prod(x.shape), node.attrs["reduction"]
    flat = np.ravel(positions.const).astype(np.int64)
    flat = np.where(flat < 0, flat + n, flat)
    values = np.broadcast_to(updates.const, positions.const.shape).ravel()
    if reduction not in ("none", "add") or (reduction == "add" and len(np.unique(flat)) != len(flat)):
        raise LoweringError(f"a scatter ({reduction}) of constants into static data, which IREE computes wrongly and "
                            "ptonnx cannot rewrite")
    mask, full = np.zeros(n, bool), np.zeros(n, x.dtype)
    mask[flat] = True
    full[flat] = values  # reduction none: the last write of a position wins, as onnxruntime's
    mask_name, full_name = ctx.const(mask, "scatter_mask"), ctx.const(full, "scatter_values")
    if reduction == "none":
        return ctx.emit1("Where", [mask_name, full_name, flat_x])
    return ctx.emit1("Where", [mask_name, ctx.emit1("Add", [flat_x, full_name]), flat_x])


def refuse_float_sort(node) -> None:
    """Refuse a float sort whose sizes are known only at run time."""
    if not all(isinstance(d, int) for d in node.inputs[0].shape):
        raise LoweringError(f"{node.op} of {node.inputs[0].type}: the model sorts floats at sizes known only at run time "
                            "(TopK: sort, argsort), which iree-compile 3.13 cannot compile ('memref.alloca' op stack "
                            "allocation size overflows 64 bits): use runtime='onnxruntime', or give the sorted value a "
                            "static shape")
