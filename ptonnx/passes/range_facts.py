"""`range_facts`: decide the `Where`s and `Select`s whose condition the range facts settle.

A decomposition covers every argument it may meet: `gammaln` computes its reflection
for x < 0 on every element, though in a PyMC model x is often `exp(log_alpha)`. The
facts (`ptonnx/ir/ranges.py`) know `exp(y) >= 0` for every y but NaN; when a NaN y
also makes both branches NaN, the condition does not matter for it either, and the
selection is its branch (so it is where the NaN keeps the condition on that side: `x == -inf`
is false for a NaN x as for every other x): the other branch, no longer read, goes at dead-code
elimination. Index normalisation (`i < 0 ? i + n : i`) of an index known to be
non-negative goes the same way.
"""

from __future__ import annotations

import attrs

from ptonnx.ir import Graph
from ptonnx.ir.ranges import Fact, analyse
from ptonnx.ir.types import FLOAT_DTYPES
from ptonnx.passes.base import PassResult


def _known_shape(shape) -> bool:
    return all(d is not None for d in shape)


def _may_be_negative_zero(fact: Fact) -> bool:
    return fact.lo <= 0 <= fact.hi


@attrs.define
class RangeFacts:
    name: str = "range_facts"

    def run(self, graph: Graph) -> PassResult:
        facts = analyse(graph)
        decided = 0
        for node in list(graph):
            if node.op not in ("Where", "Select"):
                continue
            cond, out = facts[node.inputs[0]], node.outputs[0]
            if not (cond.true or cond.false):
                continue
            chosen = node.inputs[1 if cond.true else 2]
            # where a root of the condition is NaN, the condition must still choose this branch,
            # or both branches be NaN
            settled = cond.nan_true if cond.true else cond.nan_false
            if not cond.roots <= (facts[node.inputs[1]].poison & facts[node.inputs[2]].poison) | settled:
                continue
            if chosen.type != out.type or not _known_shape(out.shape):
                continue  # the branch is broadcast to the selection's shape: keep the node
            if node.op == "Select" and cond.true and out.dtype in FLOAT_DTYPES and _may_be_negative_zero(facts[chosen]):
                continue  # onnxruntime's Where makes a -0.0 from its first branch +0.0
            graph.replace_all_uses(out, chosen)
            graph.remove(node)
            decided += 1
        return PassResult(decided > 0, decided, {"decided": decided} if decided else {})
