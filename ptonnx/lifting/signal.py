"""`Convolve1d` (pytensor.tensor.signal.convolve1d): NumPy's direct convolution.

full[k] = sum_j a[j] b[k - j] over the j where 0 <= k - j < len(b), as one masked
product of a (len(a) + len(b) - 1, len(a)) grid and a sum: the terms outside the
window are -0.0, which changes no sum (an inf or NaN outside the window never meets
a 0). "valid" is full[min(n, m) - 1 : max(n, m)]; the mode may be a run-time flag.
NumPy refuses empty inputs (ValueError), and so does the model.
"""

from __future__ import annotations

import numpy as np
from pytensor.tensor.signal.conv import Convolve1d

from ptonnx.ir import Value
from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts


@lifts(Convolve1d)
def lift_convolve1d(ctx, node):
    a_var, b_var, full_var = node.inputs
    dtype = node.outputs[0].type.dtype
    a, b = ctx.cast(ctx.value(a_var), dtype), ctx.cast(ctx.value(b_var), dtype)
    n, m = ctx.dim(a, 0), ctx.dim(b, 0)
    nonempty = [ctx.op("Greater", n, ctx.ints(0)), ctx.op("Greater", m, ctx.ints(0))]
    n = check(ctx, n, [c for c in nonempty if c.const is None or not c.const], "convolve: a and v cannot be empty", ValueError)
    length = ctx.op("Sub", ctx.op("Add", n, m), ctx.ints(1))
    k = ctx.op("Unsqueeze", ctx.op("Range", ctx.ints(0), length, ctx.ints(1)), axes=(1,))
    j = ctx.op("Unsqueeze", ctx.op("Range", ctx.ints(0), n, ctx.ints(1)), axes=(0,))
    lag = ctx.op("Sub", k, j)
    inside = ctx.op("And", ctx.op("GreaterOrEqual", lag, ctx.ints(0)), ctx.op("Less", lag, m))
    picked = ctx.op("Gather", b, ctx.op("Where", inside, lag, ctx.ints(0)), axis=0)
    terms = ctx.op("Where", inside, ctx.op("Mul", picked, ctx.op("Unsqueeze", a, axes=(0,))),
                   Value.constant(np.array(-0.0, dtype)))
    full = ctx.op("ReduceSum", terms, axes=(1,), keepdims=False)
    flag = ctx.value(full_var)
    if flag.const is not None and bool(flag.const):
        return [full]
    start = ctx.op("Sub", ctx.op("Min", n, m), ctx.ints(1))
    end = ctx.op("Max", n, m)
    if flag.const is None:
        flag = ctx.cast(flag, "bool")
        start = ctx.op("Where", flag, ctx.ints(0), start)
        end = ctx.op("Where", flag, length, end)
    return [ctx.op("Slice", full, ctx.pack([start]), ctx.pack([end]), ctx.ints([1]), axes=(0,), name=node.outputs[0].name)]
