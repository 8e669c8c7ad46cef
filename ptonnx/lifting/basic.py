"""Identity-like PyTensor ops: they forward their first input unchanged."""

from __future__ import annotations

from pytensor.compile.ops import DeepCopyOp, ViewOp
from pytensor.tensor.basic import ScalarFromTensor, TensorFromScalar

from ptonnx.lifting.dispatch import lifts


@lifts(DeepCopyOp, ViewOp, TensorFromScalar, ScalarFromTensor)
def lift_identity(ctx, node):
    return [ctx.value(node.inputs[0])]
