"""Where PyTensor departs from itself or from NumPy, the compiled model gives the right number
(docs/numerics.md, "Where PyTensor is wrong"): its C code's where its Python `perform` differs,
NumPy's where PyTensor has a bug. Each case at both onnxruntime levels, against NumPy."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx.testing import assert_same, run_at_every_level
from tests.lifting.helpers import no_c_compiler

I64_ENDS = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, -129, 128, 255, 256, -1, 0, 2**53 + 1, -(2**40)])
M = np.arange(12.0).reshape(3, 4) - 5.5
M[0, 0], M[1, 1], M[2, 3] = np.nan, -0.0, np.inf


def _check(inputs, outputs, arrays, expected):
    cm = ptonnx.compile_function(inputs, outputs)
    for level, got in run_at_every_level(cm, *arrays).items():
        for g, e in zip(got, expected, strict=True):
            assert_same(g, e, f"at {level}")


def test_round_half_away_from_zero_of_positive_zero_is_positive_zero():
    """RoundHalfAwayFromZero.impl (Python, Numba) gives -0.0 for +0.0; its C code, C's round(), +0.0."""
    x = pt.dvector("x")
    _check([x], [pt.round_half_away_from_zero(x)], [np.array([0.0, -0.0, 0.5, -0.5, 2.5, -2.5, 1e300, np.nan])],
           [np.array([0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 1e300, np.nan])])


def test_integer_casts_out_of_range_wrap_as_numpy_astype():
    """Cast.impl raises OverflowError (NumPy scalar constructors); the C code and astype wrap."""
    x = pt.lvector("x")
    _check([x], [pt.cast(x, "int8"), pt.cast(x, "uint8"), pt.cast(x, "uint64")], [I64_ENDS],
           [I64_ENDS.astype(np.int8), I64_ENDS.astype(np.uint8), I64_ENDS.astype(np.uint64)])


def test_a_sum_over_no_axes_keeps_negative_zero():
    """CAReduce.perform's np.add.reduce(x, axis=()) gives +0.0 for -0.0; the C code returns x."""
    x = pt.dmatrix("x")
    _check([x], [pt.sum(x, axis=())], [M], [M])


def test_alloc_of_a_run_time_negative_zero_is_negative_zero():
    """Alloc.perform fills with np.zeros when v == 0 (+0.0 for -0.0); its C code copies -0.0."""
    s, n = pt.fscalar("s"), pt.lscalar("n")
    _check([s, n], [pt.alloc(s, n, 2)], [np.float32(-0.0), np.int64(3)], [np.full((3, 2), -0.0, np.float32)])


@pytest.mark.parametrize("offset", [4, 5, -4, -5])
def test_fill_diagonal_offset_beyond_the_matrix_writes_nothing(offset):
    """FillDiagonalOffset.perform's step count goes negative past the width and writes an element."""
    a, v, k = pt.dmatrix("a"), pt.dscalar("v"), pt.lscalar("k")
    _check([a, v, k], [pt.fill_diagonal_offset(a, v, k)], [M.T.copy(), np.float64(7.0), np.int64(offset)], [M.T])


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_mirror_pads_of_size_one_and_empty_axes_are_numpys(mode):
    """PyTensor 3's reflect pad leaves a size-1 axis unpadded (2.38 raises ZeroDivisionError), and
    its mirror pad of an empty array along the other axis raises; np.pad does neither."""
    with no_c_compiler():
        x, w = pt.dmatrix("x"), pt.tensor("w", dtype="int64", shape=(2, 2))
        cm = ptonnx.compile_function([x, w], [pt.pad(x, w, mode=mode)])
    for data, widths in [(M[:1], [[2, 2], [0, 1]]), (M[:, :1], [[2, 2], [0, 1]]), (np.zeros((0, 4)), [[0, 0], [1, 1]])]:
        for level, (got,) in run_at_every_level(cm, data, np.array(widths)).items():
            assert_same(got, np.pad(data, widths, mode=mode), f"{data.shape} by {widths} at {level}")
