"""ONNX value names follow the IR's: the node that writes an IR value writes it under its final
name (a graph output's name, else the value's IR name made unique), with no renaming afterwards
(`lowering/lower.py` `emit_nodes`). A graph output its node cannot write under its name (an
input, a constant, a value listed twice, a value an emitter gives without a node of its own) is
copied by an Identity; so is a body output that is not written inside the body. Each case gives a
valid model (the ONNX checker, full), SSA names across the model and its bodies, and PyTensor's
numbers at both onnxruntime levels (`assert_matches_pytensor`)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import onnx
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.ifelse import ifelse

from ptonnx import stages
from ptonnx.ir import Builder, Graph, Value
from ptonnx.ir import TensorType as T
from ptonnx.lowering import lower
from tests.conftest import assert_matches_pytensor
from tests.lowering.harness import compiled

warnings.filterwarnings("ignore", message="Scan return signature", category=DeprecationWarning)

X = np.array([0.5, -0.0, 2.0, -3.25])


def _nodes(graph: onnx.GraphProto):
    """Every node of `graph` and of its bodies."""
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from _nodes(attribute.g)


def _writers(model: onnx.ModelProto) -> dict[str, str]:
    """Each value name a node writes -> that node's op type; asserts SSA across the whole model:
    no name written twice, and none written that is an input or an initializer."""
    given = {v.name for v in model.graph.input} | {t.name for t in model.graph.initializer}
    writers: dict[str, str] = {}
    for node in _nodes(model.graph):
        for name in node.output:
            assert name not in writers and name not in given, f"{name} written twice"
            writers[name] = node.op_type
    return writers


def _suffixed(model: onnx.ModelProto, names) -> list[str]:
    """The value names of the model that are one of `names` with a `_<k>` suffix."""
    pattern = re.compile(rf"({'|'.join(map(re.escape, names))})_\d+")
    return sorted(n for n in _writers(model) if pattern.fullmatch(n))


def _compile(inputs, outputs, arrays, **kwargs) -> onnx.ModelProto:
    return assert_matches_pytensor(inputs, outputs, arrays, **kwargs).model


def test_named_values_keep_their_names_and_the_output_is_written_by_its_node():
    x = pt.vector("x", dtype="float64")
    m = x * 2
    m.name = "m"
    y = pt.exp(m)
    y.name = "y"
    cm = assert_matches_pytensor([x], [y], [X])
    writers = _writers(cm.model)
    assert [o.name for o in cm.model.graph.output] == ["y"]
    assert writers["y"] == "Exp" and writers["m"] == "Mul"
    assert "Identity" not in writers.values()
    assert _suffixed(cm.model, ["x", "m", "y"]) == []
    for node in cm.ir:  # every named IR value a node writes is an ONNX value of that name
        for v in node.outputs:
            if v.name:
                assert v.name in writers, v.name


def test_a_value_an_emitter_gives_without_a_node_is_read_under_its_name():
    # a Split into one part is its input (no node): read as x, no Identity; as an output, copied
    x = pt.vector("x", dtype="float64")
    part = pt.split(x, [4], n_splits=1, axis=0)
    part.name = "part"
    y = pt.exp(part)
    y.name = "y"
    model = _compile([x], [y], [X], passes=["unify_dtypes"])
    assert "Identity" not in _writers(model).values() and "part" not in _writers(model)
    model = _compile([x], [y, part], [X], passes=["unify_dtypes"])
    assert _writers(model)["part"] == "Identity"  # x itself: copied


def test_an_output_an_emitter_gives_as_an_earlier_nodes_value():
    # the one-part Split of a product is the product: the Mul writes the output's name, whether the
    # product's other reader comes before the Split or after it
    x = pt.vector("x", dtype="float64")
    product = x * 2
    product.name = "product"
    part = pt.split(product, [4], n_splits=1, axis=0)
    part.name = "part"
    for outputs in ([part], [pt.exp(product), part], [part, pt.exp(product)]):
        writers = _writers(_compile([x], outputs, [X], passes=["unify_dtypes"]))
        assert writers["part"] == "Mul" and "Identity" not in writers.values()
    writers = _writers(_compile([x], [part, product], [X], passes=["unify_dtypes"]))  # one value, two outputs
    assert {writers["part"], writers["product"]} == {"Mul", "Identity"}


def test_an_output_that_is_an_input():
    x = pt.vector("x", dtype="float64")
    y = pt.exp(x)
    y.name = "y"
    model = _compile([x], [x, y], [X])
    assert [o.name for o in model.graph.output] == ["x", "y"]
    assert "Identity" not in _writers(model).values()  # the input itself is the output
    model = _compile([x], [y, x, x], [X])
    assert [o.name for o in model.graph.output] == ["y", "x", "x_2"]
    assert _writers(model)["x_2"] == "Identity"


def test_two_outputs_of_one_value():
    x = pt.vector("x", dtype="float64")
    y = pt.exp(x) * 3
    y.name = "y"
    model = _compile([x], [y, y, pt.log(y)], [X])
    writers = _writers(model)
    assert [o.name for o in model.graph.output] == ["y", "y_1", "output_2"]
    assert writers["y"] == "Mul" and writers["y_1"] == "Identity" and writers["output_2"] == "Log"


def test_two_named_values_one_computation():
    # without the IR's cse the two products are two IR nodes; the emit cache gives the second
    # the first's name (already final): it is read under that name, and copied as an output
    x = pt.vector("x", dtype="float64")
    a, b = x * 2, x * 2
    a.name, b.name = "a", "b"
    model = _compile([x], [a, b, pt.exp(a) + pt.exp(b)], [X], passes=["unify_dtypes"])
    writers = _writers(model)
    assert list(writers.values()).count("Mul") == 1 and list(writers.values()).count("Exp") == 1
    assert {writers["a"], writers["b"]} == {"Mul", "Identity"}


def test_a_constant_output():
    x = pt.vector("x", dtype="float64")
    y = x + 1
    y.name = "y"
    model = _compile([x], [y, pt.constant(np.float64(2.5)), pt.constant(np.float64(2.5))], [X])
    writers = _writers(model)
    assert [o.name for o in model.graph.output] == ["y", "output_1", "output_2"]
    assert writers["output_1"] == writers["output_2"] == "Identity"


def test_names_that_clash():
    x = pt.vector("x", dtype="float64")
    a = x * 2
    a.name = "x"  # an input's name
    b = pt.exp(a)
    b.name = "v"
    c = pt.log1p(b * b)
    c.name = "v"  # another value's name
    d = pt.sqrt(c)
    d.name = "mul"  # the name the emitter gives a Mul
    e = (d * c) * x
    e.name = "v"  # the output's name, claimed first
    model = _compile([x], [e], [X])
    writers = _writers(model)
    assert [o.name for o in model.graph.output] == ["v"] and writers["v"] == "Mul"
    assert writers["x_1"] == "Mul" and writers["v_1"] == "Exp" and writers["v_2"] == "Where"  # log1p's last node
    (sqrt,) = (n for n, op in writers.items() if op == "Sqrt")
    assert re.fullmatch(r"mul_\d+", sqrt)
    y = pt.exp(x)
    y.name = "x"  # an output named as an input
    model = _compile([x], [y, x], [X])
    assert [o.name for o in model.graph.output] == ["x_0", "x"]
    assert _writers(model)["x_0"] == "Exp"


def test_outputs_inside_an_if():
    c, x = pt.dscalar("c"), pt.dvector("x")
    t = x * 3
    t.name = "t"
    u = pt.exp(x)
    u.name = "t"  # the other branch's name
    z, w = ifelse(c > 0, [t, t], [x, u])  # a value twice; an outer value; a node of its own
    z.name, w.name = "z", "t"
    for cond in (1.0, -1.0):
        model = _compile([c, x], [z, w, ifelse(c > 0, c * 2, pt.constant(np.float64(1.5)))], [np.float64(cond), X])
    writers = _writers(model)
    assert writers["z"] == writers["t"] == "If"


def scan(*args, **kwargs):
    return pytensor.scan(*args, return_updates=False, **kwargs)


def test_outputs_inside_a_loop():
    x0, w = pt.dvector("x0"), pt.dvector("w")

    def step(prev, w):
        r = prev * w + 1
        r.name = "r"  # also the name of the scan's output
        return [r, w, r]  # an outer value (an invariant) and a value twice as per-trip outputs

    rs, ws, again = scan(step, outputs_info=[x0, None, None], non_sequences=[w], n_steps=3)
    rs.name, ws.name, again.name = "r", "w", "again"
    for passes in (None, ["unify_dtypes"]):
        model = _compile([x0, w], [rs, ws, again, rs[-1]], [X, X[::-1].copy()], passes=passes)
        assert [o.name for o in model.graph.output][:2] == ["r", "w_1"]
        assert "Loop" in _writers(model).values()


def _named_loop() -> Graph:
    """A Loop whose carried and per-trip outputs are named IR values, one a graph output and one read."""
    body = Graph("body")
    _, x, w = body.add_input(T("int64", ()), "trip"), body.add_input(T("float64", (3,)), "x"), body.add_input(T("float64", (3,)), "w")
    nx = Builder(body).op("Mul", x, w)
    nx.name = "nx"
    body.set_outputs([Value.constant(np.array(True)), nx, nx])
    g = Graph("named_loop")
    n, x0, w = g.add_input(T("int64", ()), "n"), g.add_input(T("float64", (3,)), "x0"), g.add_input(T("float64", (3,)), "w")
    b = Builder(g)
    carried, stacked = b.node("Loop", [n, Value.constant(np.array(True)), x0, w], {"body": body, "n_carried": 1, "n_scan": 1}).outputs
    carried.name, stacked.name = "carried", "stacked"
    y = b.op("Exp", carried)
    y.name = "y"
    g.set_outputs([y, stacked])
    return g


@pytest.mark.one_environment  # hand-built IR: no PyTensor involved
def test_a_loop_writes_its_outputs_under_their_names_in_either_form():
    case = compiled(_named_loop)
    case.check(np.int64(3), np.array([1.5, -0.0, 2.0]), np.array([2.0, -1.0, 0.5]))
    writers = _writers(case.model)
    assert writers["carried"] == writers["stacked"] == "Loop" and writers["y"] == "Exp" and writers["nx"] == "Mul"
    # IREE's form declares the Loop's results (`loop_buffers.py`): each declaration names a value of the model
    graph = stages.compile_graph(_named_loop(), stop="legalise").graph
    model = lower(graph, target="iree")
    onnx.checker.check_model(model, full_check=True)
    writers = _writers(model)
    known = set(writers) | {v.name for v in model.graph.input} | {t.name for t in model.graph.initializer}
    assert writers["carried"] == "Loop" and {v.name for v in model.graph.value_info} <= known
