"""Formulas over IR values: what the decompositions are written in.

`Ex` wraps one IR value with Python's operators (`ptonnx.ir.formula`); each
operation builds one IR node through the `Scope` the formula is built in (a
Builder placed before the node being decomposed, or a loop body being built).
Python numbers become scalar constants of the value's dtype, one per value and
dtype in a scope.

Selection is `where`, the IR's `Select` (onnxruntime's Where: a -0.0 taken from
the first branch comes out +0.0), so a value whose zero sign matters goes second.
"""

from __future__ import annotations

import numpy as np

from ptonnx.ir import Builder, Value
from ptonnx.ir.formula import Formula, polyval, polyval1  # noqa: F401  (re-exported for the formulas)


class Scope:
    """Where formulas build: a Builder and a cache of the scalar constants made there."""

    def __init__(self, builder: Builder):
        self.builder = builder
        self._scalars: dict[tuple, Value] = {}

    def op(self, op: str, inputs, attrs=None) -> Value:
        return self.builder.node(op, inputs, attrs).output

    def scalar(self, value, dtype: str) -> Value:
        array = np.asarray(value, dtype=dtype)
        key = (dtype, array.tobytes())  # by bits: -0.0 and 0.0 differ, NaN is one constant
        if key not in self._scalars:
            self._scalars[key] = Value.constant(array)
        return self._scalars[key]

    def constant(self, array) -> Value:
        return Value.constant(np.asarray(array))

    def ex(self, value: Value) -> Ex:
        return Ex(self, value)


class Ex(Formula):
    """One IR value being built, and the scope it is built in."""

    __slots__ = ("scope", "value")

    def __init__(self, scope: Scope, value: Value):
        self.scope, self.value = scope, value

    @property
    def dtype(self) -> str:
        return self.value.dtype

    def const(self, value) -> Ex:
        """`value` (a Python number or an `Ex`) as an `Ex` of this dtype."""
        if isinstance(value, Ex):
            return value
        return Ex(self.scope, self.scope.scalar(value, self.dtype))

    def op(self, op_type: str, *others, dtype: str | None = None, **attributes) -> Ex:
        inputs = [self.value, *(self.const(o).value for o in others)]
        return Ex(self.scope, self.scope.op(op_type, inputs, attributes))

    def cast(self, dtype: str) -> Ex:
        return self.op("Cast", to=dtype) if dtype != self.dtype else self

    def __abs__(self) -> Ex:
        """|-y| is |y| (bit for bit, for every signed and float dtype): softplus(x) and
        softplus(-x) of one log-density then share exp(-|x|) and what follows (CSE merges them)."""
        producer = self.value.producer
        if producer is not None and producer.op == "Neg" and self.dtype[0] in "if":
            return Ex(self.scope, producer.inputs[0]).op("Abs")
        return self.op("Abs")


def where(cond: Ex, a, b, like: Ex | None = None) -> Ex:
    """cond ? a : b (`Select`); `a`, `b` may be numbers (of the dtype of the other, or of
    `like`). Put a value whose zero sign matters in `b`."""
    ref = a if isinstance(a, Ex) else b if isinstance(b, Ex) else like
    if ref is None:
        raise TypeError("where() of two numbers needs `like=` (an Ex of the result's dtype)")
    return cond.op("Select", ref.const(a), ref.const(b))


def select(*cases, otherwise: Ex) -> Ex:
    """The first case (cond, value) whose cond holds, else `otherwise` (whose zero sign is kept)."""
    result = otherwise
    for cond, value in reversed(cases):
        result = where(cond, value, result)
    return result


def _unary(name: str, doc: str):
    def fn(x: Ex) -> Ex:
        return x.op(name)

    fn.__name__, fn.__doc__ = name.lower(), doc
    return fn


exp = _unary("Exp", "e ** x")
log = _unary("Log", "natural log")
sqrt = _unary("Sqrt", "square root")
floor = _unary("Floor", "round down")
ceil = _unary("Ceil", "round up")
round_even = _unary("Round", "round half to even")
log1p = _unary("Log1p", "log(1 + x), accurate near 0 (the IR op: Kahan's formula when lowered)")
expm1 = _unary("Expm1", "exp(x) - 1, accurate near 0 (the IR op)")
sin = _unary("Sin", "sine, with the argument reduced exactly (the IR op)")
cos = _unary("Cos", "cosine, with the argument reduced exactly (the IR op)")
sin_kernel = _unary("SinKernel", "onnxruntime's Sin as it computes: accurate for |x| <= 1.5715 (no reduction of ours)")
cos_kernel = _unary("CosKernel", "onnxruntime's Cos as it computes (no reduction of ours)")


def fmod(x: Ex, divisor) -> Ex:
    """C's fmod: x - trunc(x / divisor) divisor, with x's sign (exact)."""
    return x.op("FMod", divisor)
