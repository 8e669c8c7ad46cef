"""Compute dtypes: an IR op whose dtype onnxruntime cannot compute exactly as NumPy does
is emitted in a wider dtype, with Casts around it, one IR node at a time.

- float16: onnxruntime's CPU provider has float16 kernels for few ops; for the
  others it inserts Casts to float32 itself and then drops the Casts between
  consecutive ops, so a chain runs in float32 without rounding in between
  (`cast(h * h, "float32")` with h = 65 gives 4225; NumPy 4224). NumPy computes
  each float16 ufunc in float32 and rounds the result to float16: emitting
  every float16 op as exactly that (Cast, the float32 op, Cast back) gives
  NumPy's numbers, and explicit Casts are kept at every optimisation level.
- float32 functions whose onnxruntime kernel is more than 2 ulp off (Log 3 ulp,
  Tanh 5 ulp and above 1 near x = 8.6) or that compose such a kernel (Log1p,
  Expm1, Softplus) are computed in float64 and rounded once: within 1 ulp.
- MatMul on integers other than int32/int64, and on bool: onnxruntime has no
  kernel, or (uint32/uint64) fails on an empty inner axis; int64 products and sums
  wrap modulo 2**64, so the result cast back has NumPy's bits (bool: any term).
- Reductions: integer sums and products in int64 (they wrap alike); Max, Min and
  ArgMax of int16/uint16 in int32, of uint32 in int64, of bool in uint8 (exact).
- bool: ONNX arithmetic takes no bool. NumPy's bool `+`, `*`, maximum, minimum,
  `//`, `%`, abs and comparisons equal the uint8 results cast back to bool.
"""

from __future__ import annotations

from types import SimpleNamespace

from ptonnx.ir import Value, get_schema
from ptonnx.ir.types import ALL_DTYPES
from ptonnx.lowering.context import onnx_dtype

#: IR ops that move or convert data and never round: emitted in their own dtype
EXACT_OPS = frozenset({"Cast", "Identity"})
#: dtypes whose MatMul is computed in int64
MATMUL_VIA_INT64 = frozenset({"bool", "int8", "int16", "uint8", "uint16", "uint32", "uint64"})

#: integer reductions computed in int64 (wrapping: the bits cast back are NumPy's)
INTS_VIA_INT64 = frozenset({"int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64"})
#: ops that compare (onnxruntime's kernels: float, double, int8, uint8, int32, int64)
ORDERED = frozenset({"ReduceMax", "ReduceMin", "ArgMax", "Sort"})
#: functions composed in float64 only (onnxruntime has few float64 kernels for them and
#: float32 ones of uneven accuracy): float16/float32 are computed in float64 and rounded once
VIA_FLOAT64 = frozenset({
    "Tan", "ArcSin", "ArcCos", "ArcTan", "ArcTan2", "Sinh", "Cosh", "ArcSinh", "ArcCosh", "ArcTanh",
    "Exp2", "Log2", "Log10", "Log1mexp",
})  # the special functions are decompositions, which widen themselves (decompositions/registry.py)
#: (IR ops the rule covers, None for every op that computes; operand dtypes; compute dtype); first match wins
COMPUTE_DTYPES = (
    (VIA_FLOAT64, frozenset({"float16", "float32"}), "float64"),
    (None, frozenset({"float16"}), "float32"),
    (frozenset({"MatMul"}), MATMUL_VIA_INT64, "int64"),
    (frozenset({"Log", "Tanh", "Log1p", "Expm1", "Softplus"}), frozenset({"float32"}), "float64"),
    (frozenset({"ReduceSum", "ReduceProd", "Range", "CumSum", "CumProd"}), INTS_VIA_INT64, "int64"),
    (ORDERED, frozenset({"int16", "uint16"}), "int32"),
    (ORDERED, frozenset({"uint32"}), "int64"),
    (frozenset({"Add", "Mul", "IntDiv", "Mod", "Max", "Min", "Abs", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) | ORDERED,
     frozenset({"bool"}), "uint8"),
)


def compute_dtype(op: str, dtype: str) -> str | None:
    """The dtype IR op `op` on `dtype` operands is emitted in, or None for its own."""
    if get_schema(op).has("layout") or op in EXACT_OPS:
        return None
    return next((wide for ops, dtypes, wide in COMPUTE_DTYPES if dtype in dtypes and (ops is None or op in ops)), None)


def _compute_dtypes(node) -> dict[str, str]:
    """type variable -> compute dtype, for the variables of `node` that need one."""
    schema = get_schema(node.op)
    variables = (*schema.vars_of_inputs(len(node.inputs)), *schema.vars_of_outputs(len(node.outputs)))
    wide: dict[str, str] = {}
    for var, value in zip(variables, (*node.inputs, *node.outputs)):
        if var not in ALL_DTYPES and var not in wide:
            target = compute_dtype(node.op, value.dtype)
            if target is not None:
                wide[var] = target
    return wide


def _retyped(value: Value, dtype: str) -> Value:
    const = None if value.const is None else value.const.astype(dtype)
    return Value(value.type.with_dtype(dtype), value.name, const=const)


def names(result) -> list[str]:
    """An emitter's result as a list of ONNX names (an emitter may return one name)."""
    return [result] if isinstance(result, str) else list(result)


def legalised(emitter):
    """Wrap `emitter` so that it sees (and emits) the node in its compute dtype."""

    def emit(ctx, node, inputs):
        wide = _compute_dtypes(node)
        if not wide:
            return names(emitter(ctx, node, inputs))
        schema = get_schema(node.op)
        variables = schema.vars_of_inputs(len(node.inputs))
        new_inputs, new_names = [], []
        for var, v, name in zip(variables, node.inputs, inputs):
            if var in wide and v.dtype != wide[var]:
                new_inputs.append(_retyped(v, wide[var]))
                if v.const is not None:  # converted now, not by a Cast at run time
                    new_names.append(ctx.const(new_inputs[-1].const, f"{name}_{wide[var]}"))
                else:
                    new_names.append(ctx.emit1("Cast", [name], hint=f"{name}_{wide[var]}", to=onnx_dtype(wide[var])))
            else:
                new_inputs.append(v)
                new_names.append(name)
        out_vars = schema.vars_of_outputs(len(node.outputs))
        new_outputs = [_retyped(v, wide[var]) if var in wide else v for var, v in zip(out_vars, node.outputs)]
        view = SimpleNamespace(op=node.op, attrs=node.attrs, name=node.name, source=node.source,
                               inputs=tuple(new_inputs), outputs=tuple(new_outputs))
        results = names(emitter(ctx, view, new_names))
        return [
            ctx.emit1("Cast", [r], to=onnx_dtype(v.dtype)) if var in wide and v.dtype != wide[var] else r
            for var, v, r in zip(out_vars, node.outputs, results)
        ]

    emit.__wrapped__ = emitter
    return emit
