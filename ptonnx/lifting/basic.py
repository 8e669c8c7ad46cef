"""Identity-like PyTensor ops: they forward their first input unchanged."""

from __future__ import annotations

from pytensor.compile.ops import DeepCopyOp, ViewOp
from pytensor.tensor.basic import ScalarFromTensor, TensorFromScalar

from ptonnx.lifting.dispatch import lifts, lifts_batched


@lifts(TensorFromScalar, ScalarFromTensor)
@lifts_batched(DeepCopyOp, ViewOp)  # a Blockwise of a copy (a vectorised Deterministic) is a copy too
def lift_identity(ctx, node):
    return [ctx.value(node.inputs[0])]
