"""`range_facts`: decide the `Where`s and `Select`s whose condition the range facts settle.

A decomposition covers every argument it may meet: `gammaln` computes its reflection
for x < 0 on every element, though in a PyMC model x is often `exp(log_alpha)`. The
facts (`ptonnx/ir/ranges.py`) know `exp(y) >= 0` for every y but NaN; when a NaN y
also makes both branches NaN, the condition does not matter for it either, and the
selection is its branch (so it is where the NaN keeps the condition on that side: `x == -inf`
is false for a NaN x as for every other x): the other branch, no longer read, goes at dead-code
elimination. Index normalisation (`i < 0 ? i + n : i`) of an index known to be
non-negative goes the same way.

A check that a value lies in a range it cannot leave, `all(exp(y) >= 0)` or PyMC's `all(0 <= p
<= 1)` of a softmax, is true exactly where the value is not NaN. Over its axes that is "the sum
is not NaN" when no sum of its elements is inf - inf: `s == s`, two ONNX nodes where the
comparisons, their casts and a reduction were five or more.
"""

from __future__ import annotations

import math

import attrs

from ptonnx.ir import Builder, Graph, Value
from ptonnx.ir.ranges import Fact, Facts, analyse
from ptonnx.ir.registry import get_schema
from ptonnx.ir.types import FLOAT_DTYPES
from ptonnx.passes.base import PassResult
from ptonnx.passes.constant_folding import ConstantFolding


def _known_shape(shape) -> bool:
    return all(d is not None for d in shape)


def _may_be_negative_zero(fact: Fact) -> bool:
    return fact.lo <= 0 <= fact.hi


def _compared(value: Value, facts: Facts) -> Value | None:
    """x, where `value` (bool) is exactly `not isnan(x)`: a comparison of the float x with a
    constant (or an `and` of such comparisons of one x), true wherever x is not NaN, where x is
    NaN whenever a root of it is (so the range holds for every x that is not NaN)."""
    node = value.producer
    if node is None:
        return None
    if node.op == "And":
        first, second = (_compared(v, facts) for v in node.inputs)
        return first if first is not None and first is second else None
    xs = [v for v in node.inputs if v.const is None]
    schema = get_schema(node.op)
    rule = schema.ranges if schema.has("nan_compares_false") else None
    if rule is None or len(xs) != 1 or xs[0].dtype not in FLOAT_DTYPES or xs[0].shape != value.shape:
        return None
    x = facts[xs[0]]
    if not x.roots <= x.poison:
        return None
    # the verdict for the elements of x that are not NaN (a NaN one compares false)
    verdict = rule(node, [attrs.evolve(x, nan=False) if v is xs[0] else facts[v] for v in node.inputs])
    return xs[0] if verdict.true else None


def _checks_of_ranges(graph: Graph, facts: Facts) -> int:
    """all(c(x)) -> sum(x) == sum(x) for `c(x)` exactly `not isnan(x)` (`_compared`), when x
    cannot hold both infinities (their sum would be NaN)."""
    rewritten = 0
    for node in list(graph):
        if node.op != "ReduceAll":
            continue
        x = _compared(node.inputs[0], facts)
        if x is None or (math.isinf(facts[x].lo) and math.isinf(facts[x].hi)):
            continue
        b = Builder(graph, before=node)
        total = b.op("ReduceSum", x, axes=node.attrs["axes"], keepdims=node.attrs["keepdims"])
        graph.replace_all_uses(node.outputs[0], b.op("Equal", total, total, name=node.outputs[0].name))
        graph.remove(node)
        rewritten += 1
    return rewritten


@attrs.define
class RangeFacts:
    name: str = "range_facts"

    def run(self, graph: Graph) -> PassResult:
        facts = analyse(graph)
        decided, constants = 0, False
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
            constants |= chosen.const is not None
        checks = _checks_of_ranges(graph, facts)
        if constants:  # a branch chosen that is a constant: the arithmetic after it folds
            ConstantFolding().run(graph)
        details = {k: v for k, v in (("decided", decided), ("checks", checks)) if v}
        return PassResult(bool(details), decided + checks, details)
