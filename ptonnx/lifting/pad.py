"""pad: the reflect and symmetric modes, which PyTensor builds with a Scan, become one
Gather per axis; every other mode is PyTensor's own graph (the Pad OpFromGraph, inlined).

NumPy extends an axis of size n by repeated reflection, which is periodic: position
i (counted from the first original element, so negative in the left pad) reads
element j = i mod p, mirrored when j >= n: reflect (edge not repeated) has p = 2(n-1)
and reads p - j; symmetric (edge repeated) has p = 2n and reads p - 1 - j.
"""

from __future__ import annotations

from pytensor.tensor.pad import Pad

from ptonnx.ir import Value
from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts
from ptonnx.lifting.lift import lift_op_from_graph

#: mode -> (period from n, source index from (p, j))
MIRRORS = {"reflect": (lambda ctx, n: ctx.op("Max", ctx.op("Mul", ctx.op("Sub", n, ctx.ints(1)), ctx.ints(2)), ctx.ints(1)),
                       lambda ctx, p, j: ctx.op("Sub", p, j)),
           "symmetric": (lambda ctx, n: ctx.op("Mul", n, ctx.ints(2)),
                         lambda ctx, p, j: ctx.op("Sub", ctx.op("Sub", p, ctx.ints(1)), j))}


def _entry(ctx, widths: Value, axis: int, side: int) -> Value:
    return ctx.op("Gather", ctx.op("Gather", widths, ctx.ints(axis), axis=0), ctx.ints(side), axis=0)


@lifts(Pad)
def lift_pad(ctx, node):
    op = node.op
    if op.pad_mode not in MIRRORS or getattr(op, "reflect_type", "even") != "even":
        return lift_op_from_graph(ctx, node)
    x, widths = ctx.value(node.inputs[0]), ctx.cast(ctx.value(node.inputs[1]), "int64")
    widths = ctx.op("Expand", widths, ctx.ints([x.type.ndim, 2]))  # NumPy's pad_width broadcasts: n, (a, b), ...
    period_of, mirror = MIRRORS[op.pad_mode]
    value = x
    for axis in range(x.type.ndim):
        before, after = _entry(ctx, widths, axis, 0), _entry(ctx, widths, axis, 1)
        n = ctx.dim(value, axis)
        grows = ctx.op("Greater", ctx.op("Add", before, after), ctx.ints(0))
        ok = ctx.op("Or", ctx.op("Not", grows), ctx.op("Greater", n, ctx.ints(0)))
        n = check(ctx, n, [ok], f"pad ({op.pad_mode}) of {node.inputs[0]}: can't extend an empty axis {axis}", ValueError)
        period = period_of(ctx, n)
        j = ctx.op("Mod", ctx.op("Range", ctx.op("Neg", before), ctx.op("Add", n, after), ctx.ints(1)), period)
        source = ctx.op("Where", ctx.op("Less", j, n), j, mirror(ctx, period, j))
        value = ctx.op("Gather", value, source, axis=axis)
    value.name = node.outputs[0].name
    return [value]
