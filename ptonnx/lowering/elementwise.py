"""Elementwise emitters. Ops whose ONNX counterpart has other semantics are
expanded: integer division floors and is safe for a zero divisor (NumPy
gives 0), float `Mod` takes the divisor's sign, `And` on ints is bitwise."""

from __future__ import annotations

from ptonnx.ir import get_schema
from ptonnx.ir.types import FLOAT_DTYPES, SIGNED_INT_DTYPES
from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.float64 import check_float64
from ptonnx.lowering.registry import emits
from ptonnx.runtime_support import RUNTIME_WIDENING

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
def emit_int_div(ctx, node, inputs, outputs):
    (a, b), dtype = inputs, node.outputs[0].dtype
    if dtype in FLOAT_DTYPES:
        return _float_floor_div(ctx, a, b, dtype, outputs)
    zero, minus_one, bs = _safe_divisor(ctx, node, b, dtype)
    r = ctx.emit1("Mod", [a, bs], fmod=1)
    q = ctx.emit1("Div", [a, bs])
    adjust = ctx.emit1("Cast", [_sign_differs(ctx, r, bs, dtype)], to=onnx_dtype(dtype))
    fixes = []  # (mask, value there), applied in order
    if minus_one is not None:  # a // -1 == -a, wrapping like NumPy
        fixes.append((minus_one, ctx.emit1("Sub", [ctx.scalar(0, dtype), a])))
    if zero is not None:
        fixes.append((zero, ctx.scalar(0, dtype)))
    result = ctx.emit("Sub", [q, adjust], 1 if fixes else outputs)[0]
    for k, (mask, value) in enumerate(fixes):
        result = where(ctx, mask, value, result, dtype, outputs if k == len(fixes) - 1 else 1)


def _float_floor_div(ctx, a, b, dtype, outputs):
    """NumPy's npy_floor_divide, step by step, so results agree (up to the sign of a zero)."""
    m = ctx.emit1("Mod", [a, b], fmod=1)
    div = ctx.emit1("Div", [ctx.emit1("Sub", [a, m]), b])
    adjust = ctx.emit1("Cast", [_sign_differs(ctx, m, b, dtype)], to=onnx_dtype(dtype))
    div = ctx.emit1("Sub", [div, adjust])
    floor = ctx.emit1("Floor", [div])
    round_up = ctx.emit1("Greater", [ctx.emit1("Sub", [div, floor]), ctx.scalar(0.5, dtype)])
    floor = ctx.emit1("Add", [floor, ctx.emit1("Cast", [round_up], to=onnx_dtype(dtype))])
    zero = ctx.emit1("Equal", [b, ctx.scalar(0, dtype)])
    where(ctx, zero, ctx.emit1("Div", [a, b]), floor, dtype, outputs)


@emits("Mod")
def emit_mod(ctx, node, inputs, outputs):
    (a, b), dtype = inputs, node.outputs[0].dtype
    if dtype in FLOAT_DTYPES:
        m = ctx.emit1("Mod", [a, b], fmod=1)
        fix = _sign_differs(ctx, m, b, dtype)
        where(ctx, fix, ctx.emit1("Add", [m, b]), m, dtype, outputs)
        return
    _, _, bs = _safe_divisor(ctx, node, b, dtype)
    ctx.emit("Mod", [a, bs], outputs, fmod=0)  # x % 1 == 0 == x % -1 == NumPy's x % 0


@emits("Log1p")
def emit_log1p(ctx, node, inputs, outputs):
    _log1p(ctx, inputs[0], node.outputs[0].dtype, outputs)


def _log1p(ctx, x, dtype, outputs=1) -> str:
    """Kahan's log1p: log(u) * x / (u - 1) with u = 1 + x (x itself where u rounds to 1)."""
    u = ctx.emit1("Add", [x, ctx.scalar(1, dtype)])
    um1 = ctx.emit1("Sub", [u, ctx.scalar(1, dtype)])
    scaled = ctx.emit1("Div", [ctx.emit1("Mul", [ctx.emit1("Log", [u]), x]), um1])
    # u == inf: log(u) is already right (and x / (u - 1) would be nan)
    tiny = ctx.emit1("Equal", [u, ctx.scalar(1, dtype)])
    huge = ctx.emit1("IsInf", [u], detect_negative=0)
    return where(ctx, tiny, x, where(ctx, huge, u, scaled, dtype), dtype, outputs)


@emits("Softplus")
def emit_softplus(ctx, node, inputs, outputs):
    """PyTensor's piecewise softplus (ONNX's Softplus overflows to inf for large inputs)."""
    (x,), dtype = inputs, node.outputs[0].dtype
    e = ctx.emit1("Exp", [x])
    middle = ctx.emit1("Add", [x, ctx.emit1("Exp", [ctx.emit1("Neg", [x])])])
    result = where(ctx, ctx.emit1("Less", [x, ctx.scalar(33.3, dtype)]), middle, x, dtype)
    result = where(ctx, ctx.emit1("Less", [x, ctx.scalar(18, dtype)]), _log1p(ctx, e, dtype), result, dtype)
    where(ctx, ctx.emit1("Less", [x, ctx.scalar(-37, dtype)]), e, result, dtype, outputs)


@emits("Expm1")
def emit_expm1(ctx, node, inputs, outputs):
    """Kahan's expm1: (u - 1) * x / log(u) with u = exp(x); x where u rounds to 1, -1 where u - 1 == -1."""
    (x,), dtype = inputs, node.outputs[0].dtype
    u = ctx.emit1("Exp", [x])
    um1 = ctx.emit1("Sub", [u, ctx.scalar(1, dtype)])
    scaled = ctx.emit1("Div", [ctx.emit1("Mul", [um1, x]), ctx.emit1("Log", [u])])
    one = ctx.emit1("Equal", [u, ctx.scalar(1, dtype)])
    minus_one = ctx.emit1("Equal", [um1, ctx.scalar(-1, dtype)])
    huge = ctx.emit1("IsInf", [u], detect_negative=0)
    result = where(ctx, huge, u, scaled, dtype)
    result = where(ctx, minus_one, um1, result, dtype)
    where(ctx, one, x, result, dtype, outputs)
