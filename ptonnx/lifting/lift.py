"""`lift(fgraph)`: a PyTensor FunctionGraph as an IR graph."""

from __future__ import annotations

from pytensor.compile.builders import OpFromGraph
from pytensor.compile.ops import DeepCopyOp, ViewOp
from pytensor.tensor.type_other import SliceType

from ptonnx.errors import LiftingError
from ptonnx.ir import Graph
from ptonnx.ir.core import Source
from ptonnx.ir.branches import sink_into_branches
from ptonnx.lifting.context import LiftContext, ir_type, is_random, random_error
from ptonnx.lifting.dispatch import lifter_for, lifts
from ptonnx.lifting.idioms import recognise

from pytensor.tensor.random.op import RandomVariable

try:
    from pytensor.tensor.random.op import RNGConsumerOp
except ImportError:  # PyTensor before RNGConsumerOp
    from pytensor.tensor.random.op import RandomVariable as RNGConsumerOp

#: PyTensor ops that only copy or guard their input: an unnamed output of one is named for its input
_NAME_THROUGH = (DeepCopyOp, ViewOp)


def lift(fgraph, name: str = "graph") -> Graph:
    """Translate every Apply node of `fgraph`, in PyTensor's topological order."""
    ctx = LiftContext(name)
    ctx.clients = fgraph.clients
    for var in fgraph.inputs:
        ctx.add_input(var)
    lift_applies(ctx, fgraph.toposort())
    ctx.graph.set_outputs([ctx.value(v) for v in fgraph.outputs])
    recognise(ctx.graph)
    sink_into_branches(ctx.graph)  # PyTensor's IfElse is lazy: so is the If
    return ctx.graph


def source_of(var) -> Source:
    """The text of `var` that errors quote (the IR keeps no PyTensor object: see `Source`)."""
    created_at = None
    trace = getattr(getattr(var, "tag", None), "trace", None)
    if trace and trace[-1]:
        filename, line, _, code = trace[-1][-1]
        created_at = f"{filename}:{line}" + (f": {code}" if code else "")
    kind = getattr(var, "type", None)
    return Source(str(var), None if kind is None else str(kind), created_at)


def lift_applies(ctx: LiftContext, applies) -> None:
    """Lift Apply nodes in order, each by its Op class's rule (also an OpFromGraph's inner nodes)."""
    for apply in applies:
        if all(isinstance(o.type, SliceType) for o in apply.outputs):
            continue  # pytensor 2.38's MakeSlice: its users read the slice's parts themselves
        if isinstance(apply.op, RNGConsumerOp) and not isinstance(apply.op, RandomVariable):
            rng = next((v for v in apply.inputs if is_random(v)), apply.inputs[0])
            raise random_error(rng, [apply])
        rule = lifter_for(apply.op, apply.outputs[0])
        ctx.builder.source = source_of(apply.outputs[0])
        results = rule(ctx, apply)
        if len(results) != len(apply.outputs):
            raise LiftingError(f"lifting {apply.op} gave {len(results)} values for {len(apply.outputs)} outputs")
        for var, value in zip(apply.outputs, results, strict=True):
            expected = ir_type(var)
            if value.dtype != expected.dtype or value.type.ndim != expected.ndim:
                raise LiftingError(
                    f"lifting {apply.op} gave {value.type} for {var} of type {expected}; "
                    "please report this as a ptonnx bug"
                )
            ctx.values[var] = value


@lifts(OpFromGraph)
def lift_op_from_graph(ctx: LiftContext, node):
    """Inlined: a fresh copy of the inner graph, its inputs bound to the outer values
    (PyTensor's Pad, AllocDiag, and in pytensor 3 LogSoftmax, are OpFromGraphs)."""
    from pytensor.graph.fg import FunctionGraph

    inner = FunctionGraph(node.op.inner_inputs, node.op.inner_outputs, clone=True)
    # the clone keeps the inner inputs, and two OpFromGraphs of the same input types may share
    # them (an OpFromGraph called inside another's body): a binding lasts for this body only
    saved = {var: ctx.values.get(var) for var in inner.inputs}
    try:
        for var, outer in zip(inner.inputs, node.inputs, strict=True):
            ctx.values[var] = ctx.value(outer)
        lift_applies(ctx, inner.toposort())
        return [ctx.value(v) for v in inner.outputs]
    finally:
        for var, value in saved.items():
            if value is None:
                ctx.values.pop(var, None)
            else:
                ctx.values[var] = value


def output_names(fgraph) -> list[str | None]:
    """The names the user gave `fgraph`'s outputs (None where unnamed).

    An output that PyTensor wrapped in a copy (`DeepCopyOp`, `ViewOp`, as
    `pytensor.function` does) carries the name of the variable it copies.
    """
    names = []
    for var in fgraph.outputs:
        while var.name is None and var.owner is not None and isinstance(var.owner.op, _NAME_THROUGH):
            var = var.owner.inputs[0]
        names.append(var.name)
    return names
