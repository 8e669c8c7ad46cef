"""Pattern rewrites keyed by the ops they track, and one worklist driver to a fixed point.

A rewrite is a plain function `fn(builder, node) -> Replacement | dict | None`.
It builds the new nodes with `builder` (placed before `node`, carrying its
source) and returns what replaces what; it never edits the graph itself. The
driver checks the match, replaces the uses, and removes the matched nodes:

- every used output of `node` must be replaced;
- each node in `absorbs` (the rest of the matched pattern) must have no user
  outside the match, or the rewrite is refused and what it built is dropped;
- nodes in `cleans` are removed if they end up unused (no refusal).

The driver revisits only nodes that were added or whose inputs changed, and the
users of a value that lost a use (those of a value with many users once per
sweep, not at each removal), so a whole pass costs O(nodes + rewrites), not a
rescan per rewrite.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs

from ptonnx.errors import PassError
from ptonnx.ir import Builder, Graph, Node, Value
from ptonnx.ir.core import GRAPH_OUTPUT


@attrs.frozen
class Replacement:
    """What a rewrite matched and what replaces it."""

    values: Mapping[Value, Value]
    absorbs: Sequence[Node] = ()
    cleans: Sequence[Node] = ()


@attrs.frozen
class Rewrite:
    name: str
    #: op names this rewrite looks at; None = every op
    tracks: tuple[str, ...] | None
    fn: Callable[[Builder, Node], Replacement | Mapping[Value, Value] | None]


def node_rewriter(*tracks: str, name: str | None = None):
    """Decorator: `@node_rewriter("Mul")` turns `fn(builder, node)` into a `Rewrite`."""

    def decorate(fn):
        return Rewrite(name or fn.__name__, tracks or None, fn)

    return decorate


#: a value with more users than this that loses one has them revisited at the end of a sweep
_FEW_USES = 8


def only_used_by(value: Value, allowed: Iterable[Node]) -> bool:
    """True when every use of `value` is by one of `allowed` (never a graph output)."""
    allowed = set(allowed)
    return all(user is not GRAPH_OUTPUT and user in allowed for user, _ in value._uses)


class _LoggingBuilder(Builder):
    """A Builder that remembers what it made, so a refused rewrite can be undone."""

    def __init__(self, graph: Graph, node: Node):
        super().__init__(graph, before=node, source=node.source)
        self.made: list[Node] = []

    def node(self, *args, **kwargs) -> Node:
        made = super().node(*args, **kwargs)
        self.made.append(made)
        return made


def _matched(node: Node, result: Replacement) -> bool:
    """Every used output of `node` is replaced; absorbed nodes have no user outside the match."""
    if any(out.num_uses and out not in result.values for out in node.outputs):
        return False
    inside = {node, *result.absorbs}
    return all(only_used_by(out, inside) for n in result.absorbs for out in n.outputs)


def _remove_dead(graph: Graph, nodes: Iterable[Node]) -> None:
    """Remove those of `nodes` (and only those) whose outputs are unused, users first."""
    pending = [n for n in dict.fromkeys(nodes) if n.graph is graph]
    progress = True
    while pending and progress:
        progress = False
        for n in list(pending):
            if all(not out.num_uses for out in n.outputs):
                graph.remove(n)
                pending.remove(n)
                progress = True


def _undo(graph: Graph, made: list[Node]) -> None:
    """Drop what a refused rewrite built, quietly (its neighbours did not change)."""
    previous, graph.on_change = graph.on_change, None
    try:
        _remove_dead(graph, reversed(made))
    finally:
        graph.on_change = previous


def _apply(graph: Graph, rw: Rewrite, node: Node) -> bool:
    builder = _LoggingBuilder(graph, node)
    result = rw.fn(builder, node)
    if result is not None and not isinstance(result, Replacement):
        result = Replacement(result)
    if result is None or not _matched(node, result):
        _undo(graph, builder.made)
        return False
    for old, new in result.values.items():
        if new.name is None and old.name is not None and new.producer is not None:
            new.name = old.name
        graph.replace_all_uses(old, new)
    _remove_dead(graph, [node, *result.absorbs, *result.cleans])
    return True


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

    # values that lost a use and have many users: their users are revisited once the work
    # list runs dry, so a value read by n nodes costs O(n) per sweep, not per removal
    lost: dict[Value, None] = {}

    def push(node: Node) -> None:
        if node not in queued:
            queued.add(node)
            work.append(node)

    def use_lost(value: Value) -> None:
        if len(value._uses) > _FEW_USES:
            lost[value] = None
            return
        for user, _ in value._uses:
            if user is not GRAPH_OUTPUT:
                push(user)

    previous = graph.on_change, graph.on_use_lost
    graph.on_change, graph.on_use_lost = push, use_lost
    steps = 0
    try:
        while work or lost:
            if not work:
                for value in list(lost):
                    for user, _ in value._uses:
                        if user is not GRAPH_OUTPUT:
                            push(user)
                lost.clear()
                continue
            node = work.popleft()
            queued.discard(node)
            if node.graph is not graph:
                continue
            for rw in by_op.get(node.op, []) + generic:
                if _apply(graph, rw, node):
                    fired[rw.name] += 1
                    steps += 1
                    if steps > limit:
                        raise PassError(f"rewrites did not reach a fixed point after {steps} steps: {dict(fired)}")
                    break
    finally:
        graph.on_change, graph.on_use_lost = previous
    return fired
