"""Elementwise IR ops, declared as data: name, arity, dtypes, numpy semantics.

Semantics follow PyTensor's Python implementations (which are NumPy's):
`IntDiv` floors, `Mod` takes the divisor's sign, `RoundHalfAwayFromZero`
is C's round() (what PyTensor's C code calls; its Python code approximates it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.ir import dims
from ptonnx.ir import range_rules as rr
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


def declare(name: str, *, semantics: Callable, inputs: tuple[str, ...], output: str, dtypes: frozenset[str], doc: str,
            traits: tuple[str, ...] = (), family: str = "elementwise", contents=None, ranges=None, zero_sign=()):
    """An elementwise op: broadcasting inputs named a, b, c..., NumPy promotion within a type variable."""
    return define(
        name,
        inputs=tuple(f"{'abcd'[i]}: {var}" for i, var in enumerate(inputs)),
        outputs=(f"out: {output}",),
        dtypes={var: dtypes for var in set(inputs) | {output} if var not in ALL_DTYPES},
        type_rule=elementwise_type_rule(inputs, output),
        semantics=elementwise_semantics(semantics, inputs, output),
        traits=("elementwise", *traits),
        contents=contents,
        ranges=ranges,
        zero_sign=zero_sign,
        family=family,
        doc=doc,
    )


UNARY = "T",
BINARY = "T", "T"

# Each elementwise op, as a keyword row: its NumPy semantics, the type variable of each input
# and of the output, the dtypes those may be, the traits the passes read, and what it computes.
declare("Add", ranges=rr.add, contents=dims.add_contents, semantics=np.add, inputs=BINARY, output="T", dtypes=WITH_BOOL, traits=("nan_in_nan_out", "wraps", "commutative"),
        doc="a + b")
declare("Sub", ranges=rr.sub, contents=dims.sub_contents, semantics=np.subtract, inputs=BINARY, output="T", dtypes=NUMERIC_DTYPES, traits=("nan_in_nan_out", "wraps"),
        doc="a - b")
declare("Mul", zero_sign=("passes", "passes"), ranges=rr.mul, contents=dims.mul_contents, semantics=np.multiply, inputs=BINARY, output="T", dtypes=WITH_BOOL, traits=("nan_in_nan_out", "wraps", "commutative"),
        doc="a * b")
declare("Div", zero_sign=("passes", ""), ranges=rr.div, semantics=np.true_divide, inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="a / b on floats")
declare("IntDiv", contents=dims.floordiv_contents, semantics=np.floor_divide, inputs=BINARY, output="T", dtypes=WITH_BOOL,
        doc="floor(a / b), NumPy's floor_divide (x // 0 == 0 for ints)")
declare("Mod", semantics=np.mod, inputs=BINARY, output="T", dtypes=WITH_BOOL,
        doc="a mod b with the sign of b (NumPy/Python), x % 0 == 0 for ints")
declare("Pow", semantics=np.power, inputs=BINARY, output="T", dtypes=NUMERIC_DTYPES, traits=("wraps",),
        doc="a ** b (integers wrap as in NumPy)")
declare("Max", ranges=rr.extreme(max), contents=dims.max_contents, semantics=np.maximum, inputs=BINARY, output="T", dtypes=WITH_BOOL,
        traits=("nan_in_nan_out", "idempotent"), doc="elementwise maximum, NaN-propagating")
declare("Min", ranges=rr.extreme(min), contents=dims.min_contents, semantics=np.minimum, inputs=BINARY, output="T", dtypes=WITH_BOOL,
        traits=("nan_in_nan_out", "idempotent"), doc="elementwise minimum, NaN-propagating")
declare("Neg", zero_sign=("passes",), ranges=rr.negate, contents=dims.neg_contents, semantics=np.negative, inputs=UNARY, output="T", dtypes=SIGNED, traits=("nan_in_nan_out", "wraps"),
        doc="-a")
declare("Abs", zero_sign=("blind",), ranges=rr.absolute, semantics=np.abs, inputs=UNARY, output="T", dtypes=WITH_BOOL, traits=("nan_in_nan_out", "never_negative_zero", "wraps"),
        doc="|a|")
declare("Sign", semantics=np.sign, inputs=UNARY, output="T", dtypes=NUMERIC_DTYPES,
        doc="-1, 0 or 1")
declare("Reciprocal", semantics=np.reciprocal, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="1 / a")
declare("Exp", zero_sign=("blind",), ranges=rr.exp, semantics=np.exp, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out", "never_negative_zero"),
        doc="e ** a")
declare("Log", ranges=rr.monotone(np.log, 0.0, generates_nan_below=True), semantics=np.log, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="natural log")
declare("Sqrt", ranges=rr.monotone(np.sqrt, 0.0, generates_nan_below=True), semantics=np.sqrt, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="square root")
declare("Log1p", ranges=rr.monotone(np.log1p, -1.0, generates_nan_below=True), semantics=np.log1p, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="log(1 + a), accurate near 0")
declare("Expm1", ranges=rr.monotone(np.expm1), semantics=np.expm1, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="exp(a) - 1, accurate near 0")
declare("Softplus", ranges=rr.monotone(lambda x: np.logaddexp(0.0, x)), semantics=_softplus, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out", "never_negative_zero"),
        doc="log(1 + exp(a)), without overflow")
declare("Sin", semantics=np.sin, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="sine")
declare("Cos", semantics=np.cos, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="cosine")
declare("Tanh", ranges=rr.monotone(np.tanh), semantics=np.tanh, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="hyperbolic tangent")
declare("Tan", semantics=np.tan, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="tangent")
declare("ArcSin", semantics=np.arcsin, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="inverse sine, in [-pi/2, pi/2]")
declare("ArcCos", semantics=np.arccos, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="inverse cosine, in [0, pi]")
declare("ArcTan", semantics=np.arctan, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="inverse tangent, in [-pi/2, pi/2]")
declare("ArcTan2", semantics=np.arctan2, inputs=BINARY, output="T", dtypes=FLOAT_DTYPES,
        doc="the angle of the point (b, a), in [-pi, pi] (C's atan2(a, b))")
declare("Sinh", semantics=np.sinh, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="hyperbolic sine")
declare("Cosh", semantics=np.cosh, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out", "never_negative_zero"),
        doc="hyperbolic cosine")
declare("ArcSinh", semantics=np.arcsinh, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="inverse hyperbolic sine")
declare("ArcCosh", semantics=np.arccosh, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="inverse hyperbolic cosine (NaN below 1)")
declare("ArcTanh", semantics=np.arctanh, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="inverse hyperbolic tangent (±inf at ±1, NaN beyond)")
declare("Exp2", semantics=np.exp2, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out", "never_negative_zero"),
        doc="2 ** a")
declare("Log2", semantics=np.log2, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="base-2 logarithm")
declare("Log10", semantics=np.log10, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="base-10 logarithm")
declare("Log1mexp", semantics=_log1mexp, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="log(1 - exp(a)), accurate for a near 0 and far below")
declare("Trunc", semantics=np.trunc, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="round towards zero")
declare("Erf", ranges=rr.monotone(lambda x: math.erf(x) if not math.isinf(x) else math.copysign(1.0, x)), semantics=_erf, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="error function")
declare("Sigmoid", ranges=rr.monotone(lambda x: 1 / (1 + np.exp(-x))), semantics=_sigmoid, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out", "never_negative_zero"),
        doc="1 / (1 + exp(-a))")
declare("Floor", ranges=rr.monotone(np.floor), semantics=np.floor, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="round down")
declare("Ceil", ranges=rr.monotone(np.ceil), semantics=np.ceil, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="round up")
declare("Round", ranges=rr.monotone(np.round), semantics=np.round, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="round half to even")
declare("RoundHalfAwayFromZero", semantics=_round_half_away_from_zero, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",),
        doc="C round(): halves away from zero, exact")
declare("Identity", ranges=rr.same, contents=dims.same_contents, semantics=lambda a: a, inputs=UNARY, output="T", dtypes=ALL_DTYPES, traits=("nan_in_nan_out",),
        doc="a")
declare("Less", zero_sign=("blind", "blind"), ranges=rr.compare("Less"), semantics=np.less, inputs=BINARY, output="bool", dtypes=WITH_BOOL, traits=("nan_compares_false",),
        doc="a < b")
declare("Greater", zero_sign=("blind", "blind"), ranges=rr.compare("Greater"), semantics=np.greater, inputs=BINARY, output="bool", dtypes=WITH_BOOL, traits=("nan_compares_false",),
        doc="a > b")
declare("LessOrEqual", zero_sign=("blind", "blind"), ranges=rr.compare("LessOrEqual"), semantics=np.less_equal, inputs=BINARY, output="bool", dtypes=WITH_BOOL, traits=("nan_compares_false",),
        doc="a <= b")
declare("GreaterOrEqual", zero_sign=("blind", "blind"), ranges=rr.compare("GreaterOrEqual"), semantics=np.greater_equal, inputs=BINARY, output="bool", dtypes=WITH_BOOL, traits=("nan_compares_false",),
        doc="a >= b")
declare("Equal", zero_sign=("blind", "blind"), ranges=rr.compare("Equal"), semantics=np.equal, inputs=BINARY, output="bool", dtypes=ALL_DTYPES, traits=("nan_compares_false", "commutative"),
        doc="a == b")
declare("NotEqual", semantics=np.not_equal, inputs=BINARY, output="bool", dtypes=ALL_DTYPES,
        traits=("nan_compares_true", "commutative"), doc="a != b")
declare("And", ranges=rr.logic("And"), semantics=np.bitwise_and, inputs=BINARY, output="T", dtypes=LOGICAL,
        traits=("commutative", "idempotent"), doc="logical and on bool, bitwise on ints")
declare("Or", ranges=rr.logic("Or"), semantics=np.bitwise_or, inputs=BINARY, output="T", dtypes=LOGICAL,
        traits=("commutative", "idempotent"), doc="logical or on bool, bitwise on ints")
declare("Xor", semantics=np.bitwise_xor, inputs=BINARY, output="T", dtypes=LOGICAL,
        traits=("commutative",), doc="logical xor on bool, bitwise on ints")
declare("Not", ranges=rr.logic("Not"), semantics=np.invert, inputs=UNARY, output="T", dtypes=LOGICAL,
        doc="logical not on bool, bitwise not on ints")
declare("Where", zero_sign=("", "passes", "passes"), ranges=rr.select, semantics=np.where, inputs=("bool", "T", "T"), output="T", dtypes=ALL_DTYPES, traits=("selects",),
        doc="cond ? a : b")
declare("IsNaN", ranges=rr.is_nan, semantics=np.isnan, inputs=UNARY, output="bool", dtypes=NUMERIC_DTYPES,
        traits=("nan_compares_true",), doc="a is NaN (never for integers)")
declare("IsInf", semantics=np.isinf, inputs=UNARY, output="bool", dtypes=NUMERIC_DTYPES,
        doc="a is +inf or -inf (never for integers)")

# Ops only decompositions build: one onnxruntime kernel each, as it computes (family "kernel")
declare("Select", zero_sign=("", "blind", "passes"), ranges=rr.select, semantics=_select, inputs=("bool", "T", "T"), output="T", dtypes=ALL_DTYPES, traits=("selects",), family="kernel",
        doc="cond ? a : b as onnxruntime's Where runs it: a -0.0 taken from a is +0.0 (decompositions put a zero whose sign matters in b)")
declare("FMod", semantics=np.fmod, inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="kernel",
        doc="C's fmod: a - trunc(a / b) b, with a's sign (exact)")
declare("SinKernel", semantics=np.sin, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, family="kernel",
        doc="onnxruntime's Sin as it computes: accurate on |a| <= 1.5715 (the Sin decomposition reduces to there first)")
declare("CosKernel", semantics=np.cos, inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, family="kernel",
        doc="onnxruntime's Cos as it computes (the Cos decomposition gives it only |a| >= 2**20, which it reduces exactly)")



def _cast_rule(types: Sequence[TensorType], attributes: Mapping[str, Any]) -> list[TensorType]:
    return [TensorType(attributes["to"], types[0].shape)]


def _cast(a, to):
    with np.errstate(all="ignore"):
        return np.asarray(a).astype(to)


define(
    "Cast", ranges=rr.cast, contents=dims.cast_contents,
    inputs=("a: T1",),
    outputs=("out: T2",),
    dtypes={"T1": ALL_DTYPES, "T2": ALL_DTYPES},
    type_rule=_cast_rule,
    semantics=_cast,
    attributes={"to": (str, REQUIRED)},
    traits=("elementwise", "nan_in_nan_out"),
    family="elementwise",
    doc="convert to dtype `to` (float to int truncates; nonzero to bool is True)",
)
