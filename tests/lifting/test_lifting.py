from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from tests.no_rule_op import no_rule
from ptonnx import ir
from ptonnx.api import function_graph
from ptonnx.errors import UnsupportedOpError
from ptonnx.lifting.elemwise import SCALAR_OPS, SPECIAL
from tests.conftest import REWRITTEN_MODE


def lifted(inputs, outputs):
    g = ptonnx.lift(function_graph(inputs, outputs))
    ir.verify(g)
    return g


def test_the_issue_list_of_scalar_ops_is_supported():
    import pytensor.scalar.basic as ps
    import pytensor.scalar.math as psm

    required = [
        "Add", "Sub", "Mul", "TrueDiv", "IntDiv", "Mod", "Neg", "Abs", "Maximum", "Minimum", "Exp", "Log",
        "Sqrt", "Pow", "Floor", "Ceil", "RoundHalfToEven", "RoundHalfAwayFromZero", "Tanh", "Identity",
        "Cast", "LT", "GT", "LE", "GE", "EQ", "NEQ", "AND", "OR", "XOR", "Invert", "Switch", "Composite",
    ]
    known = set(SCALAR_OPS) | set(SPECIAL)
    for name in required:
        assert getattr(ps, name) in known, name
    assert psm.Sigmoid in known


def test_unsupported_op_names_the_op_the_variable_and_what_is_supported():
    x = pt.matrix("x")
    y = no_rule(x)
    y.name = "pseudo_inverse"
    with pytest.raises(UnsupportedOpError) as info:
        ptonnx.lift(function_graph([x], [y]))
    message = str(info.value)
    assert "NoRule" in message and "pseudo_inverse" in message and "Elemwise" in message and "DimShuffle" in message


def test_unsupported_scalar_op_lists_supported_scalar_ops():
    import pytensor.scalar as ps
    from pytensor.tensor.elemwise import Elemwise

    class Cube(ps.UnaryScalarOp):  # a user's own scalar op: no lifting rule
        def impl(self, x):
            return x**3

    x = pt.vector("x")
    y = Elemwise(Cube(ps.upgrade_to_float, name="cube"))(x)
    with pytest.raises(UnsupportedOpError, match=r"(?si)cube.*Supported scalar ops: .*Add"):
        ptonnx.lift(function_graph([x], [y]))


def test_inputs_outputs_constants_and_names():
    x = pt.tensor("x", dtype="float32", shape=(None, 3))
    y = x * 2
    y.name = "doubled"
    g = lifted([x], [y, x])
    assert [v.name for v in g.inputs] == ["x"] and g.inputs[0].type == ir.TensorType("float32", ("x_dim0", 3))
    assert g.outputs[0].name == "doubled" and g.outputs[1] is g.inputs[0]
    consts = g.constants()
    assert len(consts) == 1 and consts[0].dtype == "int8"


@pytest.mark.parametrize(
    "build, ops",
    [
        (lambda x: x.T, ["Transpose"]),
        (lambda x: x[None], ["Unsqueeze"]),
        (lambda x: x.dimshuffle(1, "x", 0), ["Transpose", "Unsqueeze"]),
        (lambda x: pt.tensor("u", shape=(1, None, 1)).dimshuffle(1), None),
    ],
)
def test_dimshuffle_forms(build, ops):
    x = pt.matrix("x", dtype="float32")
    y = build(x)
    inputs = [x] if ops is not None else [y.owner.inputs[0]]
    g = lifted(inputs, [y])
    if ops is None:
        ops = ["Squeeze"]
    assert [n.op for n in g] == ops
    assert g.outputs[0].type.ndim == y.ndim


def test_dimshuffle_drop_then_shuffle_then_augment_matches_numpy():
    u = pt.tensor("u", dtype="float32", shape=(1, None, 1, None))
    y = u.dimshuffle(3, "x", 1)
    g = lifted([u], [y])
    assert [n.op for n in g] == ["Squeeze", "Transpose", "Unsqueeze"]
    arr = np.arange(6, dtype=np.float32).reshape(1, 2, 1, 3)
    np.testing.assert_array_equal(ir.interpret(g, arr)[0], pytensor.function([u], y)(arr))


def test_composite_is_expanded_from_its_scalar_graph():
    x = pt.vector("x", dtype="float32")
    f = pytensor.function([x], [pt.exp(x) * 2 + pt.tanh(x)], mode=REWRITTEN_MODE)
    [node] = f.maker.fgraph.apply_nodes
    assert type(node.op.scalar_op).__name__ == "Composite"
    g = ptonnx.lift(f.maker.fgraph)
    ir.verify(g)
    assert sorted(g.op_counts()) == ["Add", "Exp", "Mul", "Tanh"]


def test_scalar_conversions_become_explicit_casts():
    i = pt.vector("i", dtype="int32")
    g = lifted([i], [pt.exp(i), i / 2])
    # i is cast once (shared by exp and /), the ExpandDims'd literal once
    assert g.op_counts()["Cast"] == 2
    exp_node = g.outputs[0].producer
    assert exp_node.inputs[0].producer.op == "Cast" and exp_node.outputs[0].dtype == "float64"


def test_identity_like_ops_are_forwarded():
    x = pt.vector("x")
    f = pytensor.function([x], x, mode=REWRITTEN_MODE)
    assert any(type(n.op).__name__ == "DeepCopyOp" for n in f.maker.fgraph.apply_nodes)
    g = ptonnx.lift(f.maker.fgraph)
    assert len(g) == 0 and g.outputs[0] is g.inputs[0]
