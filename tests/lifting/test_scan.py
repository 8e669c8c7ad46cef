"""lifting/scan.py: Scan as the IR's Loop, flavour by flavour (sit-sot, mit-sot, nit-sot, mit-mot,
sequences with taps, non-sequences, while loops, outputs nothing reads, the save-memory buffers of
a rewritten graph), its run-time checks (negative or too long step counts), and random draws in
a body refused. (Untraced sit-sots come only from random generators, which are refused.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.scan.utils import until

from ptonnx.ir.core import bodies
from ptonnx.api import function_graph
from ptonnx.lifting import lift
from tests.lifting.helpers import all_ops, check_lift, lazy_reference, ops, raises_check

warnings.filterwarnings("ignore", message="Scan return signature", category=DeprecationWarning)

EDGES = np.array([0.0, -0.0, 1.5, -2.0, 5e-324, -2.2e-308, 1e-300, 1e300, -1.7e308, np.inf, -np.inf, np.nan, 7.25])


#: PyTensor's Python VM: Scan's inner function runs in it too (Scan's default mode compiles C, and a
#: gradient's mit-mot needs a VM)
PYTHON_VM = lazy_reference()


def scan(*args, **kwargs):
    return pytensor.scan(*args, return_updates=False, mode=PYTHON_VM, **kwargs)


def check(*args, **kwargs):
    return check_lift(*args, mode=PYTHON_VM, **kwargs)


def _loop(g):
    [loop] = [n for n in g if n.op == "Loop"]
    return loop


def test_sit_sot_over_a_sequence():
    x = pt.dvector("x")
    ys = scan(lambda a, acc: acc * 0.5 + a, sequences=[x], outputs_info=[pt.zeros(())])
    g = check([x], [ys, ys.sum()], [EDGES], [EDGES[:1]], [np.zeros(0)])
    assert _loop(g).attrs["n_carried"] == 1 and _loop(g).attrs["n_scan"] == 1


@pytest.mark.parametrize("taps", [(-2, -1), (-3, -1), (-3,)])
def test_mit_sot(taps):
    steps, init = pt.iscalar("steps"), pt.dmatrix("init")
    ys = scan(lambda *args: sum(a * (k + 1.5) for k, a in enumerate(args)) / len(args),
              outputs_info=[dict(initial=init, taps=list(taps))], n_steps=steps)
    start = np.arange(2.0 * -min(taps)).reshape(-min(taps), 2) - 1.25
    start[0, 0] = np.nan
    check([steps, init], [ys], *([np.int32(n), start] for n in (0, 1, 6)))


def test_nit_sots_and_non_sequences():
    X, W, h0 = pt.dmatrix("X"), pt.dmatrix("W"), pt.dvector("h0")

    def step(x, h, w):
        new = pt.tanh(pt.dot(w, h) + x)
        return new.sum(), new, (new * x).max()

    total, hs, peak = scan(step, sequences=[X], outputs_info=[None, h0, None], non_sequences=[W])
    rng = np.random.default_rng(0)
    w0, h = rng.normal(size=(3, 3)), np.array([0.1, np.nan, -0.0])
    g = check([X, W, h0], [total, hs, peak], [rng.normal(size=(4, 3)), w0, h], [np.zeros((0, 3)), w0, h])
    assert _loop(g).attrs["n_scan"] == 3


def test_no_step_stacks_rows_of_the_sequence_width():
    """Zero steps give (0, width), the width a symbolic dim of the input: PyTensor's Scan with its
    rewrites (its default modes: the buffer sized by its infer_shape), and np.stack of no row of
    that width; its unrewritten Scan.perform gives (0, 0) (docs/ir.md)."""
    from pytensor.compile.mode import Mode

    m = pt.imatrix("m")
    rows = scan(lambda r: r * 3, sequences=[m])
    rewritten = Mode(linker=PYTHON_VM.linker, optimizer="fast_run")
    check_lift([m], [rows], [np.array([[1, -2], [2**31 - 1, -(2**31)]], np.int32)],
               *([np.zeros((0, w), np.int32)] for w in (0, 2, 5)), mode=rewritten)


def test_sequences_with_past_and_future_taps_going_backwards():
    x, y = pt.dvector("x"), pt.dvector("y")
    zs = scan(lambda a, b, c, d, acc: acc * 0.5 + a * b - c + d, sequences=[dict(input=x, taps=[-1, 0, 2]), y],
              outputs_info=[pt.zeros(())], go_backwards=True)
    check([x, y], [zs], [EDGES[:7] / 3, np.linspace(-1, 1, 7)], [np.arange(3.0), np.arange(3.0)])


@pytest.mark.parametrize("start", [1.0, 60.0, np.nan])
def test_while_loops(start):
    """until(x > 50): stops at the first step (60), runs to n_steps (NaN), or in between."""
    s, steps = pt.dscalar("s"), pt.iscalar("steps")
    ws = scan(lambda acc: (acc * 2, until(acc * 2 > 50)), outputs_info=[s], n_steps=steps)
    g = check([s, steps], [ws, ws.shape[0]], *([np.float64(start), np.int32(n)] for n in (0, 1, 30)))
    assert "Not" in {n.op for n in bodies(_loop(g))[0]}


def test_gradients_through_scans_are_mit_mots():
    x, s, init = pt.dvector("x"), pt.dscalar("s"), pt.dvector("init")
    ys = scan(lambda a, b, acc2: a * pt.sin(acc2) + b * s, sequences=[x], outputs_info=[dict(initial=init, taps=[-2, -1])])
    cost = (ys**2).sum() + ys[-1]
    grads = pytensor.grad(cost, [x, s, init])
    g = check([x, s, init], [cost, *grads], [np.linspace(-1, 2, 6), np.float64(0.3), np.array([0.5, -1.0])],
                   [np.array([np.inf]), np.float64(-0.0), np.array([0.5, -1.0])])
    assert ops(g).count("Loop") == 2


def test_an_output_nothing_reads_is_not_stacked():
    x = pt.dvector("x")
    a, b = scan(lambda v, p, q: (p + v, q * v), sequences=[x], outputs_info=[pt.zeros(()), pt.ones(())])
    g = check([x], [a], [EDGES])
    assert _loop(g).attrs["n_scan"] == 1


def test_the_save_memory_buffers_of_a_rewritten_graph():
    """PyTensor keeps only the rows that are read (here the last): the window is the buffer."""
    x, x0 = pt.dvector("x"), pt.dvector("x0")
    ys = scan(lambda a, acc: acc * 0.5 + a, sequences=[x], outputs_info=[x0[0]])
    zs = scan(lambda acc: (acc * 2, until(pt.all(acc > 10))), outputs_info=[x0], n_steps=5)
    g = check([x, x0], [ys[-1], zs[-2:]], [EDGES, np.array([1.0, -3.0])], [EDGES[:1], np.array([np.nan, 0.5])], rewritten=True)
    assert "Loop" in all_ops(g)


def test_nested_scans():
    m = pt.dmatrix("m")
    totals = scan(lambda row: scan(lambda a, acc: acc + a * a, sequences=[row], outputs_info=[pt.zeros(())])[-1], sequences=[m])
    g = check([m], [totals], [np.resize(EDGES, (3, 4))], [np.zeros((0, 2))], [np.zeros((2, 0))])
    assert "Loop" in {n.op for n in bodies(_loop(g))[0]}


def test_negative_and_too_long_step_counts_fail_as_pytensor():
    steps, x0, seq = pt.iscalar("steps"), pt.dscalar("x0"), pt.dvector("seq")
    ys = scan(lambda: x0 * 2, n_steps=steps)  # a nit-sot: no buffer of n_steps rows is allocated before the Scan
    g = check([steps, x0], [ys], [np.int32(-2), np.float64(1.0)], [np.int32(2), np.float64(1.0)])
    raises_check(g, [np.int32(-2), np.float64(1.0)], IndexError, "Scan was asked to run for negative number of step(s)")
    zs = scan(lambda a, x: x + a, sequences=[seq], outputs_info=[x0], n_steps=steps)
    g = check([steps, x0, seq], [zs], [np.int32(4), np.float64(1.0), np.arange(2.0)], [np.int32(2), np.float64(1.0), np.arange(2.0)],
              [np.int32(-1), np.float64(1.0), np.arange(2.0)])
    raises_check(g, [np.int32(4), np.float64(1.0), np.arange(2.0)], ValueError, "a sequence is shorter")


def test_random_draws_in_a_body_lift_with_the_generator_as_a_key():
    """A generator the body only reads is an invariant key of the Loop (every step draws the
    same numbers, as PyTensor's Scan does); the draw is the body's random op."""
    x = pt.dvector("x")
    srng = pytensor.shared(np.random.default_rng(0))
    ys = scan(lambda a, r: a + pt.random.normal(rng=r), sequences=[x], non_sequences=[srng])
    g = lift(function_graph([x], [ys]))
    (loop,) = [n for n in g if n.op == "Loop"]
    assert "RandomNormal" in loop.attrs["body"].op_counts()
