"""GammaIncInv and GammaIncCInv: the mpmath reference, the error measure, and the cases for
tests/e2e/test_special.py (y at the ends and tails, against each a of A along a new leading axis).

The reference solves log T(a, x) = log t (T the smaller tail P or Q, t its target, 1 - y exact
for y > 1/2) by Newton's method in log x at 100 bits, with the tails of
references/gamma_inc_reference.py (mpmath, and Temme's expansion from a = 1e4 on).

Departures from PyTensor's evaluation (SciPy 1.17), where SciPy is wrong:
- subnormal a: SciPy gives NaN; P(a, x) = 1 - a E1(x) + O(a), so the x with P = y < 1 is below
  the least double (0), and the x with Q = y solves E1(x) = y / a;
- a >= 1e4, or a target below 1e-280: SciPy's Halley iterations stop early (3.6e-9 relative
  off at a = 2.5e14, y = 3.8e-121);
- a = 0 (P a step at 0) and y outside [0, 1]: NaN (SciPy: gammaincinv(-0.0, 1.5) = 0,
  gammainccinv(0, 1e-300) = 0);
- float16/float32: SciPy computes in float32; ptonnx rounds the float64 answer once.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytensor.tensor as pt
import scipy.special

from references.gamma_inc_reference import smaller

BUILD = {"GammaIncInv": pt.gammaincinv, "GammaIncCInv": pt.gammainccinv}
SCIPY = {"GammaIncInv": scipy.special.gammaincinv, "GammaIncCInv": scipy.special.gammainccinv}
#: a: the ends (0, subnormal, tiny, inf, NaN, < 0) and the methods' meeting points; huge a (where
#: SciPy is wrong and the reference slow) are measured in tests/e2e/test_gammaincinv.py
A = (0.0, 1e-310, 1e-20, 1e-3, 0.5, 1.0, 2.5, 13.0, 19.9, 25.0, 150.0, np.inf, np.nan, -1.0)
#: y: the ends, near them, the tails, outside
POINTS = (0.0, -0.0, 1.0, 0.5, 5e-324, 1e-300, 1e-20, 0.1, 0.7, 0.999, 1 - 2**-53, 2**-52, -0.5, 1.5)
#: what SciPy gets right: neither a nor the target tiny, a below 1e4
SCIPY_TRUSTED_A = (2.3e-308, 1e4)
SCIPY_TRUSTED_TARGET = 1e-280


def _tails(a, x):
    """(log P, log Q) at 100 bits for mpf a, x > 0."""
    s, is_p = smaller(a, x)
    with mp.workprec(100):
        other = mp.log1p(-s) if s < 0.5 else mp.log(1 - s)
        small = mp.log(s) if s > 0 else -mp.inf
        return (small, other) if is_p else (other, small)


def _slope(a, x, log_tail) -> mp.mpf:
    """d log T / d log x, up to sign: x**a e**-x / (Gamma(a) T), in enough bits for huge a."""
    with mp.workprec(200 + int(abs(mp.log(a, 2)))):
        return mp.exp(a * mp.log(x) - x - mp.loggamma(a) - log_tail)


def _side(y: float, of_p: bool):
    """(solve on P's side, log of the smaller tail's target) at 100 bits."""
    with mp.workprec(100):
        y_ = mp.mpf(y)
        target = y_ if y <= 0.5 else 1 - y_
        return ((y <= 0.5) if of_p else (y > 0.5)), mp.log(target)


def relative_error(a: float, y: float, x: float, of_p: bool) -> float:
    """|x - exact| / max(exact, least normal), to first order from the residual of log T at x."""
    lower, tau = _side(y, of_p)
    log_p, log_q = _tails(a, x)
    log_tail = log_p if lower else log_q
    if not mp.isfinite(log_tail):
        return np.inf
    step = (log_tail - tau) / _slope(mp.mpf(a), mp.mpf(x), log_tail)
    return float(abs(step) * x / max(x, np.finfo(np.float64).tiny))


def rounds_to_zero(a: float, y: float, of_p: bool) -> bool:
    """Whether the exact x is below half the least subnormal (so 0 is the double nearest it)."""
    lower, tau = _side(y, of_p)
    log_p, log_q = _tails(a, mp.mpf(2) ** -1075)
    return bool(log_p >= tau) if lower else bool(log_q <= tau)


def reference(a: float, y: float, of_p: bool, start: float) -> float:
    """The x with P(a, x) = y (`of_p`) or Q(a, x) = y, for 0 < a < inf, 0 < y < 1, as a double:
    Newton's method in log x from `start` (> 0), kept inside a bracket."""
    if a < SCIPY_TRUSTED_A[0]:  # P = 1 - a E1(x) + O(a): E1(x) = Q / a
        q = y if not of_p else 1.0 - y
        if q > 800 * a:  # x ~ exp(-euler - q / a) is below the least double
            return 0.0
        with mp.workprec(100):
            c, lo, hi = mp.mpf(q) / mp.mpf(a), mp.log(mp.mpf(2) ** -1076), mp.log(mp.mpf(800))
            for _ in range(120):  # bisection in log t: E1 decreases
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if mp.e1(mp.exp(mid)) > c else (lo, mid)
            return float(mp.exp((lo + hi) / 2))
    lower, tau = _side(y, of_p)
    u, lo, hi = mp.log(mp.mpf(start)), -mp.inf, mp.inf
    with mp.workprec(100):
        for _ in range(400):
            x = mp.exp(u)
            log_p, log_q = _tails(a, x)
            g = log_p - tau if lower else tau - log_q
            if g < 0:
                lo = u
            elif g > 0:
                hi = u
            else:
                break
            slope = _slope(a, x, log_p if lower else log_q)
            new = u - g / slope
            if not lo < new < hi:
                new = (lo + hi) / 2 if mp.isfinite(lo) and mp.isfinite(hi) else (u + 20 if g < 0 else u - 20)
            if abs(new - u) < mp.mpf(2) ** -80 * max(1, abs(u)):
                u = new
                break
            u = new
        else:
            raise AssertionError(f"no convergence for {a}, {y}")
        return float(mp.exp(u))


def _a(x) -> np.ndarray:
    dtype = str(x.dtype) if str(x.dtype).startswith("float") else "float64"
    with np.errstate(over="ignore", under="ignore"):
        return np.array(A, dtype=dtype).reshape((-1,) + (1,) * x.ndim)


def with_a(op: str):
    """y -> op(a, y) for each a of A along a new leading axis."""
    return lambda y: BUILD[op](pt.as_tensor(_a(y)), y)


def departure(op: str):
    of_p = op == "GammaIncInv"

    def fix(values, expected):
        y = np.broadcast_to(np.asarray(values).astype(expected.dtype).astype(np.float64), expected.shape)
        a = np.broadcast_to(_a(np.asarray(values)).astype(np.float64), expected.shape)
        with np.errstate(all="ignore"):
            out = SCIPY[op](a, y)
            target = np.minimum(y, 1.0 - y)
            regular = (a > 0) & (a < np.inf) & (y > 0) & (y < 1)
            untrusted = regular & ((a < SCIPY_TRUSTED_A[0]) | (a >= SCIPY_TRUSTED_A[1]) | (target < SCIPY_TRUSTED_TARGET))
            out = np.where(~regular & ~((y == 0) | (y == 1)) | (a == 0) & (y > 0) & (y < 1), np.nan, out)
        for i in zip(*np.nonzero(untrusted), strict=True):
            start = out[i] if 0 < out[i] < np.inf else max(a[i], 1e-300)
            out[i] = reference(a[i], y[i], of_p, start)
        return out.astype(expected.dtype)

    return fix
