"""`ptonnx.ir.parser.parse_graph` reads back what `print_graph` writes: the text prints back
as it was, and the graph read computes the same numbers; what it cannot read is a clear error."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given

from ptonnx.errors import IRError
from ptonnx.ir import Builder, Graph, TensorType, Value, interpret, print_graph, verify
from ptonnx.ir.parser import parse_graph
from tests.passes.graphs import build, recipes


def _round_trip(g: Graph, *args) -> Graph:
    text = print_graph(g)
    back = parse_graph(text)
    verify(back)
    assert print_graph(back) == text
    with np.errstate(all="ignore"):
        for got, want in zip(interpret(back, *args), interpret(g, *args), strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    return back


def _text(s: str) -> str:
    return textwrap.dedent(s).strip("\n")


def test_symbolic_and_unknown_dims_and_an_int8_literal():
    g = Graph("demo")
    x = g.add_input(TensorType("float32", (None, "batch")), "x")
    b = Builder(g)
    y = b.op("Mul", x, Value.constant(np.int8(2)), name="y")
    g.set_outputs([b.op("Unsqueeze", y, axes=(0,), name="z"), y])
    back = _round_trip(g, np.arange(6, dtype=np.float32).reshape(3, 2))
    assert back.inputs[0].type == TensorType("float32", (None, "batch"))
    assert [n.op for n in back] == ["Mul", "Unsqueeze"] and back.outputs[1] is back.nodes[0].output


def test_constants_of_every_kind_read_back_to_the_bit():
    g = Graph("consts")
    x = g.add_input(TensorType("float32", (6,)), "x")
    b = Builder(g)
    f32 = np.array([np.nan, -0.0, np.inf, -np.inf, np.finfo(np.float32).smallest_subnormal, 1 / 3], np.float32)
    f64 = np.array([[0.1, -5e-324], [1e308, 2 / 3]])
    consts = [f32, f64, np.float16(0.1), np.array([True, False]), np.uint64(2**64 - 1), np.int64(-(2**63)),
              np.zeros((0, 3), np.int32), np.array([[7]], np.int8)]
    outs = [b.op("Add", x, Value.constant(f32))] + [b.op("Identity", Value.constant(c)) for c in consts]
    g.set_outputs(outs)
    back = _round_trip(g, np.linspace(-1, 1, 6, dtype=np.float32))
    for node, c in zip(back.nodes[1:], consts, strict=True):
        got = node.inputs[0].const
        assert got.dtype == np.asarray(c).dtype and got.shape == np.shape(c)
        assert got.tobytes() == np.asarray(c).tobytes()  # NaN, -0.0 and the last bit of 1/3 included
        assert not got.flags.writeable


def test_attributes_of_each_kind():
    g = Graph("attrs")
    x = g.add_input(TensorType("float32", (1, 1, 3, 3)), "x")
    m = g.add_input(TensorType("float64", (2, 2)), "m")
    b = Builder(g)
    conv = b.op("Conv", x, Value.constant(np.ones((1, 1, 1, 1), np.float32)), pads=(0, 0, 0, 0), strides=(1, 1))
    bn = b.op("BatchNorm", conv, *(Value.constant(np.array([v], np.float32)) for v in (1.0, 0.0, 0.0, 1.0)), epsilon=1e-3)
    shape = b.op("Shape", x, start=1, end=None)  # int and None
    ok = b.op("ReduceAll", b.op("IsNaN", m), axes=(0, 1), keepdims=True)  # tuple and bool
    # a string holding the printer's separators, quotes and braces
    checked = b.op("Check", m, b.op("Not", b.op("Squeeze", ok, axes=(0, 1))), message="it's {bad}, = (x, y]",
                   exception="builtins:ValueError")
    solved = b.op("SolveTriangular", checked, checked, lower=np.bool_(True), b_ndim=2)  # a NumPy scalar
    swapped = b.op("Transpose", solved, perm=(np.int64(1), np.int64(0)))  # printed (np.int64(1), np.int64(0))
    g.set_outputs([bn, shape, b.op("Cast", swapped, to="float32")])
    args = (np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3), np.array([[2.0, 0.0], [1.0, 4.0]]))
    back = _round_trip(g, *args)
    check = next(n for n in back if n.op == "Check")
    assert check.attrs["message"] == "it's {bad}, = (x, y]"
    assert next(n for n in back if n.op == "BatchNorm").attrs["epsilon"] == 1e-3
    assert next(n for n in back if n.op == "Shape").attrs == {"start": 1, "end": None}
    assert "{perm=(np.int64(1), np.int64(0))}" in print_graph(back)


def _loop_graph() -> Graph:
    """Stack x * exp(w) over n trips, carrying x + 1."""
    g = Graph("outer")
    n, x0, w = (g.add_input(TensorType(d, s), name) for d, s, name in (("int64", (), "n"), ("float64", ("r",), "x0"), ("float64", ("r",), "w")))
    body = Graph("body")
    _, x, w_in = (body.add_input(TensorType(d, s), name) for d, s, name in (("int64", (), "trip"), ("float64", ("r",), "x"), ("float64", ("r",), "w")))
    bb = Builder(body)
    body.set_outputs([Value.constant(np.array(True)), bb.op("Add", x, Value.constant(np.float64(1.0))), bb.op("Mul", x, bb.op("Exp", w_in))])
    loop = Builder(g).node("Loop", [n, Value.constant(np.array(True)), x0, w], dict(body=body, n_carried=1, n_scan=1))
    g.set_outputs(list(loop.outputs))
    return g


def test_a_loop_and_its_body():
    g = _loop_graph()
    back = _round_trip(g, np.int64(3), np.array([1.0, -0.0]), np.array([0.5, np.inf]))
    _round_trip(g, np.int64(0), np.array([1.0, 2.0]), np.array([0.5, 1.0]))
    (loop,) = back.nodes
    assert loop.attrs["body"].name == "body" and loop.attrs["body"] is not g.nodes[0].attrs["body"]
    assert "    graph body(%trip: i64[], %x: f64[r], %w: f64[r]) {" in print_graph(back).splitlines()


def test_values_that_share_a_name_print_apart_and_read_back():
    """The IR lets values share a name (two PyTensor variables named alike); text is SSA, so the
    printer gives a later one the first free `_k` (here the Sub's `x` becomes x_2, since the
    second input took x_1, and the value named x_1 becomes x_1_1)."""
    g = Graph("g")
    a, b = g.add_input(TensorType("float64", (2,)), "x"), g.add_input(TensorType("float64", (2,)), "x")
    builder = Builder(g)
    difference = builder.op("Sub", a, b, name="x")
    g.set_outputs([builder.op("Exp", difference, name="x_1"), difference])
    assert print_graph(g).splitlines() == [
        "graph g(%x: f64[2], %x_1: f64[2]) {",
        "  %x_2: f64[2] = Sub(%x, %x_1)",
        "  %x_1_1: f64[2] = Exp(%x_2)",
        "  return %x_1_1, %x_2",
        "}",
    ]
    _round_trip(g, np.array([1.0, -0.0]), np.array([0.5, np.inf]))


@pytest.mark.parametrize("names", [("then", "else"), ("branch", "branch")], ids=["named", "same-name"])
def test_an_if_whose_bodies_may_share_a_name(names):
    """Bodies print in the node's attribute order: two of one name are told apart by it."""
    g = Graph("outer")
    c, a = g.add_input(TensorType("bool", ()), "c"), g.add_input(TensorType("float64", (2,)), "a")
    bodies = {}
    for key, name, op in (("then_body", names[0], "Log"), ("else_body", names[1], "Exp")):
        body = Graph(name)
        (v,) = [body.add_input(TensorType("float64", (2,)), "v")]
        body.set_outputs([Builder(body).op(op, v)])
        bodies[key] = body
    g.set_outputs([Builder(g).node("If", [c, a], bodies).output])
    for cond in (True, False):
        back = _round_trip(g, np.bool_(cond), np.array([1.0, 2.0]))
    (node,) = back.nodes
    assert node.attrs["then_body"].nodes[0].op == "Log" and node.attrs["else_body"].nodes[0].op == "Exp"


@given(recipes())
def test_random_graphs_print_back_as_they_were(recipe):
    g, arrays = build(recipe)
    _round_trip(g, *arrays)


def test_hand_written_text_may_leave_out_default_attributes():
    g = parse_graph(_text("""
        graph g(%x: f64[2,3]) {

          %s: f64[2] = ReduceSum(%x) {axes=(1,)}
          %e: f64[3] = ReduceMax(%x) {axes=(0,), keepdims=False}
          return %s, %e, const(1.5: f64[])
        }
    """))
    verify(g)
    assert g.nodes[0].attrs["keepdims"] is False
    assert print_graph(g).splitlines()[1] == "  %s: f64[2] = ReduceSum(%x) {axes=(1,), keepdims=False}"
    assert g.outputs[2].const == 1.5
    assert parse_graph("graph empty() {\n  return\n}").outputs == ()


BAD = {
    "a big constant": ("""
        graph g(%x: f32[8]) {
          %y: f32[8] = Add(%x, const(<8 elems>: f32[8]))
          return %y
        }""", r"line 2: the constant const\(<8 elems>: f32\[8\]\) cannot be read back"),
    "undefined": ("""
        graph g(%x: f32[2]) {
          %y: f32[2] = Exp(%x)
          %z: f32[2] = Add(%y, %w)
          return %z
        }""", r"line 3: %w is not defined"),
    "used before defined": ("""
        graph g(%x: f32[2]) {
          %z: f32[2] = Add(%x, %y)
          %y: f32[2] = Exp(%x)
          return %z
        }""", r"line 2: %y is not defined"),
    "defined twice": ("""
        graph g(%x: f32[2]) {
          %x: f32[2] = Exp(%x)
          return %x
        }""", r"line 2: %x is defined twice"),
    "undefined output": ("""
        graph g(%x: f32[2]) {
          return %nope
        }""", r"line 2: %nope is not defined"),
    "an outer value read in a body": ("""
        graph g(%n: i64[], %x: f64[]) {
          %y: f64[] = Loop(%n, const(True: i1[]), %x) {body=<graph b>, n_carried=1, n_scan=0}
            graph b(%t: i64[], %c: f64[]) {
              %d: f64[] = Add(%c, %x)
              return const(True: i1[]), %d
            }
          return %y
        }""", r"line 4: %x is not defined"),
    "a body that is not printed": ("""
        graph g(%n: i64[], %x: f64[]) {
          %y: f64[] = Loop(%n, const(True: i1[]), %x) {body=<graph b>, n_carried=1, n_scan=0}
          return %y
        }""", r"line 2: Loop names 1 body graph\(s\) but 0 follow it"),
    "unknown op": ("""
        graph g(%x: f32[2]) {
          %y: f32[2] = Frobnicate(%x)
          return %y
        }""", r"line 2: unknown op 'Frobnicate'"),
    "bad type": ("""
        graph g(%x: float32[2]) {
          return %x
        }""", r"line 1: expected a type such as f32\[2,\?,n\], not 'float32\[2\]'"),
    "bad attribute": ("""
        graph g(%x: f32[2]) {
          %y: f32[2] = Cast(%x) {to=float32}
          return %y
        }""", r"line 2: attribute to: 'float32' is not a Python literal"),
    "a rejected attribute": ("""
        graph g(%x: f32[2]) {
          %y: f32[2] = Exp(%x) {axis=0}
          return %y
        }""", r"line 2: Exp: .*no attribute\(s\) \['axis'\]"),
    "no return": ("""
        graph g(%x: f32[2]) {
          %y: f32[2] = Exp(%x)
        }""", r"line 3: expected a node"),
    "text after the graph": ("""
        graph g(%x: f32[2]) {
          return %x
        }
        graph h() {""", r"line 4: text after the graph"),
    "cut short": ("""
        graph g(%x: f32[2]) {
          %y: f32[2] = Exp(%x)""", r"line 2: the text ends where the 'return' of graph 'g' was expected"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_what_cannot_be_read_is_an_ir_error_naming_the_line(case):
    text, message = BAD[case]
    with pytest.raises(IRError, match=message):
        parse_graph(_text(text))


def test_a_printed_big_constant_is_refused_with_its_line():
    g = Graph("big")
    x = g.add_input(TensorType("float32", (8,)), "x")
    g.set_outputs([Builder(g).op("Add", x, Value.constant(np.arange(8, dtype=np.float32)))])
    with pytest.raises(IRError, match=r"line 2: .*<8 elems>.*at most 6 elements"):
        parse_graph(print_graph(g))


# -- the text-in, text-out helper of the pass tests (tests/passes/text.py) -------------------


class _DropAddZero:
    """A wrong pass: `x + 0.0` is not x (at x = -0.0)."""

    name = "drop_add_zero"

    def run(self, graph):
        from ptonnx.passes.base import PassResult

        for node in list(graph):
            if node.op == "Add" and node.inputs[1].const is not None and node.inputs[1].const == 0:
                graph.replace_all_uses(node.output, node.inputs[0])
                graph.remove(node)
        return PassResult(True, 1)


ADD_ZERO = """
    graph g(%x: f32[2]) {
      %y: f32[2] = Add(%x, const(0.: f32[]))
      return %y
    }
"""


def test_the_helper_shows_a_diff_and_catches_a_changed_sign_of_zero():
    from tests.passes.text import assert_rewrites

    with pytest.raises(AssertionError, match=r"(?s)-  %y: f32\[2\] = Add.*\+  return %x"):
        assert_rewrites(_DropAddZero(), ADD_ZERO, ADD_ZERO)
    with pytest.raises(AssertionError, match="not bit-identical"):
        assert_rewrites(_DropAddZero(), ADD_ZERO, "graph g(%x: f32[2]) {\n  return %x\n}")
    assert_rewrites("cse", ADD_ZERO, ADD_ZERO)
