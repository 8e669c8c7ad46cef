"""lifting/linalg_eigen.py: Eigh and Eigvalsh, alone or under Blockwise, lift to one batched IR node
each (no Loop over the batch); PyTensor 2.38's EighGrad and EigvalshGrad lift to the formulas their
perform computes. `interpret` (LAPACK through SciPy) against PyTensor, eigenvectors through v * v
(blind to their signs), and PyTensor's errors: SciPy's check_finite (ValueError, the unread triangle
too), NumPy's eigh (LinAlgError for inf or NaN in the triangle it reads), a b that is not positive
definite (LinAlgError, raised by the IR op)."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt

from tests.lifting.helpers import all_ops, check_lift, lifted, ops
from tests.linalg.test_eigh import eigh, eigvalsh

PT3 = not pytensor.__version__.startswith("2.")
if PT3:
    from pytensor.tensor.linalg import Eigh, Eigvalsh
else:  # 2.38: Eigh is NumPy's (a subclass of Eig), Eigvalsh SciPy's; their gradients are ops of their own
    from pytensor.tensor.nlinalg import Eigh, EighGrad  # noqa: F401  (named: lifting registers it)
    from pytensor.tensor.slinalg import Eigvalsh, EigvalshGrad  # noqa: F401


def _close(actual, expected, context=""):
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-10, err_msg=context)


def _symmetric(n, seed=0):
    g = np.random.default_rng(seed).normal(size=(n, n))
    return g + g.T


def _spd(n, seed=0):
    g = np.random.default_rng(seed).normal(size=(n, n))
    return g @ g.T + n * np.eye(n)


def test_eigh_lifts_to_one_node_and_reads_one_triangle():
    x = pt.dmatrix("x")
    for lower in (True, False):
        w, v = eigh(x, lower)
        assert isinstance(getattr(w.owner.op, "core_op", w.owner.op), Eigh)
        a = _symmetric(5)
        unread = a + (np.triu(np.full((5, 5), np.nan), 1) if lower else np.tril(np.full((5, 5), np.nan), -1))
        nan_read = a.copy()
        nan_read[3, 1] = nan_read[1, 3] = np.nan
        g = check_lift([x], [w, v * v], [a], [unread], [nan_read], [np.zeros((0, 0))], compare_with=_close)
        assert ops(g).count("Eigh") == 1 and "Loop" not in all_ops(g)


def test_eigvalsh_and_the_generalised_problem():
    """(A b that is not positive definite raises LinAlgError from the Eigh/Eigvalsh node itself, not
    from a Check lifting adds: tests/linalg/test_eigh.py and tests/decompositions/test_linalg_eigen.py.)"""
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    for lower in (True, False):
        e = eigvalsh(a, lower=lower)
        assert isinstance(getattr(e.owner.op, "core_op", e.owner.op), Eigvalsh)
        g = check_lift([a], [e], [_symmetric(4)], [_symmetric(4) + np.triu(np.full((4, 4), np.nan), 1)], compare_with=_close)
        assert ops(g).count("Eigvalsh") == 1
        e2 = eigvalsh(a, b, lower)
        check_lift([a, b], [e2], [_symmetric(4), _spd(4)], [_symmetric(4), _spd(4) + np.triu(np.full((4, 4), 9.0), 1) * lower + np.tril(np.full((4, 4), 9.0), -1) * (not lower)],
                   compare_with=_close)


def test_blockwise_lifts_to_one_batched_node():
    x = pt.dtensor3("x")
    if PT3:
        outs = [*pt.linalg.eigh(x), pt.linalg.eigvalsh(x)]
    else:
        from pytensor.tensor.blockwise import Blockwise

        outs = [*Blockwise(Eigh("L"), signature="(m,m)->(m),(m,m)")(x)]
    g = lifted([x], outs)
    assert "Loop" not in all_ops(g) and {"Eigh"} <= set(ops(g))


def test_gradients_lift():
    """PyTensor 3 builds them from Eigh itself; 2.38 from EighGrad and EigvalshGrad (NumPy)."""
    x, b = pt.dmatrix("x"), pt.dmatrix("b")
    a = _symmetric(5, seed=2) + np.diag([0.0, 5, 10, 15, 20])
    w, v = eigh(x)
    cost = (v**2 * np.arange(25.0).reshape(5, 5)).sum() + (w * np.arange(5.0)).sum()
    g = check_lift([x], [pytensor.grad(cost, x)], [a], compare_with=_close)
    if not PT3:
        assert "Eigh" in ops(g)
        w_up, v_up = eigh(x, lower=False)
        check_lift([x], [pytensor.grad((v_up**2 * np.arange(25.0).reshape(5, 5)).sum() + w_up.sum(), x)], [a],
                   compare_with=_close)
    e = eigvalsh(x, b)
    grads = pytensor.grad((e * np.arange(1.0, 6.0)).sum(), [x, b])
    check_lift([x, b], grads, [a, _spd(5)], compare_with=_close)
