"""PyTensor's Scan as an ONNX Loop, flavour by flavour: sit-sot, mit-sot with any taps,
nit-sot, mit-mot (gradients), sequences with past and future taps, non-sequences,
several outputs, while loops, nested scans, n_steps constant, symbolic and zero,
go_backwards, truncate_gradient, strict, and shared variables a scan updates.

Each is compared with PyTensor's own evaluation, for the plain graph and for the ONNX
mode's rewritten graph (save-memory buffers, push-out, merged scans), at both
onnxruntime levels (`check_like_pytensor`), at several lengths including 0, with the
ends of the range in the data.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.stats as st
from pytensor.scan.utils import until

import ptonnx
from ptonnx import keys
from tests.conftest import REFERENCE_MODE, assert_same, check_like_pytensor, run_at_every_level

warnings.filterwarnings("ignore", message="Scan return signature", category=DeprecationWarning)

#: the ends of the range, as data a loop steps through
EDGES = np.array([0.0, -0.0, 1.5, -2.0, 5e-324, -2.2e-308, 1e-300, 1e300, -1.7e308, np.inf, -np.inf, np.nan, 7.25])
LENGTHS = [0, 1, 7]


def scan(*args, **kwargs):
    return pytensor.scan(*args, return_updates=False, **kwargs)


def _data(n: int, width: int | None = None) -> np.ndarray:
    values = np.resize(EDGES, n if width is None else (n, width))
    return np.ascontiguousarray(values)


@pytest.mark.parametrize("n", LENGTHS)
def test_sit_sot_over_a_sequence_with_the_ends_of_the_range(n):
    """acc <- acc * 0.5 + x: NaN and inf in the sequence flow through, as in PyTensor."""
    x = pt.dvector("x")
    ys = scan(lambda a, acc: acc * 0.5 + a, sequences=[x], outputs_info=[pt.zeros(())])
    check_like_pytensor([x], [ys, ys.sum()], [_data(n)])


@pytest.mark.parametrize("n", [0, 1, 5, 40])
def test_a_recurrence_that_overflows(n):
    """x <- x * 1e80 - x: inf after a few steps, then inf - inf = NaN, every step kept."""
    steps, x0 = pt.iscalar("steps"), pt.dvector("x0")
    xs = scan(lambda x: x * 1e80 - x, outputs_info=[x0], n_steps=steps)
    check_like_pytensor([steps, x0], [xs], [np.int32(n), np.array([1.0, -3.0, 0.0, 1e-300])])


@pytest.mark.parametrize("taps", [(-2, -1), (-3, -1), (-3,), (-4, -2, -1)])
@pytest.mark.parametrize("n", [0, 10])
def test_mit_sot_with_any_taps(taps, n):
    steps, init = pt.iscalar("steps"), pt.dmatrix("init")

    def step(*args):
        return sum(a * (k + 1.5) for k, a in enumerate(args)) / len(args)

    ys = scan(step, outputs_info=[dict(initial=init, taps=list(taps))], n_steps=steps)
    start = np.arange(2.0 * -min(taps)).reshape(-min(taps), 2) - 1.25
    check_like_pytensor([steps, init], [ys], [np.int32(n), start])


def test_symbolic_constant_and_zero_step_counts():
    x0 = pt.dscalar("x0")
    for n_steps in (5, 0, pt.constant(3, dtype="int64")):
        ys = scan(lambda x: x * 1.5 + 1.0, outputs_info=[x0], n_steps=n_steps)
        check_like_pytensor([x0], [ys], [np.float64(2.0)])


@pytest.mark.parametrize("n", [0, 5])
def test_nit_sot_several_outputs_some_without_initial_values(n):
    """Two nit-sots and one sit-sot from one body, a non-sequence matrix."""
    X, W, h0 = pt.dmatrix("X"), pt.dmatrix("W"), pt.dvector("h0")

    def step(x, h, w):
        new = pt.tanh(pt.dot(w, h) + x)
        return new.sum(), new, (new * x).max()

    total, hs, peak = scan(step, sequences=[X], outputs_info=[None, h0, None], non_sequences=[W])
    rng = np.random.default_rng(0)
    check_like_pytensor([X, W, h0], [total, hs, peak, hs[-1] if n else hs.sum()],
                        [rng.normal(size=(n, 3)), rng.normal(size=(3, 3)), np.array([0.1, np.nan, -0.0])])


@pytest.mark.parametrize("n", [3, 8])
def test_sequences_with_past_and_future_taps_and_go_backwards(n):
    x, y = pt.dvector("x"), pt.dvector("y")
    zs = scan(lambda a, b, c, d, acc: acc * 0.5 + a * b - c + d, sequences=[dict(input=x, taps=[-1, 0, 2]), y],
              outputs_info=[pt.zeros(())], go_backwards=True)
    check_like_pytensor([x, y], [zs], [_data(n + 2) / 3, np.linspace(-1, 1, n + 2)])


def test_truncate_gradient_and_strict():
    x, w = pt.dvector("x"), pt.dscalar("w")
    ys = scan(lambda a, acc, w_: acc * w_ + a, sequences=[x], outputs_info=[pt.zeros(())], non_sequences=[w],
              truncate_gradient=3, strict=True)
    cost = ys.sum()
    check_like_pytensor([x, w], [cost, *pytensor.grad(cost, [x, w])], [np.linspace(-1, 2, 9), np.float64(0.7)])


@pytest.mark.parametrize("n", [1, 6])
def test_gradients_through_scans_are_mit_mots(n):
    """pytensor.grad of a scan builds a mit-mot scan (read and written at several taps)."""
    x, s, init = pt.dvector("x"), pt.dscalar("s"), pt.dvector("init")
    ys = scan(lambda a, b, acc2: a * pt.sin(acc2) + b * s, sequences=[x], outputs_info=[dict(initial=init, taps=[-2, -1])])
    cost = (ys ** 2).sum() + ys[-1]
    check_like_pytensor([x, s, init], [cost, *pytensor.grad(cost, [x, s, init])],
                        [np.linspace(-1, 2, n), np.float64(0.3), np.array([0.5, -1.0])])


@pytest.mark.parametrize("start", [1.0, 60.0, np.nan])
def test_while_loops(start):
    """until(x > 50): stops at the first step (60), runs to n_steps (NaN), or in between."""
    s, steps = pt.dscalar("s"), pt.iscalar("steps")

    def step(acc):
        new = acc * 2
        return new, until(new > 50)

    ws = scan(step, outputs_info=[s], n_steps=steps)
    for n in (0, 1, 30):
        check_like_pytensor([s, steps], [ws, ws.shape[0]], [np.float64(start), np.int32(n)])


def test_a_while_loop_that_never_runs_its_body():
    s = pt.dvector("s")
    ws = scan(lambda acc: (acc + 1, until(pt.all(acc > 0))), outputs_info=[s], n_steps=0)
    check_like_pytensor([s], [ws], [np.array([1.0, 2.0])])


def test_scans_that_pytensor_merges():
    """Two scans over one sequence: the ONNX mode's rewrites merge them into one Scan."""
    from pytensor.scan.op import Scan

    from ptonnx.mode import onnx_mode

    x = pt.dvector("x")
    a = scan(lambda v, acc: acc + v, sequences=[x], outputs_info=[pt.zeros(())])
    b = scan(lambda v, acc: acc * 0.5 + v * v, sequences=[x], outputs_info=[pt.ones(())])
    rewritten = pytensor.function([x], [a, b], mode=onnx_mode()).maker.fgraph
    assert sum(isinstance(node.op, Scan) for node in rewritten.apply_nodes) == 1
    check_like_pytensor([x], [a, b], [np.array([1.0, np.nan, -2.0, 3.0, 1e308, 1e308])])


def test_nested_scans():
    M = pt.dmatrix("M")

    def row_total(row):
        return scan(lambda a, acc: acc + a * a, sequences=[row], outputs_info=[pt.zeros(())])[-1]

    totals = scan(row_total, sequences=[M])
    for shape in [(3, 5), (0, 4), (2, 1)]:
        check_like_pytensor([M], [totals], [np.resize(EDGES, shape).copy()])


def test_a_body_with_indexing_reductions_switch_and_special_functions():
    X, k = pt.dmatrix("X"), pt.lscalar("k")

    def step(row, acc, k_):
        picked = row[k_] + row[-1]
        mass = pt.switch(row > 0, pt.gammaln(pt.abs(row) + 1), pt.erf(row)).sum()
        return acc + picked * mass

    ys = scan(step, sequences=[X], outputs_info=[pt.zeros(())], non_sequences=[k])
    rng = np.random.default_rng(1)
    check_like_pytensor([X, k], [ys], [rng.normal(size=(5, 4)), np.int64(1)])
    check_like_pytensor([X, k], [ys], [rng.normal(size=(5, 4)), np.int64(9)])  # out of bounds, as in PyTensor


def test_float32_state_and_int_counter():
    x = pt.fvector("x")
    counts, sums = scan(lambda a, c, s_: (c + 1, s_ + a), sequences=[x],
                        outputs_info=[pt.constant(np.int32(0)), pt.constant(np.float32(0))])
    check_like_pytensor([x], [counts, sums], [np.array([1.5, np.inf, -3.0, 1e-45], np.float32)])


def test_negative_and_short_step_counts_fail_as_in_pytensor():
    steps, x0, seq = pt.iscalar("steps"), pt.dscalar("x0"), pt.dvector("seq")
    ys = scan(lambda x: x + 1, outputs_info=[x0], n_steps=steps)
    check_like_pytensor([steps, x0], [ys], [np.int32(-2), np.float64(1.0)])
    zs = scan(lambda a, x: x + a, sequences=[seq], outputs_info=[x0], n_steps=steps)
    check_like_pytensor([steps, x0, seq], [zs], [np.int32(4), np.float64(1.0), np.arange(2.0)])


def test_shared_variables_updated_by_a_scan_in_the_onnx_mode():
    """`updates` of a scan: the shared variable's new value is written back after each call."""
    x = pt.dvector("x")

    def build(mode):
        state = pytensor.shared(np.array([1.0, -2.0]), name="state")
        ys, updates = pytensor.scan(lambda a: (state * a).sum(), sequences=[x], return_updates=True)
        updates[state] = state * 2 + ys.sum()
        return state, pytensor.function([x], ys, updates=updates, mode=mode)

    state, f = build("ONNX")
    reference_state, g = build(REFERENCE_MODE)
    for values in (np.arange(1.0, 4.0), np.array([np.inf, 1.0]), np.array([])):
        assert_same(f(values), g(values), "scan output")
        assert_same(state.get_value(), reference_state.get_value(), "updated shared variable")


def test_a_shared_variable_the_scan_body_updates_in_the_onnx_mode():
    """An update made inside the step function: an untraced sit-sot carried by the Loop."""
    x = pt.dvector("x")

    def build(mode):
        state = pytensor.shared(np.array([1.0, -2.0, 0.5]), name="state")

        def step(a):
            new = state * 0.5 + a
            return new.sum(), {state: new}

        ys, updates = pytensor.scan(step, sequences=[x], return_updates=True)
        return state, pytensor.function([x], ys, updates=updates, mode=mode)

    state, f = build("ONNX")
    reference_state, g = build(REFERENCE_MODE)
    # (no empty sequence: PyTensor's own update reads the last step's value, which it has not)
    for values in (np.arange(1.0, 4.0), np.array([np.nan, 1.0]), np.array([1e308, 1e308])):
        assert_same(f(values), g(values), "scan output")
        assert_same(state.get_value(), reference_state.get_value(), "updated shared variable")


def test_random_draws_inside_a_scan():
    """A generator read by every step draws the same numbers each step (as PyTensor's Scan); one
    the steps carry draws anew each step: normal draws, both onnxruntime levels alike."""
    x = pt.dvector("x")
    srng = pytensor.shared(np.random.default_rng(0))
    same = scan(lambda a, r: a + pt.random.normal(rng=r), sequences=[x], non_sequences=[srng])
    (got,) = ptonnx.compile_function([x], [same])(np.arange(5.0), keys.key(1))
    np.testing.assert_allclose(got - np.arange(5.0), got[0], rtol=0, atol=1e-15)  # x + z - x: one rounding of 4 + z
    reference = pytensor.function([x], same - x)(np.zeros(5))
    assert np.all(reference == reference[0])

    def step(a, r):
        nxt, z = pt.random.normal(rng=r).owner.outputs
        return a + z, nxt

    carried, _ = scan(step, sequences=[x], outputs_info=[None, srng])
    cm = ptonnx.compile_function([x], [carried])
    draws = run_at_every_level(cm, np.zeros(4000), keys.key(2))
    first, second = (out[0] for out in draws.values())
    np.testing.assert_array_equal(first, second)
    assert len(np.unique(first)) == first.size
    assert st.cramervonmises(first, "norm").pvalue > 1e-3


def test_the_loop_is_one_onnx_loop_and_invariants_leave_it():
    """`exp(W) * 2` reads only the non-sequence: hoisted out of the body, computed once."""
    X, W, h0 = pt.dmatrix("X"), pt.dmatrix("W"), pt.dvector("h0")
    # (a body with no Exp of its own: tanh is decomposed into one)
    hs = scan(lambda x, h, w: pt.maximum(pt.dot(pt.exp(w) * 2, h) + x, 0.0), sequences=[X], outputs_info=[h0], non_sequences=[W])
    cm = ptonnx.compile_function([X, W, h0], [hs])
    onnx.checker.check_model(cm.model, full_check=True)
    assert [n.op_type for n in cm.model.graph.node].count("Loop") == 1
    (loop,) = [n for n in cm.ir if n.op == "Loop"]
    assert "Exp" not in loop.attrs["body"].op_counts() and "Exp" in cm.ir.op_counts()
    assert cm.report.records[[r.name for r in cm.report.records].index("hoist_loop_invariants")].rewrites >= 2
    rng = np.random.default_rng(2)
    values = [rng.normal(size=(4, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)]
    expected = pytensor.function([X, W, h0], hs)(*values)
    for level, (got,) in run_at_every_level(cm, *values).items():
        assert_same(got, expected, level)
