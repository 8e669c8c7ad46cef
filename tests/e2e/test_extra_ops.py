"""extra_ops against PyTensor: repeat with computed repeats, fill_diagonal(_offset),
searchsorted (both sides, sorter, NaN and infinities), unique (index, inverse,
counts; NaNs collapse as in NumPy), bincount; every onnxruntime level, plain
and ONNX-mode graphs; size 0; errors as PyTensor's."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import check_like_pytensor
from tests.e2e.test_op_properties import ALL, NUMERIC
from tests.e2e.test_shape_programs import arrays


@given(arrays(ALL, min_ndim=1, max_ndim=2), st.data())
def test_repeat_with_computed_repeats(item, data):
    x, static = item
    axis = data.draw(st.sampled_from([None, 0, x.ndim - 1]))
    n = x.size if axis is None else x.shape[axis]
    reps = np.array(data.draw(st.lists(st.integers(-1 if data.draw(st.integers(0, 9)) == 0 else 0, 3),
                                       min_size=n, max_size=n)), dtype=np.int64)
    v, r = pt.tensor("x", dtype=x.dtype.name, shape=static), pt.lvector("r")
    check_like_pytensor([v, r], [pt.repeat(v, r, axis=axis)], [x, reps])


@given(st.integers(0, 5), st.integers(0, 5), st.integers(-6, 6))
def test_fill_diagonal_and_offset(n, m, k):
    a, off = pt.matrix("a"), pt.lscalar("k")
    values = np.arange(n * m, dtype="float64").reshape(n, m)
    check_like_pytensor([a, off], [pt.fill_diagonal(a, -1.0), pt.fill_diagonal_offset(a, np.nan, off)], [values, np.array(k)])


@given(arrays(NUMERIC, min_ndim=1, max_ndim=1), arrays(NUMERIC, max_ndim=2), st.booleans())
def test_searchsorted(sorted_item, values_item, use_sorter):
    a, sa = sorted_item
    v, sv = values_item
    v = v.astype(a.dtype)
    order = np.argsort(a, kind="stable")
    va, vv = pt.tensor("a", dtype=a.dtype.name, shape=sa), pt.tensor("v", dtype=v.dtype.name, shape=sv)
    if use_sorter:
        s = pt.lvector("s")
        outs = [pt.searchsorted(va, vv, sorter=s), pt.searchsorted(va, vv, side="right", sorter=s)]
        check_like_pytensor([va, vv, s], outs, [a, v, order])
    else:
        a = np.sort(a)
        check_like_pytensor([va, vv], [pt.searchsorted(va, vv), pt.searchsorted(va, vv, side="right")], [a, v])


@given(arrays(NUMERIC, min_ndim=1, max_ndim=2))
def test_unique_with_index_inverse_and_counts(item):
    x, static = item
    v = pt.tensor("x", dtype=x.dtype.name, shape=static)
    outs = list(pt.unique(v, return_index=True, return_inverse=True, return_counts=True))
    check_like_pytensor([v], outs, [x])


def test_bincount_through_advanced_inc_subtensor():
    x, w = pt.lvector("x"), pt.vector("w")
    values = [np.array([0, 3, 3, 1, 3]), np.array([0.5, 1.0, -0.0, np.inf, 2.0])]
    check_like_pytensor([x, w], [pt.bincount(x, minlength=6), pt.bincount(x, weights=w)], values)
