"""`Builder`: create typed nodes at an insertion point (the end, or in front of a node)."""

from __future__ import annotations

from typing import Any

from ptonnx.errors import TypeRuleError
from ptonnx.ir.core import Graph, Node, Value
from ptonnx.ir.registry import get_schema, has_op, infer_types


class Builder:
    """Adds nodes whose output types come from the op's type rule.

    `Builder(g)` appends; `Builder(g, before=n)` inserts in front of `n`, each new node
    after the previous one.
    """

    def __init__(self, graph: Graph, *, before: Node | None = None, source=None):
        self.graph = graph
        self._before = before
        #: given to every node built (the PyTensor variable being lifted, the node being rewritten)
        self.source = source if source is not None else getattr(before, "source", None)

    def node(self, op: str, inputs, attrs: dict[str, Any] | None = None, *, names=None, out_types=None) -> Node:
        inputs = list(inputs)
        attrs = dict(attrs or {})
        if has_op(op):  # every attribute, defaults filled in: emitters and passes read them directly
            try:
                attrs = get_schema(op).resolve_attrs(attrs)
            except TypeRuleError as exc:
                raise TypeRuleError(f"{op}: {exc}") from None
        if out_types is None:
            try:
                out_types = infer_types(op, inputs, attrs)
            except TypeRuleError as exc:
                shown = ", ".join(repr(v) for v in inputs)
                raise TypeRuleError(f"{op}({shown}) {attrs or ''}: {exc}") from None
        names = list(names) if names is not None else [None] * len(out_types)
        outputs = [Value(t, n) for t, n in zip(out_types, names, strict=True)]
        node = Node(op, inputs, outputs, attrs, source=self.source)
        if self._before is not None:
            self.graph.insert_before(self._before, node)
        else:
            self.graph.append(node)
        return node

    def op(self, op: str, *inputs: Value, name: str | None = None, **attrs) -> Value:
        """One-output op; returns its output value."""
        return self.node(op, inputs, attrs, names=[name]).output
