"""Hypothesis, driven by the op registry: every lifted IR op, against PyTensor, in onnxruntime.

Each registry op has a `Case` saying how a PyTensor user writes it and which
dtypes and values are meaningful for it. Shapes include size-0 dims and
broadcasting; operands may be Python literals; values include 0, negatives,
halves, inf and NaN where PyTensor defines a result.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import attrs
import hypothesis.extra.numpy as hnp
import numpy as np
import pytensor.tensor as pt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptonnx
from tests.conftest import check_onnx_matches_pytensor

FLOATS = ("float16", "float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
NUMERIC = FLOATS + INTS
LOGICAL = ("bool",) + INTS
ALL = NUMERIC + ("bool",)
#: NumPy (and PyTensor) define these on bool too
WITH_BOOL = ALL

FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 3.0, np.inf, -np.inf, np.nan]


@attrs.frozen
class Case:
    build: Callable
    #: allowed dtypes of each input
    dtypes: tuple[tuple[str, ...], ...]
    #: which inputs may be given as Python literals
    literal: tuple[int, ...] = ()
    #: value domain: "any", "finite" (no inf/nan), "exponent" (small non-negative for ints)
    values: tuple[str, ...] | None = None
    #: "layout" ops get random size-1 dims and at least `min_ndim` dims
    kind: str = "elementwise"
    min_ndim: int = 0
    #: False for IR ops lifting never emits (tested on hand-built IR in tests/lowering)
    lifted: bool = True
    #: PyTensor requires all inputs to share a dtype kind (bit ops: all bool or all int)
    same_dtype: bool = False
    #: the IR op the case must lift to, when its key is not an op name
    op: str | None = None
    #: NumPy's result, where PyTensor's Python implementation departs from its C code
    reference: Callable | None = None


def _c_round(a):
    a = np.asarray(a)
    magnitude = np.abs(a)
    whole = np.floor(magnitude)
    return np.copysign(whole + (magnitude - whole >= 0.5), a).astype(a.dtype)


def _binary(fn, dtypes=NUMERIC, **kw):
    return Case(fn, (dtypes, dtypes), literal=(0, 1), **kw)


def _unary(fn, dtypes=NUMERIC, **kw):
    return Case(fn, (dtypes,), **kw)


CASES: dict[str, Case] = {
    "Add": _binary(lambda a, b: a + b, WITH_BOOL),
    "Sub": _binary(lambda a, b: a - b),
    "Mul": _binary(lambda a, b: a * b, WITH_BOOL),
    "Div": _binary(lambda a, b: a / b),
    "IntDiv": _binary(lambda a, b: a // b, WITH_BOOL),
    "Mod": _binary(lambda a, b: a % b, WITH_BOOL),
    # integer ** wraps as in NumPy; NumPy refuses negative integer exponents, so they are not drawn
    "Pow": Case(lambda a, b: a**b, (NUMERIC, NUMERIC), literal=(1,), values=("any", "exponent")),
    "Max": _binary(pt.maximum, WITH_BOOL),
    "Min": _binary(pt.minimum, WITH_BOOL),
    "Neg": _unary(lambda a: -a),
    "Abs": _unary(abs, WITH_BOOL),
    "Sign": _unary(pt.sign),
    "Reciprocal": _unary(pt.reciprocal, FLOATS),
    "Exp": _unary(pt.exp),
    "Log": _unary(pt.log),
    "Sqrt": _unary(pt.sqrt),
    "Log1p": _unary(pt.log1p, FLOATS, values=("tiny",)),
    "Expm1": _unary(pt.expm1, FLOATS, values=("tiny",)),
    "Softplus": _unary(pt.softplus),
    "Sin": _unary(pt.sin, FLOATS, values=("finite",)),
    "Cos": _unary(pt.cos, FLOATS, values=("finite",)),
    "Tanh": _unary(pt.tanh),
    # PyTensor computes these in floatX-or-wider from integer inputs too
    "Tan": _unary(pt.tan),
    "ArcSin": _unary(pt.arcsin),
    "ArcCos": _unary(pt.arccos),
    "ArcTan": _unary(pt.arctan),
    "ArcTan2": _binary(pt.arctan2),
    "Sinh": _unary(pt.sinh),
    "Cosh": _unary(pt.cosh),
    "ArcSinh": _unary(pt.arcsinh),
    "ArcCosh": _unary(pt.arccosh),
    "ArcTanh": _unary(pt.arctanh),
    "Exp2": _unary(pt.exp2),
    "Log2": _unary(pt.log2),
    "Log10": _unary(pt.log10),
    "Log1mexp": _unary(pt.log1mexp, FLOATS, values=("tiny",)),
    "Trunc": _unary(pt.trunc),
    "Deg2Rad": _unary(pt.deg2rad, op="Mul"),
    "Rad2Deg": _unary(pt.rad2deg, op="Mul"),
    "Erf": _unary(pt.erf),
    "Sigmoid": _unary(pt.sigmoid),
    "Floor": _unary(pt.floor),
    "Ceil": _unary(pt.ceil),
    "Round": _unary(lambda a: pt.round(a, mode="half_to_even"), FLOATS),
    # PyTensor's C code calls C round(); its Python code, floor(x + 0.5), gives -0 for +0, rounds
    # 0.49999997 up in float32 and odd integers above 2**52 up in float64 (docs/supported.md: semantics kept)
    "RoundHalfAwayFromZero": _unary(
        lambda a: pt.round(a, mode="half_away_from_zero"), FLOATS, reference=lambda a: [_c_round(a)],
    ),
    "Identity": Case(lambda a: pt.tensor_copy(a) + pt.tensor_copy(a), (NUMERIC,), lifted=False),
    "Cast": Case(lambda a: [pt.cast(a, d) for d in ("float32", "float64", "int32", "int64", "int8", "bool")], (NUMERIC + ("bool",),), values=("finite",)),
    "Less": _binary(pt.lt, WITH_BOOL),
    "Greater": _binary(pt.gt, WITH_BOOL),
    "LessOrEqual": _binary(pt.le, WITH_BOOL),
    "GreaterOrEqual": _binary(pt.ge, WITH_BOOL),
    "Equal": _binary(pt.eq, ALL),
    "NotEqual": _binary(pt.neq, ALL),
    "And": _binary(lambda a, b: a & b, LOGICAL, same_dtype=True),
    "Or": _binary(lambda a, b: a | b, LOGICAL, same_dtype=True),
    "Xor": _binary(lambda a, b: a ^ b, LOGICAL, same_dtype=True),
    "Not": _unary(lambda a: ~a, LOGICAL),
    "IsNaN": _unary(pt.isnan, FLOATS),  # of an integer, PyTensor builds a constant False
    "IsInf": _unary(pt.isinf, FLOATS),
    "Where": Case(pt.switch, (("bool",), ALL, ALL), literal=(1, 2)),
    # clip lifts to Less, Greater and two Wheres (PyTensor's rule: lo wins when lo > hi)
    "Clip": Case(pt.clip, (NUMERIC, NUMERIC, NUMERIC), literal=(1, 2), op="Where"),
}


def test_every_registered_op_has_a_property_case():
    lifted_families = {"elementwise"}  # the shape family: tests/e2e/test_shape_programs.py
    ops = {name for name, s in ptonnx.ir.all_schemas().items() if s.family in lifted_families}
    tested = {case.op or name for name, case in CASES.items()}
    assert ops - tested == set(), "add a Case for these ops"
    assert tested - ops == set(), "these Cases name ops the registry lacks"


def _elements(dtype: str, domain: str):
    if dtype == "bool":
        return st.booleans()
    if dtype in INTS:
        info = np.iinfo(dtype)
        if domain == "exponent":
            return st.one_of(st.integers(0, 9), st.sampled_from([v for v in (31, 63, 64, 65, 127, 1000, info.max) if v <= info.max]))
        if domain == "small":
            return st.integers(max(info.min, -10), 10)
        if domain == "finite":  # fits every integer dtype a Cast may target
            return st.integers(max(info.min, -100), min(info.max, 100))
        edges = [v for v in (0, 1, -1, 2, -7, info.min, info.max, info.min + 1, info.max - 1, 2**53, 2**53 + 1) if info.min <= v <= info.max]
        return st.one_of(st.sampled_from(edges), st.integers(max(info.min, -100), min(info.max, 100)))
    width = {"float16": 16, "float32": 32, "float64": 64}[dtype]
    info = np.finfo(dtype)
    #: the ends of the range: largest and smallest normal, smallest subnormal, overflow thresholds
    extremes = [float(v) for v in (info.max, info.tiny, info.smallest_subnormal, np.log(info.max), -np.log(info.max))]
    extremes += [-v for v in extremes] + [float(np.dtype(dtype).type(1e30 if width > 16 else 1e4))]
    if domain == "tiny":  # where the naive formulas lose all precision, plus the usual edges
        bound = float(np.dtype(dtype).type(1e-6))
        tiny = st.floats(-bound, bound, width=width)
        return st.one_of(tiny, st.sampled_from(FLOAT_EDGES + extremes + [-1.0, 100.0, -100.0, 1e5]), st.floats(-50, 50, width=width))
    edges = [e for e in FLOAT_EDGES if domain == "any" or np.isfinite(e)] + (extremes if domain == "any" else [])
    # "finite" values also fit every integer dtype a Cast may target (int8 included)
    bound = 1e3 if domain == "any" else 100
    finite = st.floats(-bound, bound, width=width)
    if domain == "any":
        finite = st.one_of(finite, st.floats(allow_nan=False, allow_infinity=False, width=width))
    halves = st.integers(-20, 20).map(lambda k: k / 2)
    return st.one_of(st.sampled_from(edges), finite, halves)


@st.composite
def op_inputs(draw, case: Case):
    """(input dtypes, arrays or literals per input, static shapes)."""
    ndim = draw(st.integers(case.min_ndim, 3))
    base = draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim))
    if case.kind == "layout" and ndim:
        base[0] = 1  # Squeeze needs a static size-1 axis
    n = len(case.dtypes)
    items = []
    shared = draw(st.sampled_from(case.dtypes[0]))
    for k in range(n):
        dtype = shared if case.same_dtype else draw(st.sampled_from(case.dtypes[k]))
        domain = case.values[k] if case.values else "any"
        # PyTensor takes no Python bools as literals; an int literal makes a bit op on uint64 float64 (refused)
        bit_op_on_uint64 = case.same_dtype and dtype == "uint64"
        if k in case.literal and dtype != "bool" and not bit_op_on_uint64 and draw(st.integers(0, 3)) == 0:
            if dtype in INTS:
                value = draw(st.integers(0, 5) if domain == "exponent" else st.integers(-4, 4))
            else:
                value = draw(st.sampled_from([0.5, -1.5, 2.0, 3.25]))
            items.append(("literal", value, None))
            continue
        mask = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim)) if n > 1 else [False] * ndim
        shape = tuple(1 if m else d for m, d in zip(mask, base, strict=True))
        if case.kind == "layout" and ndim:
            shape = tuple(1 if draw(st.booleans()) else d for d in shape)
        array = draw(hnp.arrays(dtype, shape, elements=_elements(dtype, domain)))
        static = tuple(1 if d == 1 else None for d in shape)
        items.append(("array", array, static))
    if all(kind == "literal" for kind, _, _ in items):
        kind, value, _ = items[0]
        array = np.full(base, value, dtype=np.asarray(value).dtype)
        items[0] = ("array", array, tuple(1 if d == 1 else None for d in base))
    return items


@pytest.mark.parametrize("op", sorted(CASES))
def test_op_matches_pytensor(op):
    case = CASES[op]

    @given(op_inputs(case))
    def check(items):
        variables, operands, arrays = [], [], []
        for k, (kind, value, static) in enumerate(items):
            if kind == "literal":
                operands.append(value)
            else:
                v = pt.tensor(f"in{k}", dtype=value.dtype.name, shape=static)
                variables.append(v)
                operands.append(v)
                arrays.append(value)
        outs = case.build(*operands)
        outs = outs if isinstance(outs, list) else [outs]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            check_onnx_matches_pytensor(variables, outs, arrays, reference=case.reference)
        lifted_ops = set(ptonnx.lift(ptonnx.api.function_graph(variables, outs)).op_counts())
        expected_op = case.op or op
        assert expected_op in lifted_ops or not case.lifted, f"the {op} case lifted to {lifted_ops}"

    check()
