"""References for Erfinv, Erfcinv, PolyGamma and OwensT (`references/accuracy_reference.py` uses
them): float64's exact to 11+ more bits (long doubles, from mpmath), float16/float32's from
SciPy in float64 where SciPy is right.

SciPy 1.17 departs from the exact values in places, which these references correct:
erfinv(-0.0) is +0.0 (ptonnx keeps the zero's sign, erfinv being odd); erfcinv of the
smallest subnormals is inf (erfcinv(5e-324) = 27.2); polygamma(n, x) for x < 0 and n >= 2
cancels (polygamma(10, -2.5) is 5e-8 off) and takes time proportional to |x|; owens_t is
accurate to 1e-16 absolutely, not relatively (owens_t(9.7, 0.5) = 4.8e-23 is 14 ulp off).

- erfinv, erfcinv: mpmath's erfinv at 200 bits, and for erfcinv(q), q < 1/2, the root of
  log erfc(y) = log q.
- polygamma(n, x): mpmath's psi for x > 0; for x < 0 the reflection formula
  psi(n, x) = -pi**(n+1) P_n(cot(pi x)) + (-1)**n psi(n, 1 - x), P_n the polynomial with
  d**n/dz**n cot z = P_n(cot z) (exact integers), with the precision raised until 80 bits
  survive its cancellation (mpmath's own psi(n, x < 0) takes seconds, and its zeta(s, a) is
  not to be used: zeta(51, 763.5) is 3e-11 off at 300 bits).
- owens_t(h, a): for 0 <= a <= 1, exp(-h**2/2) / (2 pi) J, J by a 40-point Gauss-Legendre rule
  in long doubles (its error is below 1e-22 for ah <= 9.5); for ah > 9.5, Q(h)/2; for a > 1
  Owen's identity; exp and Q = erfc(x / sqrt 2) / 2 from mpmath at exact arguments.
"""

from __future__ import annotations

import functools
import warnings

import mpmath
import numpy as np
import scipy.special

from references.special_constants import gauss_legendre_mp
from ptonnx.decompositions.special.polygamma import MAX_ORDER


def _hi(value) -> np.longdouble:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # beyond the long double range: ±inf
        return np.longdouble(mpmath.nstr(value, 25, min_fixed=1, max_fixed=0))


def _vectorised(one, nin: int = 1):
    """A function of floats (returning long doubles) applied elementwise to arrays."""
    ufunc = np.frompyfunc(lambda *args: one(*(float(a) for a in args)), nin, 1)
    return lambda *arrays: np.asarray(ufunc(*arrays)).astype(np.longdouble)


# -- erfinv, erfcinv ------------------------------------------------------------------------------
@functools.cache
def _erfinv_one(x: float) -> np.longdouble:
    if not abs(x) < 1 or x == 0:
        return np.longdouble(scipy.special.erfinv(x))
    with mpmath.workprec(200):
        return _hi(mpmath.erfinv(mpmath.mpf(x)))


@functools.cache
def _erfcinv_one(q: float) -> np.longdouble:
    if not 0 < q < 2:
        return np.longdouble(scipy.special.erfcinv(q))
    if q == 1:
        return np.longdouble(-0.0)  # SciPy's (and ptonnx's) sign: -erfinv(q - 1)
    with mpmath.workprec(200):
        m = mpmath.mpf(q)
        if m >= 0.5:
            return _hi(-mpmath.erfinv(m - 1))
        s = mpmath.sqrt(-mpmath.log(m))
        return _hi(mpmath.findroot(lambda y: mpmath.log(mpmath.erfc(y)) - mpmath.log(m), s))


def erfinv(x: np.ndarray) -> np.ndarray:
    if x.dtype != np.longdouble:
        with np.errstate(all="ignore"):
            return np.where(x == 0, x, scipy.special.erfinv(x.astype(np.float64))).astype(x.dtype)
    return np.where(x == 0, x, _vectorised(_erfinv_one)(x))  # the cache holds one zero


def erfcinv(q: np.ndarray) -> np.ndarray:
    if q.dtype != np.longdouble:  # no subnormal float16/float32 is one in float64
        with np.errstate(all="ignore"):
            return scipy.special.erfcinv(q.astype(np.float64)).astype(q.dtype)
    return _vectorised(_erfcinv_one)(q)


# -- polygamma --------------------------------------------------------------------------------------
@functools.cache
def _cot_derivative(n: int) -> tuple[int, ...]:
    """The coefficients (of c**0, c**1, ...) of P_n, d**n/dz**n cot z = P_n(cot z): P_{k+1} = -(1 + c**2) P_k'."""
    p = (0, 1) if n == 0 else _cot_derivative(n - 1)
    if n == 0:
        return p
    d = [i * p[i] for i in range(1, len(p))] + [0, 0]
    return tuple(-d[i] - (d[i - 2] if i >= 2 else 0) for i in range(len(d)))


def _cot_pi(r):
    """cot(pi r) for 0 < r < 1, relatively accurate: from the nearest of 0, 1/2, 1, each exact."""
    if r < 0.25:
        return mpmath.cot(mpmath.pi * r)
    if r > 0.75:
        return -mpmath.cot(mpmath.pi * mpmath.fsub(1, r, exact=True))
    return mpmath.tan(mpmath.pi * mpmath.fsub(0.5, r, exact=True))


@functools.cache
def _polygamma_one(n: float, x: float) -> np.longdouble:
    if np.isnan(n) or np.isnan(x) or n < 0 or n != int(n):
        return np.longdouble(np.nan)
    n, sign = int(n), (-1) ** (int(n) + 1)
    if x == np.inf:
        return np.longdouble(np.inf if n == 0 else sign * 0.0)
    if x == -np.inf or (x <= 0 and x == int(x)):  # SciPy's values at the poles and -inf
        return np.longdouble(np.nan if n == 0 else sign * np.inf)  # (n = 0 at ±0: polygamma())
    s, prec = n + 1, 100
    m = mpmath.mpf(x)
    if m > 0 or n == 0:
        with mpmath.workprec(prec):
            return _hi(mpmath.psi(n, m))
    r = mpmath.fsub(m, mpmath.floor(m), exact=True)  # exact: x may be subnormal
    p = _cot_derivative(n)
    for _ in range(6):  # until the cancellation leaves 80 bits (long doubles have 64)
        with mpmath.workprec(prec):
            c = _cot_pi(r)
            terms = -mpmath.pi ** s * mpmath.polyval(p[::-1], c), (-1) ** s * mpmath.psi(n, mpmath.fsub(1, m, exact=True))
            value = terms[0] - terms[1]
            lost = mpmath.log(max(abs(t) for t in terms) / abs(value), 2) if value else prec
            if lost < prec - 80:
                return _hi(value)
            prec += int(lost) + 64
    raise ArithmeticError(f"polygamma({n}, {x}): cancellation beyond {prec} bits")


def polygamma(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    n, x = np.broadcast_arrays(n, x)
    # float16/float32: SciPy where it is right, x >= 0 and n <= 20 (beyond, its zeta underflows first)
    slow = np.ones(x.shape, bool) if x.dtype == np.longdouble else ~((x >= 0) & (n <= 20))
    exact = np.zeros(x.shape, np.longdouble)
    exact[slow] = _vectorised(_polygamma_one, 2)(n[slow], x[slow])
    with np.errstate(all="ignore"):  # the cache holds one zero: psi(±0) = ∓inf
        exact = np.where((x == 0) & (n == 0), -np.copysign(np.inf, x.astype(np.float64)), exact).astype(np.longdouble)
        if x.dtype == np.longdouble:
            return exact
        fast = scipy.special.polygamma(np.where(slow, 0, n).astype(np.int64), np.where(slow, 1.0, x).astype(np.float64))
    return np.where(slow, exact.astype(np.float64), fast).astype(x.dtype)


def polygamma_floor(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The absolute error PolyGamma's bound accepts: for even n >= 2 and x < 0, where the two-sided
    sum n! B(r) and n! zeta(n+1, 1 - x) cancel near the zeros, 2e-15 n! zeta(n+1, 1 - x)."""
    with np.errstate(all="ignore"):  # signalling NaNs among x
        n, x = (np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(n, x))
        even = (x < 0) & (n >= 2) & (n <= 170) & (np.mod(n, 2) == 0)
        term = np.abs(scipy.special.polygamma(np.where(even, n, 1).astype(np.int64), np.where(even, 1 - x, 1.0)))
    return np.where(even & np.isfinite(term), 2e-15 * term, 0.0)


# -- Owen's T ---------------------------------------------------------------------------------------
@functools.cache
def _rule() -> tuple[np.ndarray, np.ndarray]:
    nodes, weights = gauss_legendre_mp(40)
    return np.array([_hi(v) for v in nodes]), np.array([_hi(v) for v in weights])


@functools.cache
def _gauss_tail(h: float, a: float) -> tuple[np.longdouble, np.longdouble, np.longdouble]:
    """(exp(-(ah)**2/2) / (2 pi), Q(h), Q(ah)), ah exact, at 120 bits."""
    with mpmath.workprec(120):
        ah = mpmath.mpf(a) * mpmath.mpf(h)
        def q(v):
            return mpmath.erfc(v / mpmath.sqrt(2)) / 2 if v < 160 else mpmath.mpf(0)
        gauss = mpmath.exp(-ah * ah / 2) / (2 * mpmath.pi) if ah < 160 else mpmath.mpf(0)
        return _hi(gauss), _hi(q(mpmath.mpf(h))), _hi(q(ah))


def _owens_core(h: np.ndarray, a: np.ndarray, scale: np.ndarray, half_q: np.ndarray) -> np.ndarray:
    """T(h, a) for 0 <= a <= 1: scale = exp(-h**2/2) / (2 pi), half_q = Q(h) / 2."""
    u, w = _rule()
    t, au = (a * h)[..., None] * u, a[..., None] * u
    j = a * np.sum(w * np.exp(-t * t / 2) / (1 + au * au), axis=-1)
    return np.where(a * h > 9.5, half_q, scale * j)


def owens_t(h: np.ndarray, a: np.ndarray) -> np.ndarray:
    h, a = np.broadcast_arrays(h, a)
    hi = np.longdouble
    hh, aa = np.abs(h.astype(np.float64)), np.abs(a.astype(np.float64))
    reflect = aa > 1
    ch = np.where(np.isfinite(hh), hh, 0.0)
    ca = np.where(np.isfinite(aa), aa, 0.0)
    # (exp(-h'**2/2) / (2 pi), Q(h), Q(h')) for the core's h' = h, or ah for a > 1
    tails = [_gauss_tail(x, y) for x, y in zip(ch.ravel(), np.where(reflect, ca, 1.0).ravel(), strict=True)]
    scale, q_h, q_core = (np.array([t[i] for t in tails], dtype=hi).reshape(hh.shape) for i in range(3))
    with np.errstate(all="ignore"):
        core_h = np.where(reflect, ch.astype(hi) * ca.astype(hi), ch.astype(hi))
        core_a = np.where(reflect, 1 / np.where(reflect, ca, 1.0).astype(hi), ca.astype(hi))
        core = _owens_core(core_h, core_a, scale, q_core / 2)
        t = np.where(reflect, (q_h + q_core) / 2 - q_h * q_core - core, core)
        t = np.where(np.isinf(aa), q_h / 2, t)
        t = np.where(np.isinf(hh), 0.0, t)
        t = np.where(a.astype(np.float64) >= 0, t, -t)
        result = np.where(np.isnan(h.astype(np.float64)) | np.isnan(a.astype(np.float64)), np.nan, t).astype(hi)
    return result if h.dtype == hi else result.astype(np.float64).astype(h.dtype)


# -- hard operands ----------------------------------------------------------------------------------
#: the orders the PolyGamma checks draw from (its bound holds for 0 <= n <= 170)
POLYGAMMA_ORDERS = np.array([0, 1, 2, 3, 4, 5, 6, 7, 10, 20, 50, 100, 170])


def _polygamma_orders(order, x):
    """Any operand -> an order 0..170 (its magnitude's remainder by 171, truncated; NaN and inf -> 0)."""
    with np.errstate(all="ignore"):
        folded = np.trunc(np.fmod(np.abs(np.where(np.isfinite(order), order, 0)), MAX_ORDER + 1))
    return folded.astype(np.int64), x


#: op -> (first operand, x) -> the pair moved into the domain ptonnx.accuracy states (audit/accuracy.py)
DOMAINS = {"PolyGamma": _polygamma_orders}


def hard_pairs(op: str, dtype: str, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """PolyGamma: (order, x) with x near the negative half-integers (where even orders' two-sided
    sums vanish), near the poles, tiny and far out. OwensT: (h, a) with a near 1, ah near 8.6
    (where the quadrature hands over), h up to the underflow near 38, a far from 1 both ways."""
    fi = np.finfo(dtype)
    with np.errstate(all="ignore"):
        if op == "PolyGamma":
            order = rng.choice(POLYGAMMA_ORDERS, n)
            m = np.floor(np.ldexp(1.0, rng.integers(0, 12, n)) * rng.random(n))
            near = np.ldexp(rng.uniform(-1, 1, n), -rng.integers(1, 50, n))
            x = np.select([rng.random(n) < 0.5, rng.random(n) < 0.5],
                          [-(m + 0.5) + near, -m + near], np.ldexp(rng.uniform(0.5, 1, n), rng.integers(-60, 60, n)))
            return order.astype(np.int64), x.astype(dtype)
        h = np.select([rng.random(n) < 0.4, rng.random(n) < 0.5], [rng.uniform(0, 40, n), rng.uniform(0, 3, n)],
                      np.ldexp(1.0, rng.integers(-30, 8, n)) * rng.random(n))
        kind = rng.integers(0, 4, n)
        a = np.select([kind == 0, kind == 1, kind == 2],
                      [1 + np.ldexp(rng.uniform(-1, 1, n), -rng.integers(1, fi.nmant + 2, n)),
                       8.6 / np.maximum(h, 8.6) * (1 + rng.uniform(-1e-3, 1e-3, n)),
                       np.ldexp(1.0, rng.integers(-40, 41, n)) * rng.uniform(0.5, 1, n)], rng.uniform(0, 2, n))
        a = a * rng.choice([-1, 1], n)
        return h.astype(dtype) * rng.choice(np.array([-1, 1], dtype=dtype), n), a.astype(dtype)
