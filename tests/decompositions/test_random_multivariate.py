"""The multivariate normal, choice and permutation ops (`decompositions/random/multivariate.py`,
`permutations.py`), hand-built, lowered and run at both onnxruntime levels against `interpret` of
the same graph (the decomposition run by NumPy: the same Threefry bits). Draws agree bit for bit
(`decompositions/random/portable.py`), but the eigh and svd methods' normal draws, whose factor's
sums are onnxruntime's (to 1e-12 of their largest magnitude); the two onnxruntime levels agree bit
for bit."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ptonnx import stages
from ptonnx.errors import CheckFailedError
from ptonnx.ir import Builder, Graph, TensorType, Value, interpret
from ptonnx.keys import key
from tests.conftest import ORT_LEVELS, session_options

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

#: the ops with a hand-built case here (read by tests/ir/test_registry.py)
COVERS = frozenset({"RandomMvNormal", "RandomChoice", "RandomWeightedChoice", "RandomPermutation"})

COV = np.array([[4.0, 1.2, -0.8], [1.2, 2.0, 0.3], [-0.8, 0.3, 1.0]])
B = np.array([[1.0, 0.5], [-1.0, 2.0], [0.0, 1.0]])


def _graph(op: str, params: list[np.ndarray], shape, attrs: dict) -> Graph:
    g = Graph()
    k = g.add_input(TensorType("uint32", (2,)), "key")
    inputs = [g.add_input(TensorType(p.dtype.name, p.shape), f"p{i}") for i, p in enumerate(params)]
    out_shape = Value.constant(np.asarray(shape, dtype=np.int64))
    g.set_outputs([Builder(g).node(op, [k, out_shape, *inputs], {"stream": 5, **attrs}).output])
    return g


def _run(op: str, params, shape, attrs: dict, seed: int = 4321, reordered: bool = False):
    """`reordered`: A's factorisation (eigh's, svd's Jacobi sweeps) adds in onnxruntime's order
    (its ReduceSum, MatMul), not NumPy's, so the draws agree to 1e-12 of their largest magnitude,
    not of each (a draw near 0 cancels)."""
    params = [np.asarray(p) for p in params]
    g = _graph(op, params, shape, attrs)
    model = stages.compile_graph(_graph(op, params, shape, attrs)).model
    onnx.checker.check_model(model, full_check=True)
    feed = {"key": key(seed), **{f"p{i}": p for i, p in enumerate(params)}}
    (expected,) = interpret(g, feed["key"], *params)
    runs = []
    for level in ORT_LEVELS:
        session = ort.InferenceSession(model.SerializeToString(), session_options(level), providers=["CPUExecutionProvider"])
        runs.append(session.run(None, feed)[0])
    assert runs[0].tobytes() == runs[1].tobytes(), (op, "the onnxruntime levels differ")
    got = runs[0]
    assert got.shape == expected.shape == tuple(shape) and got.dtype == expected.dtype == np.dtype(attrs["dtype"])
    if attrs.get("method", "cholesky") != "cholesky":  # docs/random.md: not bit for bit
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max() if reordered else 0, err_msg=op)
    else:
        assert got.tobytes() == expected.tobytes(), op
    return got


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_mvnormal_runs_as_interpreted(method):
    x = _run("RandomMvNormal", [np.array([1.0, -2.0, 0.5]), COV], (500, 3), {"dtype": "float64", "method": method})
    assert np.isfinite(x).all()
    y = _run("RandomMvNormal", [np.array([1.0, -2.0, 0.5]), COV], (500, 3), {"dtype": "float32", "method": method})
    np.testing.assert_array_equal(y, x.astype(np.float32))


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_mvnormal_batched_runs_as_interpreted(method):
    means = np.arange(6.0).reshape(2, 1, 3)
    covs = np.stack([COV * (k + 1) for k in range(4)])
    _run("RandomMvNormal", [means, covs], (50, 2, 4, 3), {"dtype": "float64", "method": method})


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_mvnormal_of_12_dimensions_runs_as_interpreted(method):
    """12 columns: A z summed in a Loop (up to 8, unrolled)."""
    b = np.random.default_rng(0).normal(size=(12, 12))
    _run("RandomMvNormal", [np.linspace(-1.0, 1.0, 12), b @ b.T + np.eye(12)], (200, 12), {"dtype": "float64", "method": method},
         reordered=method != "cholesky")


@pytest.mark.parametrize("method", ["eigh", "svd"])
def test_mvnormal_of_a_singular_cov_runs_as_interpreted(method):
    for cov in (B @ B.T, np.outer(B[:, 1], B[:, 1]), np.zeros((3, 3))):
        x = _run("RandomMvNormal", [np.zeros(3), cov], (300, 3), {"dtype": "float64", "method": method})
        assert np.isfinite(x).all()


def test_mvnormal_cholesky_refuses_a_cov_not_positive_definite():
    g = _graph("RandomMvNormal", [np.zeros(2), np.eye(2)], (4, 2), {"dtype": "float64", "method": "cholesky"})
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(CheckFailedError, match="not positive definite"):
        interpret(g, key(1), np.zeros(2), bad)
    model = stages.compile_graph(g).model
    session = ort.InferenceSession(model.SerializeToString(), session_options(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match="ptonnx_check"):
        session.run(None, {"key": key(1), "p0": np.zeros(2), "p1": bad})
    nan = np.array([[np.nan, 0.0], [0.0, 1.0]])  # NaN in, NaN out (NumPy's cholesky does not raise)
    assert np.isnan(interpret(g, key(1), np.zeros(2), nan)[0]).all()


def test_eigh_takes_a_negative_eigenvalue_as_pytensor_does():
    g = _graph("RandomMvNormal", [np.zeros(2), np.eye(2)], (4, 2), {"dtype": "float64", "method": "eigh"})
    (x,) = interpret(g, key(1), np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]]))
    assert np.isnan(x).all()


def test_choice_runs_as_interpreted():
    rows = np.tile(np.arange(6.0) * 10, (40, 1))
    x = _run("RandomChoice", [rows, np.array([3])], (40, 3), {"dtype": "float64", "core_ndim": 1})
    assert all(len(set(r)) == 3 for r in x)
    # a matrix's rows, a 2-D core shape, batch broadcast: a (2, 1, 5, 2) -> (2, 3, 2, 2, 2)
    a = np.arange(20, dtype=np.int32).reshape(2, 1, 5, 2)
    y = _run("RandomChoice", [a, np.array([2, 2])], (2, 3, 2, 2, 2), {"dtype": "int32", "core_ndim": 2})
    assert (y[..., 1] == y[..., 0] + 1).all()
    z = _run("RandomChoice", [np.array(9), np.array([4])], (4,), {"dtype": "int64", "core_ndim": 0})
    assert len(set(z)) == 4 and set(z) <= set(range(9))


def test_weighted_choice_runs_as_interpreted():
    p = np.array([[0.5, 0.2, 0.0, 0.3, 0.0], [0.2, 0.2, 0.2, 0.2, 0.2]])
    x = _run("RandomWeightedChoice", [np.arange(5.0), np.repeat(p, 50, axis=0), np.array([2])], (100, 2),
             {"dtype": "float64", "core_ndim": 1})
    assert (x[:, 0] != x[:, 1]).all() and not np.isin(x[:50], [2.0, 4.0]).any()
    y = _run("RandomWeightedChoice", [np.array(5), p[0], np.array([3])], (3,), {"dtype": "int64", "core_ndim": 0})
    assert sorted(y) == [0, 1, 3]


def test_permutation_runs_as_interpreted():
    x = _run("RandomPermutation", [np.arange(7.0)], (100, 7), {"dtype": "float64", "core_ndim": 1})
    assert (np.sort(x, axis=1) == np.arange(7.0)).all()
    y = _run("RandomPermutation", [np.array(6)], (6,), {"dtype": "int64", "core_ndim": 0})
    assert sorted(y) == list(range(6))
    m = np.arange(8.0).reshape(4, 2)
    z = _run("RandomPermutation", [m], (3, 4, 2), {"dtype": "float64", "core_ndim": 2})
    assert (np.sort(z[..., 0], axis=1) == m[:, 0]).all() and (z[..., 1] == z[..., 0] + 1).all()
