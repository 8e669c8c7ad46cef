"""`verify(graph)`: SSA, topological order, def-use and type rules all hold."""

from __future__ import annotations

from ptonnx.errors import IRError, TypeRuleError, VerificationError
from ptonnx.ir.core import GRAPH_OUTPUT, Graph, bodies
from ptonnx.ir.printer import format_node
from ptonnx.ir.registry import get_schema, infer_types


def verify(graph: Graph) -> None:
    """Raise `VerificationError` on the first broken invariant.

    Only the IR's own invariants: a lifted graph mixes dtypes and is valid. Whether dtypes are
    unified, and what else a stage needs of the IR, are stage contracts (`ptonnx.contracts`,
    checked by `ptonnx.stages`).
    """
    defined = set(graph.inputs)
    if len(defined) != len(graph.inputs):
        raise VerificationError("a value is listed twice among the graph inputs")
    for v in graph.inputs:
        if v.producer is not None or v.const is not None:
            raise VerificationError(f"graph input {v!r} also has a definition")
    count = 0
    for node in graph:
        count += 1
        line = _LazyLine(node)
        try:
            get_schema(node.op)
        except IRError as exc:
            raise VerificationError(f"{line}\n  {exc}") from None
        for i, v in enumerate(node.inputs):
            if v.const is None and v not in defined:
                where = "defined later" if v.producer is not None and v.producer.graph is graph else "never defined"
                raise VerificationError(f"{line}\n  input {i} ({v!r}) is used before its definition ({where})")
            if (node, i) not in v._uses:
                raise VerificationError(f"{line}\n  input {i} ({v!r}) does not record this use")
        for i, out in enumerate(node.outputs):
            if out in defined or out.const is not None:
                raise VerificationError(f"{line}\n  output {i} ({out!r}) is defined twice")
            if out.producer is not node or out.index != i:
                raise VerificationError(f"{line}\n  output {i} ({out!r}) does not point back to its node")
            for user, j in out._uses:
                if user is not GRAPH_OUTPUT and (user.graph is not graph or user.inputs[j] is not out):
                    raise VerificationError(f"{line}\n  output {i} records a stale use by {user!r}")
            defined.add(out)
        for body in bodies(node):
            try:
                verify(body)
            except VerificationError as exc:
                raise VerificationError(f"{line}\n  in its body {body.name!r}: {exc}") from None
        try:
            expected = infer_types(node.op, node.inputs, node.attrs)
        except TypeRuleError as exc:
            raise VerificationError(f"{line}\n  type rule rejects the node: {exc}") from None
        actual = [o.type for o in node.outputs]
        # a declared type may know less than the rule now infers (an input folded to a constant
        # after the node was built): sound, only less precise. It must never claim more.
        if len(expected) != len(actual) or not all(a.admits(e) for a, e in zip(actual, expected, strict=True)):
            raise VerificationError(
                f"{line}\n  output types {[str(t) for t in actual]} disagree with the type rule "
                f"{[str(t) for t in expected]}"
            )
    if count != len(graph):
        raise VerificationError(f"node count {len(graph)} disagrees with the {count} nodes linked")
    for i, v in enumerate(graph.outputs):
        if v.const is None and v not in defined:
            raise VerificationError(f"graph output {i} ({v!r}) is never defined")
        if (GRAPH_OUTPUT, i) not in v._uses:
            raise VerificationError(f"graph output {i} ({v!r}) does not record its use")


class _LazyLine:
    """The printed node, formatted only when an error message needs it."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __str__(self) -> str:
        return format_node(self.node)
