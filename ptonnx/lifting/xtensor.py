"""The conversions between tensors and pytensor.xtensor's named-dim tensors (pymc.dims
models): the same array, so the same IR value. The XTensor ops themselves are lowered
to tensor ops by PyTensor's `lower_xtensor` rewrites before lifting."""

from __future__ import annotations

import warnings

with warnings.catch_warnings():  # "xtensor module is experimental": not the user's concern here
    warnings.simplefilter("ignore", UserWarning)
    from pytensor.xtensor.basic import Rename, TensorFromXTensor, XTensorFromTensor

from ptonnx.lifting.dispatch import lifts


@lifts(XTensorFromTensor, TensorFromXTensor, Rename)
def lift_same_array(ctx, node):
    return [ctx.value(node.inputs[0])]
