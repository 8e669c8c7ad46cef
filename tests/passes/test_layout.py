"""The `layout` pass: elementwise work on a tall, narrow (N, K) matrix that broadcasts is done
as (K, N), the numbers unchanged (NaN, ±inf, ±0 included), and onnxruntime keeps that layout."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx.ir.registry import get_schema
from ptonnx.passes.layout import Layout, _tall_and_narrow
from ptonnx.passes.manager import DEFAULT_PASSES
from tests.conftest import check_like_pytensor

WITHOUT = [p for p in DEFAULT_PASSES if p != "layout"]
HARD = np.array([-np.inf, -1e308, -2.5, -5e-324, -0.0, 0.0, 5e-324, 1.0, 700.0, 1e308, np.inf, np.nan])


def _mixture(n):
    """A two-component normal mixture's log-likelihood per observation and in total: (N, 1)
    against (1, K), a logsumexp over the components (pm.NormalMixture's shape of work)."""
    y = pt.tensor("y", dtype="float64", shape=(n,))
    mu, sigma, w = (pt.tensor(name, dtype="float64", shape=(2,)) for name in ("mu", "sigma", "w"))
    z = (y[:, None] - mu[None, :]) / sigma
    comp = pt.log(w) - 0.5 * z**2 - pt.log(sigma)
    top = pt.max(comp, axis=1, keepdims=True)
    per_obs = pt.log(pt.sum(pt.exp(comp - top), axis=1)) + top[:, 0]
    return [y, mu, sigma, w], [per_obs, per_obs.sum(), pt.switch(comp > -1.0, comp, 0.0)]


def _values(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    y[: min(n, HARD.size)] = HARD[: min(n, HARD.size)]
    return [y, np.array([-1.0, 2.0]), np.array([0.5, 1.5]), np.array([0.3, 0.7])]


def _broadcasting_layouts(cm) -> list[tuple]:
    """The output shapes of the IR's elementwise nodes that broadcast a matrix operand."""
    shapes = []
    for node in cm.ir:
        if get_schema(node.op).family != "elementwise" or node.outputs[0].type.ndim != 2:
            continue
        out = node.outputs[0].shape
        if any(v.type.ndim == 1 or (v.type.ndim == 2 and v.shape != out) for v in node.inputs):
            shapes.append(out)
    return shapes


@pytest.mark.parametrize("n", [64, None], ids=["static", "unknown"])
def test_a_mixture_is_computed_as_k_by_n_with_the_same_numbers(n):
    variables, outs = _mixture(n)
    check_like_pytensor(variables, outs, _values(64), more_values=[] if n else [_values(0), _values(1), _values(300, 1)])
    cm = ptonnx.compile_function(variables, outs)
    assert cm.report["layout"].details.get("transposed", 0) >= 5
    assert not any(_tall_and_narrow(shape) for shape in _broadcasting_layouts(cm)), _broadcasting_layouts(cm)
    before = ptonnx.compile_function(variables, outs, passes=WITHOUT)
    assert any(_tall_and_narrow(shape) for shape in _broadcasting_layouts(before))
    values = _values(64)
    for got, want in zip(cm(*values), before(*values), strict=True):
        np.testing.assert_array_equal(got, want)  # bit for bit, NaN where NaN
        assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()


def test_onnxruntime_keeps_the_layout():
    """Transposes of size-1 axes lower to Squeeze/Unsqueeze, which onnxruntime's transpose
    optimiser does not push back through the elementwise nodes; the one real Transpose is at
    the chain's end."""
    variables, outs = _mixture(64)
    cm = ptonnx.compile_function(variables, outs[:2])
    ops = [node.op_type for node in cm.model.graph.node]
    assert ops.count("Transpose") == 0, ops


def test_small_or_square_matrices_keep_their_layout():
    x = pt.tensor("x", dtype="float64", shape=(8, 8))
    v = pt.tensor("v", dtype="float64", shape=(8,))
    for out in (x * v, x[:4, :2] * v[:2]):
        cm = ptonnx.compile_function([x, v], [out])
        assert not cm.report["layout"].details


def test_the_pass_reaches_a_fixed_point_and_is_idempotent():
    variables, outs = _mixture(None)
    cm = ptonnx.compile_function(variables, outs)
    graph = cm.ir
    again = Layout().run(graph)
    assert not again.modified, again.details
