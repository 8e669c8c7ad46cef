"""PyMC's predictive draws through ptonnx (`ptonnx.pymc_predictive`) against PyMC's own samplers.

For each model of `models.MODELS`: the posterior predictive of every observed variable, drawn
by `compile_predictive` for all rows of a posterior in one call, against
`pm.sample_posterior_predictive` on the same posterior (the prior's draws stand in for one: any
rows of parameter values will do), and the prior predictive against `pm.sample_prior_predictive`;
two-sample tests (Cramér–von Mises, chi-square for counts) on observations' marginals and on
the pooled draws, at fixed keys and seeds, so the tests are deterministic.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import scipy.stats as st
from pytensor.compile.mode import Mode

from ptonnx.errors import SignatureError
from ptonnx.keys import key
from tests.pymc.models import MODELS, data_scale

pm = pytest.importorskip("pymc")
az = pytest.importorskip("arviz")
pp = pytest.importorskip("ptonnx.pymc_predictive")

#: posterior rows: PyMC's samplers loop over them in Python (1,000 rows of the 22 models take
#: PyMC's Python-linker functions some 7 CPU minutes), ptonnx draws them in one call; the issue's
#: 4,000: PTONNX_PREDICTIVE_ROWS=4000 python -m pytest tests/pymc/test_predictive.py
ROWS = int(os.environ.get("PTONNX_PREDICTIVE_ROWS", "400"))
#: where PyMC's Python-linker samplers take minutes a thousand rows (a GP's Cholesky, a Scan),
#: CI compares 100 rows; PTONNX_PREDICTIVE_ROWS sets every model's (all 22 passed at 4,000:
#: docs/pymc.md)
SLOW_IN_PYMC = {"gp_marginal": 100, "scan_custom_dist": 100, "time_series": 100}


def _rows(name: str) -> int:
    return ROWS if "PTONNX_PREDICTIVE_ROWS" in os.environ else min(ROWS, SLOW_IN_PYMC.get(name, ROWS))
#: PyMC's samplers without C compilation (minutes for these graphs on a fresh machine)
PYMC_MODE = Mode(linker="py", optimizer="fast_run")
P_MIN = 1e-4


def _same_distribution(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    """Two samples of one distribution (shapes (rows, ...)): each of three observations' marginals
    and the observations pooled, one a row (a row's observations are dependent: an AR series)."""
    assert ours.shape == theirs.shape and ours.dtype.kind == theirs.dtype.kind, (what, ours.shape, theirs.shape)
    flat_ours, flat_theirs = ours.reshape(len(ours), -1), theirs.reshape(len(theirs), -1)
    columns = sorted({0, flat_ours.shape[1] // 2, flat_ours.shape[1] - 1}) if flat_ours.shape[1] else []
    samples = [(flat_ours[:, c], flat_theirs[:, c], f"{what}[{c}]") for c in columns]
    if flat_ours.shape[1] > 1:  # one observation a row (row r's r-th, cycling): independent, unlike a row's
        picked = np.arange(len(flat_ours)) % flat_ours.shape[1]
        rows = np.arange(len(flat_ours))
        samples.append((flat_ours[rows, picked], flat_theirs[rows, picked], f"{what} pooled"))
    for a, b, label in samples:
        if ours.dtype.kind in "iub":
            values = np.union1d(a, b)
            table = np.array([[np.sum(a == v) for v in values], [np.sum(b == v) for v in values]])
            keep = table.sum(0) >= 10
            table = np.column_stack([table[:, keep], table[:, ~keep].sum(1)]) if (~keep).any() else table
            table = table[:, table.sum(0) > 0]
            if table.shape[1] > 1:
                assert st.chi2_contingency(table).pvalue > P_MIN, label
        elif np.ptp(a) <= 1e-12 * max(1.0, abs(a[0])) and np.ptp(b) <= 1e-12 * max(1.0, abs(b[0])):
            np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=label)  # a constant (a correlation's diagonal)
        else:
            finite = np.isfinite(a) & np.isfinite(b)
            assert st.cramervonmises_2samp(a[finite], b[finite]).pvalue > P_MIN, label


def _posterior(model, n_rows: int):
    """`n_rows` points of the model in its constrained space, as a posterior holds them: the initial
    point moved by normal noise in the unconstrained space, mapped back by PyMC (prior draws
    would do but for transforms such as `ordered`, which forward sampling ignores). Returned as
    an InferenceData laid out as `pm.sample` writes one (coords, constant_data), so PyMC resamples
    no variable as volatile that a sampler's trace would keep."""
    rng = np.random.default_rng(11)
    names = [rv.name for rv in model.free_RVs]
    outs = model.replace_rvs_by_values([model[n] for n in names])
    constrained = model.compile_fn(outs, inputs=model.value_vars, point_fn=False, mode=PYMC_MODE, on_unused_input="ignore")
    start = model.initial_point()
    rows = [constrained(**{k: v + rng.normal(size=np.shape(v)) * 0.5 for k, v in start.items()}) for _ in range(n_rows)]
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layout = pm.sample_prior_predictive(n_rows, var_names=names, random_seed=1, compile_kwargs={"mode": PYMC_MODE})
    posterior = layout.prior[names].copy(deep=True)
    for i, n in enumerate(names):
        posterior[n].values = np.stack([r[i] for r in rows])[None]
    groups = {"posterior": posterior, **({"constant_data": layout.constant_data} if "constant_data" in layout else {})}
    return az.InferenceData(**groups)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_posterior_predictive_draws_as_pymc(name):
    model = MODELS[name]()
    posterior = _posterior(model, _rows(name))
    observed = [rv.name for rv in model.observed_RVs]
    if not observed:  # a likelihood written as a Potential: nothing to draw, and the call says so
        with pytest.raises(SignatureError, match="nothing to draw"):
            pp.compile_predictive(model)
        return
    cm = pp.compile_predictive(model, observed)
    assert cm.input_names[-1] == "key"
    ours = cm(*pp.inputs_from(cm, posterior.posterior), key(1))
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = pm.sample_posterior_predictive(posterior, var_names=observed, random_seed=2, progressbar=False,
                                                compile_kwargs={"mode": PYMC_MODE}).posterior_predictive
    for name_, got in zip(observed, ours, strict=True):
        expected = np.asarray(theirs[name_])
        _same_distribution(got, expected.reshape(-1, *expected.shape[2:]), name_)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_prior_predictive_draws_as_pymc(name):
    model = MODELS[name]()
    cm = pp.compile_predictive(model, kind="prior")
    assert cm.input_names == ["draws", "key"]
    ours = cm(np.int64(_rows(name)), key(3))
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = pm.sample_prior_predictive(_rows(name), random_seed=4, compile_kwargs={"mode": PYMC_MODE})
    groups = [theirs.prior, *([theirs.prior_predictive] if "prior_predictive" in theirs else [])]
    for name_, got in zip(cm.output_names, ours, strict=True):
        expected = next(np.asarray(g[name_]) for g in groups if name_ in g)
        _same_distribution(got, expected.reshape(-1, *expected.shape[2:]), name_)


def test_a_row_with_an_invalid_parameter_raises_as_pymc():
    """A posterior row with a negative scale: PyMC's forward sampler raises (NumPy's ValueError),
    and so does the model (ptonnx's CheckFailedError is a ValueError)."""
    model = MODELS["linear_regression"]()
    cm = pp.compile_predictive(model, ["obs"])
    rows = {"intercept": np.zeros((1, 3)), "slope": np.zeros((1, 3)), "sigma": np.array([[1.0, -1.0, 1.0]])}
    with pytest.raises(ValueError, match="scale < 0"):
        cm(*pp.inputs_from(cm, rows), key(0))
    good = {**rows, "sigma": np.ones((1, 3))}
    assert cm(*pp.inputs_from(cm, good), key(0))[0].shape == (3, 100)


def test_data_as_inputs_draw_for_new_data():
    """data="inputs": new data of another length draws predictions of that length."""
    model = MODELS["linear_regression"]()
    cm = pp.compile_predictive(model, ["obs"], data="inputs")
    assert cm.input_names == ["intercept", "slope", "sigma", "x", "key"]  # y is only observed: no input
    rows = {"intercept": np.full((1, 50), 1.0), "slope": np.full((1, 50), 2.0), "sigma": np.full((1, 50), 1e-9)}
    x_new = np.linspace(0, 1, 7)
    feeds = dict(zip([v.name for v in cm.ir.inputs][:3], pp.inputs_from(cm, rows), strict=True))
    feeds |= {"x": x_new, "key": key(0)}
    (obs,) = cm(*[feeds[v.name] for v in cm.ir.inputs])
    assert obs.shape == (50, 7)
    np.testing.assert_allclose(obs, np.broadcast_to(1.0 + 2.0 * x_new, (50, 7)), atol=1e-7)


def test_a_model_of_data_scale_compiles():
    assert pp.compile_predictive(data_scale(), kind="prior").output_names


def test_copies_of_a_random_node_draw_alike():
    """Inlining LKJCholeskyCov copies its sd_dist's draw: PyTensor draws the copies alike (one
    generator; its compiled function merges them), so the factor's standard deviations are the
    sd_dist's Exponential(1) draws, each column, not a mix of independent copies."""
    cm = pp.compile_predictive(MODELS["lkj_mvnormal"](), ["chol_stds"], kind="prior")
    (stds,) = cm(np.int64(20_000), key(3))
    for column in stds.T:
        assert st.kstest(column, "expon").pvalue > P_MIN
