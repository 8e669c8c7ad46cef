"""lifting/shape.py: DimShuffle (Squeeze, Transpose, Unsqueeze), Shape, Shape_i, Alloc, AllocEmpty."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from pytensor.tensor.shape import Shape_i

from ptonnx import ir
from ptonnx.testing import assert_same
from tests.lifting.helpers import check_lift, ops, raises_check


@pytest.mark.parametrize(("pattern", "expected"), [
    ((1, 0, 2), ["Transpose"]),
    (("x", 0, "x", 1, 2), ["Unsqueeze"]),
    ((2, "x", 0), ["Squeeze", "Transpose", "Unsqueeze"]),
    ((0, 2), ["Squeeze"]),
    ((0, 1, 2), []),
])
def test_dimshuffle(pattern, expected):
    u = pt.tensor("u", dtype="float32", shape=(None, 1, None))
    data = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    data[0, 0, 0] = -0.0
    g = check_lift([u], [u.dimshuffle(*pattern)], [data], [np.zeros((0, 1, 3), np.float32)])
    assert ops(g) == expected


def test_shape_and_shape_i_of_unknown_and_static_dims():
    x = pt.tensor("x", dtype="int8", shape=(None, 3, None))
    outs = [x.shape, Shape_i(0)(x), Shape_i(1)(x), Shape_i(2)(x)]
    g = check_lift([x], outs, [np.zeros((2, 3, 0), np.int8)], [np.zeros((0, 3, 5), np.int8)])
    assert g.outputs[2].const is not None and ops(g).count("Shape") == 3


def test_shape_of_a_static_tensor_is_a_constant():
    x = pt.tensor("x", shape=(2, 0))
    g = check_lift([x], [x.shape], [np.zeros((2, 0))])
    assert ops(g) == [] and g.outputs[0].const.tolist() == [2, 0]


def test_alloc_broadcasts_only_dims_known_to_be_1():
    """Alloc broadcasts a dim of static size 1; another dim must equal its size (ValueError)."""
    v, n = pt.dvector("v"), pt.lscalar("n")
    y = pt.alloc(v, n, 3)
    g = check_lift([v, n], [y], [np.array([1.0, np.nan, -0.0]), np.int64(2)], [np.ones(3), np.int64(0)],
                   [np.ones(2), np.int64(2)], [np.ones(1), np.int64(2)], [np.ones(3), np.int64(-1)])
    assert ops(g)[-1] == "Expand"
    raises_check(g, [np.ones(2), np.int64(2)], ValueError, "Runtime broadcasting not allowed")
    raises_check(g, [np.ones(3), np.int64(-1)], ValueError, "negative dimensions are not allowed")


def test_alloc_of_a_scalar_and_of_a_static_1():
    s, row, n = pt.fscalar("s"), pt.tensor("row", dtype="float32", shape=(1, 2)), pt.lscalar("n")
    outs = [pt.alloc(s, n, 2), pt.alloc(row, 3, n, 2), pt.alloc(np.int8(7), 2)]
    g = check_lift([s, row, n], outs, [np.float32(2.5), np.array([[np.inf, -0.0]], np.float32), np.int64(4)],
                   [np.float32(np.nan), np.zeros((1, 2), np.float32), np.int64(0)])
    assert "Check" in ops(g)  # n >= 0


def test_alloc_keeps_a_run_time_negative_zero_as_pytensors_c_code():
    s, n = pt.fscalar("s"), pt.lscalar("n")
    g = check_lift([s, n], [pt.alloc(s, n, 2)], [np.float32(1.0), np.int64(3)])
    [got] = ir.interpret(g, np.float32(-0.0), np.int64(3))
    assert_same(got, np.full((3, 2), -0.0, np.float32), "Alloc.perform's +0.0: docs/numerics.md, Where PyTensor is wrong")


def test_alloc_empty_has_the_shape_and_dtype():
    """AllocEmpty is uninitialised memory in PyTensor: only its shape and dtype are PyTensor's."""
    n = pt.lscalar("n")
    y = pt.empty((n, 3), dtype="int32")
    assert type(y.owner.op).__name__ == "AllocEmpty"

    def same_shape(actual, expected, context):
        assert_same(np.zeros_like(actual), np.zeros_like(expected), context)

    g = check_lift([n], [y], [np.int64(2)], [np.int64(0)], [np.int64(-1)], compare_with=same_shape)
    assert ops(g)[-1] == "Expand"
    raises_check(g, [np.int64(-1)], ValueError, "negative dimensions are not allowed")
