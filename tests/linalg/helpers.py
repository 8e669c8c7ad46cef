"""What the linear-algebra tests share: test matrices, and the comparison against LAPACK."""

from __future__ import annotations

import numpy as np

SIZES = (0, 1, 2, 5, 50, 200)
EPS = np.finfo(np.float64).eps
#: c in the bound |ptonnx - LAPACK| <= c n eps ||LAPACK|| (max norm), for well-conditioned inputs;
#: ill-conditioned solves are held to their residual instead (`residual`)
C = 8.0


def rng(seed=0):
    return np.random.default_rng(seed)


def spd(n, batch=(), cond=None, seed=0):
    """Symmetric positive definite matrices; `cond`: with that condition number."""
    g = rng(seed).normal(size=batch + (n, n))
    if cond is None:
        return g @ np.swapaxes(g, -1, -2) / max(n, 1) + np.eye(n)
    q, _ = np.linalg.qr(g)
    eig = np.logspace(0, -np.log10(cond), n) if n else np.zeros(0)
    return (q * eig[..., None, :]) @ np.swapaxes(q, -1, -2)


def normwise(actual, expected, context="", n=None):
    """NaN where LAPACK gives NaN; elsewhere within C n eps of the largest magnitude (n: the
    matrices' size; by default the output's last axis)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, (context, actual.shape, expected.shape)
    if expected.dtype.kind in "iub":  # pivots, permutations: exact
        assert np.array_equal(actual, expected), context
        return
    assert np.array_equal(np.isnan(actual), np.isnan(expected)), f"{context}: NaN in other places"
    ok = ~np.isnan(expected)
    if not ok.any():
        return
    assert np.array_equal(np.isinf(actual), np.isinf(expected)) and np.array_equal(actual[np.isinf(actual)], expected[np.isinf(expected)]), \
        f"{context}: infinities differ"
    ok &= ~np.isinf(expected)
    if not ok.any():
        return
    n = n or (max(expected.shape[-2:] + (1,)) if expected.ndim >= 2 else max(expected.shape[-1:] + (1,)))
    eps = np.finfo(expected.dtype).eps
    scale = np.max(np.abs(expected[ok]), initial=1e-300)
    err = np.max(np.abs(actual[ok] - expected[ok]))
    assert err <= C * n * eps * scale, f"{context}: error {err:.3g} above {C} n eps ||x|| = {C * n * eps * scale:.3g}"


def general(n, seed=0):
    """A well-conditioned general matrix."""
    return rng(seed).normal(size=(n, n)) / np.sqrt(max(n, 1)) + 2 * np.eye(n)


def compare_for(values):
    n = max(values[0].shape[-1], 1)
    return lambda actual, expected, context: normwise(actual, expected, context, n=n)
