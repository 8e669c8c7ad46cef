"""BetaInc cases for tests/e2e/test_special.py (x along the tested axis, (a, b) on a grid
of tiny, small, moderate and huge parameters) and for tests/e2e/test_betainc.py."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

#: (a, b) pairs: each regime of the lowering (series, small-b complement, fraction, mirrored), the ends
AB = ((1.0, 1.0), (2.0, 3.0), (0.5, 0.5), (1e-3, 0.5), (5.0, 1e-3), (0.05, 0.02), (30.0, 40.0), (1e3, 2.5),
      (2.5, 1e3), (1e5, 3e5), (1e-300, 2.0), (2.0, 1e-300), (0.0, 1.0), (1.0, 0.0), (np.inf, 2.0), (2.0, np.inf),
      (0.0, 0.0), (-1.0, 2.0), (np.nan, 1.0))
#: x: the ends, near them, the means of some pairs
POINTS = (0.0, 1.0, 0.5, 1e-300, 5e-324, 1 - 2**-53, 2**-52, 0.4, 0.6, 0.999, 1e-3, 0.25, -0.5, 1.5)


def _float(x) -> str:
    return x.dtype if x.dtype.startswith("float") else "float64"


def with_ab(x):
    """x -> betainc(a, b, x) for each (a, b) of AB along a new leading axis."""
    with np.errstate(over="ignore", under="ignore"):
        ab = np.array(AB, dtype=_float(x))
    shape = (-1,) + (1,) * x.ndim
    return pt.betainc(pt.as_tensor(ab[:, 0].reshape(shape)), pt.as_tensor(ab[:, 1].reshape(shape)), x)


def departure(values, expected):
    """SciPy's float32 (and float16, through float32) betainc is computed in float32 (up to
    3e-5 off near x = 0.4 for a = 0.05, b = 0.02); ptonnx computes in float64 and rounds once,
    which is SciPy's float64 result rounded."""
    import scipy.special

    if expected.dtype == np.float64:
        return _exact_near_the_ends(values, expected)
    x = np.asarray(values).astype(expected.dtype).astype(np.float64)
    with np.errstate(over="ignore", under="ignore"):
        ab = np.array(AB, dtype=expected.dtype).astype(np.float64)
    shape = (-1,) + (1,) * x.ndim
    with np.errstate(all="ignore"):
        return scipy.special.betainc(ab[:, 0].reshape(shape), ab[:, 1].reshape(shape), x).astype(expected.dtype)


def _exact_near_the_ends(values, expected):
    """SciPy 1.17's float64 betainc is up to 1e-4 off for subnormal x (0.47430 for
    betainc(1e-3, 0.5, 5e-324), exactly 0.474343) and 3e-9 off at x = 1 - 2**-53 (a = b = 1/2):
    there, mpmath's value."""
    import mpmath

    x = np.broadcast_to(np.asarray(values, dtype=np.float64), expected.shape)
    ab = np.broadcast_to(np.array(AB).reshape((-1,) + (1,) * (x.ndim - 1) + (2,)), (*expected.shape, 2))
    out = expected.copy()
    with np.errstate(invalid="ignore"):
        ends = ((x > 0) & (x < 1e-300)) | ((x > 1 - 1e-9) & (x < 1))
    for i in zip(*np.nonzero(ends), strict=True):
        a, b = ab[i]
        if 0 < a < np.inf and 0 < b < np.inf:
            with mpmath.workdps(40):
                out[i] = float(mpmath.betainc(a, b, 0, mpmath.mpf(float(x[i])), regularized=True))
    return out
