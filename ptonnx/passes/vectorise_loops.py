"""Loop vectorisation: what a for-loop computes trip by trip from its sequences alone is
computed once over the whole sequences, before the loop; a running sum it carries becomes a
CumSum. A gradient of a scan (PyMC's CustomDist of a scan, its log-density's gradient) is
such a loop: per-trip terms of sequence elements, accumulated into sums. onnxruntime and IREE
pay for every trip of a Loop (a few µs each); the vectorised form is a few nodes over arrays.

A body value is *mapped* when each trip's value is row t of an array computable before the
loop (`vectorised[v]`, of shape (trips, *v's shape)):
- `Gather(x, trip)` along axis 0, x read from outside: rows 0..trips-1 of x;
- an op with the `elementwise` trait whose operands are mapped or read from outside (or
  constants): the same op on the arrays, a mapped operand of lower rank given size-1 axes
  after its trip axis so that it broadcasts as it did in a trip;
- an op with the `batchable` trait (reductions, Unsqueeze, Slice, Gather, CumSum...) of a
  mapped first input, its other inputs read from outside: the op on the array, its `axis`
  or `axes` one further;
- a `Check` of a mapped value whose conditions are read from outside: the loop runs at least
  one trip (its trip count is static and positive) and would fail on the first;
- a carried value's update `c + m` (m mapped, c read by nothing else, static sizes all
  alike): rows 1..trips of CumSum(Concat(c's initial value, m's rows)), the sums in the
  loop's order, so every rounding is the loop's; the final value is the last row.

Only loops with a static trip count, a constant true condition and per-trip values of
static sizes are looked at (a loop that may stop early, or runs a number of trips known at
run time, is left as it is). Per-trip outputs and carried values that are mapped leave the
loop; the rest stays, and a loop left with nothing to give is removed.
"""

from __future__ import annotations

import attrs

from ptonnx.ir import Graph, Value
from ptonnx.ir.builder import Builder
from ptonnx.ir.core import Node
from ptonnx.ir.registry import get_schema
from ptonnx.passes.base import PassResult
from ptonnx.passes.hoist_loop_invariants import drop_unread_invariants


def _static_trips(loop: Node) -> int | None:
    """The loop's number of trips when it is a for-loop of a static, positive count."""
    body = loop.attrs["body"]
    count, going, keep_going = loop.inputs[0], loop.inputs[1], body.outputs[0]
    if count.const is None or going.const is None or keep_going.const is None:
        return None
    trips = int(count.const)
    return trips if trips > 0 and bool(going.const) and bool(keep_going.const) else None


def _static(v: Value) -> bool:
    return all(isinstance(d, int) for d in v.shape)


class _Vectoriser:
    """The mapped values of one loop's body and their arrays, built before the loop."""

    def __init__(self, graph: Graph, loop: Node, trips: int):
        self.loop, self.trips = loop, trips
        self.body = loop.attrs["body"]
        n_carried = loop.attrs["n_carried"]
        self.carried = dict(zip(self.body.inputs[1: 1 + n_carried], loop.inputs[2: 2 + n_carried], strict=True))
        self.outer = dict(zip(self.body.inputs[1 + n_carried:], loop.inputs[2 + n_carried:], strict=True))
        self.build = Builder(graph, before=loop)
        #: every node built, in order
        self.made: list[Node] = []
        #: body value -> its array over the trips, outside the loop
        self.vectorised: dict[Value, Value] = {}
        #: carried body input -> (its update's array, the final value)
        self.sums: dict[Value, tuple[Value, Value]] = {}

    def _node(self, op: str, inputs, attributes) -> Node:
        node = self.build.node(op, inputs, attributes)
        self.made.append(node)
        return node

    def _op(self, op: str, *inputs: Value, **attributes) -> Value:
        return self._node(op, inputs, attributes).output

    def outside(self, v: Value) -> Value | None:
        """`v` as the loop's outside reads it, when it is a constant or read from outside."""
        return v if v.const is not None else self.outer.get(v)

    def run(self) -> None:
        for node in self.body:
            self.build.source = node.source
            if node.op == "Gather" and self._gathers_a_row(node):
                self.vectorised[node.output] = self._rows(self.outer[node.inputs[0]])
            elif get_schema(node.op).has("elementwise") and self._reads_mapped(node.inputs):
                self._elementwise(node)
            elif get_schema(node.op).has("batchable") and node.inputs[0] in self.vectorised:
                self._batched(node)
            elif node.op == "Check" and node.inputs[0] in self.vectorised and all(self.outside(c) for c in node.inputs[1:]):
                conds = [self.outside(c) for c in node.inputs[1:]]
                self.vectorised[node.output] = self._node("Check", [self.vectorised[node.inputs[0]], *conds],
                                                               node.attrs).output
            if node.op == "Add":
                self._running_sum(node)

    def _gathers_a_row(self, node: Node) -> bool:
        x, index = node.inputs
        return (index is self.body.inputs[0] and node.attrs.get("axis") == 0 and x in self.outer
                and isinstance(x.shape[0], int) and x.shape[0] >= self.trips and _static(node.output))

    def _rows(self, x: Value) -> Value:
        if x.shape[0] == self.trips:
            return x
        return self._op("Slice", x, Value.constant([0], dtype="int64"), Value.constant([self.trips], dtype="int64"),
                             Value.constant([1], dtype="int64"), axes=(0,))

    def _reads_mapped(self, inputs) -> bool:
        return (any(v in self.vectorised for v in inputs)
                and all(v in self.vectorised or self.outside(v) is not None for v in inputs))

    def _elementwise(self, node: Node) -> None:
        out = node.output
        if not _static(out):
            return
        operands = []
        for v in node.inputs:
            if v not in self.vectorised:
                operands.append(self.outside(v))
                continue
            array = self.vectorised[v]
            missing = out.type.ndim - v.type.ndim
            if missing:  # broadcast as in a trip: the trip axis first, then size-1 axes
                array = self._op("Unsqueeze", array, axes=tuple(range(1, 1 + missing)))
            operands.append(array)
        self.vectorised[out] = self._node(node.op, operands, node.attrs).output

    def _batched(self, node: Node) -> None:
        """The op on the first input's array, its axes one further along (the trip axis first)."""
        rest = [self.outside(v) for v in node.inputs[1:]]
        if any(v is None for v in rest) or len(node.outputs) != 1 or not _static(node.output):
            return
        attributes = dict(node.attrs)
        if "axes" in attributes:
            attributes["axes"] = tuple(a + 1 for a in attributes["axes"])
        if "axis" in attributes:
            if attributes["axis"] < 0:
                return
            attributes["axis"] += 1
        self.vectorised[node.output] = self._node(node.op, [self.vectorised[node.inputs[0]], *rest], attributes).output

    def _running_sum(self, node: Node) -> None:
        """`c + m` for a carried `c` that nothing else reads: a CumSum in the loop's order."""
        a, b = node.inputs
        carried, term = (a, b) if a in self.carried else (b, a)
        if carried not in self.carried or term not in self.vectorised or carried.num_uses != 1:
            return
        start, out = self.carried[carried], node.output
        if not (_static(out) and carried.shape == out.shape == term.shape == start.shape) or out.dtype == "bool":
            return
        first = self._op("Unsqueeze", start, axes=(0,))
        sums = self._op("CumSum", self._op("Concat", first, self.vectorised[term], axis=0), axis=0)
        self.vectorised[out] = self._op("Slice", sums, Value.constant([1], dtype="int64"),
                                             Value.constant([self.trips + 1], dtype="int64"), Value.constant([1], dtype="int64"),
                                             axes=(0,))
        final = self._op("Gather", sums, Value.constant(self.trips, dtype="int64"), axis=0)
        self.sums[carried] = (out, final)


def vectorise(graph: Graph, loop: Node) -> int:
    """Take what is mapped out of `loop`; returns how many of its outputs left it."""
    trips = _static_trips(loop)
    if trips is None:
        return 0
    v = _Vectoriser(graph, loop, trips)
    v.run()
    body, n_carried, n_scan = v.body, loop.attrs["n_carried"], loop.attrs["n_scan"]
    carried = body.inputs[1: 1 + n_carried]
    summed = {i for i, c in enumerate(carried) if c in v.sums and v.sums[c][0] is body.outputs[1 + i]}
    keep_scan = [k for k in range(n_scan) if body.outputs[1 + n_carried + k] not in v.vectorised]
    keep_carried = [i for i in range(n_carried) if i not in summed]
    while True:  # a carried value that what stays reads stays too, with its update
        live = _live(body, [body.outputs[1 + i] for i in keep_carried] + [body.outputs[1 + n_carried + k] for k in keep_scan])
        back = [i for i in summed if i not in keep_carried and carried[i] in live]
        if not back:
            break
        keep_carried = sorted([*keep_carried, *back])
    moved = n_carried + n_scan - len(keep_carried) - len(keep_scan)
    if moved:
        for i in range(n_carried):
            if i not in keep_carried:
                graph.replace_all_uses(loop.outputs[i], v.sums[carried[i]][1])
        for k in range(n_scan):
            if k not in keep_scan:
                graph.replace_all_uses(loop.outputs[n_carried + k], v.vectorised[body.outputs[1 + n_carried + k]])
        _shrink(graph, loop, keep_carried, keep_scan)
    for node in reversed(v.made):  # arrays of values that stayed in the loop
        if node.graph is graph and all(out.num_uses == 0 for out in node.outputs):
            graph.remove(node)
    return moved


def _live(body: Graph, outputs: list[Value]) -> set[Value]:
    """The body values (inputs included) that `outputs` are computed from."""
    seen: set[Value] = set()
    todo = list(outputs)
    while todo:
        value = todo.pop()
        if value in seen:
            continue
        seen.add(value)
        if value.producer is not None and value.producer.graph is body:
            todo.extend(value.producer.inputs)
    return seen


def _shrink(graph: Graph, loop: Node, keep_carried: list[int], keep_scan: list[int]) -> None:
    """`loop` with only the carried values and per-trip outputs kept, or no loop if none is."""
    body, n_carried = loop.attrs["body"], loop.attrs["n_carried"]
    if not keep_carried and not keep_scan:
        graph.remove(loop)
        return
    body.set_outputs([body.outputs[0], *(body.outputs[1 + i] for i in keep_carried),
                      *(body.outputs[1 + n_carried + k] for k in keep_scan)])
    for node in body.reversed():
        if all(out.num_uses == 0 for out in node.outputs):
            body.remove(node)
    body.inputs = [body.inputs[0], *(body.inputs[1 + i] for i in keep_carried), *body.inputs[1 + n_carried:]]
    inputs = [*loop.inputs[:2], *(loop.inputs[2 + i] for i in keep_carried), *loop.inputs[2 + n_carried:]]
    kept = [*(loop.outputs[i] for i in keep_carried), *(loop.outputs[n_carried + k] for k in keep_scan)]
    attributes = {**loop.attrs, "n_carried": len(keep_carried), "n_scan": len(keep_scan)}
    replacement = Builder(graph, before=loop, source=loop.source).node("Loop", inputs, attributes,
                                                                       names=[o.name for o in kept],
                                                                       out_types=[o.type for o in kept])
    replacement.name = loop.name
    for old, new in zip(kept, replacement.outputs, strict=True):
        graph.replace_all_uses(old, new)
    graph.remove(loop)
    drop_unread_invariants(graph, replacement)


@attrs.define
class VectoriseLoops:
    name: str = "vectorise_loops"

    def run(self, graph: Graph) -> PassResult:
        moved = sum(vectorise(graph, node) for node in list(graph) if node.op == "Loop")
        return PassResult(moved > 0, moved, {"vectorised": moved})
