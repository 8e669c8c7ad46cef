"""An Op no lifting rule will ever know: what the tests of ptonnx's refusals use (a real PyTensor
op that ptonnx refuses today may be supported tomorrow)."""

from __future__ import annotations

import pytensor.tensor as pt
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.tensor.blockwise import Blockwise


class NoRule(Op):
    """A matrix in, the same matrix out; ptonnx has no rule for it."""

    __props__ = ()
    gufunc_signature = "(m,n)->(m,n)"

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = inputs[0].copy()


def no_rule(x):
    """NoRule of a matrix, or a Blockwise of it for more axes."""
    return NoRule()(x) if x.type.ndim == 2 else Blockwise(NoRule())(x)
