"""`**`: floats by ONNX Pow; integers by square-and-multiply that wraps as NumPy does.

onnxruntime's integer Pow goes through floating point and saturates on
overflow (uint8 `255 ** 4` gave 0; NumPy wraps to 1), and has kernels only for
int32/int64. Here every integer power is computed in int64, whose products
wrap modulo 2**64, and cast to the result dtype, which keeps the low bits: the
bits NumPy gives. A constant exponent unrolls to its multiplications; a
computed one takes one step per exponent bit, after reducing it modulo the
period of powers in `bits`-bit arithmetic so narrow dtypes need few steps.
"""

from __future__ import annotations

import numpy as np

from ptonnx.ir.types import FLOAT_DTYPES
from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.elementwise import where
from ptonnx.lowering.registry import emits

WIDE = "int64"


def _const_exponent(node) -> int | None:
    """The exponent when it is one constant non-negative integer, else None."""
    e = node.inputs[1].const
    if e is None or e.size == 0:
        return None
    first = e.reshape(-1)[0]
    if first < 0 or not (e == first).all():
        return None
    return int(first)


def _power_by_bits(ctx, base: str, bits_of, n_bits: int) -> str:
    """prod over k of base**(2**k) where bit k is set; `bits_of(k)` is a bool name or True/False."""
    result, square = None, base
    for k in range(n_bits):
        bit = bits_of(k)
        if bit is not False:
            factor = square if bit is True else where(ctx, bit, square, ctx.scalar(1, WIDE), WIDE)
            result = factor if result is None else ctx.emit1("Mul", [result, factor])
        if k + 1 < n_bits:
            square = ctx.emit1("Mul", [square, square])
    return result


def _reduced_exponent(ctx, e: str, bits: int) -> tuple[str, int]:
    """An exponent e' (uint64) with b**e' == b**e modulo 2**bits, and how many bits it needs.

    For e >= bits: an even base gives 0 either way, and an odd one has a period
    dividing 2**(bits - 2). 64-bit dtypes keep the whole exponent.
    """
    if bits == 64:
        return ctx.emit1("Cast", [e], to=onnx_dtype("uint64")), 64
    e = ctx.emit1("Cast", [e], to=onnx_dtype(WIDE))
    n = ctx.scalar(bits, WIDE)
    period = ctx.scalar(1 << (bits - 2), WIDE)
    folded = ctx.emit1("Add", [n, ctx.emit1("Mod", [ctx.emit1("Sub", [e, n]), period])])
    reduced = where(ctx, ctx.emit1("Less", [e, n]), e, folded, WIDE)
    return ctx.emit1("Cast", [reduced], to=onnx_dtype("uint64")), int(bits + (1 << (bits - 2)) - 1).bit_length()


@emits("Pow")
def emit_pow(ctx, node, inputs):
    dtype = node.outputs[0].dtype
    if dtype in FLOAT_DTYPES:
        return ctx.emit("Pow", inputs)
    x, e = inputs
    base = ctx.emit1("Cast", [x], to=onnx_dtype(WIDE))
    known = _const_exponent(node)
    bits = np.dtype(dtype).itemsize * 8
    if known is not None:
        if known == 0:
            result = ctx.emit1("Cast", [ctx.emit1("Equal", [base, base])], to=onnx_dtype(WIDE))
        else:
            result = _power_by_bits(ctx, base, lambda k: bool(known >> k & 1), known.bit_length())
        shape = node.inputs[1].const.shape
        if len(shape) > node.inputs[0].type.ndim or any(d != 1 for d in shape):
            result = ctx.emit1("Mul", [result, ctx.const(np.ones(shape, WIDE), "ones")])
    else:
        exponent, n_bits = _reduced_exponent(ctx, e, bits)
        one = ctx.scalar(1, "uint64")

        def bit(k):
            shifted = ctx.emit1("BitShift", [exponent, ctx.scalar(k, "uint64")], direction="RIGHT") if k else exponent
            return ctx.emit1("Equal", [ctx.emit1("BitwiseAnd", [shifted, one]), one])

        result = _power_by_bits(ctx, base, bit, n_bits)  # every factor is a Where: shapes broadcast
    return ctx.emit("Cast", [result], to=onnx_dtype(dtype))
