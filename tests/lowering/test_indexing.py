"""The indexing IR ops (Slice, Gather, NonZero, ScatterFlat) as hand-built graphs, lowered
(lowering/indexing.py) and run at both onnxruntime levels against `interpret`: every dtype,
negative and out-of-range bounds and steps (Python's slicing: clamped), negative indices,
repeated scatter positions, size-0 inputs and results."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ptonnx.errors import RuntimeMismatchError
from ptonnx.ir import TensorType as T
from ptonnx.ir.ops.indexing import INT64_MAX, INT64_MIN
from tests.lowering.harness import check_node, compiled, dtypes_of, ends, interpret, one_node, values

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

COVERS = frozenset({"Slice", "Gather", "NonZero", "ScatterFlat"})
ALL = dtypes_of("Slice")
rng = np.random.default_rng(7)


def ints(*v):
    return np.array(v, dtype=np.int64)


@pytest.mark.parametrize("dtype", ALL)
def test_slice_with_constant_bounds_in_every_dtype(dtype):
    """Static bounds: forward steps are ONNX's Slice itself; a backward step normalises its bounds."""
    x = values(dtype, (3, 5), rng)
    check_node("Slice", [T(dtype, (3, 5)), ints(1, 7), ints(INT64_MAX, -8), ints(1, 2)], {"axes": (0, 1)}, [x])
    check_node("Slice", [T(dtype, (3, 5)), ints(-1, 3), ints(INT64_MIN, 0), ints(-2, -1)], {"axes": (0, 1)}, [x])


#: bounds at and beyond the ends: the sentinels, beyond the size, negative, within
BOUNDS = (INT64_MIN, -7, -4, -1, 0, 2, 6, INT64_MAX)
STEPS = (1, 3, -1, -2, INT64_MAX, INT64_MIN)


def test_slice_with_bounds_known_only_at_run_time():
    """One model, every combination of start, end and step from the ends of the range, on
    lengths 0, 1 and 5 (Python's `slice.indices`: out-of-range bounds clamp, negative ones count
    from the end; onnxruntime alone gets backward steps past the ends wrong)."""
    case = compiled(one_node("Slice", [T("float64", (None,)), T("int64", (1,)), T("int64", (1,)), T("int64", (1,))], {"axes": (0,)}))
    for n in (0, 1, 5):
        x = values("float64", (n,), rng)
        for start, end, step in itertools.product(BOUNDS, BOUNDS, STEPS):
            case.check(x, ints(start), ints(end), ints(step))


def test_slice_of_two_axes_with_run_time_bounds_and_size_zero_dims():
    case = compiled(one_node("Slice", [T("float32", (None, None)), T("int64", (2,)), T("int64", (2,)), T("int64", (2,))],
                             {"axes": (1, 0)}))
    for shape in [(3, 4), (0, 4), (3, 0)]:
        x = values("float32", shape, rng)
        for starts, ends_, steps in [((1, -1), (INT64_MAX, INT64_MIN), (2, -1)), ((-9, 9), (9, -9), (-1, 1)), ((0, 0), (0, 3), (1, 1))]:
            case.check(x, ints(*starts), ints(*ends_), ints(*steps))


@pytest.mark.parametrize("dtype", ALL)
def test_gather_with_negative_indices_in_every_dtype(dtype):
    x = values(dtype, (3, 4), rng)
    check_node("Gather", [T(dtype, (3, 4)), T("int64", (2, 2))], {"axis": 1}, [x, ints(-1, 0, 3, -4).reshape(2, 2)])
    check_node("Gather", [T(dtype, (3, 4)), T("int32", ())], {"axis": 0}, [x, np.array(-3, np.int32)])


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_gather_size_zero_indices_and_inputs(index_dtype):
    case = compiled(one_node("Gather", [T("float64", (None, None)), T(index_dtype, (None,))], {"axis": 1}))
    for shape, idx in [((3, 4), []), ((0, 4), [1, -1]), ((0, 4), []), ((2, 1), [0, -1, 0])]:
        case.check(values("float64", shape, rng), np.array(idx, dtype=index_dtype))
    case = compiled(one_node("Gather", [T("int64", (None,)), T(index_dtype, (None,))], {"axis": 0}))
    case.check(ends("int64"), np.array([0, -1, 3, -8, 7], dtype=index_dtype))


def test_gather_out_of_range_fails_in_both():
    """Out of range is no element: interpret raises, onnxruntime stops the run (what `Check`'s
    lowering relies on)."""
    case = compiled(one_node("Gather", [T("float64", (3,)), T("int64", (1,))], {"axis": 0}))
    for idx in (3, -4, INT64_MAX, INT64_MIN):
        with pytest.raises(IndexError):
            interpret(case.reference, np.zeros(3), ints(idx))
        for run in case.runs.values():
            with pytest.raises(RuntimeMismatchError, match="out of bounds|out of range|indices element"):
                run(np.zeros(3), ints(idx))


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_nonzero_of_masks_all_false_all_true_and_empty(ndim):
    case = compiled(one_node("NonZero", [T("bool", (None,) * ndim)]))
    for shape in [(3,) * ndim, (2,) * (ndim - 1) + (0,), (0,) + (2,) * (ndim - 1)]:
        size = int(np.prod(shape))
        for mask in (np.zeros(size, bool), np.ones(size, bool), np.arange(size) % 3 == 1):
            case.check(mask.reshape(shape))


@pytest.mark.parametrize("reduction", ["none", "add"])
@pytest.mark.parametrize("dtype", ALL)
def test_scatter_flat_with_repeated_positions_in_every_dtype(dtype, reduction):
    """Repeated positions: the last write wins (none), writes accumulate (add, wrapping integers)."""
    case = compiled(one_node("ScatterFlat", [T(dtype, (2, 3)), T("int64", (None,)), T(dtype, (None,))], {"reduction": reduction}))
    x = values(dtype, (2, 3), rng)
    updates = np.resize(ends(dtype), 5)
    case.check(x, ints(5, 0, 5, 2, 5), updates)
    case.check(x, ints(), updates[:0])


def test_scatter_flat_into_size_zero_and_of_size_zero():
    case = compiled(one_node("ScatterFlat", [T("float64", (None, 3)), T("int64", (None, None)), T("float64", (None, None))],
                             {"reduction": "add"}))
    case.check(np.zeros((0, 3)), np.zeros((0, 2), np.int64), np.zeros((0, 2)))
    case.check(np.ones((2, 3)), ints(0, 5, 5, 0).reshape(2, 2), np.array([[np.inf, -0.0], [-0.0, -np.inf]]))
