"""What the target runtime (onnxruntime's CPU provider) cannot run, or runs differently
from NumPy, as data.

Shared by lowering (which refuses or works around such models) and passes (which
can rewrite around the gaps); it names ops and dtypes, and imports neither
PyTensor nor ONNX. `KERNEL_QUIRKS` is the table `python -m audit.kernel_audit`
probes from the installed onnxruntime (`audit/results/kernels.md`);
`tests/test_kernel_audit.py` fails when the installed onnxruntime no longer
matches it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the onnxruntime the table was probed on
PROBED_ON = "onnxruntime 1.32.0 (CPU provider, x86-64)"

#: IR ops onnxruntime has no float64 kernel for (FusedConv lowers to a Conv)
NO_FLOAT64_KERNEL = frozenset({"Conv", "FusedConv", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Resize"})

BOTH = ("ORT_DISABLE_ALL", "ORT_ENABLE_ALL")
ENABLE_ALL = ("ORT_ENABLE_ALL",)
LIMITS = "docs/limits.md known limits"


@dataclass(frozen=True)
class Quirk:
    """One way onnxruntime computes an (ONNX op, dtype) other than NumPy does."""

    #: ONNX op type with the attributes that change what it computes ("Mod(fmod=1)"),
    #: or a two-node pattern "A→B"
    op: str
    #: the dtype it computes in; "from->to" for Cast, "a->b->a" for Cast→Cast
    dtype: str
    #: no kernel, invalid-onnx, nan, overflow, underflow, signed-zero, inaccurate,
    #: saturates, no-wrap, wrong, fused-precision, fusion (see references/probe.py)
    kind: str
    #: the onnxruntime graph optimisation levels at which it shows
    levels: tuple[str, ...]
    #: what differs, with the input range where it bites
    description: str
    #: "lowering: <where>", "decompositions: <where>" (the op is not emitted), "onnxruntime_dtypes.py: <row>" or
    #: "docs/limits.md known limits"
    handled_by: str
    #: for "no kernel": the dtype that computes the same numbers exactly
    wider: str | None = None
    #: why it may not show on every machine (a kernel chosen by the CPU's instruction set): the
    #: audit then accepts its absence
    varies: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.op, self.dtype, self.kind)


def _no_kernel(op: str, dtype: str, wider: str, note: str = "") -> Quirk:
    return Quirk(op, dtype, "no kernel", BOTH, f"no CPU kernel for {op} on {dtype}; {wider} gives the same result{note}",
                 "onnxruntime_dtypes.py: the kernel-gap rows (and lowering/elementwise.where for a selection inside a composite emitter)", wider)


#: float16 ops onnxruntime runs in float32 through Casts it inserts, dropping the
#: Cast pairs between consecutive ones (at every optimisation level)
F16_VIA_FLOAT32 = ("Add", "Sub", "Mul", "Div", "Pow", "Reciprocal", "Sqrt", "Exp", "Log", "Sin", "Cos", "Tanh", "Sigmoid", "Erf")

KERNEL_QUIRKS: tuple[Quirk, ...] = (
    # -- no kernel, or not valid opset-18 ONNX --------------------------------------------
    _no_kernel("Max", "int16", "int32"),
    _no_kernel("Max", "uint16", "uint32"),
    _no_kernel("Min", "int16", "int32"),
    _no_kernel("Min", "uint16", "uint32"),
    _no_kernel("Where", "bool", "uint8"),
    _no_kernel("Where", "int16", "int32"),
    _no_kernel("Where", "uint16", "uint32"),
    _no_kernel("Where", "uint64", "int64", " (a pure selection: the bit pattern round-trips)"),
    Quirk("Erf", "float64", "no kernel", BOTH, "no float64 Erf kernel, and no wider dtype",
          "lowering: special/erf.py composes float64 erf from Cephes' rational approximations"),
    Quirk("IsInf(detect_negative=1, detect_positive=1)", "float16", "invalid-onnx", BOTH,
          "opset 18's IsInf takes float and double only (float16 from opset 20)",
          "onnxruntime_dtypes.py: float16 computed in float32; decompositions/elementary/exp_log.py tests x == inf with Equal"),
    # -- single kernels that differ from NumPy --------------------------------------------
    Quirk("Cast", "float64->float16", "inaccurate", BOTH,
          "rounds through float32: 1 ulp off NumPy for float64 values within 2**-29 (relative) above or "
          "below a float16 rounding tie, e.g. 1 + 2**-11 + 2**-40 gives 1.0, NumPy 1.001", LIMITS),
    Quirk("Sigmoid", "float32", "underflow", BOTH,
          "absolute accuracy only (results near 0 are multiples of 2**-24): 0 or 6e-8 for -18 < x < -15.8 and 0 for "
          "all x < -18, where NumPy gives 1.3e-7 down to 1e-45 (sigmoid(-20) = 0, NumPy 2.06e-9)",
          "docs/limits.md known limits (emitted by SiLU/FusedConv lowering; the IR Sigmoid is decomposed in decompositions/elementary/exp_log.py)"),
    Quirk("Sigmoid", "float32", "inaccurate", BOTH,
          "more than 4 ulp off for -18 < x < -1.9 (absolute error up to 1.4e-7; sigmoid(-16) = 6e-8, NumPy 1.1e-7)",
          "docs/limits.md known limits (emitted by SiLU/FusedConv lowering; the IR Sigmoid is decomposed in decompositions/elementary/exp_log.py)"),
    Quirk("Sigmoid", "float64", "underflow", BOTH,
          "0 for x <= -36.74, where NumPy gives 1.1e-16 down to 5e-324 (until x = -745.13)",
          "docs/limits.md known limits (emitted by SiLU lowering; the IR Sigmoid is decomposed in decompositions/elementary/exp_log.py)"),
    Quirk("Sigmoid", "float64", "inaccurate", BOTH,
          "more than 4 ulp off for -36.74 < x < -1.12 (absolute error up to 1.7e-16; sigmoid(-36.7) = 2.2e-16, NumPy 1.15e-16)",
          "docs/limits.md known limits (emitted by SiLU lowering; the IR Sigmoid is decomposed in decompositions/elementary/exp_log.py)"),
    Quirk("Tanh", "float32", "underflow", BOTH, "0 for subnormal |x| <= 1.4e-43 (NumPy: x itself)",
          "decompositions: elementary/hyperbolic.py (the IR Tanh; x for tiny |x|)"),
    Quirk("Tanh", "float32", "inaccurate", BOTH, "up to ~100 ulp off for 7e-45 <= |x| <= 7.1e-37 (subnormal and smallest normal x)",
          "decompositions: elementary/hyperbolic.py (the IR Tanh; x for tiny |x|)"),
    Quirk("Tanh", "float64", "inaccurate", BOTH,
          "up to 9 ulp off for 4.46 <= |x| <= 17.97 (absolute error up to 1e-15; tanh(17.75) = 1.0, NumPy 0.9999999999999992)",
          "decompositions: elementary/hyperbolic.py (the IR Tanh; onnxruntime's Tanh is not used)"),
    Quirk("Sin", "float64", "underflow", BOTH, "±0 at the floats nearest k*pi for 1 <= |x| < 100 (sin(pi) = -0.0, NumPy 1.22e-16)", "decompositions: elementary/trigonometric.py reduces the argument to [-pi/2, pi/2] first (Cody-Waite)"),
    Quirk("Sin", "float64", "inaccurate", BOTH,
          "absolute accuracy near its zeros for 1 <= |x| < 100: up to ~3e5 ulp off within ~0.1 of k*pi "
          "(absolute error up to 6.7e-16); within 3 ulp elsewhere", "decompositions: elementary/trigonometric.py reduces the argument to [-pi/2, pi/2] first (Cody-Waite)"),
    Quirk("Cos", "float64", "underflow", BOTH, "±0 at the floats nearest (k+1/2)*pi for 1 <= |x| < 100 (cos(pi/2) = -0.0, NumPy 6.1e-17)", "decompositions: elementary/trigonometric.py reduces the argument to [-pi/2, pi/2] first (Cody-Waite)"),
    Quirk("Cos", "float64", "inaccurate", BOTH,
          "absolute accuracy near its zeros for 1 <= |x| < 100: up to ~2e5 ulp off within ~0.1 of (k+1/2)*pi "
          "(absolute error up to 6.7e-16); within 3 ulp elsewhere", "decompositions: elementary/trigonometric.py reduces the argument to [-pi/2, pi/2] first (Cody-Waite)"),
    Quirk("Softmax", "float32", "underflow", BOTH,
          "entries below the smallest normal float32 (1.18e-38: exp(x - max(x)) for x - max(x) < -87.3) are 0, "
          "NumPy keeps the subnormal value", LIMITS,
          varies="MLAS picks its softmax kernel by the CPU: on an AVX-512 Xeon (onnxruntime 1.32.0) the subnormals are kept"),
    *(
        Quirk("Where", dtype, "signed-zero", BOTH,
              "a -0.0 taken from the first branch (X) comes out +0.0; from the second (Y) it keeps its sign. "
              "onnxruntime's optimiser also swaps the branches of Where(Not(c), a, b)",
              "lowering: elementwise.py emit_where/with_zero_sign (|r| times -1 or 1); internal Wheres pass "
              "sign-sensitive values as Y and never behind a Not")
        for dtype in ("float32", "float64")
    ),
    Quirk("Sign", "float16", "nan", BOTH, "Sign(NaN) = 0, NumPy NaN", "onnxruntime_dtypes.py: float16 is computed in float32, rounded after every op"),
    Quirk("Pow", "int32", "no-wrap", BOTH,
          "computed in double: every result beyond the int32 range is INT_MIN (NumPy wraps: 2**32 -> 0, (-7)**31 -> -265001655)",
          "lowering: integer_pow.py (square-and-multiply in the integer dtype)"),
    Quirk("Pow", "int64", "no-wrap", BOTH, "computed in double: every result beyond the int64 range is INT_MIN (NumPy wraps)",
          "lowering: integer_pow.py (square-and-multiply in the integer dtype)"),
    Quirk("Pow", "int64", "inaccurate", BOTH,
          "computed in double: results and exponents beyond 2**53 are rounded (3**34 = 16677181699666570, NumPy ...569; "
          "(-1)**(2**53 + 1) = 1)", "lowering: integer_pow.py (square-and-multiply in the integer dtype)"),
    # -- two-node patterns ----------------------------------------------------------------
    *(
        Quirk(f"{op}→Cast", "float16", "fused-precision", BOTH,
              f"float16 {op} followed by a Cast to float32 gives {op}'s float32 result, never rounded to float16: "
              "wrong for every input whose exact result is not a float16 (as Cast(Mul(65, 65)) = 4225, NumPy 4224)",
              "onnxruntime_dtypes.py: float16 is computed in float32 between explicit Casts (in the IR)")
        for op in F16_VIA_FLOAT32
    ),
    *(
        Quirk("Neg→Add(+0.0)→Neg", dtype, "signed-zero", ENABLE_ALL,
              "the basic-level optimiser drops `x + 0.0` as a no-op when a node computes x, but -0.0 + 0.0 is +0.0",
              "lowering: elementwise.py emit_direct emits x + 0.0 as Where(x == 0, 0.0, x)")
        for dtype in ("float32", "float64")
    ),
    *(
        Quirk("Transpose→MatMul(1-D x)", dtype, "fusion", ENABLE_ALL,
              "MatMul(Transpose(A), x) and MatMul(x, Transpose(A)) with a 1-D x: the FusedMatMul (transA/transB) "
              "onnxruntime makes gives wrong numbers, for any A", "lowering: tensor.py emit_matmul never emits a 1-D MatMul operand")
        for dtype in ("float32", "float64")
    ),
)

#: (ONNX op, dtype) pairs valid in ONNX that onnxruntime's CPU provider has no
#: kernel for, and the dtype that computes the same result exactly.
RUNTIME_WIDENING: dict[tuple[str, str], str] = {
    (q.op, q.dtype): q.wider for q in KERNEL_QUIRKS if q.kind == "no kernel" and q.wider is not None
}
