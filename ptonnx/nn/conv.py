"""`conv2d`: 2-D convolution (cross-correlation, like PyTorch and ONNX) as a PyTensor Op.

NCHW input, OIHW weights, optional bias; `padding` is an int, a pair
(symmetric per axis) or an explicit (top, left, bottom, right) tuple, which
is also ONNX's `pads` order. `groups` covers grouped and depthwise convs.
"""

from __future__ import annotations

from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.tensor.type import TensorType

from ptonnx.ir.ops import nn_kernels as K
from ptonnx.nn.args import NNArgumentError, float_input, pads4, pair, param, positive, static


def conv_len(size, k, stride: int, begin: int, end: int, dilation: int):
    """Output length along one axis; works on ints and on symbolic PyTensor scalars."""
    return (size + (begin + end - dilation * (k - 1) - 1)) // stride + 1


class Conv2D(Op):
    """Y = conv(X, W) (+ B): cross-correlation with strides, (top, left, bottom, right) pads, dilations, groups."""

    __props__ = ("strides", "pads", "dilations", "group")

    def __init__(self, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1):
        self.strides = tuple(int(s) for s in strides)
        self.pads = tuple(int(p) for p in pads)
        self.dilations = tuple(int(d) for d in dilations)
        self.group = int(group)

    def make_node(self, x, w, b=None):
        x = float_input(x, "conv2d", (4,))
        dtype = x.type.dtype
        w = param(w, dtype, 4, "weight", "conv2d")
        inputs = [x, w] if b is None else [x, w, param(b, dtype, 1, "bias", "conv2d")]
        n, c, h, wd = (static(d) for d in x.type.shape)
        o, cg, kh, kw = (static(d) for d in w.type.shape)
        if c is not None and cg is not None and c != cg * self.group:
            raise NNArgumentError(f"conv2d: input {x} has {c} channels; weight {w.type} with groups={self.group} expects {cg * self.group}")
        if o is not None and o % self.group:
            raise NNArgumentError(f"conv2d: {o} output channels are not divisible by groups={self.group}")
        sizes = []
        for axis, (size, k) in enumerate(((h, kh), (wd, kw))):
            out = None
            if size is not None and k is not None:
                out = K.conv_out_size(size, k, self.strides[axis], self.pads[axis], self.pads[axis + 2], self.dilations[axis])
                if out <= 0:
                    raise NNArgumentError(f"conv2d: input {x.type} is smaller than the dilated kernel {w.type}")
            sizes.append(out)
        out_type = TensorType(dtype, shape=(n, o, *sizes))
        return Apply(self, inputs, [out_type()])

    def perform(self, node, inputs, output_storage):
        x, w, *b = inputs
        output_storage[0][0] = K.conv2d(x, w, b[0] if b else None, self.strides, self.pads, self.dilations, self.group)

    def infer_shape(self, fgraph, node, input_shapes):
        (n, _, h, wd), (o, _, kh, kw) = input_shapes[:2]
        p, s, d = self.pads, self.strides, self.dilations
        return [(n, o, conv_len(h, kh, s[0], p[0], p[2], d[0]), conv_len(wd, kw, s[1], p[1], p[3], d[1]))]


def conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution of `x` (N, C, H, W) with `w` (O, C/groups, kh, kw), plus bias `b` (O,).

    `padding`: int, (ph, pw), or explicit (top, left, bottom, right). Computes in
    `x`'s dtype (float32 or float64); `w` and `b` are converted to it.
    """
    op = Conv2D(
        positive(pair(stride, "stride", "conv2d"), "stride", "conv2d"),
        pads4(padding, "conv2d"),
        positive(pair(dilation, "dilation", "conv2d"), "dilation", "conv2d"),
        positive((int(groups),), "groups", "conv2d")[0],
    )
    return op(x, w) if b is None else op(x, w, b)
