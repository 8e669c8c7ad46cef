"""Run-time checks: CheckAndRaise (Assert and PyMC's parameter checks), SpecifyShape.

Each becomes an IR `Check`, which fails the run with PyTensor's message and
exception class (see `ptonnx.lowering.check`). Conditions known true at compile
time are dropped; a check with none left is its input.
"""

from __future__ import annotations

from pytensor.raise_op import CheckAndRaise
from pytensor.tensor.shape import SpecifyShape

from ptonnx.ir import Value
from ptonnx.lifting.dispatch import lifts


def exception_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def check(ctx, value: Value, conds: list[Value], message: str, exception: type = AssertionError, name=None) -> Value:
    """`value`, guarded by `conds` (bool values); the ones known true are left out."""
    conds = [c for c in conds if not (c.const is not None and c.const.all())]
    if not conds:
        return value
    return ctx.op("Check", value, *conds, message=message, exception=exception_name(exception), name=name)


@lifts(CheckAndRaise)
def lift_check_and_raise(ctx, node):
    x, *conds = node.inputs
    flags = [ctx.cast(ctx.value(c), "bool") for c in conds]  # nonzero is true, NaN too, as `bool()` reads it
    op = node.op
    return [check(ctx, ctx.value(x), flags, str(op.msg), op.exc_type, node.outputs[0].name)]


@lifts(SpecifyShape)
def lift_specify_shape(ctx, node):
    """`x` reshaped to the given sizes, after checking it has them: the Reshape (free at
    run time) gives the output the static sizes PyTensor's type has."""
    x, *sizes = node.inputs
    value = ctx.value(x)
    dims, shown, conds = [], [], []
    for axis, size in enumerate(sizes):
        if getattr(size.type, "dtype", None) is None:  # NoneConst: any size
            dims.append(ctx.dim(value, axis))
            shown.append("None")
            continue
        want = ctx.cast(ctx.value(size), "int64")
        dims.append(want)
        shown.append(str(want.const.item()) if want.const is not None else str(size))
        if not (want.const is not None and value.shape[axis] == want.const.item()):
            conds.append(ctx.op("Equal", ctx.dim(value, axis), want))
    if not conds:
        return [value]
    message = f"SpecifyShape: {x} must have shape ({', '.join(shown)}{',' if len(shown) == 1 else ''})"
    shape = check(ctx, ctx.pack(dims), conds, message)
    return [ctx.op("Reshape", value, shape, name=node.outputs[0].name)]
