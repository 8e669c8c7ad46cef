"""The categorical draw as PyTensor's: NumPy's searchsorted(cumsum(p), u) for any p, sums
unsorted (negative p, as PyMC's prior draws of ordered cutpoints give) or NaN included.

ptonnx's categorical and uniform draw their u alike (lane 0 of the node's stream: the one
random node of a graph has stream 0), so a uniform graph under the same key gives the very
u each categorical draw searched for: the draws are checked against NumPy's search exactly,
and in distribution (chi-square) against PyTensor's own draws with the same p."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.stats as st

import ptonnx
from ptonnx.keys import key
from tests.conftest import REFERENCE_MODE, run_at_every_level

N = 20_000
KEY = key(2031)
P_MIN = 1e-3

P = {
    "sorted sums": np.array([0.2, 0.3, 0.5]),
    "negative entries": np.array([0.4, -0.3, 0.5, -0.2, 0.6, 0.1]),
    "unsorted, not normalised": np.array([0.9, -0.8, 0.3, 0.2, -0.5, 0.6, 0.1, 0.4, -0.2]),
    "NaN": np.array([0.3, np.nan, 0.2, 0.5]),
    "NaN first": np.array([np.nan, 0.5, 0.5]),
    "all negative": np.array([-0.1, -0.2, -0.3]),
    "one category": np.array([0.5]),
    "many categories": np.random.default_rng(5).normal(0.004, 0.01, size=300),  # a Loop over the 9 steps
}


def _uniform_twin(size):
    """The u each categorical draw searched for: a uniform on [0, 1) under the same key."""
    (u,) = ptonnx.compile_function([], [pt.random.uniform(0.0, 1.0, size=size)])(KEY)
    return u


def _compiled(p: np.ndarray, size, static: bool = True):
    shape = p.shape if static else (None,) * p.ndim
    pv = pt.tensor("p", dtype="float64", shape=shape)
    rng = pytensor.shared(np.random.default_rng(0), name="rng")
    out = pt.random.categorical(pv, size=size, rng=rng)
    return pv, out, ptonnx.compile_function([pv], [out])


def _searched(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """NumPy's answer, as PyTensor's rng_fn gives it: searchsorted row by row."""
    sums = np.broadcast_to(p.cumsum(-1), (*u.shape, p.shape[-1]))
    return np.vectorize(np.searchsorted, otypes=[int], signature="(p),()->()")(sums, u)


@pytest.mark.parametrize("static", [True, False], ids=["static n", "n at run time"])
@pytest.mark.parametrize("case", sorted(P))
def test_each_draw_is_numpys_search_for_its_u(case, static):
    p = P[case]
    _, _, cm = _compiled(p, (N,), static)
    runs = run_at_every_level(cm, p, KEY)
    (first,), (second,) = runs.values()
    np.testing.assert_array_equal(first, second, err_msg="the onnxruntime levels draw differently")
    np.testing.assert_array_equal(first, _searched(p, _uniform_twin((N,))))


def test_rows_of_p_each_search_their_own_sums():
    p = np.stack([P["negative entries"], P["unsorted, not normalised"][:6], np.r_[P["NaN"], 0.1, 0.2]])
    for static in (True, False):
        _, _, cm = _compiled(p, (500, 3), static)
        (got,) = cm(p, KEY)
        np.testing.assert_array_equal(got, _searched(p, _uniform_twin((500, 3))))


def test_an_empty_p_gives_index_0_as_numpy():
    p = np.zeros((0,))
    for static in (True, False):
        _, _, cm = _compiled(p, (4,), static)
        np.testing.assert_array_equal(cm(p, KEY)[0], np.zeros(4, np.int64))


@pytest.mark.parametrize("case", ["negative entries", "unsorted, not normalised", "NaN", "many categories"])
def test_draws_are_distributed_as_pytensors(case):
    """Chi-square of ptonnx's draws against PyTensor's (NumPy's generator), the same p."""
    p = P[case]
    pv, out, cm = _compiled(p, (N,))
    (ours,) = cm(p, KEY)
    theirs = pytensor.function([pv], out, mode=REFERENCE_MODE)(p)
    possible = np.unique(_searched(p, np.linspace(0.0, 1.0, 100_001)[:-1]))
    assert np.isin(ours, possible).all() and np.isin(theirs, possible).all()
    values = np.union1d(ours, theirs)
    table = np.array([[np.sum(ours == v) for v in values], [np.sum(theirs == v) for v in values]])
    keep = table.sum(0) >= 10
    table = np.column_stack([table[:, keep], table[:, ~keep].sum(1)])
    table = table[:, table.sum(0) > 0]
    if table.shape[1] > 1:
        assert st.chi2_contingency(table).pvalue > P_MIN, (case, table)
