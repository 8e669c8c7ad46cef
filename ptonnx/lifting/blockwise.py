"""`Blockwise` of any core op ptonnx lifts, as a Loop over the batch.

A Blockwise applies its core op to each batch element (the leading dims, broadcast
across the inputs). Where the core op's lifting has no batched form (`Dot` has one:
MatMul), the inputs are broadcast to the batch shape, flattened to one batch axis, and
a `Loop` runs the core op once per element; the stacked results are reshaped to the
batch shape. The core op is lifted by its own rule inside the body, so any op ptonnx
lifts can be batched this way (and an op it cannot lift is refused by name).
"""

from __future__ import annotations

import numpy as np
from pytensor.graph.basic import Constant
from pytensor.tensor import constant

from ptonnx.ir import TensorType, Value
from ptonnx.lifting.context import LiftContext, known
from ptonnx.lifting.dispatch import lifter_for
from ptonnx.lifting.lift import lift_applies


def batch_dims(ctx, var, v: Value, own: int, width: int) -> list[Value]:
    """`v`'s first `own` sizes, left-padded with 1s to `width`; a size `var`'s PyTensor type says is 1
    is the constant 1 (it broadcasts, as in PyTensor, whatever the IR's type knows)."""
    return [ctx.ints(1)] * (width - own) + [ctx.ints(1) if var.type.shape[a] == 1 else ctx.dim(v, a) for a in range(own)]


def batch_shape(ctx, batch_shapes: list[list[Value]]) -> list[Value]:
    """The inputs' batch sizes (left-padded with 1s), axis by axis. As in PyTensor, only a size
    known to be 1 broadcasts; the others must be equal (ValueError otherwise, PyTensor's message)."""
    from ptonnx.lifting.checks import check

    out = []
    for sizes in zip(*batch_shapes, strict=True):
        sized = [s for s in sizes if not (s.const is not None and s.const == 1)]
        if not sized:
            out.append(ctx.ints(1))
            continue
        size, conds = sized[0], []
        for other in sized[1:]:
            if not (size.const is not None and other.const is not None and size.const == other.const):
                conds.append(ctx.op("Equal", size, other))
        out.append(check(ctx, size, conds, RUNTIME_BROADCAST, ValueError))
    return out


#: what PyTensor's Blockwise says of batch sizes that differ at run time
RUNTIME_BROADCAST = ("Runtime broadcasting not allowed. At least one input has a distinct batch dimension length of 1, "
                     "but was not marked as broadcastable.\nIf broadcasting was intended, use `specify_broadcastable` "
                     "on the relevant input.")


def _unbatched_constant(ctx, var, core_ndim: int):
    """`var`'s core value, as a constant, when it is a constant whose batch dims are all 1 (a
    PyTensor constant, or one lifting computed from constants: a vectorised Join's axis is
    ExpandDims of a literal)."""
    data = var.data if isinstance(var, Constant) else known(ctx.value(var))
    if data is None or any(d != 1 for d in data.shape[: var.type.ndim - core_ndim]):
        return None
    core = data.reshape(data.shape[var.type.ndim - core_ndim:])
    return var if isinstance(var, Constant) and core.ndim == data.ndim else constant(core, dtype=var.dtype)


def lift_batched(ctx: LiftContext, node) -> list[Value]:
    op = node.op
    core_node = op._create_dummy_core_node(node.inputs)
    # a constant without batch dims (Split's axis) is the same in every trip: the core op gets
    # the constant itself, which its lifting may need as an attribute
    constants = [_unbatched_constant(ctx, inp, len(sig)) for inp, sig in zip(node.inputs, op.inputs_sig, strict=True)]
    core_inputs = [dummy if c is None else c for c, dummy in zip(constants, core_node.inputs, strict=True)]
    if any(c is not None for c in constants):
        core_node = op.core_op.make_node(*core_inputs)
    for dummy, var in zip(core_node.inputs, node.inputs, strict=True):  # a refusal in the core op names the input
        if not isinstance(dummy, Constant) and dummy.name is None:
            dummy.name = var.name or str(var)
    lifter_for(op.core_op, core_node.outputs[0])  # refuses, by name, a core op ptonnx cannot lift
    core_ndims = [len(sig) for sig in op.inputs_sig]
    batch_ndim = node.outputs[0].type.ndim - len(op.outputs_sig[0])
    values = [ctx.value(v) for v in node.inputs]
    if batch_ndim == 0:  # no batch: the core op itself
        for dummy, v in zip(core_node.inputs, values, strict=True):
            ctx.values[dummy] = v
        lift_applies(ctx, [core_node])
        return [ctx.cast(ctx.value(o), want.type.dtype) for o, want in zip(core_node.outputs, node.outputs, strict=True)]
    padded = [batch_dims(ctx, var, v, v.type.ndim - c, batch_ndim) for var, v, c in zip(node.inputs, values, core_ndims, strict=True)]
    batch = batch_shape(ctx, padded)
    count = ctx.product(batch)
    flat = []
    for v, c in zip(values, core_ndims, strict=True):
        core_shape = ctx.shape_of(v, v.type.ndim - c)
        full = ctx.op("Expand", v, ctx.op("Concat", ctx.pack(batch), core_shape, axis=0))
        flat.append(ctx.op("Reshape", full, ctx.op("Concat", ctx.pack([count]), core_shape, axis=0)))

    body = LiftContext(f"{op.core_op}_batch_body".replace(" ", ""))
    trip = body.graph.add_input(TensorType("int64", ()), "trip")
    reads = [body.graph.add_input(f.type, f.name) for f in flat]
    for dummy, read in zip(core_node.inputs, reads, strict=True):
        if dummy not in body.values:
            body.values[dummy] = body.op("Gather", read, trip, axis=0)
    lift_applies(body, [core_node])
    results = [body.cast(body.value(o), want.type.dtype) for o, want in zip(core_node.outputs, node.outputs, strict=True)]
    body.graph.set_outputs([Value.constant(np.array(True)), *results])
    loop = ctx.builder.node("Loop", [count, Value.constant(np.array(True)), *flat],
                            dict(body=body.graph, n_carried=0, n_scan=len(results)))
    outs = []
    for stacked, core_out in zip(loop.outputs, core_node.outputs, strict=True):
        core_shape = ctx.pack([ctx.ints(d) if d is not None else ctx.dim(stacked, 1 + k) for k, d in enumerate(core_out.type.shape)])
        outs.append(ctx.op("Reshape", stacked, ctx.op("Concat", ctx.pack(batch), core_shape, axis=0)))
    return outs
