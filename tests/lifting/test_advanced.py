"""lifting/advanced.py: NumPy indexing in full. AdvancedSubtensor(1) (integer arrays, boolean
masks, slices and newaxis mixed) as one Gather of a flat index; IncSubtensor, AdvancedIncSubtensor
and AdvancedIncSubtensor1 (set and increment) as a ScatterFlat."""

from __future__ import annotations

import itertools

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.subtensor import (
    advanced_inc_subtensor1,
    advanced_set_subtensor1,
    advanced_subtensor1,
)

import ptonnx
from ptonnx.errors import LiftingError
from ptonnx.lifting.advanced import index
from ptonnx.lifting.context import LiftContext
from tests.conftest import check_like_pytensor
from tests.lifting.helpers import REFERENCE, check_lift, ops, raises_check

INT64 = np.iinfo(np.int64)
X = np.arange(20.0).reshape(4, 5) - 7.5
X[0, 0], X[1, 1], X[2, 2], X[3, 3] = -0.0, np.nan, -np.inf, 5e-324
CUBE = np.arange(24.0).reshape(2, 3, 4)


def test_advanced_subtensor1_is_one_gather():
    x, i = pt.dmatrix("x"), pt.lvector("i")
    y = advanced_subtensor1(x, i)
    assert type(y.owner.op).__name__ == "AdvancedSubtensor1"
    g = check_lift([x, i], [y], [X, np.array([0, -1, 3, 3])], [X, np.zeros(0, np.int64)], [X, np.array([4])],
                   [X, np.array([INT64.min])], [np.zeros((0, 5)), np.zeros(0, np.int64)])
    assert ops(g)[-1] == "Gather"
    raises_check(g, [X, np.array([0, 4])], IndexError, "index out of bounds for axis 0 of x")


@pytest.mark.parametrize("build", [
    lambda x, i, j: x[i, j],            # adjacent arrays: the index dims replace them
    lambda x, i, j: x[i, 1:, j],        # separated by a slice: the index dims come first
    lambda x, i, j: x[None, i, ::-1],   # newaxis and a slice
    lambda x, i, j: x[1:, i[:, None], j[None, :]],  # index arrays broadcast to 2-D
    lambda x, i, j: x[i, -1],           # an array with a scalar
])
def test_advanced_subtensor_forms(build):
    x, i, j = pt.dtensor3("x"), pt.lvector("i"), pt.lvector("j")
    y = build(x, i, j)
    assert type(y.owner.op).__name__ == "AdvancedSubtensor"
    cube = CUBE.copy()
    cube[0, 0, 0], cube[1, 2, 3] = np.nan, -0.0
    g = check_lift([x, i, j], [y], [cube, np.array([1, -2]), np.array([3, 0])], [cube, np.array([0]), np.array([-4, 2])],
                   [cube, np.zeros(0, np.int64), np.zeros(0, np.int64)], [cube, np.array([2, 0]), np.array([0, 0])])
    assert "Gather" in ops(g)


def test_index_arrays_that_do_not_broadcast_fail_as_numpy():
    x, i, j = pt.dmatrix("x"), pt.lvector("i"), pt.lvector("j")
    g = check_lift([x, i, j], [x[i, j]], [X, np.array([0, 1, 2]), np.array([0, 1])], [X, np.array([0, 1]), np.array([4])])
    raises_check(g, [X, np.array([0, 1, 2]), np.array([0, 1])], IndexError, "could not be broadcast together")


def test_boolean_masks():
    x, m, v = pt.dmatrix("x"), pt.bmatrix("m"), pt.bvector("v")
    mask, row_mask = m.astype("bool"), v.astype("bool")
    outs = [x[mask], x[row_mask], x[row_mask, 1:]]
    half = (np.arange(20).reshape(4, 5) % 3 == 0).astype(np.int8)
    g = check_lift([x, m, v], outs, [X, half, np.array([1, 0, 0, 1], np.int8)], [X, np.zeros((4, 5), np.int8), np.zeros(4, np.int8)],
                   [X, half[:3], np.array([1, 0, 0, 1], np.int8)], [X, half, np.ones(3, np.int8)])
    assert ops(g).count("NonZero") == 3
    raises_check(g, [X, half[:3], np.ones(4, np.int8)], IndexError, "boolean index did not match")


def test_a_0d_boolean_index_is_refused():
    """PyTensor refuses to build `x[b]` for a 0-d boolean b (NotImplementedError); the rule
    refuses it too, should another builder make one."""
    ctx = LiftContext()
    x = ctx.add_input(pt.dmatrix("x"))
    with pytest.raises(LiftingError, match="0-D boolean.*index with a 1-D mask"):
        index(ctx, x, (pt.scalar("b", dtype="bool"),), "x")


def test_set_and_increment_of_basic_indexing():
    x, y, i = pt.dmatrix("x"), pt.dvector("y"), pt.lscalar("i")
    outs = [pt.set_subtensor(x[i], y), pt.inc_subtensor(x[1:, i], y[:3]), pt.inc_subtensor(x[::-2, ::2], 1.5)]
    assert {type(o.owner.op).__name__ for o in outs} == {"IncSubtensor"}
    y0 = np.array([1.0, -0.0, np.inf, np.nan, -1.0])
    g = check_lift([x, y, i], outs, [X, y0, np.int64(-1)], [X, y0, np.int64(4)], [X, y0[:1], np.int64(0)], [X, y0[:2], np.int64(0)])
    assert ops(g).count("ScatterFlat") == 3
    raises_check(g, [X, y0[:2], np.int64(0)], ValueError, "could not be broadcast to the indexing result")


@pytest.mark.parametrize("kind", ["set", "inc", "inc_once"])
def test_advanced_set_and_increment_with_repeated_indices(kind):
    """set: the last write of a repeated index wins; inc: repeats add up (np.add.at); inc with
    ignore_duplicates: a repeated index adds once."""
    x, y, i, j = pt.dmatrix("x"), pt.dvector("y"), pt.lvector("i"), pt.lvector("j")
    target = x[i, j]
    out = (pt.set_subtensor(target, y) if kind == "set"
           else pt.inc_subtensor(target, y, ignore_duplicates=kind == "inc_once"))
    assert type(out.owner.op).__name__ == "AdvancedIncSubtensor"
    y0 = np.array([1.0, -0.0, np.inf, 2.5])
    g = check_lift([x, y, i, j], [out], [X, y0, np.array([0, 1, 0, 3]), np.array([0, 1, 0, -1])],
                   [X, y0[:1], np.array([2, 2, 2]), np.array([1, 1, 1])], [X, np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)],
                   [X, y0, np.array([0, 4, 0, 0]), np.array([0, 0, 0, 0])])
    reduction = g.outputs[0].producer.attrs["reduction"]
    assert reduction == ("add" if kind == "inc" else "none")


def test_advanced_inc_subtensor1():
    x, y, i = pt.dmatrix("x"), pt.dmatrix("y"), pt.lvector("i")
    outs = [advanced_inc_subtensor1(x, y, i), advanced_set_subtensor1(x, y, i)]
    assert {type(o.owner.op).__name__ for o in outs} == {"AdvancedIncSubtensor1"}
    y0 = np.full((3, 5), 0.25)
    y0[0, 0], y0[1, 1] = np.inf, -0.0
    g = check_lift([x, y, i], outs, [X, y0, np.array([1, 1, -1])], [X, y0[:2], np.array([0, 2, 0])], [X, y0, np.array([1, 5, 0])],
                   [X, y0[:, :4], np.array([0, 2, 0])])
    assert [o.producer.attrs["reduction"] for o in g.outputs] == ["add", "none"]


@pytest.mark.parametrize("y_shape", [(1, 5), (3, 1), (1, 1)])
def test_advanced_inc_subtensor1_refuses_runtime_broadcasting_as_pytensor(y_shape):
    """y with a dim of size 1 its type does not mark broadcastable: PyTensor's AdvancedIncSubtensor1
    raises ValueError (both lines, by its rule: y's first dim against the index count, each dim
    from the last against x's, x's first too); the lifting once broadcast y."""
    x, y, i = pt.dmatrix("x"), pt.dmatrix("y"), pt.lvector("i")
    outs = [advanced_inc_subtensor1(x, y, i), advanced_set_subtensor1(x, y, i)]
    values = [X, np.ones(y_shape), np.array([0, 2, 0])]
    for out in outs:
        with pytest.raises(ValueError, match="Runtime broadcasting not allowed"):
            pytensor.function([x, y, i], out, mode=REFERENCE)(*values)
    g = check_lift([x, y, i], outs, [X, np.ones((3, 5)), np.array([0, 2, 0])], [X, np.ones((0, 5)), np.zeros(0, np.int64)])
    for quirk in ([X, np.ones((1, 5)), np.array([3])], [X[:1], np.ones((1, 1)), np.array([0])]):  # PyTensor's own rule
        check_lift([x, y, i], outs, quirk)
    raises_check(g, values, ValueError, "Runtime broadcasting not allowed. AdvancedIncSubtensor1")
    with pytest.raises(ValueError, match="Runtime broadcasting not allowed"):
        ptonnx.compile_function([x, y, i], outs)(*values)
    row = pt.tensor("row", shape=(1, None))  # marked broadcastable: broadcast, as PyTensor does
    check_lift([x, row, i], [advanced_inc_subtensor1(x, row, i)], [X, np.ones((1, 5)), np.array([0, 2, 0])])


@pytest.mark.parametrize("kind", ["set", "inc"])
@pytest.mark.parametrize(("x_shape", "y_ndim"), [((4, 3), 0), ((4, 3), 1), ((4, 3), 2), ((4, 3, 2), 1), ((4, 3, 2), 2), ((4, 3, 2), 3)])
def test_advanced_inc_subtensor1_of_a_y_of_any_shape_as_pytensor(kind, x_shape, y_ndim):
    """y of fewer dims than x or as many, each dim 0, 1, the right size or another, against 3, 1 and 0
    indices: the numbers where PyTensor gives them, its ValueError where it raises (a y too short, too
    long, or of a size 1 it would broadcast at run time), in the plain and rewritten graph at both levels."""
    x, y, i = pt.tensor("x", shape=(None,) * len(x_shape)), pt.tensor("y", shape=(None,) * y_ndim), pt.lvector("i")
    out = (advanced_set_subtensor1 if kind == "set" else advanced_inc_subtensor1)(x, y, i)
    data = np.arange(np.prod(x_shape), dtype=float).reshape(x_shape) - 7.5
    sizes = sorted({0, 1, 3, *x_shape[len(x_shape) - y_ndim + 1:]})
    lists = [[data, np.full(shape, -0.5), idx] for shape in itertools.product(sizes, repeat=y_ndim)
             for idx in (np.array([0, 2, -1]), np.array([1]), np.zeros(0, np.int64))]
    check_like_pytensor([x, y, i], [out], lists[0], more_values=lists[1:])


def test_writing_through_a_mask():
    x, m = pt.dmatrix("x"), pt.bmatrix("m")
    out = pt.set_subtensor(x[m.astype("bool")], -0.0)
    half = (np.arange(20).reshape(4, 5) % 3 == 0).astype(np.int8)
    check_lift([x, m], [out], [X, half], [X, np.zeros((4, 5), np.int8)])
