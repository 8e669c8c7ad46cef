"""`resize` (alias `upsample`): PyTorch's `F.interpolate` / `nn.Upsample` on NCHW, as a PyTensor Op.

Mode mapping (ONNX Resize coordinate_transformation_mode in brackets):

- `nearest`: PyTorch's nearest (`asymmetric`, nearest_mode `floor`): source
  index `floor(x / scale)`.
- `linear`/`bilinear`, `align_corners=False` (`half_pixel`):
  `(x + 0.5) / scale - 0.5`, clamped at 0 like PyTorch. onnxruntime clamps
  `half_pixel` too, and unlike `pytorch_half_pixel` it also matches PyTorch
  when an output axis has length 1, so `half_pixel` is the faithful choice.
- `linear`/`bilinear`, `align_corners=True` (`align_corners`):
  `x * (in - 1) / (out - 1)`.

`scale` is the given `scale_factor` (rounded to float32, which is how ONNX stores
it) or `out / in` for `size=`; output sizes are `floor(in * scale)`. Coordinates
are computed in float32 as onnxruntime does, so PyTensor's evaluation and
onnxruntime agree exactly on indices. PyTorch takes shortcuts whatever the
scale: it copies an axis whose size does not change, and its nearest mode maps
an axis that doubles with `x // 2`. For a non-integer
scale that lands on those sizes ptonnx applies the scale's formula, as an ONNX
export of the PyTorch model does.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.tensor.type import TensorType

from ptonnx.ir.ops import nn_kernels as K
from ptonnx.nn.args import NNArgumentError, float_input, static

#: user mode -> (ONNX mode, coordinate mode without / with align_corners)
MODES = {
    "nearest": ("nearest", "asymmetric", None),
    "linear": ("linear", "half_pixel", "align_corners"),
    "bilinear": ("linear", "half_pixel", "align_corners"),
}


class Resize(Op):
    """Resize `axes` of a tensor by float32 `scales` or to `sizes` (one of them is empty)."""

    __props__ = ("axes", "scales", "sizes", "mode", "coordinate_transformation_mode")

    def __init__(self, axes, scales=(), sizes=(), mode="nearest", coordinate_transformation_mode="asymmetric"):
        self.axes = tuple(int(a) for a in axes)
        self.scales = tuple(float(np.float32(s)) for s in scales)
        self.sizes = tuple(int(s) for s in sizes)
        self.mode = mode
        self.coordinate_transformation_mode = coordinate_transformation_mode

    def make_node(self, x):
        x = float_input(x, "resize", (4,))
        shape = list(x.type.shape)
        for k, axis in enumerate(self.axes):
            if self.sizes:
                shape[axis] = self.sizes[k]
            elif shape[axis] is not None:
                shape[axis] = K.resize_out_size(static(shape[axis]), self.scales[k])
                if shape[axis] <= 0:
                    raise NNArgumentError(f"resize: scale {self.scales[k]} makes axis {axis} of {x.type} empty")
        return Apply(self, [x], [TensorType(x.type.dtype, shape=tuple(shape))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = K.resize(inputs[0], self.axes, self.scales, self.sizes, self.mode, self.coordinate_transformation_mode)

    def infer_shape(self, fgraph, node, input_shapes):
        shape = list(input_shapes[0])
        for k, axis in enumerate(self.axes):
            if self.sizes:
                shape[axis] = self.sizes[k]
            else:
                scaled = pt.cast(shape[axis], "float32") * np.float32(self.scales[k])
                shape[axis] = pt.cast(pt.floor(scaled), "int64")
        return [tuple(shape)]


def _per_axis(value, name: str, kind):
    values = (value, value) if np.ndim(value) == 0 else tuple(value)
    if len(values) != 2 or not all(kind(v) > 0 for v in values):
        raise NNArgumentError(f"resize: {name} must be a positive number or a pair (h, w), got {value!r}")
    return tuple(kind(v) for v in values)


def resize(x, scale_factor=None, size=None, mode="nearest", align_corners=False):
    """Resize H and W of `x` (N, C, H, W) by `scale_factor` or to `size` (PyTorch's interpolate).

    `mode`: "nearest", "linear" or "bilinear" (the same for 4-D input). See the
    module docstring for the exact coordinate rules.
    """
    if mode not in MODES:
        raise NNArgumentError(f"resize: mode must be one of {sorted(MODES)}, got {mode!r}")
    if (scale_factor is None) == (size is None):
        raise NNArgumentError("resize: give exactly one of scale_factor and size")
    onnx_mode, ctm, aligned = MODES[mode]
    if align_corners:
        if aligned is None:
            raise NNArgumentError(f"resize: align_corners=True is only for linear modes, not {mode!r} (as in PyTorch)")
        ctm = aligned
    if size is not None:
        return Resize((2, 3), sizes=_per_axis(size, "size", int), mode=onnx_mode, coordinate_transformation_mode=ctm)(x)
    return Resize((2, 3), scales=_per_axis(scale_factor, "scale_factor", float), mode=onnx_mode, coordinate_transformation_mode=ctm)(x)


upsample = resize
