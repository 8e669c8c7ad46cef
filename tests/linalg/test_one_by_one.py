"""SLogDet and MatrixInverse of matrices the graph fixes at 1 x 1 (a univariate Kalman filter's
innovation covariance): closed forms, NumPy's numbers at every special value, no Loop or If;
a 1 x 1 matrix the type does not fix still takes the general road, with the same numbers."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx.errors import CheckFailedError
from tests.conftest import check_like_pytensor
from tests.linalg.test_linalg import _slogdet_op

SPECIALS = np.array([2.5, -3.0, 0.0, -0.0, 5e-324, -1e308, 1e-300, np.inf, -np.inf, np.nan])


def _ops(model) -> set[str]:
    found = set()
    for graph in [model.graph, *(a.g for n in model.graph.node for a in n.attribute if a.g.node)]:
        found |= {n.op_type for n in graph.node}
    return found


@pytest.mark.parametrize("fixed", [True, False])
def test_slogdet_of_one_by_one_matrices(fixed):
    """Each special value as a batch entry: sign 0 and -inf for ±0, sign + for NaN (NumPy's)."""
    x = pt.tensor3("x", shape=(None, 1, 1) if fixed else (None, None, None), dtype="float64")
    from pytensor.tensor.blockwise import Blockwise

    outs = list(Blockwise(_slogdet_op(pt.dmatrix("m"))[0].owner.op)(x))
    check_like_pytensor([x], outs, [SPECIALS.reshape(-1, 1, 1)], more_values=[[np.zeros((0, 1, 1))]])
    if fixed:
        assert not _ops(ptonnx.compile_function([x], outs).model) & {"If", "Loop"}


def test_slogdet_of_a_single_fixed_matrix():
    x = pt.tensor("x", shape=(1, 1), dtype="float64")
    for value in SPECIALS:
        check_like_pytensor([x], list(_slogdet_op(x)), [np.array([[value]])])


def test_inverse_of_one_by_one_matrices():
    """1 / a, NaN for NaN, 0 for ±inf (signed); a zero raises NumPy's LinAlgError, as PyTensor."""
    x = pt.tensor3("x", shape=(None, 1, 1), dtype="float64")
    finite_or_not = SPECIALS[(SPECIALS != 0)].reshape(-1, 1, 1)
    check_like_pytensor([x], [pt.linalg.inv(x)], [finite_or_not], more_values=[[np.zeros((0, 1, 1))]])
    for zero in (0.0, -0.0):
        raised = check_like_pytensor([x], [pt.linalg.inv(x)], [np.array([[[2.0]], [[zero]]])])
        assert isinstance(raised, np.linalg.LinAlgError)
        with pytest.raises(CheckFailedError, match="Singular matrix"):
            ptonnx.compile_function([x], [pt.linalg.inv(x)])(np.array([[[zero]]]))
    assert not _ops(ptonnx.compile_function([x], [pt.linalg.inv(x)]).model) & {"If", "Loop"}


def test_gradient_of_log_det_through_a_scan():
    """What a univariate Kalman filter's log-likelihood differentiates: log det F (SLogDet after
    PyTensor's rewrites) and inv(F) of a 1 x 1 F at every step of a Scan."""
    import pytensor

    s = pt.dvector("s")

    def step(v, acc):
        f = pt.reshape(v * v + 1.0, (1, 1))
        return acc + pt.log(pt.linalg.det(f)) + pt.linalg.inv(f)[0, 0]

    total = pytensor.scan(step, sequences=[s], outputs_info=[pt.constant(0.0, dtype="float64")], return_updates=False)[-1]
    check_like_pytensor([s], [total, pytensor.grad(total, s)], [np.array([0.5, -2.0, 1e-160, 3e150])])
