"""Tensor ops: Join -> Concat, Split, MakeVector, Reshape, Softmax.

Axes, split sizes and target shapes must be constants: they become IR
attributes. They are read from the IR value when lifting computed it from
constants (`context.known`), else folded on the PyTensor side (`get_underlying_scalar_constant_value`
sees through casts and static shapes); a truly dynamic one is a
`LiftingError` that says what to make constant.
"""

from __future__ import annotations

import numpy as np
from pytensor.graph.basic import Constant
from pytensor.tensor.basic import Join, MakeVector, Split, get_underlying_scalar_constant_value
from pytensor.tensor.exceptions import NotScalarConstantError
from pytensor.tensor.shape import Reshape
from pytensor.compile.builders import OpFromGraph
from pytensor.tensor.special import Softmax

from ptonnx.errors import LiftingError
from ptonnx.ir import Value
from ptonnx.ir.dims import contents
from ptonnx.lifting.checks import check
from ptonnx.lifting.context import known
from ptonnx.lifting.dispatch import lifts


def constant_array(ctx, var) -> np.ndarray | None:
    """The value of a 0-d or 1-d PyTensor variable known at compile time, or None."""
    value = ctx.values.get(var)
    if value is not None and (folded := known(value)) is not None:
        return np.asarray(folded)
    if isinstance(var, Constant):
        return np.asarray(var.data)
    try:
        if var.type.ndim == 0:
            return np.asarray(get_underlying_scalar_constant_value(var))
        if var.owner is not None and isinstance(var.owner.op, MakeVector):
            return np.array([get_underlying_scalar_constant_value(v) for v in var.owner.inputs])
    except NotScalarConstantError:
        pass
    return None


def require_ints(ctx, var, what: str, where) -> tuple[int, ...]:
    """The constant integers `var` holds; a `LiftingError` naming `what` if it is dynamic."""
    values = constant_array(ctx, var)
    if values is None:
        raise LiftingError(
            f"{where}: the {what} ({var}) is not a compile-time constant; ptonnx needs it as an "
            f"attribute. Build the graph with a constant {what} (a Python int or tuple, or a "
            "tensor with a static shape)."
        )
    return tuple(int(v) for v in np.ravel(values))


def normalize_axis(axis: int, ndim: int, where) -> int:
    if not -ndim <= axis < ndim:
        raise LiftingError(f"{where}: axis {axis} is out of range for {ndim} dims")
    return axis % ndim


@lifts(Join)
def lift_join(ctx, node):
    out = node.outputs[0]
    (axis,) = require_ints(ctx, node.inputs[0], "join axis", f"Join producing {out}")
    axis = normalize_axis(axis, out.type.ndim, f"Join producing {out}")
    inputs = [ctx.cast(ctx.value(v), out.type.dtype) for v in node.inputs[1:]]
    return [ctx.op("Concat", *inputs, axis=axis, name=out.name)]


@lifts(Split)
def lift_split(ctx, node):
    """Sizes are a value (they may be computed); the number of pieces is static."""
    x, axis_var, splits_var = node.inputs
    where = f"Split producing {node.outputs[0]}"
    (axis,) = require_ints(ctx, axis_var, "split axis", where)
    axis = normalize_axis(axis, x.type.ndim, where)
    sizes = _split_sizes(ctx, ctx.cast(ctx.value(splits_var), "int64"), len(node.outputs))
    if sizes.const is None:  # PyTensor's checks, in its order (onnxruntime's Split fails with its own message)
        total = ctx.op("ReduceSum", sizes, axes=(0,))
        sizes = check(ctx, sizes, [ctx.op("Equal", total, ctx.dim(ctx.value(x), axis))],
                      f"Split sizes{f' ({splits_var.name})' if splits_var.name else ''} do not sum to the size of axis "
                      f"{axis} of {x}", ValueError)
        sizes = check(ctx, sizes, [ctx.op("ReduceAll", ctx.op("GreaterOrEqual", sizes, ctx.ints(0)), axes=(0,))],
                      "Split sizes cannot be negative", ValueError)
    ir_node = ctx.builder.node(
        "Split",
        [ctx.value(x), sizes],
        {"axis": axis, "num_outputs": len(node.outputs)},
        names=[o.name for o in node.outputs],
    )
    return list(ir_node.outputs)


def _split_sizes(ctx, sizes: Value, n: int) -> Value:
    """The sizes as a vector of the static length `n` (the number of pieces); one of another
    length fails at run time with PyTensor's ValueError."""
    if sizes.shape[0] == n:
        return sizes
    sizes = check(ctx, sizes, [ctx.op("Equal", ctx.dim(sizes, 0), ctx.ints(n))], "Length of splits is not equal to n_splits",
                  ValueError)
    if sizes.shape[0] is None or isinstance(sizes.shape[0], str):
        return ctx.op("Reshape", sizes, ctx.ints([n]))
    padded = ctx.op("Concat", sizes, ctx.ints([0] * n), axis=0)  # a static length that is not n: the check always fails
    return ctx.op("Slice", padded, ctx.ints([0]), ctx.ints([n]), ctx.ints([1]), axes=(0,))


@lifts(MakeVector)
def lift_make_vector(ctx, node):
    out = node.outputs[0]
    dtype = out.type.dtype
    folded = [constant_array(ctx, v) for v in node.inputs]
    if all(f is not None for f in folded):
        return [Value.constant(np.array(folded, dtype=dtype).reshape(len(folded)), out.name)]
    parts = [ctx.op("Unsqueeze", ctx.cast(ctx.value(v), dtype), axes=(0,)) for v in node.inputs]
    return [ctx.op("Concat", *parts, axis=0, name=out.name)]


@lifts(Reshape)
def lift_reshape(ctx, node):
    """NumPy's reshape: a -1 is inferred, and refused (ValueError) when the other sizes
    multiply to 0 (ONNX would infer some size there instead)."""
    x, shape_var = node.inputs
    out = node.outputs[0]
    shape = ctx.cast(ctx.value(shape_var), "int64")
    known = contents(shape)
    if not (isinstance(known, tuple) and all(isinstance(d, int) for d in known) and
            (-1 not in known or int(np.prod([d for d in known if d != -1])) != 0)):
        inferred = ctx.op("ReduceAny", ctx.op("Equal", shape, ctx.ints(-1)), axes=(0,))
        ok = ctx.op("Or", ctx.op("Not", inferred), ctx.op("NotEqual", ctx.op("ReduceProd", shape, axes=(0,)), ctx.ints(0)))
        shape = check(ctx, shape, [ok], f"cannot reshape {x} into a shape with -1 whose other sizes multiply to 0",
                      ValueError)
    return [ctx.op("Reshape", ctx.value(x), shape, name=out.name)]


#: pytensor 3's Softmax is a symbolic op (an OpFromGraph) evaluated through PyTensor's rewrites
SOFTMAX_IS_SYMBOLIC = issubclass(Softmax, OpFromGraph)


@lifts(Softmax)
def lift_softmax(ctx, node):
    """One axis maps to Softmax; several (or None = all) are moved last and flattened when the
    shape is static, else computed as exp(x - max) / sum over them.

    Over a single element pytensor 3's rewrites make x - max(x) zero, so its softmax
    is 1 even for inf and NaN (ONNX's is NaN there): that case is kept. pytensor
    2.38 calls scipy, which gives NaN there, as ONNX does.
    """
    (var,) = node.inputs
    out = node.outputs[0]
    if var.type.dtype not in ("float16", "float32", "float64"):
        raise LiftingError(
            f"Softmax of {var.type.dtype} {var} (producing {out}, {out.type.dtype}): PyTensor computes x - max(x) in "
            "the input's integer dtype, which wraps (its own result is NaN or garbage where the range is wide), "
            "exp in float16 for 8-bit inputs, and (pytensor 2.38) returns integers, so there is no PyTensor number "
            "to match. Cast the input to a float dtype first."
        )
    soft = _softmax(ctx, node, ctx.cast(ctx.value(var), out.type.dtype))
    shape = var.type.shape
    axis = node.op.axis
    axes = range(len(shape)) if axis is None else np.atleast_1d(axis).tolist()
    if SOFTMAX_IS_SYMBOLIC and all(shape[a] == 1 for a in axes):
        one = Value.constant(np.ones((), out.type.dtype))
        soft = ctx.op("Where", ctx.op("Equal", soft, soft), soft, one)
    soft.name = out.name
    return [soft]


def _softmax(ctx, node, x):
    ndim = x.type.ndim
    axis = node.op.axis  # a tuple in pytensor 3, an int in 2.38
    axes = tuple(range(ndim)) if axis is None else tuple(sorted(a % max(ndim, 1) for a in np.atleast_1d(axis).tolist()))
    if ndim == 0:  # softmax of one element
        soft = ctx.op("Softmax", ctx.op("Unsqueeze", x, axes=(0,)), axis=0)
        return ctx.op("Squeeze", soft, axes=(0,))
    if len(axes) == 1:
        return ctx.op("Softmax", x, axis=axes[0])
    if not x.type.is_static:  # exp(x - max) / sum, as PyTensor's perform (an empty axis: an empty result)
        shifted = ctx.op("Exp", ctx.op("Sub", x, ctx.op("ReduceMax", x, axes=axes, keepdims=True)))
        return ctx.op("Div", shifted, ctx.op("ReduceSum", shifted, axes=axes, keepdims=True))
    others = tuple(a for a in range(ndim) if a not in axes)
    perm = others + axes
    moved = ctx.op("Transpose", x, perm=perm) if perm != tuple(range(ndim)) else x
    kept = tuple(x.shape[a] for a in others)
    flat = ctx.op("Reshape", moved, ctx.ints(kept + (-1,)))
    soft = ctx.op("Softmax", flat, axis=len(kept))
    back = ctx.op("Reshape", soft, ctx.ints(moved.shape))
    if moved is x:
        return back
    inverse = tuple(int(i) for i in np.argsort(perm))
    return ctx.op("Transpose", back, perm=inverse)


def lift_log_softmax(ctx, node):
    """pytensor 2.38's LogSoftmax calls scipy.special.log_softmax: x - m - log(sum(exp(x - m))),
    with m the max over the axes, taken as 0 where it is not finite. (In pytensor 3 LogSoftmax
    is an OpFromGraph and is inlined.)"""
    x, axes, out = _log_softmax_operand(ctx, node)
    if not axes:
        return [ctx.op("Sub", x, x)]
    top = ctx.op("ReduceMax", x, axes=axes, keepdims=True)
    zero = Value.constant(np.zeros((), out.type.dtype))
    infinite = ctx.op("IsNaN", ctx.op("Sub", top, top))  # m - m is 0, or NaN for ±inf and NaN
    top = ctx.op("Where", infinite, zero, top)
    return [_minus_log_sum_exp(ctx, ctx.op("Sub", x, top), axes, out.name)]


def _log_softmax_operand(ctx, node) -> tuple[Value, tuple[int, ...], object]:
    """(x in the output's dtype, the axes, sorted and non-negative, the output variable)."""
    (var,), out = node.inputs, node.outputs[0]
    x = ctx.cast(ctx.value(var), out.type.dtype)
    axis = node.op.axis
    axes = tuple(range(x.type.ndim)) if axis is None else tuple(sorted(a % x.type.ndim for a in np.atleast_1d(axis).tolist()))
    return x, axes, out


def _minus_log_sum_exp(ctx, shifted: Value, axes: tuple[int, ...], name) -> Value:
    """shifted - log(sum(exp(shifted))) over `axes`: log_softmax once the max is taken out."""
    total = ctx.op("ReduceSum", ctx.op("Exp", shifted), axes=axes, keepdims=True)
    return ctx.op("Sub", shifted, ctx.op("Log", total), name=name)


def lift_symbolic_log_softmax(ctx, node):
    """pytensor 3's LogSoftmax (an OpFromGraph): x - m - log(sum(exp(x - m))), m the max over the
    axes, with no empty-slice check (an empty axis gives an empty result, as in PyTensor's default
    mode). Over static one-element axes its rewrites give -0.0 (x - max(x) is 0, and the result
    -log(1)), for inf and NaN too: that is kept."""
    x, axes, out = _log_softmax_operand(ctx, node)
    if all(node.inputs[0].type.shape[a] == 1 for a in axes):
        minus_zero = Value.constant(np.array(-0.0, out.type.dtype))
        return [ctx.op("Expand", minus_zero, ctx.shape_of(x), name=out.name)]
    return [_minus_log_sum_exp(ctx, ctx.op("Sub", x, ctx.op("ReduceMax", x, axes=axes, keepdims=True)), axes, out.name)]


try:
    from pytensor.tensor.special import LogSoftmax

    lifts(LogSoftmax)(lift_symbolic_log_softmax if issubclass(LogSoftmax, OpFromGraph) else lift_log_softmax)
except ImportError:  # a PyTensor without LogSoftmax
    pass


def lift_softmax_grad(ctx, node):
    """pytensor 2.38's SoftmaxGrad(dy, sm): dy*sm - sum(dy*sm over the axis) * sm, as its perform."""
    (dy, sm), out = node.inputs, node.outputs[0]
    dy, sm = (ctx.cast(ctx.value(v), out.type.dtype) for v in (dy, sm))
    axis = node.op.axis
    axes = tuple(range(sm.type.ndim)) if axis is None else (axis % sm.type.ndim,)
    product = ctx.op("Mul", dy, sm)
    total = ctx.op("ReduceSum", product, axes=axes, keepdims=True)
    return [ctx.op("Sub", product, ctx.op("Mul", total, sm), name=out.name)]


try:
    from pytensor.tensor.special import SoftmaxGrad

    lifts(SoftmaxGrad)(lift_softmax_grad)
except ImportError:  # pytensor 3: the gradient of softmax is built from elementwise ops and reductions
    pass
