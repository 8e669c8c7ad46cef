"""BetaIncInv's mpmath reference and triples (a, b, y) for tests/e2e/test_betaincinv.py.

The reference solves I_x(a, b) = y for t = log x (x <= 1/2) or t = log(1 - x) (x > 1/2) by
Newton's method in 60-digit arithmetic from ptonnx's own answer, with each tail I_x(a, b),
1 - I_x(a, b) by the continued fraction from the side below the mean (the other as 1 minus it,
which 60 digits afford for the tails met here). It returns (x, 1 - x) as mpf values."""

from __future__ import annotations

import mpmath
import numpy as np

from references import beta_reference

DIGITS = 60


def _fraction(p, q, u):
    """I_u(p, q) by the continued fraction, for u below the mean (mpf arguments)."""
    return beta_reference.continued_fraction(p, q, u, mpmath.log(u), mpmath.log1p(-u))


def tails(a, b, x, z):
    """(I_x(a, b), 1 - I_x(a, b)), z = 1 - x (in 700 digits where 1 minus the other leaves < 20)."""
    below = x * (a + b + 2) < a + 1
    value = _fraction(a, b, x) if below else _fraction(b, a, z)
    if 1 - value < mpmath.mpf(10) ** (20 - mpmath.mp.dps):
        with mpmath.workdps(700):
            value = _fraction(a, b, x) if below else _fraction(b, a, z)
            other = 1 - value
    else:
        other = 1 - value
    return (value, other) if below else (other, value)


def reference(a: float, b: float, y: float, start: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(x, 1 - x) with I_x(a, b) = y, from `start` (ptonnx's answer), to ~40 digits."""
    with mpmath.workdps(DIGITS):
        a, b, y = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(y)
        upper_side = start > 0.5
        if 0 < start < 1:
            t = mpmath.log(mpmath.mpf(1 - start if upper_side else start))
        else:  # the leading power of the tail: I_x(a, b) ~ x**a / (a B(a, b))
            t = (mpmath.log(b * mpmath.beta(a, b) * (1 - y)) / b if upper_side
                 else mpmath.log(a * mpmath.beta(a, b) * y) / a)
        upper_tail = y > 0.5
        target = mpmath.log(1 - y if upper_tail else y)
        for _ in range(200):
            s = mpmath.exp(t)
            x, z = (1 - s, s) if upper_side else (s, 1 - s)
            lower, upper = tails(a, b, x, z)
            g = mpmath.log(upper) - target if upper_tail else mpmath.log(lower) - target
            # d/dt of log(tail): tail' / tail, tail' = +-x**a z**b / (B (x or z))
            kernel = mpmath.exp(a * mpmath.log(x) + b * mpmath.log(z) - mpmath.log(mpmath.beta(a, b)))
            slope = kernel / (x if upper_side else z) / (upper if upper_tail else lower)
            slope = slope if upper_side == upper_tail else -slope
            step = g / slope
            cap = max(5, abs(t) / 2)
            step = max(min(mpmath.re(step), cap), -cap)  # damped far from the root
            t -= step
            if abs(step) < mpmath.mpf(10) ** -40 * max(1, abs(t)):
                break
        else:
            raise AssertionError(f"no convergence for {a}, {b}, {y}")
        s = mpmath.exp(t)
        return (1 - s, s) if upper_side else (s, 1 - s)


def triples(rng, n=40):
    """(label, a, b, y) samples over the domain."""
    def lu(lo, hi):
        return 10 ** rng.uniform(lo, hi, n)
    yield "typical", lu(-2, 2), lu(-2, 2), rng.uniform(0, 1, n)
    yield "small and large", lu(-6, 6), lu(-6, 6), rng.uniform(0, 1, n)
    yield "tiny y", lu(-2, 3), lu(-2, 3), lu(-300, -5)
    yield "y near 1", lu(-2, 3), lu(-2, 3), 1 - lu(-15.9, -5)
    yield "large", lu(3, 8), lu(3, 8), rng.uniform(0, 1, n)
    yield "tiny a or b", lu(-12, -1), lu(-1, 2), rng.uniform(0, 1, n)


def errors(got: np.ndarray, a, b, y) -> tuple[np.ndarray, np.ndarray]:
    """(relative error of x, error relative to min(x, 1 - x) beyond an ulp of x) per element."""
    rel, side = np.zeros(len(got)), np.zeros(len(got))
    for i, (g, ai, bi, yi) in enumerate(zip(got, a, b, y, strict=True)):
        x, z = reference(ai, bi, yi, g)
        exact = float(x)
        if g == exact:
            continue
        rel[i] = abs(g - exact) / exact if exact > 0 else np.inf
        near = mpmath.mpf(float(g)) - x
        ulp = np.spacing(exact) if exact > 0 else 2.0**-1074
        side[i] = max(0.0, float(abs(near)) - ulp) / float(min(x, z))
    return rel, side


#: (a, b) pairs for tests/e2e/test_special.py: each start and tail, tiny and huge, the ends, invalid
AB = ((1.0, 1.0), (2.0, 3.0), (0.5, 0.5), (1e-3, 0.5), (5.0, 1e-3), (30.0, 40.0), (1e3, 2.5), (1e-300, 2.0),
      (2.0, 1e-300), (np.inf, 2.0), (0.0, 1.0), (-1.0, 2.0), (np.nan, 1.0))
#: y: the ends, near them, outside
POINTS = (0.0, 1.0, 0.5, 1e-300, 5e-324, 1 - 2**-53, 2**-52, 0.3, 0.999, 1e-3, -0.5, 1.5)


def with_ab(y):
    """y -> betaincinv(a, b, y) for each (a, b) of AB along a new leading axis."""
    import pytensor.tensor as pt

    dtype = y.dtype if y.dtype.startswith("float") else "float64"
    with np.errstate(over="ignore", under="ignore"):
        ab = np.array(AB, dtype=dtype)
    shape = (-1,) + (1,) * y.ndim
    return pt.betaincinv(pt.as_tensor(ab[:, 0].reshape(shape)), pt.as_tensor(ab[:, 1].reshape(shape)), y)


def departure(values, expected):
    """SciPy's float32 betaincinv is computed in float32: ptonnx rounds SciPy-grade float64 once.
    SciPy (Boost) returns the least normal 2.2e-308 (and NaN, float32: 1.2e-38) where the answer is
    below it, and is up to 1e-2 off for subnormal y (0.47346 for betaincinv(1e3, 2.5, 5e-324), exactly
    0.470685; 3e-9 off at y = 2.5e-306), and 2e-12 short of 1 for b = 1e-300, where 1 - x underflows:
    there, the mpmath reference (or 1)."""
    import scipy.special

    y = np.broadcast_to(np.asarray(values).astype(expected.dtype).astype(np.float64), expected.shape)
    with np.errstate(over="ignore", under="ignore"):
        ab = np.array(AB, dtype=expected.dtype).astype(np.float64)
    ab = np.broadcast_to(ab.reshape((-1,) + (1,) * (y.ndim - 1) + (2,)), (*expected.shape, 2))
    with np.errstate(all="ignore"):
        out = scipy.special.betaincinv(ab[..., 0], ab[..., 1], y)
        low = ((out <= 2.3e-308) | (y < 1e-200) | (ab[..., 1] < 1e-290)) & (y > 0) & (y < 1) & (ab[..., 0] > 0) & (ab[..., 1] > 0) & (ab[..., 0] < np.inf) & (ab[..., 1] < np.inf)
    for i in zip(*np.nonzero(low | (np.isnan(out) & (ab[..., 0] > 0) & (ab[..., 1] > 0) & (ab[..., 0] < np.inf)
                                   & (ab[..., 1] < np.inf) & (y > 0) & (y < 1))), strict=True):
        if ab[i][1] < 1e-290 and y[i] > 1e-280:  # 1 - x ~ exp(-y / (b B(a, b))) underflows: x = 1
            out[i] = 1.0
        else:
            start = out[i] if 2.3e-308 < out[i] < 1 else 0.0  # SciPy's answer, near enough to start from
            out[i] = float(reference(ab[i][0], ab[i][1], y[i], start)[0])
    return out.astype(expected.dtype)
