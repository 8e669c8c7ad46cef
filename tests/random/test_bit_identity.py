"""The same key gives the same draws, byte for byte, in `interpret` (the lifted op's semantics),
at both onnxruntime levels and in a constant-folded model, for every random op in
`DISTRIBUTIONS`, with parameters at the edges (tiny and huge scales, zeros, NaN) that take the
formulas' special paths: the draws use only ops IEEE 754 defines exactly (`portable.py`)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import ptonnx
from ptonnx import stages
from ptonnx.ir import Builder, Graph, TensorType, Value, interpret
from ptonnx.ir.ops.random import DISTRIBUTIONS
from ptonnx.keys import key
from tests.conftest import ORT_LEVELS, session_options

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

ROWS = 200
COV = np.array([[4.0, 1.2, -0.8], [1.2, 2.0, 0.3], [-0.8, 0.3, 1.0]])
F, INT = "float64", "int64"


def _case(rows, shape=None, attrs=None, dtype=F):
    """(parameters, the draws' shape, attributes): one parameter a row, one element a column."""
    params = [np.asarray(r, dtype=INT if isinstance(r[0], int) else F) for r in rows]
    return params, shape or (ROWS, params[0].shape[-1]), {"dtype": dtype, **(attrs or {})}


CASES = {
    "RandomUniform": _case([[-1.0, 0.0, -1e300, 1e-300], [2.0, 0.0, 1e300, 3e-300]]),
    "RandomNormal": _case([[0.0, -3.0, 1e300, 0.0, 1.0], [1.0, 0.0, 1e300, 1e-300, 5e-324]]),
    "RandomHalfNormal": _case([[0.0, 2.0, 0.0, 0.0], [1.0, 5e-324, 1e300, 0.0]]),
    "RandomLogNormal": _case([[0.0, 1.0, -700.0, 700.0, -745.0], [1.0, 0.0, 2.0, 1.0, 1.0]]),
    "RandomExponential": _case([[1.0, 0.0, 1e-300, 1e300, 5e-324]]),
    "RandomTruncExpon": _case([[1.0, 1e-10, 50.0, 800.0, 1e-300], [0.0, 1.0, -2.0, 0.0, 0.0], [1.0, 2.0, 0.5, 1e-300, 1.0]]),
    "RandomGumbel": _case([[0.0, 1.0, -1.0, 0.0], [1.0, 0.0, 1e10, 1e-300]]),
    "RandomLogistic": _case([[0.0, 1.0, -1.0, 0.0], [1.0, 0.0, 1e-10, 1e300]]),
    "RandomLaplace": _case([[0.0, 1.0, -1.0, 0.0], [1.0, 0.0, 3.0, 1e-300]]),
    "RandomCauchy": _case([[0.0, 1.0, -1.0, 0.0], [1.0, 0.0, 3.0, 1e300]]),
    "RandomHalfCauchy": _case([[0.0, 1.0, -1.0, 0.0], [1.0, 0.0, 3.0, 1e-300]]),
    "RandomWeibull": _case([[1.0, 0.0, 0.01, 50.0, 1e-300, 1e300]]),
    "RandomPareto": _case([[1.0, 3.0, 0.05, 1e-3, 1e300], [1.0, 2.0, 1e-3, 1e300, 1.0]]),
    "RandomTriangular": _case([[0.0, 0.0, -1.0, -1e300], [0.5, 0.0, 1.0, 0.0], [1.0, 1.0, 1.0 + 1e-9, 1e300]]),
    "RandomWald": _case([[1.0, 1e-3, 1e3, 1e-300], [1.0, 1e3, 1e-3, 1.0]]),
    "RandomBernoulli": _case([[0.0, 1.0, 0.3, 1e-300]], dtype=INT),
    "RandomGeometric": _case([[1.0, 0.5, 1e-12, 1e-300, 1 - 1e-16]], dtype=INT),
    "RandomIntegers": _case([[0, -5, -(2**40)], [1, 5, 2**40]], dtype=INT),
    "RandomCategorical": ([np.array([[[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.0, 1e-300, 1.0]]])], (ROWS, 3), {"dtype": INT}),
    "RandomGamma": _case([[0.0, 1e-3, 0.3, 1.0, 2.5, 1e6, np.inf, np.nan, 1e-300, 1e300], [1.0, 2.0, 0.5, 0.0, 3.0, 1.0, 1.0, 1.0, 1.0, 1.0]]),
    "RandomInvGamma": _case([[1e-3, 0.5, 1.0, 4.0, 1e6, 0.0, 1e-300], [1.0, 2.0, 0.0, 3.0, 1.0, 1.0, 1.0]]),
    "RandomBeta": _case([[1e-300, 1e-3, 0.5, 2.0, 1e6, np.nan], [1e-300, 1e-3, 0.5, 5.0, 1e6, 1.0]]),
    "RandomStudentT": _case([[0.1, 1.0, 3.0, 30.0, 1e6, 1e-300], [0.0, 1.0, -2.0, 0.0, 0.0, 0.0], [1.0, 2.0, 0.5, 0.0, 1.0, 1.0]]),
    "RandomGenGamma": _case([[0.5, 3.0, -2.0, 1e-3, 1e-300], [2.0, 0.5, -1.0, 2.0, 1.0], [1.0, 2.0, 1.0, 0.0, 1e300]]),
    "RandomDirichlet": _case([[1.0, 2.0, 1e-3, 0.0, 5.0, 1e-300]]),
    "RandomVonMises": _case([[0.0, 1.0, -2.0, 3.0, 0.5, 0.0, np.nan, 3.1], [1.0, 1e-9, 1e-6, 50.0, 1e7, np.nan, 1.0, 1e-3]]),
    "RandomMvNormal": ([np.array([1.0, -2.0, 0.5]), COV], (ROWS, 3), {"dtype": F, "method": "cholesky"}),
    "RandomChoice": ([np.arange(12.0).reshape(6, 2), np.array([3])], (ROWS, 3, 2), {"dtype": F, "core_ndim": 2}),
    "RandomWeightedChoice": ([np.arange(5.0), np.array([0.1, 0.2, 0.0, 0.3, 0.4]), np.array([3])], (3,),
                             {"dtype": F, "core_ndim": 1}),
    "RandomPermutation": ([np.arange(7.0)], (ROWS, 7), {"dtype": F, "core_ndim": 1}),
    "RandomPoisson": _case([[0.0, 1e-10, 0.5, 9.99, 10.0, 50.0, 1e6, 1e15]], dtype=INT),
    "RandomBinomial": _case([[0.0, 1.0, 10.0, 25.0, 1000.0, 1e9, 1e9, 7.0], [0.5, 0.5, 0.3, 0.4, 0.9, 1e-12, 0.5, 1.0]], dtype=INT),
    "RandomNegBinomial": _case([[0.5, 5.0, 100.0, 3.0, 2.0, 1e-3], [0.5, 0.3, 0.9, 0.01, 1.0, 0.5]], dtype=INT),
    "RandomBetaBinomial": _case([[0.0, 10.0, 1000.0, 50.0], [1.0, 2.0, 0.5, 100.0], [1.0, 3.0, 0.5, 0.1]], dtype=INT),
    "RandomHyperGeometric": _case([[5.0, 50.0, 3.0, 1000.0, 1e6, 0.0, 20.0], [7.0, 60.0, 100.0, 10.0, 1e6, 5.0, 20.0],
                                   [4.0, 30.0, 50.0, 1005.0, 1e5, 3.0, 15.0]], dtype=INT),
    "RandomMultinomial": ([np.array([0, 5, 100, 10**6]), np.array([[0.5, 0.5, 0.0], [0.1, 0.2, 0.7], [1 / 3, 1 / 3, 1 / 3],
                                                                  [0.25, 0.5, 0.25]])], (ROWS, 4, 3), {"dtype": INT}),
}
KEY = key(20261129)


def op_graph(op: str, params, shape, attrs, constant: bool = False) -> Graph:
    """`op`'s draws of `shape` with `params` (graph inputs after the key, or constants)."""
    g = Graph(op)
    if constant:
        inputs = [Value.constant(a) for a in (KEY, *params)]
    else:
        inputs = [g.add_input(TensorType(a.dtype.name, a.shape), f"p{i}") for i, a in enumerate((KEY, *params))]
    out_shape = Value.constant(np.asarray(shape, dtype=np.int64))
    g.set_outputs([Builder(g).node(op, [inputs[0], out_shape, *inputs[1:]], {"stream": 5, **attrs}).output])
    return g


def _onnxruntime(model, arrays) -> dict[str, np.ndarray]:
    feed = {i.name: a for i, a in zip(model.graph.input, arrays, strict=True)}
    runs = {}
    for level in ORT_LEVELS:
        session = ort.InferenceSession(model.SerializeToString(), session_options(level), providers=["CPUExecutionProvider"])
        (runs[level],) = session.run(None, feed)
    return runs


def draws_everywhere(op: str, params, shape, attrs) -> dict[str, np.ndarray]:
    """{where: draws} from interpret, onnxruntime at each level (the default passes), and a model
    compiled with the key and parameters as constants (folded: wholly, but for a Loop, which
    constant folding does not enter, and what reads it: a sampler's values before its loop are
    NumPy's there)."""
    arrays = [KEY, *params]
    (interpreted,) = interpret(op_graph(op, params, shape, attrs), *arrays)
    model = stages.compile_graph(op_graph(op, params, shape, attrs), passes=ptonnx.DEFAULT_PASSES).model
    runs = {"interpret": interpreted, **_onnxruntime(model, arrays)}
    folded = stages.compile_graph(op_graph(op, params, shape, attrs, constant=True), passes=ptonnx.DEFAULT_PASSES).model
    left = {n.op_type for n in folded.graph.node} - {"Constant", "Identity"}
    assert not left or (left & {"Loop", "If"} and len(folded.graph.node) < len(model.graph.node)), (op, "not folded", left)
    for level, got in _onnxruntime(folded, []).items():
        runs[f"folded, run at {level}"] = got
    return runs


def assert_identical(runs: dict[str, np.ndarray], op: str) -> np.ndarray:
    first_name, first = next(iter(runs.items()))
    for name, got in runs.items():
        assert got.dtype == first.dtype and got.shape == first.shape, (op, name)
        assert got.tobytes() == first.tobytes(), (op, f"{name} differs from {first_name}",
                                                  np.flatnonzero(got.ravel() != first.ravel())[:5])
    return first


def test_every_distribution_has_a_case():
    assert set(CASES) == set(DISTRIBUTIONS)


@pytest.mark.parametrize("op", sorted(CASES))
def test_draws_are_identical_everywhere(op):
    x = assert_identical(draws_everywhere(op, *CASES[op]), op)
    assert x.size and (x.dtype.kind != "f" or np.isfinite(x).any())


#: what is not bit for bit the same everywhere, and why (docs/random.md, "Reproducibility")
NOT_IDENTICAL = {
    ("RandomMvNormal", "eigh"): "A = V sqrt(w) from the IR's Eigh (one-sided Jacobi, decompositions/linalg/eigh.py), "
                                "whose MatMul and ReduceSum add in onnxruntime's order (MLAS's GEMM), not NumPy's",
    ("RandomMvNormal", "svd"): "A = U sqrt(s) from the IR's SVD (one-sided Jacobi, decompositions/linalg/svd.py), "
                               "whose MatMul and ReduceSum add in onnxruntime's order (MLAS's GEMM), not NumPy's",
}


@pytest.mark.parametrize(("op", "method"), sorted(NOT_IDENTICAL))
def test_multivariate_normal_by_eigh_and_svd_differs_only_by_its_factors_sums(op, method):
    """Listed in NOT_IDENTICAL: interpret and the folded model (NumPy's sums) against onnxruntime
    (its own): the levels alike bit for bit, the draws within 8 ulps of their largest magnitude."""
    params, shape, attrs = CASES[op]
    runs = draws_everywhere(op, params, shape, {**attrs, "method": method})
    levels = [runs[level] for level in ORT_LEVELS]
    assert levels[0].tobytes() == levels[1].tobytes()
    scale = np.abs(runs["interpret"]).max()
    for name, got in runs.items():
        np.testing.assert_allclose(got, runs["interpret"], rtol=0, atol=8 * np.spacing(scale), err_msg=name)


def test_float32_draws_are_the_float64_draws_rounded_everywhere():
    params, shape, attrs = CASES["RandomGamma"]
    wide = assert_identical(draws_everywhere("RandomGamma", params, shape, attrs), "float64")
    narrow = assert_identical(draws_everywhere("RandomGamma", params, shape, {**attrs, "dtype": "float32"}), "float32")
    np.testing.assert_array_equal(narrow, wide.astype(np.float32))


@pytest.mark.parametrize("op", ["RandomNormal", "RandomGamma", "RandomPoisson", "RandomBinomial", "RandomCategorical"])
def test_draws_do_not_depend_on_the_pass_list(op):
    """`passes=[]` and each pass alone give the default pass list's draws, byte for byte: no
    pass (folding, CSE, dtype unification, fusion) changes a draw's arithmetic."""
    params, shape, attrs = CASES[op]
    arrays = [KEY, *params]
    lists = {"default": ptonnx.DEFAULT_PASSES, "none": [], **{str(p): [p] for p in ptonnx.DEFAULT_PASSES}}
    runs = {}
    for label, passes in lists.items():
        model = stages.compile_graph(op_graph(op, params, shape, attrs), passes=passes).model
        runs.update({f"{label}, {level}": got for level, got in _onnxruntime(model, arrays).items()})
    assert_identical(runs, op)
