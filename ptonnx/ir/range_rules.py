"""The range rule of each op: `rule(node, input facts) -> Fact`, named in the op's declaration
(`define(..., ranges=...)`) and read by `ptonnx.ir.ranges.analyse`.

A rule gives the bounds and `nan` of its result, and, where the op decides them itself
(a selection, a logic op, all/any), its `poison` and `nan_true`/`nan_false`; the analysis adds
what the op's traits say (roots, NaN propagation, comparisons a NaN settles).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numpy as np

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


def monotone(fn: Callable[[float], float], low: float = -INF, high: float = INF, *, generates_nan_below: bool = False):
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


def add(node, facts):
    a, b = facts
    nan = a.nan or b.nan or (a.hi == INF and b.lo == -INF) or (a.lo == -INF and b.hi == INF)
    return Fact(_down(a.lo + b.lo) if not math.isnan(a.lo + b.lo) else -INF, _up(a.hi + b.hi) if not math.isnan(a.hi + b.hi) else INF, nan)


def sub(node, facts):
    a, b = facts
    return add(node, [a, Fact(-b.hi, -b.lo, b.nan)])


def _products(a: Fact, b: Fact) -> tuple[float, float, bool]:
    with np.errstate(all="ignore"):
        ends = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    zero_times_inf = (a.lo <= 0 <= a.hi and (math.isinf(b.lo) or math.isinf(b.hi))) or (
        b.lo <= 0 <= b.hi and (math.isinf(a.lo) or math.isinf(a.hi)))
    if any(math.isnan(e) for e in ends):
        return -INF, INF, True
    return _down(min(ends)), _up(max(ends)), zero_times_inf


def mul(node, facts):
    a, b = facts
    if node.inputs[0] is node.inputs[1]:  # a square: never negative
        big = max(abs(a.lo), abs(a.hi))
        low = 0.0 if a.lo <= 0 <= a.hi else _down(min(a.lo * a.lo, a.hi * a.hi))
        return Fact(low, _up(big * big), a.nan)
    lo, hi, nan = _products(a, b)
    return Fact(lo, hi, nan or a.nan or b.nan)


def div(node, facts):
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


def compare(op: str):
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


def logic(op: str):
    def rule(node, facts):
        if node.inputs[0].dtype != "bool":
            return Fact()
        if op == "Not":
            (a,) = facts
            return attrs.evolve(_bool(False if a.true else True if a.false else None),
                                nan_true=a.nan_false, nan_false=a.nan_true)
        a, b = facts
        if op == "And":
            return attrs.evolve(_bool(True if a.true and b.true else False if a.false or b.false else None),
                                nan_false=a.nan_false | b.nan_false, nan_true=a.nan_true & b.nan_true)
        return attrs.evolve(_bool(True if a.true or b.true else False if a.false and b.false else None),
                            nan_true=a.nan_true | b.nan_true, nan_false=a.nan_false & b.nan_false)

    return rule


def is_nan(node, facts):
    (a,) = facts
    return _bool(False if not a.nan else None)


def select(node, facts):
    """Where/Select: the branch a decided condition picks; either way, a root settles the result
    (poisons it, makes it true or false) where it settles both branches, or the condition and the
    branch the condition then picks (a NaN root may flip a decided condition)."""
    c, a, b = facts

    def settled(field: str) -> frozenset:
        x, y = getattr(a, field), getattr(b, field)
        return (x & y) | (c.nan_true & x) | (c.nan_false & y)

    picked = a if c.true else b if c.false else Fact(min(a.lo, b.lo), max(a.hi, b.hi), a.nan or b.nan)
    return Fact(picked.lo, picked.hi, picked.nan, poison=settled("poison"), nan_true=settled("nan_true"),
                nan_false=settled("nan_false"))


def unit_interval(node, facts):
    """In [0, 1] or NaN, whatever its operand: each element mixes its whole slice, so the result
    is a root of its own (the `mixes` trait)."""
    return Fact(0.0, 1.0, False)


def quantifier(op: str):
    """all / any over axes: a verdict every element shares (every element true, or false) is the
    result's, unless the reduced slice may be empty (all of nothing is true, any false)."""
    def rule(node, facts):
        (a,) = facts
        axes = node.attrs["axes"]
        empty = any(not isinstance(d, int) or d == 0 for i, d in enumerate(node.inputs[0].shape) if i in axes)
        # and only where a NaN root keeps it: a NaN anywhere in a slice reaches its one result
        # (a verdict given holds for every NaN root: they settle the result as they settle `a`)
        if a.true and a.roots <= a.nan_true and (op == "ReduceAll" or not empty):
            return attrs.evolve(_bool(True), nan_true=a.nan_true)
        if a.false and a.roots <= a.nan_false and (op == "ReduceAny" or not empty):
            return attrs.evolve(_bool(False), nan_false=a.nan_false)
        return _bool(None)

    return rule


def same(node, facts):
    return facts[0]


def shape(node, facts):
    """A shape: sizes, whatever the elements are."""
    return Fact(0.0, INF, False)


def union(node, facts):
    return Fact(min(f.lo for f in facts), max(f.hi for f in facts), any(f.nan for f in facts))


def extreme(pick):
    def rule(node, facts):
        return Fact(pick(f.lo for f in facts), pick(f.hi for f in facts), any(f.nan for f in facts))

    return rule


def absolute(node, facts):
    (a,) = facts
    low = 0.0 if a.lo <= 0 <= a.hi else min(abs(a.lo), abs(a.hi))
    return Fact(low, max(abs(a.lo), abs(a.hi)), a.nan)


def negate(node, facts):
    (a,) = facts
    return Fact(-a.hi, -a.lo, a.nan)


def cast(node, facts):
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


def arange(node, facts):
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


def exp(node, facts):
    (a,) = facts
    with np.errstate(all="ignore"):
        return Fact(max(0.0, _down(float(np.exp(a.lo)))), _up(float(np.exp(a.hi))), a.nan)


