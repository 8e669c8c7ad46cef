"""`lift(fgraph)`: a PyTensor FunctionGraph as an IR graph."""

from __future__ import annotations

from ptonnx.errors import LiftingError
from ptonnx.ir import Graph
from ptonnx.lifting.context import LiftContext, ir_type
from ptonnx.lifting.dispatch import lifter_for


def lift(fgraph, name: str = "graph") -> Graph:
    """Translate every Apply node of `fgraph`, in PyTensor's topological order."""
    ctx = LiftContext(name)
    for var in fgraph.inputs:
        ctx.add_input(var)
    for apply in fgraph.toposort():
        rule = lifter_for(apply.op, apply.outputs[0])
        results = rule(ctx, apply)
        if len(results) != len(apply.outputs):
            raise LiftingError(f"lifting {apply.op} gave {len(results)} values for {len(apply.outputs)} outputs")
        for var, value in zip(apply.outputs, results):
            expected = ir_type(var)
            if value.dtype != expected.dtype or value.type.ndim != expected.ndim:
                raise LiftingError(
                    f"lifting {apply.op} gave {value.type} for {var} of type {expected}; "
                    "please report this as a ptonnx bug"
                )
            ctx.values[var] = value
    ctx.graph.set_outputs([ctx.value(v) for v in fgraph.outputs])
    return ctx.graph
