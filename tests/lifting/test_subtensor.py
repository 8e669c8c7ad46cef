"""lifting/subtensor.py: Subtensor (basic indexing) as a Slice then Gathers of bound-checked indices."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from tests.lifting.helpers import check_lift, ops, raises_check

INT64 = np.iinfo(np.int64)
X = np.arange(20.0).reshape(4, 5)
X[0, 0], X[1, 1], X[2, 2] = -0.0, np.nan, -np.inf


def test_constant_slices_are_one_slice():
    x = pt.dmatrix("x")
    outs = [x[1:3], x[::-1], x[:, -2:], x[::2, 4:0:-2], x[5:], x[-100:100]]
    g = check_lift([x], outs, [X], [np.zeros((0, 5))], [np.zeros((4, 0))])
    assert set(ops(g)) == {"Slice"}


def test_slices_of_computed_bounds_and_steps():
    """A step computed at run time picks the defaults of None bounds by its sign."""
    x, s, a = pt.dmatrix("x"), pt.lscalar("s"), pt.lscalar("a")
    steps, starts = (1, 2, -1, -3, INT64.max, INT64.min + 1), (0, -1, 10, -10, 2, INT64.max, INT64.min)
    cases = [[X, np.int64(step), np.int64(start)] for step in steps for start in starts]
    g = check_lift([x, s, a], [x[a::s], x[:, ::s], x[:a:s]], *cases, [X, np.int64(0), np.int64(0)])  # step 0: ValueError
    assert ops(g).count("Slice") == 3 and "Where" in ops(g)


def test_integer_indices_are_checked_gathers():
    x, i = pt.dmatrix("x"), pt.lscalar("i")
    g = check_lift([x, i], [x[i], x[1:, i], x[i, -2]], *([X, np.int64(v)] for v in (0, 3, -4, 4, -5, INT64.max, INT64.min)))
    assert ops(g).count("Gather") == 4 and ops(g).count("Check") == 4
    raises_check(g, [X, np.int64(4)], IndexError, "index out of bounds for axis 0 of x")


def test_constant_indices_in_bounds_need_no_check():
    x = pt.tensor("x", dtype="uint8", shape=(3, 2))
    data = np.array([[0, 255], [1, 254], [7, 128]], np.uint8)
    g = check_lift([x], [x[-1], x[0, 1], x[1:, -2]], [data])
    assert "Check" not in ops(g)


def test_indexing_an_empty_axis_fails_as_numpy():
    x, i = pt.dvector("x"), pt.lscalar("i")
    g = check_lift([x, i], [x[i]], [np.zeros(0), np.int64(0)], [np.array([np.nan]), np.int64(-1)])
    raises_check(g, [np.zeros(0), np.int64(0)], IndexError, "index out of bounds")
