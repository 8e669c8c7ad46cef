"""The generator's ops and each random op, hand-built, lowered and run at both onnxruntime
levels against `interpret` (the op's semantics): bits and draws exactly (the draws' float
transforms are `decompositions/random/portable.py`'s, in ops IEEE 754 defines exactly); the two
onnxruntime levels alike, bit for bit."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ptonnx import stages
from ptonnx.ir import Builder, Graph, TensorType, Value, interpret
from ptonnx.ir.ops.random import DISTRIBUTIONS
from tests.conftest import ORT_LEVELS, session_options

pytestmark = pytest.mark.one_environment

#: the ops this module has a hand-built case for (read by tests/ir/test_registry.py)
COVERS = frozenset({"ShiftLeft", "ShiftRight", "TruncDiv", "Threefry2x32", "NextKey"})  # and PARAMS' ops, below

U32_EDGES = np.array([0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF, 0x243F6A88], dtype=np.uint32)


def _run(g: Graph, arrays):
    model = stages.compile_graph(g).model
    onnx.checker.check_model(model, full_check=True)
    names = [i.name for i in model.graph.input]
    runs = []
    for level in ORT_LEVELS:
        session = ort.InferenceSession(model.SerializeToString(), session_options(level), providers=["CPUExecutionProvider"])
        runs.append(session.run(None, dict(zip(names, arrays, strict=True))))
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b, err_msg="the onnxruntime levels differ")
    return runs[0], interpret(g, *arrays)


def _graph(op, types, attrs=None, shapes=None):
    g = Graph()
    inputs = [g.add_input(TensorType(t, s), f"x{i}") for i, (t, s) in enumerate(zip(types, shapes, strict=True))]
    g.set_outputs(Builder(g).node(op, inputs, attrs or {}).outputs)
    return g


@pytest.mark.parametrize("op", ["ShiftLeft", "ShiftRight"])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_shifts_are_bitshift(op, dtype):
    bits = np.dtype(dtype).itemsize * 8
    a = np.repeat(U32_EDGES.astype(dtype), bits)
    b = np.tile(np.arange(bits, dtype=dtype), len(U32_EDGES))
    got, expected = _run(_graph(op, [dtype, dtype], shapes=[(None,), (None,)]), [a, b])
    np.testing.assert_array_equal(got[0], expected[0])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_trunc_div_rounds_toward_zero_as_c(dtype):
    """TruncDiv (the carried right shift, `passes/carry_dtypes.py`) is C's division: toward
    zero, x / 0 == 0, INT_MIN / -1 wraps; run-time divisors are guarded, constant ones not."""
    info = np.iinfo(dtype)
    edges = np.array([info.min, info.min + 1, -7, -1, 0, 1, 2, 7, 2**20, info.max], dtype)
    a, b = np.repeat(edges, edges.size), np.tile(edges, edges.size)

    def c_division(x: int, y: int) -> int:
        if y == 0:
            return 0
        q = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)
        return int(np.array(q % 2 ** info.bits, dtype=f"uint{info.bits}").astype(dtype))  # INT_MIN / -1 wraps

    expected = np.array([c_division(int(x), int(y)) for x, y in zip(a, b, strict=True)], dtype)
    got, interpreted = _run(_graph("TruncDiv", [dtype, dtype], shapes=[(None,), (None,)]), [a, b])
    np.testing.assert_array_equal(got[0], expected)
    np.testing.assert_array_equal(interpreted[0], expected)
    g = Graph()
    x = g.add_input(TensorType(dtype, (None,)), "x")
    g.set_outputs([Builder(g).op("TruncDiv", x, Value.constant(np.array(2**20, dtype)))])
    assert [n.op_type for n in stages.compile_graph(g).model.graph.node] == ["Div"], "a constant divisor needs no guard"
    np.testing.assert_array_equal(_run(g, [edges])[0][0], [c_division(int(v), 2**20) for v in edges])


def test_threefry_runs_bit_for_bit_as_its_numpy_twin():
    k0, k1, x0, x1 = np.meshgrid(U32_EDGES, U32_EDGES[::3], U32_EDGES, U32_EDGES[::2], indexing="ij")
    arrays = [a.ravel() for a in (k0, k1, x0, x1)]
    got, expected = _run(_graph("Threefry2x32", ["uint32"] * 4, shapes=[(None,)] * 4), arrays)
    for g_, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g_, e)


def test_next_key_is_the_numpy_twins():
    got, expected = _run(_graph("NextKey", ["uint32"], {"stream": 7}, [(2,)]), [np.array([5, 0xFFFFFFFF], np.uint32)])
    np.testing.assert_array_equal(got[0], expected[0])


#: parameter values for each random op, one row per parameter (broadcast against the draws)
PARAMS = {
    "RandomUniform": [[-1.0, 0.0, 1e300], [2.0, 0.0, 1e300]],
    "RandomNormal": [[0.0, -3.0, 1e300], [1.0, 0.0, 1e-300]],
    "RandomHalfNormal": [[0.0, 2.0, 0.0], [1.0, 5e-324, 1e300]],
    "RandomLogNormal": [[0.0, 1.0, -700.0], [1.0, 0.0, 2.0]],
    "RandomExponential": [[1.0, 0.0, 1e-300]],
    "RandomTruncExpon": [[1.0, 1e-10, 50.0], [0.0, 1.0, -2.0], [1.0, 2.0, 0.5]],
    "RandomGumbel": [[0.0, 1.0, -1.0], [1.0, 0.0, 1e10]],
    "RandomLogistic": [[0.0, 1.0, -1.0], [1.0, 0.0, 1e-10]],
    "RandomLaplace": [[0.0, 1.0, -1.0], [1.0, 0.0, 3.0]],
    "RandomCauchy": [[0.0, 1.0, -1.0], [1.0, 0.0, 3.0]],
    "RandomHalfCauchy": [[0.0, 1.0, -1.0], [1.0, 0.0, 3.0]],
    "RandomWeibull": [[1.0, 0.0, 0.01]],
    "RandomPareto": [[1.0, 3.0, 0.05], [1.0, 2.0, 1e-3]],
    "RandomTriangular": [[0.0, 0.0, -1.0], [0.5, 0.0, 1.0], [1.0, 1.0, 1.0 + 1e-9]],
    "RandomWald": [[1.0, 1e-3, 1e3], [1.0, 1e3, 1e-3]],
    "RandomBernoulli": [[0.0, 1.0, 0.3]],
    "RandomGeometric": [[1.0, 0.5, 1e-12]],
    "RandomIntegers": [[0, -5, -(2**40)], [1, 5, 2**40]],
    "RandomCategorical": [[[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]],
}


@pytest.mark.parametrize("op", sorted(set(DISTRIBUTIONS) & set(PARAMS)))
def test_random_op_runs_as_interpreted(op):
    params = [np.asarray(p, dtype="int64" if op == "RandomIntegers" else "float64") for p in PARAMS[op]]
    draws = (1000, 3)
    if op == "RandomCategorical":
        params[0] = params[0][None]
    out_dtype = "int64" if DISTRIBUTIONS[op][1] != DISTRIBUTIONS["RandomNormal"][1] else "float64"
    types = ["uint32", "int64", *(p.dtype.name for p in params)]
    shapes = [(2,), (2,), *(p.shape for p in params)]
    g = _graph(op, types, {"stream": 3, "dtype": out_dtype}, shapes)
    arrays = [np.array([11, 0xFFFFFFFF], np.uint32), np.array(draws), *params]
    (got,), (expected,) = _run(g, arrays)
    assert got.shape == expected.shape == draws and got.dtype == expected.dtype == out_dtype
    assert got.tobytes() == expected.tobytes(), op


COVERS |= frozenset(PARAMS)


def test_every_random_op_has_a_hand_built_case():
    from tests.decompositions.test_random_discrete import COVERS as DISCRETE
    from tests.decompositions.test_random_multivariate import COVERS as MULTIVARIATE
    from tests.decompositions.test_random_rejection import COVERS as REJECTION

    assert set(PARAMS) | set(REJECTION) | set(MULTIVARIATE) | set(DISCRETE) == set(DISTRIBUTIONS)
