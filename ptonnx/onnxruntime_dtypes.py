"""The one table of compute dtypes: for an (IR op, dtype), what the target runtime computes it in.

Each row says, for the ops and operand dtypes it names, one of three things:

- `compute`: onnxruntime computes it in a wider dtype exactly as NumPy does in this
  one (or has no kernel here): the `legalise` pass computes it there, between Casts;
- `refuse`: onnxruntime cannot run it and no wider dtype helps; `check_lowerable`
  refuses it with the row's reason, unless the user opted in to `narrow`;
- `narrow`: the opt-in (`ptonnx.compile(..., float64_via_float32=True)`): computed in
  this narrower dtype, losing precision by the user's choice.

Readers: `passes/legalise.py` (run last before lowering), `passes/decompose.py` (a
decomposition is written in float64: float16/float32 nodes of an op decomposed in
float64 are widened by the same table) and `lowering/lower.check_lowerable` (the one
refusal site). The reasons for each row are in its `why`.

This module names ops and dtypes only; it imports neither PyTensor nor ONNX.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import attrs

from ptonnx.decompositions import DECOMPOSITIONS
from ptonnx.decompositions.registry import COMPUTE, Decomposition
from ptonnx.ir import get_schema
from ptonnx.ir.core import bodies
from ptonnx.ir.registry import all_schemas
from ptonnx.ir.types import ALL_DTYPES
from ptonnx.onnxruntime_kernels import NO_FLOAT64_KERNEL, RUNTIME_WIDENING

#: every op (a row's `ops` = ANY); ops that move data or own bodies are never widened
ANY = None
#: IR ops that move or convert data and never round: always in their own dtype
EXACT_OPS = frozenset({"Cast", "Identity"})
#: wider integer dtypes, narrowest first (a wrapping op ONNX lacks in a dtype)
WIDER_INTS = {
    "int8": ("int16", "int32", "int64"),
    "int16": ("int32", "int64"),
    "int32": ("int64",),
    "uint8": ("int16", "int32", "int64"),
    "uint16": ("int32", "int64"),
    "uint32": ("int64",),
    "uint64": ("int64",),
}
#: functions composed in float64 only (onnxruntime has few float64 kernels for them and
#: float32 ones of uneven accuracy)
VIA_FLOAT64 = frozenset({
    "Exp2", "Log2", "Log10", "Log1mexp",
})
#: ops that compare (onnxruntime's kernels: float, double, int8, uint8, int32, int64)
COMPARING = frozenset({"ReduceMax", "ReduceMin", "ArgMax", "Sort"})
SMALL_INTS = frozenset({"int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64"})
NARROW_FLOATS = frozenset({"float16", "float32"})


@attrs.frozen(kw_only=True)
class Row:
    """What the runtime does with `ops` on operands of `dtypes`."""

    ops: frozenset[str] | None
    dtypes: frozenset[str]
    why: str
    compute: str | None = None
    refuse: str | None = None
    narrow: str | None = None

    def __attrs_post_init__(self):
        if (self.compute is None) == (self.refuse is None):
            raise ValueError(f"a row computes in a dtype or refuses, one of the two ({self.why})")


@attrs.frozen
class Rule:
    """The row that decides (op, dtype), or the op's own dtype (`compute` None, no refusal)."""

    compute: str | None = None
    refuse: str | None = None
    narrow: str | None = None
    why: str = ""


OWN = Rule()


def _rows() -> tuple[Row, ...]:
    """The table, first match wins (ANY rows last)."""

    rows = [
        Row(ops=frozenset(NO_FLOAT64_KERNEL), dtypes=frozenset({"float64"}), narrow="float32",
            refuse="onnxruntime has no float64 {op} kernel, so this model could not run",
            why="no float64 CPU kernel (onnxruntime_kernels.NO_FLOAT64_KERNEL)"),
        Row(ops=frozenset(op for op, d in DECOMPOSITIONS.items() if d.widen), dtypes=NARROW_FLOATS, compute="float64",
            why="decomposed in float64 and rounded once (decompositions/registry.py)"),
        Row(ops=VIA_FLOAT64, dtypes=NARROW_FLOATS, compute="float64",
            why="composed in float64 and rounded once: onnxruntime's float32 kernels for these are few and uneven"),
        Row(ops=frozenset({"Log", "Tanh", "Log1p", "Expm1", "Softplus"}), dtypes=frozenset({"float32"}), compute="float64",
            why="onnxruntime's float32 Log is 3 ulp off and Tanh 5 ulp (above 1 near 8.6); in float64, rounded once: within 1 ulp"),
        Row(ops=frozenset({"MatMul"}), dtypes=frozenset({"bool", "int8", "int16", "uint8", "uint16", "uint32", "uint64"}),
            compute="int64", why="no MatMul kernel (uint32/uint64 fail on an empty inner axis); int64 products and sums wrap, "
                                  "so the result cast back has NumPy's bits (bool: any term)"),
        Row(ops=frozenset({"Range"}), dtypes=frozenset({"uint64"}),
            refuse="onnxruntime has no uint64 {op} kernel and int64 cannot hold uint64 bounds from 2**63 on; "
                   "make the bounds int64",
            why="no uint64 kernel, and no wider integer dtype"),
        Row(ops=frozenset({"ReduceSum", "ReduceProd", "Range", "CumSum", "CumProd"}), dtypes=SMALL_INTS,
            compute="int64", why="integer sums and products wrap alike in int64; the bits cast back are NumPy's"),
        Row(ops=COMPARING, dtypes=frozenset({"int16", "uint16"}), compute="int32", why="no kernel; int32 compares exactly"),
        Row(ops=COMPARING, dtypes=frozenset({"uint32"}), compute="int64", why="no kernel; int64 compares exactly"),
        Row(ops=frozenset({"IntDiv", "Mod"}), dtypes=frozenset({"int16", "uint16"}), compute="int32",
            why="NumPy's floor division and modulo select through Where, which has no int16/uint16 kernel; the same "
                "values divided in int32 give the same results (INT16_MIN // -1 = 32768 wraps back on the Cast, as "
                "NumPy wraps it)"),
        Row(ops=frozenset({"Add", "Mul", "IntDiv", "Mod", "Max", "Min", "Abs", "Less", "Greater", "LessOrEqual",
                           "GreaterOrEqual"}) | COMPARING, dtypes=frozenset({"bool"}), compute="uint8",
            why="ONNX arithmetic takes no bool; NumPy's bool +, *, max, min, //, %, abs and comparisons are the uint8 "
                "results cast back"),
        *_kernel_gap_rows(),
        *_wrapping_rows(all_schemas()),
        Row(ops=ANY, dtypes=frozenset({"float16"}), compute="float32",
            why="NumPy computes each float16 ufunc in float32 and rounds; onnxruntime runs a chain of float16 ops in "
                "float32 without rounding between them (65 * 65 cast to float32 is 4225, NumPy 4224): explicit Casts "
                "round after every op"),
    ]
    return tuple(rows)


def _kernel_gap_rows() -> Iterable[Row]:
    """IR ops emitted as one ONNX op of their name, where onnxruntime has no kernel for the dtype
    and a wider one gives the same numbers (onnxruntime_kernels.RUNTIME_WIDENING, probed)."""
    for (onnx_op, dtype), wide in sorted(RUNTIME_WIDENING.items()):
        ops = frozenset({onnx_op, "Select"} if onnx_op == "Where" else {onnx_op})
        yield Row(ops=ops, dtypes=frozenset({dtype}), compute=wide, why=f"no {onnx_op} kernel on {dtype}; {wide} gives the same result")


def _wrapping_rows(schemas) -> Iterable[Row]:
    """Wrapping integer ops ONNX does not define on a dtype (Neg of uint8, Pow of int8): computed
    in the narrowest wider integer dtype it allows; the bits cast back are NumPy's."""
    for op, schema in sorted(schemas.items()):
        if not schema.has("wraps"):
            continue
        allowed = schema.allowed(schema.output_vars[0])
        for dtype, wider in WIDER_INTS.items():
            wide = next((w for w in wider if w in allowed), None)
            if dtype not in allowed and wide is not None:
                yield Row(ops=frozenset({op}), dtypes=frozenset({dtype}), compute=wide,
                          why=f"ONNX {op} takes no {dtype}; it wraps, so {wide} cast back gives NumPy's bits")


@functools.cache
def _table() -> tuple[dict[tuple[str, str], Row], dict[str, Row]]:
    by_pair: dict[tuple[str, str], Row] = {}
    by_dtype: dict[str, Row] = {}
    for row in _rows():
        for dtype in row.dtypes:
            if row.ops is ANY:
                by_dtype.setdefault(dtype, row)
            else:
                for op in row.ops:
                    by_pair.setdefault((op, dtype), row)
    return by_pair, by_dtype


def rows() -> tuple[Row, ...]:
    """The rows, in the order they are matched (for docs and tests)."""
    return _rows()


def rule(op: str, dtype: str, *, moves: bool = False) -> Rule:
    """What the runtime does with `op` on `dtype` operands. `moves`: the op moves data or owns
    bodies (layout ops, Loop, If): always its own dtype. A wider compute dtype is followed to the
    end of the chain (float16 Log: float32, then float64), so one Cast each way suffices."""
    if moves or op in EXACT_OPS:
        return OWN
    by_pair, by_dtype = _table()
    row = by_pair.get((op, dtype)) or by_dtype.get(dtype)
    if row is None:
        return OWN
    if row.refuse is not None:
        return Rule(refuse=row.refuse.format(op=op), narrow=row.narrow, why=row.why)
    final, seen = row.compute, {dtype}
    while True:
        seen.add(final)
        nxt = by_pair.get((op, final)) or by_dtype.get(final)
        if nxt is None or nxt.compute is None or nxt.compute in seen:
            return Rule(compute=final, why=row.why)
        final = nxt.compute


def node_rules(node) -> dict[str, Rule]:
    """type variable -> the rule for its dtype, for each variable of `node` a row decides
    (variables naming a dtype themselves, like a condition's `bool`, are never widened)."""

    schema = get_schema(node.op)
    moves = schema.has("layout") or bool(bodies(node))
    variables = (*schema.vars_of_inputs(len(node.inputs)), *schema.vars_of_outputs(len(node.outputs)))
    found: dict[str, Rule] = {}
    for var, value in zip(variables, (*node.inputs, *node.outputs), strict=True):
        if var in ALL_DTYPES or var in found:
            continue
        decided = rule(node.op, value.dtype, moves=moves)
        if decided is not OWN:
            found[var] = decided
    return found


@attrs.frozen
class Carry:
    """A dtype a target has no tensors of, held in a wider one (`passes/carry_dtypes.py`).

    Below 64 bits the values stay the same numbers (a result of a wrapping op is brought back
    below 2**bits by a mask); 64-bit values are held as their bits, so ops that read them in
    order are refused."""

    wide: str
    bits: int
    why: str


#: per lowering target (`lowering.context.TARGETS`), the dtypes it lacks and what carries them
CARRIED: dict[str, dict[str, Carry]] = {
    "onnxruntime": {},
    "iree": {
        "uint32": Carry("int64", 32, "torch-mlir's ONNX importer, IREE's path, refuses unsigned tensors "
                                     "(\"failed to legalize onnx.Cast ... ui32\"); ptonnx's generator computes in uint32"),
        "uint64": Carry("int64", 64, "the same importer; the generator's element counters are uint64"),
    },
}


def decomposed_in(decomposition: Decomposition, dtype: str) -> str | None:
    """The dtype a node of `dtype` is decomposed in (float64, or any float for `any_float`,
    where this table puts it), or None to leave it to lowering."""
    if decomposition.own_dtype or decomposition.as_given:
        return dtype
    compute = rule(decomposition.op, dtype).compute or dtype
    if decomposition.any_float:
        return compute if compute.startswith("float") else None
    return COMPUTE if compute == COMPUTE else None
