"""Nonzero (pt.nonzero, flatnonzero, boolean-mask indexing), UnravelIndex, RavelMultiIndex,
JoinDims and SplitDims against PyTensor, plain and rewritten, at both onnxruntime levels,
with NaN, ±0, size-0 and unknown dims and out-of-range indices; and complex dtypes refused."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from pytensor.tensor.extra_ops import ravel_multi_index, unravel_index
from pytensor.tensor.reshape import join_dims, split_dims

import ptonnx
from ptonnx.errors import UnsupportedOpError
from tests.conftest import check_like_pytensor

GRID = np.array([[0.0, -0.0, np.nan, 1.5], [np.inf, 0.0, -2.0, 5e-324]])


@pytest.mark.parametrize("values", [GRID, np.zeros((0, 3)), np.zeros((2, 0)), -GRID.T])
def test_nonzero_flatnonzero_and_mask_indexing(values):
    x = pt.dmatrix("x")
    outs = [*pt.nonzero(x), pt.flatnonzero(x), x[(x > 0).nonzero()], x[pt.nonzero(pt.isnan(x))]]
    check_like_pytensor([x], outs, [values])


def test_nonzero_of_integers_and_booleans():
    i, b = pt.ivector("i"), pt.tensor("b", dtype="bool", shape=(None, None, None))
    ints = np.array([0, -2147483648, 7, 0, 1], np.int32)
    check_like_pytensor([i, b], [*pt.nonzero(i), *pt.nonzero(b)], [ints, np.arange(24).reshape(2, 3, 4) % 5 == 0])


@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_index(order):
    i, dims, dims3 = pt.lvector("i"), pt.tensor("dims", dtype="int64", shape=(2,)), pt.tensor("dims3", dtype="int64", shape=(3,))
    outs = unravel_index(i, dims, order=order)
    check_like_pytensor([i, dims], list(outs), [np.array([0, 5, 11, 7]), np.array([3, 4])])
    check_like_pytensor([i, dims3], list(unravel_index(i, dims3, order=order)), [np.array([], np.int64), np.array([2, 0, 3])])
    m = pt.lmatrix("m")
    check_like_pytensor([m], list(unravel_index(m, (2, 3), order=order)), [np.array([[0, 5], [3, 1]])])
    check_like_pytensor([i, dims], list(outs), [np.array([12]), np.array([3, 4])])  # out of bounds: ValueError
    check_like_pytensor([i, dims], list(outs), [np.array([-1]), np.array([3, 4])])


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel_multi_index(mode, order):
    a, b, dims = pt.lvector("a"), pt.ivector("b"), pt.tensor("dims", dtype="int64", shape=(2,))
    out = ravel_multi_index((a, b), dims, mode=mode, order=order)
    check_like_pytensor([a, b, dims], [out], [np.array([0, 2, 1]), np.array([3, 0, 1], np.int32), np.array([3, 4])])
    check_like_pytensor([a, b, dims], [out], [np.array([-1, 7, 0]), np.array([3, -5, 4], np.int32), np.array([3, 4])])


def test_join_and_split_dims():
    x = pt.tensor("x", dtype="float64", shape=(None, None, None, None))
    sizes = pt.tensor("sizes", dtype="int64", shape=(2,))
    outs = [join_dims(x, 1, 2), join_dims(x, 0, 4), join_dims(x, 2, 0), split_dims(join_dims(x, 1, 2), sizes, axis=1)]
    values = np.resize(GRID, (2, 3, 4, 1))
    check_like_pytensor([x, sizes], outs, [values, np.array([4, 3])])
    check_like_pytensor([x, sizes], outs, [np.zeros((2, 0, 4, 1)), np.array([0, 4])])
    # sizes that do not fit: ValueError, as NumPy. (PyTensor's rewrites turn the plain graph's SplitDims into a
    # Reshape, whose size mismatch onnxruntime reports: a RuntimeMismatchError there.)
    with pytest.raises(ValueError, match="SplitDims: cannot reshape axis 1"):
        ptonnx.compile_function([x, sizes], outs[-1:])(values, np.array([5, 3]))


def test_complex_dtypes_are_refused_by_name():
    z = pt.zvector("z")
    with pytest.raises(UnsupportedOpError, match=r"z is complex128"):
        ptonnx.compile_function([z], [pt.real(z) + 1])
