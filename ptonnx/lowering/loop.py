"""An ONNX `Loop` for iterations whose trip count depends on the data (continued
fractions, Newton's method), built from `Ex` formulas.

`iterate(state, step, max_trips)` emits one `Loop` node through the one Loop builder
(`ptonnx.lowering.control_flow.build_loop`), its body in a child context (constants are
outer initializers the body reads). Every value the step reads is loop-carried (`state`,
whose captured operands pass through unchanged). The loop stops when `step` says no element needs another trip, or
after `max_trips`; callers detect the elements that had not converged by then from
the state they carry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from onnx import TensorProto, helper

from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.control_flow import build_loop
from ptonnx.lowering.expr import Ex


def any_above(values: Sequence[Ex], tolerance: float) -> Ex:
    """A bool scalar: whether some element of some value exceeds `tolerance` (false for
    empty values and NaN elements; callers keep NaN out of what they test)."""
    ctx = values[0].ctx
    parts = [ctx.emit1("Reshape", [v.name, ctx.ints([-1])]) for v in values]
    parts.append(ctx.const(np.zeros(1, dtype=values[0].dtype)))
    flat = ctx.emit1("Concat", parts, axis=0)
    worst = ctx.emit1("ReduceMax", [flat], keepdims=0)
    return Ex(ctx, ctx.emit1("Greater", [worst, ctx.scalar(tolerance, values[0].dtype)]), "bool")


def iterate(state: Sequence[Ex], step: Callable[[Ex, list[Ex]], tuple[list[Ex], Ex]], max_trips: int) -> list[Ex]:
    """Run `step(m, state) -> (new state, keep going)` until keep going (a bool scalar
    `Ex`) is false or `max_trips` trips are done; `m` is the trip number 1, 2, ... in
    the dtype of `state[0]`. Returns the final state (values keep their dtypes, and
    `step` must keep each value's shape)."""
    ctx = state[0].ctx
    body = ctx.child()
    trip = body.unique("trip")
    cond_in = body.unique("cond_in")
    inner = [Ex(body, body.unique(f"{s.name}_in"), s.dtype) for s in state]
    m = Ex(body, trip, "int64").cast(state[0].dtype) + 1.0
    new_state, keep_going = step(m, inner)
    if len(new_state) != len(state):
        raise ValueError("a Loop step must return one value per state value")
    outputs = [body.emit1("Identity", [keep_going.name], hint="cond_out")]
    outputs += [body.emit1("Identity", [s.name], hint="carried") for s in new_state]
    info = lambda name, dtype: helper.make_tensor_value_info(name, onnx_dtype(dtype), None)  # noqa: E731
    trips = ctx.const(np.asarray(max_trips, dtype=np.int64), "max_trips")
    start = ctx.const(np.asarray(True), "loop_start")
    results = build_loop(
        ctx, body.nodes, "loop_body", trip, cond_in, [info(v.name, v.dtype) for v in inner],
        [helper.make_tensor_value_info(outputs[0], TensorProto.BOOL, []), *(info(o, s.dtype) for o, s in zip(outputs[1:], state))],
        [trips, start, *(s.name for s in state)],
    )
    return [Ex(ctx, r, s.dtype) for r, s in zip(results, state)]
