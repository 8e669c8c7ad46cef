"""The CNN and tensor IR ops on hand-built graphs: type rules, registry data, lowering to ORT."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import ptonnx
from ptonnx import ir
from ptonnx.errors import TypeRuleError
from ptonnx.ir import TensorType as T
from ptonnx.ir import Value
from ptonnx.ir.interpret import interpret
from ptonnx.ir.ops.nn import RESIZE_MODES
from ptonnx.passes import ConstantFolding
from tests.nn.helpers import assert_close

rng = np.random.default_rng(5)
F4 = T("float32", (1, 4, 6, 6))


def run_onnx(graph, *arrays):
    model = ptonnx.lower(graph)
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: a for i, a in zip(model.graph.input, arrays, strict=True)})


def single_op_graph(op, input_types, attrs, consts=()):
    g = ir.Graph(op)
    inputs = [g.add_input(t, f"in{i}") for i, t in enumerate(input_types)]
    node = ir.Builder(g).node(op, [*inputs, *consts], attrs)
    g.set_outputs(node.outputs)
    ir.verify(g)  # run_onnx's lowering checks the rest
    return g


def test_registry_declares_the_new_ops():
    schemas = ir.all_schemas()
    nn_ops = {"Conv", "BatchNorm", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Resize", "SiLU"}
    tensor_ops = {"Softmax", "MatMul"}
    assert {n for n, s in schemas.items() if s.family == "nn"} == nn_ops
    assert {n for n, s in schemas.items() if s.family == "tensor"} == tensor_ops
    assert not any(schemas[n].has("layout") for n in nn_ops | tensor_ops)
    assert {"Concat", "Split", "Reshape", "Expand"} <= {n for n, s in schemas.items() if s.has("layout")}
    for name in nn_ops | tensor_ops:
        for kind, default in schemas[name].attributes.values():
            hash(default)


def ints(*values):
    return Value.constant(np.array(values, dtype=np.int64))


BAD_TYPES = [
    ("Conv", [F4, T("float32", (2, 3, 3, 3)), T("float32", (2,))], {}, "4 channels"),
    ("Conv", [F4, T("float32", (3, 2, 3, 3)), T("float32", (3,))], {"group": 2}, "not divisible"),
    ("Conv", [F4, T("float32", (2, 4, 3, 3)), T("float32", (5,))], {}, "bias length"),
    ("Conv", [F4, T("float32", (2, 4, 3, 3)), T("float32", (2,))], {"pads": (1, 1)}, "pads must be"),
    ("Conv", [F4, T("float32", (2, 4, 9, 9)), T("float32", (2,))], {}, "smaller than"),
    ("BatchNorm", [F4, *[T("float32", (3,))] * 4], {}, "channels"),
    ("MaxPool", [F4], {"kernel_shape": (2, 2), "pads": (2, 0, 0, 0)}, "half the kernel"),
    ("AveragePool", [F4], {"kernel_shape": (2, 2), "ceil_mode": 2}, "ceil_mode"),
    ("GlobalMaxPool", [T("float32", (3, 4))], {}, "spatial"),
    ("Resize", [F4], {"axes": (2, 3), "scales": (2.0, 2.0), "mode": "cubic", "coordinate_transformation_mode": "half_pixel"}, "mode="),
    ("Resize", [F4], {"axes": (2, 3), "scales": (2.0,), "mode": "nearest", "coordinate_transformation_mode": "asymmetric"}, "one scale"),
    ("Resize", [F4], {"axes": (2, 3), "scales": (2.0, 2.0), "sizes": (3, 3), "mode": "nearest", "coordinate_transformation_mode": "asymmetric"}, "exactly one"),
    ("Resize", [F4], {"axes": (1, 3), "scales": (2.0, 2.0), "mode": "linear", "coordinate_transformation_mode": "half_pixel"}, "last two axes"),
    ("Concat", [F4, T("float64", (1, 4, 6, 6))], {"axis": 1}, "one dtype"),
    ("Concat", [F4, T("float32", (1, 4, 5, 6))], {"axis": 1}, "sizes differ"),
    ("Split", [F4, ints(1, 2)], {"axis": 1, "num_outputs": 2}, "add up"),
    ("Split", [F4, ints(1, 2)], {"axis": 1, "num_outputs": 3}, "3 sizes"),
    ("Softmax", [F4], {"axis": 4}, "axis"),
    ("MatMul", [T("float32", (3, 4)), T("float32", (5, 2))], {}, "contracted"),
    ("MatMul", [T("float32", (2, 3, 4)), T("float32", (3, 4, 2))], {}, "broadcast"),
    ("Reshape", [F4, ints(5, -1)], {}, "cannot"),
    ("Reshape", [F4, ints(-1, -1)], {}, "at most one -1"),
    ("Expand", [F4, ints(2, 4, 5, 6)], {}, "cannot broadcast"),
]


@pytest.mark.parametrize("op, types, attrs, match", BAD_TYPES, ids=[f"{c[0]}-{c[3]}" for c in BAD_TYPES])
def test_type_rules_reject_bad_nodes(op, types, attrs, match):
    with pytest.raises(TypeRuleError, match=match):
        ir.infer_types(op, types, attrs)


def test_type_rules_keep_unknown_sizes_unknown():
    x = T("float32", ("batch", 3, None, 8))
    (conv,) = ir.infer_types("Conv", [x, T("float32", (5, 3, 3, 3)), T("float32", (5,))], {"strides": (2, 2)})
    assert conv.shape == ("batch", 5, None, 3)
    (pool,) = ir.infer_types("MaxPool", [x], {"kernel_shape": (2, 2), "strides": (2, 2), "ceil_mode": 1})
    assert pool.shape == ("batch", 3, None, 4)
    (resized,) = ir.infer_types("Resize", [x], {"axes": (2, 3), "sizes": (4, 4), "mode": "nearest", "coordinate_transformation_mode": "asymmetric"})
    assert resized.shape == ("batch", 3, 4, 4)
    (cat,) = ir.infer_types("Concat", [x, T("float32", (2, 3, 5, 8))], {"axis": 2})
    assert cat.shape == (2, 3, None, 8)
    assert ir.infer_types("Reshape", [x, ints(-1, 24)], {}) == [T("float32", (None, 24))]
    assert ir.infer_types("Reshape", [x, T("int64", (3,))], {}) == [T("float32", (None, None, None))]
    assert ir.infer_types("MatMul", [T("float32", (7,)), T("float64", ("b", 7, 2))], {}) == [T("float64", ("b", 2))]


@pytest.mark.parametrize("mode, ctm", sorted(RESIZE_MODES))
@pytest.mark.parametrize("resize", [{"scales": (1.5, 0.75)}, {"sizes": (9, 2)}], ids=["scales", "sizes"])
def test_every_resize_mode_agrees_with_onnxruntime(mode, ctm, resize):
    g = single_op_graph("Resize", [F4], {"axes": (2, 3), "mode": mode, "coordinate_transformation_mode": ctm, **resize})
    x = rng.standard_normal(F4.shape).astype(np.float32)
    (expected,) = interpret(g, x)
    (actual,) = run_onnx(g, x)
    assert_close(actual, expected)


def test_concat_takes_any_number_of_inputs():
    types = [T("int64", (2, n)) for n in (1, 2, 3)]
    g = single_op_graph("Concat", types, {"axis": 1})
    arrays = [rng.integers(-9, 9, t.shape) for t in types]
    assert_close(run_onnx(g, *arrays)[0], np.concatenate(arrays, axis=1))
    with pytest.raises(TypeRuleError, match="at least 1"):
        ir.infer_types("Concat", [], {"axis": 0})


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_matmul(dtype):
    g = single_op_graph("MatMul", [T(dtype, (2, 3, 4)), T(dtype, (4, 5))], {})
    a, b = rng.integers(-5, 5, (2, 3, 4)).astype(dtype), rng.integers(-5, 5, (4, 5)).astype(dtype)
    assert_close(run_onnx(g, a, b)[0], a @ b)


def test_constant_folding_evaluates_a_conv_of_constants():
    g = ir.Graph("fold")
    x = g.add_input(T("float32", (1, 2, 3, 3)), "x")
    b = ir.Builder(g)
    image = ir.Value.constant(rng.standard_normal((1, 2, 3, 3)).astype(np.float32))
    w = ir.Value.constant(rng.standard_normal((2, 2, 3, 3)).astype(np.float32))
    conv = b.op("Conv", image, w, ir.Value.constant(np.ones(2, np.float32)), pads=(1, 1, 1, 1))
    g.set_outputs([b.op("Add", x, conv)])
    before = interpret(g, np.ones((1, 2, 3, 3), np.float32))
    assert ConstantFolding().run(g).rewrites == 1
    assert [n.op for n in g] == ["Add"]
    assert_close(interpret(g, np.ones((1, 2, 3, 3), np.float32))[0], before[0])
