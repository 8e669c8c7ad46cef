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

import math
from collections.abc import Callable

import attrs
import numpy as np

from ptonnx.ir.core import Graph, Value
from ptonnx.ir.nan_flow import nan_in_nan_out
from ptonnx.ir.types import FLOAT_DTYPES

INF = math.inf


@attrs.frozen
class Fact:
    lo: float = -INF
    hi: float = INF
    nan: bool = True
    roots: frozenset = frozenset()
    poison: frozenset = frozenset()
    nan_true: frozenset = frozenset()
    nan_false: frozenset = frozenset()

    @property
    def true(self) -> bool:
        """A bool value that is true everywhere (while its roots are not NaN)."""
        return self.lo >= 1 and not self.nan

    @property
    def false(self) -> bool:
        return self.hi <= 0 and not self.nan


def _down(x: float) -> float:
    return x if math.isinf(x) or math.isnan(x) else math.nextafter(x, -INF)


def _up(x: float) -> float:
    return x if math.isinf(x) or math.isnan(x) else math.nextafter(x, INF)


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


def _monotone(fn: Callable[[float], float], low: float = -INF, high: float = INF, *, generates_nan_below: bool = False):
    """An increasing function on [low, high] (NaN below `low` when `generates_nan_below`)."""

    def rule(node, facts):
        (x,) = facts
        lo, hi = max(x.lo, low), min(x.hi, high)
        nan = x.nan or (generates_nan_below and x.lo < low)
        if lo > hi:
            return Fact(INF, -INF, nan)
        with np.errstate(all="ignore"):
            return Fact(_down(float(fn(lo))), _up(float(fn(hi))), nan)

    return rule


def _add(node, facts):
    a, b = facts
    nan = a.nan or b.nan or (a.hi == INF and b.lo == -INF) or (a.lo == -INF and b.hi == INF)
    return Fact(_down(a.lo + b.lo) if not math.isnan(a.lo + b.lo) else -INF, _up(a.hi + b.hi) if not math.isnan(a.hi + b.hi) else INF, nan)


def _sub(node, facts):
    a, b = facts
    return _add(node, [a, Fact(-b.hi, -b.lo, b.nan)])


def _products(a: Fact, b: Fact) -> tuple[float, float, bool]:
    with np.errstate(all="ignore"):
        ends = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    zero_times_inf = (a.lo <= 0 <= a.hi and (math.isinf(b.lo) or math.isinf(b.hi))) or (
        b.lo <= 0 <= b.hi and (math.isinf(a.lo) or math.isinf(a.hi)))
    if any(math.isnan(e) for e in ends):
        return -INF, INF, True
    return _down(min(ends)), _up(max(ends)), zero_times_inf


def _mul(node, facts):
    a, b = facts
    if node.inputs[0] is node.inputs[1]:  # a square: never negative
        big = max(abs(a.lo), abs(a.hi))
        low = 0.0 if a.lo <= 0 <= a.hi else _down(min(a.lo * a.lo, a.hi * a.hi))
        return Fact(low, _up(big * big), a.nan)
    lo, hi, nan = _products(a, b)
    return Fact(lo, hi, nan or a.nan or b.nan)


def _div(node, facts):
    a, b = facts
    if b.lo <= 0 <= b.hi:  # the divisor may be 0: x / 0 is ±inf, 0 / 0 NaN
        return Fact(-INF, INF, True)
    with np.errstate(all="ignore"):
        inverse = Fact(1 / b.hi, 1 / b.lo, b.nan)
    lo, hi, nan = _products(a, inverse)
    inf_over_inf = (math.isinf(a.lo) or math.isinf(a.hi)) and (math.isinf(b.lo) or math.isinf(b.hi))
    return Fact(lo, hi, nan or a.nan or b.nan or inf_over_inf)


def _bool(true: bool | None) -> Fact:
    return Fact(0.0 if not true else 1.0, 1.0 if true is not False else 0.0, False)


def _compare(op: str):
    def rule(node, facts):
        a, b = facts
        if a.lo > a.hi or b.lo > b.hi:
            return _bool(None)
        decided = {
            "Less": (a.hi < b.lo, a.lo >= b.hi),
            "LessOrEqual": (a.hi <= b.lo, a.lo > b.hi),
            "Greater": (a.lo > b.hi, a.hi <= b.lo),
            "GreaterOrEqual": (a.lo >= b.hi, a.hi < b.lo),
            "Equal": (a.lo == a.hi == b.lo == b.hi, a.hi < b.lo or b.hi < a.lo),
        }[op]
        # a NaN operand makes every one of these false: a false verdict stands, a true one needs no NaN
        return _bool(True if decided[0] and not (a.nan or b.nan) else False if decided[1] else None)

    return rule


def _logic(op: str):
    def rule(node, facts):
        if node.inputs[0].dtype != "bool":
            return Fact()
        if op == "Not":
            (a,) = facts
            return _bool(False if a.true else True if a.false else None)
        a, b = facts
        if op == "And":
            return _bool(True if a.true and b.true else False if a.false or b.false else None)
        return _bool(True if a.true or b.true else False if a.false and b.false else None)

    return rule


def _is_nan(node, facts):
    (a,) = facts
    return _bool(False if not a.nan else None)


def _select(node, facts):
    c, a, b = facts
    if c.true:
        return a
    if c.false:
        return b
    return Fact(min(a.lo, b.lo), max(a.hi, b.hi), a.nan or b.nan)


def _softmax(node, facts):
    """In [0, 1] or NaN, whatever its operand: each element mixes its whole slice, so the result
    is a root of its own (`MIXES`)."""
    return Fact(0.0, 1.0, False)


def _quantifier(op: str):
    """all / any over axes: a verdict every element shares (every element true, or false) is the
    result's, unless the reduced slice may be empty (all of nothing is true, any false)."""
    def rule(node, facts):
        (a,) = facts
        axes = node.attrs["axes"]
        empty = any(not isinstance(d, int) or d == 0 for i, d in enumerate(node.inputs[0].shape) if i in axes)
        # and only where a NaN root keeps it: a NaN anywhere in a slice reaches its one result
        if a.true and a.roots <= a.nan_true and (op == "ReduceAll" or not empty):
            return _bool(True)
        if a.false and a.roots <= a.nan_false and (op == "ReduceAny" or not empty):
            return _bool(False)
        return _bool(None)

    return rule


def _same(node, facts):
    return facts[0]


def _union(node, facts):
    return Fact(min(f.lo for f in facts), max(f.hi for f in facts), any(f.nan for f in facts))


def _minmax(pick):
    def rule(node, facts):
        return Fact(pick(f.lo for f in facts), pick(f.hi for f in facts), any(f.nan for f in facts))

    return rule


def _abs(node, facts):
    (a,) = facts
    low = 0.0 if a.lo <= 0 <= a.hi else min(abs(a.lo), abs(a.hi))
    return Fact(low, max(abs(a.lo), abs(a.hi)), a.nan)


def _neg(node, facts):
    (a,) = facts
    return Fact(-a.hi, -a.lo, a.nan)


def _cast(node, facts):
    (a,) = facts
    to = node.attrs["to"]
    if to == "bool":
        return _bool(True if a.lo > 0 or a.hi < 0 else False if a.lo == a.hi == 0 and not a.nan else None)
    if to in FLOAT_DTYPES:  # float64 bounds rounded to a narrower float stay bounds, widened an ulp
        return Fact(_down(a.lo), _up(a.hi), a.nan)
    info = np.iinfo(to)
    if a.nan or a.lo < info.min or a.hi > info.max:
        return Fact(float(info.min), float(info.max), False)  # wraps or is undefined: only the dtype's range
    return Fact(math.floor(a.lo) if a.lo > -INF else -INF, math.ceil(a.hi) if a.hi < INF else INF, False)


def _range(node, facts):
    """start, start + delta, ... short of limit: from start up to limit for a positive delta,
    down to it for a negative one, between the two otherwise (widened an ulp for floats)."""
    start, limit, delta = facts
    if delta.lo > 0:
        lo, hi = start.lo, limit.hi
    elif delta.hi < 0:
        lo, hi = limit.lo, start.hi
    else:
        lo, hi = min(start.lo, limit.lo), max(start.hi, limit.hi)
    if node.outputs[0].dtype in FLOAT_DTYPES:
        lo, hi = _down(lo), _up(hi)
    return Fact(lo, hi, start.nan or limit.nan or delta.nan)


def _exp(node, facts):
    (a,) = facts
    with np.errstate(all="ignore"):
        return Fact(max(0.0, _down(float(np.exp(a.lo)))), _up(float(np.exp(a.hi))), a.nan)


#: IR op -> rule(node, input facts) -> the output's fact (ops of one output)
RULES: dict[str, Callable] = {
    "Add": _add, "Sub": _sub, "Mul": _mul, "Div": _div, "Neg": _neg, "Abs": _abs,
    "Max": _minmax(max), "Min": _minmax(min),
    "Exp": _exp, "Log": _monotone(np.log, 0.0, generates_nan_below=True),
    "Sqrt": _monotone(np.sqrt, 0.0, generates_nan_below=True),
    "Log1p": _monotone(np.log1p, -1.0, generates_nan_below=True), "Expm1": _monotone(np.expm1),
    "Sigmoid": _monotone(lambda x: 1 / (1 + np.exp(-x))), "Softplus": _monotone(lambda x: np.logaddexp(0.0, x)),
    "Tanh": _monotone(np.tanh), "Erf": _monotone(lambda x: math.erf(x) if not math.isinf(x) else math.copysign(1.0, x)),
    "Floor": _monotone(np.floor), "Ceil": _monotone(np.ceil), "Round": _monotone(np.round),
    "Less": _compare("Less"), "LessOrEqual": _compare("LessOrEqual"), "Greater": _compare("Greater"),
    "GreaterOrEqual": _compare("GreaterOrEqual"), "Equal": _compare("Equal"),
    "And": _logic("And"), "Or": _logic("Or"), "Not": _logic("Not"), "IsNaN": _is_nan,
    "Where": _select, "Select": _select, "Cast": _cast,
    "Identity": _same, "Check": _same,
    "Reshape": _same, "Expand": _same, "Transpose": _same, "Squeeze": _same, "Unsqueeze": _same,
    "Slice": _same, "Gather": _same, "Concat": _union,
    "Shape": lambda node, facts: Fact(0.0, INF, False), "Range": _range,
    "Softmax": _softmax, "ReduceAll": _quantifier("ReduceAll"), "ReduceAny": _quantifier("ReduceAny"),
}
#: ops that move elements: their result's elements no longer line up with their roots' (a NaN
#: root element may land anywhere), so each result is a root of its own, with the bounds kept
MOVES = frozenset({"Reshape", "Expand", "Transpose", "Squeeze", "Unsqueeze", "Slice", "Gather", "Concat"})
#: ops whose every result element reads a whole slice (a NaN anywhere in it reaches them all),
#: with bounds that hold for every operand: each result is a root of its own, its bounds kept
MIXES = frozenset({"Softmax"})
#: the dtypes analysed: float64 (what decompositions compute in), bool, and ints below 2**53
DTYPES = frozenset({"float64", "bool", "int64", "int32"})
#: integer ops that may wrap around
ARITHMETIC = frozenset({"Add", "Sub", "Mul", "Div", "Neg", "Abs"})
#: integer bounds past this may have wrapped
INT_LIMIT = {"int64": 2.0**53, "int32": 2.0**31}


class Facts(dict):
    """Value -> Fact; a value not met yet (a constant, a graph input, the result of an op
    not modelled) gets its fact on first reading: a constant's bounds, or a root's (its
    bounds hold while it is not NaN, so it is not `nan` itself)."""

    def __missing__(self, v: Value) -> Fact:
        self[v] = _constant(v) if v.const is not None else Fact(nan=False, roots=frozenset({v}), poison=frozenset({v}))
        return self[v]


def analyse(graph: Graph) -> Facts:
    """The fact of every value of `graph` (not of its bodies: a body's inputs are roots)."""
    facts = Facts()
    fact = facts.__getitem__

    for node in graph:
        rule = RULES.get(node.op)
        out = node.outputs[0]
        if rule is None or len(node.outputs) != 1 or out.dtype not in DTYPES:
            for v in node.outputs:
                fact(v)
            continue
        inputs = [fact(v) for v in node.inputs]
        result = rule(node, inputs)
        limit = INT_LIMIT.get(out.dtype)
        if limit is not None and node.op in ARITHMETIC and not (-limit <= result.lo and result.hi <= limit):
            result = Fact(nan=False)
        if node.op in MIXES:
            facts[out] = attrs.evolve(result, roots=frozenset({out}), poison=frozenset({out}))
        elif node.op in MOVES and any(f.roots for f in inputs):  # bounds kept, NaN-ness its own
            if any(v.dtype in FLOAT_DTYPES and not f.roots <= f.poison for v, f in zip(node.inputs, inputs, strict=True)):
                result = Fact()  # a NaN root may leave an element that is not NaN out of bounds
            facts[out] = attrs.evolve(result, nan=False, roots=frozenset({out}), poison=frozenset({out}))
        elif node.op == "Shape":
            facts[out] = result
        else:
            roots = frozenset().union(*(f.roots for f in inputs))
            facts[out] = attrs.evolve(result, roots=roots, poison=_poison(node, inputs), **_settled(node, inputs))
    return facts


def _settled(node, inputs: list[Fact]) -> dict:
    """`nan_true`/`nan_false` of a bool result: the roots whose NaN settles it."""
    op = node.op
    if op in ("Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal"):
        return {"nan_false": inputs[0].poison | inputs[1].poison}
    if op == "IsNaN":
        return {"nan_true": inputs[0].poison}
    if op in ("ReduceAll", "ReduceAny"):  # a verdict `_quantifier` gave holds for every NaN root
        return {"nan_true": inputs[0].nan_true if inputs[0].true else frozenset(),
                "nan_false": inputs[0].nan_false if inputs[0].false else frozenset()}
    if node.outputs[0].dtype != "bool":
        return {}
    if op == "Not":
        return {"nan_true": inputs[0].nan_false, "nan_false": inputs[0].nan_true}
    if op == "And":
        return {"nan_false": inputs[0].nan_false | inputs[1].nan_false, "nan_true": inputs[0].nan_true & inputs[1].nan_true}
    if op == "Or":
        return {"nan_true": inputs[0].nan_true | inputs[1].nan_true, "nan_false": inputs[0].nan_false & inputs[1].nan_false}
    return {}


def _poison(node, inputs: list[Fact]) -> frozenset:
    """The roots whose NaN surely makes the result NaN."""
    if node.outputs[0].dtype not in FLOAT_DTYPES:
        return frozenset()
    if node.op in ("Where", "Select"):
        c, a, b = inputs
        return (a.poison & b.poison) | (c.nan_true & a.poison) | (c.nan_false & b.poison)
    if nan_in_nan_out(node.op) or node.op == "Check":
        return frozenset().union(*(f.poison for v, f in zip(node.inputs, inputs, strict=True) if v.dtype in FLOAT_DTYPES))
    if node.op == "Cast" and node.inputs[0].dtype in FLOAT_DTYPES:
        return inputs[0].poison
    return frozenset()
