from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ptonnx import ir
from ptonnx.errors import LoweringError
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.lowering import IR_VERSION, OPSET, lower
from ptonnx.passes.legalise import legalise


def run(model, *arrays):
    onnx.checker.check_model(model, full_check=True)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in model.graph.input]
    return sess.run(None, dict(zip(names, arrays, strict=True)))


def test_model_header_is_opset_18_with_a_runtime_ir_version():
    g = Graph()
    x = g.add_input(TensorType("float32", (2,)), "x")
    g.set_outputs([Builder(g).op("Neg", x)])
    model = lower(g)
    assert model.ir_version == IR_VERSION <= 10 and [(o.domain, o.version) for o in model.opset_import] == [("", OPSET)]
    assert OPSET == 18


def test_names_come_from_values_and_are_unique():
    g = Graph()
    x = g.add_input(TensorType("float32", (2,)), "x")
    b = Builder(g)
    y1 = b.op("Neg", x, name="y")
    y2 = b.op("Abs", y1, name="y")  # the same PyTensor name twice
    z = b.op("Exp", y2)
    g.set_outputs([z])
    model = lower(g)
    outs = [n.output[0] for n in model.graph.node]
    assert outs[:2] == ["y", "y_1"] and len(set(outs)) == 3 and outs[2] == "output_0"
    assert len({n.name for n in model.graph.node}) == len(model.graph.node)


def test_constants_become_initializers_and_dims_keep_their_names():
    """Symbolic dims keep their names; an unknown one (None: lifting names every input dim,
    so only hand-built IR has them) is a dim with neither a size nor a name."""
    g = Graph()
    x = g.add_input(TensorType("float32", (None, "batch", 3)), "x")
    w = Value.constant(np.arange(3, dtype=np.float32), "w")
    y = Builder(g).op("Mul", x, w, name="y")
    g.set_outputs([y])
    model = lower(g)
    assert [i.name for i in model.graph.initializer] == ["w"]
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert [d.WhichOneof("value") and (d.dim_param or d.dim_value) for d in dims] == [None, "batch", 3]
    out_dims = model.graph.output[0].type.tensor_type.shape.dim
    assert [d.WhichOneof("value") and (d.dim_param or d.dim_value) for d in out_dims] == [None, "batch", 3]
    arr = np.ones((2, 4, 3), np.float32)
    np.testing.assert_array_equal(run(model, arr)[0], arr * np.arange(3))


def test_outputs_that_are_inputs_constants_or_repeated_get_identities():
    g = Graph()
    x = g.add_input(TensorType("float32", (2,)), "x")
    y = Builder(g).op("Neg", x, name="y")
    c = Value.constant(np.float32([5, 6]), "c")
    g.set_outputs([y, x, c, y])
    model = lower(g)
    names = [o.name for o in model.graph.output]
    assert len(set(names)) == 4 and names[0] == "y"
    arr = np.float32([1, 2])
    got = run(model, arr)
    for a, e in zip(got, [-arr, arr, [5, 6], -arr], strict=True):
        np.testing.assert_array_equal(a, e)


def test_identity_ir_op_lowers_and_runs():
    g = Graph()
    x = g.add_input(TensorType("int64", (3,)), "x")
    g.set_outputs([Builder(g).op("Identity", x)])
    arr = np.array([1, -2, 3])
    np.testing.assert_array_equal(run(lower(g), arr)[0], ir.interpret(g, arr)[0])


def test_mixed_dtypes_are_refused_with_advice():
    g = Graph()
    x = g.add_input(TensorType("float32", (2,)), "x")
    g.set_outputs([Builder(g).op("Mul", x, Value.constant(np.int8(2)))])
    with pytest.raises(LoweringError, match="include the 'unify_dtypes' pass"):
        lower(g)


def test_a_dtype_onnx_does_not_allow_for_the_op_is_refused():
    g = Graph()
    x = g.add_input(TensorType("int32", (2,)), "x")
    g.set_outputs([Builder(g).op("Sqrt", x)])
    with pytest.raises(LoweringError, match=r"ONNX Sqrt does not take int32 \(T=int32 is not one of"):
        lower(g)


@pytest.mark.parametrize("op, dtype", [("Max", "int16"), ("Min", "uint16"), ("Where", "bool"), ("Where", "int16"), ("Where", "uint64")])
def test_runtime_kernel_gaps_are_widened_by_legalise(op, dtype):
    g = Graph()
    a = g.add_input(TensorType(dtype, (4,)), "a")
    b = g.add_input(TensorType(dtype, (4,)), "b")
    builder = Builder(g)
    if op == "Where":
        out = builder.op("Where", Value.constant(np.array([True, False, True, False])), a, b)
    else:
        out = builder.op(op, a, b)
    g.set_outputs([out])
    av = np.array([1, 0, 3, 1]).astype(dtype)
    bv = np.array([0, 1, 2, 1]).astype(dtype)
    expected = ir.interpret(g, av, bv)[0]
    assert sum(legalise(g).values()) == 1
    np.testing.assert_array_equal(run(lower(g), av, bv)[0], expected)


def test_empty_squeeze_axes_never_mean_all_axes():
    g = Graph()
    x = g.add_input(TensorType("float32", (1, 2)), "x")
    g.set_outputs([Builder(g).op("Squeeze", x, axes=())])
    arr = np.ones((1, 2), np.float32)
    assert run(lower(g), arr)[0].shape == (1, 2)


def test_a_lowering_error_names_the_users_variable_and_where_it_was_made():
    import pytensor.tensor as pt

    import ptonnx
    from ptonnx import nn
    from ptonnx.errors import LoweringError

    x = pt.dtensor4("x")
    y = nn.global_avg_pool2d(x)  # onnxruntime has no float64 GlobalAveragePool
    y.name = "my_pool"
    with pytest.raises(LoweringError, match=r"from PyTensor variable my_pool \(Tensor4\(float64.*created at \S+\.py:\d+"):
        ptonnx.compile_function([x], [y * 2])
