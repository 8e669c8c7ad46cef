"""lifting/tensor.py: Join (Concat), Split, MakeVector, Reshape, Softmax; in pytensor 2.38 also
LogSoftmax and SoftmaxGrad (pytensor 3 builds those from other ops). Axes must be constants: a
computed one is refused by name."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from pytensor.graph.replace import vectorize_graph
from pytensor.tensor.basic import Join, Split
from pytensor.tensor.blockwise import Blockwise

import ptonnx
from ptonnx import ir
from ptonnx.errors import LiftingError
from ptonnx.lifting.tensor import SOFTMAX_IS_SYMBOLIC
from ptonnx.testing import assert_matches, assert_same, run_at_every_level
from tests.conftest import check_like_pytensor
from tests.lifting.helpers import F64_EDGES, check_lift, ints_at_limits, lifted, ops, raises_check, rewriting_reference

M = np.arange(6.0).reshape(2, 3) - 2.5
M[0, 0], M[1, 1] = -0.0, np.nan


def check_softmax(*args, **kwargs):
    """pytensor 3's Softmax and LogSoftmax are symbolic ops whose numbers depend on the rewrites of the mode
    PyTensor compiles them in (softmax of one inf is 1 in its default mode, NaN without rewrites): its
    default rewrites, run in Python (its default mode compiles with numba: 50 s on a fresh machine)."""
    return check_lift(*args, inner_mode=rewriting_reference(), **kwargs)


def test_join_is_concat_with_the_output_dtype():
    a, b, c = pt.dmatrix("a"), pt.imatrix("b"), pt.tensor("c", dtype="float32", shape=(None, 3))
    outs = [pt.join(0, a, b), pt.join(-1, a, c), pt.concatenate([a, a, b], axis=1)]
    bi = np.array([[np.iinfo(np.int32).max, 0, -1]], np.int32)
    g = check_lift([a, b, c], outs, [M, bi, np.zeros((2, 3), np.float32)], [np.zeros((0, 3)), bi[:0], np.zeros((0, 3), np.float32)],
                   [M, bi, np.zeros((1, 3), np.float32)])  # rows differ: Concat on axis -1 fails as PyTensor
    assert ops(g).count("Concat") == 3


def test_join_along_a_computed_axis_is_refused():
    a, b, ax = pt.dmatrix("a"), pt.dmatrix("b"), pt.lscalar("ax")
    y = pt.join(ax, a, b)
    with pytest.raises(LiftingError, match=r"Join producing .*the join axis \(ax\) is not a compile-time constant"):
        lifted([a, b, ax], [y])


def test_join_along_an_axis_computed_from_constants():
    """An axis given as a variable computed from literals lifts as its value: a vectorised Join's
    axis is ExpandDims of one (Blockwise{Join}, as PyMC's Mixture draws), or casts and reductions
    of constants PyTensor's constant finder does not see through."""
    v, xb, a, b = pt.dvector("v"), pt.dmatrix("xb"), pt.dmatrix("a"), pt.dmatrix("b")
    batched = vectorize_graph(pt.join(0, v, pt.ones(2)), {v: xb})
    assert isinstance(batched.owner.op, Blockwise) and batched.owner.inputs[0].owner is not None
    through_cast = pt.join(pt.cast(pt.sqrt(pt.constant(1.0)), "int8"), a, b)
    through_max = pt.join(pt.max(pt.constant(np.array([0, 1], "int8"))), a, b)
    outs = [batched, through_cast, through_max]
    check_like_pytensor([xb, a, b], outs, [M, M, M[:, :1]], more_values=[[np.zeros((0, 3)), M, M]])
    assert ops(lifted([xb, a, b], outs[1:])).count("Concat") == 2  # the axis an attribute: no Loop, no refusal


def test_a_batched_join_along_a_run_time_axis_is_refused_by_name():
    axes, a, b = pt.tensor("axes", dtype="int8", shape=(None,)), pt.dtensor3("a"), pt.dtensor3("b")
    y = Blockwise(Join(), signature="(),(i10,i11),(i20,i21)->(o00,o01)")(axes, a, b)
    with pytest.raises(LiftingError, match=r"Join producing .*the join axis \(axes\) is not a compile-time constant"):
        lifted([axes, a, b], [y])


def test_split_of_computed_sizes():
    x, s = pt.dmatrix("x"), pt.tensor("s", dtype="int64", shape=(3,))
    parts = pt.split(x, s, n_splits=3, axis=1)
    data = np.arange(10.0).reshape(2, 5)
    g = check_lift([x, s], parts, [data, np.array([2, 0, 3])], [data, np.array([5, 0, 0])], [data, np.array([1, 1, 1])],
                   [data, np.array([-1, 3, 3])])
    assert ops(g)[-1] == "Split" and g.outputs[0].producer.attrs == {"axis": 1, "num_outputs": 3}
    raises_check(g, [data, np.array([-1, 3, 3])], ValueError, "Split sizes cannot be negative")
    raises_check(g, [data, np.array([2, 2, 2])], ValueError, "Split sizes (s) do not sum to the size of axis 1 of x")
    check_like_pytensor([x, s], parts, [data, np.array([2, 0, 3])],
                        more_values=[[data, np.array([-1, 3, 3])], [data, np.array([2, 2, 2])], [data, np.array([7, -1, -1])]])
    assert ops(lifted([x], pt.split(x, [2, 0, 3], n_splits=3, axis=1))) == ["Split"]  # constant sizes: no checks


def test_split_along_a_computed_axis_is_refused():
    x, s, ax = pt.dvector("x"), pt.tensor("s", dtype="int64", shape=(2,)), pt.lscalar("ax")
    parts = Split(2)(x, ax, s)
    with pytest.raises(LiftingError, match=r"Split producing .*the split axis \(ax\) is not a compile-time constant"):
        lifted([x, s, ax], parts)


@pytest.mark.parametrize("length", [None, 2, 3, 1])
def test_split_sizes_of_another_static_length_or_none(length):
    """The number of pieces is static: sizes of unknown length get it, checked at run time with PyTensor's
    ValueError (also where their static length is another, which PyTensor builds and fails on every call)."""
    x, s = pt.dvector("x"), pt.tensor("s", dtype="int64", shape=(length,))
    parts = pt.split(x, s, n_splits=2)
    data = np.arange(5.0)
    right, wrong = [[data, np.array(v)] for v in ([2, 3], [1, 1, 3][:length or 3])]
    lists = [right, [data, np.array([5, 0])], [data, np.array([-1, 6])], [data, np.array([2, 2])]] if length in (None, 2) else []
    g = check_lift([x, s], parts, *lists, *([wrong] if length != 2 else []))
    assert "Split" in ops(g) and all(isinstance(d, int) for d in g.outputs[0].producer.inputs[1].shape)
    if length != 2:
        raises_check(g, wrong, ValueError, "Length of splits is not equal to n_splits")
    check_like_pytensor([x, s], parts, *([right] if length in (None, 2) else [wrong]), message=None,
                        more_values=[lst for lst in lists[1:] + ([wrong] if length is None else [])])


def test_make_vector_of_computed_and_constant_entries():
    n, f = pt.lscalar("n"), pt.dscalar("f")
    outs = [pt.stack([n, 2 * n, 3]), pt.as_tensor([f, n]), pt.as_tensor([pt.constant(1), pt.constant(2)])]
    g = check_lift([n, f], outs, *([np.int64(v), np.float64(w)] for v, w in zip(ints_at_limits("int64"), F64_EDGES, strict=False)))
    assert ops(g).count("Concat") == 2 and g.outputs[2].const is not None


def test_reshape():
    x, shape = pt.dtensor3("x"), pt.tensor("shape", dtype="int64", shape=(2,))
    cube = np.arange(24.0).reshape(2, 3, 4)
    outs = [x.reshape((-1, 4)), x.reshape(shape), x.reshape((x.shape[0], -1))]
    g = check_lift([x, shape], outs, [cube, np.array([6, 4])], [cube, np.array([-1, 12])], [cube, np.array([5, -1])],
                   [np.zeros((0, 3, 4)), np.array([0, 12])], [np.zeros((0, 3, 4)), np.array([0, -1])])
    assert ops(g).count("Reshape") == 3


def test_reshape_refuses_a_minus_1_beside_sizes_that_multiply_to_0():
    x, shape = pt.dtensor3("x"), pt.tensor("shape", dtype="int64", shape=(2,))
    g = lifted([x, shape], [x.reshape(shape)])
    raises_check(g, [np.zeros((0, 3, 4)), np.array([0, -1])], ValueError, "cannot reshape x into a shape with -1")


@pytest.mark.parametrize("axis", [0, 1, -1, None, *([(0, 1)] if SOFTMAX_IS_SYMBOLIC else [])])
def test_softmax(axis):
    """(An empty axis: test_softmax_over_an_empty_axis_is_empty.)"""
    x = pt.dmatrix("x")
    y = pt.special.softmax(x, axis=axis)
    finite = np.array([[1.0, -0.0, 700.0], [-745.0, 5e-324, -1e300]])
    g = check_softmax([x], [y], [finite], [M], [np.array([[np.inf, 1.0, -np.inf], [0.0, 0.0, 0.0]])], [np.zeros((2, 1))])
    assert ("Softmax" in ops(g)) == isinstance(axis, int)  # several axes of unknown sizes: exp(x - max) / sum


@pytest.mark.skipif(not SOFTMAX_IS_SYMBOLIC, reason="pytensor 2.38's softmax takes one axis or None")
def test_softmax_over_several_axes_of_unknown_sizes():
    x = pt.dtensor3("x")
    y = pt.special.softmax(x, axis=(0, 2))
    cube = np.arange(24.0).reshape(2, 3, 4) / 7
    g = check_softmax([x], [y], [cube], [np.zeros((2, 0, 4))])
    assert ops(g)[-1] == "Div" and "Softmax" not in ops(g)


def test_softmax_of_static_shapes_moves_the_axes_last_and_flattens():
    x = pt.tensor("x", shape=(2, 3, 4))
    y = pt.special.softmax(x, axis=(0, 2) if SOFTMAX_IS_SYMBOLIC else None)
    g = check_softmax([x], [y], [np.arange(24.0).reshape(2, 3, 4) / 7])
    assert "Softmax" in ops(g) and "Reshape" in ops(g)


def test_softmax_of_one_element():
    """pytensor 3's rewrites make x - max(x) zero: its softmax of one element is 1 even for inf and
    NaN; pytensor 2.38 (scipy) gives NaN there, as ONNX does."""
    x, s = pt.tensor("x", shape=(None, 1)), pt.dscalar("s")
    g = check_softmax([x, s], [pt.special.softmax(x, axis=1), pt.special.softmax(s)],
                   [np.array([[np.inf], [np.nan], [-0.0]]), np.float64(np.nan)], [np.zeros((0, 1)), np.float64(-np.inf)])
    assert ("Where" in ops(g)) == SOFTMAX_IS_SYMBOLIC


def test_softmax_of_integers_is_refused():
    x = pt.bvector("x")
    y = pt.special.softmax(x)
    with pytest.raises(LiftingError, match=r"Softmax of int8 x .*Cast the input to a float dtype first"):
        lifted([x], [y])


@pytest.mark.parametrize("axis", [1, None])
def test_log_softmax(axis):
    """pytensor 2.38's LogSoftmax op, or pytensor 3's (an OpFromGraph). (An empty axis:
    test_softmax_over_an_empty_axis_is_empty.)"""
    x = pt.dmatrix("x")
    y = pt.special.log_softmax(x, axis=axis)
    check_softmax([x], [y], [np.array([[1.0, -0.0, 700.0], [-745.0, 5e-324, -1e300]])],
               [np.array([[np.inf, 1.0, -np.inf], [-np.inf, -np.inf, -np.inf]])], [M], *([[np.zeros((0, 3))]] if axis == 1 else []))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_over_an_empty_axis_is_empty(fn):
    """No element to normalise: an empty result, as PyTensor 3 gives in its default mode (its Python
    perform raises NumPy's ValueError for the max of nothing, pytensor 2.38's C code a MemoryError):
    interpret and the model at both onnxruntime levels."""
    x = pt.dmatrix("x")
    cases = [(0, (0, 3)), (None, (0, 3)), (None, (2, 0)), (1, (2, 0)), (1, (0, 3))]
    outs = [getattr(pt.special, fn)(x, axis=axis) for axis, _ in cases]
    g = lifted([x], outs)
    for _, shape in cases:
        data = np.zeros(shape)
        for got in ir.interpret(g, data):
            assert got.shape == shape and got.dtype == np.float64
        for level, results in run_at_every_level(ptonnx.compile_function([x], outs), data).items():
            assert [r.shape for r in results] == [shape] * len(cases), level


def test_log_softmax_over_one_element_is_minus_zero():
    """pytensor 3's rewrites make x - max(x) zero over a static one-element axis: its default mode
    gives -0.0 (-log(1)) for every x, inf and NaN included (its Python VM after the same rewrites
    +0.0): interpret and the model give -0.0. (pytensor 2.38's LogSoftmax is scipy's: +0.0, NaN for
    inf and NaN, as lifted.)"""
    x, c = pt.tensor("x", shape=(None, 1)), pt.tensor("c", shape=(1, 1, 1))
    data = [np.array([[1.0], [-0.0], [np.inf], [np.nan], [5e-324], [-np.inf], [-1e300]]), np.full((1, 1, 1), np.nan)]
    if not SOFTMAX_IS_SYMBOLIC:
        check_softmax([x, c], [pt.special.log_softmax(x, axis=1), pt.special.log_softmax(c, axis=None)], data)
        return
    outs = [pt.special.log_softmax(x, axis=1), pt.special.log_softmax(c, axis=None), pt.special.log_softmax(c, axis=(0, 2))]
    expected = [np.full(data[0].shape, -0.0), np.full((1, 1, 1), -0.0), np.full((1, 1, 1), -0.0)]
    for got, want in zip(ir.interpret(lifted([x, c], outs), *data), expected, strict=True):
        assert_same(got, want)
    assert_matches(ptonnx.compile_function([x, c], outs), data, expected)


def test_softmax_grad():
    """pytensor 2.38's SoftmaxGrad; pytensor 3 builds the gradient of softmax from elementwise ops and sums."""
    import pytensor

    x, w = pt.dmatrix("x"), pt.dmatrix("w")
    y = pt.special.softmax(x, axis=1)
    grad = pytensor.grad((y * w).sum(), x)
    data = np.array([[1.0, -0.0, 3.0], [-745.0, 5e-324, 2.0]])
    g = check_softmax([x, w], [grad], [data, data[::-1]])
    try:
        from pytensor.tensor.special import SoftmaxGrad  # noqa: F401  (pytensor 2.38)
    except ImportError:
        return
    assert "ReduceSum" in ops(g) and "Softmax" in ops(g)
