"""NumPy kernels of the CNN ops, shared by the IR's reference semantics and the
`ptonnx.nn` PyTensor Ops' `perform` (so both evaluate the same numbers).

Pure NumPy on purpose: the IR must not import PyTensor. Every kernel computes
in its input's dtype. Layouts are ONNX's: NCHW data, OIHW weights, and 2-D
`pads` ordered `(top, left, bottom, right)` = ONNX's
`[x1_begin, x2_begin, x1_end, x2_end]`.

Semantics (PyTorch's, which YOLO models come from, and onnxruntime's):

- pooling sizes: `out = (in + begin + end - k + (s - 1 if ceil_mode)) // s + 1`,
  and with `ceil_mode` a last window that would start in the end padding is
  dropped (it must start inside the input or the begin padding);
- `avg_pool2d` divides by the window clipped to the padded input when
  `count_include_pad` (padding counts, the ceil-mode overhang does not), else by
  the number of input elements it covers;
- `resize` computes source coordinates in float32 exactly as onnxruntime does
  (`asymmetric`: `x / scale`; `half_pixel`: `(x + 0.5) / scale - 0.5`, clamped at 0
  for linear; `align_corners`: `x * (in - 1) / (out - 1)`), with a `scale` given
  or `out / in`; output sizes are `floor(in * float32(scale))`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# -- sizes -------------------------------------------------------------------


def conv_out_size(size: int, k: int, stride: int, begin: int, end: int, dilation: int = 1) -> int:
    """Output length of a convolution along one axis."""
    return (size + begin + end - dilation * (k - 1) - 1) // stride + 1


def pool_out_size(size: int, k: int, stride: int, begin: int, end: int, ceil_mode: bool) -> int:
    """Output length of a pooling along one axis, with PyTorch's ceil-mode rule."""
    out = (size + begin + end - k + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + begin:
        out -= 1
    return out


def resize_out_size(size: int, scale: float) -> int:
    """`floor(size * scale)` in float32, as onnxruntime computes it."""
    return int(np.floor(np.float32(scale) * np.float32(size)))


def _pad_hw(x: np.ndarray, pads: Sequence[int], value) -> np.ndarray:
    top, left, bottom, right = pads
    if not any(pads):
        return x
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


def _window(xp: np.ndarray, i: int, j: int, out_hw: tuple[int, int], strides, dilations=(1, 1)) -> np.ndarray:
    """The (…, OH, OW) view of `xp` that kernel tap (i, j) reads at every output position."""
    (oh, ow), (sh, sw), (dh, dw) = out_hw, strides, dilations
    return xp[..., i * dh : i * dh + (oh - 1) * sh + 1 : sh, j * dw : j * dw + (ow - 1) * sw + 1 : sw]


# -- convolution ----------------------------------------------------------------


def conv2d(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1) -> np.ndarray:
    """Grouped 2-D cross-correlation by im2col: one (batched) matmul per call, no pixel loops."""
    x = np.asarray(x)
    w = np.asarray(w, dtype=x.dtype)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if c != cg * group or o % group:
        raise ValueError(f"conv2d: input has {c} channels and weights {w.shape}; need C = C/group * group={group}")
    oh = conv_out_size(h, kh, strides[0], pads[0], pads[2], dilations[0])
    ow = conv_out_size(wd, kw, strides[1], pads[1], pads[3], dilations[1])
    if oh <= 0 or ow <= 0:
        raise ValueError(f"conv2d: input {x.shape} is smaller than the dilated kernel {w.shape[2:]}")
    og = o // group
    xp = _pad_hw(x, pads, 0).reshape(n, group, cg, h + pads[0] + pads[2], wd + pads[1] + pads[3])
    taps = w.reshape(group, og, cg, kh, kw)
    if cg == 1:  # depthwise: per-tap broadcast multiplies beat tiny matmuls
        out = np.zeros((n, group, og, oh, ow), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                out += taps[None, :, :, 0, i, j, None, None] * _window(xp, i, j, (oh, ow), strides, dilations)
    else:
        cols = np.empty((n, group, cg, kh, kw, oh, ow), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                cols[:, :, :, i, j] = _window(xp, i, j, (oh, ow), strides, dilations)
        out = np.matmul(taps.reshape(group, og, cg * kh * kw), cols.reshape(n, group, cg * kh * kw, oh * ow))
    out = out.reshape(n, o, oh, ow)
    if b is not None:
        out += np.asarray(b, dtype=x.dtype)[None, :, None, None]
    return out


# -- normalisation, activation ----------------------------------------------------


def batch_norm(x, scale, bias, mean, var, epsilon=1e-5) -> np.ndarray:
    """Inference batch norm over axis 1: `(x - mean) / sqrt(var + eps) * scale + bias`.

    `epsilon` is rounded to float32 first: ONNX stores it as a float attribute.
    """
    x = np.asarray(x)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    dt = x.dtype
    scale, bias, mean, var = (np.asarray(a, dtype=dt).reshape(shape) for a in (scale, bias, mean, var))
    return ((x - mean) / np.sqrt(var + dt.type(np.float32(epsilon))) * scale + bias).astype(dt, copy=False)


def silu(x) -> np.ndarray:
    """`x * sigmoid(x)` in the input dtype."""
    x = np.asarray(x)
    with np.errstate(over="ignore"):
        return np.asarray(x / (1 + np.exp(-x)), dtype=x.dtype)


# -- pooling --------------------------------------------------------------------


def _pool_geometry(shape, kernel, strides, pads, ceil_mode):
    """Output size and the end padding that makes every (kept) window fit."""
    h, w = shape[2:]
    oh = pool_out_size(h, kernel[0], strides[0], pads[0], pads[2], ceil_mode)
    ow = pool_out_size(w, kernel[1], strides[1], pads[1], pads[3], ceil_mode)
    if oh <= 0 or ow <= 0:
        raise ValueError(f"pooling: input {tuple(shape)} is smaller than the kernel {tuple(kernel)}")
    bottom = max(pads[2], (oh - 1) * strides[0] + kernel[0] - h - pads[0])
    right = max(pads[3], (ow - 1) * strides[1] + kernel[1] - w - pads[1])
    return (oh, ow), (pads[0], pads[1], bottom, right)


def max_pool2d(x, kernel_shape, strides, pads=(0, 0, 0, 0), ceil_mode=0) -> np.ndarray:
    """Max over each window; padding is -inf, so it never wins."""
    x = np.asarray(x)
    out_hw, full_pads = _pool_geometry(x.shape, kernel_shape, strides, pads, ceil_mode)
    xp = _pad_hw(x, full_pads, -np.inf)
    out = None
    for i in range(kernel_shape[0]):
        for j in range(kernel_shape[1]):
            tap = _window(xp, i, j, out_hw, strides)
            out = tap.copy() if out is None else np.maximum(out, tap, out=out)
    return out


def _avg_divisor(size, k, stride, begin, end, out, count_include_pad) -> np.ndarray:
    """Per-output-position divisor along one axis."""
    start = np.arange(out) * stride - begin
    stop = np.minimum(start + k, size + end)
    if count_include_pad:
        return stop - start
    return np.minimum(stop, size) - np.maximum(start, 0)


def avg_pool2d(x, kernel_shape, strides, pads=(0, 0, 0, 0), ceil_mode=0, count_include_pad=0) -> np.ndarray:
    """Window sums of the zero-padded input over a per-position divisor (see module doc)."""
    x = np.asarray(x)
    (oh, ow), full_pads = _pool_geometry(x.shape, kernel_shape, strides, pads, ceil_mode)
    xp = _pad_hw(x, full_pads, 0)
    total = np.zeros(x.shape[:2] + (oh, ow), dtype=x.dtype)
    for i in range(kernel_shape[0]):
        for j in range(kernel_shape[1]):
            total += _window(xp, i, j, (oh, ow), strides)
    dh = _avg_divisor(x.shape[2], kernel_shape[0], strides[0], pads[0], pads[2], oh, count_include_pad)
    dw = _avg_divisor(x.shape[3], kernel_shape[1], strides[1], pads[1], pads[3], ow, count_include_pad)
    return (total / (dh[:, None] * dw[None, :]).astype(x.dtype)).astype(x.dtype, copy=False)


def global_avg_pool(x) -> np.ndarray:
    x = np.asarray(x)
    return np.mean(x, axis=tuple(range(2, x.ndim)), keepdims=True, dtype=x.dtype)


def global_max_pool(x) -> np.ndarray:
    x = np.asarray(x)
    return np.max(x, axis=tuple(range(2, x.ndim)), keepdims=True)


# -- resize ---------------------------------------------------------------------

F32 = np.float32


def _source_coords(out: int, size: int, scale: np.float32, mode: str) -> np.ndarray:
    """float32 source coordinate of every output index (onnxruntime's formulas)."""
    x = np.arange(out, dtype=F32)
    if mode == "asymmetric":
        return x / scale
    if mode == "half_pixel":
        return (x + F32(0.5)) / scale - F32(0.5)
    if mode == "align_corners":
        if out == 1:
            return np.zeros(1, F32)
        return x * F32(size - 1) / F32(out - 1)
    raise ValueError(f"resize: unknown coordinate_transformation_mode {mode!r}")


def _resize_axis(x: np.ndarray, axis: int, out: int, scale: np.float32, mode: str, ctm: str) -> np.ndarray:
    size = x.shape[axis]
    coords = _source_coords(out, size, scale, ctm)
    if mode == "nearest":  # nearest_mode="floor"
        idx = np.clip(np.floor(coords).astype(np.int64), 0, size - 1)
        return np.take(x, idx, axis=axis)
    coords = np.clip(coords, F32(0), F32(size - 1))
    lo = np.minimum(coords.astype(np.int64), size - 1)
    hi = np.minimum(lo + 1, size - 1)
    w_hi = np.abs(coords - lo.astype(F32))
    w_lo = np.abs(coords - hi.astype(F32))
    same = lo == hi
    w_lo[same] = w_hi[same] = F32(0.5)
    shape = [1] * x.ndim
    shape[axis] = out
    w_lo, w_hi = (w.astype(x.dtype).reshape(shape) for w in (w_lo, w_hi))
    return np.take(x, lo, axis=axis) * w_lo + np.take(x, hi, axis=axis) * w_hi


def resize(x, axes=(2, 3), scales=(), sizes=(), mode="nearest", coordinate_transformation_mode="asymmetric") -> np.ndarray:
    """Resize the listed axes by `scales` (or to `sizes`), one axis at a time."""
    x = np.asarray(x)
    for k, axis in enumerate(axes):
        size = x.shape[axis]
        if scales:
            scale = F32(scales[k])
            out = resize_out_size(size, scales[k])
        else:
            out = int(sizes[k])
            scale = F32(out) / F32(size)
        if out == size and scale == 1:
            continue
        x = _resize_axis(x, axis, out, scale, mode, coordinate_transformation_mode)
    return np.ascontiguousarray(x)
