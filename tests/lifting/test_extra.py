"""lifting/extra.py: Repeat (computed repeats), FillDiagonal, FillDiagonalOffset, SearchsortedOp and
Unique (index, inverse, counts), composed of IR ops; unique along an axis is refused."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx

from ptonnx.errors import LiftingError
from ptonnx import ir
from ptonnx.testing import assert_same
from tests.conftest import check_like_pytensor
from tests.lifting.helpers import REFERENCE, check_lift, lifted, ops, raises_check

M = np.arange(12.0).reshape(3, 4) - 5.5
M[0, 0], M[1, 1], M[2, 3] = np.nan, -0.0, np.inf

@pytest.mark.parametrize("axis", [0, 1])
def test_repeat_of_computed_repeats(axis):
    x, r = pt.dmatrix("x"), pt.lvector("r")
    y = pt.repeat(x, r, axis=axis)
    assert type(y.owner.op).__name__ == "Repeat"
    n = M.shape[axis]
    g = check_lift([x, r], [y], [M, np.arange(n)], [M, np.zeros(n, np.int64)], [M, np.full(n, 3)],
                   [M, np.array([1, -1, 2, 0][:n])])
    assert ops(g)[-1] == "Gather" and "ScatterFlat" in ops(g)
    raises_check(g, [M, np.array([1, -1, 2, 0][:n])], ValueError, "repeat: negative dimensions are not allowed")
    for wrong in (np.array([1, 2]), np.ones(n + 1, np.int64)):  # unchecked, x of 3 rows and r = [1, 2] gave x[[0, 1, 1]]
        raises_check(g, [M, wrong], ValueError, "repeat: operands could not be broadcast together")
        with pytest.raises(ValueError, match="operands could not be broadcast"):
            ptonnx.compile_function([x, r], [y])(M, wrong)


def test_repeat_of_a_flattened_array():
    """`pt.repeat(x, r)` (axis None) flattens x first, then repeats along axis 0."""
    x, r = pt.dmatrix("x"), pt.lvector("r")
    check_lift([x, r], [pt.repeat(x, r)], [M[:2, :2], np.array([0, 2, 1, 3])], [np.zeros((0, 2)), np.zeros(0, np.int64)])


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (3, 3, 3), (0, 3)])
def test_fill_diagonal(shape):
    a, v = pt.tensor("a", shape=(None,) * len(shape)), pt.dscalar("v")
    y = pt.fill_diagonal(a, v)
    assert type(y.owner.op).__name__ == "FillDiagonal"
    data = np.arange(np.prod(shape), dtype=float).reshape(shape)
    g = check_lift([a, v], [y], [data, np.float64(-0.0)], [data, np.float64(np.nan)])
    assert ops(g)[-1] == "ScatterFlat"


@pytest.mark.parametrize("shape", [(2, 3, 4), (3, 3, 2), (2, 2, 2, 3)])
def test_fill_diagonal_of_unequal_dims_raises_as_numpy(shape):
    """A 3-D (or more) array whose dims differ: NumPy's fill_diagonal (PyTensor's perform) raises
    ValueError; the IR checks it (it once filled a[i, i, i] for i < the smallest dim)."""
    a, v = pt.tensor("a", shape=(None,) * len(shape)), pt.dscalar("v")
    y = pt.fill_diagonal(a, v)
    data = np.zeros(shape)
    with pytest.raises(ValueError, match="All dimensions of input must be of equal length"):
        pytensor.function([a, v], y, mode=REFERENCE)(data, 1.0)
    g = check_lift([a, v], [y], [np.zeros((3,) * len(shape)), np.float64(2.0)])
    raises_check(g, [data, np.float64(1.0)], ValueError, "All dimensions of input must be of equal length")
    with pytest.raises(ValueError, match=rf"All dimensions of input must be of equal length \(fill_diagonal of a, of {len(shape)} dims\)"):
        ptonnx.compile_function([a, v], [y])(data, 1.0)
    static = pt.tensor("a", shape=shape)  # also where the dims are known when compiling: it fails at run time, as PyTensor
    for a_ in (a, static):
        check_like_pytensor([a_, v], [pt.fill_diagonal(a_, v)], [data, np.float64(1.0)],
                            message="All dimensions of input must be of equal length")


@pytest.mark.parametrize("offset", [0, 1, -1, 3, -3, 4, 5, -5])
def test_fill_diagonal_offset(offset):
    a, v, k = pt.dmatrix("a"), pt.dscalar("v"), pt.lscalar("k")
    y = pt.fill_diagonal_offset(a, v, k)
    assert type(y.owner.op).__name__ == "FillDiagonalOffset"
    tall = [M.T, np.float64(7.0), np.int64(offset)]
    check_lift([a, v, k], [y], [M, np.float64(-np.inf), np.int64(offset)], *([tall] if offset <= 3 else []),  # PyTensor writes an element past the width (docs/numerics.md)
               [np.zeros((0, 3)), np.float64(1.0), np.int64(offset)])


def test_fill_diagonal_offset_beyond_the_width_writes_nothing():
    a, v, k = pt.dmatrix("a"), pt.dscalar("v"), pt.lscalar("k")
    g = lifted([a, v, k], [pt.fill_diagonal_offset(a, v, k)])
    [got] = ir.interpret(g, M.T, np.float64(7.0), np.int64(5))
    assert_same(got, M.T, "FillDiagonalOffset.perform writes an element: docs/numerics.md, Where PyTensor is wrong")


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    """NumPy's order: NaN is the largest; ties resolved by the side."""
    a, v = pt.dvector("a"), pt.dmatrix("v")
    y = pt.searchsorted(a, v, side=side)
    assert type(y.owner.op).__name__ == "SearchsortedOp"
    sorted_a = np.array([-np.inf, -1.0, -0.0, 0.0, 0.0, 2.5, np.inf, np.nan, np.nan])
    queries = np.array([[-np.inf, -2.0, -0.0, 0.0], [1.0, 2.5, np.inf, np.nan]])
    g = check_lift([a, v], [y], [sorted_a, queries], [np.zeros(0), queries], [sorted_a, np.zeros((0, 4))])
    assert g.outputs[0].dtype == "int64"


def test_searchsorted_with_a_sorter_and_integers():
    a, v, s = pt.lvector("a"), pt.lvector("v"), pt.lvector("s")
    y = pt.searchsorted(a, v, sorter=s)
    values = np.array([5, np.iinfo(np.int64).min, 3, np.iinfo(np.int64).max, 3])
    queries = np.array([np.iinfo(np.int64).min, 3, 4, 2**40])
    check_lift([a, v, s], [y], [values, queries, np.argsort(values, kind="stable")])


@pytest.mark.parametrize(("a_dtype", "v_dtype"), [("int32", "int64"), ("uint64", "int64"), ("int64", "float32"), ("float32", "float64")])
def test_searchsorted_of_different_dtypes(a_dtype, v_dtype):
    """NumPy compares in the two dtypes' common one (uint64 with int64: float64), found without a node
    (an Add of the two once failed on lengths that differ, static or not)."""
    static = pt.tensor("a", dtype=a_dtype, shape=(5,)), pt.tensor("v", dtype=v_dtype, shape=(4,))
    unknown = pt.vector("a", dtype=a_dtype), pt.vector("v", dtype=v_dtype)
    a_info = np.iinfo(a_dtype) if a_dtype[0] in "iu" else np.finfo(a_dtype)
    v_info = np.iinfo(v_dtype) if v_dtype[0] in "iu" else np.finfo(v_dtype)
    sorted_a = np.sort(np.array([a_info.min, 0, 1, 2**24 + 1 if a_dtype != "float32" else 7, a_info.max], dtype=a_dtype))
    queries = np.array([v_info.min, 1, 2**24, v_info.max], dtype=v_dtype)
    for a, v in (static, unknown):
        y = pt.searchsorted(a, v)
        g = check_lift([a, v], [y], [sorted_a, queries])
        assert all(n.op != "Add" for n in g)
        check_like_pytensor([a, v], [y], [sorted_a, queries])


@pytest.mark.parametrize("flags", [(False, False, False), (True, True, True), (False, True, False), (True, False, True)])
def test_unique(flags):
    """NaNs are one value, as NumPy's unique; index is the first occurrence."""
    x = pt.dmatrix("x")
    outs = pt.unique(x, *flags)
    outs = list(outs) if isinstance(outs, list | tuple) else [outs]
    data = np.array([[3.0, np.nan, -0.0, 3.0], [np.inf, np.nan, 1.0, -np.inf]])
    g = check_lift([x], outs, [data], [np.zeros((0, 3))], [np.full((2, 2), 7.0)])
    assert "Sort" in ops(g)


def test_unique_of_integers():
    x = pt.vector("x", dtype="uint8")
    outs = pt.unique(x, return_inverse=True, return_counts=True)
    check_lift([x], list(outs), [np.array([255, 0, 255, 7, 0, 1], np.uint8)])


def test_unique_along_an_axis_is_refused():
    x = pt.dmatrix("x")
    with pytest.raises(LiftingError, match=r"unique along an axis \(Unique.*axis=0.*\) is not supported; use axis=None"):
        lifted([x], [pt.unique(x, axis=0)])
