"""What a compilation stage may require of the IR, each fact stated once (onnx-ir's pass contracts).

A `Condition` is a property of every node of a graph (bodies included): `fault(node)` says
how a node breaks it, or None. The stages (`ptonnx/stages.py`) name the conditions each
requires and ensures, and `lowering.check_lowerable` refuses a node by the same conditions,
so a fact and its message live here and nowhere else. Conditions see only the IR.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs

from ptonnx.decompositions.registry import DECOMPOSITIONS
from ptonnx.errors import VerificationError
from ptonnx.ir import Graph, Node, verify
from ptonnx.ir.core import nested_graphs
from ptonnx.ir.registry import mixed_inputs
from ptonnx.onnxruntime_dtypes import decomposed_in, node_rules


@attrs.frozen
class Condition:
    name: str
    #: the property in words, for "stage X requires <what>"
    what: str
    #: node -> how it breaks the condition, or None
    fault: Callable[[Node], str | None]
    #: what the user (or the caller of a stage) can do when a node breaks it
    remedy: str
    #: graph -> how it breaks the condition as a whole (a condition of the graph, not of each node)
    whole: Callable[[Graph], str | None] | None = None

    def faults(self, graph: Graph) -> Iterator[tuple[Node | None, str]]:
        """Each node of `graph` and of its bodies that breaks the condition, with how (or the
        graph's own fault, as node None)."""
        if self.whole is not None:
            why = self.whole(graph)
            if why is not None:
                yield None, why
            return
        for g in (graph, *nested_graphs(graph)):
            for node in g:
                why = self.fault(node)
                if why is not None:
                    yield node, why


def _invalid(graph: Graph) -> str | None:
    try:
        verify(graph)
    except VerificationError as exc:
        return str(exc)
    return None


def _undecomposed(node: Node) -> str | None:
    found = DECOMPOSITIONS.get(node.op)
    if found is None or decomposed_in(found, node.outputs[0].dtype) is None:
        return None
    return f"IR op {node.op!r} is rewritten into other IR ops before lowering"


def _mixed(node: Node) -> str | None:
    mixed = mixed_inputs(node)
    if not mixed:
        return None
    listed = "; ".join(f"input {i} is {dtype}, needs {target}" for i, dtype, target in mixed)
    return f"its inputs that share a type have several dtypes ({listed})"


def _not_legalised(node: Node) -> str | None:
    for rule in node_rules(node).values():
        if rule.refuse is None and rule.compute is not None:
            return f"onnxruntime computes {node.op} on {node.outputs[0].dtype} in {rule.compute} ({rule.why})"
    return None


VERIFIED = Condition(
    "verified", "a valid IR graph (SSA, topological order, every type as its op's type rule says)", lambda node: None,
    "a pass broke the IR: run with verify_each=True to find which (a ptonnx pass doing so is a bug; please report it)",
    whole=_invalid)
DECOMPOSED = Condition(
    "decomposed", "every op the runtime lacks rewritten into IR ops it runs", _undecomposed,
    "run ptonnx.passes.decompose.decompose(graph) first (ptonnx.compile does); a pass that makes such an op "
    "must decompose it itself")
UNIFIED = Condition(
    "dtypes_unified", "the inputs of each node that share a type variable to have one dtype", _mixed,
    "include the 'unify_dtypes' pass (it is in ptonnx.DEFAULT_PASSES): it brings them to the dtype PyTensor "
    "computes in")
LEGALISED = Condition(
    "legalised", "every node in a dtype onnxruntime computes as NumPy does", _not_legalised,
    "run ptonnx.passes.legalise.legalise(graph) first (ptonnx.compile does)")
