"""Factorisations and solves (Cholesky, SolveTriangular, Solve, CholeskySolve, LU, LUFactor,
PivotToPermutations) and functions of matrices (Det, SLogDet, MatrixInverse, Expm), alone or under
Blockwise.

The IR ops are batched (leading axes broadcast), so `Blockwise` of them lifts to one node,
not a Loop over the batch. PyTensor's run-time errors (a matrix that is not square, b with
another number of rows, batch sizes that differ) become checks with its exception class.
"""

from __future__ import annotations

from ptonnx.errors import UnsupportedOpError
from ptonnx.ir import Value
from ptonnx.lifting.blockwise import batch_dims, batch_shape
from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts_batched

try:  # PyTensor 3 moved them; 2.38 has them in slinalg and nlinalg
    from pytensor.tensor.linalg import (
        Cholesky,
        CholeskySolve,
        Det,
        Expm,
        LU,
        LUFactor,
        MatrixInverse,
        PivotToPermutations,
        SLogDet,
        Solve,
        SolveTriangular,
    )
except ImportError:
    from pytensor.tensor.nlinalg import Det, MatrixInverse, SLogDet
    from pytensor.tensor.slinalg import LU, Cholesky, CholeskySolve, Expm, LUFactor, PivotToPermutations, Solve, SolveTriangular


def core_op(node):
    """The core op (of a Blockwise, or the op itself)."""
    return getattr(node.op, "core_op", node.op)


def square(ctx, a: Value, what: str) -> Value:
    """`a`, checked square at run time where its type does not say so (PyTensor's ValueError)."""
    rows, cols = a.shape[-2:]
    if rows == cols and rows is not None:
        return a
    ok = ctx.op("Equal", ctx.dim(a, a.type.ndim - 2), ctx.dim(a, a.type.ndim - 1))
    return check(ctx, a, [ok], f"{what}: the matrix is expected to be square", ValueError)


def same_batch(ctx, values: list[Value], core_ndims: list[int], variables) -> list[Value]:
    """Inputs whose batch sizes may differ at run time broadcast to one batch shape, checked as
    Blockwise checks them: only a size the PyTensor type of `variables` (the node's inputs the
    values are) says is 1 broadcasts, whatever the IR's type knows."""
    own = [v.type.ndim - c for v, c in zip(values, core_ndims, strict=True)]
    width = max(own)
    if sum(o > 0 for o in own) < 2 or all(all(isinstance(d, int) for d in v.shape[:o]) for v, o in zip(values, own, strict=True)):
        return values  # static batch sizes: PyTensor's type already checked them
    padded = [batch_dims(ctx, var, v, o, width) for var, v, o in zip(variables, values, own, strict=True)]
    batch = ctx.pack(batch_shape(ctx, padded))
    return [ctx.op("Expand", v, ctx.op("Concat", batch, ctx.shape_of(v, o), axis=0)) for v, o in zip(values, own, strict=True)]


@lifts_batched(Cholesky)
def lift_cholesky(ctx, node):
    out = node.outputs[0]
    a = square(ctx, ctx.cast(ctx.value(node.inputs[0]), out.type.dtype), "Cholesky")
    return [ctx.op("Cholesky", a, lower=bool(core_op(node).lower), name=out.name)]


@lifts_batched(SolveTriangular)
def lift_solve_triangular(ctx, node):
    op, out = core_op(node), node.outputs[0]
    a, b = matrix_and_rhs(ctx, node, "SolveTriangular")
    return [ctx.op("SolveTriangular", a, b, lower=bool(op.lower), unit_diagonal=bool(op.unit_diagonal),
                   b_ndim=int(op.b_ndim), name=out.name)]


def matrix_and_rhs(ctx, node, what: str) -> tuple[Value, Value]:
    """a and b in the output's dtype: a square, batches broadcast, b with a's number of rows."""
    op, out = core_op(node), node.outputs[0]
    a, b = (ctx.cast(ctx.value(v), out.type.dtype) for v in node.inputs)
    a = square(ctx, a, what)
    a, b = same_batch(ctx, [a, b], [2, op.b_ndim], node.inputs)
    rows = b.type.ndim - op.b_ndim
    if not (isinstance(a.shape[-1], int) and a.shape[-1] == b.shape[rows]):
        ok = ctx.op("Equal", ctx.dim(a, a.type.ndim - 1), ctx.dim(b, rows))
        b = check(ctx, b, [ok], f"{what}: a and b have different numbers of rows", ValueError)
    return a, b


@lifts_batched(Solve)
def lift_solve(ctx, node):
    op, out = core_op(node), node.outputs[0]
    a, b = matrix_and_rhs(ctx, node, "Solve")
    return [ctx.op("Solve", a, b, assume_a=str(op.assume_a), lower=bool(op.lower), b_ndim=int(op.b_ndim), name=out.name)]


@lifts_batched(CholeskySolve)
def lift_cho_solve(ctx, node):
    """scipy's cho_solve (LAPACK potrs): two triangular solves with the factor c."""
    op, out = core_op(node), node.outputs[0]
    c, b = matrix_and_rhs(ctx, node, "CholeskySolve")
    flip = ctx.op("Transpose", c, perm=(*range(c.type.ndim - 2), c.type.ndim - 1, c.type.ndim - 2))
    first, second = (c, flip) if op.lower else (flip, c)
    y = ctx.op("SolveTriangular", first, b, lower=True, b_ndim=int(op.b_ndim))
    return [ctx.op("SolveTriangular", second, y, lower=False, b_ndim=int(op.b_ndim), name=out.name)]


@lifts_batched(LUFactor)
def lift_lu_factor(ctx, node):
    lu_var, pivots_var = node.outputs
    a = square(ctx, ctx.cast(ctx.value(node.inputs[0]), lu_var.type.dtype), "LUFactor")
    lu, pivots = ctx.builder.node("LUFactor", [a]).outputs
    return [lu, ctx.cast(pivots, pivots_var.type.dtype)]


@lifts_batched(LU)
def lift_lu(ctx, node):
    """scipy.linalg.lu: the IR's LU gives L (or P L), U and the row indices p; the permutation
    matrix is P[i, j] = (p[i] == j), exact. A non-square matrix is factored as scipy factors it."""
    op = core_op(node)
    dtype = node.outputs[-1].type.dtype
    low, up, p = ctx.builder.node("LU", [ctx.cast(ctx.value(node.inputs[0]), dtype)], {"permute_l": bool(op.permute_l)}).outputs
    if op.permute_l:
        return [low, up]
    if op.p_indices:
        return [ctx.cast(p, node.outputs[0].type.dtype), low, up]
    r = p.type.ndim
    cols = ctx.op("Range", ctx.ints(0), ctx.dim(p, r - 1), ctx.ints(1))
    hits = ctx.op("Equal", ctx.op("Unsqueeze", p, axes=(r,)), cols)
    return [ctx.cast(hits, node.outputs[0].type.dtype), low, up]


@lifts_batched(PivotToPermutations)
def lift_pivot_to_permutations(ctx, node):
    pivots = ctx.cast(ctx.value(node.inputs[0]), "int64")
    out = ctx.op("PivotToPermutations", pivots, inverse=bool(core_op(node).inverse))
    return [ctx.cast(out, node.outputs[0].type.dtype)]


def unary_matrix(ir_op: str):
    def lift(ctx, node):
        dtype = node.outputs[0].type.dtype
        a = square(ctx, ctx.cast(ctx.value(node.inputs[0]), dtype), ir_op)
        return list(ctx.builder.node(ir_op, [a]).outputs)

    lift.__name__ = f"lift_{ir_op.lower()}"
    return lift


for _op, _name in ((Det, "Det"), (SLogDet, "SLogDet"), (MatrixInverse, "MatrixInverse"), (Expm, "Expm")):
    lifts_batched(_op)(unary_matrix(_name))


def _complex_results(ctx, node):
    """Eig and QZ: their results are complex for real matrices in general: out of ptonnx's scope,
    refused by name. (PyTensor 2.38's Eigh and other subclasses of Eig have rules of their own,
    found first; one without is refused as any op without a rule is. Schur's real form is lifted:
    `linalg_schur.py`.)"""
    core = core_op(node)
    if type(core).__name__ not in ("Eig", "QZ"):
        from ptonnx.lifting.dispatch import LIFTERS

        raise UnsupportedOpError(core, node.outputs[0], [c.__name__ for c in LIFTERS], family="PyTensor ops")
    raise UnsupportedOpError(core, node.outputs[0], (), reason=(
        "its results are complex in general, and complex numbers are out of ptonnx's scope; for a symmetric "
        "matrix use pt.linalg.eigh, for singular values pt.linalg.svd"))


try:
    from pytensor.tensor.linalg import QZ, Eig
except ImportError:
    from pytensor.tensor.nlinalg import Eig
    from pytensor.tensor.slinalg import QZ

lifts_batched(Eig, QZ)(_complex_results)

