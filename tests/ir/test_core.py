"""The IR core: def-use stays consistent under every edit; the verifier rejects broken graphs."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from ptonnx import ir
from ptonnx.errors import IRError, TypeRuleError, VerificationError
from ptonnx.ir import GRAPH_OUTPUT, Builder, Graph, Node, TensorType, Value

F32 = TensorType("float32", (2, 3))


def small_graph():
    g = Graph("g")
    x = g.add_input(F32, "x")
    b = Builder(g)
    y = b.op("Exp", x, name="y")
    z = b.op("Add", y, x, name="z")
    g.set_outputs([z])
    return g, x, y, z


def test_def_use_is_kept_by_building():
    g, x, y, z = small_graph()
    assert x.uses == [(y.producer, 0), (z.producer, 1)]
    assert y.users == [z.producer]
    assert z.uses == [(GRAPH_OUTPUT, 0)] and z.is_graph_output
    ir.verify(g)


def test_replace_all_uses_moves_node_and_output_uses():
    g, x, y, z = small_graph()
    w = Builder(g).op("Neg", x, name="w")
    assert g.replace_all_uses(z, w) == 1
    assert g.outputs == (w,) and z.num_uses == 0 and w.uses == [(GRAPH_OUTPUT, 0)]
    g.replace_all_uses(y, x)
    assert z.producer.inputs == (x, x) and y.num_uses == 0
    ir.verify(g)


def test_set_input_updates_both_values():
    g, x, y, z = small_graph()
    g.set_input(z.producer, 0, x)
    assert y.num_uses == 0 and (z.producer, 0) in x.uses
    ir.verify(g)


def test_safe_remove_refuses_a_used_node_and_unlinks_an_unused_one():
    g, x, y, z = small_graph()
    with pytest.raises(IRError, match="still has 1 use"):
        g.remove(y.producer)
    g.replace_all_uses(y, x)
    g.remove(y.producer)
    assert len(g) == 1 and [n.op for n in g] == ["Add"] and x.num_uses == 2
    ir.verify(g)


def test_inserting_before_a_node_keeps_order():
    g, x, y, z = small_graph()
    first = Builder(g, before=y.producer).op("Neg", x, name="first")
    before_z = Builder(g, before=z.producer)
    a1 = before_z.op("Neg", y, name="a1")
    a2 = before_z.op("Neg", a1, name="a2")
    assert [n.outputs[0].name for n in g] == ["first", "y", "a1", "a2", "z"]
    assert [n.outputs[0].name for n in g.reversed()] == ["z", "a2", "a1", "y", "first"]
    ir.verify(g)
    assert first.num_uses == 0 and a2.num_uses == 0


def test_a_value_cannot_be_defined_by_two_nodes():
    g, x, y, z = small_graph()
    with pytest.raises(IRError, match="defined once"):
        Node("Neg", [x], [y])


# -- the verifier rejects ---------------------------------------------------------------


def test_verify_rejects_use_before_definition():
    g = Graph()
    x = g.add_input(F32, "x")
    late = Value(F32, "late")
    g.append(Node("Exp", [late], [Value(F32, "early")]))
    g.append(Node("Neg", [x], [late]))
    with pytest.raises(VerificationError, match="used before its definition"):
        ir.verify(g)


def test_verify_rejects_a_value_defined_twice():
    g = Graph()
    x = g.add_input(F32, "x")
    n = Node("Exp", [x], [Value(F32, "y")])
    g.append(n)
    # Forge a second definition behind the graph's back.
    twin = Node("Neg", [x], [Value(F32, "tmp")])
    twin.outputs = (n.outputs[0],)
    g.append(twin)
    with pytest.raises(VerificationError, match="defined twice"):
        ir.verify(g)


def test_verify_rejects_an_output_type_that_disagrees_with_the_type_rule():
    g = Graph()
    x = g.add_input(F32, "x")
    g.append(Node("Exp", [x], [Value(TensorType("float64", (2, 3)), "y")]))
    with pytest.raises(VerificationError, match="disagree with the type rule"):
        ir.verify(g)
    g2 = Graph()
    x = g2.add_input(F32, "x")
    g2.append(Node("Greater", [x, x], [Value(TensorType("bool", (2, 4)), "y")]))
    with pytest.raises(VerificationError, match="disagree with the type rule"):
        ir.verify(g2)


def test_verify_rejects_an_unknown_op():
    g = Graph()
    x = g.add_input(F32, "x")
    g.append(Node("Frobnicate", [x], [Value(F32, "y")]))
    with pytest.raises(VerificationError, match="unknown IR op 'Frobnicate'"):
        ir.verify(g)


def test_verify_rejects_a_type_rule_violation_and_an_undefined_output():
    g = Graph()
    x = g.add_input(F32, "x")
    bad = g.add_input(TensorType("float32", (4,)), "bad")
    g.append(Node("Add", [x, bad], [Value(F32, "y")]))
    with pytest.raises(VerificationError, match="cannot broadcast"):
        ir.verify(g)
    g2 = Graph()
    g2.add_input(F32, "x")
    g2.set_outputs([Value(F32, "ghost")])
    with pytest.raises(VerificationError, match="never defined"):
        ir.verify(g2)


def test_verify_accepts_mixed_dtypes():
    """A lifted graph mixes dtypes until unify_dtypes; the legalise stage refuses one still mixed
    (tests/test_stages.py), the verifier does not."""
    g = Graph()
    x = g.add_input(F32, "x")
    Builder(g).op("Mul", x, Value.constant(np.int8(2)))
    ir.verify(g)


def test_builder_reports_type_rule_errors_with_the_op():
    g = Graph()
    x = g.add_input(F32, "x")
    with pytest.raises(TypeRuleError, match="Transpose"):
        Builder(g).op("Transpose", x, perm=(0, 0))
    with pytest.raises(TypeRuleError, match="needs attribute 'to'"):
        Builder(g).op("Cast", x)


# -- printer and networkx view --------------------------------------------------------------


def test_printer_golden():
    g = Graph("demo")
    x = g.add_input(TensorType("float32", (None, "batch")), "x")
    b = Builder(g)
    y = b.op("Mul", x, Value.constant(np.int8(2)), name="y")
    z = b.op("Unsqueeze", y, axes=(0,), name="z")
    g.set_outputs([z])
    assert str(g) == (
        "graph demo(%x: f32[?,batch]) {\n"
        "  %y: f32[?,batch] = Mul(%x, const(2: i8[]))\n"
        "  %z: f32[1,?,batch] = Unsqueeze(%y) {axes=(0,)}\n"
        "  return %z\n"
        "}"
    )


def test_to_networkx_is_a_view_for_analysis():
    g, x, y, z = small_graph()
    view = ir.to_networkx(g)
    assert nx.is_directed_acyclic_graph(view)
    assert [view.nodes[n]["op"] for n in nx.topological_sort(view)] == ["Exp", "Add"]
    with_values = ir.to_networkx(g, include_values=True)
    assert with_values.number_of_nodes() == 3 and with_values.in_degree(z.producer) == 2
    view.remove_node(y.producer)
    assert len(g) == 2  # the IR is not changed through the view


def test_types_broadcast_symbolic_and_unknown_dims():
    from ptonnx.ir.types import broadcast_shapes

    assert broadcast_shapes((1, "n"), (3, 1)) == (3, "n")
    assert broadcast_shapes(("n",), ("m",)) == (None,)
    assert broadcast_shapes((None,), (4,)) == (4,)
    assert broadcast_shapes((), (2, 1)) == (2, 1)
    with pytest.raises(TypeRuleError):
        broadcast_shapes((2,), (3,))


def test_verify_accepts_a_declared_type_that_knows_less_than_the_rule_but_never_more():
    g = Graph()
    x = g.add_input(TensorType("float32", (2, 3)), "x")
    g.append(Node("Exp", [x], [Value(TensorType("float32", (None, "n")), "y")]))  # sound, less precise
    ir.verify(g)
    g2 = Graph()
    x = g2.add_input(TensorType("float32", (None, 3)), "x")
    g2.append(Node("Exp", [x], [Value(TensorType("float32", (2, 3)), "y")]))  # claims a size the rule cannot give
    with pytest.raises(VerificationError, match="disagree with the type rule"):
        ir.verify(g2)
