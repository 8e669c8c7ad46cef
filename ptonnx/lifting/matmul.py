"""Matrix products: Dot, the `Matmul` Blockwise (and other Blockwises), and the BLAS forms a compiled function holds.

`a @ b` in a user graph is `Blockwise(Dot)` (named "Matmul"); a function
compiled with `fast_run` rewrites it to `Dot22`, `Dot22Scalar`, `BatchedDot`
(3-D, and 4-D reshaped to 3-D), `Gemv`, `Gemm` or `Ger`. All become the IR's
`MatMul` (NumPy matmul semantics) plus `Mul`/`Add` for their scalars. A
`beta` of 0 means the accumulator is ignored (BLAS), so the `AllocEmpty` that
feeds it lifts to an unused zero constant.
"""

from __future__ import annotations

import numpy as np
from pytensor.tensor.blas import BatchedDot, Dot22, Dot22Scalar, Gemm, Gemv, Ger
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.math import Dot

from ptonnx.errors import UnsupportedOpError
from ptonnx.ir import Value
from ptonnx.lifting.blockwise import lift_batched
from ptonnx.lifting import linalg_eigen, linalg_orthogonal, linalg_schur, linalg_solvers, linalg_sylvester  # noqa: F401  (register them)
from ptonnx.lifting.dispatch import BATCHED, LIFTERS, lifts
from ptonnx.lifting.tensor import constant_array

#: Blockwise core ops ptonnx lifts, by class
BLOCKWISE_CORES = (Dot,)


def _is(ctx, var, number: float) -> bool:
    value = constant_array(ctx, var)
    return value is not None and value.size == 1 and float(value.reshape(())) == number


def _scale(ctx, value: Value, alpha_var, dtype: str) -> Value:
    """`value * alpha`, skipping a constant alpha of 1."""
    if _is(ctx, alpha_var, 1.0):
        return value
    return ctx.op("Mul", value, ctx.cast(ctx.value(alpha_var), dtype))


def _gemm_like(ctx, node, product: Value, alpha_var, acc_var=None, beta_var=None) -> list[Value]:
    """`alpha * product + beta * acc` as BLAS computes it: beta == 0 ignores acc, no beta means 1."""
    out = node.outputs[0]
    dtype = out.type.dtype
    result = _scale(ctx, product, alpha_var, dtype)
    if acc_var is not None and not (beta_var is not None and _is(ctx, beta_var, 0.0)):
        acc = ctx.value(acc_var)
        result = ctx.op("Add", result, acc if beta_var is None else _scale(ctx, acc, beta_var, dtype))
    if result.producer is not None and result.name is None:
        result.name = out.name
    return [result]


@lifts(Dot, Dot22, BatchedDot)
def lift_dot(ctx, node):
    out = node.outputs[0]
    # PyTensor may pick an output dtype other than the promotion (floatX rules): compute in it.
    x, y = (ctx.cast(ctx.value(v), out.type.dtype) for v in node.inputs)
    return [ctx.op("MatMul", x, y, name=out.name)]


@lifts(Blockwise)
def lift_blockwise(ctx, node):
    """`a @ b` (a Dot core) batches as MatMul does; any other core op ptonnx lifts runs
    once per batch element in a Loop (`ptonnx.lifting.blockwise`)."""
    core = node.op.core_op
    if isinstance(core, BLOCKWISE_CORES):
        return lift_dot(ctx, node)
    if type(core) in BATCHED:
        return BATCHED[type(core)](ctx, node)
    try:
        return lift_batched(ctx, node)
    except UnsupportedOpError as exc:
        if exc.op is not core:
            raise
        supported = [c.__name__ for c in LIFTERS if c is not Blockwise]
        supported += [f"Blockwise{{{c.__name__}}}" for c in (*BLOCKWISE_CORES, *BATCHED)] + ["Blockwise of any of them"]
        raise UnsupportedOpError(node.op, node.outputs[0], supported, family="PyTensor ops") from None


@lifts(Dot22Scalar)
def lift_dot22_scalar(ctx, node):
    x, y, alpha = node.inputs
    product = ctx.op("MatMul", ctx.value(x), ctx.value(y))
    return _gemm_like(ctx, node, product, alpha)


@lifts(Gemv)
def lift_gemv(ctx, node):
    y, alpha, a, x, beta = node.inputs
    product = ctx.op("MatMul", ctx.value(a), ctx.value(x))
    return _gemm_like(ctx, node, product, alpha, y, beta)


@lifts(Gemm)
def lift_gemm(ctx, node):
    z, alpha, x, y, beta = node.inputs
    product = ctx.op("MatMul", ctx.value(x), ctx.value(y))
    return _gemm_like(ctx, node, product, alpha, z, beta)


@lifts(Ger)
def lift_ger(ctx, node):
    a, alpha, x, y = node.inputs
    column = ctx.op("Unsqueeze", ctx.value(x), axes=(1,))
    row = ctx.op("Unsqueeze", ctx.value(y), axes=(0,))
    product = ctx.op("MatMul", column, row)
    return _gemm_like(ctx, node, product, alpha, a)


try:  # PyTensor 3 moved it; 2.38 has it in slinalg only
    from pytensor.tensor.linalg import BlockDiagonal
except ImportError:
    from pytensor.tensor.slinalg import BlockDiagonal


@lifts(BlockDiagonal)
def lift_block_diagonal(ctx, node):
    """scipy.linalg.block_diag: each matrix's rows padded with zeros left and right, stacked."""
    dtype = node.outputs[0].type.dtype
    blocks = [ctx.cast(ctx.value(v), dtype) for v in node.inputs]
    widths = [ctx.dim(b, 1) for b in blocks]
    rows = []
    for k, block in enumerate(blocks):
        parts = []
        for side in (widths[:k], widths[k + 1:]):
            if side:
                width = side[0]
                for w in side[1:]:
                    width = ctx.op("Add", width, w)
                zeros = ctx.op("Expand", Value.constant(np.zeros((), dtype)), ctx.pack([ctx.dim(block, 0), width]))
                parts.append(zeros)
        parts.insert(1 if k else 0, block)
        rows.append(ctx.op("Concat", *parts, axis=1) if len(parts) > 1 else block)
    return [ctx.op("Concat", *rows, axis=0, name=node.outputs[0].name) if len(rows) > 1 else rows[0]]
