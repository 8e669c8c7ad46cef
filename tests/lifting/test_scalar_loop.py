"""lifting/scalar_loop.py: PyTensor's ScalarLoop (in an Elemwise; the loops of the gammainc,
betainc and hyp2f1 gradients, Grad2F1Loop among them) as the IR's Loop stepping every element at
once: per-element trip counts and stopping, mixed-dtype state, broadcast constants, a NaN that
settles an element early, and PyTensor's refusal of a negative count in a for loop."""

from __future__ import annotations

import numpy as np
import pytensor.scalar as ps
import pytensor.tensor as pt
import pytest
from pytensor.scalar.loop import ScalarLoop
from pytensor.tensor.elemwise import Elemwise

from ptonnx.ir.core import bodies
from tests.lifting.helpers import all_ops, check_lift, ops, raises_check

EDGES = np.array([0.0, -0.0, 1.0, -1.5, 5e-324, -2.2e-308, 1e-300, 1e300, -1.7e308, np.inf, -np.inf, np.nan, 7.25])


def _geometric_until():
    """x <- x * c + 1 until x > 100 (a while loop: each element stops on its own)."""
    x, c = ps.float64("x"), ps.float64("c")
    new = x * c + 1
    return ScalarLoop(init=[x], update=[new], constant=[c], until=new > 100)


def _harmonic_counter():
    """k <- k + 1, s <- s + a / (k + 1): a for loop with an int32 and a float64 state."""
    k, s, a = ps.int32("k"), ps.float64("s"), ps.float64("a")
    return ScalarLoop(init=[k, s], update=[k + 1, s + a / ps.cast(k + 1, "float64")], constant=[a])


def _loop(g):
    [loop] = [n for n in g if n.op == "Loop"]
    return loop


def test_a_while_loop_stops_each_element_on_its_own():
    steps, x, c = pt.iscalar("steps"), pt.dvector("x"), pt.dvector("c")
    out, done = Elemwise(_geometric_until())(steps, x, c)
    xs = np.concatenate([EDGES, EDGES[::-1]])
    cs = np.concatenate([np.full(EDGES.size, 1.1), EDGES])
    g = check_lift([steps, x, c], [out, done], *([np.int32(n), xs, cs] for n in (0, 1, 7, 60, -3)))
    assert ops(g).count("Loop") == 1 and "Mul" in {n.op for n in bodies(_loop(g))[0]}


def test_a_while_loop_broadcasts_its_inputs_and_counts():
    steps, x, c = pt.ivector("steps"), pt.dmatrix("x"), pt.dscalar("c")
    out, done = Elemwise(_geometric_until())(steps, x, c)
    check_lift([steps, x, c], [out, done], [np.array([0, 5, 500], np.int32), np.array([[0.5, -0.0, 99.0]] * 2), np.float64(2.0)],
               [np.zeros(3, np.int32), np.zeros((0, 3)), np.float64(2.0)])


def test_a_for_loop_with_mixed_state_and_per_element_counts():
    steps, k, s, a = pt.ivector("steps"), pt.ivector("k"), pt.dmatrix("s"), pt.dscalar("a")
    o1, o2 = Elemwise(_harmonic_counter())(steps, k, s, a)
    # (PyTensor's Python evaluation raises OverflowError for k + 1 beyond int8 (its constant 1 is int8): the C code does not)
    values = [np.array([0, 3, 40], np.int32), np.array([0, 100, -7], np.int32),
              np.array([[0.0, -0.0, 1.5], [np.inf, np.nan, -3.0]]), np.float64(2.0)]
    g = check_lift([steps, k, s, a], [o1, o2], values)
    assert _loop(g).attrs["n_carried"] == 2


def test_a_negative_count_of_a_for_loop_is_refused_as_pytensor():
    steps, k, s, a = pt.ivector("steps"), pt.ivector("k"), pt.dvector("s"), pt.dscalar("a")
    outs = Elemwise(_harmonic_counter())(steps, k, s, a)
    g = check_lift([steps, k, s, a], list(outs), [np.array([2, -1], np.int32), np.zeros(2, np.int32), np.zeros(2), np.float64(1)])
    raises_check(g, [np.array([2, -1], np.int32), np.zeros(2, np.int32), np.zeros(2), np.float64(1)], ValueError,
                 "ScalarLoop does not have a termination condition")


def test_a_nan_that_settles_an_element_leaves_the_loop():
    """x <- x * c + 1 until x > 100: a NaN x or c never stops, and stays NaN: the Loop's `keep going`
    also reads the NaN shortcut (PyTensor runs such an element to n_steps)."""
    steps, x, c = pt.iscalar("steps"), pt.dvector("x"), pt.dvector("c")
    out, done = Elemwise(_geometric_until())(steps, x, c)
    g = check_lift([steps, x, c], [out, done], [np.int32(200), np.array([np.nan, 1.0, 2.0]), np.array([1.5, np.nan, 0.5])])
    assert "IsNaN" in {n.op for n in bodies(_loop(g))[0]}


@pytest.mark.parametrize("fn", [pt.gammainc, pt.gammaincc])
def test_the_gradient_loops_of_the_incomplete_gamma_functions(fn):
    k, x = pt.dvector("k"), pt.dvector("x")
    grad = pt.grad(fn(k, x).sum(), k)
    points = np.array([(0.5, 0.1), (1.0, 1.0), (3.0, 2.5), (2.0, 0.0), (1.0, np.inf), (2.0, 5e-324), (0.0, 1.0)]).T
    g = check_lift([k, x], [grad], list(points))
    assert "Loop" in all_ops(g)


def test_grad2f1_loop_of_the_hyp2f1_gradient():
    a, b, c, z = pt.dvector("a"), pt.dvector("b"), pt.dvector("c"), pt.dvector("z")
    grad = pt.grad(pt.hyp2f1(a, b, c, z).sum(), a)
    g = check_lift([a, b, c, z], [grad], [np.array([0.5, 1.0]), np.array([1.5, 2.0]), np.array([2.0, 3.5]), np.array([0.3, -0.5])])
    assert "Loop" in all_ops(g)
