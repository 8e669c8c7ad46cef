"""The rejection samplers' random ops (`decompositions/random/gamma.py`, `vonmises.py`): hand-built IR, lowered
and run at both onnxruntime levels, against `interpret` of the same graph (the decomposition run
by NumPy: the same Threefry bits, so the same trips accept). The draws agree bit for bit
(`decompositions/random/portable.py`), and so do the two onnxruntime levels."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ptonnx import stages
from ptonnx.decompositions.expr import Ex, Scope
from ptonnx.decompositions.random.rejection import until_accepted
from ptonnx.errors import CheckFailedError
from ptonnx.ir import Builder, Graph, TensorType, Value, interpret
from ptonnx.keys import key
from tests.conftest import ORT_LEVELS, session_options

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

#: the rejection samplers' ops, each with its hand-built case below (read by tests/ir/test_registry.py)
COVERS = frozenset({"RandomGamma", "RandomInvGamma", "RandomBeta", "RandomStudentT", "RandomGenGamma", "RandomDirichlet",
                    "RandomVonMises"})

#: each op's parameters: one row per element (broadcast against the draws' last axis)
CASES = {
    "RandomGamma": [[0.0, 1e-3, 0.3, 1.0, 2.5, 1e6, np.inf, np.nan], [1.0, 2.0, 0.5, 0.0, 3.0, 1.0, 1.0, 1.0]],
    "RandomInvGamma": [[1e-3, 0.5, 1.0, 4.0, 1e6, 0.0], [1.0, 2.0, 0.0, 3.0, 1.0, 1.0]],
    "RandomBeta": [[1e-300, 1e-3, 0.5, 2.0, 1e6, np.nan], [1e-300, 1e-3, 0.5, 5.0, 1e6, 1.0]],
    "RandomStudentT": [[0.1, 1.0, 3.0, 30.0, 1e6], [0.0, 1.0, -2.0, 0.0, 0.0], [1.0, 2.0, 0.5, 0.0, 1.0]],
    "RandomGenGamma": [[0.5, 3.0, -2.0, 1e-3], [2.0, 0.5, -1.0, 2.0], [1.0, 2.0, 1.0, 0.0]],
    "RandomDirichlet": [[1.0, 2.0, 1e-3, 0.0, 5.0]],
    "RandomVonMises": [[0.0, 1.0, -2.0, 3.0, 0.5, 0.0, np.nan], [1.0, 1e-9, 1e-6, 50.0, 1e7, np.nan, 1.0]],
}
ROWS = 300


def _graph(op: str, columns: int, dtype: str) -> Graph:
    n = len(CASES[op])
    g = Graph()
    k = g.add_input(TensorType("uint32", (2,)), "key")
    params = [g.add_input(TensorType("float64", (columns,)), f"p{i}") for i in range(n)]
    b = Builder(g)
    shape = Value.constant(np.array([ROWS, columns], dtype=np.int64))
    g.set_outputs([b.node(op, [k, shape, *params], {"stream": 7, "dtype": dtype}).output])
    return g


def _run(op: str, dtype: str = "float64"):
    arrays = [np.asarray(p, dtype=np.float64) for p in CASES[op]]
    columns = arrays[0].size
    g = _graph(op, columns, dtype)
    model = stages.compile_graph(_graph(op, columns, dtype)).model
    onnx.checker.check_model(model, full_check=True)
    feed = {"key": key(12345), **{f"p{i}": a for i, a in enumerate(arrays)}}
    (expected,) = interpret(g, feed["key"], *arrays)
    got = {}
    for level in ORT_LEVELS:
        session = ort.InferenceSession(model.SerializeToString(), session_options(level), providers=["CPUExecutionProvider"])
        (got[level],) = session.run(None, feed)
    first, second = (got[level] for level in ORT_LEVELS)
    assert first.dtype == expected.dtype == np.dtype(dtype) and first.shape == expected.shape == (ROWS, columns)
    assert first.tobytes() == second.tobytes(), (op, "the onnxruntime levels differ")
    assert first.tobytes() == expected.tobytes(), (op, "onnxruntime differs from interpret")
    return first


@pytest.mark.parametrize("op", sorted(COVERS))
def test_random_op_runs_as_interpreted(op):
    _run(op)


def test_gamma_special_shapes_and_float32():
    x = _run("RandomGamma")
    assert (x[:, 0] == 0).all() and (x[:, 3] == 0).all()  # shape 0, scale 0
    assert np.isinf(x[:, 6]).all() and np.isnan(x[:, 7]).all()
    assert (x[:, 1:3] >= 0).all() and (x[:, 4:6] > 0).all()
    y = _run("RandomGamma", "float32")
    np.testing.assert_array_equal(y, x.astype(np.float32))


def test_dirichlet_rows_sum_to_one():
    x = _run("RandomDirichlet")
    np.testing.assert_allclose(x.sum(axis=1), 1.0, rtol=1e-13)
    assert (x[:, 3] == 0).all()


def test_beta_of_the_least_parameters_is_zero_or_one():
    x = _run("RandomBeta")
    assert set(np.unique(x[:, 0])) == {0.0, 1.0}
    assert np.isnan(x[:, 5]).all()


def test_a_sampler_that_never_accepts_fails_the_run():
    g = Graph()
    k = g.add_input(TensorType("uint32", (2,)), "key")
    scope = Scope(Builder(g))
    words = tuple(Ex(scope, scope.op("Gather", [k, scope.scalar(i, "int64")], {"axis": 0})) for i in (0, 1))
    n = Ex(scope, scope.constant(np.array([5], dtype=np.int64))).op("ReduceProd", axes=(0,))

    def never(trip, params):
        (u,) = trip.uniforms
        return u, u < 0.0

    out = until_accepted(words, n, [], never, normals=0, uniforms=1, op="Never", max_trips=3)
    g.set_outputs([out.value])
    with pytest.raises(CheckFailedError, match="Never: the rejection sampler accepted not every draw within 3 trips"):
        interpret(g, key(1))
    model = stages.compile_graph(g).model
    session = ort.InferenceSession(model.SerializeToString(), session_options(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match="ptonnx_check"):  # the check's node fails the run
        session.run(None, {"key": key(1)})
