"""Integer and float floor division and modulo with NumPy's meaning.

ONNX `Div` truncates integers and `Mod` needs `fmod` for floats; NumPy floors,
takes the divisor's sign, gives 0 for `x // 0` and `x % 0` on integers and
wraps `INT_MIN // -1`. A 0 or -1 divisor never reaches a hardware division
(it would stop the process with SIGFPE).
"""

from __future__ import annotations

from ptonnx.ir.types import FLOAT_DTYPES, SIGNED_INT_DTYPES
from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.elementwise import is_negative, where, with_zero_sign
from ptonnx.lowering.registry import emits


def _safe_divisor(ctx, node, b, dtype):
    """Masks of the divisors integer division cannot take, and the divisor with them replaced by 1.

    Returns (is zero or None, is -1 or None, safe divisor): x / 0 and INT_MIN / -1
    stop the process with SIGFPE, so neither reaches a hardware division. NumPy
    gives 0 for x // 0 and x % 0, wraps INT_MIN // -1 to INT_MIN, and x % -1 is 0.
    """
    divisor = node.inputs[1]
    signed = dtype in SIGNED_INT_DTYPES
    known = divisor.const
    needs_zero = known is None or (known == 0).any()
    needs_minus_one = signed and (known is None or (known == -1).any())
    zero = ctx.emit1("Equal", [b, ctx.scalar(0, dtype)], hint="div_by_zero") if needs_zero else None
    minus_one = ctx.emit1("Equal", [b, ctx.scalar(-1, dtype)], hint="div_by_minus_one") if needs_minus_one else None
    masks = [m for m in (zero, minus_one) if m is not None]
    if not masks:
        return None, None, b
    unsafe = masks[0] if len(masks) == 1 else ctx.emit1("Or", masks)
    return zero, minus_one, where(ctx, unsafe, ctx.scalar(1, dtype), b, dtype)


def _sign_differs(ctx, r, b, dtype):
    """r != 0 and sign(r) != sign(b): where a truncated result needs flooring."""
    zero = ctx.scalar(0, dtype)
    nonzero = ctx.emit1("Not", [ctx.emit1("Equal", [r, zero])])
    differ = ctx.emit1("Xor", [ctx.emit1("Less", [r, zero]), ctx.emit1("Less", [b, zero])])
    return ctx.emit1("And", [nonzero, differ], hint="needs_floor")


@emits("IntDiv")
def emit_int_div(ctx, node, inputs):
    (a, b), dtype = inputs, node.outputs[0].dtype
    if dtype in FLOAT_DTYPES:
        return _float_floor_div(ctx, a, b, dtype)
    zero, minus_one, bs = _safe_divisor(ctx, node, b, dtype)
    r = ctx.emit1("Mod", [a, bs], fmod=1)
    q = ctx.emit1("Div", [a, bs])
    adjust = ctx.emit1("Cast", [_sign_differs(ctx, r, bs, dtype)], to=onnx_dtype(dtype))
    fixes = []  # (mask, value there), applied in order
    if minus_one is not None:  # a // -1 == -a, wrapping like NumPy
        fixes.append((minus_one, ctx.emit1("Sub", [ctx.scalar(0, dtype), a])))
    if zero is not None:
        fixes.append((zero, ctx.scalar(0, dtype)))
    result = ctx.emit1("Sub", [q, adjust])
    for mask, value in fixes:
        result = where(ctx, mask, value, result, dtype)
    return result


@emits("TruncDiv")
def emit_trunc_div(ctx, node, inputs):
    (a, b), dtype = inputs, node.outputs[0].dtype
    zero, minus_one, bs = _safe_divisor(ctx, node, b, dtype)
    result = ctx.emit1("Div", [a, bs])
    if minus_one is not None:  # a / -1 == -a, wrapping like NumPy
        result = where(ctx, minus_one, ctx.emit1("Sub", [ctx.scalar(0, dtype), a]), result, dtype)
    return result if zero is None else where(ctx, zero, ctx.scalar(0, dtype), result, dtype)


def _float_floor_div(ctx, a, b, dtype):
    """NumPy's npy_floor_divide, step by step, so results agree (the sign of a zero too)."""
    m = ctx.emit1("Mod", [a, b], fmod=1)
    div = ctx.emit1("Div", [ctx.emit1("Sub", [a, m]), b])
    adjust = ctx.emit1("Cast", [_sign_differs(ctx, m, b, dtype)], to=onnx_dtype(dtype))
    div = ctx.emit1("Sub", [div, adjust])
    floor = ctx.emit1("Floor", [div])
    round_up = ctx.emit1("Greater", [ctx.emit1("Sub", [div, floor]), ctx.scalar(0.5, dtype)])
    floor = ctx.emit1("Add", [floor, ctx.emit1("Cast", [round_up], to=onnx_dtype(dtype))])
    quotient = ctx.emit1("Div", [a, b])
    floor = with_zero_sign(ctx, floor, is_negative(ctx, quotient, dtype), dtype)  # NumPy: copysign(0, a / b)
    zero = ctx.emit1("Equal", [b, ctx.scalar(0, dtype)])
    return where(ctx, zero, quotient, floor, dtype)


@emits("Mod")
def emit_mod(ctx, node, inputs):
    (a, b), dtype = inputs, node.outputs[0].dtype
    if dtype in FLOAT_DTYPES:
        m = ctx.emit1("Mod", [a, b], fmod=1)
        fix = _sign_differs(ctx, m, b, dtype)
        m = where(ctx, fix, ctx.emit1("Add", [m, b]), m, dtype)
        return with_zero_sign(ctx, m, is_negative(ctx, b, dtype), dtype)  # NumPy: copysign(0, b)
    _, _, bs = _safe_divisor(ctx, node, b, dtype)
    return ctx.emit("Mod", [a, bs], fmod=0)  # x % 1 == 0 == x % -1 == NumPy's x % 0
