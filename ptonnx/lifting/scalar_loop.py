"""PyTensor's `ScalarLoop` (and its subclass `Grad2F1Loop`) as the IR's `ScalarLoop`.

The loop's scalar graph becomes the node's body: an IR graph of 0-d values
lifted by the same scalar rules as everything else (so a body may hold any
scalar op ptonnx lifts, and is refused with the same errors when it cannot).
"""

from __future__ import annotations

import numpy as np
import pytensor.scalar.loop as psl

from ptonnx.ir import TensorType, Value
from ptonnx.lifting.checks import check
from ptonnx.lifting.context import LiftContext
from ptonnx.lifting.elemwise import _special, lift_inner_graph


@_special(psl.ScalarLoop)
def _lift_scalar_loop(ctx, scalar_op, inputs, out_dtypes, names, where):
    """the IR's `ScalarLoop`, its scalar graph as the body; `Grad2F1Loop` too"""
    n_steps, *args = inputs
    body_ctx = LiftContext(f"{scalar_op.name or 'scalar_loop'}_body")
    body_inputs = [
        body_ctx.graph.add_input(TensorType(var.type.dtype, ()), var.name or f"arg{i}")
        for i, var in enumerate(scalar_op.fgraph.inputs)
    ]
    body_ctx.graph.set_outputs(lift_inner_graph(body_ctx, scalar_op, body_inputs, where))
    args = [ctx.cast(v, t.dtype) for v, t in zip(args, scalar_op.inputs_type)]
    if not scalar_op.is_while:  # PyTensor raises for a for-loop with a negative count; a while loop skips
        at_least_zero = ctx.op("GreaterOrEqual", n_steps, Value.constant(np.zeros((), n_steps.dtype)))
        nonnegative = ctx.op("ReduceAll", at_least_zero, axes=tuple(range(n_steps.type.ndim)))
        n_steps = check(ctx, n_steps, [nonnegative], "ScalarLoop does not have a termination condition.", ValueError)
    node = ctx.builder.node(
        "ScalarLoop",
        [n_steps, *args],
        dict(body=body_ctx.graph, n_state=len(scalar_op.outputs) - scalar_op.is_while, is_while=scalar_op.is_while),
        names=names,
    )
    return list(node.outputs)
