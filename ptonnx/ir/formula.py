"""Formulas written as formulas: Python's operators over values being built.

The special functions are long compositions (rational approximations, range
reductions, branch selections); spelled as builder calls they would be
unreadable and hard to check against their references. A `Formula` wraps one
value of a float dtype with Python's operators, so `1 - x * x` builds a Mul
and a Sub, and Python numbers become constants of the value's dtype.

`Formula` is the operator layer only; its subclass says what building one op
means: `ptonnx.decompositions.expr.Ex` builds IR nodes (every numerical formula is a
decomposition). The op names are the IR's, which are ONNX's for these ops.

Comparisons give bool values; `&`, `|` combine them. `==` is not overloaded
(a formula stays hashable): use `.eq()`/`.ne()`.
"""

from __future__ import annotations

from collections.abc import Sequence


class Formula:
    """One value being built. Subclasses define `op`, `const` and `cast`."""

    __slots__ = ()

    def op(self, op_type: str, *others, dtype: str | None = None, **attributes):  # pragma: no cover - abstract
        raise NotImplementedError

    def const(self, value):  # pragma: no cover - abstract
        raise NotImplementedError

    def __add__(self, o): return self.op("Add", o)
    def __radd__(self, o): return self.const(o).op("Add", self)
    def __sub__(self, o): return self.op("Sub", o)
    def __rsub__(self, o): return self.const(o).op("Sub", self)
    def __mul__(self, o): return self.op("Mul", o)
    def __rmul__(self, o): return self.const(o).op("Mul", self)
    def __truediv__(self, o): return self.op("Div", o)
    def __rtruediv__(self, o): return self.const(o).op("Div", self)
    def __pow__(self, o): return self.op("Pow", o)
    def __rpow__(self, o): return self.const(o).op("Pow", self)
    def __neg__(self): return self.op("Neg")
    def __abs__(self): return self.op("Abs")
    def __lt__(self, o): return self.op("Less", o, dtype="bool")
    def __le__(self, o): return self.op("LessOrEqual", o, dtype="bool")
    def __gt__(self, o): return self.op("Greater", o, dtype="bool")
    def __ge__(self, o): return self.op("GreaterOrEqual", o, dtype="bool")
    def eq(self, o): return self.op("Equal", o, dtype="bool")
    def __and__(self, o): return self.op("And", o)
    def __or__(self, o): return self.op("Or", o)

    def ne(self, o):
        """self != o, as `not (self == o)` (true for NaN)."""
        return self.eq(o).op("Not")

    def isnan(self):
        return self.op("IsNaN", dtype="bool")


def polyval(x: Formula, coefficients: Sequence[float]):
    """c[0] x**n + ... + c[n] by Horner's rule (highest degree first, as Cephes' polevl)."""
    acc = x.const(coefficients[0])
    for c in coefficients[1:]:
        acc = acc * x + c
    return acc


def polyval1(x: Formula, coefficients: Sequence[float]):
    """x**n + c[0] x**(n-1) + ... + c[n-1]: a leading coefficient of 1 (Cephes' p1evl)."""
    acc = x + coefficients[0]
    for c in coefficients[1:]:
        acc = acc * x + c
    return acc
