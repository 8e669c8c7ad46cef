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


def _stacked_mixture(n):
    """A zero-inflated count model's shape of work: two per-observation log-densities stacked as
    columns (N, 2) (pm.Mixture stacks its components so), a logsumexp over them, and its gradient."""
    import pytensor

    y = pt.tensor("y", dtype="float64", shape=(n,))
    psi, rate = pt.dscalar("psi"), pt.dscalar("rate")
    zero = pt.switch(pt.eq(y, 0.0), 0.0, -np.inf)
    count = y * pt.log(rate) - rate - pt.gammaln(y + 1.0)
    comp = pt.stack([pt.log1p(-psi) + zero, pt.log(psi) + count], axis=1)
    top = pt.max(comp, axis=1, keepdims=True)
    logp = (pt.log(pt.sum(pt.exp(comp - top), axis=1)) + top[:, 0]).sum()
    return [y, psi, rate], [logp, *pytensor.grad(logp, [psi, rate])]


def _ort_broadcasts_on_tall_matrices(cm, tmp_path) -> list[str]:
    """The nodes of onnxruntime's own optimised graph (ORT_ENABLE_ALL) that broadcast an (N, 1)
    operand against an (N, K) one: the layout its transpose optimiser would bring back."""
    import onnx
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimised.onnx")
    ort.InferenceSession(cm.model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    model = onnx.shape_inference.infer_shapes(onnx.load(options.optimized_model_filepath))
    shapes = {v.name: tuple(d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim)
              for v in [*model.graph.value_info, *model.graph.input, *model.graph.output]}
    shapes |= {i.name: tuple(i.dims) for i in model.graph.initializer}
    found = []
    for node in model.graph.node:
        out = shapes.get(node.output[0], ())
        if len(out) == 2 and _tall_and_narrow(out) and any(shapes.get(i) == (out[0], 1) for i in node.input):
            found.append(f"{node.op_type} -> {out}")
    return found


def test_stacked_columns_start_the_transposed_chain(tmp_path):
    """The transpose of columns side by side is the columns stacked as rows: no full Transpose
    opens the chain, so onnxruntime keeps the (K, N) layout (it pushed the Transpose back down
    and broadcast (N, 1) against (N, 2): zero_inflated's logp 1.5x slower at N = 10,000)."""
    variables, outs = _stacked_mixture(2000)
    special = HARD[~(HARD < 0)]  # ±0, subnormal, huge, inf, NaN
    values = [np.concatenate([special, np.arange(2000.0 - special.size) % 7]), np.array(0.3), np.array(2.5)]
    check_like_pytensor(variables, outs, values)
    cm = ptonnx.compile_function(variables, outs)
    assert cm.report["layout"].details.get("stacked_columns", 0) >= 1, cm.report["layout"].details
    assert not _ort_broadcasts_on_tall_matrices(cm, tmp_path), _ort_broadcasts_on_tall_matrices(cm, tmp_path)
    before = ptonnx.compile_function(variables, outs, passes=WITHOUT)
    assert _ort_broadcasts_on_tall_matrices(before, tmp_path)


def test_scalars_against_a_column_are_read_at_its_rank():
    """A 0-d operand against an (N, 1) result is broadcast by onnxruntime in a call per row: every
    elementwise node over a column reads its operands at the column's rank, with PyTensor's
    numbers (a Poisson component's `switch(mu >= 0, logp, -inf)` in a mixture, say)."""
    y, mu = pt.tensor("y", dtype="float64", shape=(None, 1)), pt.dscalar("mu")
    logp = pt.switch(mu >= 0, y * pt.log(mu) - mu - pt.gammaln(y + 1.0), -np.inf)
    outs = [logp, pt.switch(pt.eq(y, 0.0), 0.0, logp * 2.0)]
    # no |y| below float32's range: PyTensor's Python evaluation of its rewritten graph (a Composite)
    # takes 5e-324 == 0 as True (pytensor 3.0.7; NumPy and ptonnx: False)
    normal = HARD[~(np.abs(HARD) < 1e-30) | (HARD == 0)]
    column = np.concatenate([normal, np.arange(20.0)])[:, None]
    for m in (2.5, 0.0, -0.0, -1.0, np.inf, np.nan):
        check_like_pytensor([y, mu], outs, [column, np.float64(m)], more_values=[[np.zeros((0, 1)), np.float64(m)]])
    cm = ptonnx.compile_function([y, mu], outs)
    assert cm.report["layout"].details.get("column_operands", 0) >= 3, cm.report["layout"].details
    short = [(n.op, [v.type.ndim for v in n.inputs]) for n in cm.ir
             if get_schema(n.op).family == "elementwise" and n.outputs[0].type.ndim == 2 and any(v.type.ndim < 2 for v in n.inputs)]
    assert not short, short


# -- text in, text out (tests/passes/text.py) -------------------------------------------------

from tests.passes.text import assert_rewrites  # noqa: E402


def test_text_a_broadcast_on_a_tall_narrow_matrix_runs_transposed_to_the_reduction():
    """(16, 1) - (1, 2) is computed as (2, 16): the transposes of a column and a row move no data,
    the one back after each node meets the next node (which moves past it) or the reduction (which
    sums the other axis). The transposes back left unread are for `dce`."""
    assert_rewrites("layout", """
        graph g(%y: f64[16,1], %mu: f64[1,2]) {
          %d: f64[16,2] = Sub(%y, %mu)
          %e: f64[16,2] = Exp(%d)
          %s: f64[16] = ReduceSum(%e) {axes=(1,), keepdims=False}
          return %s
        }
    """, """
        graph g(%y: f64[16,1], %mu: f64[1,2]) {
          %0: f64[1,16] = Transpose(%y) {perm=(1, 0)}
          %1: f64[2,1] = Transpose(%mu) {perm=(1, 0)}
          %2: f64[2,16] = Sub(%0, %1)
          %d: f64[16,2] = Transpose(%2) {perm=(1, 0)}
          %3: f64[2,16] = Exp(%2)
          %e: f64[16,2] = Transpose(%3) {perm=(1, 0)}
          %s: f64[16] = ReduceSum(%3) {axes=(0,), keepdims=False}
          return %s
        }
    """)


def test_text_a_transpose_of_a_transpose_cancels():
    assert_rewrites("layout", """
        graph g(%x: f32[3,2]) {
          %t: f32[2,3] = Transpose(%x) {perm=(1, 0)}
          %u: f32[3,2] = Transpose(%t) {perm=(1, 0)}
          %y: f32[3,2] = Neg(%u)
          return %y
        }
    """, """
        graph g(%x: f32[3,2]) {
          %t: f32[2,3] = Transpose(%x) {perm=(1, 0)}
          %y: f32[3,2] = Neg(%x)
          return %y
        }
    """)


def test_text_operands_of_a_column_are_read_at_its_rank():
    """A 0-d operand against an (N, 1) result: a value is Unsqueezed, a constant reshaped."""
    assert_rewrites("layout", """
        graph g(%c: f64[16,1], %s: f64[]) {
          %a: f64[16,1] = Mul(%c, %s)
          %b: f64[16,1] = Add(%a, const(2.: f64[]))
          return %b
        }
    """, """
        graph g(%c: f64[16,1], %s: f64[]) {
          %0: f64[1,1] = Unsqueeze(%s) {axes=(0, 1)}
          %a: f64[16,1] = Mul(%c, %0)
          %b: f64[16,1] = Add(%a, const([[2.]]: f64[1,1]))
          return %b
        }
    """)
