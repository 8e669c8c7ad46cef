"""`ptonnx.pymc.compile_flat_logp`: the log-density and gradient on one flat vector, and the
batched form (K points, the rows of a matrix, in one call), against PyMC's compiled
`logp` and `dlogp` (PyTensor's Python implementations) at every onnxruntime level."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.errors import PtonnxError, SignatureError, UnsupportedOpError
from tests.pymc.test_models import MODEL_NAMES, at_levels, built, close

pm = pytest.importorskip("pymc")

import ptonnx.pymc  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")

#: models whose log-density has a Scan: the batched form refuses them
INNER_GRAPHS = {"scan_custom_dist", "kalman_local_trend", "kalman_bivariate", "level_trend_measurement_error", "sarimax_arma11"}

#: the unbatched form is the model's logp-and-gradient graph (which tests/pymc/test_models.py runs
#: for every model) behind a flat layout: these cover the layouts (vectors, a simplex, ordered and
#: transformed values, a Scan), and keep CI's run short
FLAT_MODELS = ["hierarchical", "mixture", "dirichlet_categorical", "scan_custom_dist", "bg_nbd"]


@pytest.mark.parametrize("name", FLAT_MODELS)
def test_flat_logp_and_gradient(name):
    """f(q) = (logp, gradient), q and the gradient laid out as `model.value_vars` raveled."""
    model, pts, expected = built(name)
    f = ptonnx.pymc.compile_flat_logp(model)
    assert f.cm.input_names == ["q"] and f.cm.output_names == ["logp", "dlogp"]
    assert f.size == sum(np.size(v) for v in pts[0].values())
    for level, cm in at_levels(f.cm):
        run = ptonnx.pymc.FlatLogp(cm, f.layout, batched=False)
        for k, (point, (logp, dlogp)) in enumerate(zip(pts, expected, strict=True)):
            q = f.from_point(point)
            got_logp, got_grad = run(q)
            assert isinstance(got_logp, float)
            close(np.float64(got_logp), logp, f"{name} logp at point {k}, {level}")
            close(got_grad, dlogp, f"{name} gradient at point {k}, {level}")
            back = f.to_point(q)
            assert all(np.array_equal(back[v], np.asarray(point[v])) for v in point)


#: every model the batched form takes, and one it refuses (the refusal is the same for all of them)
BATCHED_MODELS = [name for name in MODEL_NAMES if name not in INNER_GRAPHS] + ["scan_custom_dist"]


@pytest.mark.parametrize("name", BATCHED_MODELS)
def test_batched_flat_logp(name):
    """K points in one call: rows of Q (K, size) -> logp (K,), gradient (K, size). An empty
    batch gives empty results or a PtonnxError (PyTensor's own Blockwise refuses zero-size
    batches: "vectorize with zero size not implemented"), never results of another shape.
    A log-density with a Scan is refused by name (see `ptonnx.pymc._refuse_inner_graphs`)."""
    model, pts, expected = built(name)
    if name in INNER_GRAPHS:
        with pytest.raises(UnsupportedOpError, match="cannot batch an op with an inner graph"):
            ptonnx.pymc.compile_flat_logp(model, batched=True)
        return
    f = ptonnx.pymc.compile_flat_logp(model, batched=True)
    q = np.stack([f.from_point(p) for p in pts])
    for level, cm in at_levels(f.cm):
        run = ptonnx.pymc.FlatLogp(cm, f.layout, batched=True)
        for rows in (q, q[:1]):
            logp, grad = run(rows)
            assert logp.shape == (len(rows),) and grad.shape == rows.shape
            for k in range(len(rows)):
                close(logp[k], expected[k][0], f"{name} logp of row {k} of {len(rows)}, {level}")
                close(grad[k], expected[k][1], f"{name} gradient of row {k} of {len(rows)}, {level}")
        if name == "gp_marginal":  # an OpFromGraph batched: the model's own graph is unchanged
            assert np.isclose(model.compile_logp()(pts[0]), expected[0][0], rtol=1e-10)
        try:
            logp, grad = run(q[:0])
        except PtonnxError:
            continue  # refused: PyTensor's Blockwise refuses zero-size batches too
        assert logp.shape == (0,) and grad.shape == (0, f.size), f"{name} empty batch, {level}"


def test_a_discrete_free_variable_is_refused_by_name():
    with pm.Model() as model:
        pm.Bernoulli("z", 0.3)
        pm.Normal("mu", 0, 1)
    with pytest.raises(SignatureError, match="the free variables z are discrete"):
        ptonnx.pymc.compile_flat_logp(model)
