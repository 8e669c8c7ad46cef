"""Iterations whose trip count depends on the data (continued fractions, Newton's
method) as the IR's `Loop`, built from `Ex` formulas.

`iterate(state, step, max_trips)` builds one `Loop` node whose body is the step
written over the body's own inputs (a body reads nothing from outside). A state
value the step passes on unchanged becomes an invariant, not a carried value, so
the hoisting pass can move what depends only on such values out of the loop.
The loop stops when `step` says no element needs another trip, or after
`max_trips`; callers detect the elements that had not converged by then from the
state they carry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ptonnx.decompositions.expr import Ex, Scope
from ptonnx.ir import Builder, Graph, TensorType, Value


def any_above(values: Sequence[Ex], tolerance: float) -> Ex:
    """A bool scalar: whether some element of some value exceeds `tolerance` (false for
    empty values and NaN elements; callers keep NaN out of what they test)."""
    flags = [(v > tolerance).op("ReduceAny", axes=tuple(range(v.value.type.ndim))) for v in values]
    result = flags[0]
    for flag in flags[1:]:
        result = result | flag
    return result


def iterate(state: Sequence[Ex], step: Callable[[Ex, list[Ex]], tuple[list[Ex], Ex]], max_trips: int) -> list[Ex]:
    """Run `step(m, state) -> (new state, keep going)` until keep going (a bool scalar
    `Ex`) is false or `max_trips` trips are done; `m` is the trip number 1, 2, ... in
    the dtype of `state[0]`. Returns the final state (values keep their dtypes, and
    `step` must keep each value's shape)."""
    outer = state[0].scope
    body = Graph("iterate_body")
    scope = Scope(Builder(body, source=outer.builder.source))
    trip = body.add_input(TensorType("int64", ()), "trip")
    inner = [Ex(scope, body.add_input(s.value.type, f"state{i}")) for i, s in enumerate(state)]
    m = Ex(scope, trip).cast(state[0].dtype) + 1.0
    new_state, keep_going = step(m, inner)
    if len(new_state) != len(state):
        raise ValueError("a Loop step must return one value per state value")
    carried = [i for i, (new, old) in enumerate(zip(new_state, inner, strict=True)) if new.value is not old.value]
    invariant = [i for i in range(len(state)) if i not in carried]
    body.inputs = [trip, *(inner[i].value for i in carried), *(inner[i].value for i in invariant)]
    body.set_outputs([keep_going.value, *(new_state[i].value for i in carried)])
    trips = Value.constant(np.asarray(max_trips, dtype=np.int64))
    loop = outer.builder.node(
        "Loop", [trips, Value.constant(np.asarray(True)), *(state[i].value for i in carried), *(state[i].value for i in invariant)],
        dict(body=body, n_carried=len(carried), n_scan=0),
    )
    final = list(state)
    for i, value in zip(carried, loop.outputs, strict=True):
        final[i] = Ex(outer, value)
    return final
