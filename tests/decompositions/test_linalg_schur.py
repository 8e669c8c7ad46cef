"""Schur built by hand (no PyTensor), decomposed (Hessenberg reduction and the Francis double-shift
QR iteration over Loops), lowered and run at both onnxruntime levels against `interpret` (LAPACK's
gees through SciPy): one model for every size (0, 1, 2, 3, 9, 33), batches (an empty one, a batch of
empty matrices), NaN and inf (NaN for that matrix only), float32.

The form is not unique, so the graph gives what is: Z T Z^T (= A) and Z^T Z (= I), compared with
interpret's within C n eps ||A|| (`normwise`), and T itself, held to its structure (zeros below the subdiagonal,
standard 2 x 2 blocks, no two consecutive nonzero subdiagonal entries) and NaN where interpret's is."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx import ir
from ptonnx.ir import TensorType as T
from tests.linalg.helpers import normwise
from tests.lowering.harness import compiled

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

COVERS = frozenset({"Schur"})


def _schur_products(shape, dtype="float64"):
    """a -> (Z T Z^T, Z^T Z, T) of Schur(a)."""

    def build():
        g = ir.Graph("schur_case")
        a = g.add_input(T(dtype, shape), "a")
        b = ir.Builder(g)
        t, z = b.node("Schur", [a]).outputs
        r = len(shape)
        z_t = b.node("Transpose", [z], {"perm": (*range(r - 2), r - 1, r - 2)}).output
        back = b.node("MatMul", [b.node("MatMul", [z, t]).output, z_t]).output
        g.set_outputs([back, b.node("MatMul", [z_t, z]).output, t])
        return g

    return build


def _structure(actual, expected, context=""):
    """T: NaN where interpret's is, and in real Schur form."""
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, context
    assert np.array_equal(np.isnan(actual), np.isnan(expected)), context
    n = actual.shape[-1]
    for t in actual.reshape(-1, n, n) if actual.size else ():
        if np.isnan(t).any():
            continue
        assert not np.tril(t, -2).any(), context
        sub = np.diagonal(t, -1)
        assert not (sub[1:].astype(bool) & sub[:-1].astype(bool)).any(), context
        for p in np.flatnonzero(sub):
            assert t[p, p] == t[p + 1, p + 1] and np.sign(t[p, p + 1]) * np.sign(t[p + 1, p]) < 0, context


COMPARE = [normwise, normwise, _structure]


def _general(n, batch=(), seed=0, dtype="float64"):
    return np.random.default_rng(seed).normal(size=batch + (n, n)).astype(dtype)


def test_schur_sizes_and_non_finite():
    case = compiled(_schur_products((None, None)))
    for n in (0, 1, 2, 3, 9, 33):
        case.check(_general(n, seed=n), compare=COMPARE, context=str(n))
    case.check(np.triu(_general(6)), compare=COMPARE)
    for value in (np.nan, np.inf):
        a = _general(5)
        a[3, 1] = value
        case.check(a, compare=COMPARE)


def test_schur_batches_and_float32():
    case = compiled(_schur_products(("b", None, None)))
    a = _general(7, (3,))
    a[1, 0, 6] = -np.inf  # only its own matrix is NaN
    case.check(a, compare=COMPARE)
    case.check(_general(4, (0,)), compare=COMPARE)
    case.check(_general(0, (2,)), compare=COMPARE)
    single = compiled(_schur_products((6, 6), "float32"))
    single.check(_general(6, dtype="float32"), compare=COMPARE)


def test_schur_that_does_not_converge_is_nan(monkeypatch):
    """gees' info > 0 (the QR algorithm needs more sweeps than its limit) gives NaN for that matrix
    (PyTensor's rule): with a limit of 0 sweeps, every matrix that needs one; an upper triangular
    matrix needs none (T = A, Z = I)."""
    from ptonnx.api import CompiledModel
    from ptonnx.decompositions.linalg import schur
    from ptonnx.passes import Report
    from tests.lowering.harness import compile_graph

    monkeypatch.setattr(schur, "ITERATIONS", 0)
    build = _schur_products(("b", None, None))
    t_of = CompiledModel(compile_graph(build()), build(), Report())
    a = _general(5, (3,))
    a[1] = np.triu(a[1])
    back, orth, t = t_of(a)
    assert np.isnan(t[[0, 2]]).all() and np.isnan(back[[0, 2]]).all()
    assert np.array_equal(t[1], a[1]) and np.array_equal(orth[1], np.eye(5))
