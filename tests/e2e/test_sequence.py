"""cumsum, cumprod, sort and argsort along an axis (or flattened), every dtype,
extreme values, size-0 and unknown dims, against PyTensor.

A float cumsum/cumprod element is a sum/product of a prefix: it is held to the
bound any summation order meets (see test_reductions.order_free); integers are
exact (wrapping as NumPy's). With kind="stable" sort and argsort are NumPy's
exactly. PyTensor's default kind, NumPy's quicksort, leaves ties unordered (on
this machine NumPy puts 0.0 before -0.0 in `[-0.0, 0.0]`): there the sorted
values must match but for the sign of zero, and argsort must be a permutation
that sorts.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptonnx
from ptonnx.errors import LiftingError
from ptonnx.lifting.sequence import WIDENED_BY_NUMPY
from tests.conftest import assert_same, check_like_pytensor
from tests.e2e.test_op_properties import ALL, NUMERIC
from tests.e2e.test_reductions import order_free
from tests.e2e.test_shape_programs import arrays


#: PyTensor types cumsum of a narrower integer as that integer but computes it in int64: refused (below)
CUMULATIVE = tuple(d for d in NUMERIC if d not in WIDENED_BY_NUMPY)


def prefixes(fn: str, x: np.ndarray, axis):
    """compare for a float cumsum/cumprod: each element against its prefix's sum/product bound."""
    flat = x.reshape(-1) if axis is None else x
    axis = 0 if axis is None else axis

    def compare(actual, expected, context):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, context
        for j in range(flat.shape[axis]):
            prefix = np.take(flat, range(j + 1), axis=axis)
            pick = lambda a: np.take(a, j, axis=axis)  # noqa: E731
            order_free(fn, prefix, (axis,), False)(pick(actual), pick(expected), f"{context} (element {j})")

    return compare


def sorts(x: np.ndarray, axis, indices: bool):
    """compare for a quicksort: the values but for the sign of zero; indices that sort."""
    flat = x.reshape(-1) if axis is None else x
    axis = 0 if axis is None else axis

    def compare(actual, expected, context):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, context
        if indices:
            assert (np.sort(actual, axis=axis) == np.sort(expected, axis=axis)).all(), f"{context}: not a permutation"
            actual, expected = np.take_along_axis(flat, actual, axis), np.take_along_axis(flat, expected, axis)
        np.testing.assert_array_equal(actual, expected, err_msg=context)

    return compare


#: the functions test_sequence_op_matches_pytensor draws
FUNCTIONS = ("cumsum", "cumprod", "sort", "argsort")
#: each sequence op -> the tests of this module that compare programs reaching it with PyTensor, and the
#: function of FUNCTIONS whose program reaches it (read by tests/ir/test_registry.py; checked below)
REACHED_BY = {
    "CumSum": ("test_sequence_op_matches_pytensor", "test_integer_cumulative_ops_wrap_like_numpy"),
    "CumProd": ("test_sequence_op_matches_pytensor", "test_integer_cumulative_ops_wrap_like_numpy"),
    "Sort": ("test_sequence_op_matches_pytensor", "test_stable_sort_keeps_ties_in_order_and_nan_last"),
}
REACHED_WITH = {"CumSum": "cumsum", "CumProd": "cumprod", "Sort": "sort"}


@given(st.data())
def test_sequence_op_matches_pytensor(data):
    fn = data.draw(st.sampled_from(FUNCTIONS))
    x, static = data.draw(arrays(CUMULATIVE if fn.startswith("cum") else ALL, max_ndim=3))
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)) if x.ndim else st.none())
    kind = data.draw(st.sampled_from(["stable", "quicksort"]))
    v = pt.tensor("x", dtype=x.dtype.name, shape=static)
    out = getattr(pt, fn)(v, axis=axis, **({"kind": kind} if fn in ("sort", "argsort") else {}))
    norm = None if axis is None else axis % x.ndim
    compare = assert_same
    if fn.startswith("cum") and out.dtype.startswith("float"):
        compare = prefixes(fn[3:], x.astype(out.dtype), norm)
    elif fn in ("sort", "argsort") and kind == "quicksort":
        compare = sorts(x, norm, fn == "argsort")
    check_like_pytensor([v], [out], [x], compare=compare)


def test_stable_sort_keeps_ties_in_order_and_nan_last():
    x = pt.vector("x")
    values = np.array([3.0, np.nan, -0.0, 0.0, 1.0, 3.0, -np.inf, np.inf, np.nan, 5e-324])
    check_like_pytensor([x], [pt.sort(x, kind="stable"), pt.argsort(x, kind="stable")], [values])


def test_cumsum_of_a_narrow_integer_is_refused_with_the_cast_to_make():
    x = pt.vector("x", dtype="int8")
    with pytest.raises(LiftingError, match=r"astype\('int64'\)"):
        ptonnx.compile_function([x], [pt.cumsum(x)])


def test_integer_cumulative_ops_wrap_like_numpy():
    x = pt.matrix("x", dtype="int64")
    values = np.array([[2**62, 2**62, 2**62, 3], [2**53 + 1, 2**40, 2**40, -1]], dtype=np.int64)
    check_like_pytensor([x], [pt.cumsum(x, axis=1), pt.cumprod(x, axis=1), pt.cumprod(x)], [values])


def test_every_sequence_op_is_reached_from_pytensor():
    x = pt.matrix("x")
    lifted = set(ptonnx.lift(ptonnx.api.function_graph([x], [pt.cumsum(x), pt.cumprod(x), pt.sort(x)])).op_counts())
    family = {name for name, s in ptonnx.ir.all_schemas().items() if s.family == "sequence"}
    assert family - lifted == set()
    assert set(REACHED_BY) == set(REACHED_WITH) == family and set(REACHED_WITH.values()) <= set(FUNCTIONS)
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)
    for op, fn in REACHED_WITH.items():
        assert op in ptonnx.lift(ptonnx.api.function_graph([x], [getattr(pt, fn)(x, axis=1)])).op_counts(), (op, fn)
