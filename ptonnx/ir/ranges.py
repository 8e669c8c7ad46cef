"""Range facts: what is known of every value's elements, from constants and the ops between.

A small abstract interpretation over one graph. Each value gets a `Fact`:

- `lo`, `hi`: bounds of its elements (bool as 0/1, ints and floats as float64), valid
  while none of its `roots` is NaN;
- `nan`: whether it may be NaN even then (inf - inf, 0 * inf, log of a negative);
- `roots`: the values whose NaN may make it NaN, or change it: graph inputs and the
  results of ops the analysis does not model (their facts are unknown);
- `poison`: roots whose NaN surely makes it NaN (through ops that propagate NaN, and
  selections whose condition a NaN settles: `x == inf` is false for a NaN x);
- for a bool, `nan_true` / `nan_false`: roots whose NaN surely makes it true / false.

So `exp(y) >= 0` is true for every y but NaN, and a NaN y makes both branches of a
`Where(exp(y) >= 0, a, b)` NaN when both are computed from y through such ops: the
Where is `a` (`passes/range_facts.py`). Bounds are widened outwards by an ulp at each
arithmetic step, so rounding never makes a fact false.
"""

from __future__ import annotations

import attrs
import numpy as np

from ptonnx.ir.core import Graph, Value
from ptonnx.ir.range_rules import INF, Fact
from ptonnx.ir.registry import get_schema
from ptonnx.ir.types import FLOAT_DTYPES

__all__ = ["INF", "Fact", "Facts", "analyse"]

#: constants larger than this get no bounds (weights: not worth a pass over their bytes)
MAX_CONSTANT = 1 << 12


def _constant(value: Value) -> Fact:
    a = value.const
    if a.size == 0:
        return Fact(INF, -INF, False)
    if a.size > MAX_CONSTANT:
        return Fact()
    if a.dtype.kind == "b":
        a = a.astype(np.int8)
    if a.dtype.kind not in "fiu":
        return Fact()
    with np.errstate(all="ignore"):
        data = a.astype(np.float64)
    finite = data[~np.isnan(data)]
    nan = bool(np.isnan(data).any())
    if finite.size == 0:
        return Fact(INF, -INF, nan)
    return Fact(float(finite.min()), float(finite.max()), nan)


#: the dtypes analysed: float64 (what decompositions compute in), bool, and ints below 2**53
DTYPES = frozenset({"float64", "bool", "int64", "int32"})
#: integer bounds past this may have wrapped (in an op with the `wraps` trait)
INT_LIMIT = {"int64": 2.0**53, "int32": 2.0**31}


class Facts(dict):
    """Value -> Fact; a value not met yet (a constant, a graph input, the result of an op
    not modelled) gets its fact on first reading: a constant's bounds, or a root's (its
    bounds hold while it is not NaN, so it is not `nan` itself)."""

    def __missing__(self, v: Value) -> Fact:
        self[v] = _constant(v) if v.const is not None else Fact(nan=False, roots=frozenset({v}), poison=frozenset({v}))
        return self[v]


def analyse(graph: Graph) -> Facts:
    """The fact of every value of `graph` (not of its bodies: a body's inputs are roots).

    Each op's declaration says what is known: its range rule (`ranges=`, `ptonnx.ir.range_rules`)
    gives bounds; its traits say where its result's elements come from. An `elementwise` result
    has its operands' roots, NaN-poisoned as `nan_in_nan_out` says and settled as
    `nan_compares_false`/`nan_compares_true` say; a `copies` result (elements moved to other
    places) and a `mixes` one (each element reads a whole slice) are roots of their own with the
    bounds kept; a `shape_only` result has no roots; any other has its operands' roots."""
    facts = Facts()
    fact = facts.__getitem__

    for node in graph:
        schema = get_schema(node.op)
        out = node.outputs[0]
        if schema.ranges is None or len(node.outputs) != 1 or out.dtype not in DTYPES:
            for v in node.outputs:
                fact(v)
            continue
        inputs = [fact(v) for v in node.inputs]
        result = schema.ranges(node, inputs)
        limit = INT_LIMIT.get(out.dtype)
        if limit is not None and schema.has("wraps") and not (-limit <= result.lo and result.hi <= limit):
            result = Fact(nan=False)
        facts[out] = _placed(node, schema, inputs, result)
    return facts


def _placed(node, schema, inputs: list[Fact], result: Fact) -> Fact:
    """`result` with the roots, poison and NaN verdicts the op's traits give it."""
    out = node.outputs[0]
    own = frozenset({out})
    if schema.has("shape_only"):
        return result
    if schema.has("mixes"):
        return attrs.evolve(result, roots=own, poison=own)
    if schema.has("copies") and any(f.roots for f in inputs):  # bounds kept, NaN-ness its own
        if any(v.dtype in FLOAT_DTYPES and not f.roots <= f.poison for v, f in zip(node.inputs, inputs, strict=True)):
            result = Fact()  # a NaN root may leave an element that is not NaN out of bounds
        return attrs.evolve(result, nan=False, roots=own, poison=own)
    roots = frozenset().union(*(f.roots for f in inputs))
    floats = [f.poison for v, f in zip(node.inputs, inputs, strict=True) if v.dtype in FLOAT_DTYPES]
    poison, nan_true, nan_false = result.poison, result.nan_true, result.nan_false
    if out.dtype in FLOAT_DTYPES and schema.has("nan_in_nan_out"):
        poison |= frozenset().union(*floats)
    # every operand's roots settle a comparison (an integer root is never NaN: vacuously)
    if schema.has("nan_compares_false"):
        nan_false |= frozenset().union(*(f.poison for f in inputs))
    if schema.has("nan_compares_true"):
        nan_true |= frozenset().union(*(f.poison for f in inputs))
    if out.dtype not in FLOAT_DTYPES:
        poison = frozenset()
    return attrs.evolve(result, roots=roots, poison=poison, nan_true=nan_true, nan_false=nan_false)
