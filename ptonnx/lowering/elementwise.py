"""Elementwise emitters. Ops whose ONNX counterpart has other semantics are
expanded: integer division floors and is safe for a zero divisor (NumPy
gives 0), float `Mod` takes the divisor's sign, `And` on ints is bitwise."""

from __future__ import annotations

import numpy as np

from ptonnx.errors import LoweringError
from ptonnx.ir import get_schema
from ptonnx.onnxruntime_dtypes import rule
from ptonnx.ir.types import FLOAT_DTYPES
from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.iree_forms import NAN_DROPPING, nan_kept
from ptonnx.lowering.registry import emits
from ptonnx.onnxruntime_kernels import RUNTIME_WIDENING

#: IR ops that are exactly one ONNX op of the same name and meaning
DIRECT = (
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Neg", "Abs", "Sign", "Reciprocal",
    "Exp", "Log", "Sqrt", "Floor", "Ceil", "Round",
    "Identity", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Equal",
)

#: IR logical op -> (ONNX op on bool, ONNX op on integers)
LOGICAL = {
    "And": ("And", "BitwiseAnd"),
    "Or": ("Or", "BitwiseOr"),
    "Xor": ("Xor", "BitwiseXor"),
    "Not": ("Not", "BitwiseNot"),
}


def where(ctx, cond: str, a: str, b: str, dtype: str) -> str:
    """`Where` inside an emitter's expansion.

    onnxruntime's float Where turns a -0.0 taken from `a` into +0.0 (from `b` it
    keeps it): callers pass a value whose zero sign matters as `b`. On an integer
    dtype it has no Where kernel for (uint64: integer division's masks) the selection
    is arithmetic, `b + cond * (a - b)`, exact because it wraps: no Cast, no other
    dtype. `legalise` has widened every other dtype the runtime lacks (`ptonnx/onnxruntime_dtypes.py`).
    """
    if ("Where", dtype) not in RUNTIME_WIDENING:
        return ctx.emit1("Where", [cond, a, b])
    if any(rule(op, dtype).compute for op in ("Add", "Sub", "Mul")) or np.dtype(dtype).kind not in "iu":
        raise LoweringError(f"an expansion selects on {dtype}, which onnxruntime cannot; legalise should have "
                            "widened the node (a ptonnx bug; please report it)")
    picked = ctx.emit1("Mul", [ctx.emit1("Cast", [cond], to=onnx_dtype(dtype)), ctx.emit1("Sub", [a, b])])
    return ctx.emit1("Add", [b, picked])


def _reciprocal_negative(ctx, value: str, dtype: str) -> str:
    """1 / value < 0: value is negative or -0.0 (false for NaN and -inf)."""
    return ctx.emit1("Less", [ctx.emit1("Reciprocal", [value]), ctx.scalar(0, dtype)])


#: how far `may_be_negative_zero` and `zero_sign_unread` follow a value through the graph
_DEPTH = 8
#: how many readers `zero_sign_unread` looks at, in all, before it answers no
_VISITS = 64


def may_be_negative_zero(value, depth: int = _DEPTH) -> bool:
    """Whether an IR value may be -0.0: false for a constant that holds none, for the result of
    an op with the `never_negative_zero` trait (exp(-inf) and erfc(inf) are +0.0), a square x * x,
    a Cast from a non-float, a sum over some axes (NumPy's sum of -0.0s is +0.0), and an `a + b`
    (or `a - b`) whose `a` or `b` (`a`) is never -0.0: IEEE gives -0.0 only for -0.0 + -0.0."""
    if value.const is not None:
        return bool((np.signbit(value.const) & (value.const == 0)).any())
    node = value.producer
    if node is None or depth == 0:
        return True
    if get_schema(node.op).has("layout"):  # a transpose (the layout pass's) moves the values it has
        return may_be_negative_zero(node.inputs[0], depth - 1)
    if get_schema(node.op).has("never_negative_zero"):
        return False
    if node.op == "Mul" and node.inputs[0] is node.inputs[1]:
        return False
    if node.op == "ReduceSum" and node.attrs["axes"]:
        return False
    if node.op in ("Add", "Sub") and node.outputs[0].dtype in FLOAT_DTYPES:
        operands = node.inputs if node.op == "Add" else node.inputs[:1]
        return all(may_be_negative_zero(v, depth - 1) for v in operands)
    return not (node.op == "Cast" and node.inputs[0].dtype not in FLOAT_DTYPES)


def _zero_sign(user, index: int) -> str:
    """What input `index` of `user` does with a zero's sign (its declaration's `zero_sign`): a
    layout op, or a reduction over no axes (the input itself), passes it on."""
    schema = get_schema(user.op)
    if schema.has("layout") or (schema.has("reduces_axes") and not user.attrs["axes"]):
        return "passes"
    return schema.zero_sign[index] if index < len(schema.zero_sign) else ""


def zero_sign_unread(value, depth: int = _DEPTH, budget: list | None = None) -> bool:
    """Whether no reader of `value`, followed to the graph's outputs, can tell -0.0 from +0.0.

    A reader is blind to it (a sum over some axes: `emit_sum_prod` makes onnxruntime's give
    NumPy's +0.0; a comparison; an `a + b` whose other operand is never -0.0, since -0.0 + b is
    +0.0 + b for every such b), or passes it on to its own result's zero sign only (a product, a
    quotient's numerator, a selection's branch, a layout op), whose readers are then asked. A
    log-density's `switch(check, logp, -inf)`, summed, is then one Where with no sign repair.
    At most `_VISITS` readers are looked at: beyond, the answer is no."""
    budget = [_VISITS] if budget is None else budget
    if depth == 0 or value.is_graph_output or value.dtype not in FLOAT_DTYPES:
        return False
    for user, index in value.uses:
        budget[0] -= 1
        if budget[0] < 0:
            return False
        op, sign = user.op, _zero_sign(user, index)
        if sign == "blind":
            continue
        if op in ("Add", "Sub") and (op == "Add" or index == 1) and not may_be_negative_zero(user.inputs[1 - index]):
            continue
        if not (sign == "passes" and all(zero_sign_unread(out, depth - 1, budget) for out in user.outputs)):
            return False
    return True


def _negative_zero(ctx, value: str, dtype: str) -> str:
    """value is -0.0."""
    return ctx.emit1("And", [ctx.emit1("Equal", [value, ctx.scalar(0, dtype)]), _reciprocal_negative(ctx, value, dtype)])


@emits("Where")
def emit_where(ctx, node, inputs):
    """The user's `switch`, keeping the sign of a selected zero.

    onnxruntime's float Where gives +0.0 for a -0.0 taken from its first branch
    (from the second it keeps it), and its optimiser swaps the branches of
    Where(Not(c), a, b). When only one branch can hold a -0.0 (the other is a
    constant without one: PyMC's `switch(check, logp, -inf)`), that branch goes
    second, under a condition no optimiser swaps: Xor(c, true) or Xor(c, false),
    one op on the condition's (often scalar) shape. When both can, the result is
    |selected| times a factor of -1 or 1 (never zero, so its own sign survives):
    -1 where the selected value is negative or is a -0.0.
    """
    cond, a, b = inputs
    dtype = node.outputs[0].dtype
    if dtype not in FLOAT_DTYPES or zero_sign_unread(node.outputs[0]):
        return where(ctx, cond, a, b, dtype)
    signed = [may_be_negative_zero(v) for v in node.inputs[1:]]
    if signed == [False, False]:
        return where(ctx, cond, a, b, dtype)
    if signed == [True, False]:
        return where(ctx, ctx.emit1("Xor", [cond, ctx.const(np.array(True))]), b, a, dtype)
    if signed == [False, True]:
        if ctx.producer_op(cond) == "Not":
            cond = ctx.emit1("Xor", [cond, ctx.const(np.array(False))])
        return where(ctx, cond, a, b, dtype)
    return where_keeping_zero_sign(ctx, cond, a, b, dtype)


def where_keeping_zero_sign(ctx, cond: str, a: str, b: str, dtype: str) -> str:
    """cond ? a : b for two float values that may both be -0.0 (see `emit_where`)."""
    selected = where(ctx, cond, a, b, dtype)
    negative_zero = ctx.emit1("Or", [
        ctx.emit1("And", [cond, _negative_zero(ctx, a, dtype)]),
        ctx.emit1("And", [ctx.emit1("Not", [cond]), _negative_zero(ctx, b, dtype)]),
    ])
    return with_zero_sign(ctx, selected, negative_zero, dtype)


def with_zero_sign(ctx, value: str, negative_zero: str, dtype: str) -> str:
    """`value`, but -0.0 where the bool `negative_zero` says a zero result is negative.

    Computed as |value| times -1 or 1: the factors are never zero, so no Where has
    a zero to lose the sign of (onnxruntime's Where gives +0.0 for a -0.0 taken
    from its first branch).
    """
    negative = ctx.emit1("Or", [ctx.emit1("Less", [value, ctx.scalar(0, dtype)]), negative_zero])
    factor = where(ctx, negative, ctx.scalar(-1, dtype), ctx.scalar(1, dtype), dtype)
    return ctx.emit("Mul", [ctx.emit1("Abs", [value]), factor])[0]


def is_negative(ctx, value: str, dtype: str) -> str:
    """value < 0 or value is -0.0 (1 / value < 0); false for NaN."""
    below = ctx.emit1("Less", [value, ctx.scalar(0, dtype)])  # -inf too
    return ctx.emit1("Or", [below, _reciprocal_negative(ctx, value, dtype)])


def plus_zero(ctx, x: str, dtype: str) -> str:
    """x + 0.0: a -0.0 becomes +0.0, every other value stays. As ONNX's variadic Sum, one node:
    onnxruntime's NoopElimination (from ORT_ENABLE_BASIC) drops an Add of a zero constant, -0.0
    and all, and knows no Sum (tests/passes/test_simplify.py holds the signs at every level)."""
    return ctx.emit1("Sum", [x, ctx.scalar(0, dtype)])


def _adds_positive_zero(node) -> int | None:
    """Which input of a float Add is a constant of only +0.0, if one is."""
    if node.op != "Add" or node.outputs[0].dtype not in FLOAT_DTYPES:
        return None
    for i, v in enumerate(node.inputs):
        if v.const is not None and v.const.size and not (v.const != 0).any() and not np.signbit(v.const).any():
            return i
    return None


#: op -> (its identity, which inputs onnxruntime's NoopElimination drops it from: x + 0, 0 + x,
#: x - 0, x * 1, 1 * x, x / 1)
_NOOP_IDENTITY = {"Add": (0.0, (0, 1)), "Sub": (0.0, (1,)), "Mul": (1.0, (0, 1)), "Div": (1.0, (1,))}


def _noop_lookalike(node) -> int | None:
    """The input holding a one-element constant that onnxruntime's NoopElimination (1.32, from
    ORT_ENABLE_BASIC) takes for the identity without being it: it compares the constant rounded
    to float32, so it drops `x * (1 + 1e-9)`, `x / (1 - 3e-8)` and `x + 1e-300` (float64
    constants within 2**-25 of 1, or below float32's least subnormal), and only when the
    constant's rank is at most the other input's."""
    op = _NOOP_IDENTITY.get(node.op)
    if op is None or node.outputs[0].dtype != "float64":  # a float32 or float16 constant rounds to itself
        return None
    identity, positions = op
    for i in positions:
        c = node.inputs[i].const
        if c is not None and c.size == 1 and np.isfinite(c).all():
            value = float(c.reshape(-1)[0])
            # near the identity first: a float64 beyond float32's range would warn in the cast
            if value != identity and abs(value - identity) < 1e-6 and float(np.float32(value)) == identity:
                return i
    return None


@emits(*DIRECT)
def emit_direct(ctx, node, inputs):
    zero = _adds_positive_zero(node)
    if node.op == "Add" and ctx.owed_plus_zero.intersection(inputs):
        # a + (s + 0.0), s a sum owing NumPy's +0.0 (`emit_sum_prod`): never -0.0, as
        # (a + s) + 0.0 is not; every other value is a + s
        return ctx.emit("Sum", [*inputs, ctx.scalar(0, node.outputs[0].dtype)])
    if zero is not None:
        # onnxruntime's basic optimiser drops `x + 0` as a no-op, but -0.0 + 0.0 is +0.0: Sum
        # broadcasts as Add does (`plus_zero`)
        return ctx.emit("Sum", inputs)
    near = _noop_lookalike(node)
    if near is not None:  # the constant one rank above the result: not a no-op candidate, then Squeeze
        rank = node.outputs[0].type.ndim
        args = list(inputs)
        args[near] = ctx.const(node.inputs[near].const.reshape((1,) * (rank + 1)), "near_identity")
        return [ctx.emit1("Squeeze", [ctx.emit1(node.op, args), ctx.ints([0])])]
    if ctx.target == "iree" and node.op in NAN_DROPPING and node.outputs[0].dtype in FLOAT_DTYPES:
        return nan_kept(ctx, node.op, inputs)
    return ctx.emit(node.op, inputs)  # legalise widened the dtypes onnxruntime lacks (Max, Min of int16)


@emits(*LOGICAL)
def emit_logical(ctx, node, inputs):
    on_bool, on_int = LOGICAL[node.op]
    return ctx.emit(on_bool if node.inputs[0].dtype == "bool" else on_int, inputs)


@emits("NotEqual")
def emit_not_equal(ctx, node, inputs):
    return ctx.emit("Not", [ctx.emit1("Equal", inputs)])


@emits("IsNaN", "IsInf")
def emit_is_nan_inf(ctx, node, inputs):
    """On floats the ONNX op; an integer is never NaN or infinite (x != x is all False)."""
    if node.inputs[0].dtype in FLOAT_DTYPES:
        return ctx.emit(node.op, inputs)
    return ctx.emit("Not", [ctx.emit1("Equal", [inputs[0], inputs[0]])])


@emits("Cast")
def emit_cast(ctx, node, inputs):
    return ctx.emit("Cast", inputs, to=onnx_dtype(node.attrs["to"]))


@emits("RoundHalfAwayFromZero")
def emit_round_half_away(ctx, node, inputs):
    """C's round(), which PyTensor's C code calls: floor(|x|), plus 1 where the fraction
    is at least 1/2, with x's sign (a zero too). Exact: |x| - floor(|x|) does not round.
    (PyTensor's Python implementation, floor(x + 0.5), rounds 0.49999997 up in float32
    and odd integers above 2**52 up in float64, and gives -0 for +0.)"""
    (x,), dtype = inputs, node.outputs[0].dtype
    magnitude = ctx.emit1("Abs", [x])
    whole = ctx.emit1("Floor", [magnitude])
    up = ctx.emit1("GreaterOrEqual", [ctx.emit1("Sub", [magnitude, whole]), ctx.scalar(0.5, dtype)])
    rounded = ctx.emit1("Add", [whole, ctx.emit1("Cast", [up], to=onnx_dtype(dtype))])
    return with_zero_sign(ctx, rounded, is_negative(ctx, x, dtype), dtype)


@emits("Trunc")
def emit_trunc(ctx, node, inputs):
    """Round towards zero: floor(|x|) with x's sign (-0.5 gives -0.0, as NumPy)."""
    (x,), dtype = inputs, node.outputs[0].dtype
    whole = ctx.emit1("Floor", [ctx.emit1("Abs", [x])])
    return with_zero_sign(ctx, whole, is_negative(ctx, x, dtype), dtype)


@emits("Select")
def emit_select(ctx, node, inputs):
    """onnxruntime's Where as it is (a -0.0 from the first branch comes out +0.0, as `Select` says)."""
    return where(ctx, *inputs, node.outputs[0].dtype)


#: IR ops that are one ONNX op of another name or with attributes: onnxruntime's kernel as it is
KERNELS = {
    "FMod": ("Mod", {"fmod": 1}),
    "SinKernel": ("Sin", {}),
    "CosKernel": ("Cos", {}),
    "Erf": ("Erf", {}),  # float64 Erf is decomposed (onnxruntime has no float64 kernel)
}


@emits(*KERNELS)
def emit_kernel(ctx, node, inputs):
    op_type, attributes = KERNELS[node.op]
    return ctx.emit(op_type, inputs, **attributes)
