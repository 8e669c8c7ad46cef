"""Exact or high-precision references for ptonnx's float ops, the ulp error
measure of `ptonnx.accuracy`, and the PyTensor expression a user writes for each op.

A float16 or float32 op is referenced in float64 and a float64 op in the x87
80-bit long double (64-bit significand): both carry 11+ more bits than the op,
and NumPy's long double exp/log/log1p/expm1/sin/cos/tanh/sqrt/power were checked
against mpmath at 200 bits to within 1e-3 float64 ulp (`python -m audit.accuracy
--check-reference`, which needs mpmath). Floor division is exact (Python
fractions). The special functions' float64 references come from mpmath at 100 bits,
their float16/float32 references from SciPy in float64.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytensor.tensor as pt
import scipy.special

from references import bessel_reference, gamma_inc_reference, special_reference
from ptonnx.accuracy import FLOAT_DTYPES, Bound, bound

#: The precision each dtype's reference is computed in.
HI = {"float16": np.float64, "float32": np.float64, "float64": np.longdouble}

#: True where this machine's long double is the 80-bit format (x86-64): else no float64 reference.
HAVE_FLOAT64_REFERENCE = np.finfo(np.longdouble).nmant >= 63


def _sigmoid(x):
    return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))


def _softplus(x):
    return np.where(x > 0, x + np.log1p(np.exp(-x)), np.log1p(np.exp(x)))


def _round_half_away(x):
    return np.copysign(np.floor(np.abs(x) + np.asarray(0.5, x.dtype)), x)


def _mpmath(fn, limits):
    """`fn` of mpmath at 100 bits on each element, as long doubles; `limits(x)` gives the
    value far out (mpmath overflows there) or None."""
    import mpmath

    def one(x):
        if not np.isfinite(x) or x == 0:  # from SciPy (mpmath has no -0.0, and poles at 0)
            return np.longdouble(np.nan)
        far = limits(float(x))
        if far is not None:
            return np.longdouble(far)
        with mpmath.workprec(100):
            return np.longdouble(mpmath.nstr(fn(mpmath.mpf(float(x))), 25, min_fixed=1, max_fixed=0))

    return np.frompyfunc(one, 1, 1)


def _scipy_f64(name: str, x: np.ndarray) -> np.ndarray:
    if name == "polygamma":  # SciPy's trigamma takes time proportional to |x| for x < 0: reflect
        with np.errstate(all="ignore"):
            r = x - np.round(x)
            reflected = np.pi**2 / np.sin(np.pi * r) ** 2 - scipy.special.polygamma(1, np.where(x < 0, 1 - x, 1.0))
            reflected = np.where((r == 0) | (x == -np.inf), np.inf, reflected)
            return np.where(x < 0, reflected, scipy.special.polygamma(1, np.where(x < 0, 1.0, x)))
    return getattr(scipy.special, name)(x)


def _special(scipy_name: str, mp_fn, limits=lambda x: None):
    """SciPy's float64 function for the float16/float32 references (far more precise than
    they), mpmath at 100 bits for float64's; NaN, ±inf and far-out values from SciPy."""

    def reference(x):
        f64 = _scipy_f64(scipy_name, x.astype(np.float64))
        if x.dtype != np.longdouble:
            return f64.astype(x.dtype)
        import mpmath

        fn = getattr(mpmath, mp_fn) if isinstance(mp_fn, str) else mp_fn(mpmath)
        hi = _mpmath(fn, limits)(x).astype(np.longdouble)
        return np.where(np.isfinite(x) & (x != 0), hi, f64.astype(np.longdouble))  # mpmath has no -0.0

    return reference


def _erfcx_asymptotic(x):
    """Three terms, exact to 1e-25 beyond 1e4 (mpmath's exp(x*x) erfc(x) loses log2(x*x) bits there)."""
    w = 1 / (2 * x * x)
    return (1 - w + 3 * w * w) / (x * np.sqrt(np.longdouble(np.pi)))


def _pole_or_none(value):
    """At the non-positive integers (and beyond 2**53, where every float is one): `value`."""
    return lambda x: value if x <= 0 and x == np.floor(x) else None


_gammaln = _special("gammaln", lambda mp: lambda t: mp.loggamma(t) if t > 0 else mp.log(abs(mp.gamma(t))), _pole_or_none(np.inf))
_gamma = _special("gamma", "gamma", lambda x: _pole_or_none(np.nan)(x) if x < 0 else np.inf if x > 172 else None)
_psi = _special("psi", "digamma", _pole_or_none(np.nan))


def _trigamma_mp(mp):
    """mpmath's psi(1, t), which is very slow for large |t| and fails for tiny t: there,
    three terms of the asymptotic series (exact to 1e-30 beyond 1e6), 1/t**2 + pi**2/6,
    and the reflection formula for t < 0."""

    def asymptotic(t):
        return 1 / t + 1 / (2 * t * t) + 1 / (6 * t**3)

    def positive(t):
        if t < 1e-20:
            return 1 / (t * t) + mp.pi**2 / 6
        return asymptotic(t) if t > 1e6 else mp.psi(1, t)

    def trigamma(t):
        if t < 0:
            return mp.pi**2 / mp.sinpi(t) ** 2 - positive(1 - t)  # sinpi: pi * t would lose bits near poles
        return positive(t)

    return trigamma


def _trigamma(x):
    return _special("polygamma", _trigamma_mp, _pole_or_none(np.inf))(x)


_erf = _special("erf", "erf", lambda x: np.sign(x) if abs(x) > 30 else None)
_erfc = _special("erfc", "erfc", lambda x: 0.0 if x > 30 else 2.0 if x < -30 else None)
_erfcx = _special(
    "erfcx", lambda mp: lambda t: mp.exp(t * t) * mp.erfc(t),
    lambda x: _erfcx_asymptotic(np.longdouble(x)) if x > 1e4 else np.inf if x < -30 else None,
)


def _mod(a, b):
    """NumPy's remainder, in the reference precision: fmod is exact, the `+ b` rounds once."""
    m = np.fmod(a, b)
    m = np.where((m != 0) & ((m < 0) != (b < 0)), m + b, m)
    return np.where(m == 0, np.copysign(np.zeros_like(m), b), m)


def _to_hi(n: int, hi) -> np.generic:
    """An integer of any size in `hi`, truncated to 64 significant bits."""
    shift = max(abs(n).bit_length() - 64, 0)
    top = abs(n) >> shift
    value = np.ldexp(hi(top >> 32) * hi(2.0**32) + hi(top & 0xFFFFFFFF), shift)
    return -value if n < 0 else value


def _floor_divide(a, b):
    """floor(a / b) exactly where a, b are finite and b != 0; NumPy's special values elsewhere."""
    hi = a.dtype.type
    out = np.floor_divide(a, b)
    for i in np.flatnonzero(np.isfinite(a) & np.isfinite(b) & (b != 0)):
        fa, fb = Fraction(*a.flat[i].as_integer_ratio()), Fraction(*b.flat[i].as_integer_ratio())
        n = fa // fb
        out.flat[i] = _to_hi(n, hi) if n else np.copysign(hi(0), out.flat[i])
    return out


def _log1mexp(x):
    """log(1 - exp(x)), each branch exact where the other cancels."""
    return np.where(x < -np.log(x.dtype.type(2)), np.log1p(-np.exp(x)), np.log(-np.expm1(x)))


#: IR op -> reference function on arrays in the reference precision
REFERENCE = {
    "Tan": np.tan, "ArcSin": np.arcsin, "ArcCos": np.arccos, "ArcTan": np.arctan, "ArcTan2": np.arctan2,
    "Sinh": np.sinh, "Cosh": np.cosh, "ArcSinh": np.arcsinh, "ArcCosh": np.arccosh, "ArcTanh": np.arctanh,
    "Exp2": np.exp2, "Log2": np.log2, "Log10": np.log10, "Log1mexp": _log1mexp, "Trunc": np.trunc,
    "Erfc": _erfc, "Erfcx": _erfcx, "GammaLn": _gammaln, "Gamma": _gamma, "Psi": _psi, "TriGamma": _trigamma,
    "Exp": np.exp, "Log": np.log, "Sqrt": np.sqrt, "Log1p": np.log1p, "Expm1": np.expm1,
    "Softplus": _softplus, "Sigmoid": _sigmoid, "Tanh": np.tanh, "Sin": np.sin, "Cos": np.cos,
    "Erf": _erf, "Reciprocal": lambda x: 1 / x, "Neg": np.negative, "Abs": np.abs, "Sign": np.sign,
    "Floor": np.floor, "Ceil": np.ceil, "Round": np.rint, "RoundHalfAwayFromZero": _round_half_away,
    "Cast": lambda x: x,
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Pow": np.power,
    "Max": np.maximum, "Min": np.minimum, "IntDiv": _floor_divide, "Mod": _mod,
}

#: IR op -> the PyTensor expression a user writes for it
BUILD = {
    "Tan": pt.tan, "ArcSin": pt.arcsin, "ArcCos": pt.arccos, "ArcTan": pt.arctan, "ArcTan2": pt.arctan2,
    "Sinh": pt.sinh, "Cosh": pt.cosh, "ArcSinh": pt.arcsinh, "ArcCosh": pt.arccosh, "ArcTanh": pt.arctanh,
    "Exp2": pt.exp2, "Log2": pt.log2, "Log10": pt.log10, "Log1mexp": pt.log1mexp, "Trunc": pt.trunc,
    "Erfc": pt.erfc, "Erfcx": pt.erfcx, "GammaLn": pt.gammaln, "Gamma": pt.gamma, "Psi": pt.psi, "TriGamma": pt.tri_gamma,
    "Exp": pt.exp, "Log": pt.log, "Sqrt": pt.sqrt, "Log1p": pt.log1p, "Expm1": pt.expm1,
    "Softplus": pt.softplus, "Sigmoid": pt.sigmoid, "Tanh": pt.tanh, "Sin": pt.sin, "Cos": pt.cos,
    "Erf": pt.erf, "Reciprocal": pt.reciprocal, "Neg": lambda x: -x, "Abs": abs, "Sign": pt.sign,
    "Floor": pt.floor, "Ceil": pt.ceil, "Round": lambda x: pt.round(x, mode="half_to_even"),
    "RoundHalfAwayFromZero": lambda x: pt.round(x, mode="half_away_from_zero"),
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "Div": lambda a, b: a / b, "Pow": lambda a, b: a**b, "Max": pt.maximum, "Min": pt.minimum,
    "IntDiv": lambda a, b: a // b, "Mod": lambda a, b: a % b,
}

BINARY = frozenset({"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "IntDiv", "Mod", "ArcTan2"})

#: the Bessel functions (references/bessel_reference.py); Ive, Jv, Kve take (order, x)
BESSEL_UNARY = ("I0", "I1", "J0", "J1")
ORDERED = frozenset({"Ive", "Iv", "Jv", "Kve"})
REFERENCE.update({op: functools.partial(bessel_reference.reference, op) for op in (*BESSEL_UNARY, *ORDERED - {"Iv"})})
REFERENCE["Iv"] = bessel_reference.iv
BUILD.update({"I0": pt.i0, "I1": pt.i1, "J0": pt.j0, "J1": pt.j1, "Ive": pt.ive, "Iv": pt.iv, "Jv": pt.jv, "Kve": pt.kve})
BINARY = BINARY | ORDERED

#: Erfinv, Erfcinv, PolyGamma (order, x) and OwensT (h, a) (references/special_reference.py)
REFERENCE.update({"Erfinv": special_reference.erfinv, "Erfcinv": special_reference.erfcinv,
                  "PolyGamma": special_reference.polygamma, "OwensT": special_reference.owens_t})
BUILD.update({"Erfinv": pt.erfinv, "Erfcinv": pt.erfcinv, "PolyGamma": pt.polygamma, "OwensT": pt.owens_t})
BINARY = BINARY | {"PolyGamma", "OwensT"}
#: the incomplete gamma functions (references/gamma_inc_reference.py), operands (a, x)
REFERENCE.update({"GammaInc": gamma_inc_reference.gammainc, "GammaIncC": gamma_inc_reference.gammaincc,
                  "GammaL": gamma_inc_reference.gamma_lower, "GammaU": gamma_inc_reference.gamma_upper})
BUILD.update({"GammaInc": pt.gammainc, "GammaIncC": pt.gammaincc, "GammaL": pt.gammal, "GammaU": pt.gammau})
BINARY = BINARY | set(gamma_inc_reference.OPS)
#: op -> a function of the operands giving an absolute error its bound also accepts (its note says which)
ABSOLUTE_FLOORS = {"PolyGamma": special_reference.polygamma_floor}
#: ops whose operands are not all of the result's dtype: op -> the dtype of each
INTEGER_OPERANDS = {"PolyGamma": ("int64", None)}
#: op -> (operands) -> the operands moved into the domain its Bound states (orders: Jv's integers
#: |n| <= 100, PolyGamma's 0..170, Ive's without negative non-integers)
DOMAINS = {**bessel_reference.DOMAINS, **special_reference.DOMAINS}


def input_dtypes(op: str, dtype: str) -> tuple[str, ...]:
    """The dtype of each operand when the result is `dtype` (PolyGamma's order is an integer)."""
    fixed = INTEGER_OPERANDS.get(op, (None,) * arity(op))
    return tuple(d or input_dtype(op, dtype) for d in fixed)


def in_domain(op: str, dtype: str, *arrays) -> list[np.ndarray]:
    """`arrays` moved into `op`'s stated domain (`DOMAINS`), each of its operand's dtype."""
    moved = DOMAINS.get(op, lambda *a: a)(*arrays)
    with np.errstate(all="ignore"):
        return [np.asarray(a).astype(d) for a, d in zip(moved, input_dtypes(op, dtype), strict=True)]


#: three-operand ops: outside the unary/binary sweep, measured by their own tests (BetaInc: tests/e2e/test_betainc.py)
TERNARY = frozenset({"BetaInc", "BetaIncInv"})

#: four-operand ops, likewise (Hyp2F1: tests/e2e/test_hyp2f1.py)
QUATERNARY = frozenset({"Hyp2F1"})


def arity(op: str) -> int:
    return 4 if op in QUATERNARY else 3 if op in TERNARY else 2 if op in BINARY else 1


def input_dtype(op: str, dtype: str) -> str:
    """The dtype of the op's inputs when its result is `dtype` (a Cast narrows from float64)."""
    return "float64" if op == "Cast" else dtype


def build(op: str, dtype: str, *variables):
    if op == "Cast":
        return pt.cast(variables[0], dtype)
    return BUILD[op](*variables)


def reference(op: str, dtype: str, *arrays) -> np.ndarray:
    """The exact result of `op` on `arrays`, in the reference precision of `dtype`."""
    hi = HI[dtype]
    with np.errstate(all="ignore"):
        args = [np.where(np.isnan(a), hi(np.nan), np.asarray(a).astype(hi)) for a in arrays]
        exact = np.asarray(REFERENCE[op](*args), dtype=hi)
    return exact


def signalling(a: np.ndarray) -> np.ndarray:
    """Where `a` holds a signalling NaN (the significand's top bit clear)."""
    a = np.asarray(a)
    itype = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    quiet_bit = itype(1) << itype(np.finfo(a.dtype).nmant - 1)
    return np.isnan(a) & ((a.view(itype) & quiet_bit) == 0)


def errors(got: np.ndarray, exact: np.ndarray, dtype: str, signed_zero: bool = True):
    """(error in ulp of `dtype`, absolute error) of each `got` against the `exact` result.

    The rules of `ptonnx.accuracy`: NaN must match NaN; an exact result that is
    infinite or at least 2**(emax+1) in magnitude must be that infinity; a
    returned infinity otherwise counts as 2**(emax+1); the ulp is that of the
    exact result, the subnormal spacing below the normal range; where the exact
    result rounds to zero, a zero returned has its sign (where `signed_zero`).
    A mismatch is infinitely wrong.
    """
    fi = np.finfo(dtype)
    hi = exact.dtype.type
    exact = np.asarray(exact)
    top = np.ldexp(hi(1), fi.maxexp)
    with np.errstate(all="ignore"):
        g = np.asarray(got).astype(hi)
        beyond = np.isinf(exact) | (np.abs(exact) >= top)
        g_scored = np.where(np.isinf(g), np.copysign(top, g), g)
        diff = np.abs(g_scored - exact)
        _, e = np.frexp(exact)
        ulp = np.where(exact == 0, hi(fi.smallest_subnormal),
                       np.ldexp(hi(1), np.maximum(e - 1, fi.minexp) - fi.nmant))
        ulps = (diff / ulp).astype(np.float64)
        absolute = diff.astype(np.float64)
    bad = np.isnan(g) != np.isnan(exact)
    bad |= beyond & ~np.isnan(exact) & (g != np.copysign(hi(np.inf), exact))
    if signed_zero:
        rounds_to_zero = np.abs(exact) <= hi(fi.smallest_subnormal) / 2
        bad |= (g == 0) & rounds_to_zero & (np.signbit(g) != np.signbit(exact))
    same = np.isnan(g) & np.isnan(exact) | beyond & (g == np.copysign(hi(np.inf), exact))
    ulps = np.where(same, 0.0, ulps)
    absolute = np.where(same, 0.0, absolute)
    return np.where(bad, np.inf, ulps), np.where(bad, np.inf, absolute)


def scored(op: str, dtype: str, got, exact, args, b: Bound | None = None) -> np.ndarray:
    """The ulp error the bound is checked against: at most the bound where within its absolute floor."""
    b = b or bound(op, dtype)
    ulps, absolute = errors(got, exact, dtype, b.signed_zero)
    floor = np.full(absolute.shape, b.atol)
    if b.atol_arg_ulp:
        with np.errstate(all="ignore"):
            spacing = np.abs(np.spacing(np.abs(np.asarray(args[0]).astype(dtype)))).astype(np.float64)
        floor = np.maximum(floor, b.atol_arg_ulp * spacing)
    if op in ABSOLUTE_FLOORS:
        floor = np.maximum(floor, ABSOLUTE_FLOORS[op](*args))
    ulps = np.where(np.isfinite(ulps) & (absolute <= floor), np.minimum(ulps, b.ulp), ulps)
    # IEEE 754: a signalling NaN operand is an invalid operation, so pow(1, sNaN) may be NaN
    snan = np.any([signalling(a) for a in args if np.asarray(a).dtype.kind == "f"], axis=0)
    return np.where(snan & np.isnan(np.asarray(got)), 0.0, ulps)


def step(values: np.ndarray, k) -> np.ndarray:
    """`values` moved `k` floats away from zero (towards zero for negative `k`), by bit pattern."""
    itype = {2: np.int16, 4: np.int32, 8: np.int64}[values.dtype.itemsize]
    sign = np.signbit(values)
    bits = np.abs(values).view(itype) + np.asarray(k, dtype=itype)
    moved = np.maximum(bits, 0).astype(itype).view(values.dtype)
    return np.where(sign, -moved, moved)


def _neighbours(values, dtype: str, k: int = 3) -> np.ndarray:
    """Each value and the `k` floats either side of it (by bit pattern), both signs."""
    v = np.abs(np.asarray(values, dtype=dtype))
    v = v[np.isfinite(v)]
    itype = {2: np.int16, 4: np.int32, 8: np.int64}[np.dtype(dtype).itemsize]
    bits = v.view(itype)[:, None] + np.arange(-k, k + 1, dtype=itype)[None, :]
    near = bits[bits >= 0].view(dtype)
    return np.concatenate([near, -near])


def thresholds(dtype: str) -> np.ndarray:
    """Inputs where the float ops change regime (overflow, underflow, saturation,
    branch points of PyTensor's formulas, rounding ties, multiples of pi/2), with
    3 neighbours either side and both signs, plus ±0, ±inf and NaN."""
    fi = np.finfo(dtype)
    eps, tiny, sub, big = (float(v) for v in (fi.eps, fi.smallest_normal, fi.smallest_subnormal, fi.max))
    p = fi.nmant + 1
    points = [
        0.0, sub, tiny - sub, tiny, big, 1.0, 2.0, 0.5, 1.5, 2.5, eps, eps / 2, 0.5 - eps / 4,
        np.log(big), np.log(tiny), np.log(sub), np.log(sub) - np.log(2), -np.log(eps), np.log(2 / eps),
        0.5 * np.log(4 / eps), np.sqrt(3 * eps), np.sqrt(eps), np.log(2), 37.0, 18.0, 33.3,
        2.0 ** (p - 1), 2.0**p, 2.0 ** (p + 1), 1 / big, np.sqrt(big), np.sqrt(tiny),
        *(k * np.pi / 2 for k in (1, 2, 3, 4, 1 << 10, 1 << 20, 1 << 30)), 1e22, 6381956970095103 * 2.0**797,
    ]
    with np.errstate(over="ignore"):
        near = _neighbours(np.array(points, dtype=np.float64).astype(dtype), dtype)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=dtype)
    return np.concatenate([near, specials])


def hard_inputs(op: str, dtype: str, rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Inputs where `op` is hard, one array per operand: for Cast, float64 values a
    hair from halfway between two floats of `dtype` (where rounding twice, through
    float32, goes wrong); for binary ops, `hard_pairs`; else none."""
    if arity(op) == 2:
        return list(hard_pairs(op, dtype, rng, n))
    if op != "Cast":
        return [np.zeros(0, input_dtype(op, dtype))]
    fi = np.finfo(dtype)
    with np.errstate(all="ignore"):
        return [_near_ties(dtype, fi, rng, n)]


def _near_ties(dtype, fi, rng, n):
    significand = np.floor(np.ldexp(rng.uniform(1, 2, n), fi.nmant))
    low = np.ldexp(significand, rng.integers(fi.minexp - fi.nmant, fi.maxexp, n) - fi.nmant).astype(dtype).astype(np.float64)
    mid = (low + np.abs(step(low.astype(dtype), 1).astype(np.float64))) / 2
    hair = mid * np.ldexp(1.0, -fi.nmant - 16) * rng.choice([-1, 0, 1], n)  # under half a float32 ulp
    return ((mid + hair) * rng.choice([-1, 1], n))[np.isfinite(mid)]


def hard_pairs(op: str, dtype: str, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Operand pairs where `op` is hard: cancellation, quotients near integers,
    products near overflow and underflow, powers near 1 and at their limits."""
    if op in ORDERED:
        return bessel_reference.hard_pairs(op, dtype, rng, n)
    if op in ("PolyGamma", "OwensT"):
        return special_reference.hard_pairs(op, dtype, rng, n)
    if op in gamma_inc_reference.OPS:
        return gamma_inc_reference.hard_pairs(op, dtype, rng, n)
    fi = np.finfo(dtype)
    ib = fi.maxexp
    x = np.ldexp(rng.uniform(0.5, 1.0, n), rng.integers(-8, 9, n)) * rng.choice([-1, 1], n)
    with np.errstate(all="ignore"):
        if op in ("Add", "Sub", "Max", "Min"):
            a = x.astype(dtype)
            b = step(a, rng.integers(-2, 3, n)) * rng.choice([-1, 1], n).astype(dtype)
        elif op in ("Mul", "Div"):
            a = np.ldexp(np.abs(x), rng.integers(fi.minexp - fi.nmant, ib, n)) * np.sign(x)
            target = rng.choice([fi.max, fi.smallest_normal, fi.smallest_subnormal], n) * rng.uniform(0.5, 2, n)
            b = target / a if op == "Mul" else a / target
            a, b = a.astype(dtype), b.astype(dtype)
        elif op in ("IntDiv", "Mod"):
            b = x.astype(dtype)
            k = np.ldexp(np.floor(rng.uniform(1, 2**10, n)), rng.integers(0, fi.nmant + 4, n))
            a = (k * b.astype(np.float64)).astype(dtype)
            a = step(a, rng.integers(-1, 2, n)) * rng.choice([-1, 1], n).astype(dtype)
        else:  # Pow
            near_one = 1 + rng.choice([-1, 1], n) * np.ldexp(1.0, rng.integers(-fi.nmant - 1, 0, n))
            base = np.where(rng.random(n) < 0.5, near_one, np.abs(x))
            y = np.log(fi.max) / np.log(np.abs(base)) * rng.uniform(-1.05, 1.05, n)
            ints = np.floor(rng.uniform(-40, 40, n))
            neg = rng.random(n) < 0.25
            base, y = np.where(neg, -np.abs(x), base), np.where(neg, ints, y)
            a, b = base.astype(dtype), y.astype(dtype)
    return a, b


__all__ = ["FLOAT_DTYPES", "HI", "REFERENCE", "BUILD", "errors", "scored", "reference", "thresholds"]
