"""SolveSylvester built by hand (no PyTensor), decomposed into the Kronecker system and LU, lowered
and run at both onnxruntime levels against `interpret` (PyTensor's Bartels-Stewart: Schur forms and
LAPACK trsyl): sizes 0 to 20 through one model (m != n too), batches broadcast (empty ones too),
inf and NaN inputs (NaN), and the compile-time refusal of absurd static sizes."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.errors import UnsupportedOpError
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
    for m, n in [(0, 0), (0, 3), (3, 0), (1, 1), (2, 2), (5, 3), (3, 5), (8, 9), (20, 20)]:
        case.check(*_problem(m, n, seed=m + n), compare=close, context=f"{m} {n}")
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


def test_absurd_static_sizes_are_refused_at_compile_time():
    with pytest.raises(UnsupportedOpError, match="Kronecker system"):
        compiled(one_node("SolveSylvester", [T("float64", (80, 80)), T("float64", (80, 80)), T("float64", (80, 80))]))
