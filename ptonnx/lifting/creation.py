"""Creation ops: ARange (NumPy's arange; bounds may be computed)."""

from __future__ import annotations

import numpy as np
from pytensor.tensor.basic import ARange

from ptonnx.errors import LiftingError
from ptonnx.ir import Value
from ptonnx.lifting.dispatch import lifts


@lifts(ARange)
def lift_arange(ctx, node):
    """Range in the output dtype. NumPy's arange of float bounds into an integer dtype
    steps in floats and casts (`arange(0.5, 2.6, 0.5, dtype=int)`): only constants do that."""
    out = node.outputs[0]
    dtype = out.type.dtype
    bounds = [ctx.value(v) for v in node.inputs]
    if all(b.const is not None for b in bounds):
        return [Value.constant(np.arange(*(b.const.item() for b in bounds), dtype=dtype), out.name)]
    if dtype.startswith(("int", "uint")) and any(b.dtype.startswith("float") for b in bounds):
        raise LiftingError(f"arange with float bounds into {dtype} ({out}): cast the bounds to an integer dtype first")
    return [ctx.op("Range", *(ctx.cast(b, dtype) for b in bounds), name=out.name)]
