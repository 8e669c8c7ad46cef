"""Hyp2F1 cases for tests/e2e/test_special.py (z along the tested axis, (a, b, c) from a grid) and
for tests/e2e/test_hyp2f1.py: where ptonnx gives NaN and SciPy a number."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

#: (a, b, c): well-conditioned series, Euler's and Pfaff's transformations, a polynomial, c a pole
#: (inf), c = a = -2 (NaN: SciPy's conventions disagree). (NaN parameters: test_hyp2f1.py; SciPy gives
#: 1 for tiny z and inf at z = 1 there, ptonnx NaN)
ABC = ((1.0, 2.0, 3.0), (0.5, 0.5, 1.5), (0.25, 1.0, 2.0), (1.5, 2.5, 4.5), (-1.0, 2.0, 3.0), (1.0, 1.0, -2.0),
       (-2.0, 1.0, -2.0))
#: z: 0, the ends of the series' ranges, z = 1 (Gauss's theorem), beyond them
POINTS = (0.0, -0.0, 0.5, -0.5, 0.95, 0.96, 1.0, -1.0, -19.0, -20.0, 1.5, 1e-300, -1e-300, 0.3, -5.0, 1e10, -1e10)
#: the edges of what is lowered (X_MAX in ptonnx/decompositions/special/hyp2f1.py)
SERIES_UP_TO, PFAFF_DOWN_TO = 0.95, -19.0


def _float(x) -> str:
    return x.dtype if x.dtype.startswith("float") else "float64"


def with_abc(x):
    """z -> hyp2f1(a, b, c, z) for each (a, b, c) of ABC along a new leading axis."""
    abc = np.array(ABC, dtype=_float(x))
    shape = (-1,) + (1,) * x.ndim
    return pt.hyp2f1(*(pt.as_tensor(abc[:, i].reshape(shape)) for i in range(3)), x)


def refused(a, b, c, z):
    """Where ptonnx gives NaN by design and SciPy a number (SciPy's inf for z > 1 included): outside
    polynomials z > 1, z < -19, 0.95 < z < 1, infinite z; c = a or b = -n of a polynomial of degree n."""
    with np.errstate(invalid="ignore"):
        def integer(v):
            return (v <= 0) & (np.floor(v) == v)
        poly = integer(a) | integer(b)
        degree = np.minimum(np.where(integer(a), -a, np.inf), np.where(integer(b), -b, np.inf))
        outside = (z > 1) | (z < PFAFF_DOWN_TO) | ((z > SERIES_UP_TO) & (z < 1))
        pole = integer(c) & ~(poly & (degree <= -c))
        ambiguous = integer(c) & poly & (degree == -c)
        return ~pole & (z != 0) & ((~poly & outside) | (poly & np.isinf(z)) | ambiguous)


def departure(values, expected):
    z = np.asarray(values).astype(expected.dtype).astype(np.float64)
    abc = np.array(ABC, dtype=expected.dtype).astype(np.float64)
    shape = (-1,) + (1,) * z.ndim
    a, b, c = (abc[:, i].reshape(shape) for i in range(3))
    # a polynomial's zeros (z = 3/2 for (-1, 2; 3)) are NaN too: no relative accuracy there
    with np.errstate(invalid="ignore"):
        zero = (expected == 0) & (z != 0)
    # c a pole: SciPy's inf becomes NaN for large |z| (from ~1e81 in float64, ~1e93 in float32, where
    # z = ±inf stays inf); ptonnx: inf beyond |z| = 1 too, NaN at z = ±inf
    with np.errstate(invalid="ignore"):
        integer = (c <= 0) & (np.floor(c) == c)
        pole = integer & ~refused(a, b, c, z) & (np.abs(z) > 1) & (a > 0) & (b > 0)
    result = np.where(refused(a, b, c, z) | zero, np.nan, np.where(pole, np.where(np.isinf(z), np.nan, np.inf), expected))
    # a polynomial near z = ±1.8e308 that SciPy overflows (1 - 2z/3 at z = 9e307 is -6e307, SciPy -inf)
    with np.errstate(invalid="ignore"):
        degree_c = (a <= 0) & (np.floor(a) == a) | (b <= 0) & (np.floor(b) == b)
        overflowed = np.broadcast_to(degree_c & ~integer, result.shape) & np.isinf(result) & np.isfinite(np.broadcast_to(z, result.shape))
    if overflowed.any():
        import mpmath

        abc_z = np.broadcast_arrays(a, b, c, z)
        exact = [float(mpmath.hyp2f1(*(float(v[i]) for v in abc_z))) for i in zip(*np.nonzero(overflowed), strict=True)]
        result = np.array(result)
        result[overflowed] = np.array(exact, dtype=result.dtype)
    return result
