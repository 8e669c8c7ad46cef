"""lifting/sequence.py: CumOp (cumsum, cumprod) and SortOp/ArgSortOp along a constant axis or
flattened; cumulative ops of small integers and a computed sort axis are refused by name."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from pytensor.tensor.sort import ArgSortOp, SortOp

from ptonnx.errors import LiftingError
from tests.lifting.helpers import check_lift, ints_at_limits, lifted, ops

M = np.array([[1.5, -0.0, np.nan, 2.0], [1e300, 1e300, -np.inf, 0.0], [3.0, 5e-324, -1.0, np.inf]])


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("build", [pt.cumsum, pt.cumprod])
def test_cumulative_ops_of_floats(build, axis):
    x = pt.dmatrix("x")
    g = check_lift([x], [build(x, axis=axis)], [M], [np.full((2, 3), -0.0)], [np.zeros((0, 4))], [np.zeros((3, 0))])
    assert ops(g)[-1] == ("CumSum" if build is pt.cumsum else "CumProd")


@pytest.mark.parametrize("dtype", ["int64", "uint64", "float32"])
def test_cumulative_ops_of_wide_dtypes_wrap_as_numpy(dtype):
    x = pt.vector("x", dtype=dtype)
    values = ints_at_limits(dtype) if dtype != "float32" else np.array([3e38, 3e38, -np.inf, 1e-45], np.float32)
    check_lift([x], [pt.cumsum(x), pt.cumprod(x)], [values])


@pytest.mark.parametrize("dtype", ["int8", "uint32", "bool"])
def test_cumulative_ops_of_small_integers_are_refused(dtype):
    """PyTensor types the result as the input but NumPy computes it in (u)int64: no one number to match."""
    x = pt.vector("x", dtype=dtype)
    y = pt.cumsum(x)
    with pytest.raises(LiftingError, match=r"(?s)Cumsum\{axis=0\} of x .*computes it in u?int64.*Cast first: pt.cumsum\(x.astype\('int64'\)\)"):
        lifted([x], [y])


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_and_argsort(axis):
    """Stable, NaN last. Ties are left out (also -0.0 against 0.0, whose order shows in the sorted
    values): PyTensor's quicksort orders them as it likes."""
    x = pt.dmatrix("x")
    distinct = np.array([[1.5, -0.5, np.nan, 2.0], [1e300, 7.0, -np.inf, 0.0], [3.0, 5e-324, -1.0, np.inf]])
    g = check_lift([x], [pt.sort(x, axis=axis), pt.argsort(x, axis=axis)], [distinct], [np.zeros((0, 4))])
    check_lift([x], [pt.sort(x, axis=axis)], [np.where(M == 0, 1.0, M)], [np.full((2, 3), -0.0)])
    assert ops(g).count("Sort") == 2 and isinstance(x.sort(axis=0).owner.op, SortOp)


def test_sort_of_integers_at_their_limits():
    x = pt.vector("x", dtype="uint64")
    values = np.unique(ints_at_limits("uint64"))[::-1]
    check_lift([x], [pt.sort(x), pt.argsort(x)], [values])


def test_sorting_along_a_computed_axis_is_refused():
    x, axis = pt.dmatrix("x"), pt.lscalar("axis")
    y = ArgSortOp("quicksort")(x, axis)
    with pytest.raises(LiftingError, match="ArgSortOp.*sorts along an axis computed at run time; give the axis as a constant"):
        lifted([x, axis], [y])
