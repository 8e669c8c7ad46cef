"""Loop-invariant hoisting (PyTensor's scan push-out): a Loop body's node that reads only
the loop's read-only inputs and constants moves out of the body, before the Loop, and
the body reads its result as one more read-only input. onnxruntime runs every body node
on every trip; a hoisted node runs once.

Checks stay in the body, and so do nodes that own bodies (which may hold checks): a
loop that runs no trip must not fail a check it never reached.
"""

from __future__ import annotations

import attrs

from ptonnx.ir import Graph, Value
from ptonnx.ir.core import Node, bodies
from ptonnx.passes.base import PassResult

#: ops that must run only where the program reaches them
STAY = frozenset({"Check"})


def _hoistable(node: Node, invariant: set[Value]) -> bool:
    if node.op in STAY or bodies(node):
        return False
    return all(v.const is not None or v in invariant for v in node.inputs)


def hoist(graph: Graph, loop: Node) -> int:
    """Move the invariant nodes of `loop`'s body before `loop`; returns how many moved."""
    body, n_carried = loop.attrs["body"], loop.attrs["n_carried"]
    outer_of = dict(zip(body.inputs[1 + n_carried:], loop.inputs[2 + n_carried:], strict=True))
    invariant = set(outer_of)
    moved = 0
    for node in list(body):
        if not _hoistable(node, invariant):
            continue
        outputs = [Value(o.type, o.name) for o in node.outputs]
        outer_inputs = [v if v.const is not None else outer_of[v] for v in node.inputs]
        graph.insert_before(loop, Node(node.op, outer_inputs, outputs, node.attrs, node.name, node.source))
        for inner, outer in zip(node.outputs, outputs, strict=True):
            if inner.num_uses:
                read = Value(inner.type, inner.name)
                body.inputs.append(read)
                graph.set_inputs(loop, [*loop.inputs, outer])
                body.replace_all_uses(inner, read)
                outer_of[read] = outer
                invariant.add(read)
        body.remove(node)
        moved += 1
    _drop_unread_invariants(graph, loop)
    return moved


def _drop_unread_invariants(graph: Graph, loop: Node) -> None:
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
