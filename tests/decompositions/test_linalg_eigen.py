"""Eigh and Eigvalsh built by hand (no PyTensor), decomposed (Jacobi over Loops), lowered and run at
both onnxruntime levels against `interpret` (SciPy's eigh): one model for every size (0, 1, 2, odd
and even, 33), batches (empty ones, a batch broadcast against one b), both triangles with the other
full of NaN, NaN and inf in the read triangle (NaN for that matrix only), float32, and the
generalised problem (a b that is not positive definite raises LinAlgError).

Eigenvectors are compared column by column up to sign, on spectra whose gaps are >= 1 (unique
vectors, accurate to n eps ||A|| / gap)."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.ir import TensorType as T
from tests.lowering.harness import compiled, one_node

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

COVERS = frozenset({"Eigh", "Eigvalsh"})
#: c in |ptonnx - SciPy| <= c n eps max|value| (eigenvalues; eigenvectors on gaps >= 1)
C = 8.0


def _spectrum(n, batch=(), seed=0, spacing=1.0):
    """Symmetric matrices with eigenvalues spacing * (0, 1, ..., n - 1) - n / 2 (gaps >= spacing)."""
    g = np.random.default_rng(seed).normal(size=batch + (n, n))
    q, _ = np.linalg.qr(g)
    a = (q * (spacing * np.arange(n) - n / 2)) @ np.swapaxes(q, -1, -2)
    return (a + np.swapaxes(a, -1, -2)) / 2


def _close(actual, expected, context=""):
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, context
    assert np.array_equal(np.isnan(actual), np.isnan(expected)), context
    n = max(expected.shape[-1], 1)
    ok = ~np.isnan(expected)
    scale = np.abs(expected[ok]).max(initial=1.0)
    eps = np.finfo(expected.dtype).eps
    assert np.abs(actual[ok] - expected[ok]).max(initial=0.0) <= C * n * eps * scale, context


def _vectors(actual, expected, context=""):
    """Columns equal up to sign."""
    assert actual.shape == expected.shape, context
    signs = np.where(np.sum(actual * expected, axis=-2, keepdims=True) < 0, -1.0, 1.0)
    _close(actual * signs.astype(actual.dtype), expected, context)


def _unread_nan(a, lower):
    n = a.shape[-1]
    mask = np.triu(np.ones((n, n), bool), 1) if lower else np.tril(np.ones((n, n), bool), -1)
    return np.where(mask, np.nan, a)


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_sizes_triangles_and_non_finite(lower):
    case = compiled(one_node("Eigh", [T("float64", (None, None))], {"lower": lower}))
    for n in (0, 1, 2, 3, 9, 33):
        case.check(_unread_nan(_spectrum(n, seed=n), lower), compare=[_close, _vectors], context=str(n))
    for bad in (np.nan, np.inf):
        a = _spectrum(4)
        a[2, 1] = a[1, 2] = bad
        case.check(a, compare=[_close, _vectors], context=str(bad))
    case.check(np.eye(5), compare=[_close, _vectors])
    values = compiled(one_node("Eigvalsh", [T("float64", (None, None))], {"lower": lower}))
    repeated = _spectrum(6)
    repeated = repeated @ repeated  # pairs of equal eigenvalues
    for a in (_unread_nan(_spectrum(7) * 1e200, lower), _spectrum(5) * 1e-300, repeated, np.zeros((0, 0))):
        values.check(a, compare=_close)


def test_batches_and_float32():
    batched = compiled(one_node("Eigh", [T("float64", ("b", None, None))], {"lower": True}))
    some_bad = _spectrum(6, (3,))
    some_bad[1, 4, 2] = np.nan  # only that matrix is NaN
    for a in (some_bad, _spectrum(4, (0,)), _spectrum(0, (2,)), _spectrum(11, (2,))):
        batched.check(a, compare=[_close, _vectors], context=str(a.shape))
    single = compiled(one_node("Eigvalsh", [T("float32", (2, 5, 5))], {"lower": False}))
    single.check(_spectrum(5, (2,)).astype(np.float32), compare=_close)


def test_generalised_problem():
    """a v = w b v: b's Cholesky factor reduces it (v^T b v = I, SciPy's normalisation); b broadcast
    against a batch of a; a b that is not positive definite raises LinAlgError (SciPy's)."""
    rng = np.random.default_rng(3)
    g = rng.normal(size=(5, 5))
    b = g @ g.T + 5 * np.eye(5)
    case = compiled(one_node("Eigh", [T("float64", ("k", None, None)), T("float64", (None, None))], {"lower": True}))
    case.check(_spectrum(5, (2,)), b, compare=[_close, _vectors])
    case.check(_spectrum(0, (2,)), np.zeros((0, 0)), compare=[_close, _vectors])
    not_pd = b.copy()
    not_pd[3, 3] = -10.0
    case.check_fails(_spectrum(5, (2,)), not_pd, exception=np.linalg.LinAlgError)
    values = compiled(one_node("Eigvalsh", [T("float64", (None, None)), T("float64", (None, None))], {"lower": False}))
    values.check(_unread_nan(_spectrum(5), False), _unread_nan(b, False), compare=_close)
