"""References for the Bessel functions (I0, I1, J0, J1, Ive, Jv, Kve): mpmath at 100 bits
for float64 (as long doubles), SciPy in float64 for float16/float32 where SciPy is right.

SciPy 1.17 departs from the exact values in places, which these references correct:
i0/i1 overflow from 709.78 (they are finite up to 713.98) and give NaN at ±inf; j0/j1 lose
their phase beyond |x| ~ 1e8 (x - pi/4 rounded); i1(-0.0) is +0.0 (I1 is odd); ive, kve give
NaN at ±inf and for huge orders or arguments, kve(0, subnormal) is inf (it is ~745).
Limits: at ±inf every function is 0 (I0, I1: ±inf), Kve(v, 0) = inf, Ive(-v, 0) = ±inf
for negative non-integer orders (the sign of sin(v pi)). Far out (x > 2 v**2 + 60) Hankel's
expansions (mpmath's own are slow there); for large orders (I: > 1000, K: > 100, where mpmath's K cancels) Debye's, both exact to 1e-20.
SciPy's zeros are recomputed (their signs). Jv outside ptonnx's domain (orders other than the
integers -100..100, where it gives NaN) has NaN for a reference: mpmath does not converge for
huge orders, and the bound does not cover them.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import scipy.special

from ptonnx.decompositions.special.bessel_debye import _polynomials
from ptonnx.decompositions.special.bessel_jv import MAX_ORDER as JV_MAX_ORDER

#: u_k(t) of Debye's expansion, exact (fractions): 16 terms, below 1e-30 from order 100 on
_DEBYE = _polynomials(16)


def _odd_integer(v: float) -> bool:
    return float(v).is_integer() and abs(v) < 2**53 and int(v) % 2 == 1


#: Hankel's expansions from here (x > 2 v**2 + 60): their terms fall below 1e-30 within 80 terms
def _far(v, x) -> bool:
    return x > 2 * v * v + 60


def _hankel(mp, kind: str, v, x):
    """exp(-x) I_v(x) (kind "i") or exp(x) K_v(x) ("k") for large x: Hankel's expansion (I's
    exponentially small second part is below 1e-30 there), summed until a term is below 1e-30."""
    total, term = mp.mpf(1), mp.mpf(1)
    for k in range(1, 200):
        term *= (4 * v * v - (2 * k - 1) ** 2) / (8 * k * x) * (-1 if kind == "i" else 1)
        total += term
        if abs(term) < 1e-30:
            break
    return total / mp.sqrt(2 * mp.pi * x) if kind == "i" else total * mp.sqrt(mp.pi / (2 * x))


def _debye(mp, kind: str, v, x):
    """exp(-x) I_v(x) or exp(x) K_v(x) for a large order v > 0 (x > 0): Debye's expansion, 16 terms."""
    z = x / v
    s = mp.sqrt(1 + z * z)
    t = 1 / s
    # v (eta - z) = v (1/(s + z) - asinh(1/z)): v eta - x cancels for x >> v (v s ~ x + v**2/(2x))
    exponent = v * (1 / (s + z) - mp.asinh(1 / z))
    sign = 1 if kind == "i" else -1
    total = sum(sign**k * sum(mp.mpf(c.numerator) / c.denominator * t**i for i, c in enumerate(u)) / v**k
                for k, u in enumerate(_DEBYE))
    if kind == "i":
        return mp.exp(exponent) / mp.sqrt(2 * mp.pi * v * s) * total
    return mp.sqrt(mp.pi / (2 * v)) * mp.exp(-exponent) / mp.sqrt(s) * total


def _ive(mp, v: float, x: float):
    a = abs(x)
    if math.isinf(v):  # I_v(x) / I_v'(x) -> 0 for any finite x as |v| -> inf through the integers
        return math.nan if math.isinf(x) else 0.0
    if x < 0 and not float(v).is_integer():
        return math.nan  # complex
    sign = -1 if (x < 0 or math.copysign(1, x) < 0) and _odd_integer(v) else 1
    if v < 0 and float(v).is_integer():
        v = -v
    if a == 0:
        if v == 0:
            return 1.0
        if v > 0 or float(v).is_integer():
            return 0.0 * sign
        nu = -v  # I_-nu = I_nu + (2/pi) sin(nu pi) K_nu: K_nu(0) = inf
        return math.copysign(math.inf, math.sin(math.pi * (nu - round(nu))) * (-1) ** (round(nu) % 2))
    if math.isinf(a):
        return 0.0 * sign
    v, a = mp.mpf(v), mp.mpf(a)
    if v < 0:  # I_-n = I_n + (2/pi) sin(n pi) K_n, n = -v: mpmath's I_-n at 100 bits drops its I_n
        n = -v  # part (besseli(-952.69, 666.6) = 4.2e-319 instead of 5.4e-265 exp(666.6)), or does not converge
        return _ive(mp, n, a) + 2 / mp.pi * mp.sinpi(n) * _kve(mp, n, a) * mp.exp(-2 * a)
    if _far(v, a):
        value = _hankel(mp, "i", v, a)
    elif v > 1000:
        value = _debye(mp, "i", v, a)
    else:
        try:
            value = mp.besseli(v, a) * mp.exp(-a)
        except mp.libmp.NoConvergence:  # its 0F1 needs ~x terms (v = 300, x = 9e4): allow them
            value = mp.besseli(v, a, maxterms=10**7) * mp.exp(-a)
    return sign * value


def _kve(mp, v: float, x: float):
    if x < 0:
        return math.nan
    if x == 0 or math.isinf(v):
        return math.inf
    if math.isinf(x):
        return 0.0
    v, x = mp.mpf(abs(v)), mp.mpf(x)
    if _far(v, x):
        return _hankel(mp, "k", v, x)
    if v > 100:  # mpmath's I_-v - I_v cancels: wrong (K_982(745) < 0) or no convergence (K_983(1661))
        return _debye(mp, "k", v, x)
    return mp.besselk(v, x) * mp.exp(x)


def _jv(mp, v: float, x: float):
    if math.isinf(v) or abs(v) > 100 or not float(v).is_integer():
        return math.nan  # outside ptonnx's domain (it gives NaN); mpmath does not converge for huge orders
    if math.isinf(x) or x == 0:
        if x == 0 and v == 0:
            return 1.0
        flip = _odd_integer(v) and (math.copysign(1, x) < 0) != (v < 0)  # J_-n(x) = J_n(-x) = (-1)**n J_n(x)
        return -0.0 if flip else 0.0
    return mp.besselj(mp.mpf(v), mp.mpf(x))


def _i(mp, order: int, x: float):
    """I0 or I1: 1 or x at ±0, ±inf from |x| = 720 on (the overflow is at 713.98)."""
    if x == 0:
        return 1.0 if order == 0 else x
    if abs(x) > 720:
        return math.copysign(math.inf, x) if order else math.inf
    return mp.besseli(order, mp.mpf(x))


_EXACT = {"Ive": _ive, "Kve": _kve, "Jv": _jv, "I0": lambda mp, x: _i(mp, 0, x), "I1": lambda mp, x: _i(mp, 1, x),
          "J0": lambda mp, x: _jv(mp, 0.0, x), "J1": lambda mp, x: _jv(mp, 1.0, x)}


@functools.lru_cache(maxsize=1 << 16)
def _cached(op: str, *keys: str) -> np.longdouble:
    """Cached by the values' hex forms (-0.0 is not 0.0): tests draw the same thresholds again."""
    return _one(op, *(float.fromhex(k) for k in keys))


def _one(op: str, *values: float) -> np.longdouble:
    """mpmath at 100 bits, as a long double."""
    import mpmath

    if any(math.isnan(a) for a in values):
        return np.longdouble(np.nan)
    with mpmath.workprec(100):
        value = _EXACT[op](mpmath, *values)
        if isinstance(value, float):
            return np.longdouble(value)
        with warnings.catch_warnings():  # beyond the long double range: inf
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.longdouble(mpmath.nstr(value, 25, min_fixed=1, max_fixed=0))


def exact(op: str, *args) -> np.ndarray:
    """mpmath at 100 bits on each element, as long doubles."""
    def one(*values):
        return _cached(op, *(float(a).hex() for a in values))
    with np.errstate(over="ignore"):
        return np.frompyfunc(one, len(args), 1)(*args).astype(np.longdouble)


def _j_far(order: np.ndarray, x: np.ndarray) -> np.ndarray:
    """J_n(x), |x| > 1e7, integer n (float64): Hankel's P = 1 - (mu-1)(mu-9)/(2 (8x)**2),
    Q = (mu-1)/(8x), mu = 4n**2, with NumPy's exactly reduced cos x and sin x: within 1e-13
    of the envelope, enough for float16/float32 references (SciPy's phase is wrong there)."""
    a = np.abs(x)
    mu = 4 * order * order
    p = 1 - (mu - 1) * (mu - 9) / (2 * (8 * a) ** 2)
    q = (mu - 1) / (8 * a)
    c = (2 * order + 1) * np.pi / 4  # cos(a - c) = cos a cos c + sin a sin c
    cos, sin = np.cos(a) * np.cos(c) + np.sin(a) * np.sin(c), np.sin(a) * np.cos(c) - np.cos(a) * np.sin(c)
    value = np.sqrt(2 / (np.pi * a)) * (p * cos - q * sin)
    return np.where((x < 0) & (np.mod(order, 2) == 1), -value, value)


def scipy_value(op: str, *args):
    """SciPy's float64 value, and where it cannot be trusted."""
    name = {"I0": "i0", "I1": "i1", "J0": "j0", "J1": "j1", "Ive": "ive", "Kve": "kve", "Jv": "jv"}[op]
    with np.errstate(all="ignore"):
        value = getattr(scipy.special, name)(*args)
        x = args[-1]
        # i0, i1 overflow early; j0, j1, jv lose the phase of large arguments; signed zeros
        far = 700 if op in ("I0", "I1") else 1e7
        doubtful = ~np.isfinite(value) | ~np.isfinite(x) | (np.abs(x) > far) | (x == 0) | (value == 0)
        if len(args) == 2:  # AMOS: NaN for huge orders, inf for kve(0, subnormal)
            doubtful |= ~np.isfinite(args[0]) | (np.abs(args[0]) > 100) | (np.abs(x) < 1e-300)
    return value, doubtful


def reference(op: str, *args) -> np.ndarray:
    """The exact result in the precision of `args` (long double: mpmath; else SciPy, or mpmath where
    SciPy departs)."""
    if args[0].dtype == np.longdouble:
        return exact(op, *args)
    f64 = [a.astype(np.float64) for a in args]
    value, doubtful = scipy_value(op, *f64)
    if op in ("J0", "J1", "Jv"):
        order = np.full_like(f64[-1], float(op[1])) if op != "Jv" else f64[0]
        far = doubtful & np.isfinite(f64[-1]) & (np.abs(f64[-1]) > 1e7) & (np.abs(order) <= 100) & (order == np.round(order))
        with np.errstate(all="ignore"):
            value = np.where(far, _j_far(order, f64[-1]), value)
        doubtful &= ~far
    if doubtful.any():
        with np.errstate(over="ignore"):  # beyond float64: inf
            value[doubtful] = exact(op, *(a[doubtful] for a in f64)).astype(np.float64)
    return value.astype(args[0].dtype)


def orders(op: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """Orders of the domain ptonnx.accuracy states for `op`: Jv integers |n| <= 100; Ive no negative
    non-integer orders (those are absolutely accurate only, near the zeros of I_-v)."""
    if op == "Jv":
        return np.round(rng.uniform(-100, 100, n) * rng.choice([0.05, 0.2, 1.0], n))
    integers = np.round(rng.uniform(-40, 40, n))
    halves = np.round(rng.uniform(-40, 40, n)) + 0.5
    reals = rng.uniform(-40, 60, n) * rng.choice([0.02, 0.2, 1.0], n)
    large = rng.uniform(25, 2000, n)
    v = np.choose(rng.choice(4, n, p=[0.3, 0.15, 0.45, 0.1]), [integers, halves, reals, large])
    return np.where((op in ("Ive", "Iv")) & (v < 0) & (v != np.round(v)), -v, v)


def _integer_orders(limit: int):
    """Orders -> integers in [-limit, limit] (their remainder by limit + 1, truncated); NaN stays."""
    def into(order, x):
        with np.errstate(all="ignore"):
            folded = np.trunc(np.fmod(np.where(np.isinf(order), np.sign(order) * limit, order), limit + 1))
        return folded.astype(order.dtype), x
    return into


def _no_negative_non_integer(order, x):
    """Ive's negative non-integer orders -> their magnitudes (the reflection: tests/e2e/test_bessel.py)."""
    return np.where((order < 0) & (order != np.round(order)), -order, order), x


#: op -> (orders, x) -> the pair moved into the domain ptonnx.accuracy states (audit/accuracy.py's sweep)
DOMAINS = {"Jv": _integer_orders(JV_MAX_ORDER), "Ive": _no_negative_non_integer, "Iv": _no_negative_non_integer}


def iv(v, x) -> np.ndarray:
    """I_v(x) = Ive(v, x) exp(|x|) in the operands' precision (long double reaches exp(11356)); at
    |x| = inf the limit: inf, -inf for odd orders at -inf, NaN for other orders at -inf (complex)."""
    with np.errstate(all="ignore"):
        if np.asarray(x).dtype == np.longdouble:
            value = reference("Ive", v, x) * np.exp(np.abs(x))
        else:  # float16/float32 results: SciPy's (within 1e-13)
            value = scipy.special.iv(np.asarray(v, np.float64), np.asarray(x, np.float64))
        integer = v == np.round(v)
        odd = integer & (np.abs(np.fmod(v, 2)) == 1)
        value = np.where((value == 0) & odd & np.signbit(x), -0.0, value)  # I_n(-x) = (-1)**n I_n(x), as Ive
        value = np.where(np.isinf(v) & np.isfinite(x), 0.0, value)  # not 0 * exp(|x|) = NaN
        at_inf = np.where((x < 0) & ~integer, np.nan, np.where(odd & (x < 0), -np.inf, np.inf))
        return np.where(np.isinf(x), at_inf, value)


def hard_pairs(op: str, dtype: str, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(orders, arguments): the op's orders, arguments log-uniform over [1e-20, 1e20] and uniform
    in [0, 60], where the regions of the lowerings meet (1, 2, 20, 25, 32)."""
    v = orders(op, rng, n)
    magnitude = np.ldexp(rng.uniform(0.5, 1, n), rng.integers(-66, 67, n))
    x = np.choose(rng.choice(3, n), [magnitude, rng.uniform(0, 60, n), rng.uniform(0, 2 * np.abs(v) + 5)])
    x = x * np.where(rng.random(n) < 0.2, -1.0, 1.0)
    with np.errstate(over="ignore"):
        return v.astype(dtype), x.astype(dtype)


def _measure(n: int = 400, seed: int = 0) -> None:
    """ptonnx's float64 errors against mpmath, by function and regime (`python -m references.bessel_reference`)."""
    import pytensor.tensor as pt

    import ptonnx

    rng = np.random.default_rng(seed)
    log_uniform = lambda lo, hi, m: np.exp(rng.uniform(np.log(lo), np.log(hi), m))  # noqa: E731
    ints = lambda lo, hi, m: np.round(rng.uniform(lo, hi, m))  # noqa: E731
    x_any = lambda m: log_uniform(1e-300, 1e300, m) * rng.choice([-1, 1], m)  # noqa: E731
    x_mid = lambda m: log_uniform(1e-6, 1e4, m)  # noqa: E731
    regimes = [  # (op, regime, orders or None, x, measure: "ulp" or "envelope")
        ("I0", "all x", None, np.concatenate([x_any(n), rng.uniform(-714, 714, n)]), "ulp"),
        ("I1", "all x", None, np.concatenate([x_any(n), rng.uniform(-714, 714, n)]), "ulp"),
        ("J0", "|x| <= 5", None, rng.uniform(-5, 5, n), "ulp"),
        ("J0", "|x| > 5", None, log_uniform(5, 1e300, n), "envelope"),
        ("J1", "|x| <= 5", None, rng.uniform(-5, 5, n), "ulp"),
        ("J1", "|x| > 5", None, log_uniform(5, 1e300, n), "envelope"),
        ("Ive", "orders 0, 1", rng.choice([0.0, 1.0, -1.0], n), x_any(n), "ulp"),
        ("Ive", "0 <= v < 25", rng.uniform(0, 25, n), x_mid(n), "ulp"),
        ("Ive", "25 <= v <= 2000", rng.uniform(25, 2000, n), log_uniform(1e-3, 1e5, n), "ulp"),
        ("Kve", "integer, half-integer v < 25", ints(0, 24, n) + rng.choice([0, 0.5], n), x_mid(n), "ulp"),
        ("Kve", "other v < 25", rng.uniform(0, 25, n), x_mid(n), "ulp"),
        ("Kve", "25 <= v <= 2000", rng.uniform(25, 2000, n), log_uniform(1e-3, 1e5, n), "ulp"),
        ("Jv", "|x| < |n| <= 100", *(lambda v: (v, np.abs(v) * rng.uniform(0, 1, n)))(ints(-100, 100, n)), "ulp"),
        ("Jv", "|x| >= |n|", *(lambda v: (v, np.abs(v) * log_uniform(1, 1e3, n)))(ints(-100, 100, n)), "envelope"),
    ]
    print(f"{'op':5} {'regime':30} {'max error':>16}  where")
    for op, regime, v, x, how in regimes:
        args = [x] if v is None else [v, x]
        variables = [pt.dvector(f"x{i}") for i in range(len(args))]
        cm = ptonnx.compile_function(variables, [{"I0": pt.i0, "I1": pt.i1, "J0": pt.j0, "J1": pt.j1, "Ive": pt.ive,
                                                  "Kve": pt.kve, "Jv": pt.jv}[op](*variables)])
        with np.errstate(all="ignore"):
            got = cm(*args)[0].astype(np.longdouble)
            truth = exact(op, *(a.astype(np.longdouble) for a in args))
            finite = np.isfinite(truth) & (truth != 0)
            if how == "ulp":
                err = np.abs(got - truth) / np.spacing(np.abs(truth.astype(np.float64))).astype(np.longdouble)
                label = "ulp"
            else:
                order = np.abs(v) if v is not None else np.full_like(x, float(op[1]))
                envelope = np.array([math.hypot(float(a), float(b)) for a, b in zip(
                    truth, exact("Jv", order, np.abs(x)) * 0 + [float(_y(o, t)) for o, t in zip(order, np.abs(x), strict=True)], strict=True)])
                err = np.abs(got - truth) / envelope
                label = "of the envelope"
        beyond = np.abs(truth) > np.finfo(np.float64).max  # must be inf: errors() of accuracy_reference checks that
        err = np.where(finite & ~beyond, err, 0).astype(np.float64)
        i = int(np.argmax(err))
        at = f"x = {x[i]:.17g}" if v is None else f"v = {v[i]:.17g}, x = {x[i]:.17g}"
        print(f"{op:5} {regime:30} {err[i]:10.3g} {label:15} {at}")


def _y(order: float, x: float) -> float:
    """Y_order(x) (mpmath), for the envelope sqrt(J**2 + Y**2) of the oscillating region."""
    import mpmath

    with mpmath.workprec(80):
        return float(mpmath.bessely(order, x))


if __name__ == "__main__":
    _measure()
