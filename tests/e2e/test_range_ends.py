"""Regressions at the ends of the range (issue 6): each case once gave a wrong number
with no error, at one or both onnxruntime optimisation levels."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from pytensor.tensor.blas import gemv_no_inplace

import ptonnx
from tests.conftest import assert_matches, assert_same, check_onnx_matches_pytensor, run_at_every_level


def _check(dtype, fn, values, **kw):
    x = pt.vector("x", dtype=dtype)
    return check_onnx_matches_pytensor([x], [fn(x)], [np.asarray(values, dtype=dtype)], **kw)


# -- MatMul with a vector: onnxruntime's FusedMatMul(transA) with a 1-D operand is wrong
def test_transposed_matrix_times_vector_from_a_fast_run_function():
    X, y, v = pt.matrix("X", dtype="float64"), pt.vector("y", dtype="float64"), pt.vector("v", dtype="float64")
    f = pytensor.function([X, y, v], v + 2 * pt.dot(X.T, y), mode="FAST_RUN")
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(5, 3)), rng.normal(size=5), rng.normal(size=3)]
    cm = ptonnx.compile(ptonnx.api.compiled_function_graph(f))
    assert_matches(cm, arrays, [f(*arrays)])


def test_gemv_on_a_transposed_matrix():
    A, x, y = pt.matrix("A"), pt.vector("x"), pt.vector("y")
    out = gemv_no_inplace(y, np.float64(2.0), A.T, x, np.float64(1.0))
    rng = np.random.default_rng(1)
    check_onnx_matches_pytensor([A, x, y], [out], [rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=3)])


@pytest.mark.parametrize("shapes", [((4, 3), (4,)), ((2, 4, 3), (4,)), ((3, 4), (3,))])
def test_vector_products_with_static_shapes(shapes):
    (xs, ys), rng = shapes, np.random.default_rng(2)
    X, y = pt.tensor("X", dtype="float64", shape=xs), pt.tensor("y", dtype="float64", shape=ys)
    outs = [pt.dot(y, X) if len(xs) == 2 else pt.matmul(pt.swapaxes(X, -1, -2), y), pt.matmul(pt.swapaxes(X, -1, -2), y)]
    check_onnx_matches_pytensor([X, y], outs, [rng.normal(size=xs), rng.normal(size=ys)])


# -- exp/log family: no intermediate overflow, no flushed tails
@pytest.mark.parametrize("dtype, values", [
    ("float32", [85.0, 88.0, 88.7, 89.0, -100.0, 1e-30, -1e-30, 0.0, -0.0, np.inf, -np.inf, np.nan]),
    ("float64", [705.0, 709.0, 709.78, 710.0, -800.0, 1e-300, 5e-324, -0.0, np.inf, -np.inf, np.nan]),
])
def test_expm1_near_overflow(dtype, values):
    _check(dtype, pt.expm1, values)


@pytest.mark.parametrize("dtype, values", [
    ("float32", [1e37, 3.4e38, np.finfo("float32").max, 1e-30, -1e-30, 1e-45, -0.5, -1.0, -2.0, np.inf, np.nan]),
    ("float64", [1e307, np.finfo("float64").max, 1e-300, 5e-324, -0.999999, -1.0, np.inf, np.nan]),
])
def test_log1p_of_huge_and_tiny(dtype, values):
    _check(dtype, pt.log1p, values)


@pytest.mark.parametrize("dtype, values", [
    ("float32", [-20.0, -15.0, -30.0, -80.0, -87.0, 15.0, 20.0, -0.0, 0.0, np.inf, -np.inf, np.nan]),
    ("float64", [-40.0, -300.0, -700.0, -745.0, 40.0, 1e-300, -0.0, np.inf, -np.inf, np.nan]),
])
def test_sigmoid_tails_and_log_sigmoid(dtype, values):
    cm = _check(dtype, pt.sigmoid, values)
    assert "Sigmoid" not in {n.op_type for n in cm.model.graph.node}
    # log(sigmoid(x)) is -softplus(-x), as PyTensor's own rewrite makes it (its unrewritten graph is
    # -inf from -104 in float32, -744.44 at -745, and +0.0 at inf): checked against that graph, at every value
    x = pt.vector("x", dtype=dtype)
    y = pt.log(pt.sigmoid(x))
    rewritten = pytensor.function([x], y, mode=Mode(linker="py", optimizer="fast_run"))
    check_onnx_matches_pytensor([x], [y], [np.asarray(values, dtype=dtype)], reference=lambda v: [rewritten(v)])


def test_tanh_near_the_smallest_normal_float32():
    _check("float32", pt.tanh, [2.3e-38, -2.2e-38, 3.3e-39, 1e-20, 1e-5, 0.5, 20.0])


# -- float16: computed op by op in float32 and rounded, as NumPy does
def test_float16_chain_rounds_between_ops():
    h = pt.vector("h", dtype="float16")
    values = np.array([65, 2049, 0.1, 300, -7.5, 6e-8], dtype="float16")
    cm = check_onnx_matches_pytensor([h], [pt.cast(h * h, "float32"), (h * h + h) * h], [values])
    for outputs in run_at_every_level(cm, values).values():
        assert outputs[0][0] == 4224.0  # 65 * 65 = 4225 rounds to 4224 in float16


@pytest.mark.parametrize("fn", [pt.sign, pt.log1p, pt.expm1, pt.softplus, pt.sigmoid, pt.tanh, pt.exp, abs])
def test_float16_unary_ops(fn):
    _check("float16", fn, [np.nan, -np.inf, np.inf, -0.0, 0.0, 6e-8, 1e-3, -2.5, 11.0, 65504.0, -65504.0])


# -- integers: exact comparisons and wrapping powers
def test_signed_against_uint64_comparisons_are_exact():
    a, b = pt.vector("a", dtype="int64"), pt.vector("b", dtype="uint64")
    av = np.array([2**63 - 1, 2**53 + 1, -1, -(2**63), 0, 2**53], dtype="int64")
    bv = np.array([2**63, 2**53, 2**64 - 1, 0, 0, 2**53 + 1], dtype="uint64")
    outs = [a < b, a <= b, a > b, a >= b, pt.eq(a, b), pt.neq(a, b), b < a, b >= a]
    cm = check_onnx_matches_pytensor([a, b], outs, [av, bv])
    assert bool(cm(av, bv)[0][0])  # 2**63 - 1 < 2**63


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16", "int16", "int32", "uint32", "int64", "uint64"])
def test_integer_power_wraps_like_numpy(dtype):
    info = np.iinfo(dtype)
    base = np.array([c for c in (info.min, info.min + 1, -3, -1, 0, 1, 2, 3, 255, info.max) if info.min <= c <= info.max], dtype)
    exponent = np.array([0, 1, 2, 3, 4, 7, 8, 31, 63, 64, 65, 127][: len(base)], dtype)[: len(base)]
    b, e = pt.vector("b", dtype=dtype), pt.vector("e", dtype=dtype)
    B, E = (np.ascontiguousarray(m.ravel()) for m in np.meshgrid(base, exponent))
    with np.errstate(all="ignore"):
        check_onnx_matches_pytensor([b, e], [b**e, b**4, b**3], [B, E])


def test_uint8_255_to_the_fourth_is_one():
    u = pt.vector("u", dtype="uint8")
    cm = check_onnx_matches_pytensor([u], [u**4, u ** pt.constant(np.uint8(4))], [np.array([255, 3], "uint8")])
    assert cm(np.array([255, 3], "uint8"))[1][0] == 1


# -- bool arithmetic: what PyTensor accepts on bools compiles and matches
BOOL_OPS = {
    "abs": lambda a, b: abs(a), "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "sqr": lambda a, b: pt.sqr(a),
    "maximum": pt.maximum, "minimum": pt.minimum, "lt": pt.lt, "le": pt.le, "gt": pt.gt, "ge": pt.ge,
    "floor_div": lambda a, b: a // b, "mod": lambda a, b: a % b, "clip": lambda a, b: pt.clip(a, b, np.array(True)),
    "with_int": lambda a, b: a + pt.cast(b, "int8"), "with_float": lambda a, b: a * 2.5,
}


@pytest.mark.parametrize("name", sorted(BOOL_OPS))
def test_bool_arithmetic(name):
    a, b = pt.vector("a", dtype="bool"), pt.vector("b", dtype="bool")
    av, bv = np.array([0, 1, 0, 1], bool), np.array([0, 0, 1, 1], bool)
    out = BOOL_OPS[name](a, b)
    with np.errstate(all="ignore"):
        check_onnx_matches_pytensor([a, b], [out, a | b], [av, bv])


def test_reference_dtype_is_kept():
    """A sanity check of the comparison helper itself: a wrong dtype fails."""
    with pytest.raises(AssertionError):
        assert_same(np.zeros(2, "float32"), np.zeros(2, "float64"))


# -- softmax: of integers a clear refusal (PyTensor's own number wraps); over one element, 1
def test_softmax_of_integers_is_refused():
    for dtype in ("int32", "uint8", "int64"):
        x = pt.vector("x", dtype=dtype)
        with pytest.raises(ptonnx.errors.LiftingError, match="Cast the input to a float dtype first"):
            ptonnx.compile_function([x], [pt.special.softmax(x, axis=0)])


def test_softmax_over_one_element_is_pytensors_for_inf_and_nan():
    """1 in pytensor 3 (its rewrites make x - max(x) zero), NaN in 2.38 (scipy's softmax)."""
    v = pt.tensor("v", dtype="float32", shape=(3, 1))
    values = np.array([[np.inf], [np.nan], [-2.0]], "float32")
    check_onnx_matches_pytensor([v], [pt.special.softmax(v, axis=1), pt.special.softmax(v, axis=0)], [values])


# -- MatMul in every integer dtype and bool: wraps as NumPy does, empty inner axes give zeros
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_integer_matmul(dtype):
    a, b = pt.matrix("a", dtype=dtype), pt.matrix("b", dtype=dtype)
    info = np.iinfo(dtype) if dtype != "bool" else None
    big = [info.max, info.min, 3] if info else [1, 0, 1]
    av = np.array([big, big[::-1]], dtype)
    with np.errstate(all="ignore"):
        check_onnx_matches_pytensor([a, b], [a @ b], [av, np.ascontiguousarray(av.T)])
        check_onnx_matches_pytensor([a, b], [a @ b], [np.ones((2, 0), dtype), np.ones((0, 2), dtype)])
