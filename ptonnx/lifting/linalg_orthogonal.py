"""QR, SVD and MatrixPinv, alone or under Blockwise, to one batched IR node each.

QR's modes: "full" and "economic" are the IR's complete and reduced QR; "r" is the complete R
(SciPy's (m, n) R, which PyTensor returns). "raw" (LAPACK's packed reflectors) and column
pivoting (geqp3) are refused by name. SVD with compute_uv=False is `SingularValues` (no vectors
accumulated); `pt.linalg.norm` with ord 2, -2 and "nuc" is built from it.
"""

from __future__ import annotations

from ptonnx.errors import UnsupportedOpError
from ptonnx.lifting.dispatch import lifts_batched
from ptonnx.lifting.linalg_solvers import core_op

try:  # PyTensor 3 moved them; 2.38 has them in slinalg and nlinalg
    from pytensor.tensor.linalg import QR, SVD, MatrixPinv
except ImportError:
    from pytensor.tensor.nlinalg import SVD, MatrixPinv
    from pytensor.tensor.slinalg import QR


def _input(ctx, node):
    return ctx.cast(ctx.value(node.inputs[0]), node.outputs[0].type.dtype)


@lifts_batched(QR)
def lift_qr(ctx, node):
    op = core_op(node)
    if op.pivoting:
        raise UnsupportedOpError(op, node.outputs[0], (), reason=(
            "QR with column pivoting (LAPACK geqp3) is not supported; use pivoting=False"))
    if op.mode not in ("full", "economic", "r"):
        raise UnsupportedOpError(op, node.outputs[0], (), reason=(
            f"QR mode {op.mode!r} (LAPACK's packed Householder reflectors) is not supported; use 'full', 'economic' or 'r'"))
    mode = "reduced" if op.mode == "economic" else "complete"
    q, r = ctx.builder.node("QR", [_input(ctx, node)], {"mode": mode}).outputs
    return [r] if op.mode == "r" else [q, r]


@lifts_batched(SVD)
def lift_svd(ctx, node):
    op = core_op(node)
    a = _input(ctx, node)
    if not op.compute_uv:
        return [ctx.op("SingularValues", a, name=node.outputs[0].name)]
    return list(ctx.builder.node("SVD", [a], {"full_matrices": bool(op.full_matrices)}).outputs)


@lifts_batched(MatrixPinv)
def lift_pinv(ctx, node):
    return [ctx.op("MatrixPinv", _input(ctx, node), hermitian=bool(core_op(node).hermitian), name=node.outputs[0].name)]
