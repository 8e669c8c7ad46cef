"""Pattern rewrites keyed by the ops they track, and one worklist driver to a fixed point.

A rewrite is a plain function `fn(graph, node) -> bool` that edits the graph
through its primitives and says whether it changed anything. The driver
revisits only nodes that were added or whose inputs changed, so a whole pass
costs O(nodes + rewrites), not a rescan per rewrite.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable

import attrs

from ptonnx.errors import PassError
from ptonnx.ir import Graph, Node, Value
from ptonnx.ir.core import GRAPH_OUTPUT


@attrs.frozen
class Rewrite:
    name: str
    #: op names this rewrite looks at; None = every op
    tracks: tuple[str, ...] | None
    fn: Callable[[Graph, Node], bool]


def node_rewriter(*tracks: str, name: str | None = None):
    """Decorator: `@node_rewriter("Mul")` turns `fn(graph, node)` into a `Rewrite`."""

    def decorate(fn):
        return Rewrite(name or fn.__name__, tracks or None, fn)

    return decorate


def only_used_by(value: Value, allowed: Iterable[Node]) -> bool:
    """True when every use of `value` is by one of `allowed` (never a graph output)."""
    allowed = set(allowed)
    return all(user is not GRAPH_OUTPUT and user in allowed for user, _ in value.uses)


def apply_rewrites(graph: Graph, rewrites: Iterable[Rewrite], *, max_steps: int | None = None) -> Counter:
    """Apply `rewrites` until none fires; returns how often each one fired."""
    by_op: dict[str | None, list[Rewrite]] = {}
    for rw in rewrites:
        for op in rw.tracks or (None,):
            by_op.setdefault(op, []).append(rw)
    generic = by_op.get(None, [])
    fired: Counter = Counter()
    work: deque[Node] = deque(graph)
    queued: set[Node] = set(work)
    limit = max_steps if max_steps is not None else 50 * (len(graph) + 1) + 1000

    def push(node: Node) -> None:
        if node not in queued:
            queued.add(node)
            work.append(node)

    previous, graph.on_change = graph.on_change, push
    steps = 0
    try:
        while work:
            node = work.popleft()
            queued.discard(node)
            if node.graph is not graph:
                continue
            for rw in by_op.get(node.op, []) + generic:
                if rw.fn(graph, node):
                    fired[rw.name] += 1
                    steps += 1
                    if steps > limit:
                        raise PassError(f"rewrites did not reach a fixed point after {steps} steps: {dict(fired)}")
                    break
    finally:
        graph.on_change = previous
    return fired
