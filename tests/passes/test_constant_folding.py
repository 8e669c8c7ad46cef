from __future__ import annotations

import numpy as np
import pytest

from ptonnx import ir
from ptonnx.errors import PassError
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.passes import ConstantFolding, PassManager


def test_folds_a_constant_chain_into_one_typed_constant():
    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    b = Builder(g)
    two = b.op("Unsqueeze", Value.constant(np.int8(2)), axes=(0,))
    three = b.op("Add", two, Value.constant(np.int8(1)))
    y = b.op("Mul", x, three, name="y")
    g.set_outputs([y])
    result = ConstantFolding().run(g)
    assert result.modified and result.details["folded"] == 2
    assert [n.op for n in g] == ["Mul"]
    folded = y.producer.inputs[1]
    assert folded.const.dtype == np.int8 and folded.const.tolist() == [3] and folded.type == TensorType("int8", (1,))
    ir.verify(g)


def test_a_constant_output_is_folded_and_still_an_output():
    g = Graph()
    g.add_input(TensorType("float32", (3,)), "x")
    y = Builder(g).op("Exp", Value.constant(np.zeros(3, np.float32)), name="y")
    g.set_outputs([y])
    ConstantFolding().run(g)
    assert len(g) == 0 and g.outputs[0].const.tolist() == [1.0, 1.0, 1.0] and g.outputs[0].name == "y"


def test_size_limit_keeps_a_broadcast_from_inflating_the_model():
    g = Graph()
    g.add_input(TensorType("float32", (3,)), "x")
    b = Builder(g)
    big = b.op("Add", Value.constant(np.zeros((1000, 1), np.float32)), Value.constant(np.zeros((1, 1000), np.float32)))
    g.set_outputs([big])
    result = ConstantFolding(max_growth_bytes=1 << 16).run(g)
    assert not result.modified and result.details["skipped_too_large"] == 1 and len(g) == 1
    assert ConstantFolding(max_growth_bytes=1 << 23).run(g).modified


def test_a_fold_that_numpy_refuses_is_left_for_run_time():
    g = Graph()
    g.add_input(TensorType("int32", ()), "x")
    y = Builder(g).op("Pow", Value.constant(np.int32(2)), Value.constant(np.int32(-1)))
    g.set_outputs([y])
    result = ConstantFolding().run(g)
    assert not result.modified and result.details == {"folded": 0, "skipped_failed": 1}


def test_semantics_that_disagree_with_the_type_rule_are_reported():
    from ptonnx.ir import registry

    g = Graph()
    g.add_input(TensorType("float32", ()), "x")
    y = Builder(g).op("Neg", Value.constant(np.ones((2,), np.float32)))
    g.set_outputs([y])
    y.type = TensorType("float32", (3,))  # forge a wrong type
    with pytest.raises(PassError, match="semantics and type rule disagree"):
        ConstantFolding().run(g)
    assert registry  # the registry is the place that would be at fault


def test_report_counts_nodes_and_rewrites():
    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    b = Builder(g)
    c = b.op("Neg", Value.constant(np.float32(1)))
    g.set_outputs([b.op("Add", x, c)])
    report = PassManager(["constant_folding"], verify_each=True).run(g)
    rec = report["constant_folding"]
    assert (rec.nodes_before, rec.nodes_after, rec.rewrites) == (2, 1, 1) and rec.seconds >= 0


MIB = 1 << 20


def _shared_constant_graph(users=("Neg", "Exp", "Abs")):
    """A 4 MiB constant read by several foldable ops, each result added to the input."""
    g = Graph()
    x = g.add_input(TensorType("float32", (MIB,)), "x")
    b = Builder(g)
    c = Value.constant(np.linspace(-1, 1, MIB, dtype=np.float32), "c")
    g.set_outputs([b.op("Add", x, b.op(op, c)) for op in users])
    return g


def _constant_bytes(g) -> int:
    return sum(v.const.nbytes for v in g.constants())


def test_a_constant_still_used_elsewhere_frees_nothing():
    g = _shared_constant_graph()
    before = _constant_bytes(g)
    result = ConstantFolding().run(g)
    assert not result.modified and result.details["skipped_too_large"] >= 3
    assert _constant_bytes(g) == before == 4 * MIB
    # allowed to grow by 4 MiB per fold, all three fold (and the model grows by 8 MiB)
    assert ConstantFolding(max_growth_bytes=4 * MIB).run(g).details["folded"] == 3
    assert _constant_bytes(g) == 12 * MIB


def test_a_fold_that_replaces_its_only_input_grows_nothing():
    g = _shared_constant_graph(users=("Neg",))
    assert ConstantFolding().run(g).details["folded"] == 1
    assert _constant_bytes(g) == 4 * MIB


def test_a_constant_that_is_also_an_output_is_not_freed():
    g = Graph()
    g.add_input(TensorType("float32", ()), "x")
    c = Value.constant(np.ones(MIB, np.float32), "c")
    g.set_outputs([c, Builder(g).op("Neg", c)])
    assert not ConstantFolding().run(g).modified


def test_end_to_end_the_model_grows_by_at_most_the_limit():
    import pytensor
    import pytensor.tensor as pt

    import ptonnx
    from tests.conftest import REFERENCE_MODE, assert_matches

    x = pt.vector("x", dtype="float32")
    w = pt.constant(np.linspace(-1, 1, MIB, dtype=np.float32), name="w")  # 4 MiB
    outputs = [x + pt.exp(w), x + abs(w), x * -w]
    cm = ptonnx.compile_function([x], outputs)
    initializer_bytes = sum(len(t.raw_data) for t in cm.model.graph.initializer)
    assert initializer_bytes <= 5 * MIB
    arrays = [np.linspace(0, 1, MIB, dtype=np.float32)]
    assert_matches(cm, arrays, pytensor.function([x], outputs, mode=REFERENCE_MODE)(*arrays))
