"""Rejection samplers as IR `Loop`s: every element redraws until it is accepted.

`until_accepted` builds one `Loop` whose state is the accepted values and a mask of the
elements accepted so far. Each trip draws fresh standard variates for the elements not yet
accepted (`Trip`: normals and uniforms from one Threefry call, on a lane of its own: the trip
number, so no two trips share bits; an element's bits are those it would draw were every
element drawn), asks `propose` for a candidate and whether it is accepted, and writes the
accepted candidates into the state at their positions. After the first trip only the few
rejected elements draw again (a gamma's 5%, not all of them: the loop costs one trip and a
little). The
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
from ptonnx.decompositions.random.bits import MASK32, count, counters_at, derive, open_unit, threefry_node
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
    """One trip's standard variates for the pending elements `index` (int64 positions among the
    `n` elements, a vector of m): `normals` (0 or 1) standard normals and `uniforms` uniforms on
    (0, 1) each, float64 vectors of m, from one Threefry call on lane `lane` (a uint32 `Ex`).
    Element i takes the bits it would take were every element drawn: the normals are
    Box-Muller's r cos t (i < pairs) and r sin t (the partner i - pairs) of the pair of
    uniforms at counters j and pairs + j (j = i mod pairs, `pairs` = ceil(n / 2)); uniform k is at
    counter normals 2 pairs + k n + i. So the draws of an element do not depend on which others
    are still pending."""

    def __init__(self, key: tuple[Ex, Ex], lane: Ex, index: Ex, n: Ex, pairs: Ex, normals: int, uniforms: int,
                 small: bool):
        if normals not in (0, 1):
            raise ValueError(f"a trip draws 0 or 1 normals per element, not {normals}")
        parts = []
        if normals:
            first = index < pairs
            j = where(first, index, index - pairs)
            parts += [j, j + pairs]
        parts += [index + (pairs * 2 + n * k) if normals else index + n * k if k else index for k in range(uniforms)]
        every = parts[0].op("Concat", *parts[1:], axis=0) if len(parts) > 1 else parts[0]
        u = open_unit(threefry_node(*key, *counters_at(every, lane, small)))
        m = count(index.op("Shape"))
        self.normals: list[Ex] = []
        if normals:
            radius = sqrt(log(_part(u, m, 0), normal=True) * -2.0)
            sin, cos = sincos_pi(_part(u, m, 1) * 2.0)  # the turn 2 pi u
            self.normals = [radius * where(first, cos, sin)]
        self.uniforms = [_part(u, m, 2 * normals + k) for k in range(uniforms)]


def _part(u: Ex, m: Ex, k: int) -> Ex:
    """The k-th block of m elements of u (m an int64 scalar)."""
    return _slice(u, m * k, m * (k + 1))


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
    entering the body as invariants; inside, gathered at the pending elements), a candidate and
    a bool mask, both vectors of the pending elements. Trip t draws on lane t of `key`
    (t = 1 .. max_trips) for the elements not yet accepted only (trip 1: all), and writes the
    accepted candidates into the state by position; the run fails (a `Check`
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
    body_inputs = (value.value, accepted.value)
    fixed: list = []
    pairs = (n * normals + 1).op("IntDiv", 2)
    inner_key = tuple(_enter(scope, body, k, f"key{i}", fixed) for i, k in enumerate(key))
    inner_n, inner_pairs = (_enter(scope, body, v, name, fixed) for v, name in ((n, "n"), (pairs, "pairs")))
    inner_params = [_enter(scope, body, p, f"param{i}", fixed) for i, p in enumerate(params)]
    lane = Ex(scope, trip).cast("uint32") + 1
    # only the pending elements draw: trip 1 every element, then the few rejected
    pending = accepted.op("Not").op("NonZero").op("Reshape", [-1])
    known = contents(n.value)
    small = isinstance(known, int) and 2 * ((known * normals + 1) // 2) + known * uniforms <= MASK32
    draws = Trip(inner_key, lane, pending, inner_n, inner_pairs, normals, uniforms, small)
    candidate, ok = propose(draws, [p if p.value.type.ndim == 0 else p.op("Gather", pending, axis=0) for p in inner_params])
    hits = ok.op("NonZero").op("Reshape", [-1])
    value = value.op("ScatterFlat", pending.op("Gather", hits, axis=0), candidate.op("Gather", hits, axis=0))
    going = ok.op("Not").op("ReduceAny", axes=(0,))
    body.inputs = [trip, body_inputs[0], body_inputs[1], *(inner for inner, _ in fixed)]
    body.set_outputs([going.value, value.value, accepted.op("ScatterFlat", pending, ok).value])
    trips = Value.constant(np.asarray(max_trips, dtype=np.int64))
    first = Value.constant(np.asarray(True)) if skip is None else none.op("Not").op("ReduceAny", axes=(0,)).value
    loop = outer.builder.node("Loop", [trips, first, start.value, none.value, *(v for _, v in fixed)],
                              dict(body=body, n_carried=2, n_scan=0))
    result, done = (Ex(outer, v) for v in loop.outputs)
    return result.op("Check", done, message=NOT_ACCEPTED.format(op=op, trips=max_trips), exception="builtins:RuntimeError")


__all__ = ["MAX_TRIPS", "Trip", "sampler_key", "until_accepted", "zeros"]
