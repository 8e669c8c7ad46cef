"""`silu`: x * sigmoid(x) as one PyTensor Op, so it lifts to the IR's `SiLU`."""

from __future__ import annotations

from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from ptonnx.ir.ops import nn_kernels as K
from ptonnx.nn.args import float_input


class SiLU(Op):
    """Elementwise x * sigmoid(x) (a.k.a. swish), in the input dtype."""

    __props__ = ()

    def make_node(self, x):
        x = float_input(x, "silu")
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = K.silu(inputs[0])

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


def silu(x):
    """x * sigmoid(x), elementwise."""
    return SiLU()(x)
