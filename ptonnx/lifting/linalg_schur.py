"""Schur (scipy.linalg.schur: LAPACK gees), alone or under Blockwise, to the IR's batched Schur.

Only the real form without sorting is lifted: output="complex" gives complex matrices (out of
ptonnx's scope) and a `sort` reorders the eigenvalues (LAPACK's trsen), which ptonnx does not do;
both are refused by name. PyTensor's NaN rule (a matrix holding inf or NaN, or one where the QR
algorithm does not converge, gives NaN for T and Z) is the IR op's. A matrix that is not square
raises ValueError (PyTensor's perform: scipy's flapack.error; numba's: numbers for it).
"""

from __future__ import annotations

from ptonnx.errors import UnsupportedOpError
from ptonnx.lifting.dispatch import lifts_batched
from ptonnx.lifting.linalg_solvers import core_op, square

try:  # PyTensor 3; 2.38 has it in slinalg
    from pytensor.tensor.linalg import Schur
except ImportError:
    from pytensor.tensor.slinalg import Schur


@lifts_batched(Schur)
def lift_schur(ctx, node):
    op = core_op(node)
    t_var = node.outputs[0]
    dtype = t_var.type.dtype
    if op.output == "real" and not dtype.startswith("float"):
        raise UnsupportedOpError(op, t_var, (), reason=f"its results are {dtype} (PyTensor 2.38 keeps an integer "
                                 "input's dtype); cast the matrix to a float dtype first")
    if op.output != "real":
        raise UnsupportedOpError(op, t_var, (), reason=(
            "the complex Schur form has complex results, and complex numbers are out of ptonnx's scope; "
            "the real one (output='real') is supported"))
    if op.sort is not None:
        raise UnsupportedOpError(op, t_var, (), reason=(
            f"sort={op.sort!r} reorders the eigenvalues (LAPACK's trsen), which ptonnx does not do; "
            "the unsorted real Schur form (sort=None) is supported"))
    a = square(ctx, ctx.cast(ctx.value(node.inputs[0]), dtype), "Schur")
    return list(ctx.builder.node("Schur", [a]).outputs)
