"""lifting/index_math.py: Nonzero, UnravelIndex, RavelMultiIndex (raise, wrap, clip; C and F
order), JoinDims and SplitDims, with their bounds checked as NumPy checks them."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from pytensor.tensor.extra_ops import ravel_multi_index, unravel_index
from pytensor.tensor.reshape import join_dims, split_dims

from tests.lifting.helpers import check_lift, ops, raises_check

GRID = np.array([[0.0, -0.0, np.nan, 1.5], [np.inf, 0.0, -2.0, 5e-324]])
INT64 = np.iinfo(np.int64)


def test_nonzero_reads_nan_as_nonzero():
    x, b = pt.dmatrix("x"), pt.tensor("b", dtype="bool", shape=(None, None, None))
    outs = [*pt.nonzero(x), *pt.nonzero(b)]
    assert type(outs[0].owner.op).__name__ == "Nonzero"
    cube = np.arange(24).reshape(2, 3, 4) % 5 == 0
    g = check_lift([x, b], outs, [GRID, cube], [np.zeros((0, 3)), np.zeros((2, 0, 1), bool)], [-GRID.T, ~cube])
    assert ops(g).count("NonZero") == 2


def test_nonzero_of_integers():
    i = pt.ivector("i")
    check_lift([i], list(pt.nonzero(i)), [np.array([0, -2147483648, 7, 0, 1], np.int32)])


@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_index(order):
    i, dims = pt.lvector("i"), pt.tensor("dims", dtype="int64", shape=(3,))
    outs = list(unravel_index(i, dims, order=order))
    g = check_lift([i, dims], outs, [np.array([0, 5, 23, 7]), np.array([2, 3, 4])], [np.zeros(0, np.int64), np.array([2, 0, 3])],
                   [np.array([24]), np.array([2, 3, 4])], [np.array([-1]), np.array([2, 3, 4])], [np.array([INT64.max]), np.array([2, 3, 4])])
    raises_check(g, [np.array([-1]), np.array([2, 3, 4])], ValueError, "UnravelIndex: an index is out of bounds")


def test_unravel_index_of_a_matrix_and_constant_dims():
    m = pt.imatrix("m")
    g = check_lift([m], list(unravel_index(m, (2, 3))), [np.array([[0, 5], [3, 1]], np.int32)], [np.zeros((0, 2), np.int32)])
    assert ops(g).count("IntDiv") == 2


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel_multi_index(mode, order):
    a, b, dims = pt.lvector("a"), pt.ivector("b"), pt.tensor("dims", dtype="int64", shape=(2,))
    out = ravel_multi_index((a, b), dims, mode=mode, order=order)
    assert type(out.owner.op).__name__ == "RavelMultiIndex"
    g = check_lift([a, b, dims], [out], [np.array([0, 2, 1]), np.array([3, 0, 1], np.int32), np.array([3, 4])],
                   [np.array([-1, 7, 0]), np.array([3, -5, 4], np.int32), np.array([3, 4])],
                   [np.array([INT64.min, 2]), np.array([np.iinfo(np.int32).max, 0], np.int32), np.array([3, 4])],
                   [np.zeros(0, np.int64), np.zeros(0, np.int32), np.array([3, 4])])
    assert ("Check" in ops(g)) == (mode == "raise")


def test_join_dims():
    x = pt.tensor("x", dtype="float64", shape=(None, None, None, None))
    outs = [join_dims(x, 1, 2), join_dims(x, 0, 4), join_dims(x, 2, 0)]
    assert {type(o.owner.op).__name__ for o in outs} == {"JoinDims"}
    g = check_lift([x], outs, [np.resize(GRID, (2, 3, 4, 1))], [np.zeros((2, 0, 4, 1))], [np.zeros((0, 3, 4, 1))])
    assert ops(g).count("Reshape") == 3


def test_join_dims_of_static_shapes_needs_no_check():
    x = pt.tensor("x", shape=(2, 3, 4))
    g = check_lift([x], [join_dims(x, 0, 2)], [np.arange(24.0).reshape(2, 3, 4)])
    assert "Check" not in ops(g)


def test_split_dims():
    x, sizes = pt.dmatrix("x"), pt.tensor("sizes", dtype="int64", shape=(2,))
    out = split_dims(x, sizes, axis=1)
    assert type(out.owner.op).__name__ == "SplitDims"
    values = np.resize(GRID, (2, 12))
    g = check_lift([x, sizes], [out], [values, np.array([4, 3])], [values, np.array([12, 1])], [np.zeros((2, 0)), np.array([0, 4])],
                   [values, np.array([5, 3])])
    raises_check(g, [values, np.array([5, 3])], ValueError, "SplitDims: cannot reshape axis 1 of x")
