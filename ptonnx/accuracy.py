"""The accuracy bound each float elementwise op meets, stated once.

A bound is against the exact mathematical result (not against PyTensor, which
ptonnx matches separately), over the whole domain of the dtype: every finite
value including subnormals, ±0, ±inf and NaN, unless `domain` says otherwise.
`tests/e2e/test_accuracy.py` asserts these bounds on extreme values and
`python -m audit.accuracy` measures them over a dense sweep
(`audit/results/accuracy.md`).

How an error is measured (`audit/accuracy_reference.errors`):

- In ulp of the dtype at the exact result: |got - exact| / ulp(exact), where
  ulp(v) = 2**(e - p + 1) for 2**e <= |v| < 2**(e + 1), p the significand bits.
  Below the smallest normal the ulp is the subnormal spacing (the smallest
  subnormal), so a result that underflows is measured absolutely in units of
  the smallest subnormal: flushing exp(-100) (float32, 26 subnormal ulps) to 0
  is a 26 ulp error. An exact zero has the subnormal spacing as its ulp.
- NaN must be NaN where the exact result is NaN, and nowhere else. A signalling
  NaN operand may also give NaN where a quiet one does not (pow(1, sNaN)).
- An exact result that is infinite, or at least 2**(emax + 1) (it rounds to
  infinity however accurate the op), must be that infinity. Otherwise a
  returned infinity counts as ±2**(emax + 1), one ulp beyond the largest float.
- Where the exact result rounds to zero, a zero returned has its sign (tanh(-0)
  is -0, and so is -1e-30 * 1e-30 in float32), unless `signed_zero` is False.
- `atol`, `atol_arg_ulp`: an absolute error that is also accepted, as a number
  or in ulp of the argument (0 unless stated). Near a zero of sin or cos the
  exact result hangs on the argument's last bits: an error of one ulp of the
  argument is what rounding the argument itself would cause there.
- The reference is computed 11+ bits more precisely than the dtype (float64 for
  float16/float32, 80-bit long double for float64); `REFERENCE_RESOLUTION` is
  how far a correct result may seem to exceed its bound because of that.

The bounds are correctly rounded for the IEEE 754 basic operations, exact for
rounding and sign operations, and a few ulp for the transcendental functions
(what good math libraries achieve: glibc, CUDA's documented float32 bounds).
Where an onnxruntime kernel falls short, lowering works around it (float32 Log,
Tanh, Log1p, Expm1 and Softplus are computed in float64; float64 Sin/Cos reduce
their argument first); the few per-dtype bounds in `BY_OP_AND_DTYPE` say where
a remaining kernel (float64 Sin, Cos: 3 ulp; Exp in float64 Tanh), onnxruntime's double-rounding
Cast or PyTensor's own algorithm (float `//`) sets the bound, and why.
"""

from __future__ import annotations

import attrs

FLOAT_DTYPES = ("float16", "float32", "float64")


@attrs.frozen
class Bound:
    #: the largest error, in ulp of the dtype at the exact result
    ulp: float
    #: an absolute error that is also accepted
    atol: float = 0.0
    #: an absolute error also accepted, in ulp of the (first) argument
    atol_arg_ulp: float = 0.0
    #: the inputs it holds over; "all" is the whole domain of the dtype
    domain: str = "all"
    #: a zero result must have the exact result's sign
    signed_zero: bool = True
    note: str = ""


CORRECTLY_ROUNDED = Bound(0.5, note="IEEE 754: correctly rounded")
EXACT = Bound(0.0, note="the result is representable: exact")
NO_ZERO_SIGN = "the sign of a zero result may differ (NumPy's and ptonnx's algorithms differ there)"

#: IR op -> the bound it meets in every float dtype
BY_OP: dict[str, Bound] = {
    "Add": CORRECTLY_ROUNDED,
    "Sub": CORRECTLY_ROUNDED,
    "Mul": CORRECTLY_ROUNDED,
    "Div": CORRECTLY_ROUNDED,
    "Reciprocal": CORRECTLY_ROUNDED,
    "Sqrt": CORRECTLY_ROUNDED,
    "Cast": Bound(0.5, note="from float64: correctly rounded"),
    "Mod": Bound(0.5, signed_zero=False, note="fmod is exact and adding the divisor rounds once; a zero has the divisor's sign, as in NumPy"),
    "IntDiv": Bound(
        0.5, signed_zero=False,
        note="floor(a / b); special values (inf, NaN, b = 0) and zero signs are NumPy's",
    ),
    "Neg": EXACT,
    "Abs": EXACT,
    "Sign": EXACT,
    "Floor": EXACT,
    "Ceil": EXACT,
    "Round": EXACT,
    "RoundHalfAwayFromZero": Bound(0.0, note="exact: round(0.49999997) = 0, round(+0) = +0"),
    "Max": Bound(0.0, signed_zero=False, note="exact; NaN propagates; max(-0, +0) may be either zero"),
    "Min": Bound(0.0, signed_zero=False, note="exact; NaN propagates; min(-0, +0) may be either zero"),
    # elementary functions: 2 ulp, what vectorised math libraries guarantee (glibc is under 1)
    "Exp": Bound(2.0),
    "Log": Bound(2.0),
    "Sin": Bound(2.0, atol_arg_ulp=1.0, note="near its zeros: within 1 ulp of the argument"),
    "Cos": Bound(2.0, atol_arg_ulp=1.0, note="near its zeros: within 1 ulp of the argument"),
    "Tanh": Bound(2.0, note="tanh(x) = x for tiny x, not saturated to ±1 before it rounds there"),
    "Erf": Bound(2.0),
    "Pow": Bound(2.0, note="C99 special values: pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN, pow(-1, ±inf) = 1"),
    # composed of an elementary function and one more rounding (Kahan's forms, a division)
    "Log1p": Bound(3.0, note="log1p(x) = x for tiny x; finite up to the largest x"),
    "Expm1": Bound(3.0, note="expm1(x) = x for tiny x; finite up to exp's own overflow threshold"),
    "Sigmoid": Bound(3.0, note="no flushed tail: sigmoid(x) = exp(x) far left, down to the subnormals (2 ulp measured)"),
    "Softplus": Bound(3.0, note="exp(x) far left, x far right, never an overflow in between"),
    # composed in float64 (float16/float32 computed in float64 and rounded once): see lowering/*.py
    "Trunc": EXACT,
    "Exp2": Bound(2.0, note="onnxruntime's Pow(2, x)"),
    "Log2": Bound(3.0, note="log(x) / log(2) as one product"),
    "Log10": Bound(3.0, note="log(x) / log(10) as one product"),
    "Log1mexp": Bound(4.0, note="PyTensor's log1p(-exp(x)) below log(1/2), log(-expm1(x)) above (expm1 is within 3 ulp)"),
    "Tan": Bound(3.0, note="Cephes' rational tan(r) after reducing by pi/2 in three exact parts"),
    "ArcTan": Bound(2.0, note="Cephes' reduction and rational approximation"),
    "ArcTan2": Bound(3.0, note="atan of the smaller over the larger magnitude, then the quadrant; C's special values"),
    "ArcSin": Bound(3.0, note="atan2(x, sqrt((1 - x)(1 + x)))"),
    "ArcCos": Bound(3.0, note="2 atan2(sqrt(1 - x), sqrt(1 + x))"),
    "Sinh": Bound(3.0, note="from expm1 near 0; exp(|x|/2)**2 / 2 far out (finite up to 710.47)"),
    "Cosh": Bound(3.0, note="exp(|x|/2)**2 / 2 far out (finite up to 710.47)"),
    "ArcSinh": Bound(3.0, note="log1p of an exact small argument near 0; log(|x|) + log 2 far out"),
    "ArcCosh": Bound(3.0, note="log1p of an exact small argument near 1; log(x) + log 2 far out"),
    "ArcTanh": Bound(3.0, note="log1p(2|x| / (1 - |x|)) / 2"),
    # special functions (decompositions/special/): float16/float32 computed in float64 and rounded once
    "Erfc": Bound(12.0, note="Cephes: 1 - erf(x) below 1 (cancels up to 5x near 1), exp(-x**2) P(x)/Q(x) above"),
    "GammaLn": Bound(8.0, atol=1e-14, note="relative within 0.007 of its zeros 1 and 2 (Taylor series); below 8 otherwise within 5e-15 absolutely (shift by 4); absolute where the reflection cancels (x < 0, near lgamma's negative zeros)"),
    "Gamma": Bound(32.0, note="Stirling with Pow from 13 on; a product of up to 10 exact factors below"),
    "Psi": Bound(32.0, atol=4e-15, note="relative near its positive zero (a Taylor series there); absolute near the negative zeros"),
    "TriGamma": Bound(8.0, note="every term of the recurrence and series positive"),
    "Erfcx": Bound(16.0, note="Cephes' rational functions from 1 on, the asymptotic series from 50, exp(x**2) erfc(x) below 1 (erfc's 11 ulp near 1)"),
    "Erfinv": Bound(8.0, note="a fitted start and one Halley step on erf(y) - x below 1/2, on erfc(y) - (1 - x) "
                    "(1 - x exact) or log erfc(y) - log(1 - x) above: erf's own error, doubled near x = 0.84"),
    "Erfcinv": Bound(8.0, note="as Erfinv: -erfinv(q - 1) for 1/2 <= q <= 3/2, the log erfc residual for small q "
                     "(relative down to the subnormals: erfcinv(5e-324) = 27.2)"),
    "PolyGamma": Bound(32.0, atol=4e-15, domain="orders 0 <= n <= 170 (NaN above, where n! overflows)",
                       note="orders 0 to 170 (NaN above: n! overflows); n = 0 is Psi; else n! zeta(n + 1, x) by ten "
                       "terms and Euler-Maclaurin; x < 0 by the reflection: relative for odd n, for even n near the "
                       "zeros absolute, within 2e-15 n! zeta(n + 1, 1 - x)"),
    "OwensT": Bound(32.0, note="24-point Gauss-Legendre below ah = 8.6, Q(h)/2 above, Owen's identity for abs(a) > 1 "
                    "(cancels at most 4x): relative also where T is tiny (SciPy's Patefield-Tandy is absolute)"),
    "I0": Bound(4.0, note="Cephes' Chebyshev expansions of exp(-x) I0(x); exp(x) as two halves from 700 (finite up to 713.98)"),
    "I1": Bound(16.0, note="Cephes' Chebyshev expansions, as I0 (14 ulp near 8, where Clenshaw's sum meets the end of "
                "its interval); odd (I1(-0) = -0)"),
    "J0": Bound(8.0, atol=2.5e-16, note="Cephes' (x - r1)(x - r2) R(x**2) below 5, each zero as two doubles (relative at the "
                "first zero, 2.405); Hankel's form beyond with the phase reduced exactly: near the zeros from 5.52 on "
                "absolute, within 6e-16 sqrt(2/(pi x))"),
    "J1": Bound(8.0, atol=2.5e-16, note="as J0: relative up to 5 (first zero 3.832), near the zeros from 7.016 on within "
                "6e-16 sqrt(2/(pi x))"),
    "Ive": Bound(4096.0, domain="orders v >= 0 and integer orders (negative non-integer ones: see the note)",
                 note="exp(-abs(x)) I_v(x): Cephes' i0e/i1e at orders 0 and 1 (11 ulp); below order 25 a power series, or "
                 "Debye's expansion at 25 recurring down: 40 ulp; from 25 on Debye's expansion, whose exponent's rounding "
                 "costs about 4 ulp per unit of ln(result) in magnitude (as SciPy's AMOS). A negative non-integer order "
                 "adds (2/pi) sin(v pi) K_v, computed as one exponential without forming Kve (finite wherever the result is): "
                 "near the zeros of I_-v absolute, within 2e-15 of exp(-x) I_v(x); elsewhere about 4 ulp per unit of "
                 "|ln Kve(-v, x)| + 2x (5100 ulp at v = -1376.4, x = 452); an underflowed result may be +0.0 for -0.0"),
    "Iv": Bound(4096.0, domain="as Ive", note="I_v(x): as Ive without its exp(-abs(x)) (which underflows where I_v does not): "
                "the series and Debye's expansion (its exponent v eta = v (eta - z) + x) directly, elsewhere Ive times "
                "exp(abs(x)) as two halves (finite up to 713.98, as SciPy's iv); PyTensor 3's ive(v, x) * exp(abs(x)) "
                "becomes this op (lifting, ptonnx/lifting/idioms.py)"),
    "Jv": Bound(128.0, atol=1e-15, domain="integer orders n, -100 <= n <= 100 (other orders give NaN)",
                note="integer orders from -100 to 100 (others give NaN): J0, J1; a power series up to 1, Miller's algorithm "
                "below the turning point x = n (relative: 128 ulp), the forward recurrence beyond (near the zeros "
                "absolute: within n 6e-17 of the envelope)"),
    "Kve": Bound(4096.0, note="exp(x) K_v(x): Cephes' k0e/k1e and the closed forms at 1/2, 3/2, else Temme's series, "
                 "the trapezoidal rule and Hankel's expansion for orders mu in [-1/2, 1/2], then the recurrence upwards: "
                 "30 ulp below order 25; from 25 on Debye's expansion: about 4 ulp per unit of ln(result) in magnitude"),
    "GammaInc": Bound(4096.0, note="the smaller of P, Q by Temme's uniform expansion (a >= 20, |x - a| < 0.4 a), the "
                      "series of P or of Q (small x), Legendre's continued fraction (x >= 3); prefactor exp(-a phi) from "
                      "an exact-as-possible a phi: 3 a phi ulp (measured 1700 ulp, 3.7e-13, at a = 2881, x = 1345)"),
    "BetaInc": Bound(4096.0, note="I_x(a, b): DiDonato and Morris' continued fraction bfrac in a Loop (NaN if not "
                     "converged in 40000 trips: a, b beyond ~1e10 near the mean; 0 without it where the prefactor times p + 1, its bound, underflows), power series near the mean with a small "
                     "parameter, 1 - I_{1-x}(b, a) above the mean; prefactor with lambda = a - (a + b) x exact to an ulp: "
                     "measured 2e-13 (tests/e2e/test_betainc.py)"),
    "Hyp2F1": Bound(4096.0, domain="where the series' own error bound is below 5e-13 (NaN elsewhere: z > 1 and z < -19 "
                    "or 0.95 < z < 1 outside polynomials, cancelling series, c - a - b near 0 at z = 1)",
                    note="2F1(a, b; c; z): the Gauss series, Euler's and Pfaff's transformations (the one with the "
                    "smaller carried bound of its rounding errors) in a Loop; Gauss's theorem at z = 1: "
                    "measured 5e-14 (tests/e2e/test_hyp2f1.py)"),
    "BetaIncInv": Bound(4096.0, note="the x with I_x(a, b) = y: Newton's method on the log of the smaller tail in a "
                        "Loop (NaN if not converged in 200 trips), in log x or log(1 - x) within a bracket, BetaInc's "
                        "tails; measured 2.9e-13 relative (a = 1.1e-11, y = 1 - 2.2e-9, x = 3.6e-83: the condition "
                        "~|log x|), near 1 "
                        "1 - x to an ulp of x (tests/e2e/test_betaincinv.py)"),
    "GammaIncC": Bound(4096.0, note="as GammaInc (1 - P or Q, whichever is smaller is computed)"),
    "GammaU": Bound(4096.0, note="Q(a, x) Gamma(a), finite wherever it is (not the product, which underflows or overflows "
                    "first): x**a e**-x / f by the continued fraction, Gamma(1 + a) (-expm1(y) / a - e**y S) by Q's series, "
                    "else the product through logs where Gamma(a) overflows; the exponent a log x - x is computed "
                    "with log x = k log 2 + log1p(m - 1) and an exact product, to about eps (|a log x - x| + a / 2) "
                    "(a plain a log x: 6e-13 at a = 1000, x = 9000; now 5e-15)"),
    "GammaL": Bound(4096.0, note="P(a, x) Gamma(a), finite wherever it is: x**a e**-x / a times P's series, else the "
                    "product (through logs where Gamma(a) overflows)"),
    "GammaIncInv": Bound(4096.0, note="the x with P(a, x) = y: Newton's method in log x (in x for Q beyond max(a, 1)) on the "
                         "log of the smaller tail, in a Loop within a bracket (NaN if not converged in 200 trips); "
                         "measured 1.6e-13 relative, at tiny x (the rounding of log x, ~eps |log x|), "
                         "tests/e2e/test_gammaincinv.py"),
    "GammaIncCInv": Bound(4096.0, note="the x with Q(a, x) = y: as GammaIncInv"),
}

#: (IR op, dtype) -> a bound that differs from the op's in that dtype
BY_OP_AND_DTYPE: dict[tuple[str, str], Bound] = {
    # onnxruntime's float64 kernels, on arguments already reduced (decompositions/elementary/trigonometric.py)
    ("Sin", "float64"): Bound(3.0, atol_arg_ulp=1.0, note="onnxruntime's float64 Sin after Cody-Waite reduction to [-pi/2, pi/2]"),
    ("Cos", "float64"): Bound(3.0, atol_arg_ulp=1.0, note="as sin(x - (k + 1/2) pi), reduced in three exact parts"),
    ("Tan", "float64"): Bound(16.0, note="3 ulp below 2**20; beyond, onnxruntime's Sin(x) / Cos(x): 5 ulp, but 13.4 at "
                              "the hardest reduction case 6381956970095103 * 2**797, next to a pole (NumPy's tan: 17)"),
    ("Erf", "float64"): Bound(3.0, note="Cephes' x T(x**2)/U(x**2) below 1, 1 - erfc(x) above (onnxruntime has no float64 Erf)"),
    ("Tanh", "float64"): Bound(3.0, note="Cephes' rational below 0.625 (1 ulp), 1 - 2 / (exp(2|x|) + 1) above (exp's error)"),
    # PyTensor's (NumPy's) algorithm, which ptonnx follows step by step: (a - fmod(a, b)) / b rounds
    # once before the floor, so quotients near 2**23 (float32) or 2**52 (float64) can be one off
    # onnxruntime's float64 -> float16 Cast rounds through float32 (docs/limits.md, known limits)
    ("Cast", "float16"): Bound(0.5001, note="from float64: rounded twice, through float32, so up to 0.50006 ulp near ties"),
    ("IntDiv", "float32"): Bound(2.0, signed_zero=False, note="NumPy's (a - fmod(a, b)) / b rounds before the floor: one off near 2**23 (float32), 2**52 (float64)"),
    ("IntDiv", "float64"): Bound(2.0, signed_zero=False, note="NumPy's (a - fmod(a, b)) / b rounds before the floor: one off near 2**23 (float32), 2**52 (float64)"),
}

#: (IR op, dtype) pairs onnxruntime cannot run at all: compiling them is a LoweringError
REFUSED: dict[tuple[str, str], str] = {}

#: How far above its bound a correct result may measure, for the reference's own error.
REFERENCE_RESOLUTION = {"float16": 1e-6, "float32": 1e-6, "float64": 1e-2}
#: (IR op, dtype) -> a resolution that differs from the dtype's
REFERENCE_RESOLUTION_BY_OP: dict[tuple[str, str], float] = {}


def bound(op: str, dtype: str) -> Bound:
    """The stated bound of IR op `op` computing in `dtype`."""
    return BY_OP_AND_DTYPE.get((op, dtype)) or BY_OP[op]


def resolution(op: str, dtype: str) -> float:
    return REFERENCE_RESOLUTION_BY_OP.get((op, dtype), REFERENCE_RESOLUTION[dtype])


def meets(op: str, dtype: str, measured_ulp: float) -> bool:
    """Whether a measured error (ulp, after the `atol` floor) is within the stated bound."""
    return measured_ulp <= bound(op, dtype).ulp + resolution(op, dtype)


def table() -> list[tuple[str, str, Bound]]:
    """Every (IR op, dtype, bound), for docs/numerics.md and the audit."""
    return [(op, dtype, bound(op, dtype)) for op in BY_OP for dtype in FLOAT_DTYPES]


def markdown() -> str:
    """The bounds as a Markdown table, one row per op (for docs/numerics.md)."""
    rows = ["| op | float16 | float32 | float64 | note |", "|---|---:|---:|---:|---|"]
    for op in BY_OP:
        cells, notes = [], [BY_OP[op].note] if BY_OP[op].note else []
        for dtype in FLOAT_DTYPES:
            if (op, dtype) in REFUSED:
                cells.append("refused")
                notes.append(f"{dtype}: {REFUSED[op, dtype]}")
                continue
            b = bound(op, dtype)
            floor = f" or {b.atol:g}" if b.atol else f" or {b.atol_arg_ulp:g} ulp(x)" if b.atol_arg_ulp else ""
            cells.append(f"{b.ulp:g}{floor}")
            if (op, dtype) in BY_OP_AND_DTYPE and b.note:
                notes.append(f"{dtype}: {b.note}")
        rows.append(f"| {op} | {' | '.join(cells)} | {'; '.join(notes)} |")
    return "\n".join(rows) + "\n"
