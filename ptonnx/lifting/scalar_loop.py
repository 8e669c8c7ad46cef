"""PyTensor's `ScalarLoop` (and its subclass `Grad2F1Loop`) as the IR's `Loop`.

A ScalarLoop runs a scalar graph `n_steps` times on each element, carrying a
state; the while form also stops an element once the graph's last output
(`until`) holds, and returns that flag. The IR has one loop, `Loop`, so the
passes see (and hoist from) this one too: each trip steps every element at
once, on the whole broadcast state, and keeps the new state only where the
element is still active: its trip number is below its own `n_steps`, its
`until` has not held yet, and its outcome is not settled by a NaN (below). The
Loop runs max(n_steps) trips at most and, in the while form, stops as soon as
no element is active, so it costs as many trips as the slowest element needs.

The scalar graph is lifted twice: once on 0-d values, for `ptonnx.ir.nan_flow`
to find the inputs whose NaN settles an element (NaN results, never stopping:
PyTensor's gammainc gradient loops run 100,000 trips for a NaN argument, the
Loop leaves the element at once), and once on the broadcast tensors, as the
Loop's step.
"""

from __future__ import annotations

import numpy as np
import pytensor.scalar.loop as psl

from ptonnx.ir import TensorType, Value
from ptonnx.ir.nan_flow import FALSE, NAN, sure_values
from ptonnx.ir.types import FLOAT_DTYPES, broadcast_shapes
from ptonnx.lifting.checks import check
from ptonnx.lifting.context import LiftContext
from ptonnx.lifting.elemwise import _special, lift_inner_graph


def _scalar_body(scalar_op, where):
    """The loop's scalar graph on 0-d values (inputs: state then constants)."""
    body = LiftContext(f"{scalar_op.name or 'scalar_loop'}_scalar")
    inputs = [body.graph.add_input(TensorType(v.type.dtype, ()), v.name or f"arg{i}") for i, v in enumerate(scalar_op.fgraph.inputs)]
    body.graph.set_outputs(lift_inner_graph(body, scalar_op, inputs, where))
    return body.graph


def _poisoning_inputs(body, n_state: int, is_while: bool, used: list[int]) -> list[int]:
    """Inputs that, once NaN, stay NaN, keep `until` false and make every used result NaN
    (`ptonnx.ir.nan_flow`): an element with such a NaN has its outcome settled."""
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


def _used_results(ctx, where, n_state: int) -> list[int]:
    """The state results the lifted graph reads (all of them when its clients are unknown)."""
    outputs = where.owner.outputs if where is not None and where.owner is not None else None
    if ctx.clients is None or outputs is None:
        return list(range(n_state))
    return [i for i in range(n_state) if ctx.clients.get(outputs[i])]


def _fold(ctx, op: str, values: list[Value]) -> Value:
    result = values[0]
    for v in values[1:]:
        result = ctx.op(op, result, v)
    return result


def _broadcast_all(ctx, values: list[Value], everything: list[Value]) -> list[Value]:
    """`values` expanded to the broadcast shape of `everything` (Expand moves no arithmetic,
    so a -0.0 stays one)."""
    shape = broadcast_shapes(*(v.shape for v in everything))
    if all(isinstance(d, int) for d in shape):
        target = [ctx.ints(shape)]
    else:
        target = [ctx.shape_of(v) for v in everything if v.type.ndim]
    out = []
    for v in values:
        for t in target:
            v = v if v.shape == shape else ctx.op("Expand", v, t)
        out.append(v)
    return out


@_special(psl.ScalarLoop)
def _lift_scalar_loop(ctx, scalar_op, inputs, out_dtypes, names, where):
    """an IR `Loop` stepping every element at once; `Grad2F1Loop` too"""
    n_steps, *args = inputs
    n_state, is_while = len(scalar_op.outputs) - scalar_op.is_while, scalar_op.is_while
    args = [ctx.cast(v, t.dtype) for v, t in zip(args, scalar_op.inputs_type, strict=True)]
    if not is_while:  # PyTensor raises for a for-loop with a negative count; a while loop skips
        at_least_zero = ctx.op("GreaterOrEqual", n_steps, Value.constant(np.zeros((), n_steps.dtype)))
        nonnegative = ctx.op("ReduceAll", at_least_zero, axes=tuple(range(n_steps.type.ndim)))
        n_steps = check(ctx, n_steps, [nonnegative], "ScalarLoop does not have a termination condition.", ValueError)
    steps = ctx.cast(n_steps, "int64")
    state = _broadcast_all(ctx, args[:n_state], [steps, *args])
    carried = list(state)
    if is_while:
        (not_done,) = _broadcast_all(ctx, [Value.constant(np.array(False))], [steps, *args])
        carried.append(not_done)
    flat = ctx.op("Reshape", steps, ctx.ints([-1]))
    trips = ctx.op("ReduceMax", ctx.op("Concat", flat, ctx.ints([0]), axis=0), axes=(0,))

    used = _used_results(ctx, where, n_state)
    poisons = _poisoning_inputs(_scalar_body(scalar_op, where), n_state, is_while, used)
    body = _step_body(scalar_op, where, carried, steps, args[n_state:], n_state, is_while, poisons, used)
    loop = ctx.builder.node(
        "Loop", [trips, Value.constant(np.array(True)), *carried, steps, *args[n_state:]],
        dict(body=body, n_carried=len(carried), n_scan=0), names=names,
    )
    return list(loop.outputs)


def _step_body(scalar_op, where, carried, steps, constants, n_state, is_while, poisons, used):
    """The Loop's body: (trip, *state[, done], steps, *constants) -> (keep going, *state[, done])."""
    b = LiftContext(f"{scalar_op.name or 'scalar_loop'}_body")
    trip = b.graph.add_input(TensorType("int64", ()), "trip")
    state_in = [b.graph.add_input(v.type, v.name or f"state{i}") for i, v in enumerate(carried[:n_state])]
    done_in = b.graph.add_input(carried[-1].type, "done") if is_while else None
    steps_in = b.graph.add_input(steps.type, "steps")
    const_in = [b.graph.add_input(v.type, v.name or f"const{i}") for i, v in enumerate(constants)]
    outs = lift_inner_graph(b, scalar_op, [*state_in, *const_in], where)
    every = [*state_in, *const_in]

    nan: dict[Value, Value] = {}

    def isnan(v: Value) -> Value:
        if v not in nan:
            nan[v] = b.op("IsNaN", v)
        return nan[v]

    def stuck(state: list[Value]) -> Value:
        """where an element's outcome is settled: a poisoning input is NaN, and so is every
        used result already (they stay so, so the loop may leave the element)."""
        causes = [isnan(state[j] if j < n_state else every[j]) for j in poisons]
        return _fold(b, "And", [_fold(b, "Or", causes), *(isnan(state[i]) for i in used)])

    active = b.op("Less", trip, steps_in)
    if is_while:
        active = b.op("And", active, b.op("Not", done_in))
    if poisons:
        active = b.op("And", active, b.op("Not", stuck(state_in)))
    new_state = [b.op("Where", active, new, old) for new, old in zip(outs, state_in, strict=False)]  # a while loop's last output is its done flag
    results = list(new_state)
    following = b.op("Less", b.op("Add", trip, b.ints(1)), steps_in)
    going = None
    if is_while:
        done = b.op("Or", done_in, b.op("And", active, outs[-1]))
        results.append(done)
        going = b.op("And", following, b.op("Not", done))
    elif poisons:
        going = following
    if going is not None and poisons:
        going = b.op("And", going, b.op("Not", stuck(new_state)))
    if going is None:
        keep_going = Value.constant(np.array(True))
    else:
        keep_going = b.op("ReduceAny", going, axes=tuple(range(going.type.ndim)))
    b.graph.set_outputs([keep_going, *results])
    return b.graph
