"""lifting/linalg_sylvester.py: SolveSylvester (solve_sylvester, solve_continuous_lyapunov), alone or
under Blockwise, lifts to one batched IR SolveSylvester node (not PyTensor's Schur and TRSYL inner
graph, nor a Loop over the batch), with run-time shape checks only where the types leave them open;
SolveBilinearDiscreteLyapunov is inlined (Solves around a SolveSylvester). `interpret` (PyTensor's
Bartels-Stewart through SciPy) against PyTensor."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from tests.lifting.helpers import check_lift, ops
from tests.linalg.helpers import normwise


def _problem(m, n, batch=()):
    rng = np.random.default_rng(m + n)
    a = rng.normal(size=batch + (m, m)) / np.sqrt(m) + 3 * np.eye(m)
    b = rng.normal(size=batch + (n, n)) / np.sqrt(n) + 2 * np.eye(n)
    return [a, b, rng.normal(size=batch + (m, n))]


def _close(actual, expected, context=""):
    normwise(actual, expected, context, n=64)


def test_solve_sylvester_is_one_batched_node():
    a3, b, c = pt.dtensor3("a3"), pt.dmatrix("b"), pt.dmatrix("c")
    a, bb, cc = _problem(4, 3, (2,))
    g = check_lift([a3, b, c], [pt.linalg.solve_sylvester(a3, b, c)], [a, bb[0], cc[0]], compare_with=_close)
    assert ops(g).count("SolveSylvester") == 1 and "Loop" not in ops(g) and "Check" in ops(g)


def test_static_shapes_need_no_check_and_lyapunov_is_sylvester_of_a_and_its_transpose():
    a, q = pt.tensor("a", shape=(3, 3), dtype="float64"), pt.tensor("q", shape=(3, 3), dtype="float64")
    x, y = _problem(3, 3)[::2]
    g = check_lift([a, q], [pt.linalg.solve_continuous_lyapunov(a, q)], [x, y + y.T], compare_with=_close)
    assert ops(g).count("SolveSylvester") == 1 and "Check" not in ops(g)


def test_bilinear_discrete_lyapunov_is_inlined():
    """SolveBilinearDiscreteLyapunov: PyTensor's Cayley transform (three Solves) around SolveSylvester."""
    a, q = pt.dmatrix("a"), pt.dmatrix("q")
    rng = np.random.default_rng(5)
    g = check_lift([a, q], [pt.linalg.solve_discrete_lyapunov(a, q)], [rng.normal(size=(4, 4)) * 0.2, np.eye(4)],
                   compare_with=_close)
    assert ops(g).count("SolveSylvester") == 1 and ops(g).count("Solve") == 3
