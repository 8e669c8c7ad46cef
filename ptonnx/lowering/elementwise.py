"""Elementwise emitters. Ops whose ONNX counterpart has other semantics are
expanded: integer division floors and is safe for a zero divisor (NumPy
gives 0), float `Mod` takes the divisor's sign, `And` on ints is bitwise."""

from __future__ import annotations

from ptonnx.ir import get_schema
from ptonnx.ir.types import FLOAT_DTYPES
from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.registry import emits

#: IR ops that are exactly one ONNX op of the same name and meaning
DIRECT = (
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Neg", "Abs", "Sign", "Reciprocal",
    "Exp", "Log", "Sqrt", "Sin", "Cos", "Tanh", "Sigmoid", "Floor", "Ceil", "Round",
    "Identity", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Equal", "Where",
)

#: IR logical op -> (ONNX op on bool, ONNX op on integers)
LOGICAL = {
    "And": ("And", "BitwiseAnd"),
    "Or": ("Or", "BitwiseOr"),
    "Xor": ("Xor", "BitwiseXor"),
    "Not": ("Not", "BitwiseNot"),
}


#: (ONNX op, dtype) pairs valid in ONNX that onnxruntime's CPU provider has no
#: kernel for, and the dtype that computes the same result exactly. Probed on
#: onnxruntime 1.31 with every opset-18 elementwise op and dtype.
RUNTIME_WIDENING = {
    ("Max", "int16"): "int32",
    ("Max", "uint16"): "uint32",
    ("Min", "int16"): "int32",
    ("Min", "uint16"): "uint32",
    ("Where", "bool"): "uint8",
    ("Where", "int16"): "int32",
    ("Where", "uint16"): "uint32",
    ("Where", "uint64"): "int64",  # a pure selection: the bit pattern round-trips
}


@emits(*DIRECT)
def emit_direct(ctx, node, inputs, outputs):
    dtype = node.outputs[0].dtype
    wide = RUNTIME_WIDENING.get((node.op, dtype))
    if wide is None:
        ctx.emit(node.op, inputs, outputs)
        return
    schema = get_schema(node.op)
    out_var = schema.outputs[0]
    widened = [
        ctx.emit1("Cast", [name], to=onnx_dtype(wide)) if var == out_var else name
        for var, name in zip(schema.inputs, inputs)
    ]
    result = ctx.emit1(node.op, widened)
    ctx.emit("Cast", [result], outputs, to=onnx_dtype(dtype))


@emits(*LOGICAL)
def emit_logical(ctx, node, inputs, outputs):
    on_bool, on_int = LOGICAL[node.op]
    ctx.emit(on_bool if node.inputs[0].dtype == "bool" else on_int, inputs, outputs)


@emits("NotEqual")
def emit_not_equal(ctx, node, inputs, outputs):
    ctx.emit("Not", [ctx.emit1("Equal", inputs)], outputs)


@emits("Cast")
def emit_cast(ctx, node, inputs, outputs):
    ctx.emit("Cast", inputs, outputs, to=onnx_dtype(node.attrs["to"]))


@emits("RoundHalfAwayFromZero")
def emit_round_half_away(ctx, node, inputs, outputs):
    (x,), dtype = inputs, node.inputs[0].dtype
    half = ctx.scalar(0.5, dtype)
    up = ctx.emit1("Floor", [ctx.emit1("Add", [x, half])])
    down = ctx.emit1("Ceil", [ctx.emit1("Sub", [x, half])])
    positive = ctx.emit1("Greater", [x, ctx.scalar(0, dtype)])
    ctx.emit("Where", [positive, up, down], outputs)


def _safe_divisor(ctx, node, b, dtype):
    """(is-zero mask or None, divisor with zeros replaced by 1) for integer division."""
    divisor = node.inputs[1]
    if divisor.const is not None and (divisor.const != 0).all():
        return None, b
    zero = ctx.emit1("Equal", [b, ctx.scalar(0, dtype)], hint="div_by_zero")
    return zero, ctx.emit1("Where", [zero, ctx.scalar(1, dtype), b], hint="safe_divisor")


def _sign_differs(ctx, r, b, dtype):
    """r != 0 and sign(r) != sign(b): where a truncated result needs flooring."""
    zero = ctx.scalar(0, dtype)
    nonzero = ctx.emit1("Not", [ctx.emit1("Equal", [r, zero])])
    differ = ctx.emit1("Xor", [ctx.emit1("Less", [r, zero]), ctx.emit1("Less", [b, zero])])
    return ctx.emit1("And", [nonzero, differ], hint="needs_floor")


@emits("IntDiv")
def emit_int_div(ctx, node, inputs, outputs):
    (a, b), dtype = inputs, node.outputs[0].dtype
    if dtype in FLOAT_DTYPES:
        return _float_floor_div(ctx, a, b, dtype, outputs)
    zero_mask, bs = _safe_divisor(ctx, node, b, dtype)
    r = ctx.emit1("Mod", [a, bs], fmod=1)
    q = ctx.emit1("Div", [a, bs])
    adjust = ctx.emit1("Cast", [_sign_differs(ctx, r, bs, dtype)], to=onnx_dtype(dtype))
    if zero_mask is None:
        ctx.emit("Sub", [q, adjust], outputs)
    else:
        floored = ctx.emit1("Sub", [q, adjust])
        ctx.emit("Where", [zero_mask, ctx.scalar(0, dtype), floored], outputs)


def _float_floor_div(ctx, a, b, dtype, outputs):
    """NumPy's npy_floor_divide, step by step, so results agree bit for bit."""
    m = ctx.emit1("Mod", [a, b], fmod=1)
    div = ctx.emit1("Div", [ctx.emit1("Sub", [a, m]), b])
    adjust = ctx.emit1("Cast", [_sign_differs(ctx, m, b, dtype)], to=onnx_dtype(dtype))
    div = ctx.emit1("Sub", [div, adjust])
    floor = ctx.emit1("Floor", [div])
    round_up = ctx.emit1("Greater", [ctx.emit1("Sub", [div, floor]), ctx.scalar(0.5, dtype)])
    floor = ctx.emit1("Add", [floor, ctx.emit1("Cast", [round_up], to=onnx_dtype(dtype))])
    zero = ctx.emit1("Equal", [b, ctx.scalar(0, dtype)])
    ctx.emit("Where", [zero, ctx.emit1("Div", [a, b]), floor], outputs)


@emits("Mod")
def emit_mod(ctx, node, inputs, outputs):
    (a, b), dtype = inputs, node.outputs[0].dtype
    if dtype in FLOAT_DTYPES:
        m = ctx.emit1("Mod", [a, b], fmod=1)
        fix = _sign_differs(ctx, m, b, dtype)
        ctx.emit("Where", [fix, ctx.emit1("Add", [m, b]), m], outputs)
        return
    zero_mask, bs = _safe_divisor(ctx, node, b, dtype)
    if zero_mask is None:
        ctx.emit("Mod", [a, bs], outputs, fmod=0)
    else:
        m = ctx.emit1("Mod", [a, bs], fmod=0)
        ctx.emit("Where", [zero_mask, ctx.scalar(0, dtype), m], outputs)
