"""`simplify`: exact rewrites of how PyMC writes a log-density's parameter checks.

PyMC's `check_parameters(logp, c1, c2, ...)` becomes `switch(all([all(c1), all(c2), ...]),
logp, -inf)` and the model sums it. Lowered as written, that is a ReduceAll per condition
(three ONNX nodes each), a stack of their results (an Unsqueeze per condition, a Concat) and
one more ReduceAll, then a Where over every element of `logp`, where onnxruntime's float64
Where costs ~6 ns an element, a Mul 0.7 (`benchmarks/results/elementwise_budget.md`). Each rewrite here
gives the same number for every input, NaN and the sign of zero included:

- `all(stack([a, b, ...]))` of scalars is `a and b and ...`;
- `all(x) and all(y)`, over every axis of two conditions of one static shape, is `all(x and y)`;
- `sum(switch(c, v, k))` over every axis, with `c` one element, `k` a non-finite constant and
  at least one element summed, is `switch(c, sum(v), k)`: n copies of -inf (+inf, NaN) sum to
  themselves, and the selection of one element becomes the selection of the sum;
- `squeeze(f(unsqueeze(x), c))` for elementwise f is `f(x, c)` with c squeezed (a check of a
  parameter broadcast to one element);
- `switch(not c, x, y)` is `switch(c, y, x)`.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from ptonnx.ir import Builder, Graph, Node, Value
from ptonnx.ir.registry import get_schema, has_op
from ptonnx.ir.rewrite import Replacement, apply_rewrites, node_rewriter
from ptonnx.passes.base import PassResult


def _producer(value: Value, op: str) -> Node | None:
    node = value.producer
    return node if node is not None and node.op == op else None


def _static(shape) -> bool:
    return all(isinstance(d, int) for d in shape)


def _over_every_axis(node: Node) -> bool:
    rank = node.inputs[0].type.ndim
    return rank > 0 and sorted(a % rank for a in node.attrs["axes"]) == list(range(rank)) and not node.attrs["keepdims"]


def _stacked_scalars(value: Value) -> tuple[list[Value], list[Node]] | None:
    """(s1, s2, ...) where `value` is Concat(Unsqueeze(s1), Unsqueeze(s2), ...) along a new axis 0."""
    concat = _producer(value, "Concat")
    if concat is None or concat.attrs["axis"] != 0:
        return None
    scalars, parts = [], [concat]
    for v in concat.inputs:
        if v.const is not None and v.dtype == "bool" and v.type.ndim == 1 and v.const.all():
            continue  # an all-true constant part (a check PyTensor folded) adds nothing to the all
        unsqueeze = _producer(v, "Unsqueeze")
        if unsqueeze is None or unsqueeze.inputs[0].type.ndim != 0 or tuple(unsqueeze.attrs["axes"]) != (0,):
            return None
        scalars.append(unsqueeze.inputs[0])
        parts.append(unsqueeze)
    return (scalars, parts) if scalars else None


@node_rewriter("ReduceAll")
def all_of_stacked(b: Builder, node: Node):
    """all(stack([a, b, ...])) -> a and b and ..."""
    stacked = _stacked_scalars(node.inputs[0])
    if stacked is None or not _over_every_axis(node):
        return None
    scalars, parts = stacked
    result = scalars[0]
    for s in scalars[1:]:
        result = b.op("And", result, s)
    if result is scalars[0]:
        result = b.op("Identity", result)
    return Replacement({node.outputs[0]: result}, cleans=parts)


def _full_all(value: Value) -> Node | None:
    node = _producer(value, "ReduceAll")
    return node if node is not None and _over_every_axis(node) and _static(node.inputs[0].shape) else None


def _and_leaves(node: Node) -> tuple[list[Value], list[Node]]:
    """The operands of `node` (an And of scalars), one level into an operand that is itself an
    And read by nothing else; and those inner Ands."""
    leaves, inner = [], []
    for v in node.inputs:
        sub = _producer(v, "And")
        if sub is not None and v.num_uses == 1 and v.type.ndim == 0:
            leaves += sub.inputs
            inner.append(sub)
        else:
            leaves.append(v)
    return leaves, inner


@node_rewriter("And")
def and_of_alls(b: Builder, node: Node):
    """all(x) and all(y) -> all(x and y), for x and y of one static shape (and the other
    operands of a chain of Ands kept as they are)."""
    if node.outputs[0].type.ndim != 0:
        return None
    leaves, inner = _and_leaves(node)
    alls = [(v, n) for v in leaves if (n := _full_all(v)) is not None]
    for i, (v, x) in enumerate(alls):
        for w, y in alls[i + 1:]:
            if x is not y and x.inputs[0].shape == y.inputs[0].shape:
                both = b.op("And", x.inputs[0], y.inputs[0])
                result = b.op("ReduceAll", both, axes=tuple(range(both.type.ndim)), keepdims=False)
                for other in (u for u in leaves if u is not v and u is not w):
                    result = b.op("And", other, result)
                return Replacement({node.outputs[0]: result}, absorbs=(*inner, x, y))
    return None


def _scalar_condition(b: Builder, cond: Value) -> Value:
    """`cond` (one element) as a rank-0 value."""
    if cond.type.ndim == 0:
        return cond
    unsqueeze = _producer(cond, "Unsqueeze")
    if unsqueeze is not None and unsqueeze.inputs[0].type.ndim == 0 and cond.type.ndim == len(unsqueeze.attrs["axes"]):
        return unsqueeze.inputs[0]
    return b.op("Squeeze", cond, axes=tuple(range(cond.type.ndim)))


def _non_finite_scalar(value: Value) -> bool:
    return value.const is not None and value.const.size == 1 and not math.isfinite(float(value.const.reshape(())))


@node_rewriter("ReduceSum")
def sum_of_switch(b: Builder, node: Node):
    """sum(switch(c, v, k)) -> switch(c, sum(v), k): c one element, k non-finite, n >= 1 summed."""
    where = _producer(node.inputs[0], "Where")
    out = node.inputs[0]
    if where is None or not _over_every_axis(node) or not _static(out.shape) or math.prod(out.shape) == 0:
        return None
    cond, first, second = where.inputs
    if not (_static(cond.shape) and math.prod(cond.shape) == 1):
        return None
    for kept, k, first_kept in ((first, second, True), (second, first, False)):
        if _non_finite_scalar(k) and kept.type == out.type:
            scalar = _scalar_condition(b, cond)
            total = b.op("ReduceSum", kept, axes=node.attrs["axes"], keepdims=False)
            k0 = Value.constant(np.asarray(k.const.reshape(()), dtype=out.dtype))
            branches = (total, k0) if first_kept else (k0, total)
            return Replacement({node.outputs[0]: b.op("Where", scalar, *branches)}, absorbs=(where,))
    return None


def _without_axes(b: Builder, v: Value, axes: tuple[int, ...], rank: int) -> Value | None:
    """v (an operand of an elementwise node of rank `rank`) with the size-1 `axes` dropped: a
    0-d value as it is, an Unsqueeze of exactly those axes undone, a constant squeezed."""
    if v.type.ndim == 0:
        return v
    if v.type.ndim != rank:
        return None
    unsqueeze = _producer(v, "Unsqueeze")
    if unsqueeze is not None and tuple(sorted(a % rank for a in unsqueeze.attrs["axes"])) == axes:
        return unsqueeze.inputs[0]
    if v.const is not None and all(v.shape[a] == 1 for a in axes):
        return Value.constant(np.squeeze(v.const, axis=axes))
    return None


def _dropped_unit_axes(node: Node) -> tuple[int, ...] | None:
    """The axes `node` drops if all it does is drop axes of size 1: a Squeeze, or an all/any
    over such axes (of one element each, it is that element)."""
    rank = node.inputs[0].type.ndim
    axes = tuple(sorted(a % rank for a in node.attrs["axes"])) if rank else ()
    if node.op in ("ReduceAll", "ReduceAny") and (node.attrs["keepdims"] or not axes
                                                   or any(node.inputs[0].shape[a] != 1 for a in axes)):
        return None
    return axes


@node_rewriter("Squeeze", "ReduceAll", "ReduceAny")
def squeeze_of_elementwise(b: Builder, node: Node):
    """Squeeze(f(Unsqueeze(x), c)) -> f(x, squeezed c) for elementwise f: a check of a parameter
    PyTensor broadcast to (1,) (`sigma > 0`, then an all over the one element) compares the
    scalar itself, one node fewer, the same numbers (f maps each element alone)."""
    inner = node.inputs[0].producer
    if inner is None or len(inner.outputs) != 1 or inner.outputs[0].num_uses != 1 or not _elementwise(inner.op):
        return None
    rank = inner.outputs[0].type.ndim
    axes = _dropped_unit_axes(node)
    if not axes:
        return None
    operands = [_without_axes(b, v, axes, rank) for v in inner.inputs]
    if any(v is None for v in operands) or not any(_producer(v, "Unsqueeze") for v in inner.inputs):
        return None
    return Replacement({node.outputs[0]: b.node(inner.op, operands, inner.attrs).output}, absorbs=(inner,))


@node_rewriter("Where")
def where_of_not(b: Builder, node: Node):
    """Where(not c, x, y) -> Where(c, y, x): the same selection, one node fewer (scipy's
    log_softmax keeps its max where isfinite(max), and that is a `not`)."""
    negation = _producer(node.inputs[0], "Not")
    if negation is None or negation.outputs[0].num_uses != 1 or negation.inputs[0].dtype != "bool":
        return None
    x, y = node.inputs[1:]
    return Replacement({node.outputs[0]: b.node("Where", [negation.inputs[0], y, x]).output}, absorbs=(negation,))


def _elementwise(op: str) -> bool:
    return has_op(op) and get_schema(op).family == "elementwise"


REWRITES = (all_of_stacked, and_of_alls, sum_of_switch, squeeze_of_elementwise, where_of_not)


@attrs.define
class Simplify:
    name: str = "simplify"

    def run(self, graph: Graph) -> PassResult:
        fired = apply_rewrites(graph, REWRITES)
        return PassResult(bool(fired), sum(fired.values()), dict(fired))
