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

from ptonnx.ir.nan_flow import FALSE, NAN, sure_values
from ptonnx.ir.types import FLOAT_DTYPES
from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.control_flow import build_loop
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


def _poisoning_inputs(node) -> list[int]:
    """Body inputs that, once NaN, stay NaN, keep `until` false and make every used result
    NaN (`ptonnx.ir.nan_flow`): an element with such a NaN has its outcome settled."""
    body, n_state, is_while = node.attrs["body"], node.attrs["n_state"], node.attrs["is_while"]
    used = [i for i in range(n_state) if node.outputs[i].num_uses]
    if any(body.inputs[i].dtype not in FLOAT_DTYPES for i in used):
        return []
    found = []
    for j, v in enumerate(body.inputs):
        if v.dtype not in FLOAT_DTYPES:
            continue
        sure = sure_values(body, {j})
        if (j >= n_state or sure[j] == NAN) and (not is_while or sure[-1] == FALSE) and all(sure[i] == NAN for i in used):
            found.append(j)
    return found


def _any_nan(ctx, names: list[str]) -> str | None:
    flags = [ctx.emit1("IsNaN", [n]) for n in names]
    return None if not flags else flags[0] if len(flags) == 1 else _fold(ctx, "Or", flags)


def _fold(ctx, op: str, names: list[str]) -> str:
    result = names[0]
    for n in names[1:]:
        result = ctx.emit1(op, [result, n])
    return result


def _stuck_emitter(sub, node, poisons: list[int], constant_nan: str | None):
    """state -> where an element's outcome is settled: a poisoning input is NaN and so is
    every used result already (they stay so: the loop may leave the element)."""
    n_state = node.attrs["n_state"]
    used = [i for i in range(n_state) if node.outputs[i].num_uses]

    def stuck(state: list[str]) -> str:
        causes = [sub.emit1("IsNaN", [state[j]]) for j in poisons if j < n_state]
        cause = _fold(sub, "Or", causes + ([constant_nan] if constant_nan else []))
        return _fold(sub, "And", [cause, *(sub.emit1("IsNaN", [state[i]]) for i in used)])

    return stuck


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

    poisons = _poisoning_inputs(node)
    constant_nan = _any_nan(ctx, [args[j] for j in poisons if j >= n_state])

    sub = ctx.child()
    trip, cond_in = sub.unique("trip"), sub.unique("cond_in")
    state_in = [sub.unique(f"state{i}_in") for i in range(n_state)]
    done_in = sub.unique("done_in") if is_while else None
    nodes, outs = lower_body(sub, body, state_in + constants, out_hint="step")
    sub.nodes.extend(nodes)
    stuck = _stuck_emitter(sub, node, poisons, constant_nan)
    active = sub.emit1("Less", [trip, steps])
    if is_while:
        active = sub.emit1("And", [active, sub.emit1("Not", [done_in])])
    if poisons:
        active = sub.emit1("And", [active, sub.emit1("Not", [stuck(state_in)])])
    new_state = []
    for i, (v, new, old) in enumerate(zip(body.inputs, outs, state_in)):
        pick = where_keeping_zero_sign if v.dtype in FLOAT_DTYPES else where
        new_state.append(sub.emit1("Identity", [pick(sub, active, new, old, v.dtype)], hint=f"state{i}_out"))
    results = list(new_state)
    if is_while:
        done = sub.emit1("Or", [done_in, sub.emit1("And", [active, outs[-1]])], hint="done_out")
        following = sub.emit1("Less", [sub.emit1("Add", [trip, sub.const(np.array(1, np.int64))]), steps])
        going = sub.emit1("And", [following, sub.emit1("Not", [done])])
        if poisons:
            going = sub.emit1("And", [going, sub.emit1("Not", [stuck(new_state)])])
        cond_out = _any(sub, going)
        results.append(done)
    elif poisons:
        following = sub.emit1("Less", [sub.emit1("Add", [trip, sub.const(np.array(1, np.int64))]), steps])
        cond_out = _any(sub, sub.emit1("And", [following, sub.emit1("Not", [stuck(new_state)])]))
    else:
        cond_out = sub.emit1("Identity", [cond_in])
    value_info = lambda name, dtype: helper.make_tensor_value_info(name, onnx_dtype(dtype), None)  # noqa: E731
    true = ctx.const(np.array(True))
    return build_loop(
        ctx, sub.nodes, body.name, trip, cond_in,
        [*[value_info(n, v.dtype) for n, v in zip(state_in, body.inputs)], *([value_info(done_in, "bool")] if is_while else [])],
        [helper.make_tensor_value_info(cond_out, TensorProto.BOOL, []), *[value_info(n, v.dtype) for n, v in zip(results, node.outputs)]],
        [trips, true, *carried],
    )


EMITTERS["ScalarLoop"] = emit_scalar_loop  # the body's ops are legalised one by one; the loop itself moves no arithmetic
