"""`ScalarLoop` as an ONNX `Loop` stepping every element at once.

Each trip runs the body on the whole (broadcast) state, and keeps the new state
only where the element is still active: its trip number is below its own
`n_steps` and, for the while form, its `until` has not held yet. The loop runs
max(n_steps) trips at most and, in the while form, stops as soon as no element
is active, so it costs as many trips as the slowest element needs. The body's
constants are read from the outer scope, unbroadcast.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ptonnx.ir.types import FLOAT_DTYPES
from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.elementwise import where, where_keeping_zero_sign
from ptonnx.lowering.registry import EMITTERS


def _broadcast(ctx, name: str, shapes: list[str]) -> str:
    """`name` expanded to the broadcast shape of itself and `shapes` (Expand broadcasts both ways)."""
    for shape in shapes:
        name = ctx.emit1("Expand", [name, shape])
    return name


def _any(ctx, flags: str) -> str:
    """Whether any element of the bool tensor `flags` holds (false for none)."""
    count = ctx.emit1("ReduceSum", [ctx.emit1("Cast", [flags], to=TensorProto.INT64)], keepdims=0)
    return ctx.emit1("Greater", [count, ctx.const(np.array(0, np.int64))])


def emit_scalar_loop(ctx, node, inputs):
    from ptonnx.lowering.lower import lower_body

    body, n_state, is_while = node.attrs["body"], node.attrs["n_state"], node.attrs["is_while"]
    n_steps, *args = inputs
    shapes = [ctx.emit1("Shape", [name]) for v, name in zip(node.inputs, inputs) if v.type.ndim > 0]
    state = [_broadcast(ctx, name, shapes) for name in args[:n_state]]
    constants = args[n_state:]
    steps = ctx.emit1("Cast", [n_steps], to=TensorProto.INT64)
    flat = ctx.emit1("Reshape", [steps, ctx.ints([-1])])
    trips = ctx.emit1("ReduceMax", [ctx.emit1("Concat", [flat, ctx.ints([0])], axis=0)], keepdims=0)
    carried = list(state)
    if is_while:
        carried.append(ctx.emit1("ConstantOfShape", [ctx.emit1("Shape", [state[0]])], value=helper.make_tensor("f", TensorProto.BOOL, [1], [False])))

    sub = ctx.child()
    trip, cond_in = sub.unique("trip"), sub.unique("cond_in")
    state_in = [sub.unique(f"state{i}_in") for i in range(n_state)]
    done_in = sub.unique("done_in") if is_while else None
    nodes, outs = lower_body(sub, body, state_in + constants, out_hint="step")
    sub.nodes.extend(nodes)
    active = sub.emit1("Less", [trip, steps])
    if is_while:
        active = sub.emit1("And", [active, sub.emit1("Not", [done_in])])
    new_state = []
    for i, (v, new, old) in enumerate(zip(body.inputs, outs, state_in)):
        pick = where_keeping_zero_sign if v.dtype in FLOAT_DTYPES else where
        new_state.append(sub.emit1("Identity", [pick(sub, active, new, old, v.dtype)], hint=f"state{i}_out"))
    results = list(new_state)
    if is_while:
        done = sub.emit1("Or", [done_in, sub.emit1("And", [active, outs[-1]])], hint="done_out")
        following = sub.emit1("Less", [sub.emit1("Add", [trip, sub.const(np.array(1, np.int64))]), steps])
        cond_out = _any(sub, sub.emit1("And", [following, sub.emit1("Not", [done])]))
        results.append(done)
    else:
        cond_out = sub.emit1("Identity", [cond_in])
    value_info = lambda name, dtype, shape=None: helper.make_tensor_value_info(name, onnx_dtype(dtype), shape)  # noqa: E731
    graph = helper.make_graph(
        sub.nodes, ctx.unique(body.name),
        [value_info(trip, "int64", []), value_info(cond_in, "bool", []),
         *[value_info(n, v.dtype) for n, v in zip(state_in, body.inputs)],
         *([value_info(done_in, "bool")] if is_while else [])],
        [value_info(cond_out, "bool", []), *[value_info(n, v.dtype) for n, v in zip(results, node.outputs)]],
    )
    true = ctx.const(np.array(True))
    return ctx.emit("Loop", [trips, true, *carried], len(node.outputs), hint="loop", body=graph)


EMITTERS["ScalarLoop"] = emit_scalar_loop  # the body's ops are legalised one by one; the loop itself moves no arithmetic
