"""The discrete random ops built on loops (`decompositions/random/poisson.py`, `binomial.py`,
`hypergeometric.py`): hand-built IR, lowered and run at both onnxruntime levels, against
`interpret` of the same graph (the decomposition run by NumPy: the same Threefry bits, so the same
trips accept and the same searches stop). The draws are integers: they agree exactly, and the two
onnxruntime levels agree bit for bit."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ptonnx import stages
from ptonnx.decompositions.expr import Ex, Scope
from ptonnx.decompositions.random.poisson import invert, log_factorial
from ptonnx.decompositions.random.rejection import until_accepted
from ptonnx.ir import Builder, Graph, TensorType, Value, interpret
from ptonnx.keys import key
from tests.conftest import ORT_LEVELS, session_options

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

#: the discrete loop samplers' ops, each with its hand-built case below (read by tests/ir/test_registry.py)
COVERS = frozenset({"RandomPoisson", "RandomBinomial", "RandomNegBinomial", "RandomBetaBinomial", "RandomHyperGeometric",
                    "RandomMultinomial"})

#: each op's parameters: one row per parameter, one column per element of the draws' last axis
CASES = {
    "RandomPoisson": [[0.0, 1e-10, 0.5, 9.99, 10.0, 50.0, 1e6]],
    "RandomBinomial": [[0.0, 1.0, 10.0, 25.0, 1000.0, 1e9, 1e9, 7.0], [0.5, 0.5, 0.3, 0.4, 0.9, 1e-12, 0.5, 1.0]],
    "RandomNegBinomial": [[0.5, 5.0, 100.0, 3.0, 2.0], [0.5, 0.3, 0.9, 0.01, 1.0]],
    "RandomBetaBinomial": [[0.0, 10.0, 1000.0, 50.0], [1.0, 2.0, 0.5, 100.0], [1.0, 3.0, 0.5, 0.1]],
    "RandomHyperGeometric": [[5.0, 50.0, 3.0, 1000.0, 1e6, 0.0, 20.0], [7.0, 60.0, 100.0, 10.0, 1e6, 5.0, 20.0],
                             [4.0, 30.0, 50.0, 1005.0, 1e5, 3.0, 15.0]],
}
ROWS = 400


def _session_runs(g: Graph, feed: dict) -> list[np.ndarray]:
    model = stages.compile_graph(g).model
    onnx.checker.check_model(model, full_check=True)
    runs = []
    for level in ORT_LEVELS:
        session = ort.InferenceSession(model.SerializeToString(), session_options(level), providers=["CPUExecutionProvider"])
        (out,) = session.run(None, feed)
        runs.append(out)
    assert runs[0].tobytes() == runs[1].tobytes(), "the onnxruntime levels differ"
    return runs


def _graph(op: str, param_types: list[TensorType], shape: list[int], dtype: str) -> Graph:
    g = Graph()
    k = g.add_input(TensorType("uint32", (2,)), "key")
    params = [g.add_input(t, f"p{i}") for i, t in enumerate(param_types)]
    b = Builder(g)
    out_shape = Value.constant(np.array(shape, dtype=np.int64))
    g.set_outputs([b.node(op, [k, out_shape, *params], {"stream": 3, "dtype": dtype}).output])
    return g


def _run(op: str, arrays: list[np.ndarray], shape: list[int], dtype: str = "int64") -> np.ndarray:
    types = [TensorType(str(a.dtype), a.shape) for a in arrays]
    feed = {"key": key(4242), **{f"p{i}": a for i, a in enumerate(arrays)}}
    (expected,) = interpret(_graph(op, types, shape, dtype), feed["key"], *arrays)
    first, _ = _session_runs(_graph(op, types, shape, dtype), feed)
    assert first.dtype == expected.dtype == np.dtype(dtype) and first.shape == expected.shape == tuple(shape)
    np.testing.assert_array_equal(first, expected, err_msg=op)
    return first


@pytest.mark.parametrize("op", sorted(CASES))
def test_random_op_runs_as_interpreted(op):
    arrays = [np.asarray(p, dtype=np.float64) for p in CASES[op]]
    x = _run(op, arrays, [ROWS, arrays[0].size])
    assert (x >= 0).all()


def test_special_parameters_give_their_values():
    x = _run("RandomPoisson", [np.asarray(CASES["RandomPoisson"][0])], [ROWS, 7])
    assert (x[:, 0] == 0).all()
    x = _run("RandomBinomial", [np.asarray(p) for p in CASES["RandomBinomial"]], [ROWS, 8])
    assert (x[:, 0] == 0).all() and (x[:, 7] == 7).all() and (x <= np.asarray(CASES["RandomBinomial"][0])).all()
    x = _run("RandomNegBinomial", [np.asarray(p) for p in CASES["RandomNegBinomial"]], [ROWS, 5])
    assert (x[:, 4] == 0).all()
    x = _run("RandomHyperGeometric", [np.asarray(p) for p in CASES["RandomHyperGeometric"]], [ROWS, 7])
    assert (x[:, 5] == 0).all() and (x[:, 3] >= 995).all() and (x[:, 3] <= 1000).all()


def test_int32_draws_are_the_int64_draws():
    lam = [np.asarray(CASES["RandomPoisson"][0])]
    wide = _run("RandomPoisson", lam, [ROWS, 7])
    narrow = _run("RandomPoisson", lam, [ROWS, 7], "int32")
    np.testing.assert_array_equal(narrow, wide.astype(np.int32))


def test_multinomial_runs_as_interpreted():
    n = np.asarray([0, 5, 100, 10**6], dtype=np.int64)
    p = np.asarray([[0.5, 0.5, 0.0], [0.1, 0.2, 0.7], [1 / 3, 1 / 3, 1 / 3], [0.25, 0.5, 0.25]])
    x = _run("RandomMultinomial", [n, p], [ROWS, 4, 3])
    np.testing.assert_array_equal(x.sum(axis=2), np.tile(n, (ROWS, 1)))
    assert (x[:, 0] == 0).all() and (x[:, 1:, :] >= 0).all()


def test_the_search_stops_where_its_sum_stops_growing():
    """With p_k = 0.5**(k+1), the sum reaches 1 - 2**-53 at k = 52 and rounds to 1 at k = 53; u = 2 is
    never reached: the search stops at k = 54, where the terms no longer add to the sum, at both levels."""
    g = Graph()
    u_in = g.add_input(TensorType("float64", (4,)), "u")
    scope = Scope(Builder(g))
    u = Ex(scope, u_in)
    first = u * 0.0 + 0.5
    out = invert(u, first, lambda m, ps: ps[0], [u * 0.0 + 0.5])
    g.set_outputs([out.value])
    feed = {"u": np.asarray([0.0, 0.7, 1.0, 2.0])}
    (expected,) = interpret(g, feed["u"])
    np.testing.assert_array_equal(expected, [0.0, 1.0, 53.0, 54.0])
    runs = _session_runs(g, feed)
    np.testing.assert_array_equal(runs[0], expected)


def test_log_factorial_matches_lgamma():
    from math import lgamma

    g = Graph()
    k_in = g.add_input(TensorType("float64", (None,)), "k")
    scope = Scope(Builder(g))
    g.set_outputs([log_factorial(Ex(scope, k_in)).value])
    ks = np.asarray([0, 1, 2, 9, 15, 16, 17, 100, 1e4, 1e9, 1e15])
    (got,) = interpret(g, ks)
    np.testing.assert_allclose(got, [lgamma(k + 1) for k in ks], rtol=1e-14, atol=1e-15)


def test_skipped_elements_are_not_drawn():
    """`until_accepted`'s skip mask: skipped elements give 0 and need no trip; where every element is
    skipped no trip runs (a sampler that never accepts does not fail the run)."""
    g = Graph()
    k = g.add_input(TensorType("uint32", (2,)), "key")
    skip_in = g.add_input(TensorType("bool", (4,)), "skip")
    scope = Scope(Builder(g))
    words = tuple(Ex(scope, scope.op("Gather", [k, scope.scalar(i, "int64")], {"axis": 0})) for i in (0, 1))
    n = Ex(scope, scope.constant(np.array([4], dtype=np.int64))).op("ReduceProd", axes=(0,))

    def never(trip, params):
        (u,) = trip.uniforms
        return u + 1.0, u < 0.0

    out = until_accepted(words, n, [], never, normals=0, uniforms=1, op="Never", max_trips=3, skip=Ex(scope, skip_in))
    g.set_outputs([out.value])
    feed = {"key": key(1), "skip": np.ones(4, dtype=bool)}
    (expected,) = interpret(g, *feed.values())
    np.testing.assert_array_equal(expected, np.zeros(4))
    runs = _session_runs(g, feed)
    np.testing.assert_array_equal(runs[0], expected)
