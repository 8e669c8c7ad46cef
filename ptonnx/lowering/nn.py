"""CNN emitters: Conv, BatchNormalization, pools, Resize (opset 18), SiLU as Sigmoid + Mul.

Pooling with static spatial sizes never emits `ceil_mode=1`: ONNX's shape
inference applies the plain ceil formula, while PyTorch and onnxruntime drop a
last window that starts in the end padding, and the two sizes would clash in
the checker. The ceil-mode overhang becomes explicit end padding instead
(exact for max pooling and for `count_include_pad=0`; with
`count_include_pad=1` the zero padding is made real with a `Pad` so the
overhang is not counted). Unknown sizes keep `ceil_mode=1`, which onnxruntime
runs with PyTorch's rule. float64 ops onnxruntime cannot run are refused
(see `ptonnx.lowering.float64`). MaxPool and GlobalMaxPool propagate NaN as
NumPy and PyTorch do (onnxruntime's kernels skip it): the pooled NaN mask picks it;
max pooling's padding with static sizes is an explicit -inf Pad (onnxruntime pads
with the lowest finite value, so a window of -inf and padding gave -3.4e38; with
unknown sizes it still does: ceil mode needs the implicit padding).
"""

from __future__ import annotations

import numpy as np

from ptonnx.ir import get_schema
from ptonnx.ir.ops.nn_kernels import pool_out_size
from ptonnx.lowering.registry import emits


def attrs_of(node) -> dict:
    """The node's attributes with the schema's defaults filled in."""
    return get_schema(node.op).resolve_attrs(node.attrs)


def conv_attributes(node) -> dict:
    """ONNX Conv attributes of a Conv-like node (other schema attributes pass through)."""
    a = attrs_of(node)
    for key in ("strides", "pads", "dilations"):
        a[key] = list(a[key])
    kernel = node.inputs[1].shape[2:]
    if all(isinstance(k, int) for k in kernel):
        a["kernel_shape"] = list(kernel)
    return a


@emits("Conv")
def emit_conv(ctx, node, inputs):
    return ctx.emit("Conv", inputs, **conv_attributes(node))  # the bias is optional in both


@emits("BatchNorm")
def emit_batch_norm(ctx, node, inputs):
    return ctx.emit("BatchNormalization", inputs, epsilon=attrs_of(node)["epsilon"])


def _nan_through(ctx, op: str, x: str, dtype: str, pooled: str, **attrs) -> list[str]:
    """onnxruntime's MaxPool and GlobalMaxPool skip NaN (a window's NaN comes out in some positions
    only); NumPy's and PyTorch's max propagates it: the NaN mask pooled alike picks NaN (5 nodes)."""
    zero = ctx.scalar(0, dtype)
    mask = ctx.emit1("Where", [ctx.emit1("IsNaN", [x]), ctx.scalar(1, dtype), zero])  # no Cast: float64 stays
    nan = ctx.emit1("Greater", [ctx.emit1(op, [mask], **attrs), zero])
    return ctx.emit("Where", [nan, ctx.scalar(np.nan, dtype), pooled])


@emits("GlobalAveragePool", "GlobalMaxPool")
def emit_global_pool(ctx, node, inputs):
    (pooled,) = ctx.emit(node.op, inputs)
    if node.op == "GlobalAveragePool":
        return [pooled]
    return _nan_through(ctx, node.op, inputs[0], node.inputs[0].dtype, pooled)


def _overhang(node) -> tuple[int, int] | None:
    """Per-axis ceil-mode overhang past the end padding, or None when a size is unknown."""
    a = attrs_of(node)
    sizes = node.inputs[0].shape[2:]
    if not all(isinstance(s, int) for s in sizes):
        return None
    k, s, p, ceil = a["kernel_shape"], a["strides"], a["pads"], a["ceil_mode"]
    extra = []
    for axis, size in enumerate(sizes):
        out = pool_out_size(size, k[axis], s[axis], p[axis], p[axis + 2], ceil)
        extra.append(max(0, (out - 1) * s[axis] + k[axis] - (size + p[axis] + p[axis + 2])))
    return tuple(extra)


@emits("MaxPool", "AveragePool")
def emit_pool(ctx, node, inputs):
    a = attrs_of(node)
    pads = list(a["pads"])
    attrs = {"kernel_shape": list(a["kernel_shape"]), "strides": list(a["strides"])}
    average = node.op == "AveragePool"
    include_pad = average and a["count_include_pad"]
    extra = _overhang(node)
    x = inputs[0]
    if extra is None:
        attrs["ceil_mode"] = a["ceil_mode"]
    elif include_pad and any(extra) and any(pads):
        # Real zeros for the declared padding; the overhang is padding that does not count.
        x = ctx.emit1("Pad", [x, ctx.const(np.array([0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]], np.int64), "pads")])
        pads, include_pad = [0, 0, extra[0], extra[1]], 0
    else:
        pads = [pads[0], pads[1], pads[2] + extra[0], pads[3] + extra[1]]
        include_pad = include_pad and not any(extra)
    attrs["pads"] = pads
    if average:
        attrs["count_include_pad"] = int(include_pad)
        return ctx.emit(node.op, [x], **attrs)
    if extra is not None and any(pads):  # onnxruntime's implicit padding is the lowest finite value: an all -inf window gave it
        at = [0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]]
        x = ctx.emit1("Pad", [x, ctx.const(np.array(at, np.int64), "pads"), ctx.scalar(-np.inf, node.inputs[0].dtype)])
        attrs["pads"] = [0, 0, 0, 0]
    (pooled,) = ctx.emit(node.op, [x], **attrs)
    return _nan_through(ctx, node.op, x, node.inputs[0].dtype, pooled, **attrs)


@emits("Resize")
def emit_resize(ctx, node, inputs):
    a = attrs_of(node)
    if a["scales"]:
        extra_inputs = ["", ctx.const(np.asarray(a["scales"], dtype=np.float32), "scales")]
    else:
        extra_inputs = ["", "", ctx.const(np.asarray(a["sizes"], dtype=np.int64), "sizes")]
    attrs = {"mode": a["mode"], "coordinate_transformation_mode": a["coordinate_transformation_mode"], "axes": list(a["axes"])}
    if a["mode"] == "nearest":
        attrs["nearest_mode"] = a["nearest_mode"]
    return ctx.emit("Resize", [inputs[0], *extra_inputs], **attrs)


@emits("SiLU")
def emit_silu(ctx, node, inputs):
    """onnxruntime's Sigmoid, whose negative tail is only absolutely accurate (docs/limits.md,
    known limits): the accurate composition (the IR Sigmoid's decomposition, `decompositions/elementary/exp_log.py`) made YOLO11n 1.4-1.7x slower
    (benchmarks/sigmoid_cost.py)."""
    return ctx.emit("Mul", [inputs[0], ctx.emit1("Sigmoid", inputs)])
