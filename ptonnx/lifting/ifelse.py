"""PyTensor's `IfElse` as the IR's `If`, made lazy (`ptonnx.ir.branches`).

IfElse takes the condition, then the values of the then-branch and of the else-branch;
the If takes them all, each body returning its own half. Lifting ends by moving into
each body what only it reads, which makes the untaken branch free, as in PyTensor.
"""

from __future__ import annotations

from pytensor.ifelse import IfElse

from ptonnx.ir import Value
from ptonnx.lifting.context import LiftContext, ir_type
from ptonnx.lifting.dispatch import lifts


def _branch(name: str, args: list[Value], picked: range, outs) -> object:
    body = LiftContext(name)
    inputs = [body.graph.add_input(v.type, v.name) for v in args]
    # a branch value PyTensor's IfElse accepts in a compatible dtype is cast to the output's
    body.graph.set_outputs([body.cast(inputs[i], ir_type(o).dtype) for i, o in zip(picked, outs, strict=True)])
    return body.graph


@lifts(IfElse)
def lift_ifelse(ctx: LiftContext, node):
    n = node.op.n_outs
    cond, *args = node.inputs
    flag = ctx.cast(ctx.value(cond), "bool")  # `if cond`: nonzero (NaN too) is true
    values = [ctx.value(v) for v in args]
    name = node.op.name or "ifelse"
    then_body = _branch(f"{name}_then", values, range(n), node.outputs)
    else_body = _branch(f"{name}_else", values, range(n, 2 * n), node.outputs)
    names = [o.name for o in node.outputs]
    built = ctx.builder.node("If", [flag, *values], dict(then_body=then_body, else_body=else_body), names=names)
    return list(built.outputs)
