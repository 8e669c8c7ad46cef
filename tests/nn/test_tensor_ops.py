"""Concat, Split, Softmax, matrix products and Reshape: user graphs and compiled (BLAS) graphs."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from tests.no_rule_op import no_rule
from ptonnx.api import function_graph
from ptonnx.errors import LiftingError, UnsupportedOpError
from tests.nn.helpers import compare, compare_compiled, op_names

rng = np.random.default_rng(3)


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


def sym(shape, dtype="float32", name=None):
    return pt.tensor(name, shape=shape, dtype=dtype)


# -- Join / Concat --------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concat_axes(axis):
    a, b = sym((2, 3, 4), name="a"), sym((2, 3, 4), name="b")
    cm = compare([a, b], pt.join(axis, a, b, a), [randn(2, 3, 4), randn(2, 3, 4)])
    (node,) = [n for n in cm.model.graph.node if n.op_type == "Concat"]
    assert node.attribute[0].i == axis % 3


def test_concat_of_mixed_dtypes_casts_to_pytensors_dtype():
    a, b = sym((2, 3), "float32", "a"), sym((2, 2), "int16", "b")
    out = pt.concatenate([a, b, np.ones((2, 1), np.int8)], axis=1)
    assert out.dtype == "float32"
    compare([a, b], out, [randn(2, 3), rng.integers(-5, 5, (2, 2)).astype("int16")])


def test_concat_with_unknown_sizes_and_in_a_compiled_function():
    a, b = sym((None, 3), name="a"), sym((None, 3), name="b")
    compare([a, b], pt.concatenate([a, b], axis=0), [randn(2, 3), randn(4, 3)])
    compare_compiled([a, b], pt.concatenate([a, b], axis=-1) * 2, [randn(2, 3), randn(2, 3)])


def test_concat_with_a_dynamic_axis_is_a_lifting_error():
    a, axis = sym((2, 3), name="a"), pt.iscalar("axis")
    with pytest.raises(LiftingError, match="join axis .* is not a compile-time constant"):
        ptonnx.compile_function([a, axis], pt.join(axis, a, a))


# -- Split --------------------------------------------------------------------------------


@pytest.mark.parametrize("axis, sizes", [(0, [1, 3]), (2, [2, 0, 3]), (-1, [4, 1])])
def test_split(axis, sizes):
    x = sym((4, 3, 5))
    parts = pt.split(x, sizes, n_splits=len(sizes), axis=axis)
    compare([x], [p * 1 for p in parts], [randn(4, 3, 5)])


def test_split_like_c2f_chunk_and_in_a_compiled_function():
    x = sym((1, 8, 4, 4))
    a, b = pt.split(x, [4, 4], n_splits=2, axis=1)
    compare([x], [a + 1, b], [randn(1, 8, 4, 4)])
    compare_compiled([x], list(pt.split(x, [3, 5], n_splits=2, axis=1)), [randn(1, 8, 4, 4)])


def test_split_with_computed_sizes():
    x, s = sym((6, 2)), pt.lscalar("s")
    parts = pt.split(x, pt.stack([s, 6 - s]), n_splits=2, axis=0)
    cm = ptonnx.compile_function([x, s], parts)
    arr = randn(6, 2)
    for k in (0, 2, 6):
        got = cm(arr, np.int64(k))
        np.testing.assert_array_equal(got[0], arr[:k])
        np.testing.assert_array_equal(got[1], arr[k:])


def test_split_sizes_that_do_not_add_up_raise_as_in_pytensor():
    x, s = sym((6, 2)), pt.lscalar("s")
    parts = pt.split(x, pt.stack([s, 2]), n_splits=2, axis=0)
    cm = ptonnx.compile_function([x, s], parts)
    with pytest.raises(ValueError):
        pytensor.function([x, s], parts)(randn(6, 2), np.int64(3))
    with pytest.raises(ptonnx.errors.CheckFailedError, match="Split sizes do not sum to the size of axis 0") as failed:
        cm(randn(6, 2), np.int64(3))
    assert isinstance(failed.value, ValueError)


# -- Softmax --------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [-1, 0, 1, (0, 2), None])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax(axis, dtype):
    x = sym((2, 3, 4), dtype)
    arr = randn(2, 3, 4, dtype=dtype) * 5
    if isinstance(axis, tuple) and pytensor.__version__.startswith("2."):
        with pytest.raises(TypeError):  # pytensor 2.38's softmax takes one axis or None
            pt.special.softmax(x, axis=axis)
        return
    compare([x], pt.special.softmax(x, axis=axis), [arr])


def test_softmax_in_a_compiled_function():
    x = sym((2, 5))
    f, _ = compare_compiled([x], pt.special.softmax(x, axis=-1), [randn(2, 5)])
    assert "Softmax" in op_names(f.maker.fgraph)


def test_softmax_over_several_axes_with_an_unknown_dim_is_exp_over_sum():
    x = sym((None, 3, 4), "float64")
    cm = ptonnx.compile_function([x], pt.special.softmax(x, axis=None))
    assert {"ReduceMax", "ReduceSum"} <= set(cm.ir.op_counts())  # the sizes to flatten are not known
    values = np.random.default_rng(0).normal(size=(2, 3, 4))
    expected = pytensor.function([x], pt.special.softmax(x, axis=None))(values)
    np.testing.assert_allclose(cm(values)[0], expected, rtol=1e-12)


# -- matrix products ---------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((2, 2, 6, 8), (2, 2, 8, 6)),  # attention: (B, heads, N, d) @ (B, heads, d, N)
    ((1, 2, 6, 8), (2, 1, 8, 3)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_user_graph(shapes, dtype):
    a, b = sym(shapes[0], dtype, "a"), sym(shapes[1], dtype, "b")
    compare([a, b], a @ b, [randn(*shapes[0], dtype=dtype), randn(*shapes[1], dtype=dtype)])


def test_matmul_of_mixed_dtypes_and_dot():
    a, b = sym((3, 4), "float32", "a"), sym((4, 2), "float64", "b")
    compare([a, b], [pt.matmul(a, b), pt.dot(a, b)], [randn(3, 4), randn(4, 2, dtype="float64")])


def test_attention_block():
    """C2PSA's attention: softmax((q * scale)^T k) then v @ attn^T, heads as a batch axis."""
    q, k, v = sym((1, 2, 4, 9), name="q"), sym((1, 2, 4, 9), name="k"), sym((1, 2, 8, 9), name="v")
    attn = pt.special.softmax((q * 0.5).transpose(0, 1, 3, 2) @ k, axis=-1)
    out = (v @ attn.transpose(0, 1, 3, 2)).reshape((1, 16, 3, 3))
    compare([q, k, v], out, [randn(1, 2, 4, 9), randn(1, 2, 4, 9), randn(1, 2, 8, 9)])


#: BLAS op expected in the compiled graph -> (input shapes, graph)
COMPILED_CASES = {
    "Dot22": (((3, 4), (4, 5)), lambda a, b: a @ b),
    "BatchedDot": (((2, 3, 4), (2, 4, 5)), lambda a, b: a @ b),
    "BatchedDot-4d": (((2, 2, 6, 8), (2, 2, 8, 6)), lambda a, b: a @ b),
    "Dot": (((2, 3, 4), (4, 5)), lambda a, b: a @ b),
    "Gemv": (((3, 4), (4,)), lambda a, b: a @ b),
    "Dot22Scalar": (((3, 4), (4, 5)), lambda a, b: 2 * (a @ b)),
    "Gemm": (((3, 4), (4, 3), (3, 3)), lambda a, b, c: 2 * (a @ b) + 3 * c),
    "Ger": (((3, 3), (3,)), lambda a, b: a + pt.outer(b, b)),
}


@pytest.mark.parametrize("name", COMPILED_CASES)
def test_matmul_forms_in_a_compiled_function(name):
    shapes, build = COMPILED_CASES[name]
    inputs = [sym(s, "float64", f"in{i}") for i, s in enumerate(shapes)]
    f, _ = compare_compiled(inputs, build(*inputs), [randn(*s, dtype="float64") for s in shapes])
    assert name.split("-")[0] in op_names(f.maker.fgraph), f"expected a {name} in {op_names(f.maker.fgraph)}"


def test_other_blockwise_ops_are_unsupported():
    a = sym((2, 3, 3))
    with pytest.raises(UnsupportedOpError, match=r"(?s)NoRule.*Supported PyTensor ops: .*Blockwise\{Dot\}"):
        ptonnx.lift(function_graph([a], [no_rule(a)]))


# -- Reshape -------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(6, -1), (-1,), (2, 3, 2, 2), (24, 1)])
def test_reshape_constant_shape(shape):
    x = sym((2, 3, 4))
    compare([x], x.reshape(shape), [randn(2, 3, 4)])


def test_reshape_with_unknown_input_sizes():
    x = sym((None, 3, 4))
    compare([x], x.reshape((-1, 12)), [randn(5, 3, 4)])


def test_reshape_shape_from_a_vector_of_constants():
    x = sym((2, 3, 4))
    shape = pt.stack([pt.constant(6), -1])
    assert shape.owner is not None  # a MakeVector node, lifted to a constant
    compare([x], x.reshape(shape), [randn(2, 3, 4)])


def test_reshape_to_empty():
    x = sym((0, 3))
    compare([x], x.reshape((3, 0)), [np.zeros((0, 3), np.float32)])


def test_reshape_to_a_computed_shape():
    x, n = sym((2, 6)), pt.lscalar("n")
    cm = ptonnx.compile_function([x, n], x.reshape((n, -1)))
    arr = randn(2, 6)
    for k in (1, 3, 12):
        np.testing.assert_array_equal(cm(arr, np.int64(k))[0], arr.reshape((k, -1)))


def test_make_vector_of_variables():
    a, b = pt.lscalar("a"), pt.lscalar("b")
    compare([a, b], pt.stack([a, b, a * 2]), [np.int64(3), np.int64(-4)])


#: each tensor op -> the tests of this module that compare programs reaching it with PyTensor
#: (read by tests/ir/test_registry.py; checked by test_every_tensor_op_is_reached_from_pytensor)
REACHED_BY = {"MatMul": ("test_matmul_user_graph", "test_matmul_forms_in_a_compiled_function", "test_attention_block"),
              "Softmax": ("test_softmax", "test_softmax_in_a_compiled_function")}


def test_every_tensor_op_is_reached_from_pytensor():
    a, b, x = sym((3, 4), name="a"), sym((4, 5), name="b"), sym((2, 3, 4), name="x")
    programs = {"MatMul": ([a, b], pt.matmul(a, b)), "Softmax": ([x], pt.special.softmax(x, axis=-1))}
    for op, (inputs, out) in programs.items():
        assert op in ptonnx.lift(function_graph(inputs, [out])).op_counts(), op
    assert set(REACHED_BY) == set(programs) == {name for name, s in ptonnx.ir.all_schemas().items() if s.family == "tensor"}
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)
