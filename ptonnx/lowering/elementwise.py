"""Elementwise emitters. Ops whose ONNX counterpart has other semantics are
expanded: integer division floors and is safe for a zero divisor (NumPy
gives 0), float `Mod` takes the divisor's sign, `And` on ints is bitwise."""

from __future__ import annotations

from ptonnx.ir import get_schema
from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.float64 import check_float64
from ptonnx.lowering.registry import emits
from ptonnx.runtime_support import RUNTIME_WIDENING

#: IR ops that are exactly one ONNX op of the same name and meaning
DIRECT = (
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Neg", "Abs", "Sign", "Reciprocal",
    "Exp", "Log", "Sqrt", "Sin", "Cos", "Floor", "Ceil", "Round",
    "Identity", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Equal", "Where",
)

#: IR logical op -> (ONNX op on bool, ONNX op on integers)
LOGICAL = {
    "And": ("And", "BitwiseAnd"),
    "Or": ("Or", "BitwiseOr"),
    "Xor": ("Xor", "BitwiseXor"),
    "Not": ("Not", "BitwiseNot"),
}




def widened(ctx, op_type: str, inputs: list[str], dtype: str, t_positions, outputs=1, **attributes) -> list[str]:
    """Emit `op_type`, through a wider dtype where onnxruntime has no kernel for `dtype`."""
    wide = RUNTIME_WIDENING.get((op_type, dtype))
    if wide is None:
        return ctx.emit(op_type, inputs, outputs, **attributes)
    args = [ctx.emit1("Cast", [n], to=onnx_dtype(wide)) if i in t_positions else n for i, n in enumerate(inputs)]
    result = ctx.emit1(op_type, args, **attributes)
    return ctx.emit("Cast", [result], outputs, to=onnx_dtype(dtype))


def where(ctx, cond: str, a: str, b: str, dtype: str, outputs=1) -> str:
    """`Where` that onnxruntime can run for any dtype."""
    return widened(ctx, "Where", [cond, a, b], dtype, (1, 2), outputs)[0]


@emits(*DIRECT)
def emit_direct(ctx, node, inputs, outputs):
    schema = get_schema(node.op)
    out_var = schema.outputs[0]
    t_positions = [i for i, var in enumerate(schema.inputs) if var == out_var]
    widened(ctx, node.op, inputs, node.outputs[0].dtype, t_positions, outputs)


@emits(*LOGICAL)
def emit_logical(ctx, node, inputs, outputs):
    on_bool, on_int = LOGICAL[node.op]
    ctx.emit(on_bool if node.inputs[0].dtype == "bool" else on_int, inputs, outputs)


@emits("Erf")
def emit_erf(ctx, node, inputs, outputs):
    check_float64(node)
    ctx.emit("Erf", inputs, outputs)


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
    where(ctx, positive, up, down, dtype, outputs)


