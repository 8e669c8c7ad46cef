"""The ops only decompositions build (family "kernel": `Select`, `FMod`, `SinKernel`, `CosKernel`):
hand-built IR, lowered and run at both onnxruntime levels, bit for bit against the
op's semantics (`interpret`) on hard values: ±0, subnormals, ±inf, NaN, range ends."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ptonnx import stages
from ptonnx.decompositions.elementary.trigonometric import REDUCED_REACH
from ptonnx.ir import Builder, Graph, TensorType, interpret
from ptonnx.ir.registry import all_schemas
from tests.conftest import ORT_LEVELS, session_options

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

#: the kernel ops each with its hand-built cases below (read by tests/ir/test_registry.py)
COVERS = frozenset({"Select", "FMod", "SinKernel", "CosKernel"})

HARD = np.array([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.0, -1.0, 0.5, -2.5, 3.0, 7.0, -7.5,
                 1.5707963267948966, -1.5707963267948966, 1e-300, 1.7976931348623157e308, -1.7976931348623157e308,
                 np.inf, -np.inf, np.nan])


def _graph(op: str, types) -> Graph:
    g = Graph()
    inputs = [g.add_input(TensorType(dtype, (None,)), f"x{i}") for i, dtype in enumerate(types)]
    g.set_outputs([Builder(g).op(op, *inputs)])
    return g


def _model(op: str, types):
    """The one-node graph (the reference) and its model, compiled by the stages `ptonnx.compile`
    runs (a Select on bool or uint64 runs through a dtype onnxruntime has a Where kernel for)."""
    return _graph(op, types), stages.compile_graph(_graph(op, types)).model


def _check(op: str, arrays):
    g, model = _model(op, [a.dtype.name for a in arrays])
    onnx.checker.check_model(model, full_check=True)
    (expected,) = interpret(g, *arrays)
    for level in ORT_LEVELS:
        session = ort.InferenceSession(model.SerializeToString(), session_options(level), providers=["CPUExecutionProvider"])
        (got,) = session.run(None, {f"x{i}": a for i, a in enumerate(arrays)})
        assert got.dtype == expected.dtype
        # bit for bit, every NaN alike
        assert np.array_equal(np.isnan(got), np.isnan(expected)), (op, level)
        same = np.isnan(expected) | (got.view(np.uint8).reshape(got.size, -1) == expected.view(np.uint8).reshape(got.size, -1)).all(1)
        assert same.all(), (op, level, arrays, got, expected)


def test_every_kernel_op_has_a_case():
    assert {name for name, s in all_schemas().items() if s.family == "kernel"} == COVERS


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_select_takes_the_sign_of_zero_as_onnxruntime_does(dtype):
    a = np.repeat(HARD, len(HARD)).astype(dtype)
    b = np.tile(HARD, len(HARD)).astype(dtype)
    for cond in (np.ones(a.size, bool), np.zeros(a.size, bool), np.arange(a.size) % 3 == 0):
        _check("Select", [cond, a, b])
    g, _ = _model("Select", ["bool", dtype, dtype])
    (out,) = interpret(g, np.array([True, False]), np.array([-0.0, -0.0], dtype), np.array([-0.0, -0.0], dtype))
    assert list(np.signbit(out)) == [False, True]  # the first branch's -0.0 comes out +0.0


def test_select_on_integers_and_bool_is_where():
    _check("Select", [np.array([True, False, True]), np.array([np.iinfo(np.int64).min, 0, 1]), np.array([5, 6, np.iinfo(np.int64).max])])
    _check("Select", [np.array([True, False]), np.array([True, False]), np.array([False, True])])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fmod_has_the_dividends_sign(dtype):
    a = np.repeat(HARD, len(HARD)).astype(dtype)
    b = np.tile(HARD, len(HARD)).astype(dtype)
    _check("FMod", [a, b])
    g, _ = _model("FMod", [dtype, dtype])
    (out,) = interpret(g, np.array([-7.0, 7.0, -0.0], dtype), np.array([2.0, -2.0, 2.0], dtype))
    assert out.tolist() == [-1.0, 1.0, 0.0] and np.signbit(out[2])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sin_kernel_on_a_reduced_range(dtype):
    """±0, subnormals and NaN bit for bit; on |a| <= pi/2 + 7e-4 (where the Sin decomposition gives
    it its argument, `REDUCED_REACH`) within 3 ulp of NumPy's (which is correctly rounded there):
    onnxruntime 1.32's float64 Sin is up to 3 ulp off (-0.50476, 0.060696, checked against mpmath),
    its float32 Sin within 1."""
    exact = np.array([0.0, -0.0, 5e-324, -5e-324, np.nan, np.inf], dtype)
    _check("SinKernel", [exact])
    g, model = _model("SinKernel", [dtype])
    grid = np.linspace(-REDUCED_REACH, REDUCED_REACH, 10001).astype(dtype)
    (expected,) = interpret(g, grid)
    for level in ORT_LEVELS:
        session = ort.InferenceSession(model.SerializeToString(), session_options(level), providers=["CPUExecutionProvider"])
        (got,) = session.run(None, {"x0": grid})
        np.testing.assert_array_max_ulp(got, expected, maxulp=3)


@pytest.mark.parametrize("op", ["SinKernel", "CosKernel"])
def test_sin_and_cos_kernels_reduce_large_arguments_themselves(op):
    """±0, ±inf, NaN bit for bit; from 2**20 on (where the Sin and Cos decompositions give them x
    itself) within 4 ulp of NumPy's, or 1 ulp of the argument times 2**-52 near a zero (the
    absolute floor of the accurate Sin's bound): onnxruntime reduces exactly there."""
    _check(op, [np.array([0.0, -0.0, np.inf, -np.inf, np.nan])])
    g, model = _model(op, ["float64"])
    rng = np.random.default_rng(0)
    large = np.concatenate([2.0**20 * np.array([1.0, -1.0]), np.exp(rng.uniform(np.log(2.0**20), np.log(1e300), 20000))])
    large = np.concatenate([large, -large, np.arange(2**20, 2**20 + 4096) * (np.pi / 2)])
    (expected,) = interpret(g, large)
    for level in ORT_LEVELS:
        session = ort.InferenceSession(model.SerializeToString(), session_options(level), providers=["CPUExecutionProvider"])
        (got,) = session.run(None, {"x0": large})
        tolerance = 4 * np.spacing(np.abs(expected)) + np.spacing(np.abs(large)) * 2.0**-52
        assert (np.abs(got - expected) <= tolerance).all(), (op, level, large[np.abs(got - expected) > tolerance][:5])
