"""Loop-invariant hoisting (PyTensor's scan push-out): a Loop body's node that reads only
the loop's read-only inputs and constants moves out of the body, before the Loop, and
the body reads its result as one more read-only input. onnxruntime runs every body node
on every trip; a hoisted node runs once.

Checks stay in the body, and so do nodes that own bodies (which may hold checks): a
loop that runs no trip must not fail a check it never reached.

A body input has a type but no known contents (`ptonnx.ir.dims`), so a shape vector a
type rule in the body reads through is also kept in the body. `Reshape(x, Concat([1],
Shape(w)))` is typed `[1, w0, w1]` because its rule sees the Concat's elements; were the
Concat hoisted, the rule would see an input and give `[?, ?, ?]`, and `verify` would
rightly refuse the recorded type, which no rule derives any more. So the nodes those
contents come through (`Shape`, `Gather`, `Concat`, integer arithmetic: a few int64 ops
per trip) are copied out for the work that moves and stay in the body for that rule.
A value whose contents are all unknown moves as before: the rule sees nothing of it
either way.
"""

from __future__ import annotations

import attrs

from ptonnx.errors import TypeRuleError
from ptonnx.ir import Graph, Value
from ptonnx.ir.core import Node, bodies
from ptonnx.ir.dims import contents
from ptonnx.ir.registry import get_schema, infer_types
from ptonnx.passes.base import PassResult

def _hoistable(node: Node, invariant: set[Value]) -> bool:
    if get_schema(node.op).has("effect") or bodies(node):  # it runs only where the program reaches it
        return False
    return all(v.const is not None or v in invariant for v in node.inputs)


def _invariant_nodes(body: Graph, invariant: set[Value]) -> list[Node]:
    """The nodes of `body`, in order, that read only invariants, constants and each other."""
    found, known = [], set(invariant)
    for node in body:
        if _hoistable(node, known):
            found.append(node)
            known.update(node.outputs)
    return found


def _read_through(body: Graph, staying: list[Node]) -> set[Node]:
    """The nodes of `body` that the contents read by the type rules of `staying` come
    through (as `ptonnx.ir.dims.contents` follows producers), where they know something.
    A node whose rule gives its recorded types from its input types alone reads nothing
    that matters: hoisting can cost it nothing."""
    found: set[Node] = set()
    todo = [v for node in staying for v in _read_inputs(node)]
    seen: set[Value] = set()
    while todo:
        v = todo.pop()
        node = v.producer
        if v in seen or node is None or node.graph is not body or not _informative(contents(v)):
            continue
        seen.add(v)
        found.add(node)
        todo.extend(node.inputs)
    return found


def _read_inputs(node: Node) -> list[Value]:
    """The inputs whose contents decide part of `node`'s recorded types (the schema's
    `reads`), or none when its rule gives those types without any contents."""
    schema = get_schema(node.op)
    if not schema.reads:
        return []
    try:
        if infer_types(node.op, [v.type for v in node.inputs], node.attrs) == [o.type for o in node.outputs]:
            return []
    except TypeRuleError:
        pass
    positions = {p.name: i for i, p in enumerate(schema.inputs)}
    return [node.inputs[positions[port]] for port in schema.reads]


def _informative(c) -> bool:
    """Contents that say anything about an element (a size or a symbolic dim)."""
    return any(d is not None for d in c) if isinstance(c, tuple) else c is not None


def hoist(graph: Graph, loop: Node) -> int:
    """Move the invariant nodes of `loop`'s body before `loop`; returns how many moved
    (those a body type rule reads through are copied out and also stay)."""
    body, n_carried = loop.attrs["body"], loop.attrs["n_carried"]
    outer_of = dict(zip(body.inputs[1 + n_carried:], loop.inputs[2 + n_carried:], strict=True))
    invariant = _invariant_nodes(body, set(outer_of))
    moving = set(invariant)
    kept = _read_through(body, [node for node in body if node not in moving]) & moving
    copies = []
    for node in invariant:
        outputs = [Value(o.type, o.name) for o in node.outputs]
        outer_inputs = [v if v.const is not None else outer_of[v] for v in node.inputs]
        copy = graph.insert_before(loop, Node(node.op, outer_inputs, outputs, node.attrs, node.name, node.source))
        if node in kept:
            copies.append(copy)
            outer_of.update(zip(node.outputs, outputs, strict=True))
            continue
        for inner, outer in zip(node.outputs, outputs, strict=True):
            if inner.num_uses:
                read = Value(inner.type, inner.name)
                body.inputs.append(read)
                graph.set_inputs(loop, [*loop.inputs, outer])
                body.replace_all_uses(inner, read)
                outer_of[read] = outer
        body.remove(node)
    for copy in reversed(copies):  # a copy only the body's rule needed: nothing outside reads it
        if not any(o.num_uses for o in copy.outputs):
            graph.remove(copy)
    drop_unread_invariants(graph, loop)
    return len(invariant) - len(kept)


def drop_unread_invariants(graph: Graph, loop: Node) -> None:
    """Remove the read-only inputs the body no longer reads."""
    body, first = loop.attrs["body"], 1 + loop.attrs["n_carried"]
    keep = [i for i in range(first, len(body.inputs)) if body.inputs[i].num_uses]
    if len(keep) == len(body.inputs) - first:
        return
    graph.set_inputs(loop, [*loop.inputs[: 1 + first], *(loop.inputs[i + 1] for i in keep)])
    body.inputs = [*body.inputs[:first], *(body.inputs[i] for i in keep)]


@attrs.define
class HoistLoopInvariants:
    name: str = "hoist_loop_invariants"

    def run(self, graph: Graph) -> PassResult:
        moved = sum(hoist(graph, node) for node in list(graph) if node.op == "Loop")
        return PassResult(moved > 0, moved, {"hoisted": moved})
