"""GammaInc, GammaIncC, GammaL and GammaU cases for tests/e2e/test_special.py: x at the points
where the lowering changes method (x = 3, 1.1 a, a/2, |x - a| = 0.4 a), against each k of
GAMMA_INC_K along a new leading axis (k's own ends: 0, subnormal, 20, 171.6, huge, inf, NaN, < 0).

Departures from PyTensor's evaluation (SciPy 1.17), where SciPy is wrong: for subnormal k
it gives P = 0 and a negative Q (gammaincc(1e-320, 1) = -5.8e-321; P is 1 - 2e-321);
float16/float32 GammaL/GammaU are PyTensor's products formed in float32, which overflow
where Gamma(k) does (k > 35); ptonnx forms them in float64 and rounds once. GammaL and GammaU
are finite (mpmath's) where PyTensor's products P Gamma(k), Q Gamma(k) are 0, inf or NaN or lose
digits to an underflowing tail, but the value itself is finite (gamma_inc_products.py).
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import scipy.special

from references import gamma_inc_reference


GAMMA_INC_POINTS = (0.0, -0.0, 1e-300, 5e-324, 0.1, 0.5, 1.0, 1.1, 2.999, 3.0, 10.0, 12.0, 20.0, 28.0, 30.0, 35.0,
                    100.0, 700.0, 1e4, 1e10, 1e300, -1.0)
GAMMA_INC_K = (0.0, 1e-310, 1e-20, 0.5, 1.0, 2.5, 19.9, 20.0, 25.0, 150.0, 171.5, 200.0, 1e4, 1e10, np.inf, np.nan, -1.0)
BUILD = {"GammaInc": pt.gammainc, "GammaIncC": pt.gammaincc, "GammaL": pt.gammal, "GammaU": pt.gammau}
SCIPY = {"GammaInc": scipy.special.gammainc, "GammaIncC": scipy.special.gammaincc,
         "GammaL": lambda k, x: scipy.special.gammainc(k, x) * scipy.special.gamma(k),
         "GammaU": lambda k, x: scipy.special.gammaincc(k, x) * scipy.special.gamma(k)}
EXACT = {"GammaInc": gamma_inc_reference.gammainc, "GammaIncC": gamma_inc_reference.gammaincc,
         "GammaL": gamma_inc_reference.gamma_lower, "GammaU": gamma_inc_reference.gamma_upper}


def _subnormal_k(op: str, k: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The exact values at a subnormal k > 0 and finite x > 0: Q = Gamma(k, x) / Gamma(k) is
    k E1(x) to a relative O(k) (Gamma(k) = 1/k - euler + O(k), Gamma(k, x) = E1(x) + O(k));
    P = 1 - Q."""
    with np.errstate(all="ignore"):
        upper = k * scipy.special.exp1(x)
        regularized = {"GammaInc": 1.0 - upper, "GammaIncC": upper}
        if op in regularized:
            return regularized[op]
        # GammaU = Gamma(k, x) = E1(x) + O(k); GammaL = P Gamma(k) ~ 1 / k overflows
        return np.inf * (1.0 - upper) if op == "GammaL" else scipy.special.exp1(x)


def _k(x) -> np.ndarray:
    dtype = str(x.dtype) if str(x.dtype).startswith("float") else "float64"
    with np.errstate(over="ignore"):
        return np.array(GAMMA_INC_K, dtype=dtype).reshape((-1,) + (1,) * x.ndim)


def with_k(op: str):
    """x -> op(k, x) for each k of GAMMA_INC_K along a new leading axis."""

    def build(x):
        return BUILD[op](pt.as_tensor(_k(x)), x)

    return build


def departure(op: str):
    def fix(values, expected):
        x = np.asarray(values)
        k, x = np.broadcast_arrays(_k(x), x)
        k64, x64 = k.astype(np.float64), x.astype(np.float64)
        with np.errstate(all="ignore"):
            fixed = np.asarray(SCIPY[op](k64, x64)).astype(expected.dtype)  # in float64, rounded once
            wrong = (k64 > 0) & (k64 < 2.2250738585072014e-308) & (x64 > 0) & np.isfinite(x64)
            # SciPy flushes a subnormal P (gammainc(1, 5e-324), gammainc(171.5, 1)) to 0
            flushed = ~wrong & (k64 > 0) & np.isfinite(k64) & (x64 > 0) & np.isfinite(x64) & (
                scipy.special.gammainc(k64, x64) == 0)
        if wrong.any():
            fixed[wrong] = _subnormal_k(op, k64[wrong], x64[wrong]).astype(fixed.dtype)
        if op in ("GammaL", "GammaU"):  # ptonnx's are finite where they are; PyTensor's products are not
            with np.errstate(all="ignore"):
                tail = (scipy.special.gammainc if op == "GammaL" else scipy.special.gammaincc)(k64, x64)
                product = ~wrong & (k64 > 0) & np.isfinite(k64) & (x64 > 0) & np.isfinite(x64) & (
                    ~np.isfinite(scipy.special.gamma(k64)) | (np.abs(tail) < np.finfo(np.float64).tiny)
                    | ~np.isfinite(fixed) | (fixed == 0))
            flushed = flushed & ~product
            if product.any():
                fixed[product] = EXACT[op](k64[product], x64[product]).astype(np.float64).astype(fixed.dtype)
        if flushed.any():
            exact = EXACT[op](k64[flushed], x64[flushed]).astype(np.float64)
            fixed[flushed] = exact.astype(fixed.dtype)
        return fixed

    return fix
