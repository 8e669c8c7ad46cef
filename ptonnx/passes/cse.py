"""Common subexpression elimination: a node that repeats an earlier one (same op, same
inputs, same attributes) is dropped and its users read the earlier node's results.

Decompositions repeat themselves (GammaU computes Gamma(a) and lgamma(a) in several of
its branches; a log-density calls `gammaln` of one parameter in several terms); the
repeats cost onnxruntime a kernel call each. Small constants count as equal by
content, so two `x * 0.5` built by different decompositions merge. Nodes that own
bodies are left alone. Two checks merge only as any node does: same value, same
conditions, same message and exception class, so the merged one fails exactly when,
and as, either would (two eighs of one matrix check it once and factor it once). Runs
in every body too (the PassManager walks them).

`a + b` and `b + a` are one node (as are the other commutative ops). A merge can leave `x and x` (two checks of one value that became one): an idempotent op
of one value twice is that value.
"""

from __future__ import annotations

import attrs
import numpy as np

from ptonnx.ir import Graph, Value
from ptonnx.ir.core import Node
from ptonnx.ir.registry import get_schema
from ptonnx.passes.base import PassResult

#: constants up to this size compare by content
SMALL = 256


def _value_key(value: Value):
    const = value.const
    if const is not None and const.size == 1:  # 1.0 and [1.0] broadcast alike (the result types are in the key)
        return ("const", const.dtype.str, const.tobytes())
    if const is not None and const.nbytes <= SMALL:
        return ("const", const.dtype.str, const.shape, const.tobytes())
    return id(value)


def _attr_key(value):
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, list | tuple):
        return tuple(_attr_key(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _attr_key(v)) for k, v in value.items()))
    if isinstance(value, float) and value != value:
        return ("nan",)
    return value


def _key(node: Node):
    if any(isinstance(v, Graph) for v in node.attrs.values()):
        return None
    try:
        attrs_key = tuple(sorted((k, _attr_key(v)) for k, v in node.attrs.items()))
        inputs = tuple(_value_key(v) for v in node.inputs)
        if get_schema(node.op).has("commutative"):  # `1 + x` and `x + 1` merge
            inputs = tuple(sorted(inputs, key=repr))
        key = (node.op, inputs, tuple(v.type for v in node.outputs), attrs_key)
        hash(key)
    except TypeError:  # an attribute nobody taught us to compare: leave the node alone
        return None
    return key


@attrs.define
class CommonSubexpressionElimination:
    name: str = "cse"
    #: merge only these ops (None: every op); `legalise` merges the Casts it made
    only: frozenset[str] | None = None

    def run(self, graph: Graph) -> PassResult:
        seen: dict = {}
        merged = 0
        for node in list(graph):
            if self.only is not None and node.op not in self.only:
                continue
            out = node.outputs[0]
            if get_schema(node.op).has("idempotent") and len(set(map(id, node.inputs))) == 1 and node.inputs[0].type == out.type:
                graph.replace_all_uses(out, node.inputs[0])
                graph.remove(node)
                merged += 1
                continue
            key = _key(node)
            if key is None:
                continue
            first = seen.setdefault(key, node)
            if first is node:
                continue
            for old, new in zip(node.outputs, first.outputs, strict=True):
                graph.replace_all_uses(old, new)
            graph.remove(node)
            merged += 1
        return PassResult(merged > 0, merged, {"merged": merged} if merged else {})
