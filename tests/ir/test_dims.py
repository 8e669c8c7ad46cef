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


def test_the_product_of_a_shape_is_known_where_its_factors_are():
    """`ReduceProd` of a shape (the size of merged axes): known sizes multiply, a named dim
    times ones stays named, an unknown factor other than 1 makes it unknown."""
    g = Graph()
    x = g.add_input(TensorType("float64", ("batch", 1, 4)), "x")
    y = g.add_input(TensorType("float64", (None, 3)), "y")
    b = Builder(g)
    assert contents(b.op("ReduceProd", b.op("Shape", x, start=1), axes=(0,), keepdims=True)) == (4,)
    assert contents(b.op("ReduceProd", b.op("Shape", x, start=0, end=2), axes=(0,), keepdims=False)) == "batch"
    assert contents(b.op("ReduceProd", b.op("Shape", x), axes=(0,), keepdims=False)) is None
    assert contents(b.op("ReduceProd", b.op("Shape", y), axes=(0,), keepdims=False)) is None
    assert contents(b.op("ReduceProd", ints(2**40, 2**40), axes=(0,), keepdims=False)) is None  # past int64
    merged = b.op("Reshape", x, b.op("Concat", b.op("ReduceProd", b.op("Shape", x, start=1), axes=(0,), keepdims=True),
                                      ints(-1), axis=0))
    assert merged.type.shape == (4, "batch")


def test_a_for_loop_of_a_known_count_stacks_that_many_trips():
    """The Loop's per-trip values have the trip count as their leading size when the loop is a
    for-loop (condition true, kept true by a constant); a while-loop's is unknown."""
    from pytensor import scan

    x = pt.tensor("x", shape=(7, 2), dtype="float64")
    ys = scan(lambda row, total: total + row, sequences=[x], outputs_info=[pt.zeros(2)], return_updates=False)
    cm = ptonnx.compile_function([x], [ys], ["constant_folding", "unify_dtypes"])
    (loop,) = [node for node in cm.ir if node.op == "Loop"]
    assert loop.outputs[-1].type.shape == (7, 2)
    g = Graph()
    n, start = g.add_input(TensorType("int64", ()), "n"), g.add_input(TensorType("float64", ()), "start")
    for going in (Value.constant(np.array(True)), None):
        body = Graph("body")
        body.add_input(TensorType("int64", ()), "trip")
        carried = body.add_input(TensorType("float64", ()), "c")
        nb = Builder(body)
        doubled = nb.op("Mul", carried, Value.constant(np.float64(2.0)))
        keep = going if going is not None else nb.op("Less", doubled, Value.constant(np.float64(100.0)))
        body.set_outputs([keep, doubled, doubled])
        for count, leading in ((Value.constant(np.int64(5)), 5 if going is not None else None), (n, None)):
            loop = Builder(g).node("Loop", [count, Value.constant(np.array(True)), start], dict(body=body, n_carried=1, n_scan=1))
            assert loop.outputs[1].type.shape == (leading,)
