from __future__ import annotations

import numpy as np
import pytest

from ptonnx import ir
from ptonnx.errors import PassError
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.passes import DEFAULT_PASSES, DeadCodeElimination, PassManager, PassResult, apply_rewrites, node_rewriter


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
        node.outputs[0].type = TensorType("float64", (7,))
        return PassResult(True, 1)


def test_verify_each_names_the_pass_that_broke_the_graph():
    g, _ = _graph_with_dead_chain()
    with pytest.raises(PassError, match=r"pass 'breaks_the_graph' left an invalid graph \(passes run: dce, breaks_the_graph\)"):
        PassManager(["dce", BreaksTheGraph()], verify_each=True).run(g)


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
    def double_negation(graph, node):
        inner = node.inputs[0].producer
        if inner is None or inner.op != "Neg":
            return False
        graph.replace_all_uses(node.outputs[0], inner.inputs[0])
        graph.remove(node)
        if inner.outputs[0].num_uses == 0:
            graph.remove(inner)
        return True

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
