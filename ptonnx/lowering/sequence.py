"""Emitters for CumSum, CumProd and Sort.

- CumSum: ONNX CumSum (integers other than int64 computed in int64: see legalise).
- CumProd: ONNX has no CumProd before opset 26. A log-depth scan (Hillis-Steele):
  for k = 1, 2, 4, ...: y[i] *= y[i - k], the first k elements times 1 (Pad).
  Integer products wrap exactly as NumPy's; float products are the same numbers
  rounded in another order (within n·eps of NumPy's sequential order; where
  partial products overflow or underflow the order decides, as it does between
  PyTensor's own backends). ceil(log2 n) steps for a static length, 63 otherwise.
- Sort: TopK over the whole axis, ascending, sorted: stable on ties (ONNX's TopK takes the
  lower index first), which is NumPy's `kind="stable"`. Where NaN goes is left to the runtime
  (onnxruntime's CPU build puts it last, its WebAssembly build and IREE first), so floats sort
  in two stable passes every runtime reads alike: by the value with NaN as +inf, then by
  whether it is NaN (NumPy's order: +inf before NaN, NaNs by index).
"""

from __future__ import annotations

import numpy as np

from ptonnx.lowering.reduction import (
    MAX_LEVELS,
    dims_of,
    ordered_uint64,
    unordered_uint64,
)
from ptonnx.lowering.iree_forms import refuse_float_sort
from ptonnx.lowering.registry import emits


@emits("CumSum")
def emit_cumsum(ctx, node, inputs):
    return ctx.emit("CumSum", [inputs[0], ctx.scalar(node.attrs["axis"], "int64")])


@emits("CumProd")
def emit_cumprod(ctx, node, inputs):
    (x,), t, axis = inputs, node.inputs[0].type, node.attrs["axis"]
    n = t.shape[axis]
    length = dims_of(ctx, t, x, axis, axis + 1)
    onehot = np.zeros(2 * t.ndim, dtype=np.int64)
    onehot[axis] = 1  # pads: (begin of each axis..., end of each axis...)
    one = ctx.scalar(1, node.outputs[0].dtype)
    y, k, steps = x, 1, MAX_LEVELS if not isinstance(n, int) else max(n - 1, 0).bit_length()
    for _ in range(steps):
        shift = ctx.ints([k]) if isinstance(n, int) else ctx.emit1("Min", [ctx.ints([k]), length])
        kept = ctx.emit1("Slice", [y, ctx.ints([0]), ctx.emit1("Sub", [length, shift]), ctx.ints([axis])])
        pads = ctx.emit1("Mul", [ctx.const(onehot, "onehot"), shift])
        y = ctx.emit1("Mul", [y, ctx.emit1("Pad", [kept, pads, one], mode="constant")])
        k *= 2
    return [y]


@emits("Sort")
def emit_sort(ctx, node, inputs):
    (x,), axis, dtype = inputs, node.attrs["axis"], node.inputs[0].dtype
    if dtype == "uint64":
        x = ordered_uint64(ctx, x)
    k = dims_of(ctx, node.inputs[0].type, x, axis, axis + 1)
    if dtype in FLOATS:
        if ctx.target == "iree":
            refuse_float_sort(node)
        return _sort_floats(ctx, x, k, axis, dtype)
    values, indices = ctx.emit("TopK", [x, k], 2, axis=axis, largest=0, sorted=1)
    if dtype == "uint64":
        values = unordered_uint64(ctx, values)
    return [values, indices]



FLOATS = ("float16", "float32", "float64")


def _sort_floats(ctx, x: str, k: str, axis: int, dtype: str) -> list[str]:
    """Sorted values and indices with NaN last on every runtime: no NaN reaches a TopK."""
    nan = ctx.emit1("IsNaN", [x])
    key = ctx.emit1("Where", [nan, ctx.scalar(np.inf, dtype), x])
    _, by_value = ctx.emit("TopK", [key, k], 2, axis=axis, largest=0, sorted=1)
    flags = ctx.emit1("Cast", [ctx.emit1("GatherElements", [nan, by_value], axis=axis)], to=1)  # float32 0/1
    _, by_nan = ctx.emit("TopK", [flags, k], 2, axis=axis, largest=0, sorted=1)
    indices = ctx.emit1("GatherElements", [by_value, by_nan], axis=axis)
    return [ctx.emit1("GatherElements", [x, indices], axis=axis), indices]
