"""Reduction emitters, with the fix-ups that give NumPy's numbers in onnxruntime 1.32:

- integer ReduceSum/ReduceProd compute in double there: above 2**53 they lose
  bits and beyond int64 they saturate (NumPy wraps). Integer sums are a MatMul
  with a column of ones (exact, wrapping); integer products a halving tree of
  elementwise Muls. (Other integer dtypes reach here as int64: see legalise.)
- ReduceMax/ReduceMin/ArgMax skip NaN; NumPy propagates it (ArgMax: the first NaN; an ArgMax
  with nan "inf" ranks NaN as +inf, which a Where before a plain ArgMax gives).
- uint64 has no Max/Min/ArgMax kernel: flipping the top bit maps its order onto int64's.
- bool has no ReduceMin/ReduceMax at opset 18: All/Any reduce uint8.
Axes are an int64 input (opset 18); an empty axes list never reaches ONNX, where it
would mean "all axes": a reduction over no axes is its input (an Identity; lifting
already turns PyTensor's into its input, but the IR op's default is axes=()).
"""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto

from ptonnx.ir.types import FLOAT_DTYPES, INT_DTYPES
from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.elementwise import may_be_negative_zero, plus_zero, zero_sign_unread
from ptonnx.lowering.registry import emits

INT64_MIN = np.iinfo(np.int64).min
#: doubling/halving steps that cover any length an int64 can count (2**63)
MAX_LEVELS = 63


def _reduce(ctx, op: str, x: str, axes, keepdims: bool) -> str:
    return ctx.emit1(op, [x, ctx.ints(axes)], keepdims=int(keepdims))


def dims_of(ctx, value_type, name: str, start: int, end: int) -> str:
    """Sizes of axes start:end of a value as an int64 vector (a constant when static)."""
    dims = value_type.shape[start:end]
    if all(isinstance(d, int) for d in dims):
        return ctx.ints(dims)
    return ctx.emit1("Shape", [name], start=start, end=end)


def _rows(ctx, node, x: str):
    """`x` with the reduced axes moved last and merged: (kept..., K); also kept's sizes and K."""
    t = node.inputs[0].type
    axes = node.attrs["axes"]
    kept = [i for i in range(t.ndim) if i not in axes]
    perm = kept + list(axes)
    moved = t.with_shape(tuple(t.shape[i] for i in perm))
    if perm != list(range(t.ndim)):
        x = ctx.emit1("Transpose", [x], perm=perm)
    kept_shape = dims_of(ctx, moved, x, 0, len(kept))
    sizes = [d for i, d in enumerate(t.shape) if i in axes]
    if all(isinstance(d, int) for d in sizes):
        k = ctx.ints([math.prod(sizes)])
    else:
        k = _product(ctx, dims_of(ctx, moved, x, len(kept), t.ndim), len(sizes))
    return x, kept_shape, k, len(kept)


def _product(ctx, dims: str, n: int) -> str:
    """The product of the `n` sizes in `dims`, as a 1-vector: a ReduceProd, or for IREE (which
    cannot compile ReduceProd) n - 1 Muls of its elements."""
    if ctx.target != "iree":
        return ctx.emit1("ReduceProd", [dims], keepdims=1)
    k = ctx.emit1("Slice", [dims, ctx.ints([0]), ctx.ints([1])])
    for i in range(1, n):
        k = ctx.emit1("Mul", [k, ctx.emit1("Slice", [dims, ctx.ints([i]), ctx.ints([i + 1])])])
    return k


def _finish(ctx, node, result: str, kept_shape: str) -> list[str]:
    """(kept..., 1...) -> the node's output shape."""
    out = ctx.emit1("Reshape", [result, kept_shape], allowzero=1)
    if node.attrs["keepdims"]:
        out = ctx.emit1("Unsqueeze", [out, ctx.ints(node.attrs["axes"])])
    return [out]


def _int_sum(ctx, node, x: str) -> list[str]:
    rows, kept_shape, k, _ = _rows(ctx, node, x)
    matrix = ctx.emit1("Reshape", [rows, ctx.emit1("Concat", [kept_shape, ctx.ints([1]), k], axis=0)], allowzero=1)
    ones = ctx.emit1("Expand", [ctx.scalar(1, "int64"), ctx.emit1("Concat", [k, ctx.ints([1])], axis=0)])
    return _finish(ctx, node, ctx.emit1("MatMul", [matrix, ones]), kept_shape)


def _tree_prod(ctx, node, x: str) -> list[str]:
    """Multiply the two halves of the (kept..., K + 1) rows (the extra element a 1) until one is left.
    (Integers everywhere; floats for IREE, which cannot compile ReduceProd: a product in another
    order than onnxruntime's, so within a few ulp of it.)"""
    rows, kept_shape, k, axis = _rows(ctx, node, x)
    rows = ctx.emit1("Reshape", [rows, ctx.emit1("Concat", [kept_shape, k], axis=0)], allowzero=1)
    one = ctx.emit1("Expand", [ctx.scalar(1, node.inputs[0].dtype), ctx.emit1("Concat", [kept_shape, ctx.ints([1])], axis=0)])
    rows = ctx.emit1("Concat", [rows, one], axis=axis)
    length = ctx.emit1("Add", [k, ctx.ints([1])])
    sizes = [d for i, d in enumerate(node.inputs[0].shape) if i in node.attrs["axes"]]
    known = math.prod(sizes) + 1 if all(isinstance(d, int) for d in sizes) else None
    levels = MAX_LEVELS if known is None else max(known - 1, 0).bit_length()
    at = ctx.ints([axis])
    for _ in range(levels):
        half = ctx.emit1("Div", [ctx.emit1("Add", [length, ctx.ints([1])]), ctx.ints([2])])
        low = ctx.emit1("Slice", [rows, ctx.ints([0]), half, at])
        high = ctx.emit1("Slice", [rows, half, length, at])
        high = ctx.emit1("Slice", [ctx.emit1("Concat", [high, one], axis=axis), ctx.ints([0]), half, at])
        rows, length = ctx.emit1("Mul", [low, high]), half
    return _finish(ctx, node, rows, kept_shape)


def _over_no_axes(emit):
    """A reduction over no axes is its input, -0.0 and NaN included."""
    def emitter(ctx, node, inputs):
        if not node.attrs["axes"]:
            return ctx.emit("Identity", list(inputs))
        return emit(ctx, node, inputs)
    emitter.__doc__, emitter.__name__ = emit.__doc__, emit.__name__
    return emitter


@emits("ReduceSum", "ReduceProd")
@_over_no_axes
def emit_sum_prod(ctx, node, inputs):
    (x,) = inputs
    if node.inputs[0].dtype in INT_DTYPES:  # int64 here
        return (_int_sum if node.op == "ReduceSum" else _tree_prod)(ctx, node, x)
    static = all(isinstance(node.inputs[0].shape[a], int) for a in node.attrs["axes"])
    if node.op == "ReduceProd" and ctx.target == "iree" and static:  # iree-compile fails the tree at run-time sizes
        return _tree_prod(ctx, node, x)
    result = _reduce(ctx, node.op, x, node.attrs["axes"], node.attrs["keepdims"])
    if (node.op == "ReduceSum" and node.inputs[0].dtype in FLOAT_DTYPES and may_be_negative_zero(node.inputs[0])
            and not zero_sign_unread(node.outputs[0])):
        # onnxruntime's sum of -0.0s is -0.0, NumPy's +0.0 (it adds them to +0.0): so is ours
        if _read_by_one_add(node.outputs[0]):
            ctx.owed_plus_zero.add(result)  # a + (s + 0) is Sum(a, s, 0): one node (`emit_direct`)
        else:
            result = plus_zero(ctx, result, node.outputs[0].dtype)
    return [result]


def _read_by_one_add(value) -> bool:
    """`value` is read once, by a float Add of its own dtype, and is no graph output."""
    if value.num_uses != 1 or value.is_graph_output:
        return False
    ((user, _),) = value.uses
    return user.op == "Add" and user.outputs[0].dtype == value.dtype


def ordered_uint64(ctx, x: str) -> str:
    """uint64 as int64 in the same order (x XOR 2**63), and back."""
    return ctx.emit1("BitwiseXor", [ctx.emit1("Cast", [x], to=TensorProto.INT64), ctx.scalar(INT64_MIN, "int64")])


def unordered_uint64(ctx, x: str) -> str:
    return ctx.emit1("Cast", [ctx.emit1("BitwiseXor", [x, ctx.scalar(INT64_MIN, "int64")])], to=TensorProto.UINT64)


def _has_nan(ctx, x: str, axes, keepdims: bool) -> tuple[str, str]:
    """(bool: the slice holds a NaN, uint8 NaN mask)."""
    mask = ctx.emit1("Cast", [ctx.emit1("IsNaN", [x])], to=TensorProto.UINT8)
    found = ctx.emit1("ReduceMax", [mask, ctx.ints(axes)], keepdims=int(keepdims))
    return ctx.emit1("Cast", [found], to=TensorProto.BOOL), mask


#: a float max or min over one static axis at most this long is its slices' elementwise Max/Min
FEW = 8


def _few_static(shape, axes) -> bool:
    return len(axes) == 1 and isinstance(shape[axes[0]], int) and 2 <= shape[axes[0]] <= FEW


def _pieces_max_min(ctx, op: str, x: str, axis: int, size: int, keepdims: bool) -> str:
    """max over a short axis as Split, then one variadic Max (Min): onnxruntime's elementwise
    Max propagates NaN and gives NumPy's maximum.reduce to the bit, zero signs included
    (tests/lowering/test_reduction_pieces.py tries every order of NaN, ±0, ±inf), where its
    ReduceMax needs a NaN mask (4 more nodes) and still picks the other zero."""
    pieces = ctx.emit("Split", [x], outputs=size, axis=axis, num_outputs=size)
    result = ctx.emit1(op.removeprefix("Reduce"), pieces)
    return result if keepdims else ctx.emit1("Squeeze", [result, ctx.ints([axis])])


@emits("ReduceMax", "ReduceMin")
@_over_no_axes
def emit_max_min(ctx, node, inputs):
    (x,) = inputs
    dtype, axes, keepdims = node.inputs[0].dtype, node.attrs["axes"], node.attrs["keepdims"]
    if dtype == "uint64":
        return [unordered_uint64(ctx, _reduce(ctx, node.op, ordered_uint64(ctx, x), axes, keepdims))]
    if dtype in FLOAT_DTYPES and ctx.target == "onnxruntime" and _few_static(node.inputs[0].shape, axes):
        return [_pieces_max_min(ctx, node.op, x, axes[0], node.inputs[0].shape[axes[0]], keepdims)]
    result = _reduce(ctx, node.op, x, axes, keepdims)
    if dtype not in FLOAT_DTYPES:
        return [result]
    nan, _ = _has_nan(ctx, x, axes, keepdims)
    return [ctx.emit1("Where", [nan, ctx.scalar(np.nan, dtype), result])]


@emits("ReduceAll", "ReduceAny")
@_over_no_axes
def emit_all_any(ctx, node, inputs):
    """Over uint8: ReduceMin of an empty slice is 255 (all: True), ReduceMax 0 (any: False)."""
    as_uint8 = ctx.emit1("Cast", inputs, to=TensorProto.UINT8)
    op = "ReduceMin" if node.op == "ReduceAll" else "ReduceMax"
    reduced = _reduce(ctx, op, as_uint8, node.attrs["axes"], node.attrs["keepdims"])
    return ctx.emit("Cast", [reduced], to=onnx_dtype("bool"))


@emits("ArgMax")
def emit_argmax(ctx, node, inputs):
    (x,) = inputs
    dtype, axis, keepdims = node.inputs[0].dtype, node.attrs["axis"], node.attrs["keepdims"]
    if dtype == "uint64":
        x = ordered_uint64(ctx, x)
    if dtype in FLOAT_DTYPES and node.attrs["nan"] == "inf":  # NaN as +inf: 2 nodes, not the mask's 6
        x = ctx.emit1("Where", [ctx.emit1("IsNaN", [x]), ctx.scalar(np.inf, dtype), x])
    result = ctx.emit1("ArgMax", [x], axis=axis, keepdims=int(keepdims), select_last_index=0)
    if dtype not in FLOAT_DTYPES or node.attrs["nan"] == "inf":
        return [result]
    nan, mask = _has_nan(ctx, x, (axis,), keepdims)
    first_nan = ctx.emit1("ArgMax", [mask], axis=axis, keepdims=int(keepdims), select_last_index=0)
    return [ctx.emit1("Where", [nan, first_nan, result])]
