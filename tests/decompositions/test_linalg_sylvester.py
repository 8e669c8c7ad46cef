"""SolveSylvester built by hand (no PyTensor), decomposed (B's real Schur form, then windows of two
columns solved by LU), lowered and run at both onnxruntime levels against `interpret` (PyTensor's
Bartels-Stewart: Schur forms and LAPACK trsyl): sizes 0 to 50 through one model (m != n too),
B with real and with complex eigenvalues, batches broadcast (empty ones too), inf and NaN inputs
(NaN), and static sizes."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.ir import TensorType as T
from tests.lowering.harness import compiled, one_node

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

COVERS = frozenset({"SolveSylvester"})


def _problem(m, n, batch=(), seed=0):
    """A well-conditioned equation: A and B with eigenvalues in the right half-plane (A and -B far apart)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=batch + (m, m)) / np.sqrt(max(m, 1)) + 3 * np.eye(m)
    b = rng.normal(size=batch + (n, n)) / np.sqrt(max(n, 1)) + 3 * np.eye(n)
    return a, b, rng.normal(size=batch + (m, n))


def close(actual, expected, context=""):
    """NaN where the reference is NaN; elsewhere within c (mn) eps of the largest entry."""
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, context
    assert np.array_equal(np.isnan(actual), np.isnan(expected)), context
    ok = ~np.isnan(expected)
    size = max(expected.shape[-2] * expected.shape[-1], 1) if expected.ndim >= 2 else 1
    scale = np.max(np.abs(expected[ok]), initial=1e-300)
    assert np.max(np.abs(actual[ok] - expected[ok]), initial=0.0) <= 8 * size * np.finfo(expected.dtype).eps * scale, context


def test_solve_sylvester():
    case = compiled(one_node("SolveSylvester", [T("float64", (None, None)), T("float64", (None, None)), T("float64", (None, None))]))
    for m, n in [(0, 0), (0, 3), (3, 0), (1, 1), (2, 2), (5, 3), (3, 5), (8, 9), (20, 20), (50, 50)]:
        case.check(*_problem(m, n, seed=m + n), compare=close, context=f"{m} {n}")
    a, b, c = _problem(130, 7, seed=3)  # m n = 910 > SMALL: B's Schur form and windows
    structured = _structured()
    for b in structured:
        case.check(a, b, c, compare=close)
    a, b, c = _problem(4, 3)
    for k, where in enumerate([(0, 1), (2, 2), (3, 0)]):
        bad = [a.copy(), b.copy(), c.copy()]
        bad[k][where] = np.nan if k != 1 else -np.inf
        case.check(*bad, compare=close)
    batched = compiled(one_node("SolveSylvester", [T("float64", ("b", None, None)), T("float64", (None, None)),
                                                    T("float64", (1, None, None))]))
    a, b, c = _problem(4, 3, (3,))
    a[1, 2, 2] = np.nan  # only its own matrix is NaN
    batched.check(a, b[0], c[:1], compare=close)
    batched.check(a[:0], b[0], c[:1], compare=close)
    # windows of each matrix move on their own (real and complex blocks in other places)
    a, _, c = _problem(130, 7, (3,), seed=5)
    a[2, 0, 0] = np.nan
    windows = compiled(one_node("SolveSylvester", [T("float64", ("b", None, None))] * 3))
    windows.check(a, np.stack(structured + [structured[0]]), c, compare=close)


def _structured():
    """7 x 7 matrices with eigenvalues 3 + (real ones, complex pairs) in chosen orders."""
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    found = []
    for blocks in ([2.0 * np.eye(2)] * 3 + [np.eye(1)], [rotation * 2.0, np.eye(1), rotation, rotation + 3 * np.eye(2)]):
        structured = np.zeros((7, 7))
        at = 0
        for block in blocks:
            structured[at:at + len(block), at:at + len(block)] = block
            at += len(block)
        q, _ = np.linalg.qr(np.random.default_rng(len(found)).normal(size=(7, 7)))
        found.append(q @ (structured + 3 * np.eye(7)) @ q.T)
    return found


def test_static_sizes():
    """Sizes the graph fixes: the path is chosen at compile time (the Kronecker system up to
    SMALL unknowns, B's Schur form beyond)."""
    for m, n in ((6, 4), (40, 25)):
        case = compiled(one_node("SolveSylvester", [T("float64", (m, m)), T("float64", (n, n)), T("float64", (m, n))]))
        case.check(*_problem(m, n, seed=7), compare=close)
