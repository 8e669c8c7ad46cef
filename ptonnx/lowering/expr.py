"""Formulas over ONNX values, written as formulas.

The special functions are long compositions (rational approximations, range
reductions, branch selections); spelled as `ctx.emit1("Mul", [...])` calls they
would be unreadable and hard to check against their references. `Ex` wraps one
ONNX value of a float dtype with Python's operators, so `1 - x * x` emits a Mul
and a Sub, and Python numbers become constants of the value's dtype.

Comparisons give bool `Ex` values; `&`, `|` combine them. `==` is not
overloaded (an `Ex` stays hashable): use `.eq()`/`.ne()`. Selection goes
through `where`, which passes a value whose zero sign matters as the second
branch (onnxruntime's Where loses the sign of a -0.0 taken from the first).
"""

from __future__ import annotations

from ptonnx.ir.formula import Formula, polyval, polyval1  # noqa: F401  (re-exported)
from ptonnx.lowering.context import onnx_dtype


class Ex(Formula):
    """One ONNX value being built: its context, name and dtype."""

    __slots__ = ("ctx", "name", "dtype")

    def __init__(self, ctx, name: str, dtype: str):
        self.ctx, self.name, self.dtype = ctx, name, dtype

    def const(self, value) -> Ex:
        """`value` (a Python number or an `Ex`) as an `Ex` of this dtype."""
        if isinstance(value, Ex):
            return value
        return Ex(self.ctx, self.ctx.scalar(value, self.dtype), self.dtype)

    def op(self, op_type: str, *others, dtype: str | None = None, **attributes) -> Ex:
        names = [self.name, *(self.const(o).name for o in others)]
        return Ex(self.ctx, self.ctx.emit1(op_type, names, **attributes), dtype or self.dtype)

    def cast(self, dtype: str) -> Ex:
        return self.op("Cast", dtype=dtype, to=onnx_dtype(dtype)) if dtype != self.dtype else self


def where(cond: Ex, a, b, like: Ex | None = None) -> Ex:
    """cond ? a : b; `a`, `b` may be numbers (of the dtype of the other, or of `like`).
    Put a value whose zero sign matters in `b`."""
    from ptonnx.lowering.elementwise import where as emit_where

    ref = a if isinstance(a, Ex) else b if isinstance(b, Ex) else like
    if ref is None:
        raise TypeError("where() of two numbers needs `like=` (an Ex of the result's dtype)")
    a, b = ref.const(a), ref.const(b)
    return Ex(ref.ctx, emit_where(ref.ctx, cond.name, a.name, b.name, ref.dtype), ref.dtype)


def select(*cases, otherwise: Ex) -> Ex:
    """The first case (cond, value) whose cond holds, else `otherwise` (whose zero sign is kept)."""
    result = otherwise
    for cond, value in reversed(cases):
        result = where(cond, value, result)
    return result


def unary(name: str):
    def fn(x: Ex) -> Ex:
        return x.op(name)

    fn.__name__ = name.lower()
    fn.__doc__ = f"ONNX {name} (onnxruntime's kernel as it is)"
    return fn


exp, log, sqrt, floor, ceil, round_even = (unary(n) for n in ("Exp", "Log", "Sqrt", "Floor", "Ceil", "Round"))
raw_sin, raw_cos = unary("Sin"), unary("Cos")
