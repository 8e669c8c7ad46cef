"""Eigh and Eigvalsh (symmetric eigendecomposition, alone or under Blockwise), and PyTensor 2.38's
gradient ops EighGrad and EigvalshGrad, to the IR's batched Eigh and Eigvalsh.

What PyTensor raises before LAPACK is a check here: scipy.linalg.eigh's check_finite (PyTensor 3's
Eigh and Eigvalsh, 2.38's Eigvalsh) raises ValueError for inf or NaN anywhere in a or b, the
unread triangle too; NumPy's eigh (2.38's Eigh) reads one triangle and, for inf or NaN there,
mostly raises LinAlgError ("Eigenvalues did not converge"), sometimes returns NaN eigenvalues
with junk vectors: ptonnx raises LinAlgError for every such matrix (an error, never a number
that differs; for n = 1 and 2 NumPy returns more often than it raises). A matrix that is not
square: SciPy's ValueError, NumPy's LinAlgError. A b that is not positive definite raises
LinAlgError from the IR node itself (its decomposition's Check). 2.38's gradient ops (NumPy in
`perform`) lift to the formulas they compute.
"""

from __future__ import annotations

import numpy as np

from ptonnx.ir import Value
from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts_batched
from ptonnx.lifting.linalg_solvers import core_op, same_batch

try:  # PyTensor 3
    from pytensor.tensor.linalg import Eigh, Eigvalsh

    EighGrad = EigvalshGrad = None
except ImportError:  # PyTensor 2.38: Eigh (NumPy's, a subclass of Eig) in nlinalg, Eigvalsh (SciPy's) in slinalg
    from pytensor.tensor.nlinalg import Eigh, EighGrad
    from pytensor.tensor.slinalg import Eigvalsh, EigvalshGrad

NOT_FINITE = "array must not contain infs or NaNs"


def _lower(op) -> bool:
    return op.UPLO == "L" if hasattr(op, "UPLO") else bool(op.lower)


def _scalar(value: float, dtype: str) -> Value:
    return Value.constant(np.asarray(value, dtype=dtype))


def _transpose(ctx, x: Value) -> Value:
    r = x.type.ndim
    return ctx.op("Transpose", x, perm=(*range(r - 2), r - 1, r - 2))


def _masks(ctx, x: Value) -> tuple[Value, Value, Value]:
    """(row < col, row > col, row == col) of x's matrices (bool, n x n)."""
    n = ctx.dim(x, x.type.ndim - 1)
    idx = ctx.op("Range", ctx.ints(0), n, ctx.ints(1))
    rows, cols = ctx.op("Unsqueeze", idx, axes=(1,)), ctx.op("Unsqueeze", idx, axes=(0,))
    return ctx.op("Less", rows, cols), ctx.op("Greater", rows, cols), ctx.op("Equal", rows, cols)


def _any_bad(ctx, x: Value) -> Value:
    """Whether some element of x is inf or NaN (a bool scalar)."""
    bad = ctx.op("Or", ctx.op("IsNaN", x), ctx.op("IsInf", x))
    return ctx.op("ReduceAny", bad, axes=tuple(range(x.type.ndim)), keepdims=False)


def _finite(ctx, x: Value, exception: type, message: str, lower: bool | None = None) -> Value:
    """x checked free of inf and NaN (in the triangle `lower` names, or everywhere)."""
    tested = x
    if lower is not None:
        above, below, _ = _masks(ctx, x)
        tested = ctx.op("Select", above if lower else below, _scalar(0.0, x.dtype), x)
    return check(ctx, x, [ctx.op("Not", _any_bad(ctx, tested))], message, exception)


def _square(ctx, a: Value, exception: type, message: str) -> Value:
    """`a`, checked square at run time where its type does not say so."""
    rows, cols = a.shape[-2:]
    if rows == cols and rows is not None:
        return a
    ok = ctx.op("Equal", ctx.dim(a, a.type.ndim - 2), ctx.dim(a, a.type.ndim - 1))
    return check(ctx, a, [ok], message, exception)


def _inputs(ctx, node, what: str, numpy_eigh: bool = False) -> list[Value]:
    """a (and b) in the output's dtype, square, batches broadcast, checked in the order PyTensor's
    perform checks them: NumPy's eigh squareness (LinAlgError), then the triangle it reads; SciPy's
    eigh finiteness (check_finite), then squareness (ValueError)."""
    dtype = node.outputs[0].type.dtype
    values = [ctx.cast(ctx.value(v), dtype) for v in node.inputs[:2]]
    if numpy_eigh:
        a = _square(ctx, values[0], np.linalg.LinAlgError, "Last 2 dimensions of the array must be square")
        return [_finite(ctx, a, np.linalg.LinAlgError, "Eigenvalues did not converge", _lower(core_op(node)))]
    values = [_square(ctx, _finite(ctx, v, ValueError, NOT_FINITE), ValueError, f'expected square "{name}" matrix')
              for v, name in zip(values, "ab", strict=False)]
    if len(values) == 2:
        a, b = values
        if not (isinstance(a.shape[-1], int) and a.shape[-1] == b.shape[-1]):
            ok = ctx.op("Equal", ctx.dim(a, a.type.ndim - 1), ctx.dim(b, b.type.ndim - 1))
            b = check(ctx, b, [ok], f"{what}: a and b have different sizes", ValueError)
        values = same_batch(ctx, [a, b], [2, 2], node.inputs[:2])
    return values


@lifts_batched(Eigh)
def lift_eigh(ctx, node):
    op = core_op(node)
    values = _inputs(ctx, node, "Eigh", numpy_eigh=hasattr(op, "UPLO"))
    return list(ctx.builder.node("Eigh", values, {"lower": _lower(op)}).outputs)


@lifts_batched(Eigvalsh)
def lift_eigvalsh(ctx, node):
    values = _inputs(ctx, node, "Eigvalsh")
    return [ctx.op("Eigvalsh", *values, lower=_lower(core_op(node)), name=node.outputs[0].name)]


def _fold(ctx, g: Value, lower: bool) -> Value:
    """The gradient with respect to the read triangle: tril(g) + triu(g, 1)^T (for lower)."""
    above, below, _ = _masks(ctx, g)
    zero, unread = _scalar(0.0, g.dtype), above if lower else below
    return ctx.op("Add", ctx.op("Select", unread, zero, g), _transpose(ctx, ctx.op("Select", unread, g, zero)))


def _sandwich(ctx, v: Value, middle: Value) -> Value:
    """v middle v^T."""
    return ctx.op("MatMul", ctx.op("MatMul", v, middle), _transpose(ctx, v))


def _scaled(ctx, v: Value, d: Value) -> Value:
    """v diag(d) v^T."""
    r = v.type.ndim
    return ctx.op("MatMul", ctx.op("Mul", v, ctx.op("Unsqueeze", d, axes=(r - 2,))), _transpose(ctx, v))


def lift_eigh_grad(ctx, node):
    """EighGrad.perform: g = v (diag(gw) + F o (v^T gv))^T v^T, F[m, n] = 1 / (w[n] - w[m]) off
    the diagonal (0 on it), folded onto the read triangle."""
    dtype = node.outputs[0].type.dtype
    _, w, v, gw, gv = (ctx.cast(ctx.value(x), dtype) for x in node.inputs)
    r = v.type.ndim
    _, _, diag = _masks(ctx, v)
    gaps = ctx.op("Sub", ctx.op("Unsqueeze", w, axes=(r - 2,)), ctx.op("Unsqueeze", w, axes=(r - 1,)))  # w[n] - w[m]
    f = ctx.op("Select", diag, _scalar(0.0, dtype), ctx.op("Div", _scalar(1.0, dtype), gaps))
    inner = ctx.op("Mul", f, ctx.op("MatMul", _transpose(ctx, v), gv))
    inner = ctx.op("Add", inner, ctx.op("Select", diag, ctx.op("Unsqueeze", gw, axes=(r - 2,)), _scalar(0.0, dtype)))
    return [_fold(ctx, _sandwich(ctx, v, _transpose(ctx, inner)), _lower(core_op(node)))]


def lift_eigvalsh_grad(ctx, node):
    """EigvalshGrad.perform: (w, v) = eigh(a, b); gA = v diag(gw) v^T, gB = -v diag(gw w) v^T,
    each folded onto the read triangle."""
    lower = _lower(core_op(node))
    dtype = node.outputs[0].type.dtype
    a, b = _inputs(ctx, node, "EigvalshGrad")
    gw = ctx.cast(ctx.value(node.inputs[2]), dtype)
    w, v = ctx.builder.node("Eigh", [a, b], {"lower": lower}).outputs
    ga = _scaled(ctx, v, gw)
    gb = ctx.op("Neg", _scaled(ctx, v, ctx.op("Mul", gw, w)))
    return [_fold(ctx, ga, lower), _fold(ctx, gb, lower)]


if EighGrad is not None:
    lifts_batched(EighGrad)(lift_eigh_grad)
    lifts_batched(EigvalshGrad)(lift_eigvalsh_grad)
