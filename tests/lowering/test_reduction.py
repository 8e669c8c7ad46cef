"""The reductions (ReduceSum, ReduceProd, ReduceMax, ReduceMin, ReduceAll, ReduceAny, ArgMax)
as hand-built graphs, lowered (lowering/reduction.py: integer sums as a MatMul, products as a
Mul tree, NaN masks for Max/Min/ArgMax, uint64 by its flipped top bit, bool over uint8) and
run at both onnxruntime levels against `interpret`: every dtype, the ends of the range
(wrapping integers, NaN, ±inf, ±0, subnormals), several axes and keepdims in one model,
size-0 inputs, results and slices."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.ir import TensorType as T
from tests.lowering.harness import compiled, dtypes_of, ends, one_node, reordered_sums, same_inputs

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

REDUCTIONS = ("ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceAll", "ReduceAny")
COVERS = frozenset({*REDUCTIONS, "ArgMax"})
#: (axes, keepdims) of the nodes of one model
AXES = [((1,), False), ((0,), True), ((0, 1), False), ((0, 1), True)]
#: reductions whose empty slice has no value (NumPy raises; lifting guards them with a Check)
NO_IDENTITY = ("ReduceMax", "ReduceMin", "ArgMax")



def _arrays(dtype: str, rng: np.random.Generator) -> list[np.ndarray]:
    """Every end of the dtype's range in a (k, 3) matrix, shuffled, and a (4, 3) draw with repeats."""
    e = ends(dtype)
    e = np.resize(e, -(-e.size // 3) * 3).reshape(-1, 3)
    draw = rng.choice(ends(dtype), 12).reshape(4, 3)
    return [e, rng.permutation(e.ravel()).reshape(e.shape), draw]


def _compare(op: str, dtype: str):
    if op in ("ReduceSum", "ReduceProd") and dtype.startswith("float"):
        return reordered_sums  # onnxruntime adds and multiplies in its own order
    if op in ("ReduceMax", "ReduceMin") and dtype.startswith("float"):
        return _but_zero_sign  # which of +0 and -0 NumPy picks is up to the CPU's vector instructions
    return None


def _but_zero_sign(actual, expected, context):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, context
    np.testing.assert_array_equal(actual, expected, err_msg=context)  # NaN == NaN, -0.0 == 0.0


@pytest.mark.parametrize("op, dtype", [(op, d) for op in REDUCTIONS for d in dtypes_of(op)])
def test_reduction_over_several_axes_in_every_dtype(op, dtype):
    rng = np.random.default_rng(3)
    case = compiled(same_inputs(op, [T(dtype, (None, 3))], [{"axes": a, "keepdims": k} for a, k in AXES]))
    for x in _arrays(dtype, rng):
        case.check(x, compare=_compare(op, dtype))
    if op not in NO_IDENTITY:  # the sum of nothing is 0, its product 1, all of nothing true
        case.check(np.zeros((0, 3), dtype), compare=_compare(op, dtype))
        empty_rows = compiled(one_node(op, [T(dtype, (None, None))], {"axes": (1,), "keepdims": False}))
        empty_rows.check(np.zeros((3, 0), dtype), compare=_compare(op, dtype))
    else:  # no slice to reduce is fine: a size-0 result
        no_slices = compiled(one_node(op, [T(dtype, (None, 3))], {"axes": (1,), "keepdims": True}))
        no_slices.check(np.zeros((0, 3), dtype), compare=_compare(op, dtype))
        if dtype.startswith("float") and op != "ArgMax":  # an empty float slice: -inf or inf, the identity
            empty_rows = compiled(one_node(op, [T(dtype, (None, None))], {"axes": (1,), "keepdims": False}))
            (got,) = empty_rows.check(np.zeros((3, 0), dtype))
            np.testing.assert_array_equal(got, np.full(3, -np.inf if op == "ReduceMax" else np.inf, dtype))


@pytest.mark.parametrize("dtype", dtypes_of("ArgMax"))
def test_argmax_first_of_ties_and_first_nan_in_every_dtype(dtype):
    rng = np.random.default_rng(4)
    case = compiled(same_inputs("ArgMax", [T(dtype, (None, 3))], [{"axis": 1, "keepdims": False}, {"axis": 0, "keepdims": True}]))
    for x in _arrays(dtype, rng):
        case.check(x)
    compiled(one_node("ArgMax", [T(dtype, (None, 3))], {"axis": 1, "keepdims": True})).check(np.zeros((0, 3), dtype))


@pytest.mark.parametrize("dtype", dtypes_of("ArgMax"))
def test_argmax_ranking_nan_as_inf_in_every_dtype(dtype):
    """nan="inf" (LU's pivot search): the first NaN or +inf, whichever comes first; 3 ONNX nodes
    for a float (IsNaN, Where, ArgMax), the ArgMax alone for the others."""
    rng = np.random.default_rng(5)
    graph = same_inputs("ArgMax", [T(dtype, (None, 3))], [{"axis": 1, "keepdims": False, "nan": "inf"},
                                                          {"axis": 0, "keepdims": True, "nan": "inf"}])
    case = compiled(graph)
    for x in _arrays(dtype, rng):
        case.check(x)
    if dtype.startswith("float"):
        x = np.array([[1.0, np.inf, np.nan], [np.nan, np.inf, 2.0], [-1.0, 3.0, 3.0]], dtype)
        case.check(x)
        single = compiled(one_node("ArgMax", [T(dtype, (3, 3))], {"axis": 1, "nan": "inf"}))
        single.check(x)
        assert [n.op_type for n in single.model.graph.node].count("ArgMax") == 1


def test_nan_propagates_through_max_and_min_and_argmax_finds_the_first():
    x = np.array([[1.0, np.nan, 3.0, np.nan], [-np.inf, -np.inf, -0.0, -0.0], [np.inf, 5e-324, np.nan, np.inf]])
    for op, attrs in [("ReduceMax", {"axes": (1,)}), ("ReduceMin", {"axes": (0,)}), ("ArgMax", {"axis": 1}), ("ArgMax", {"axis": 0})]:
        compiled(one_node(op, [T("float64", (3, 4))], attrs)).check(x)


def test_integer_sums_and_products_wrap_beyond_two_to_the_53():
    x = np.array([[2**62, 2**62, 2**62, 1], [2**53 + 1, 2, 3, 5], [-(2**63), -1, 2**63 - 1, 3]], dtype=np.int64)
    for op in ("ReduceSum", "ReduceProd"):
        compiled(same_inputs(op, [T("int64", (3, 4))], [{"axes": (1,)}, {"axes": (0,)}, {"axes": (0, 1)}])).check(x)


def test_integer_sums_and_products_over_no_axes_are_their_input():
    x = np.array([[2**63 - 1, -(2**63)], [0, -1]], dtype=np.int64)
    for op in ("ReduceSum", "ReduceProd"):
        compiled(one_node(op, [T("int64", (2, 2))], {"axes": ()})).check(x)


@pytest.mark.parametrize("op, dtype", [(op, d) for op in REDUCTIONS for d in dtypes_of(op)])
def test_a_reduction_over_no_axes_is_its_input(op, dtype):
    """axes=() (the IR op's default; lifting never builds it): the input itself, -0.0, NaN and
    wrapping integers included, never opset 18's "every axis" nor NumPy's 0 + -0.0."""
    e = ends(dtype)
    case = compiled(same_inputs(op, [T(dtype, (None,))], [{"axes": ()}, {"axes": (), "keepdims": True}]))
    for x in (e, e[:0]):
        for got, want in zip(case.check(x), (x, x), strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
            if dtype.startswith("float"):
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert not [n.op_type for n in case.model.graph.node if n.op_type.startswith(("Reduce", "MatMul"))]
