"""Input values: each dtype's extremes mixed with ordinary numbers, and Python literals."""

from __future__ import annotations

import numpy as np

FLOATS = ("float16", "float32", "float64")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
DTYPES = FLOATS + INTS + ("bool",)


def kind(dtype: str) -> str:
    """'f', 'i', 'u' or 'b'."""
    return np.dtype(dtype).kind


def float_extremes(dtype: str) -> np.ndarray:
    """Largest/smallest finite, smallest normal, subnormals, ±0, ±inf, NaN, the rounding edges."""
    info = np.finfo(dtype)
    t = np.dtype(dtype).type
    mant = info.nmant + 1  # 2**mant is the first integer whose successor is not representable
    values = [
        info.max, -info.max, info.tiny, -info.tiny, info.smallest_subnormal, -info.smallest_subnormal,
        0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, info.eps, 1 - info.eps / 2, 1 + info.eps,
        2.0**mant - 1, 2.0**mant + 1, -(2.0**mant) - 1, 2.0**53 + 1, 2.0**63, -(2.0**63), 2.0**64,
        88.72, -103.9, 709.78, -745.2, 11.09, -17.3, 1e-8, -1e-8, 1e8, np.pi, -np.pi, 1e30, -1e30,
    ]
    with np.errstate(all="ignore"):
        return np.array([t(v) for v in values], dtype=dtype)


def int_extremes(dtype: str) -> np.ndarray:
    """Integer limits, their neighbours, 2**53±1, the 8/16/32-bit boundaries."""
    info = np.iinfo(dtype)
    candidates = [
        info.min, info.max, info.min + 1, info.max - 1, 0, 1, -1, 2, -2, 3, 7,
        2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1, 2**31, -(2**31), 2**31 - 1, 2**32, 2**63 - 1,
        127, 128, -128, -129, 255, 256, 32767, 32768, -32768, 65535, 65536,
    ]
    return np.array([v for v in candidates if info.min <= v <= info.max], dtype=dtype)


def extremes(dtype: str) -> np.ndarray:
    if dtype == "bool":
        return np.array([False, True])
    return float_extremes(dtype) if kind(dtype) == "f" else int_extremes(dtype)


def ordinary(rng: np.random.Generator, dtype: str, size: int) -> np.ndarray:
    """Everyday values: small integers, halves, normals of a random scale."""
    if dtype == "bool":
        return rng.random(size) < 0.5
    if kind(dtype) == "f":
        scale = rng.choice([1.0, 4.0, 100.0])
        halves = rng.integers(-8, 9, size) / 2
        normal = rng.standard_normal(size) * scale
        with np.errstate(all="ignore"):
            return np.where(rng.random(size) < 0.3, halves, normal).astype(dtype)
    info = np.iinfo(dtype)
    low, high = max(int(info.min), -12), min(int(info.max), 12)
    return rng.integers(low, high, size, endpoint=True).astype(dtype)


def random_array(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """An array of `shape` mixing `ordinary` values with the dtype's `extremes`."""
    size = int(np.prod(shape, dtype=np.int64))
    p_extreme = rng.choice([0.0, 0.15, 0.4, 0.8])
    values = ordinary(rng, dtype, size)
    edges = extremes(dtype)
    pick = rng.random(size) < p_extreme
    if pick.any():
        values[pick] = edges[rng.integers(0, len(edges), int(pick.sum()))]
    return values.reshape(shape)


#: Python literals a user writes next to a tensor (`x * 2`, `0.5 + x`, `x ** 3`)
INT_LITERALS = (0, 1, 2, 3, -1, -3, 7, 127, 255, 300, 65535, 2**31 - 1, 2**53 + 1, -(2**40))
FLOAT_LITERALS = (0.5, -1.5, 2.0, 0.1, 1e-3, -0.0, 1e30, 1e300, 3.4e38, 65504.0, float("inf"), float("nan"))
EXPONENT_LITERALS = (0, 1, 2, 3, 5)


def random_literal(rng: np.random.Generator, integer: bool | None = None, exponent: bool = False):
    """A Python int or float; `exponent` keeps integers small and non-negative."""
    if exponent:
        return int(rng.choice(EXPONENT_LITERALS))
    if integer is None:
        integer = bool(rng.random() < 0.6)
    if integer:
        return int(rng.choice(INT_LITERALS[:7] if rng.random() < 0.7 else INT_LITERALS))
    return float(rng.choice(FLOAT_LITERALS[:5] if rng.random() < 0.6 else FLOAT_LITERALS))
