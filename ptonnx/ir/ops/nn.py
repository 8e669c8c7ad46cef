"""CNN IR ops: Conv, BatchNorm, MaxPool, AveragePool, the global pools, Resize, SiLU.

Names and attributes mirror ONNX (NCHW, OIHW, `pads` = (top, left, bottom,
right)); the numbers are those of `nn_kernels`, which the `ptonnx.nn`
PyTensor Ops also run. `Conv`'s bias may be left off, as ONNX's (so a weight
of unknown shape needs no zero bias of its channel count), and
`SiLU`/`BatchNorm` are ops of their own so passes can match them. Pooling pads
may be at most half the kernel (PyTorch's rule), so every window sees the input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ptonnx.ir.ops import nn_kernels as K
from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir.schema import REQUIRED, define
from ptonnx.ir.types import FLOAT_DTYPES, Dim, TensorType, promote

FLOAT = {"T": FLOAT_DTYPES}

#: (mode, coordinate_transformation_mode) pairs Resize implements
RESIZE_MODES = frozenset(
    (mode, ctm) for mode in ("nearest", "linear") for ctm in ("asymmetric", "half_pixel", "align_corners")
)


def _known(*dims: Dim) -> bool:
    return all(isinstance(d, int) for d in dims)




def _need_ndim(op: str, t: TensorType, ndim: int, what: str = "input") -> None:
    _need(t.ndim == ndim, op, lambda: f"{what} must be {ndim}-D, got {t}")


def _check_ints(op: str, attributes: Mapping[str, Any], spec: Mapping[str, tuple[int, int]]) -> None:
    """spec: attribute -> (length, minimum value)."""
    for key, (length, minimum) in spec.items():
        value = attributes[key]
        _need(
            isinstance(value, tuple) and len(value) == length and all(isinstance(v, int) and v >= minimum for v in value),
            op,
            lambda: f"{key} must be a tuple of {length} ints >= {minimum}, got {value!r}",
        )


def _merge(op: str, a: Dim, b: Dim, what: str) -> Dim:
    """Two sizes that must agree: the static one wins; a clash is an error."""
    if _known(a, b):
        _need(a == b, op, lambda: f"{what}: {a} != {b}")
    return a if isinstance(a, int) else b


# -- Conv -------------------------------------------------------------------------


def _conv_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    x, w, *bias = types
    _need_ndim("Conv", x, 4)
    _need_ndim("Conv", w, 4, "weight")
    for b in bias:
        _need_ndim("Conv", b, 1, "bias")
    _check_ints("Conv", a, {"strides": (2, 1), "pads": (4, 0), "dilations": (2, 1)})
    group = a["group"]
    _need(isinstance(group, int) and group >= 1, "Conv", lambda: f"group must be a positive int, got {group!r}")
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if _known(c, cg):
        _need(c == cg * group, "Conv", lambda: f"input has {c} channels; weight {w} with group={group} needs {cg} * {group}")
    if _known(o):
        _need(o % group == 0, "Conv", lambda: f"{o} output channels are not divisible by group={group}")
    for b in bias:
        o = _merge("Conv", o, b.shape[0], "weight's output channels vs bias length")
    sizes = []
    for axis, (size, k) in enumerate(((h, kh), (wd, kw))):
        s, begin, end, dil = a["strides"][axis], a["pads"][axis], a["pads"][axis + 2], a["dilations"][axis]
        out = K.conv_out_size(size, k, s, begin, end, dil) if _known(size, k) else None
        _need(out is None or out > 0, "Conv", lambda: f"input {x} is smaller than the dilated kernel {w}")
        sizes.append(out)
    return [TensorType(promote(*(t.dtype for t in types)), (n, o, *sizes))]


def _conv(x, w, b=None, *, strides, pads, dilations, group):
    return K.conv2d(x, w, b, strides, pads, dilations, group)


# -- BatchNorm --------------------------------------------------------------------


def _batch_norm_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    x, *params = types
    _need(x.ndim >= 2, "BatchNorm", lambda: f"input must have a channel axis (N, C, ...), got {x}")
    c = x.shape[1]
    for name, p in zip(("scale", "bias", "mean", "var"), params, strict=True):
        _need_ndim("BatchNorm", p, 1, name)
        c = _merge("BatchNorm", c, p.shape[0], f"{name} length vs channels")
    return [x.with_dtype(promote(*(t.dtype for t in types)))]


# -- pooling ----------------------------------------------------------------------


def _pool_rule(op: str):
    def rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
        (x,) = types
        _need_ndim(op, x, 4)
        _check_ints(op, a, {"kernel_shape": (2, 1), "strides": (2, 1), "pads": (4, 0)})
        for key in ("ceil_mode", "count_include_pad"):
            if key in a:
                _need(a[key] in (0, 1), op, lambda: f"{key} must be 0 or 1, got {a[key]!r}")
        kernel, strides, pads = a["kernel_shape"], a["strides"], a["pads"]
        _need(
            all(p <= kernel[i % 2] // 2 for i, p in enumerate(pads)),
            op,
            lambda: f"pads {pads} exceed half the kernel {kernel}; a window could see only padding",
        )
        sizes = []
        for axis in (0, 1):
            size = x.shape[2 + axis]
            out = None
            if _known(size):
                out = K.pool_out_size(size, kernel[axis], strides[axis], pads[axis], pads[axis + 2], a["ceil_mode"])
                _need(out > 0, op, lambda: f"input {x} is smaller than the kernel {kernel}")
            sizes.append(out)
        return [x.with_shape((*x.shape[:2], *sizes))]

    return rule


def _global_pool_rule(op: str):
    def rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
        (x,) = types
        _need(x.ndim >= 3, op, lambda: f"input must be (N, C, spatial...), got {x}")
        return [x.with_shape((*x.shape[:2], *(1,) * (x.ndim - 2)))]

    return rule


# -- Resize -----------------------------------------------------------------------


def _resize_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (x,) = types
    axes, scales, sizes = a["axes"], a["scales"], a["sizes"]
    mode, ctm = a["mode"], a["coordinate_transformation_mode"]
    _need((mode, ctm) in RESIZE_MODES, "Resize", lambda: f"mode={mode!r} with {ctm!r} is not one of {sorted(RESIZE_MODES)}")
    _need(a["nearest_mode"] == "floor", "Resize", lambda: f"nearest_mode must be 'floor', got {a['nearest_mode']!r}")
    _need(
        isinstance(axes, tuple) and list(axes) == sorted(set(axes)) and all(isinstance(i, int) and 0 <= i < x.ndim for i in axes),
        "Resize",
        lambda: f"axes {axes!r} must be sorted, distinct axes of {x}",
    )
    _need(bool(scales) != bool(sizes), "Resize", "give exactly one of scales and sizes")
    given = scales or sizes
    _need(isinstance(given, tuple) and len(given) == len(axes), "Resize", lambda: f"need one scale or size per axis {axes}, got {given!r}")
    if scales:
        _need(all(isinstance(s, float) and s > 0 for s in scales), "Resize", lambda: f"scales must be positive floats, got {scales!r}")
    else:
        _need(all(isinstance(s, int) and s > 0 for s in sizes), "Resize", lambda: f"sizes must be positive ints, got {sizes!r}")
    if mode == "linear":
        _need(
            x.ndim in (2, 4) and all(i >= x.ndim - 2 for i in axes),
            "Resize",
            lambda: f"linear mode resizes only the last two axes of a 2-D or 4-D tensor (onnxruntime), got {x} axes {axes}",
        )
    shape = list(x.shape)
    for k, axis in enumerate(axes):
        if sizes:
            shape[axis] = sizes[k]
        elif _known(shape[axis]):
            shape[axis] = K.resize_out_size(shape[axis], scales[k])
            _need(shape[axis] > 0, "Resize", lambda: f"scale {scales[k]} makes axis {axis} of {x} empty")
        else:
            shape[axis] = None
    return [x.with_shape(tuple(shape))]


def _resize(x, axes, scales, sizes, mode, coordinate_transformation_mode, nearest_mode):
    return K.resize(x, axes, scales, sizes, mode, coordinate_transformation_mode)


def _same_type(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    return [types[0]]


def nn_op(name: str, *, inputs: tuple[str, ...], type_rule, semantics, doc: str, attributes=None):
    """A CNN op on floats: one output of the input's dtype."""
    define(name, inputs=inputs, outputs=("out: T",), dtypes=FLOAT, type_rule=type_rule, semantics=semantics,
           attributes=attributes or {}, family="nn", doc=doc)


# Each CNN op, as a keyword row (their NumPy kernels live in nn_kernels.py).
nn_op(
    "Conv",
    inputs=("x: T", "w: T", "b?: T"),
    type_rule=_conv_rule,
    semantics=_conv,
    attributes={"strides": (tuple, (1, 1)), "pads": (tuple, (0, 0, 0, 0)), "dilations": (tuple, (1, 1)), "group": (int, 1)},
    doc="2-D cross-correlation X (N,C,H,W) * W (O,C/group,kh,kw) + B (O,); pads (top, left, bottom, right)",
)
nn_op(
    "BatchNorm",
    inputs=("x: T", "scale: T", "bias: T", "mean: T", "var: T"),
    type_rule=_batch_norm_rule,
    semantics=lambda x, scale, bias, mean, var, epsilon: K.batch_norm(x, scale, bias, mean, var, epsilon),
    attributes={"epsilon": (float, 1e-5)},
    doc="inference batch norm over axis 1; epsilon is stored (and applied) as float32, as in ONNX",
)
nn_op(
    "MaxPool",
    inputs=("x: T",),
    type_rule=_pool_rule("MaxPool"),
    semantics=K.max_pool2d,
    attributes={"kernel_shape": (tuple, REQUIRED), "strides": (tuple, (1, 1)), "pads": (tuple, (0, 0, 0, 0)), "ceil_mode": (int, 0)},
    doc="2-D max pooling, -inf padding, PyTorch's ceil_mode rule",
)
nn_op(
    "AveragePool",
    inputs=("x: T",),
    type_rule=_pool_rule("AveragePool"),
    semantics=K.avg_pool2d,
    attributes={
        "kernel_shape": (tuple, REQUIRED),
        "strides": (tuple, (1, 1)),
        "pads": (tuple, (0, 0, 0, 0)),
        "ceil_mode": (int, 0),
        "count_include_pad": (int, 0),
    },
    doc="2-D average pooling; count_include_pad divides by the window clipped to the padded input",
)
nn_op(
    "GlobalAveragePool",
    inputs=("x: T",),
    type_rule=_global_pool_rule("GlobalAveragePool"),
    semantics=K.global_avg_pool,
    doc="mean over spatial axes, kept as size 1",
)
nn_op(
    "GlobalMaxPool",
    inputs=("x: T",),
    type_rule=_global_pool_rule("GlobalMaxPool"),
    semantics=K.global_max_pool,
    doc="max over spatial axes, kept as size 1",
)
nn_op(
    "Resize",
    inputs=("x: T",),
    type_rule=_resize_rule,
    semantics=_resize,
    attributes={
        "axes": (tuple, REQUIRED),
        "scales": (tuple, ()),
        "sizes": (tuple, ()),
        "mode": (str, REQUIRED),
        "coordinate_transformation_mode": (str, REQUIRED),
        "nearest_mode": (str, "floor"),
    },
    doc="resize `axes` by float32 `scales` or to `sizes`; onnxruntime's coordinate formulas (see nn_kernels)",
)
nn_op(
    "SiLU",
    inputs=("x: T",),
    type_rule=_same_type,
    semantics=K.silu,
    doc="x * sigmoid(x)",
)

