"""Factorisations and solves (Cholesky, SolveTriangular, Solve, CholeskySolve, LUFactor,
PivotToPermutations) and functions of matrices (Det, SLogDet, MatrixInverse, Expm), alone or under
Blockwise.

The IR ops are batched (leading axes broadcast), so `Blockwise` of them lifts to one node,
not a Loop over the batch. PyTensor's run-time errors (a matrix that is not square, b with
another number of rows, batch sizes that differ) become checks with its exception class.
"""

from __future__ import annotations

from ptonnx.errors import UnsupportedOpError
from ptonnx.ir import Value
from ptonnx.lifting.blockwise import batch_shape
from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts

try:  # PyTensor 3 moved them; 2.38 has them in slinalg and nlinalg
    from pytensor.tensor.linalg import (
        Cholesky,
        CholeskySolve,
        Det,
        Expm,
        LUFactor,
        MatrixInverse,
        PivotToPermutations,
        SLogDet,
        Solve,
        SolveTriangular,
    )
except ImportError:
    from pytensor.tensor.nlinalg import Det, MatrixInverse, SLogDet
    from pytensor.tensor.slinalg import Cholesky, CholeskySolve, Expm, LUFactor, PivotToPermutations, Solve, SolveTriangular


def _core(node):
    """The core op (of a Blockwise, or the op itself)."""
    return getattr(node.op, "core_op", node.op)


def _square(ctx, a: Value, what: str) -> Value:
    """`a`, checked square at run time where its type does not say so (PyTensor's ValueError)."""
    rows, cols = a.shape[-2:]
    if rows == cols and rows is not None:
        return a
    ok = ctx.op("Equal", ctx.dim(a, a.type.ndim - 2), ctx.dim(a, a.type.ndim - 1))
    return check(ctx, a, [ok], f"{what}: the matrix is expected to be square", ValueError)


def _same_batch(ctx, values: list[Value], core_ndims: list[int]) -> list[Value]:
    """Inputs whose batch sizes may differ at run time broadcast to one batch shape, checked as
    Blockwise checks them (only a size known to be 1 broadcasts)."""
    own = [v.type.ndim - c for v, c in zip(values, core_ndims, strict=True)]
    width = max(own)
    if sum(o > 0 for o in own) < 2 or all(all(isinstance(d, int) for d in v.shape[:o]) for v, o in zip(values, own, strict=True)):
        return values  # static batch sizes: PyTensor's type already checked them
    padded = [[ctx.ints(1)] * (width - o) + [ctx.dim(v, k) for k in range(o)] for v, o in zip(values, own, strict=True)]
    batch = ctx.pack(batch_shape(ctx, padded))
    return [ctx.op("Expand", v, ctx.op("Concat", batch, ctx.shape_of(v, o), axis=0)) for v, o in zip(values, own, strict=True)]


@lifts(Cholesky)
def lift_cholesky(ctx, node):
    out = node.outputs[0]
    a = _square(ctx, ctx.cast(ctx.value(node.inputs[0]), out.type.dtype), "Cholesky")
    return [ctx.op("Cholesky", a, lower=bool(_core(node).lower), name=out.name)]


@lifts(SolveTriangular)
def lift_solve_triangular(ctx, node):
    op, out = _core(node), node.outputs[0]
    a, b = _matrix_and_rhs(ctx, node, "SolveTriangular")
    return [ctx.op("SolveTriangular", a, b, lower=bool(op.lower), unit_diagonal=bool(op.unit_diagonal),
                   b_ndim=int(op.b_ndim), name=out.name)]


def _matrix_and_rhs(ctx, node, what: str) -> tuple[Value, Value]:
    """a and b in the output's dtype: a square, batches broadcast, b with a's number of rows."""
    op, out = _core(node), node.outputs[0]
    a, b = (ctx.cast(ctx.value(v), out.type.dtype) for v in node.inputs)
    a = _square(ctx, a, what)
    a, b = _same_batch(ctx, [a, b], [2, op.b_ndim])
    rows = b.type.ndim - op.b_ndim
    if not (isinstance(a.shape[-1], int) and a.shape[-1] == b.shape[rows]):
        ok = ctx.op("Equal", ctx.dim(a, a.type.ndim - 1), ctx.dim(b, rows))
        b = check(ctx, b, [ok], f"{what}: a and b have different numbers of rows", ValueError)
    return a, b


@lifts(Solve)
def lift_solve(ctx, node):
    op, out = _core(node), node.outputs[0]
    a, b = _matrix_and_rhs(ctx, node, "Solve")
    return [ctx.op("Solve", a, b, assume_a=str(op.assume_a), lower=bool(op.lower), b_ndim=int(op.b_ndim), name=out.name)]


@lifts(CholeskySolve)
def lift_cho_solve(ctx, node):
    """scipy's cho_solve (LAPACK potrs): two triangular solves with the factor c."""
    op, out = _core(node), node.outputs[0]
    c, b = _matrix_and_rhs(ctx, node, "CholeskySolve")
    flip = ctx.op("Transpose", c, perm=(*range(c.type.ndim - 2), c.type.ndim - 1, c.type.ndim - 2))
    first, second = (c, flip) if op.lower else (flip, c)
    y = ctx.op("SolveTriangular", first, b, lower=True, b_ndim=int(op.b_ndim))
    return [ctx.op("SolveTriangular", second, y, lower=False, b_ndim=int(op.b_ndim), name=out.name)]


@lifts(LUFactor)
def lift_lu_factor(ctx, node):
    lu_var, pivots_var = node.outputs
    a = _square(ctx, ctx.cast(ctx.value(node.inputs[0]), lu_var.type.dtype), "LUFactor")
    lu, pivots = ctx.builder.node("LUFactor", [a]).outputs
    return [lu, ctx.cast(pivots, pivots_var.type.dtype)]


@lifts(PivotToPermutations)
def lift_pivot_to_permutations(ctx, node):
    pivots = ctx.cast(ctx.value(node.inputs[0]), "int64")
    out = ctx.op("PivotToPermutations", pivots, inverse=bool(_core(node).inverse))
    return [ctx.cast(out, node.outputs[0].type.dtype)]


def _unary_matrix(ir_op: str):
    def lift(ctx, node):
        dtype = node.outputs[0].type.dtype
        a = _square(ctx, ctx.cast(ctx.value(node.inputs[0]), dtype), ir_op)
        return list(ctx.builder.node(ir_op, [a]).outputs)

    lift.__name__ = f"lift_{ir_op.lower()}"
    return lift


for _op, _name in ((Det, "Det"), (SLogDet, "SLogDet"), (MatrixInverse, "MatrixInverse"), (Expm, "Expm")):
    lifts(_op)(_unary_matrix(_name))


def _complex_results(ctx, node):
    """Eig, Schur and QZ: their results are complex for real matrices in general (or, in the real
    Schur form, not unique): out of ptonnx's scope, refused by name. (PyTensor 2.38's Eigh is a
    subclass of Eig: it is refused as any op without a rule is.)"""
    core = _core(node)
    if type(core).__name__ not in ("Eig", "Schur", "QZ"):
        from ptonnx.lifting.dispatch import LIFTERS

        raise UnsupportedOpError(core, node.outputs[0], [c.__name__ for c in LIFTERS], family="PyTensor ops")
    raise UnsupportedOpError(core, node.outputs[0], (), reason=(
        "its results are complex in general, and complex numbers are out of ptonnx's scope; for a symmetric "
        "matrix use pt.linalg.eigh (not yet supported either: issue 21)"))


try:
    from pytensor.tensor.linalg import QZ, Eig, Schur
except ImportError:
    from pytensor.tensor.nlinalg import Eig
    from pytensor.tensor.slinalg import QZ, Schur

for _op in (Eig, Schur, QZ):
    lifts(_op)(_complex_results)


#: Blockwise core ops whose IR op is batched itself: their Blockwise lifts as the op does
BATCHED = {Cholesky: lift_cholesky, SolveTriangular: lift_solve_triangular, Solve: lift_solve, CholeskySolve: lift_cho_solve,
           LUFactor: lift_lu_factor, PivotToPermutations: lift_pivot_to_permutations, Det: _unary_matrix("Det"),
           SLogDet: _unary_matrix("SLogDet"), MatrixInverse: _unary_matrix("MatrixInverse"), Expm: _unary_matrix("Expm"),
           Eig: _complex_results, Schur: _complex_results, QZ: _complex_results}
