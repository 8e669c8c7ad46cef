"""Edge values per dtype: the ends of the range, where kernels and NumPy part ways.

Unary ops get the long list (`unary_values`); binary ops an all-pairs grid of
a shorter one (`binary_values`), so a probe stays a few hundred elements.
"""

from __future__ import annotations

import math

import numpy as np


def _float_thresholds(dtype: np.dtype) -> list[float]:
    """The exact thresholds where exp/log/sigmoid/softplus overflow or underflow in `dtype`,
    with both neighbours in `dtype`."""
    fi = np.finfo(dtype)
    centres = [
        math.log(float(fi.max)),  # exp(x) overflows above
        math.log(float(fi.smallest_normal)),  # exp(x) becomes subnormal below
        math.log(float(fi.smallest_subnormal)),  # exp(x) rounds to 0 below
        -math.log(float(fi.max)),
    ]
    out = []
    for c in centres:
        t = dtype.type(c)
        out += [t, np.nextafter(t, dtype.type(-np.inf)), np.nextafter(t, dtype.type(np.inf))]
    return [float(v) for v in out]


def float_unary(dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    fi = np.finfo(dtype)
    big, tiny, sub, eps = float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal), float(fi.eps)
    exact_int = 2.0 ** (fi.nmant + 1)  # every integer up to here is representable
    values = [
        0.0, -0.0, math.inf, -math.inf, math.nan,
        sub, -sub, tiny - sub, tiny, -tiny, big, -big,
        1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -3.0, 0.1, 1 / 3, 65.0,
        1 + eps, 1 - eps / 2, -1 + eps / 2, 10.0, -10.0, 100.0, 1e4, -1e4, 1e6, 1e22, math.pi,
        2.0**fi.nmant - 0.5, -(2.0 ** fi.nmant - 0.5), exact_int, exact_int + 2, -exact_int - 2,
        # tanh/sigmoid/softplus regions (PyTensor's softplus switches at -37, 18 and 33.3)
        -16.0, -20.0, -30.0, -37.0, -40.0, -50.0, -88.0, -100.0, -700.0, 16.0, 18.0, 20.0, 33.3, 40.0,
        # rounding into a narrower float: the float16 and float32 overflow boundaries and a
        # value a float64 -> float32 -> float16 conversion rounds twice
        65519.0, 65520.0, 3.4028235677973362e38, 3.4028235677973366e38, 1 + 2.0**-11 + 2.0**-40,
        *_float_thresholds(dtype),
    ]
    with np.errstate(over="ignore"):
        return distinct(np.array(values, dtype=np.float64).astype(dtype))


def float_binary(dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    fi = np.finfo(dtype)
    values = [
        0.0, -0.0, float(fi.smallest_subnormal), -float(fi.smallest_subnormal), float(fi.smallest_normal),
        1.0, -1.0, 2.0, 0.5, -3.0, 0.1, 65.0, 2.0 ** (fi.nmant + 1) + 2,
        float(fi.max), -float(fi.max), math.inf, -math.inf, math.nan,
    ]
    return distinct(np.array(values, dtype=np.float64).astype(dtype))


def int_unary(dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    bits = dtype.itemsize * 8
    ii = np.iinfo(dtype)
    half = 2 ** (bits // 2)
    values = [
        0, 1, -1, 2, -2, 3, 7, -7, 100, bits - 1, ii.min, ii.min + 1, ii.max, ii.max - 1, half, -half, half - 1,
        2 ** (bits - 1),  # the sign bit of an unsigned dtype
        2**24 + 1, -(2**24 + 1), 2**30 + 2**19 + 1,  # first integers float32 rounds; one it rounds twice to float16
        2**53, 2**53 + 1, -(2**53 + 1), 2**62 + 1, 2**63 - 1024,  # beyond float64's exact integers
    ]
    return _ints(values, dtype)


def int_binary(dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    bits = dtype.itemsize * 8
    ii = np.iinfo(dtype)
    values = [0, 1, -1, 2, 3, -7, bits - 1, ii.min, ii.max, ii.max - 1, 2 ** (bits // 2), 2**53 + 1]
    return _ints(values, dtype)


def float_sweep(dtype) -> np.ndarray:
    """A deterministic spread between the edges, for library functions whose error is not at
    the ends: magnitudes spaced evenly in log scale over the whole range, a fine grid over
    [-40, 40], and the floats nearest multiples of pi/2 (where sin and cos have their zeros)."""
    dtype = np.dtype(dtype)
    fi = np.finfo(dtype)
    with np.errstate(over="ignore"):
        magnitudes = np.geomspace(float(fi.smallest_subnormal), float(fi.max), 600)
        near_zeros = np.array([k * math.pi / 2 for k in range(1, 41)])
        values = np.concatenate([magnitudes, -magnitudes, np.linspace(-40, 40, 1601), near_zeros, -near_zeros])
        return distinct(values.astype(dtype))


def pow_sweep(dtype) -> tuple[np.ndarray, np.ndarray]:
    """Bases and exponents for Pow away from the edges: x ** y over a grid of both."""
    bases = np.concatenate([np.geomspace(1e-3, 1e3, 41), -np.arange(1.0, 6.0)])
    exponents = np.concatenate([np.linspace(-20, 20, 33), np.arange(-5.0, 6.0)])
    a, b = grid(bases, exponents)
    return a.astype(dtype), b.astype(dtype)


def unary_values(dtype) -> np.ndarray:
    kind = np.dtype(dtype).kind
    if kind == "b":
        return np.array([False, True])
    return float_unary(dtype) if kind == "f" else int_unary(dtype)


def binary_values(dtype) -> np.ndarray:
    kind = np.dtype(dtype).kind
    if kind == "b":
        return np.array([False, True])
    return float_binary(dtype) if kind == "f" else int_binary(dtype)


def grid(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All pairs: (a[i], b[j]) for every i, j."""
    return np.repeat(a, len(b)), np.tile(b, len(a))


def _ints(values, dtype) -> np.ndarray:
    ii = np.iinfo(dtype)
    kept = sorted({v for v in values if ii.min <= v <= ii.max}, key=lambda v: (abs(v), v))
    return np.array(kept, dtype=dtype)


def distinct(a: np.ndarray) -> np.ndarray:
    """Distinct values in order of first appearance (bit patterns: -0.0 and 0.0 both stay)."""
    seen, keep = set(), []
    for i, v in enumerate(a):
        key = "nan" if np.isnan(v) else v.tobytes()
        if key not in seen:
            seen.add(key)
            keep.append(i)
    return a[keep]
