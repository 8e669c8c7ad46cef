"""Elementwise IR ops, declared as data: name, arity, dtypes, numpy semantics.

Semantics follow PyTensor's Python implementations (which are NumPy's):
`IntDiv` floors, `Mod` takes the divisor's sign, `RoundHalfAwayFromZero`
is C's round() (what PyTensor's C code calls; its Python code approximates it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.ir.schema import REQUIRED, define
from ptonnx.ir.types import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    NUMERIC_DTYPES,
    SIGNED_INT_DTYPES,
    TensorType,
    broadcast_shapes,
    promote,
)

BOOL = frozenset({"bool"})
LOGICAL = BOOL | INT_DTYPES
SIGNED = SIGNED_INT_DTYPES | FLOAT_DTYPES
#: NumPy defines these on bool too (`+` is or, `*` and, comparisons order False < True)
WITH_BOOL = NUMERIC_DTYPES | BOOL


def _round_half_away_from_zero(x):
    """C's round(), which PyTensor's C code calls (exact, keeps the sign of zero)."""
    magnitude = np.abs(x)
    whole = np.floor(magnitude)
    return np.copysign(whole + (magnitude - whole >= 0.5), x).astype(x.dtype, copy=False)


def _select(cond, a, b):
    """onnxruntime's Where: a -0.0 taken from `a` comes out +0.0 (a + 0.0 is +0.0 for a -0.0)."""
    if a.dtype.kind == "f":
        a = a + np.zeros((), a.dtype)
    return np.where(cond, a, b)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _erf(x):
    from scipy.special import erf  # scipy comes with PyTensor

    return erf(x)


def _softplus(x):
    """log(1 + exp(x)) by PyTensor's piecewise formula (exact where exp would overflow)."""
    return np.where(x < -37, np.exp(x), np.where(x < 18, np.log1p(np.exp(x)), np.where(x < 33.3, x + np.exp(-x), x)))


def _log1mexp(x):
    """PyTensor's two-branch formula: log1p(-exp(a)) below log(1/2), log(-expm1(a)) above."""
    return np.where(x < np.log(0.5), np.log1p(-np.exp(x)), np.log(-np.expm1(x)))


def elementwise_type_rule(input_vars: tuple[str, ...], out_var: str):
    """Broadcast the input shapes; the dtype is the promoted `T` (or a fixed dtype)."""

    def rule(types: Sequence[TensorType], attributes: Mapping[str, Any]) -> list[TensorType]:
        shape = broadcast_shapes(*(t.shape for t in types))
        if out_var in ALL_DTYPES:
            return [TensorType(out_var, shape)]
        var_types = [t.dtype for t, v in zip(types, input_vars, strict=True) if v == out_var]
        return [TensorType(promote(*var_types), shape)]

    return rule


def elementwise_semantics(fn: Callable, input_vars: tuple[str, ...], out_var: str):
    """Apply `fn` after bringing each type variable's inputs to their promoted dtype."""

    def semantics(*arrays):
        groups: dict[str, list] = {}
        for var, a in zip(input_vars, arrays, strict=True):
            groups.setdefault(var, []).append(a.dtype)
        dtypes = {var: promote(*(d.name for d in ds)) if var not in ALL_DTYPES else var for var, ds in groups.items()}
        cast = [np.asarray(a).astype(dtypes[var], copy=False) for var, a in zip(input_vars, arrays, strict=True)]
        with np.errstate(all="ignore"):
            result = np.asarray(fn(*cast))
        out_dtype = out_var if out_var in ALL_DTYPES else dtypes[out_var]
        return result.astype(out_dtype, copy=False)

    return semantics


def declare(name: str, fn: Callable, inputs: tuple[str, ...], output: str, constraint: frozenset[str], doc: str, family: str = "elementwise"):
    """An elementwise op: broadcasting inputs named a, b, c..., NumPy promotion within a type variable."""
    return define(
        name,
        inputs=tuple(f"{'abcd'[i]}: {var}" for i, var in enumerate(inputs)),
        outputs=(f"out: {output}",),
        dtypes={var: constraint for var in set(inputs) | {output} if var not in ALL_DTYPES},
        type_rule=elementwise_type_rule(inputs, output),
        semantics=elementwise_semantics(fn, inputs, output),
        family=family,
        doc=doc,
    )


UNARY = "T",
BINARY = "T", "T"

#: name -> (numpy function, input vars, output var, allowed dtypes of T, doc)
ELEMENTWISE: dict[str, tuple] = {
    "Add": (np.add, BINARY, "T", WITH_BOOL, "a + b"),
    "Sub": (np.subtract, BINARY, "T", NUMERIC_DTYPES, "a - b"),
    "Mul": (np.multiply, BINARY, "T", WITH_BOOL, "a * b"),
    "Div": (np.true_divide, BINARY, "T", FLOAT_DTYPES, "a / b on floats"),
    "IntDiv": (np.floor_divide, BINARY, "T", WITH_BOOL, "floor(a / b), NumPy's floor_divide (x // 0 == 0 for ints)"),
    "Mod": (np.mod, BINARY, "T", WITH_BOOL, "a mod b with the sign of b (NumPy/Python), x % 0 == 0 for ints"),
    "Pow": (np.power, BINARY, "T", NUMERIC_DTYPES, "a ** b (integers wrap as in NumPy)"),
    "Max": (np.maximum, BINARY, "T", WITH_BOOL, "elementwise maximum, NaN-propagating"),
    "Min": (np.minimum, BINARY, "T", WITH_BOOL, "elementwise minimum, NaN-propagating"),
    "Neg": (np.negative, UNARY, "T", SIGNED, "-a"),
    "Abs": (np.abs, UNARY, "T", WITH_BOOL, "|a|"),
    "Sign": (np.sign, UNARY, "T", NUMERIC_DTYPES, "-1, 0 or 1"),
    "Reciprocal": (np.reciprocal, UNARY, "T", FLOAT_DTYPES, "1 / a"),
    "Exp": (np.exp, UNARY, "T", FLOAT_DTYPES, "e ** a"),
    "Log": (np.log, UNARY, "T", FLOAT_DTYPES, "natural log"),
    "Sqrt": (np.sqrt, UNARY, "T", FLOAT_DTYPES, "square root"),
    "Log1p": (np.log1p, UNARY, "T", FLOAT_DTYPES, "log(1 + a), accurate near 0"),
    "Expm1": (np.expm1, UNARY, "T", FLOAT_DTYPES, "exp(a) - 1, accurate near 0"),
    "Softplus": (_softplus, UNARY, "T", FLOAT_DTYPES, "log(1 + exp(a)), without overflow"),
    "Sin": (np.sin, UNARY, "T", FLOAT_DTYPES, "sine"),
    "Cos": (np.cos, UNARY, "T", FLOAT_DTYPES, "cosine"),
    "Tanh": (np.tanh, UNARY, "T", FLOAT_DTYPES, "hyperbolic tangent"),
    "Tan": (np.tan, UNARY, "T", FLOAT_DTYPES, "tangent"),
    "ArcSin": (np.arcsin, UNARY, "T", FLOAT_DTYPES, "inverse sine, in [-pi/2, pi/2]"),
    "ArcCos": (np.arccos, UNARY, "T", FLOAT_DTYPES, "inverse cosine, in [0, pi]"),
    "ArcTan": (np.arctan, UNARY, "T", FLOAT_DTYPES, "inverse tangent, in [-pi/2, pi/2]"),
    "ArcTan2": (np.arctan2, BINARY, "T", FLOAT_DTYPES, "the angle of the point (b, a), in [-pi, pi] (C's atan2(a, b))"),
    "Sinh": (np.sinh, UNARY, "T", FLOAT_DTYPES, "hyperbolic sine"),
    "Cosh": (np.cosh, UNARY, "T", FLOAT_DTYPES, "hyperbolic cosine"),
    "ArcSinh": (np.arcsinh, UNARY, "T", FLOAT_DTYPES, "inverse hyperbolic sine"),
    "ArcCosh": (np.arccosh, UNARY, "T", FLOAT_DTYPES, "inverse hyperbolic cosine (NaN below 1)"),
    "ArcTanh": (np.arctanh, UNARY, "T", FLOAT_DTYPES, "inverse hyperbolic tangent (±inf at ±1, NaN beyond)"),
    "Exp2": (np.exp2, UNARY, "T", FLOAT_DTYPES, "2 ** a"),
    "Log2": (np.log2, UNARY, "T", FLOAT_DTYPES, "base-2 logarithm"),
    "Log10": (np.log10, UNARY, "T", FLOAT_DTYPES, "base-10 logarithm"),
    "Log1mexp": (_log1mexp, UNARY, "T", FLOAT_DTYPES, "log(1 - exp(a)), accurate for a near 0 and far below"),
    "Trunc": (np.trunc, UNARY, "T", FLOAT_DTYPES, "round towards zero"),
    "Erf": (_erf, UNARY, "T", FLOAT_DTYPES, "error function"),
    "Sigmoid": (_sigmoid, UNARY, "T", FLOAT_DTYPES, "1 / (1 + exp(-a))"),
    "Floor": (np.floor, UNARY, "T", FLOAT_DTYPES, "round down"),
    "Ceil": (np.ceil, UNARY, "T", FLOAT_DTYPES, "round up"),
    "Round": (np.round, UNARY, "T", FLOAT_DTYPES, "round half to even"),
    "RoundHalfAwayFromZero": (_round_half_away_from_zero, UNARY, "T", FLOAT_DTYPES, "C round(): halves away from zero, exact"),
    "Identity": (lambda a: a, UNARY, "T", ALL_DTYPES, "a"),
    "Less": (np.less, BINARY, "bool", WITH_BOOL, "a < b"),
    "Greater": (np.greater, BINARY, "bool", WITH_BOOL, "a > b"),
    "LessOrEqual": (np.less_equal, BINARY, "bool", WITH_BOOL, "a <= b"),
    "GreaterOrEqual": (np.greater_equal, BINARY, "bool", WITH_BOOL, "a >= b"),
    "Equal": (np.equal, BINARY, "bool", ALL_DTYPES, "a == b"),
    "NotEqual": (np.not_equal, BINARY, "bool", ALL_DTYPES, "a != b"),
    "And": (np.bitwise_and, BINARY, "T", LOGICAL, "logical and on bool, bitwise on ints"),
    "Or": (np.bitwise_or, BINARY, "T", LOGICAL, "logical or on bool, bitwise on ints"),
    "Xor": (np.bitwise_xor, BINARY, "T", LOGICAL, "logical xor on bool, bitwise on ints"),
    "Not": (np.invert, UNARY, "T", LOGICAL, "logical not on bool, bitwise not on ints"),
    "Where": (np.where, ("bool", "T", "T"), "T", ALL_DTYPES, "cond ? a : b"),
    "IsNaN": (np.isnan, UNARY, "bool", NUMERIC_DTYPES, "a is NaN (never for integers)"),
    "IsInf": (np.isinf, UNARY, "bool", NUMERIC_DTYPES, "a is +inf or -inf (never for integers)"),
}

#: ops only decompositions build: one onnxruntime kernel each, as it computes (family "kernel")
KERNELS: dict[str, tuple] = {
    "Select": (_select, ("bool", "T", "T"), "T", ALL_DTYPES,
               "cond ? a : b as onnxruntime's Where runs it: a -0.0 taken from a is +0.0 (decompositions put a zero whose sign matters in b)"),
    "FMod": (np.fmod, BINARY, "T", FLOAT_DTYPES, "C's fmod: a - trunc(a / b) b, with a's sign (exact)"),
    "SinReduced": (np.sin, UNARY, "T", FLOAT_DTYPES, "sine of a reduced argument, |a| <= pi/2 (no argument reduction: the accurate Sin reduces first)"),
}

for _name, (_fn, _inputs, _out, _allowed, _doc) in ELEMENTWISE.items():
    declare(_name, _fn, _inputs, _out, _allowed, _doc)
for _name, (_fn, _inputs, _out, _allowed, _doc) in KERNELS.items():
    declare(_name, _fn, _inputs, _out, _allowed, _doc, family="kernel")


def _cast_rule(types: Sequence[TensorType], attributes: Mapping[str, Any]) -> list[TensorType]:
    return [TensorType(attributes["to"], types[0].shape)]


def _cast(a, to):
    with np.errstate(all="ignore"):
        return np.asarray(a).astype(to)


define(
    "Cast",
    inputs=("a: T1",),
    outputs=("out: T2",),
    dtypes={"T1": ALL_DTYPES, "T2": ALL_DTYPES},
    type_rule=_cast_rule,
    semantics=_cast,
    attributes={"to": (str, REQUIRED)},
    family="elementwise",
    doc="convert to dtype `to` (float to int truncates; nonzero to bool is True)",
)
