"""2-D pooling as PyTensor Ops: max/average over windows, and global pools.

Semantics are PyTorch's (and onnxruntime's): max pooling pads with -inf;
with `ceil_mode` the output length is `ceil((in + pads - k) / s) + 1`, minus
one when that last window would start in the end padding (it must start
inside the input or the begin padding). Average pooling with
`count_include_pad=True` divides by the window clipped to the *padded* input
(padding counts, the ceil-mode overhang past it does not), as ONNX
AveragePool does; with `False` it divides by the number of input elements in
the window. Padding may be at most half the kernel, as in PyTorch.
"""

from __future__ import annotations

import pytensor.tensor as pt
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.tensor.type import TensorType

from ptonnx.ir.ops import nn_kernels as K
from ptonnx.nn.args import NNArgumentError, float_input, pads4, pair, positive, static

#: pooling mode -> numpy kernel
POOL_KERNELS = {"max": K.max_pool2d, "avg": K.avg_pool2d}
#: global pooling mode -> numpy kernel
GLOBAL_KERNELS = {"max": K.global_max_pool, "avg": K.global_avg_pool}


def pool_len(size, k: int, stride: int, begin: int, end: int, ceil_mode: bool):
    """Output length along one axis for a symbolic PyTensor size (ints: `nn_kernels.pool_out_size`)."""
    out = (size + (begin + end - k + (stride - 1 if ceil_mode else 0))) // stride + 1
    if ceil_mode:
        out = pt.switch(pt.ge((out - 1) * stride, size + begin), out - 1, out)
    return out


class Pool2D(Op):
    """Max or average pooling over `kernel` windows of an NCHW tensor."""

    __props__ = ("mode", "kernel", "strides", "pads", "ceil_mode", "count_include_pad")

    def __init__(self, mode, kernel, strides, pads=(0, 0, 0, 0), ceil_mode=False, count_include_pad=False):
        if mode not in POOL_KERNELS:
            raise NNArgumentError(f"Pool2D: mode must be one of {sorted(POOL_KERNELS)}, got {mode!r}")
        self.mode = mode
        self.kernel = tuple(int(k) for k in kernel)
        self.strides = tuple(int(s) for s in strides)
        self.pads = tuple(int(p) for p in pads)
        self.ceil_mode = bool(ceil_mode)
        self.count_include_pad = bool(count_include_pad) and mode == "avg"
        if any(p > self.kernel[i % 2] // 2 for i, p in enumerate(self.pads)):
            raise NNArgumentError(f"{mode}_pool2d: padding {self.pads} must be at most half the kernel {self.kernel}")

    def _kwargs(self) -> dict:
        kwargs = dict(kernel_shape=self.kernel, strides=self.strides, pads=self.pads, ceil_mode=int(self.ceil_mode))
        if self.mode == "avg":
            kwargs["count_include_pad"] = int(self.count_include_pad)
        return kwargs

    def make_node(self, x):
        x = float_input(x, f"{self.mode}_pool2d", (4,))
        sizes = []
        for axis in (0, 1):
            size = static(x.type.shape[2 + axis])
            out = None
            if size is not None:
                out = K.pool_out_size(size, self.kernel[axis], self.strides[axis], self.pads[axis], self.pads[axis + 2], self.ceil_mode)
                if out <= 0:
                    raise NNArgumentError(f"{self.mode}_pool2d: input {x.type} is smaller than the kernel {self.kernel}")
            sizes.append(out)
        return Apply(self, [x], [TensorType(x.type.dtype, shape=(*x.type.shape[:2], *sizes))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = POOL_KERNELS[self.mode](inputs[0], **self._kwargs())

    def infer_shape(self, fgraph, node, input_shapes):
        n, c, h, w = input_shapes[0]
        k, s, p = self.kernel, self.strides, self.pads
        return [(n, c, pool_len(h, k[0], s[0], p[0], p[2], self.ceil_mode), pool_len(w, k[1], s[1], p[1], p[3], self.ceil_mode))]


class GlobalPool2D(Op):
    """Max or mean over H and W, keeping them as size 1: (N, C, H, W) -> (N, C, 1, 1)."""

    __props__ = ("mode",)

    def __init__(self, mode):
        if mode not in GLOBAL_KERNELS:
            raise NNArgumentError(f"GlobalPool2D: mode must be one of {sorted(GLOBAL_KERNELS)}, got {mode!r}")
        self.mode = mode

    def make_node(self, x):
        x = float_input(x, f"global_{self.mode}_pool2d", (4,))
        return Apply(self, [x], [TensorType(x.type.dtype, shape=(*x.type.shape[:2], 1, 1))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = GLOBAL_KERNELS[self.mode](inputs[0])

    def infer_shape(self, fgraph, node, input_shapes):
        n, c, _, _ = input_shapes[0]
        return [(n, c, 1, 1)]


def _pool(mode, x, kernel, stride, padding, ceil_mode, count_include_pad=False):
    name = f"{mode}_pool2d"
    kernel = positive(pair(kernel, "kernel", name), "kernel", name)
    strides = kernel if stride is None else positive(pair(stride, "stride", name), "stride", name)
    return Pool2D(mode, kernel, strides, pads4(padding, name), ceil_mode, count_include_pad)(x)


def max_pool2d(x, kernel, stride=None, padding=0, ceil_mode=False):
    """Max over `kernel` windows (stride defaults to the kernel); padding counts as -inf.

    `padding`: int, (ph, pw) or (top, left, bottom, right), at most half the kernel.
    """
    return _pool("max", x, kernel, stride, padding, ceil_mode)


def avg_pool2d(x, kernel, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over `kernel` windows (stride defaults to the kernel).

    With `count_include_pad` the divisor is the window clipped to the padded
    input (zero padding counts, a ceil-mode overhang past the padding does not),
    as in PyTorch and ONNX AveragePool; without, it is the number of input
    elements the window covers.
    """
    return _pool("avg", x, kernel, stride, padding, ceil_mode, count_include_pad)


def global_avg_pool2d(x):
    """Mean over H and W: (N, C, H, W) -> (N, C, 1, 1)."""
    return GlobalPool2D("avg")(x)


def global_max_pool2d(x):
    """Max over H and W: (N, C, H, W) -> (N, C, 1, 1)."""
    return GlobalPool2D("max")(x)
