"""Ops that own body graphs: `Loop` and `If` (ONNX's, with explicit outer reads).

Passes, `verify` and the printer walk into the bodies (`ptonnx.ir.core.bodies`).
PyTensor's `Scan` and `ScalarLoop` both lift to `Loop` (`lifting/scan.py`,
`lifting/scalar_loop.py`), its `IfElse` to `If`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.errors import TypeRuleError
from ptonnx.ir.core import Graph
from ptonnx.ir.schema import REQUIRED, define
from ptonnx.ir.types import TensorType


# -- Loop and If: the IR's structured control flow ------------------------------------
#
# `Loop(trip_count, cond, *carried, *invariants) {body, n_carried, n_scan}` runs `body`
# while the trip number is below `trip_count` and the last `cond` holds (ONNX's Loop, with
# the values the body reads from outside passed explicitly). The body takes
# (trip number: int64 scalar, *carried, *invariants) and gives (keep going: bool scalar,
# *new carried, *per-trip values); the node gives the final carried values, then each
# per-trip value stacked on a new axis 0 (after no trip: (0, *its sizes), `per_trip_shape`). A carried value keeps its dtype and rank, but
# its shape may change from trip to trip.
#
# `If(cond, *args) {then_body, else_body}` runs one body on `args`; both take the args
# and give outputs of the same dtypes and ranks. Nodes that only one branch needs live
# in that branch's body, so the other branch costs nothing and its checks cannot fire.


def _need_flow(op: str, ok: bool, why) -> None:
    if not ok:
        raise TypeRuleError(f"{op}: {why()}")


def _dim_map(pairs) -> dict:
    """Each symbolic dim of a body input -> the dim of the outer value it receives."""
    found: dict = {}
    for inner, outer in pairs:
        for d, o in zip(inner.shape, outer.shape, strict=True):
            if isinstance(d, str):
                found[d] = o if found.get(d, o) == o else None
    return found


def _outer_dim(d, dims: dict):
    return d if isinstance(d, int) else dims.get(d)


def _loop_body_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    body, n_carried, n_scan = a["body"], a["n_carried"], a["n_scan"]
    need = lambda ok, why: _need_flow("Loop", ok, why)  # noqa: E731
    need(isinstance(body, Graph), lambda: f"`body` must be an IR graph, got {type(body).__name__}")
    args = types[2:]
    need(types[0].dtype == "int64" and types[0].ndim == 0, lambda: f"the trip count must be an int64 scalar, got {types[0]}")
    need(types[1].dtype == "bool" and types[1].ndim == 0, lambda: f"the condition must be a bool scalar, got {types[1]}")
    need(0 <= n_carried <= len(args), lambda: f"n_carried={n_carried} for {len(args)} inputs")
    need(len(body.inputs) == 1 + len(args), lambda: f"the body takes {len(body.inputs)} inputs; the node gives 1 + {len(args)}")
    need(len(body.outputs) == 1 + n_carried + n_scan, lambda: f"the body gives {len(body.outputs)} outputs, not 1 + {n_carried} + {n_scan}")
    trip = body.inputs[0].type
    need(trip.dtype == "int64" and trip.ndim == 0, lambda: f"the body's first input (trip number) must be an int64 scalar, is {trip}")
    flag = body.outputs[0].type
    need(flag.dtype == "bool" and flag.ndim == 0, lambda: f"the body's first output (keep going) must be a bool scalar, is {flag}")
    for i, (t, v) in enumerate(zip(args, body.inputs[1:], strict=True)):
        need(t.dtype == v.dtype and t.ndim == v.type.ndim, lambda: f"input {i + 2} is {t} where the body takes {v.type}")
    out = []
    for i in range(n_carried):
        before, after = body.inputs[1 + i].type, body.outputs[1 + i].type
        need(before.dtype == after.dtype and before.ndim == after.ndim, lambda: f"carried value {i} is {before} but updated as {after}")
        # a size survives the trips only where the body provably keeps it (the same static or symbolic dim)
        kept = tuple(o if b is not None and b == f else None for o, b, f in zip(args[i].shape, before.shape, after.shape, strict=True))
        out.append(TensorType(before.dtype, kept))
    dims = _dim_map(zip(body.inputs[1:], args, strict=True))
    trips = _known_trips(body, a.get("trip_count"), a.get("cond"))
    for v in body.outputs[1 + n_carried:]:
        # a per-trip size known without running a trip (static, or an outer value's): also a
        # zero-trip loop's, as in PyTensor's Scan; the others are unknown (0 if no trip runs)
        out.append(TensorType(v.dtype, (trips, *(_outer_dim(d, dims) for d in v.shape))))
    return out


def _known_trips(body: Graph, trip_count, cond):
    """How many trips a for-loop runs (its count known, its condition true and kept true by a
    constant), or None: the per-trip values' leading size."""
    keep_going = body.outputs[0].const
    if isinstance(trip_count, int) and trip_count >= 0 and cond == 1 and keep_going is not None and bool(keep_going):
        return trip_count
    return None


def per_trip_shape(body: Graph, value, arrays) -> tuple:
    """The shape of a per-trip value of a Loop that runs no trip: its static sizes, the outer
    sizes its symbolic dims name (from the arrays the body receives), 0 where unknown."""
    sizes: dict = {}
    for inner, a in zip(body.inputs[1:], arrays, strict=True):
        for d, n in zip(inner.shape, np.shape(a), strict=True):
            if isinstance(d, str):
                sizes.setdefault(d, n)
    return tuple(d if isinstance(d, int) else sizes.get(d, 0) for d in value.shape)


def run_loop(trip_count, cond, *arrays, body: Graph, n_carried: int, n_scan: int):
    """ONNX's Loop on NumPy arrays (the reference its lowering follows)."""
    from ptonnx.ir.interpret import interpret

    carried, invariants = list(arrays[:n_carried]), list(arrays[n_carried:])
    stacked: list[list[np.ndarray]] = [[] for _ in range(n_scan)]
    trip, going = 0, bool(cond)
    while going and trip < int(trip_count):
        with np.errstate(all="ignore"):
            results = interpret(body, np.int64(trip), *carried, *invariants)
        going, carried = bool(results[0]), results[1 : 1 + n_carried]
        for store, r in zip(stacked, results[1 + n_carried:], strict=True):
            store.append(r)
        trip += 1
    scans = []
    for store, v in zip(stacked, body.outputs[1 + n_carried:], strict=True):
        scans.append(np.stack(store) if store else np.zeros((0, *per_trip_shape(body, v, arrays)), v.dtype))
    return tuple(np.asarray(c) for c in carried) + tuple(scans)


define(
    "Loop",
    inputs=("trip_count: int64", "cond: bool", "*args?: each"),
    outputs=("*results?: each",),
    dtypes={},
    type_rule=_loop_body_rule,
    semantics=run_loop,
    reads=("trip_count", "cond"),
    attributes={"body": (Graph, REQUIRED), "n_carried": (int, REQUIRED), "n_scan": (int, REQUIRED)},
    traits=("no_fold",),
    family="control",
    doc="`body` (trip, carried, invariants -> keep going, carried, per-trip values) run while trip < trip_count and cond",
)


def _if_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    then_body, else_body = a["then_body"], a["else_body"]
    need = lambda ok, why: _need_flow("If", ok, why)  # noqa: E731
    need(types[0].dtype == "bool" and types[0].ndim == 0, lambda: f"the condition must be a bool scalar, got {types[0]}")
    args = types[1:]
    for name, body in (("then", then_body), ("else", else_body)):
        need(isinstance(body, Graph), lambda: f"`{name}_body` must be an IR graph, got {type(body).__name__}")
        need(len(body.inputs) == len(args), lambda: f"the {name} body takes {len(body.inputs)} inputs; the node gives {len(args)}")
        for i, (t, v) in enumerate(zip(args, body.inputs, strict=True)):
            need(t.dtype == v.dtype and t.ndim == v.type.ndim, lambda: f"input {i + 1} is {t} where the {name} body takes {v.type}")
    need(len(then_body.outputs) == len(else_body.outputs), lambda: "the two bodies give different numbers of outputs")
    then_dims, else_dims = _dim_map(zip(then_body.inputs, args, strict=True)), _dim_map(zip(else_body.inputs, args, strict=True))
    out = []
    for i, (t, e) in enumerate(zip(then_body.outputs, else_body.outputs, strict=True)):
        need(t.dtype == e.dtype and t.type.ndim == e.type.ndim, lambda: f"output {i} is {t.type} in one branch, {e.type} in the other")
        shape = [_outer_dim(d, then_dims) for d in t.shape]
        out.append(TensorType(t.dtype, tuple(d if d == _outer_dim(f, else_dims) else None for d, f in zip(shape, e.shape, strict=True))))
    return out


def run_if(cond, *arrays, then_body: Graph, else_body: Graph):
    from ptonnx.ir.interpret import interpret

    with np.errstate(all="ignore"):
        return tuple(interpret(then_body if bool(cond) else else_body, *arrays))


define(
    "If",
    inputs=("cond: bool", "*args?: each"),
    outputs=("*results: each",),
    dtypes={},
    type_rule=_if_rule,
    semantics=run_if,
    attributes={"then_body": (Graph, REQUIRED), "else_body": (Graph, REQUIRED)},
    traits=("no_fold",),
    family="control",
    doc="runs `then_body` or `else_body` on the args: only the branch taken costs anything",
)
