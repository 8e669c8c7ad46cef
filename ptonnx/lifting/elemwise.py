"""Elemwise, dispatched again on its scalar op; Composite expanded from its scalar graph.

Where PyTensor's scalar op converts its inputs itself (`exp` of an int gives
a float, `/` of ints gives floatX), lifting makes that conversion an explicit
`Cast`, so that the IR's uniform rule (output dtype = promoted input dtype)
holds. Mixed dtypes that PyTensor merely promotes (`x * 2`) are left for the
`unify_dtypes` pass.
"""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytensor.scalar.basic as ps
import pytensor.scalar.math as psm
from pytensor.tensor.elemwise import Elemwise

from ptonnx.errors import LiftingError, UnsupportedOpError
from ptonnx.ir import Value, get_schema
from ptonnx.ir.types import ALL_DTYPES
from ptonnx.lifting.checks import check
from ptonnx.lifting.dispatch import lifts

#: PyTensor scalar op class -> IR op (n-ary Add/Mul are folded left to right)
SCALAR_OPS: dict[type, str] = {
    ps.Add: "Add",
    ps.Sub: "Sub",
    ps.Mul: "Mul",
    ps.TrueDiv: "Div",
    ps.IntDiv: "IntDiv",
    ps.Mod: "Mod",
    ps.Pow: "Pow",
    ps.Maximum: "Max",
    ps.Minimum: "Min",
    ps.Neg: "Neg",
    ps.Abs: "Abs",
    ps.Sign: "Sign",
    ps.Reciprocal: "Reciprocal",
    ps.Exp: "Exp",
    ps.Log: "Log",
    ps.Sqrt: "Sqrt",
    ps.Log1p: "Log1p",
    ps.Expm1: "Expm1",
    psm.Softplus: "Softplus",
    ps.Sin: "Sin",
    ps.Cos: "Cos",
    ps.Tanh: "Tanh",
    psm.Erf: "Erf",
    psm.Sigmoid: "Sigmoid",
    ps.Floor: "Floor",
    ps.Ceil: "Ceil",
    ps.RoundHalfToEven: "Round",
    ps.RoundHalfAwayFromZero: "RoundHalfAwayFromZero",
    ps.LT: "Less",
    ps.GT: "Greater",
    ps.LE: "LessOrEqual",
    ps.GE: "GreaterOrEqual",
    ps.EQ: "Equal",
    ps.NEQ: "NotEqual",
    ps.AND: "And",
    ps.OR: "Or",
    ps.XOR: "Xor",
    ps.Invert: "Not",
    ps.Switch: "Where",
    ps.IsNan: "IsNaN",
    ps.IsInf: "IsInf",
    ps.Tan: "Tan",
    ps.ArcSin: "ArcSin",
    ps.ArcCos: "ArcCos",
    ps.ArcTan: "ArcTan",
    ps.ArcTan2: "ArcTan2",
    ps.Sinh: "Sinh",
    ps.Cosh: "Cosh",
    ps.ArcSinh: "ArcSinh",
    ps.ArcCosh: "ArcCosh",
    ps.ArcTanh: "ArcTanh",
    ps.Exp2: "Exp2",
    ps.Log2: "Log2",
    ps.Log10: "Log10",
    psm.Log1mexp: "Log1mexp",
    ps.Trunc: "Trunc",
    psm.Erfc: "Erfc",
    psm.Erfcx: "Erfcx",
    psm.GammaLn: "GammaLn",
    psm.Gamma: "Gamma",
    psm.Psi: "Psi",
    psm.TriGamma: "TriGamma",
    psm.Erfinv: "Erfinv",
    psm.Erfcinv: "Erfcinv",
    psm.PolyGamma: "PolyGamma",
    psm.Owens_t: "OwensT",
    psm.I0: "I0",
    psm.I1: "I1",
    psm.J0: "J0",
    psm.J1: "J1",
    psm.Ive: "Ive",
    psm.Jv: "Jv",
    psm.Kve: "Kve",
    psm.GammaInc: "GammaInc",
    psm.GammaIncC: "GammaIncC",
    psm.GammaIncInv: "GammaIncInv",
    psm.GammaIncCInv: "GammaIncCInv",
    psm.GammaU: "GammaU",
    psm.GammaL: "GammaL",
    psm.BetaInc: "BetaInc",
    psm.BetaIncInv: "BetaIncInv",
    psm.Hyp2F1: "Hyp2F1",
    **({psm.Iv: "Iv"} if hasattr(psm, "Iv") else {}),  # pytensor 2.x; 3.0 builds ive * exp(|x|) (lifting/idioms.py)
}

#: scalar ops lifted by a rule of their own rather than one IR op
SPECIAL: dict[type, object] = {}

#: scalar ops outside PyTensor known by the SciPy function their `nfunc_spec` names (PyMC's
#: I0e and I1e, in the Rice distribution's logp): that function -> the order of Ive it is
SCALED_BESSEL = {"scipy.special.i0e": 0.0, "scipy.special.i1e": 1.0}


def _special(*classes):
    def decorate(fn):
        for cls in classes:
            SPECIAL[cls] = fn
        return fn

    return decorate


_COMPLEX = "ONNX (opset 18) and onnxruntime have no complex dtype; compute with real and imaginary parts as separate real tensors"
#: scalar op class name -> why ptonnx refuses it, and what to do instead
REFUSED_SCALAR_OPS: dict[str, str] = {
    "Real": _COMPLEX, "Imag": _COMPLEX, "Angle": _COMPLEX, "Complex": _COMPLEX, "Conj": _COMPLEX,
    "ComplexFromPolar": _COMPLEX,
}
#: base classes no graph holds an instance of
ABSTRACT_SCALAR_OPS = frozenset({
    "ScalarOp", "UnaryScalarOp", "BinaryScalarOp", "LogicalComparison", "FixedLogicalComparison",
    "UnaryBitOp", "BinaryBitOp", "ScalarInnerGraphOp",
})


def scalar_op_classes() -> list[type]:
    """Every concrete scalar op class of the installed PyTensor (`pytensor.scalar.basic` and `.math`)."""
    found = {
        obj for module in (ps, psm) for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, ps.ScalarOp) and obj.__name__ not in ABSTRACT_SCALAR_OPS
    }
    return sorted(found, key=lambda c: c.__name__)


def supported_scalar_ops() -> list[str]:
    return sorted({c.__name__ for c in SCALAR_OPS} | {c.__name__ for c in SPECIAL})


def _lookup(table, scalar_op):
    for cls in type(scalar_op).__mro__:
        if cls in table:
            return table[cls]
    return None


def lift_scalar(ctx, scalar_op, inputs: list[Value], out_dtypes: list[str], names: list, where) -> list[Value]:
    """Apply one scalar op elementwise to IR values; `where` names the PyTensor variable for errors."""
    special = _lookup(SPECIAL, scalar_op)
    if special is not None:
        return special(ctx, scalar_op, inputs, out_dtypes, names, where)
    ir_op = _lookup(SCALAR_OPS, scalar_op)
    scaled_bessel = SCALED_BESSEL.get((getattr(scalar_op, "nfunc_spec", None) or ("",))[0])
    if ir_op is None and scaled_bessel is not None and len(inputs) == 1:
        (dtype,) = out_dtypes
        order = Value.constant(np.asarray(scaled_bessel, dtype=dtype))
        return [_apply(ctx, "Ive", [order, ctx.cast(inputs[0], dtype)], dtype, names[0])]
    if ir_op is None:
        reason = next((REFUSED_SCALAR_OPS[c.__name__] for c in type(scalar_op).__mro__ if c.__name__ in REFUSED_SCALAR_OPS), None)
        raise UnsupportedOpError(f"Elemwise{{{scalar_op}}}", where, supported_scalar_ops(), family="scalar ops", reason=reason)
    (out_dtype,) = out_dtypes
    schema = get_schema(ir_op)
    arity = len(schema.input_vars)
    if len(inputs) == 1 and ir_op in ("Add", "Mul"):  # a sum or product of one term (PyMC's AR(1) logp)
        return [ctx.cast(inputs[0], out_dtype)]
    if len(inputs) > arity and arity == 2 and ir_op in ("Add", "Mul"):
        head = reduce(lambda a, b: _apply(ctx, ir_op, [a, b], out_dtype, None), inputs[:-1])
        inputs = [head, inputs[-1]]
    if len(inputs) != arity:
        raise LiftingError(f"{scalar_op} applied to {len(inputs)} inputs at {where}; the IR op {ir_op} takes {arity}")
    return [_apply(ctx, ir_op, inputs, out_dtype, names[0])]


def _apply(ctx, ir_op: str, inputs: list[Value], out_dtype: str, name) -> Value:
    """Emit `ir_op`, first casting inputs where PyTensor's scalar op would convert them."""
    schema = get_schema(ir_op)
    out_var = schema.output_vars[0]
    if out_var not in ALL_DTYPES:
        promoted = schema.var_dtypes([v.type for v in inputs])[out_var]
        if promoted != out_dtype:
            inputs = [
                ctx.cast(v, out_dtype) if var == out_var else v
                for var, v in zip(schema.input_vars, inputs, strict=True)
            ]
    value = ctx.op(ir_op, *inputs, name=name)
    if value.dtype != out_dtype:
        raise LiftingError(
            f"{ir_op} gives {value.dtype} where PyTensor gives {out_dtype} for inputs "
            f"{[v.dtype for v in inputs]}; please report this as a ptonnx bug"
        )
    return value


@_special(ps.Cast)
def _lift_cast(ctx, scalar_op, inputs, out_dtypes, names, where):
    (value,), (dtype,) = inputs, out_dtypes
    return [ctx.cast(value, dtype)]


@_special(ps.Identity)
def _lift_identity(ctx, scalar_op, inputs, out_dtypes, names, where):
    return [inputs[0]]


@_special(ps.Second)
def _lift_second(ctx, scalar_op, inputs, out_dtypes, names, where):
    """fill(a, b): b broadcast with a's shape."""
    a, b = inputs
    b = ctx.cast(b, out_dtypes[0])
    if a.type.shape == b.type.shape and None not in a.shape:  # equal static or named dims: no broadcast
        return [b]
    return [ctx.op("Expand", b, ctx.shape_of(a), name=names[0])]


#: degrees <-> radians: NumPy (and PyTensor's C code) multiply by one rounded constant
_ANGLE_FACTORS = {ps.Deg2Rad: np.pi / 180, ps.Rad2Deg: 180 / np.pi}


@_special(*_ANGLE_FACTORS)
def _lift_angle(ctx, scalar_op, inputs, out_dtypes, names, where):
    """x times pi/180 (or 180/pi), one rounded constant, as NumPy."""
    (x,), (dtype,) = inputs, out_dtypes
    factor = Value.constant(np.asarray(_ANGLE_FACTORS[type(scalar_op)], dtype=dtype))
    return [_apply(ctx, "Mul", [ctx.cast(x, dtype), factor], dtype, names[0])]


@_special(ps.Sqr)
def _lift_sqr(ctx, scalar_op, inputs, out_dtypes, names, where):
    (x,) = inputs
    return [_apply(ctx, "Mul", [x, x], out_dtypes[0], names[0])]


@_special(ps.Clip)
def _lift_clip(ctx, scalar_op, inputs, out_dtypes, names, where):
    """PyTensor's clip: lo where x < lo, else hi where x > hi, else x (lo wins if lo > hi; NaN stays)."""
    x, lo, hi = inputs
    (dtype,) = out_dtypes
    below, above = ctx.op("Less", x, lo), ctx.op("Greater", x, hi)
    upper = _apply(ctx, "Where", [above, hi, x], dtype, None)
    return [_apply(ctx, "Where", [below, lo, upper], dtype, names[0])]


#: comparison class -> IR op
_COMPARISONS = {ps.LT: "Less", ps.LE: "LessOrEqual", ps.GT: "Greater", ps.GE: "GreaterOrEqual", ps.EQ: "Equal", ps.NEQ: "NotEqual"}
#: IR comparison -> (the same with operands swapped, its result when the left operand is below 0 <= right)
_ORDER = {
    "Less": ("Greater", True), "LessOrEqual": ("GreaterOrEqual", True), "Greater": ("Less", False),
    "GreaterOrEqual": ("LessOrEqual", False), "Equal": ("Equal", False), "NotEqual": ("NotEqual", True),
}
_SIGNED = frozenset({"int8", "int16", "int32", "int64"})


@_special(*_COMPARISONS)
def _lift_comparison(ctx, scalar_op, inputs, out_dtypes, names, where):
    """Comparisons are exact in NumPy, also of a signed integer with a uint64 (which
    promote to float64: `2**63 - 1 < 2**63` would be False there). Such a pair is
    compared as uint64 where the signed operand is >= 0; a negative one decides alone."""
    ir_op = _COMPARISONS[type(scalar_op)]
    a, b = inputs
    if not ({a.dtype, b.dtype} & _SIGNED and "uint64" in (a.dtype, b.dtype)):
        return [_apply(ctx, ir_op, inputs, out_dtypes[0], names[0])]
    if a.dtype == "uint64":
        a, b, ir_op = b, a, _ORDER[ir_op][0]
    if a.const is not None and (a.const >= 0).all():  # a literal such as `u > 0`: exact as uint64
        return [ctx.op(ir_op, ctx.cast(a, "uint64"), b, name=names[0])]
    negative = ctx.op("Less", a, Value.constant(np.zeros((), a.dtype)))
    unsigned = ctx.op(ir_op, ctx.cast(a, "uint64"), b)
    if _ORDER[ir_op][1]:
        result = ctx.op("Or", negative, unsigned, name=names[0])
    else:
        result = ctx.op("And", ctx.op("Not", negative), unsigned, name=names[0])
    return [result]


@_special(ps.Composite)
def _lift_composite(ctx, scalar_op, inputs, out_dtypes, names, where):
    results = lift_inner_graph(ctx, scalar_op, inputs, where)
    for value, name in zip(results, names, strict=True):
        if name and value.producer is not None and value.name is None:
            value.name = name
    return results


def lift_inner_graph(ctx, scalar_op, inputs: list[Value], where) -> list[Value]:
    """The outputs of the scalar graph of `scalar_op` (a Composite, a ScalarLoop's body)
    applied to `inputs`, its nodes lifted into `ctx`."""
    inner = scalar_op.fgraph
    env = dict(zip(inner.inputs, inputs, strict=True))

    def get(var):
        if var in env:
            return env[var]
        if isinstance(var, ps.ScalarConstant):
            env[var] = Value.constant(np.asarray(var.data, dtype=var.type.dtype))
            return env[var]
        raise LiftingError(f"{scalar_op} at {where}: inner variable {var} has no definition")

    for apply in inner.toposort():
        outs = lift_scalar(
            ctx,
            apply.op,
            [get(v) for v in apply.inputs],
            [o.type.dtype for o in apply.outputs],
            [None] * len(apply.outputs),
            where,
        )
        env.update(zip(apply.outputs, outs, strict=True))
    return [get(o) for o in inner.outputs]


#: PyTensor's message when an elementwise op would broadcast a dim it does not know is 1
RUNTIME_BROADCAST = ("Runtime broadcasting not allowed: an input's dim of unknown size is 1 where another "
                     "input's is not. If broadcasting was intended, use `specify_broadcastable` on the input.")


def _shape_root(value: Value) -> Value:
    """The value whose shape `value` has by construction: followed up through elementwise
    ops of one tensor (with scalar constants: `sigmoid(x)`, `2 * exp(x)`) and checks."""
    while (node := value.producer) is not None:
        if node.op == "Check" or get_schema(node.op).family in ("elementwise", "special"):
            tensors = [v for v in node.inputs[:1 if node.op == "Check" else None]
                       if not (v.const is not None and v.const.ndim == 0)]
            if len(tensors) == 1 and tensors[0].type.ndim == value.type.ndim:
                value = tensors[0]
                continue
        break
    return value


def _no_runtime_broadcast(ctx, node, inputs: list[Value]) -> list[Value]:
    """PyTensor broadcasts only a dim its type says is 1 (`broadcastable`: the PyTensor type
    decides, which may know more than the IR's, e.g. of a Loop's stacked values, or less).
    Where the other inputs' sizes on an axis are not known to agree (static and equal, one
    symbolic name, or one shape by construction: `x * sigmoid(x)`), a Check makes them equal
    at run time (PyTensor's ValueError), as its C and Python code do."""
    conds = []
    for axis in range(node.outputs[0].type.ndim):
        sizes = [(var, v) for var, v in zip(node.inputs, inputs, strict=True) if not var.type.broadcastable[axis]]
        known = {v.shape[axis] if var.type.shape[axis] is None else var.type.shape[axis] for var, v in sizes}
        if len(sizes) < 2 or (len(known) == 1 and None not in known) or len({_shape_root(v) for _, v in sizes}) == 1:
            continue
        first = ctx.dim(sizes[0][1], axis)
        conds += [ctx.op("Equal", first, ctx.dim(v, axis)) for _, v in sizes[1:]]
    if not conds:
        return inputs
    names = ", ".join(str(v) for v in node.inputs)
    message = f"{node.op} of {names}: {RUNTIME_BROADCAST}"
    return [check(ctx, inputs[0], conds, message, ValueError), *inputs[1:]]


@lifts(Elemwise)
def lift_elemwise(ctx, node):
    inputs = _no_runtime_broadcast(ctx, node, [ctx.value(v) for v in node.inputs])
    return lift_scalar(
        ctx,
        node.op.scalar_op,
        inputs,
        [o.type.dtype for o in node.outputs],
        [o.name for o in node.outputs],
        node.outputs[0],
    )


@lifts(ps.ScalarOp)
def lift_scalar_node(ctx, node):
    """A scalar op applied to scalars outside an Elemwise (shape arithmetic, Assert conditions)."""
    return lift_scalar(
        ctx,
        node.op,
        [ctx.value(v) for v in node.inputs],
        [o.type.dtype for o in node.outputs],
        [o.name for o in node.outputs],
        node.outputs[0],
    )
