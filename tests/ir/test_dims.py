"""Known contents of shape values, and symbolic dims carried from input to output."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

import ptonnx
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.ir.dims import contents


def ints(*values):
    return Value.constant(np.array(values, dtype=np.int64))


def test_reshape_to_a_computed_shape_keeps_the_batch_name():
    g = Graph()
    x = g.add_input(TensorType("float64", ("batch", 3, 4)), "x")
    b = Builder(g)
    first = b.op("Shape", x, start=0, end=1)
    target = b.op("Concat", first, ints(-1), axis=0)
    assert contents(target) == ("batch", -1)
    y = b.op("Reshape", x, target)
    assert y.type == TensorType("float64", ("batch", 12))


def test_contents_through_gather_slice_and_arithmetic():
    g = Graph()
    x = g.add_input(TensorType("float32", ("n", 5, None)), "x")
    b = Builder(g)
    shape = b.op("Shape", x)
    assert contents(shape) == ("n", 5, None)
    size = b.op("Gather", shape, Value.constant(np.int64(1)), axis=0)
    assert contents(size) == 5
    assert contents(b.op("Mul", size, Value.constant(np.int64(3)))) == 15
    assert contents(b.op("Add", b.op("Gather", shape, Value.constant(np.int64(0)), axis=0), Value.constant(np.int64(0)))) == "n"
    assert contents(b.op("Slice", shape, ints(1), ints(3), ints(1), axes=(0,))) == (5, None)
    assert contents(b.op("Sub", Value.constant(np.int64(0)), size)) == -5


def test_a_user_graph_keeps_its_unknown_dim_symbolic():
    x = pt.matrix("x", shape=(None, 3))
    y = x * 2 + x[:, :1]
    cm = ptonnx.compile_function([x], [y])
    dims = lambda vi: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]  # noqa: E731
    assert dims(cm.model.graph.input[0]) == ["x_dim0", 3]
    assert dims(cm.model.graph.output[0]) == ["x_dim0", 3]
    for n in (0, 1, 5):
        a = np.arange(3 * n, dtype=np.float64).reshape(n, 3)
        np.testing.assert_array_equal(cm(a)[0], a * 2 + a[:, :1])
