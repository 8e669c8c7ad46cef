"""Hoisting and the shape vectors type rules read: a body's Reshape whose target mixes
constants and invariants keeps its recorded type (the nodes its rule reads through stay
in the body), and everything else invariant still moves out, the numbers unchanged."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt

import ptonnx
from ptonnx.ir import Builder, Graph, TensorType, Value, interpret, verify
from ptonnx.ir.core import nested_graphs
from ptonnx.ir.registry import infer_types
from ptonnx.passes import HoistLoopInvariants, PassManager

F64 = "float64"


def _i64(*items: int) -> Value:
    return Value.constant(np.array(items, dtype=np.int64))


def _reshape_loop(*, rows_of: str = "w", data_of: str = "x", unknown_one: bool = False, checked: bool = True):
    """Each trip stacks `Reshape(x, Check(t, prod(t) != 0)) * exp(w[0, 0])` with the target
    `t = Concat([1], Shape(w)[1], Shape(w)[0])`, `f64[1, c, r]`: a constant and sizes of the
    invariant `w`. `rows_of="x"` reads the rows from the carried `x` instead, `data_of="w"`
    reshapes `w`; with `unknown_one`, the 1 is `int(exp(0 * w[0, 0]))`, unknown to the rule;
    `checked=False` leaves out the Check (which stays in the body, and so keeps its users there)."""
    g = Graph("outer")
    n, x0, w = g.add_input(TensorType("int64", ()), "n"), g.add_input(TensorType(F64, ("r", "c")), "x0"), g.add_input(TensorType(F64, ("r", "c")), "w")
    body = Graph("body")
    trip, x, w_in = body.add_input(TensorType("int64", ()), "trip"), body.add_input(TensorType(F64, ("r", "c")), "x"), body.add_input(TensorType(F64, ("r", "c")), "w")
    b = Builder(body)
    first = Value.constant(np.int64(0))
    w00 = b.op("Gather", b.op("Gather", w_in, first, axis=0), first, axis=0)
    one = _i64(1)
    if unknown_one:
        zero = b.op("Mul", w00, Value.constant(np.float64(0.0)))
        one = b.op("Unsqueeze", b.op("Cast", b.op("Exp", zero), to="int64"), axes=(0,))
    named = {"x": x, "w": w_in}
    cols = b.op("Gather", b.op("Shape", w_in), _i64(1), axis=0)  # ("c",)
    rows = b.op("Gather", b.op("Shape", named[rows_of]), _i64(0), axis=0)  # ("r",)
    target = b.op("Concat", one, cols, rows, axis=0)
    nonzero = b.op("NotEqual", b.op("ReduceProd", target, axes=(0,), keepdims=False), Value.constant(np.int64(0)))
    if checked:
        target = b.op("Check", target, nonzero, message="empty", exception="builtins:ValueError")
    stacked = b.op("Reshape", named[data_of], target)
    assert stacked.type.shape == (None if unknown_one else 1, "c", "r")  # the rule read through Check and Concat
    new = b.op("Add", x, b.op("Cast", trip, to=F64))
    body.set_outputs([Value.constant(np.array(True)), new, b.op("Mul", stacked, b.op("Exp", w00))])
    loop = Builder(g).node("Loop", [n, Value.constant(np.array(True)), x0, w], dict(body=body, n_carried=1, n_scan=1))
    g.set_outputs(list(loop.outputs))
    verify(g)
    return g, loop


def _hoist_keeping_the_numbers(g) -> int:
    rng = np.random.default_rng(0)
    args = (np.int64(3), rng.normal(size=(2, 3)), rng.normal(size=(2, 3)))
    before = interpret(g, *args)
    report = PassManager([HoistLoopInvariants()], verify_each=True).run(g)  # verify: the regression
    for a, b in zip(interpret(g, *args), before, strict=True):
        np.testing.assert_array_equal(a, b)
    return report.records[0].rewrites


def _reshape_in(body: Graph):
    (reshape,) = [node for node in body if node.op == "Reshape"]
    assert infer_types("Reshape", reshape.inputs, reshape.attrs) == [reshape.output.type]  # still derived
    return reshape


def test_a_reshape_target_of_constants_and_invariants_stays_with_its_reshape():
    """The report: the whole target is invariant, the Reshape is not. Hoisted, the target
    reached the body as an input whose contents nothing knows, and `verify` refused the
    Reshape's recorded `f64[1,c,r]` against its rule's `f64[?,?,?]`."""
    g, loop = _reshape_loop()
    # moved: w[0, 0] (two Gathers), its Exp, and the check's ReduceProd and NotEqual
    assert _hoist_keeping_the_numbers(g) == 5
    body = loop.attrs["body"]
    assert _reshape_in(body).output.type.shape == (1, "c", "r")
    counts = body.op_counts()
    assert counts["Shape"] == 2 and counts["Gather"] == 2 and counts["Concat"] == 1 and counts["Check"] == 1
    assert not {"Exp", "ReduceProd", "NotEqual"} & set(counts)
    # the target is also computed outside, for the check's predicate that moved
    assert g.op_counts()["Concat"] == 1 and g.op_counts()["ReduceProd"] == 1
    again = PassManager([HoistLoopInvariants()], verify_each=True).run(g)
    assert again.records[0].rewrites == 0 and body.op_counts() == counts and g.op_counts()["Concat"] == 1


def test_invariant_sizes_in_a_target_that_also_reads_the_carried_state_stay():
    """Only part of the target is invariant: hoisted, that part would leave the rule a `?`
    where the recorded type names `c` (which `verify` lets pass: a name is not a size)."""
    g, loop = _reshape_loop(rows_of="x")
    assert _hoist_keeping_the_numbers(g) == 3
    body = loop.attrs["body"]
    assert _reshape_in(body).output.type.shape == (1, "c", "r")
    assert body.op_counts()["Shape"] == 2 and len(body.inputs) == 4  # trip, x, w, exp(w[0, 0])
    assert "Shape" not in g.op_counts()  # the copy nothing outside read is not left behind


def test_a_reshape_of_invariants_moves_out_with_its_whole_target():
    g, loop = _reshape_loop(data_of="w", checked=False)
    assert _hoist_keeping_the_numbers(g) == 12  # all but the carried state's Add and Cast
    assert set(loop.attrs["body"].op_counts()) == {"Add", "Cast"}
    assert _reshape_in(g).output.type.shape == (1, "c", "r")


def test_a_target_whose_contents_nothing_knows_still_moves():
    """A size computed from the data (nothing known of it at compile time) is hoisted: the
    rule sees no more of it in the body than of a body input."""
    g, loop = _reshape_loop(unknown_one=True)
    assert _hoist_keeping_the_numbers(g) == 9  # also the Mul, Exp, Cast, Unsqueeze of the 1
    counts = loop.attrs["body"].op_counts()
    assert counts["Shape"] == 2 and counts["Concat"] == 1 and "Unsqueeze" not in counts
    assert counts["Cast"] == 1 and counts["Mul"] == 1  # the trip's Cast and the scaling stay
    assert _reshape_in(loop.attrs["body"]).output.type.shape == (None, "c", "r")


def test_a_scan_reshaping_to_a_non_sequence_shape_compiles():
    """Through `ptonnx.compile`: lifting types `x_t.reshape((1, w.shape[0]))` `f64[1, W_dim0]`,
    and the default passes used to leave a body that fails the final verification."""
    X, W = pt.dmatrix("X"), pt.dvector("W")
    ys, _ = pytensor.scan(lambda x, w: x.reshape((1, w.shape[0])) * pt.exp(w), sequences=[X], non_sequences=[W])
    cm = ptonnx.compile(pytensor.graph.fg.FunctionGraph([X, W], [ys]), verify_each=True)
    x, w = np.random.default_rng(1).normal(size=(3, 4)), np.linspace(-1.0, 1.0, 4)
    np.testing.assert_allclose(cm(x, w)[0], (x * np.exp(w))[:, None, :], rtol=1e-15)
    (body,) = nested_graphs(cm.ir)
    assert _reshape_in(body).output.type.shape == (1, "W_dim0")
    assert not {"Exp", "ReduceProd"} & set(body.op_counts())  # the factor and the reshape's check moved


def test_a_target_whose_rule_gains_nothing_from_its_contents_moves():
    """`x[w.shape[0]:]` is typed `f64[?, c]` whatever the start: its rule reads the start's
    contents (`(r,)`), but hoisting them costs it nothing, so they move."""
    g = Graph("outer")
    n, x0, w = g.add_input(TensorType("int64", ()), "n"), g.add_input(TensorType(F64, ("r", "c")), "x0"), g.add_input(TensorType(F64, ("r", "c")), "w")
    body = Graph("body")
    _, x, w_in = body.add_input(TensorType("int64", ()), "trip"), body.add_input(TensorType(F64, ("r", "c")), "x"), body.add_input(TensorType(F64, ("r", "c")), "w")
    b = Builder(body)
    start = b.op("Gather", b.op("Shape", w_in), _i64(0), axis=0)
    tail = b.op("Slice", x, start, _i64(2**62), _i64(1), axes=(0,))
    assert tail.type.shape == (None, "c")
    body.set_outputs([Value.constant(np.array(True)), x, tail])
    loop = Builder(g).node("Loop", [n, Value.constant(np.array(True)), x0, w], dict(body=body, n_carried=1, n_scan=1))
    g.set_outputs(list(loop.outputs))
    assert _hoist_keeping_the_numbers(g) == 2
    assert set(body.op_counts()) == {"Slice"}


# -- text in, text out (tests/passes/text.py) -------------------------------------------------

from tests.passes.text import assert_rewrites  # noqa: E402


def test_text_invariant_work_moves_before_the_loop_and_the_body_reads_its_result():
    """exp(w) * 2 reads only the read-only w and a constant: computed once, before the Loop, which
    passes it in place of w (no longer read); the work on the trip number and the carried x stays."""
    assert_rewrites("hoist_loop_invariants", """
        graph outer(%n: i64[], %x0: f64[3], %w: f64[3]) {
          %last: f64[3], %ys: f64[?,3] = Loop(%n, const(True: i1[]), %x0, %w) {body=<graph body>, n_carried=1, n_scan=1}
            graph body(%trip: i64[], %x: f64[3], %w: f64[3]) {
              %ew: f64[3] = Exp(%w)
              %scale: f64[3] = Mul(%ew, const(2.: f64[]))
              %t: f64[] = Cast(%trip) {to='float64'}
              %next: f64[3] = Mul(%x, %scale)
              %y: f64[3] = Add(%next, %t)
              return const(True: i1[]), %next, %y
            }
          return %last, %ys
        }
    """, """
        graph outer(%n: i64[], %x0: f64[3], %w: f64[3]) {
          %ew: f64[3] = Exp(%w)
          %scale: f64[3] = Mul(%ew, const(2.: f64[]))
          %last: f64[3], %ys: f64[?,3] = Loop(%n, const(True: i1[]), %x0, %scale) {body=<graph body>, n_carried=1, n_scan=1}
            graph body(%trip: i64[], %x: f64[3], %scale: f64[3]) {
              %t: f64[] = Cast(%trip) {to='float64'}
              %next: f64[3] = Mul(%x, %scale)
              %y: f64[3] = Add(%next, %t)
              return const(True: i1[]), %next, %y
            }
          return %last, %ys
        }
    """)


def test_text_a_hoisted_value_named_like_an_outer_one_prints_apart():
    """The outer copy of a hoisted node keeps its body name, which the outer graph may already
    use (here the input %ew): the IR allows that, and the text calls the second %ew_1, so it
    reads back (the parser refuses a name defined twice in a graph)."""
    assert_rewrites("hoist_loop_invariants", """
        graph outer(%n: i64[], %x0: f64[3], %w: f64[3], %ew: f64[3]) {
          %last: f64[3], %ys: f64[?,3] = Loop(%n, const(True: i1[]), %x0, %w) {body=<graph body>, n_carried=1, n_scan=1}
            graph body(%trip: i64[], %x: f64[3], %w: f64[3]) {
              %ew: f64[3] = Exp(%w)
              %next: f64[3] = Mul(%x, %ew)
              %y: f64[3] = Add(%next, const(1.: f64[]))
              return const(True: i1[]), %next, %y
            }
          %out: f64[3] = Sub(%last, %ew)
          return %out, %ys
        }
    """, """
        graph outer(%n: i64[], %x0: f64[3], %w: f64[3], %ew: f64[3]) {
          %ew_1: f64[3] = Exp(%w)
          %last: f64[3], %ys: f64[?,3] = Loop(%n, const(True: i1[]), %x0, %ew_1) {body=<graph body>, n_carried=1, n_scan=1}
            graph body(%trip: i64[], %x: f64[3], %ew: f64[3]) {
              %next: f64[3] = Mul(%x, %ew)
              %y: f64[3] = Add(%next, const(1.: f64[]))
              return const(True: i1[]), %next, %y
            }
          %out: f64[3] = Sub(%last, %ew)
          return %out, %ys
        }
    """)


def test_text_a_check_stays_in_the_body_and_its_predicate_moves():
    """A loop that runs no trip must not fail a check it never reaches: the Check stays (and its
    user), the predicate it reads is computed once outside. (The input sets include negative w,
    failing the check alike before and after, and zero trips, failing it neither time.)"""
    assert_rewrites("hoist_loop_invariants", """
        graph outer(%n: i64[], %x0: f64[3], %w: f64[3]) {
          %last: f64[3] = Loop(%n, const(True: i1[]), %x0, %w) {body=<graph body>, n_carried=1, n_scan=0}
            graph body(%trip: i64[], %x: f64[3], %w: f64[3]) {
              %pos: i1[3] = GreaterOrEqual(%w, const(0.: f64[]))
              %ok: i1[] = ReduceAll(%pos) {axes=(0,), keepdims=False}
              %wc: f64[3] = Check(%w, %ok) {exception='builtins:ValueError', message='w < 0'}
              %next: f64[3] = Mul(%x, %wc)
              return const(True: i1[]), %next
            }
          return %last
        }
    """, """
        graph outer(%n: i64[], %x0: f64[3], %w: f64[3]) {
          %pos: i1[3] = GreaterOrEqual(%w, const(0.: f64[]))
          %ok: i1[] = ReduceAll(%pos) {axes=(0,), keepdims=False}
          %last: f64[3] = Loop(%n, const(True: i1[]), %x0, %w, %ok) {body=<graph body>, n_carried=1, n_scan=0}
            graph body(%trip: i64[], %x: f64[3], %w: f64[3], %ok: i1[]) {
              %wc: f64[3] = Check(%w, %ok) {exception='builtins:ValueError', message='w < 0'}
              %next: f64[3] = Mul(%x, %wc)
              return const(True: i1[]), %next
            }
          return %last
        }
    """)


def test_text_a_shape_a_body_type_rule_reads_stays_with_it():
    """Reshape(x, Concat([1], Shape(w))) is typed f64[1,r] because its rule sees the target's
    elements; hoisted, the target would reach the body as an input nothing is known of. So the
    Shape and Concat stay (their copies outside, unread, are dropped); exp(w) moves."""
    rows = np.array([1.0, -0.0, np.inf, np.nan])
    inputs = [[np.int64(n), rows, rows[::-1].copy()] for n in (0, 2)]
    assert_rewrites("hoist_loop_invariants", """
        graph outer(%n: i64[], %x0: f64[r], %w: f64[r]) {
          %last: f64[r], %rows: f64[?,1,r] = Loop(%n, const(True: i1[]), %x0, %w) {body=<graph body>, n_carried=1, n_scan=1}
            graph body(%trip: i64[], %x: f64[r], %w: f64[r]) {
              %sw: i64[1] = Shape(%w) {end=None, start=0}
              %target: i64[2] = Concat(const([1]: i64[1]), %sw) {axis=0}
              %row: f64[1,r] = Reshape(%x, %target)
              %ew: f64[r] = Exp(%w)
              %next: f64[r] = Mul(%x, %ew)
              return const(True: i1[]), %next, %row
            }
          return %last, %rows
        }
    """, """
        graph outer(%n: i64[], %x0: f64[r], %w: f64[r]) {
          %ew: f64[r] = Exp(%w)
          %last: f64[r], %rows: f64[?,1,r] = Loop(%n, const(True: i1[]), %x0, %w, %ew) {body=<graph body>, n_carried=1, n_scan=1}
            graph body(%trip: i64[], %x: f64[r], %w: f64[r], %ew: f64[r]) {
              %sw: i64[1] = Shape(%w) {end=None, start=0}
              %target: i64[2] = Concat(const([1]: i64[1]), %sw) {axis=0}
              %row: f64[1,r] = Reshape(%x, %target)
              %next: f64[r] = Mul(%x, %ew)
              return const(True: i1[]), %next, %row
            }
          return %last, %rows
        }
    """, inputs=inputs)
