"""lifting/linalg_orthogonal.py: QR, SVD and MatrixPinv, alone or under Blockwise, lift to one batched
IR node each (no Loop over the batch); `interpret` (LAPACK through NumPy and SciPy) against
PyTensor. QR's "r" mode is the complete QR's R, SVD with compute_uv=False is SingularValues (what
pt.linalg.norm with ord 2 and "nuc" builds on); QR with pivoting or mode "raw" is refused by name."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

from ptonnx.errors import UnsupportedOpError

from tests.lifting.helpers import check_lift, lifted, ops

try:
    from pytensor.tensor.linalg import QR, SVD, MatrixPinv
except ImportError:
    from pytensor.tensor.nlinalg import SVD, MatrixPinv
    from pytensor.tensor.slinalg import QR


def _close(actual, expected, context=""):
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12, err_msg=context)


def test_qr_modes_lift_to_one_qr_node_each():
    x = pt.dmatrix("x")
    outs = [*pt.linalg.qr(x), *pt.linalg.qr(x, mode="economic"), pt.linalg.qr(x, mode="r")]
    assert all(isinstance(o.owner.op.core_op, QR) for o in outs)
    a = np.random.default_rng(0).normal(size=(5, 3))
    g = check_lift([x], outs, [a], [a.T], compare_with=_close)
    assert ops(g).count("QR") == 3 and "Loop" not in ops(g)


def test_svd_and_pinv_lift_to_batched_nodes():
    x = pt.dtensor3("x")
    outs = [*pt.linalg.svd(x, full_matrices=False), pt.linalg.pinv(x)]
    assert isinstance(outs[0].owner.op.core_op, SVD) and isinstance(outs[-1].owner.op.core_op, MatrixPinv)
    g = lifted([x], outs)
    assert ops(g).count("SVD") == 1 and ops(g).count("MatrixPinv") == 1 and "Loop" not in ops(g)


def test_singular_values_and_norms():
    x = pt.dmatrix("x")
    outs = [pt.linalg.svd(x, compute_uv=False), pt.linalg.norm(x, ord=2), pt.linalg.norm(x, ord="nuc"), pt.linalg.pinv(x)]
    a = np.random.default_rng(1).normal(size=(4, 6))
    g = check_lift([x], outs, [a], compare_with=_close)
    assert "SingularValues" in ops(g) and "SVD" not in ops(g)


@pytest.mark.parametrize("build", [lambda x: pt.linalg.qr(x, pivoting=True)[0], lambda x: pt.linalg.qr(x, mode="raw")[0]])
def test_qr_pivoting_and_raw_are_refused(build):
    x = pt.dmatrix("x")
    with pytest.raises(UnsupportedOpError, match="QR"):
        lifted([x], [build(x)])
