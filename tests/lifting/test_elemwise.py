"""lifting/elemwise.py: Elemwise of every scalar op in `SCALAR_OPS` (one IR op each) and of the
scalar ops with rules of their own (`SPECIAL`: Cast, Identity, Second, Deg2Rad, Rad2Deg, Sqr, Clip,
the comparisons LT, LE, GT, GE, EQ, NEQ, Composite), scalar ops outside an Elemwise, the
runtime-broadcast check, and the refusals (complex numbers, a scalar op with no rule)."""

from __future__ import annotations

import numpy as np
import pytensor.scalar as ps
import pytensor.tensor as pt
import pytest
from pytensor.tensor.elemwise import Elemwise

from ptonnx.errors import UnsupportedOpError
from ptonnx.lifting.elemwise import SCALAR_OPS, SPECIAL
from ptonnx import ir
from ptonnx.testing import assert_same
from tests.lifting.helpers import F32_EDGES, F64_EDGES, check_lift, ints_at_limits, lifted, ops, raises_check

NAN, INF = np.nan, np.inf
#: arguments where functions of probabilities, orders and shapes change behaviour
UNIT = np.array([-1.0, -0.999, -0.5, -0.0, 0.0, 1e-300, 0.25, 0.5, 0.999, 1.0, 1.5, NAN, INF, -INF])
SHAPES = np.array([-1.0, -0.0, 0.0, 1e-300, 0.1, 0.5, 1.0, 2.5, 30.0, 1e3, INF, NAN])
ORDERS = np.array([-2.5, -1.0, 0.0, 0.5, 1.0, 3.0, 40.0, NAN])

#: the PyTensor builder of each scalar op in SCALAR_OPS, by class name (where its name differs)
BUILDERS = {
    "TrueDiv": pt.true_div, "IntDiv": pt.int_div, "Reciprocal": pt.reciprocal, "RoundHalfToEven": pt.round_half_to_even,
    "RoundHalfAwayFromZero": pt.round_half_away_from_zero, "AND": pt.bitwise_and, "OR": pt.bitwise_or,
    "XOR": pt.bitwise_xor, "IsNan": pt.isnan, "ArcTan2": pt.arctan2, "GammaLn": pt.gammaln, "TriGamma": pt.tri_gamma,
    "Owens_t": pt.owens_t, "GammaIncC": pt.gammaincc, "GammaIncInv": pt.gammaincinv, "GammaIncCInv": pt.gammainccinv,
    "LT": pt.lt, "GT": pt.gt, "LE": pt.le, "GE": pt.ge, "EQ": pt.eq, "NEQ": pt.neq,
}


def _builder(name: str):
    return BUILDERS.get(name) or getattr(pt, name.lower())


FLOAT_UNARY = [
    "Neg", "Abs", "Sign", "Reciprocal", "Exp", "Log", "Sqrt", "Log1p", "Expm1", "Softplus", "Sin", "Cos", "Tanh", "Erf",
    "Sigmoid", "Floor", "Ceil", "RoundHalfToEven", "RoundHalfAwayFromZero", "IsNan", "IsInf", "Tan", "ArcSin", "ArcCos",
    "ArcTan", "Sinh", "Cosh", "ArcSinh", "ArcCosh", "ArcTanh", "Exp2", "Log2", "Log10", "Log1mexp", "Trunc", "Erfc",
    "Erfcx", "GammaLn", "Gamma", "Psi", "TriGamma", "Erfinv", "Erfcinv", "I0", "I1", "J0", "J1",
]
FLOAT_BINARY = ["Add", "Sub", "Mul", "TrueDiv", "IntDiv", "Mod", "Pow", "Maximum", "Minimum", "ArcTan2",
                "LT", "GT", "LE", "GE", "EQ", "NEQ"]
INT_UNARY = ["Neg", "Abs", "Sign", "Invert"]
INT_BINARY = ["Add", "Sub", "Mul", "IntDiv", "Mod", "Maximum", "Minimum", "AND", "OR", "XOR", "TrueDiv",
              "LT", "GT", "LE", "GE", "EQ", "NEQ"]
#: scalar op -> the values of each of its (float64) arguments
SPECIAL_ARGS = {
    "PolyGamma": None,  # an integer order: test_polygamma
    "Owens_t": [F64_EDGES, UNIT],
    "Ive": [ORDERS, SHAPES[SHAPES != INF]],  # at inf SciPy says NaN: test_ive_of_huge_and_infinite_x
    "Jv": [ORDERS, SHAPES], "Kve": [ORDERS, SHAPES],
    "GammaInc": [SHAPES, SHAPES], "GammaIncC": [SHAPES, SHAPES], "GammaU": [SHAPES, SHAPES], "GammaL": [SHAPES, SHAPES],
    "GammaIncInv": [SHAPES, UNIT], "GammaIncCInv": [SHAPES, UNIT],
    "BetaInc": [SHAPES[::2], SHAPES[1::2], UNIT], "BetaIncInv": [SHAPES[::2], SHAPES[1::2], UNIT],
    "Hyp2F1": [np.array([-2.0, 0.5, 1.0, NAN]), np.array([-0.0, 1.5, 3.0]), np.array([-1.5, 0.0, 2.0, 4.0]), UNIT[::2]],
    # pytensor 2.38's Iv; at subnormal x SciPy's (its) is NaN: test_idioms.py's test_iv_of_subnormals_is_its_series_first_term
    "Iv": [ORDERS, F64_EDGES[~((np.abs(F64_EDGES) < 2.3e-308) & (F64_EDGES != 0))]],
    "Switch": None,  # test_switch
}


def _grid(names, arrays, dtypes):
    """Inputs broadcasting against each other on separate axes (every combination of values)."""
    k = len(arrays)
    variables, values = [], []
    for axis, (name, arr, dtype) in enumerate(zip(names, arrays, dtypes, strict=True)):
        shape = tuple(None if a == axis else 1 for a in range(k))
        variables.append(pt.tensor(name, dtype=dtype, shape=shape))
        values.append(np.asarray(arr, dtype=dtype).reshape(tuple(-1 if a == axis else 1 for a in range(k))))
    return variables, values


def _check_scalar_op(name, arrays, dtypes):
    variables, values = _grid("abcd"[: len(arrays)], arrays, dtypes)
    y = _builder(name)(*variables)
    cls = next(c for c in SCALAR_OPS if c.__name__ == name)
    assert isinstance(y.owner.op.scalar_op, cls), y.owner.op
    return check_lift(variables, [y], values)


def _unary_values(name, dtype):
    values = F64_EDGES if dtype == "float64" else F32_EDGES
    if name == "RoundHalfAwayFromZero":  # its Python impl gives -0.0 for +0.0 (docs/numerics.md, Where PyTensor is wrong)
        values = values[1:]
    return values


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", FLOAT_UNARY)
def test_float_unary(name, dtype):
    g = _check_scalar_op(name, [_unary_values(name, dtype)], [dtype])
    assert SCALAR_OPS[next(c for c in SCALAR_OPS if c.__name__ == name)] in ops(g)


def test_round_half_away_from_zero_of_positive_zero_is_positive_zero_as_pytensors_c_code():
    x = pt.dvector("x")
    g = lifted([x], [pt.round_half_away_from_zero(x)])
    [got] = ir.interpret(g, np.array([0.0, -0.0, 0.5, -0.5, 2.5]))
    assert_same(got, np.array([0.0, -0.0, 1.0, -1.0, 3.0]), "RoundHalfAwayFromZero.impl's -0.0: docs/numerics.md, Where PyTensor is wrong")


@pytest.mark.parametrize("name", FLOAT_BINARY)
def test_float_binary(name):
    _check_scalar_op(name, [F64_EDGES, F64_EDGES], ["float64", "float64"])


@pytest.mark.parametrize("name", FLOAT_BINARY)
def test_float32_binary(name):
    _check_scalar_op(name, [F32_EDGES, F32_EDGES[::2]], ["float32", "float32"])


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "uint64"])
@pytest.mark.parametrize("name", INT_UNARY)
def test_integer_unary(name, dtype):
    _check_scalar_op(name, [ints_at_limits(dtype)], [dtype])


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16", "uint64"])
@pytest.mark.parametrize("name", INT_BINARY)
def test_integer_binary(name, dtype):
    values = ints_at_limits(dtype)
    _check_scalar_op(name, [values, values], [dtype, dtype])


@pytest.mark.parametrize("name", ["AND", "OR", "XOR", "Invert", "EQ", "NEQ", "LT", "Maximum"])
def test_bool(name):
    arity = 1 if name == "Invert" else 2
    _check_scalar_op(name, [[False, True]] * arity, ["bool"] * arity)


@pytest.mark.parametrize(("dtypes", "exponents"), [
    (("float64", "float64"), F64_EDGES),
    (("int64", "int64"), np.array([0, 1, 2, 3, 62, 63, 64])),   # integer powers wrap, as NumPy's
    (("int8", "uint8"), np.array([0, 1, 2, 7, 8, 255])),
    (("float32", "int8"), np.array([-3, -1, 0, 1, 2, 127], np.int8)),
])
def test_pow(dtypes, exponents):
    bases = {"float64": F64_EDGES, "int64": ints_at_limits("int64"), "int8": ints_at_limits("int8"), "float32": F32_EDGES}[dtypes[0]]
    _check_scalar_op("Pow", [bases, exponents], list(dtypes))


def test_integer_powers_of_negative_exponents_fail_as_numpy():
    _check_scalar_op("Pow", [np.array([2, 3], np.int64), np.array([-1])], ["int64", "int64"])


@pytest.mark.parametrize("name", sorted(set(SPECIAL_ARGS) - {"PolyGamma", "Switch", "Iv"}))
def test_special_functions(name):
    arrays = SPECIAL_ARGS[name]
    _check_scalar_op(name, arrays, ["float64"] * len(arrays))


def test_polygamma():
    _check_scalar_op("PolyGamma", [np.array([0, 1, 2, 5]), F64_EDGES], ["int64", "float64"])


@pytest.mark.skipif(not hasattr(ps, "Iv"), reason="pytensor 3 has no Iv op (it builds ive * exp(|x|): test_idioms.py)")
def test_iv_of_pytensor_2():
    _check_scalar_op("Iv", SPECIAL_ARGS["Iv"], ["float64", "float64"])


def test_mixed_dtypes_convert_as_pytensor():
    """Scalar ops that convert their inputs (exp of an int, int / int) get explicit Casts; a
    plain promotion (float32 * int8 literal) is left for `unify_dtypes`."""
    i, f = pt.tensor("i", dtype="int32", shape=(8,)), pt.tensor("f", dtype="float32", shape=(8,))
    i0, f0 = ints_at_limits("int32")[:8], F32_EDGES[:8]
    g = check_lift([i, f], [pt.exp(i), i / 3, f * 2, i * f, pt.sqrt(i)], [i0, f0])
    assert [n.attrs["to"] for n in g if n.op == "Cast"] == ["float64", "float64"]  # i once, the literal 3 once
    assert list(g.outputs[3].producer.inputs) == [g.inputs[0], g.inputs[1]]  # int32 * float32: unify_dtypes' job


def test_switch():
    c, x, y = pt.tensor("c", dtype="bool", shape=(None, 1)), pt.tensor("x", shape=(1, None)), pt.dscalar("y")
    g = check_lift([c, x, y], [pt.switch(c, x, y), pt.switch(c, 1, x)], [np.array([[True], [False]]), F64_EDGES[None], np.float64(-0.0)])
    assert ops(g).count("Where") == 2


def test_n_ary_add_and_mul_fold_left_to_right():
    a, b, c = (pt.tensor(n, shape=(4,)) for n in "abc")
    s, p = pt.add(a, b, c), pt.mul(a, b, c)
    assert len(s.owner.inputs) == 3 and len(p.owner.inputs) == 3
    big = np.array([1e308, -1e308, 1.0, NAN])
    g = check_lift([a, b, c], [s, p], [big, big, -big], [F64_EDGES[:4], F64_EDGES[4:8], F64_EDGES[8:12]])
    assert sorted(ops(g)) == ["Add", "Add", "Mul", "Mul"]


def test_a_sum_and_a_product_of_one_term_are_the_term():
    a = pt.ivector("a")
    one_sum, one_product = Elemwise(ps.add)(a), Elemwise(ps.mul)(a)
    g = check_lift([a], [one_sum, one_product], [ints_at_limits("int32")])
    assert ops(g) == []


@pytest.mark.parametrize(("source", "target"), [
    ("float64", "float32"), ("float64", "float16"), ("float64", "int32"), ("float64", "bool"), ("float32", "uint8"),
    ("int64", "float32"), ("int64", "int8"), ("uint64", "int64"), ("int8", "uint64"), ("bool", "float64"), ("int32", "bool"),
])
def test_cast(source, target):
    x = pt.vector("x", dtype=source)
    y = pt.cast(x, target)
    assert isinstance(y.owner.op.scalar_op, ps.Cast)
    if source.startswith("float"):  # in range of the target where it is an integer (NumPy's out-of-range casts are undefined)
        values = np.array([0.0, -0.0, 1.5, -1.0, 2.5, 100.7, NAN, INF, 1e-45] if target in ("float32", "float16", "bool")
                          else [0.0, -0.0, 1.5, 2.99, 100.7, 0.5], source)
        if target == "uint8":
            values = np.abs(values)
    else:
        values = np.array([0, 1], bool) if source == "bool" else ints_at_limits(source)
        info = np.iinfo(target) if target != "bool" and not target.startswith("float") else None
        if info is not None:  # Cast.impl raises there: test_integer_casts_wrap (docs/numerics.md)
            values = values[(values >= info.min) & (values <= info.max)]
    g = check_lift([x], [y], [values])
    assert ops(g) == ["Cast"]


def test_integer_casts_wrap_as_numpy_astype():
    x = pt.lvector("x")
    g = lifted([x], [pt.cast(x, "int8"), pt.cast(x, "uint64")])
    values = ints_at_limits("int64")
    got = ir.interpret(g, values)
    assert_same(got[0], values.astype(np.int8), "Cast.impl raises OverflowError: docs/numerics.md, Where PyTensor is wrong")
    assert_same(got[1], values.astype(np.uint64))


def test_identity_and_its_copy():
    x = pt.dvector("x")
    y = Elemwise(ps.identity)(x)
    g = check_lift([x], [y], [F64_EDGES])
    assert ops(g) == [] and g.outputs[0] is g.inputs[0]


def test_second_fills_with_the_second_input():
    x, v = pt.tensor("x", dtype="float32", shape=(None, 3)), pt.tensor("v", dtype="float64", shape=(1, 1))
    same = pt.tensor("s", dtype="float32", shape=(2, 3))
    outs = [pt.second(x, v), pt.second(same, np.float32(-0.0)), pt.fill(x, pt.constant(np.int8(7))), pt.second(x, pt.exp(x))]
    g = check_lift([x, v, same], outs, [np.ones((2, 3), np.float32), np.array([[NAN]]), np.zeros((2, 3), np.float32)],
                   [np.ones((0, 3), np.float32), np.array([[-0.0]]), np.zeros((2, 3), np.float32)])
    assert ops(g).count("Expand") == 3 and g.outputs[3].producer.op == "Exp"  # of x's shape already


@pytest.mark.parametrize("build", [pt.deg2rad, pt.rad2deg])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int16"])
def test_angles_multiply_by_one_rounded_constant(build, dtype):
    x = pt.vector("x", dtype=dtype)
    values = F64_EDGES if dtype == "float64" else F32_EDGES if dtype == "float32" else ints_at_limits(dtype)
    g = check_lift([x], [build(x)], [values])
    assert ops(g)[-1] == "Mul"


@pytest.mark.parametrize("dtype", ["float64", "int8", "uint64"])
def test_sqr(dtype):
    x = pt.vector("x", dtype=dtype)
    values = F64_EDGES if dtype == "float64" else ints_at_limits(dtype)
    g = check_lift([x], [pt.sqr(x)], [values])
    assert ops(g) == ["Mul"]


def test_clip_takes_lo_when_lo_exceeds_hi_and_keeps_nan():
    x, lo, hi = pt.tensor("x", shape=(None, 1, 1)), pt.tensor("lo", shape=(1, None, 1)), pt.tensor("hi", shape=(1, 1, None))
    bounds = np.array([-INF, -1.0, -0.0, 0.0, 2.0, NAN])
    values = [F64_EDGES.reshape(-1, 1, 1), bounds.reshape(1, -1, 1), bounds.reshape(1, 1, -1)]
    g = check_lift([x, lo, hi], [pt.clip(x, lo, hi)], values)
    assert ops(g) == ["Less", "Greater", "Where", "Where"]


@pytest.mark.parametrize("signed", ["int8", "int64"])
@pytest.mark.parametrize("name", ["LT", "LE", "GT", "GE", "EQ", "NEQ"])
def test_comparisons_of_signed_integers_with_uint64_are_exact(name, signed):
    """NumPy compares int64 with uint64 exactly (2**63 - 1 < 2**63), not through float64."""
    s, u = pt.tensor("s", dtype=signed, shape=(None, 1)), pt.tensor("u", dtype="uint64", shape=(1, None))
    u0 = np.array([0, 1, 127, 2**63 - 1, 2**63, 2**64 - 1], np.uint64)
    build = _builder(name)
    g = check_lift([s, u], [build(s, u), build(u, s), build(u, 5)], [ints_at_limits(signed)[:, None], u0[None]])
    assert "Or" in ops(g) or "And" in ops(g)


def test_composite_is_expanded():
    """A Composite (in a rewritten graph) is its scalar graph, lifted node by node."""
    x, y = pt.dvector("x"), pt.dvector("y")
    out = pt.exp(x) * 2 + pt.tanh(y) - x / y
    g = check_lift([x, y], [out], [F64_EDGES, F64_EDGES[::-1]], rewritten=True)
    assert {"Exp", "Tanh", "Div"} <= set(ops(g))


def test_composite_built_by_hand_with_two_outputs():
    a, b = ps.float64("a"), ps.float64("b")
    comp = ps.Composite([a, b], [ps.log1p(a) * b, ps.sqr(a) - ps.abs(b)])
    x, y = pt.tensor("x", shape=(15,)), pt.tensor("y", shape=(15,))
    o1, o2 = Elemwise(comp)(x, y)
    g = check_lift([x, y], [o1, o2], [F64_EDGES, F64_EDGES[::-1]])
    assert set(ops(g)) == {"Log1p", "Mul", "Abs", "Sub"}


def test_scalar_ops_outside_an_elemwise():
    """Shape arithmetic: a ScalarOp applied to scalars (ScalarFromTensor, then TensorFromScalar)."""
    from pytensor.tensor.basic import scalar_from_tensor, tensor_from_scalar

    n = pt.lscalar("n")
    s = scalar_from_tensor(n)
    y = tensor_from_scalar(ps.int_div(s * 3, ps.constant(np.int64(2))) - s)
    assert isinstance(y.owner.inputs[0].owner.op, ps.ScalarOp)
    check_lift([n], [y], *([np.int64(v)] for v in (0, -7, 5, np.iinfo(np.int64).max)))


def test_runtime_broadcasting_is_refused_as_pytensor():
    """Two dims of unknown size are checked equal (PyTensor's ValueError); a dim known to be 1 broadcasts."""
    x, y, row = pt.dvector("x"), pt.dvector("y"), pt.tensor("row", shape=(1,))
    g = check_lift([x, y, row], [x + y, x * row], [np.ones(3), np.ones(3), np.ones(1)], [np.ones(3), np.ones(1), np.ones(1)],
                   [np.ones(0), np.ones(0), np.ones(1)], [np.ones(1), np.ones(3), np.ones(1)])
    assert ops(g).count("Check") == 1
    raises_check(g, [np.ones(3), np.ones(1), np.ones(1)], ValueError, "Runtime broadcasting not allowed")


def test_a_dim_pytensor_types_as_1_broadcasts_where_the_ir_does_not_know_it():
    """PyTensor's type decides what broadcasts, also where the IR's type rules lose a static size:
    `alloc(v, max([0, 1]))`, and a Scan's stacked (1, 1) values (a Kalman filter's innovation
    covariance, pymc-extras' state-space models, issue 34; the Loop's scan outputs had unknown
    sizes then, and keep its static ones now)."""
    import pytensor

    xs, row, x = pt.dvector("xs"), pt.tensor("row", shape=(1, 2)), pt.dvector("x")
    trace = pytensor.scan(lambda v: pt.exp(v).dimshuffle("x", "x"), sequences=[xs], return_updates=False)
    ones = pt.alloc(x[0], pt.max(pt.as_tensor(np.array([0, 1]))))
    assert trace[-1].type.shape == (1, 1) and ones.type.shape == (1,)
    g = lifted([xs, row, x], [row / trace[-1], x + ones])
    assert g.outputs[1].producer.inputs[1].shape == (None,)
    g = check_lift([xs, row, x], [row / trace[-1], x + ones], [np.array([0.5, -1.0, 2.0]), np.array([[1.0, 3.0]]), np.array([2.0, 3.0, 4.0])])
    assert "Check" not in {n.op for n in g if n.outputs[0].type.dtype == "float64"}


def test_one_shape_by_construction_needs_no_check():
    """x * sigmoid(x): both have x's shape, whatever its size."""
    x = pt.dmatrix("x")
    g = check_lift([x], [x * pt.sigmoid(x), pt.exp(x) - 2 * pt.exp(x)], [np.ones((2, 3))])
    assert "Check" not in ops(g)


def test_complex_scalar_ops_are_refused_with_the_reason():
    a, b = pt.dvector("a"), pt.dvector("b")
    z = pt.complex(a, b)
    z.name = "z"
    with pytest.raises(UnsupportedOpError, match=r"(?s)refuses Elemwise\{complex\} \(producing z\).*no complex dtype.*real and imaginary"):
        lifted([a, b], [z])


def test_a_scalar_op_named_by_its_scipy_function_is_lifted_by_it():
    """PyMC's I0e and I1e (the Rice logp) are scalar ops outside PyTensor, known by their `nfunc_spec`."""

    class I1e(ps.UnaryScalarOp):
        nfunc_spec = ("scipy.special.i1e", 1, 1)

        def impl(self, x):
            import scipy.special

            return scipy.special.i1e(x)

    x = pt.dvector("x")
    y = Elemwise(I1e(ps.upgrade_to_float_no_complex, name="i1e"))(x)
    # |x| >= 2.1e9 and inf, where SciPy's ive (AMOS) is NaN: the IR's Ive semantics is Hankel's expansion there
    values = np.array([0.0, -0.0, 5e-324, -2.2e-308, 1e-300, 0.5, -2.5, 700.0, -1e9, 2.2e9, -3e9, 1e15, -1e300, INF, -INF, NAN])
    g = check_lift([x], [y], [values])
    assert ops(g) == ["Ive"]


def test_ive_of_huge_and_infinite_x():
    """SciPy's ive (AMOS, PyTensor's) is NaN from |x| ~ 2.1e9 on and at +-inf, where exp(-|x|) I_v(x)
    is finite (mpmath) and 0 at +-inf (I_v's sign at -inf: -0.0 for odd v; NaN for a non-integer v,
    complex): the IR's Ive semantics is Hankel's expansion there, and interpret and the model at both
    onnxruntime levels give it (docs/numerics.md)."""
    import ptonnx
    from ptonnx.testing import assert_matches

    v, x = pt.dvector("v"), pt.dvector("x")
    orders = np.array([0.0, 1.0, 0.5, -2.5, 23.0, 1e3, 2.0, 1.0, 0.0, -2.5, 3.0, 0.5])
    args = np.array([3e9, -3e9, 3e9, 3e9, 2.2e9, 3e9, -1e15, INF, -INF, INF, -INF, -INF])
    exact = np.array([7.2836562042506795e-6, -7.2836562030367368e-6, 7.2836562039471938e-6, 7.2836561966635376e-6,
                      8.5054769745055294e-6, 7.2824423627060406e-6, 1.2615662610100777e-8, 0.0, 0.0, 0.0, -0.0, NAN])
    y = pt.ive(v, x)
    assert_same(ir.interpret(lifted([v, x], [y]), orders, args)[0], exact)
    assert_matches(ptonnx.compile_function([v, x], [y]), [orders, args], [exact])


def test_every_scalar_op_with_a_rule_is_tested_here():
    tested = set(FLOAT_UNARY) | set(FLOAT_BINARY) | set(INT_UNARY) | set(INT_BINARY) | set(SPECIAL_ARGS)
    special = {"Cast", "Identity", "Second", "Deg2Rad", "Rad2Deg", "Sqr", "Clip", "Composite", "LT", "LE", "GT", "GE", "EQ", "NEQ"}
    assert {c.__name__ for c in SCALAR_OPS} <= tested
    assert {c.__name__ for c in SPECIAL} - {"ScalarLoop"} <= special  # ScalarLoop: test_scalar_loop.py
