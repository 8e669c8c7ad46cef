"""Lifting of the Sylvester and Lyapunov solvers: SolveSylvester (solve_sylvester, and
solve_continuous_lyapunov, which is solve_sylvester(A, A^T, Q)) and SolveBilinearDiscreteLyapunov
(solve_discrete_lyapunov's default method).

Both are OpFromGraphs in PyTensor. SolveSylvester's inner graph is Schur forms and LAPACK trsyl,
out of the IR's reach: it lifts to the IR's SolveSylvester instead (batched: its Blockwise is one
node). SolveBilinearDiscreteLyapunov's inner graph (a Cayley transform: Solves, then
solve_continuous_lyapunov) is PyTensor's own formula in ops ptonnx lifts, so it is inlined.
Gradients are PyTensor's (solve_sylvester again, and OpFromGraphs that are inlined).
"""

from __future__ import annotations

from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts, lifts_batched
from ptonnx.lifting.lift import lift_op_from_graph
from ptonnx.lifting.linalg_solvers import same_batch, square

try:  # PyTensor 3; 2.38 keeps them in a private module
    from pytensor.tensor.linalg.solvers.linear_control import SolveBilinearDiscreteLyapunov, SolveSylvester
except ImportError:
    from pytensor.tensor._linalg.solve.linear_control import SolveBilinearDiscreteLyapunov, SolveSylvester


@lifts_batched(SolveSylvester)
def lift_solve_sylvester(ctx, node):
    """A X + X B = C: A and B square, C of A's rows and B's columns (checked at run time where the
    types leave it open, as PyTensor's Schur and products raise ValueError in PyTensor 3)."""
    out = node.outputs[0]
    a, b, c = (ctx.cast(ctx.value(v), out.type.dtype) for v in node.inputs)
    a, b = square(ctx, a, "SolveSylvester"), square(ctx, b, "SolveSylvester")
    a, b, c = same_batch(ctx, [a, b, c], [2, 2, 2], node.inputs)
    r = c.type.ndim
    conds = []
    for own, axis, other in ((a, a.type.ndim - 1, r - 2), (b, b.type.ndim - 1, r - 1)):
        if not (isinstance(own.shape[axis], int) and own.shape[axis] == c.shape[other]):
            conds.append(ctx.op("Equal", ctx.dim(own, axis), ctx.dim(c, other)))
    c = check(ctx, c, conds, "SolveSylvester: c must have a's rows and b's columns", ValueError)
    return [ctx.op("SolveSylvester", a, b, c, name=out.name)]


@lifts(SolveBilinearDiscreteLyapunov)
def lift_bilinear_discrete_lyapunov(ctx, node):
    """PyTensor's own graph, inlined: B = (A^T - I)(A^T + I)^-1 and C = 2 (A + I)^-1 Q (A^T + I)^-1
    as three Solves, then SolveSylvester(B^T, B, -C); NaN where A + I is singular, as PyTensor."""
    return lift_op_from_graph(ctx, node)
