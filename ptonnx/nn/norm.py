"""`batch_norm`: inference batch normalisation over axis 1, as a PyTensor Op."""

from __future__ import annotations

from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from ptonnx.ir.ops import nn_kernels as K
from ptonnx.nn.args import NNArgumentError, float_input, param


class BatchNorm(Op):
    """(x - mean) / sqrt(var + eps) * gamma + beta, per channel (axis 1); eps is applied as float32 (ONNX)."""

    __props__ = ("epsilon",)

    def __init__(self, epsilon=1e-5):
        self.epsilon = float(epsilon)

    def make_node(self, x, gamma, beta, mean, var):
        x = float_input(x, "batch_norm", (2, 3, 4, 5))
        params = [param(p, x.type.dtype, 1, name, "batch_norm") for p, name in zip((gamma, beta, mean, var), ("gamma", "beta", "mean", "var"), strict=True)]
        c = x.type.shape[1]
        for p, name in zip(params, ("gamma", "beta", "mean", "var"), strict=True):
            if c is not None and p.type.shape[0] is not None and p.type.shape[0] != c:
                raise NNArgumentError(f"batch_norm: {name} has {p.type.shape[0]} entries for {c} channels of {x}")
        return Apply(self, [x, *params], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = K.batch_norm(*inputs, self.epsilon)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


def batch_norm(x, gamma, beta, mean, var, eps=1e-5):
    """Inference batch norm of `x` (N, C) or (N, C, H, W) with per-channel statistics."""
    return BatchNorm(eps)(x, gamma, beta, mean, var)
