"""Values, nodes and graphs: the SSA core of the IR.

Values and nodes are compared by identity. Only `Graph` methods change
use-lists, so def-use stays consistent under every edit; nodes live in a
doubly linked list so inserting or removing one is O(1).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ptonnx.errors import IRError
from ptonnx.ir.printer import print_graph
from ptonnx.ir.types import TensorType


class _GraphOutput:
    """Marker used as the "node" of a use that is a graph output."""

    def __repr__(self) -> str:
        return "<graph output>"


GRAPH_OUTPUT = _GraphOutput()


class Value:
    """One SSA value: a graph input, a constant (carries an array) or a node output."""

    __slots__ = ("type", "name", "producer", "index", "const", "uid", "_uses", "__weakref__")
    _ids = itertools.count()

    def __init__(
        self,
        type: TensorType,
        name: str | None = None,
        *,
        const: np.ndarray | None = None,
    ):
        self.type = type
        self.name = name
        self.producer: Node | None = None
        self.index = 0
        self.const = const
        self.uid = next(Value._ids)  # stable label for printing unnamed values
        # (user, input index) -> None; an ordered set with O(1) removal.
        self._uses: dict[tuple[Any, int], None] = {}

    @classmethod
    def constant(cls, array, name: str | None = None, *, dtype=None, copy: bool = True) -> Value:
        """A constant holding a private, read-only copy of `array`; with `copy=False`, a
        read-only view of it where it already has the dtype and C layout (lifting: the
        user's weights are not copied; whoever passes it promises not to write it)."""
        arr = np.array(array, dtype=dtype, order="C", copy=None if not copy else True)
        if arr is array:
            arr = arr.view()  # its own flags: the caller's array stays writeable
        arr.setflags(write=False)
        return cls(TensorType.of(arr), name, const=arr)

    @property
    def is_constant(self) -> bool:
        return self.const is not None

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def shape(self):
        return self.type.shape

    @property
    def uses(self) -> list[tuple[Any, int]]:
        """(node, input index) pairs; the node is `GRAPH_OUTPUT` for graph outputs."""
        return list(self._uses)

    @property
    def users(self) -> list[Node]:
        """Distinct nodes using this value, in first-use order (graph outputs excluded)."""
        seen: dict[Node, None] = {}
        for user, _ in self._uses:
            if user is not GRAPH_OUTPUT:
                seen[user] = None
        return list(seen)

    @property
    def num_uses(self) -> int:
        return len(self._uses)

    @property
    def is_graph_output(self) -> bool:
        return any(user is GRAPH_OUTPUT for user, _ in self._uses)

    def __repr__(self) -> str:
        return f"Value({self.name or '?'}: {self.type})"


class Source:
    """Where a node came from, for error messages: the user's variable as text, its type,
    and the line that created it. Text only: an IR that held the PyTensor variable would
    keep the user's whole graph, and its arrays, alive as long as the compiled model."""

    __slots__ = ("variable", "type", "created_at")

    def __init__(self, variable: str, type: str | None = None, created_at: str | None = None):
        self.variable, self.type, self.created_at = variable, type, created_at

    def __repr__(self) -> str:
        return f"Source({self.variable!r}, {self.type!r}, {self.created_at!r})"


class Node:
    """An op applied to values. Holds no behaviour: the registry knows the op.

    `source` is what the node was made from (a `Source` naming the user's PyTensor
    variable when lifted; passes pass it on to their replacements), so errors can name it.
    """

    __slots__ = ("op", "inputs", "outputs", "attrs", "name", "source", "graph", "_prev", "_next", "__weakref__")

    def __init__(
        self,
        op: str,
        inputs: Iterable[Value],
        outputs: Iterable[Value],
        attrs: Mapping[str, Any] | None = None,
        name: str | None = None,
        source: Source | None = None,
    ):
        self.op = op
        self.source = source
        self.inputs: tuple[Value, ...] = tuple(inputs)
        self.outputs: tuple[Value, ...] = tuple(outputs)
        self.attrs: dict[str, Any] = dict(attrs or {})
        for key, value in self.attrs.items():
            try:
                hash(value)
            except TypeError as exc:
                raise IRError(f"attribute {key}={value!r} of {op} is not hashable") from exc
        self.name = name
        self.graph: Graph | None = None
        self._prev: Node | None = None
        self._next: Node | None = None
        for i, out in enumerate(self.outputs):
            if out.producer is not None or out.const is not None:
                raise IRError(f"{out!r} already has a definition; SSA values are defined once")
            out.producer = self
            out.index = i

    @property
    def output(self) -> Value:
        if len(self.outputs) != 1:
            raise IRError(f"{self.op} has {len(self.outputs)} outputs, not one")
        return self.outputs[0]

    def __repr__(self) -> str:
        return f"Node({self.op}, {self.name or ''})"


class Graph:
    """Inputs, outputs and nodes in a valid topological order."""

    def __init__(self, name: str = "graph"):
        self.name = name
        self.inputs: list[Value] = []
        self._outputs: list[Value] = []
        self._first: Node | None = None
        self._last: Node | None = None
        self._count = 0
        #: called with each node that is added or whose inputs change (the rewrite driver's worklist)
        self.on_change = None
        #: called with each value that lost a use by `remove` while `on_change` is set: its
        #: remaining users may now match; the driver decides when to revisit them
        self.on_use_lost = None

    # -- reading -----------------------------------------------------------
    @property
    def outputs(self) -> tuple[Value, ...]:
        return tuple(self._outputs)

    def __iter__(self) -> Iterator[Node]:
        node = self._first
        while node is not None:
            nxt = node._next
            yield node
            node = nxt

    def reversed(self) -> Iterator[Node]:
        node = self._last
        while node is not None:
            prev = node._prev
            yield node
            node = prev

    @property
    def nodes(self) -> list[Node]:
        return list(self)

    def __len__(self) -> int:
        return self._count

    def constants(self) -> list[Value]:
        """Constants used by nodes or outputs, each once, in first-use order."""
        seen: dict[Value, None] = {}
        for node in self:
            for v in node.inputs:
                if v.const is not None:
                    seen[v] = None
        for v in self._outputs:
            if v.const is not None:
                seen[v] = None
        return list(seen)

    def op_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for node in self:
            counts[node.op] = counts.get(node.op, 0) + 1
        return counts

    # -- building ----------------------------------------------------------
    def add_input(self, type: TensorType, name: str | None = None) -> Value:
        value = Value(type, name)
        self.inputs.append(value)
        return value

    def set_outputs(self, values: Iterable[Value]) -> None:
        for i, v in enumerate(self._outputs):
            del v._uses[(GRAPH_OUTPUT, i)]
        self._outputs = list(values)
        for i, v in enumerate(self._outputs):
            v._uses[(GRAPH_OUTPUT, i)] = None

    def append(self, node: Node) -> Node:
        return self._link(node, self._last, None)

    def insert_before(self, anchor: Node, node: Node) -> Node:
        self._check_member(anchor)
        return self._link(node, anchor._prev, anchor)

    def _link(self, node: Node, prev: Node | None, nxt: Node | None) -> Node:
        if node.graph is not None:
            raise IRError(f"{node!r} is already in a graph")
        node.graph = self
        node._prev, node._next = prev, nxt
        if prev is None:
            self._first = node
        else:
            prev._next = node
        if nxt is None:
            self._last = node
        else:
            nxt._prev = node
        for i, v in enumerate(node.inputs):
            v._uses[(node, i)] = None
        self._count += 1
        if self.on_change is not None:
            self.on_change(node)
        return node

    # -- editing -----------------------------------------------------------
    def set_input(self, node: Node, index: int, value: Value) -> None:
        """Make input `index` of `node` read `value` instead."""
        self._check_member(node)
        old = node.inputs[index]
        del old._uses[(node, index)]
        node.inputs = node.inputs[:index] + (value,) + node.inputs[index + 1 :]
        value._uses[(node, index)] = None
        if self.on_change is not None:
            self.on_change(node)

    def set_inputs(self, node: Node, values: Iterable[Value]) -> None:
        """Give `node` a new list of inputs (a body-owning node gaining or losing operands)."""
        self._check_member(node)
        for i, v in enumerate(node.inputs):
            v._uses.pop((node, i), None)
        node.inputs = tuple(values)
        for i, v in enumerate(node.inputs):
            v._uses[(node, i)] = None
        if self.on_change is not None:
            self.on_change(node)

    def replace_all_uses(self, old: Value, new: Value) -> int:
        """Redirect every use of `old` (graph outputs included) to `new`; returns how many."""
        if old is new:
            return 0
        if old.type.dtype != new.type.dtype or old.type.ndim != new.type.ndim:
            raise IRError(f"cannot replace {old!r} by {new!r}: a value keeps its dtype and rank")
        uses = list(old._uses)
        for user, index in uses:
            if user is GRAPH_OUTPUT:
                self._outputs[index] = new
            else:
                user.inputs = user.inputs[:index] + (new,) + user.inputs[index + 1 :]
                if self.on_change is not None:
                    self.on_change(user)
            new._uses[(user, index)] = None
        old._uses.clear()
        if self.on_change is not None and old.producer is not None and old.producer.graph is self:
            self.on_change(old.producer)
        return len(uses)

    def remove(self, node: Node, *, safe: bool = True) -> None:
        """Unlink `node`. With `safe`, refuse when any of its outputs is still used."""
        self._check_member(node)
        if safe:
            for out in node.outputs:
                if out._uses:
                    raise IRError(
                        f"cannot remove {node.op} ({node.name}): its output {out!r} "
                        f"still has {len(out._uses)} use(s)"
                    )
        for i, v in enumerate(node.inputs):
            v._uses.pop((node, i), None)
        if self.on_change is not None:
            self._touch_neighbours(node.inputs)
        prev, nxt = node._prev, node._next
        if prev is None:
            self._first = nxt
        else:
            prev._next = nxt
        if nxt is None:
            self._last = prev
        else:
            nxt._prev = prev
        node._prev = node._next = None
        node.graph = None
        self._count -= 1

    def _touch_neighbours(self, values) -> None:
        """A value lost a use: its producer and remaining users may now match a pattern.
        The users go through `on_use_lost` when set: walking every user of a value read by
        thousands of nodes at each removal next to it made rewriting quadratic."""
        for v in values:
            if v.producer is not None and v.producer.graph is self:
                self.on_change(v.producer)
            if self.on_use_lost is not None:
                self.on_use_lost(v)
                continue
            for user, _ in v._uses:
                if user is not GRAPH_OUTPUT:
                    self.on_change(user)

    def _check_member(self, node: Node) -> None:
        if node.graph is not self:
            raise IRError(f"{node!r} is not in graph {self.name!r}")

    def __str__(self) -> str:
        return print_graph(self)


def bodies(node: Node) -> list[Graph]:
    """The graphs `node` owns (a loop's body), in attribute order: passes, `verify`
    and the printer walk into them."""
    return [v for v in node.attrs.values() if isinstance(v, Graph)]


def nested_graphs(graph: Graph) -> list[Graph]:
    """Every graph owned by a node of `graph`, at any depth (outermost first)."""
    found = []
    for node in graph:
        for body in bodies(node):
            found += [body, *nested_graphs(body)]
    return found
