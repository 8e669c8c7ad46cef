"""Rejection samplers as IR `Loop`s: every element redraws until it is accepted.

`until_accepted` builds one `Loop` whose state is the accepted values and a mask of the
elements accepted so far. Each trip draws fresh standard variates for every element
(`Trip`: normals and uniforms from one Threefry call, on a lane of its own: the trip
number, so no two trips share bits), asks `propose` for a candidate and whether it is
accepted, and keeps the candidate where an element is accepted for the first time. The
loop ends when every element is accepted, or after `MAX_TRIPS` trips; then a `Check`
fails the run rather than return an element never accepted (the samplers here accept
with probability > 0.5 per trip, so 64 trips leave one element out with probability
below 2**-64).

A sampler draws under a key of its own (`sampler_key`: threefry(op key, (2**32 - 1, j))),
so an op may run several samplers (beta's two gammas) each with its 256 lanes: lane 0 for
what it draws outside the loop, lane t for trip t = 1 .. MAX_TRIPS. The counter
(2**32 - 1, j) of the op's key is lane 255 at elements past 2**56 - 2**32: never drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ptonnx.decompositions.expr import Ex, Scope, sqrt, where
from ptonnx.decompositions.random.bits import derive, lane_bits, open_unit
from ptonnx.decompositions.random.portable import log, sincos_pi
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.ir.dims import contents

#: the most trips a rejection loop runs before failing the run
MAX_TRIPS = 64
#: the counter's first word for a sampler's key (its second numbers the op's samplers)
SAMPLER = 0xFFFFFFFF
#: what the run fails with when an element is never accepted
NOT_ACCEPTED = "{op}: the rejection sampler accepted not every draw within {trips} trips"


def sampler_key(key: tuple[Ex, Ex], which: int) -> tuple[Ex, Ex]:
    """The key of an op's sampler number `which`: threefry(key, (2**32 - 1, which))."""
    return derive(key, SAMPLER, which)


def _slice(x: Ex, start: Ex, stop: Ex) -> Ex:
    """x[start:stop] of a vector, for int64 scalar bounds."""
    one = Ex(start.scope, start.scope.constant([1]))
    return x.op("Slice", start.op("Unsqueeze", axes=(0,)), stop.op("Unsqueeze", axes=(0,)), one, axes=(0,))


class Trip:
    """One trip's standard variates for every one of the `n` elements (float64 vectors):
    `normals` standard normals and `uniforms` uniforms on (0, 1) each, from one Threefry call
    on lane `lane` (a uint32 `Ex`). The normals are Box-Muller's, r cos t and r sin t of one
    pair of uniforms (`pairs` = ceil(normals n / 2) pairs)."""

    def __init__(self, key: tuple[Ex, Ex], lane: Ex, n: Ex, pairs: Ex, normals: int, uniforms: int):
        self.n = n
        total = pairs * 2 + n * uniforms if uniforms else pairs * 2
        u = open_unit(lane_bits(key, lane, total))
        zero = n.const(0)
        self.normals: list[Ex] = []
        if normals:
            radius = sqrt(log(_slice(u, zero, pairs), normal=True) * -2.0)
            sin, cos = sincos_pi(_slice(u, pairs, pairs * 2) * 2.0)  # the turn 2 pi u
            both = (radius * cos).op("Concat", radius * sin, axis=0)
            self.normals = [_slice(both, n * k, n * (k + 1)) for k in range(normals)]
        self.uniforms = [_slice(u, pairs * 2 + n * k, pairs * 2 + n * (k + 1)) for k in range(uniforms)]


def _enter(scope: Scope, body: Graph, v: Ex, name: str, inputs: list) -> Ex:
    """`v` inside the body: a constant where its contents are known, else a body input
    (recorded in `inputs` with the outer value it receives)."""
    known = contents(v.value)
    items = known if isinstance(known, tuple) else (known,)
    if v.value.const is not None or (v.value.type.ndim <= 1 and all(isinstance(k, int) for k in items)):
        array = v.value.const if v.value.const is not None else np.asarray(known, dtype=v.dtype)
        return Ex(scope, Value.constant(np.asarray(array, dtype=v.dtype)))
    inner = Ex(scope, body.add_input(v.value.type, name))
    inputs.append((inner.value, v.value))
    return inner


def zeros(n: Ex) -> Ex:
    """A float64 vector of n zeros (+0.0), made without Expand: onnxruntime 1.32's basic
    optimiser drops an Expand of a 1-element value to a constant shape [0] as if it did nothing."""
    return n.const(0).op("Range", n, n.const(1)).cast("float64") * 0.0


def until_accepted(key: tuple[Ex, Ex], n: Ex, params: Sequence[Ex],
                   propose: Callable[[Trip, list[Ex]], tuple[Ex, Ex]], *, normals: int, uniforms: int, op: str,
                   max_trips: int = MAX_TRIPS, skip: Ex | None = None) -> Ex:
    """For each of `n` elements (a float64 vector), the first candidate accepted:
    `propose(trip, params) -> (candidate, accepted)` builds, inside the loop's body, from the
    trip's variates (`Trip`) and the parameters (`params`, outer vectors of n or scalars,
    entering the body as invariants), a candidate and a bool mask, both vectors of n. Trip t draws on lane t of `key` (t = 1 .. max_trips); the run fails (a `Check`
    naming `op`) if some element is not accepted after `max_trips` trips. Elements where `skip` (a bool
    vector of n) holds are not drawn (they give 0), and no trip runs if every element is skipped."""
    outer = n.scope
    body = Graph("rejection_body")
    scope = Scope(Builder(body, source=outer.builder.source))
    trip = body.add_input(TensorType("int64", ()), "trip")
    start = zeros(n)
    none = start < 0.0 if skip is None else skip
    value = Ex(scope, body.add_input(start.value.type, "value"))
    accepted = Ex(scope, body.add_input(none.value.type, "accepted"))
    fixed: list = []
    pairs = (n * normals + 1).op("IntDiv", 2)
    inner_key = tuple(_enter(scope, body, k, f"key{i}", fixed) for i, k in enumerate(key))
    inner_n, inner_pairs = (_enter(scope, body, v, name, fixed) for v, name in ((n, "n"), (pairs, "pairs")))
    inner_params = [_enter(scope, body, p, f"param{i}", fixed) for i, p in enumerate(params)]
    lane = Ex(scope, trip).cast("uint32") + 1
    draws = Trip(inner_key, lane, inner_n, inner_pairs, normals, uniforms)
    candidate, ok = propose(draws, inner_params)
    newly = ok & accepted.op("Not")
    now = accepted | ok
    going = now.op("Not").op("ReduceAny", axes=tuple(range(now.value.type.ndim)))
    body.inputs = [trip, value.value, accepted.value, *(inner for inner, _ in fixed)]
    body.set_outputs([going.value, where(newly, candidate, value).value, now.value])
    trips = Value.constant(np.asarray(max_trips, dtype=np.int64))
    first = Value.constant(np.asarray(True)) if skip is None else none.op("Not").op("ReduceAny", axes=(0,)).value
    loop = outer.builder.node("Loop", [trips, first, start.value, none.value, *(v for _, v in fixed)],
                              dict(body=body, n_carried=2, n_scan=0))
    result, done = (Ex(outer, v) for v in loop.outputs)
    return result.op("Check", done, message=NOT_ACCEPTED.format(op=op, trips=max_trips), exception="builtins:RuntimeError")


__all__ = ["MAX_TRIPS", "Trip", "sampler_key", "until_accepted", "zeros"]
