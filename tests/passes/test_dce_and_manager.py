from __future__ import annotations

import numpy as np
import pytest

from ptonnx import ir
from ptonnx.errors import PassError
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.passes import DEFAULT_PASSES, DeadCodeElimination, PassManager, PassResult, Replacement, apply_rewrites, node_rewriter


def _graph_with_dead_chain():
    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    b = Builder(g)
    d1 = b.op("Exp", x)
    b.op("Neg", d1)  # dead chain of two
    live = b.op("Abs", x, name="live")
    g.set_outputs([live])
    return g, x


def test_dce_removes_a_dead_chain_in_one_sweep():
    g, x = _graph_with_dead_chain()
    result = DeadCodeElimination().run(g)
    assert result.rewrites == 2 and [n.op for n in g] == ["Abs"] and x.num_uses == 1
    ir.verify(g)


def test_manager_accepts_names_and_objects_and_reports_each_pass():
    g, _ = _graph_with_dead_chain()
    report = PassManager(["constant_folding", DeadCodeElimination()], verify_each=True).run(g)
    assert [r.name for r in report.records] == ["constant_folding", "dce"]
    assert report["dce"].nodes_before == 3 and report["dce"].nodes_after == 1
    text = str(report)
    assert "dce" in text and "nodes before" in text


def test_default_pipeline_order():
    assert PassManager().passes[0].name == DEFAULT_PASSES[0]
    assert [p.name for p in PassManager().passes] == list(DEFAULT_PASSES)


def test_unknown_pass_name_is_a_clear_error():
    with pytest.raises(PassError, match="unknown pass 'fold_everything'; known passes: constant_folding"):
        PassManager(["fold_everything"])


class BreaksTheGraph:
    name = "breaks_the_graph"

    def run(self, graph):
        node = next(iter(graph))
        node.outputs[0].type = TensorType("float32", (7,))  # the type rule says (3,)
        return PassResult(True, 1)


class RetypesTheOutput:
    name = "retypes_the_output"

    def run(self, graph):
        graph.outputs[0].type = TensorType("float64", (3,))
        return PassResult(True, 1)


def test_verify_each_names_the_pass_that_broke_the_graph():
    g, _ = _graph_with_dead_chain()
    with pytest.raises(PassError, match=r"pass 'breaks_the_graph' left an invalid graph \(passes run: dce, breaks_the_graph\)"):
        PassManager(["dce", BreaksTheGraph()], verify_each=True).run(g)


def test_a_pass_may_not_change_the_graph_interface_even_unverified():
    g, _ = _graph_with_dead_chain()
    with pytest.raises(PassError, match=r"'retypes_the_output' changed the graph's inputs or outputs"):
        PassManager([RetypesTheOutput()]).run(g)


def test_driver_revisits_a_node_whose_input_lost_a_use():
    """Conv -> BatchNorm plus a dead Sigmoid(conv): once the Sigmoid goes, the BN folds in the same run."""
    from ptonnx.passes.fuse_conv_bn_silu import fold_batch_norm

    g = Graph()
    x = g.add_input(TensorType("float32", (1, 2, 4, 4)), "x")
    b = Builder(g)
    conv = b.op("Conv", x, Value.constant(np.ones((2, 2, 1, 1), np.float32)), Value.constant(np.zeros(2, np.float32)))
    b.op("Sigmoid", conv)  # dead, but a second user of conv for now
    stats = [Value.constant(np.full(2, v, np.float32)) for v in (1.0, 0.0, 0.0, 1.0)]
    g.set_outputs([b.op("BatchNorm", conv, *stats)])

    @node_rewriter("Sigmoid")
    def drop_dead(b, node):
        return None if node.outputs[0].num_uses else {}  # nothing to replace: the driver removes it

    fired = apply_rewrites(g, [fold_batch_norm, drop_dead])
    assert fired == {"drop_dead": 1, "fold_batch_norm": 1} and g.op_counts() == {"FusedConv": 1}


def test_replace_all_uses_keeps_dtype_and_rank():
    from ptonnx.errors import IRError

    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    y = Builder(g).op("Neg", x)
    g.set_outputs([y])
    with pytest.raises(IRError, match="keeps its dtype and rank"):
        g.replace_all_uses(y, Value.constant(np.zeros(3, np.int32)))


def test_worklist_driver_revisits_users_of_rewritten_nodes():
    """Neg(Neg(x)) -> x, applied to a fixed point across a chain of 6 Negs."""
    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    b = Builder(g)
    v = x
    for _ in range(6):
        v = b.op("Neg", v)
    g.set_outputs([v])

    @node_rewriter("Neg")
    def double_negation(b, node):
        inner = node.inputs[0].producer
        if inner is None or inner.op != "Neg":
            return None
        return Replacement({node.outputs[0]: inner.inputs[0]}, cleans=(inner,))

    fired = apply_rewrites(g, [double_negation])
    assert fired["double_negation"] == 3 and len(g) == 0 and g.outputs == (x,)
    ir.verify(g)
    out = ir.interpret(g, np.arange(3, dtype=np.float32))[0]
    assert out.tolist() == [0.0, 1.0, 2.0]


def test_only_used_by_guard():
    from ptonnx.passes import only_used_by

    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    b = Builder(g)
    e = b.op("Exp", x)
    n1 = b.op("Neg", e).producer
    assert only_used_by(e, [n1])
    n2 = b.op("Abs", e).producer
    assert not only_used_by(e, [n1]) and only_used_by(e, [n1, n2])
    g.set_outputs([e])
    assert not only_used_by(e, [n1, n2])  # a graph output is an outside use
    assert Value.constant(np.float32(1)).num_uses == 0


def test_the_driver_refuses_a_match_whose_absorbed_node_has_other_users():
    """A rewrite that would absorb a node still used elsewhere is refused, and what it
    built is dropped: the graph is as before."""
    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    b = Builder(g)
    inner = b.op("Neg", x)
    outer = b.op("Abs", inner)
    g.set_outputs([outer, inner])  # inner is also an output

    @node_rewriter("Abs")
    def abs_of_neg(builder, node):
        producer = node.inputs[0].producer
        return Replacement({node.outputs[0]: builder.op("Abs", producer.inputs[0])}, absorbs=(producer,))

    assert apply_rewrites(g, [abs_of_neg]) == {}
    assert [n.op for n in g] == ["Neg", "Abs"] and g.outputs == (outer, inner)
    ir.verify(g)


def test_the_driver_revisits_the_users_of_a_value_with_many_users_that_lost_some():
    """`e` has 41 users; once its 20 dead Sigmoids go, a rewrite that wants `e` to have at
    most 21 uses fires on the Abs visited first (revisited at the end of the sweep)."""
    g = Graph()
    x = g.add_input(TensorType("float32", (3,)), "x")
    b = Builder(g)
    e = b.op("Exp", x)
    first = b.op("Abs", e)
    live = [b.op("Neg", e) for _ in range(20)]
    for _ in range(20):
        b.op("Sigmoid", e)  # dead
    g.set_outputs([first, *live])

    @node_rewriter("Sigmoid")
    def drop_dead(b, node):
        return None if node.outputs[0].num_uses else {}

    @node_rewriter("Abs")
    def few_uses(builder, node):
        if node.inputs[0].num_uses > 21:
            return None
        return {node.outputs[0]: builder.op("Neg", node.inputs[0])}

    fired = apply_rewrites(g, [drop_dead, few_uses])
    assert fired == {"drop_dead": 20, "few_uses": 1}
    assert g.op_counts() == {"Exp": 1, "Neg": 21}
