"""NumPy indexing in full, against PyTensor: integer arrays (negative, repeated, out of
bounds), boolean masks, slices, integers and newaxis mixed, with NumPy's placement
of the advanced axes; reading, setting (the last of repeated writes wins) and
incrementing (repeats accumulate, as np.add.at). Every dtype, extreme values,
size-0 and unknown dims; the plain graph and the ONNX mode's graph, every
onnxruntime level. An out-of-bounds index raises IndexError, as in PyTensor.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptonnx
from tests.conftest import check_like_pytensor
from tests.e2e.test_op_properties import ALL
from tests.e2e.test_shape_programs import arrays


@st.composite
def indexed(draw):
    """(x, static, index entries, index inputs): entries refer to inputs by position."""
    x, static = draw(arrays(ALL, min_ndim=1, max_ndim=3))
    entries, inputs, axis = [], [], 0
    while axis < x.ndim:
        n = x.shape[axis]
        kind = draw(st.sampled_from(["all", "slice", "int", "array", "array", "mask", "newaxis"]))
        if kind == "all":
            entries.append(slice(None))
        elif kind == "slice":
            entries.append(slice(draw(st.integers(-n - 1, n + 1)), None, draw(st.sampled_from([1, 2, -1]))))
        elif kind == "newaxis":
            entries.append(None)
            continue
        elif kind == "int":
            if n == 0:
                entries.append(slice(None))
            else:
                entries.append(draw(st.integers(-n, n - 1)))
        elif kind == "mask":
            width = draw(st.integers(1, x.ndim - axis))
            shape = x.shape[axis: axis + width]
            if draw(st.integers(0, 9)) == 0:  # a mask of the wrong size: IndexError
                shape = (shape[0] + 1, *shape[1:])
            size = int(np.prod(shape))
            inputs.append(np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool).reshape(shape))
            entries.append(("input", len(inputs) - 1))
            axis += width
            continue
        else:
            low, high = (-n, n - 1) if draw(st.integers(0, 9)) else (-n - 2, n + 1)  # sometimes out of bounds
            ndim = draw(st.integers(0, 2))
            shape = tuple(draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim)))
            size = int(np.prod(shape))
            values = draw(st.lists(st.integers(low, high), min_size=size, max_size=size)) if high >= low else [0] * size
            inputs.append(np.array(values, dtype=draw(st.sampled_from(["int64", "int32", "int8", "uint8"]))
                                   if min(values, default=0) >= 0 else "int64").reshape(shape))
            entries.append(("input", len(inputs) - 1))
        axis += 1
    return x, static, entries, inputs


def _build(entries, variables):
    return tuple(variables[e[1]] if isinstance(e, tuple) else e for e in entries)


@given(indexed(), st.sampled_from(["read", "set", "inc"]), st.data())
def test_indexing_matches_pytensor(case, mode, data):
    x, static, entries, index_values = case
    v = pt.tensor("x", dtype=x.dtype.name, shape=static)
    idx_vars = [pt.tensor(f"i{k}", dtype=a.dtype.name, shape=(None,) * a.ndim) for k, a in enumerate(index_values)]
    selection = v[_build(entries, idx_vars)]
    values = [x, *index_values]
    variables = [v, *idx_vars]
    if mode == "set" and all(e == slice(None) for e in entries):
        mode = "inc"  # set_subtensor(x[:], y) does not read x: pytensor.function refuses x as an input
    if mode != "read" and None in entries:
        mode = "read"  # PyTensor refuses to write through a newaxis when the graph is built
    if mode == "read":
        out = selection
    else:
        y_value = data.draw(arrays((x.dtype.name,), max_ndim=0))[0]
        y = pt.tensor("y", dtype=x.dtype.name, shape=())
        out = pt.set_subtensor(selection, y) if mode == "set" else pt.inc_subtensor(selection, y)
        variables, values = [*variables, y], [*values, y_value]
    check_like_pytensor(variables, [out], values)


@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_repeated_indices_accumulate_on_increment_and_keep_the_last_on_set(dtype):
    x = pt.vector("x", dtype=dtype)
    idx = pt.lvector("idx")
    y = pt.vector("y", dtype=dtype)
    values = [np.zeros(4, dtype), np.array([1, 1, 3, 1, -1]), np.array([1, 2, 3, 4, 5]).astype(dtype)]
    outs = [pt.inc_subtensor(x[idx], y), pt.set_subtensor(x[idx], y)]
    check_like_pytensor([x, idx, y], outs, values)
    check_like_pytensor([x, idx, y], [pt.inc_subtensor(x[idx], y, ignore_duplicates=True)], values)


def test_out_of_bounds_index_raises_index_error():
    x, idx = pt.matrix("x"), pt.lvector("idx")
    for out in (x[idx], x[:, idx], x[idx, idx], pt.set_subtensor(x[idx], 0.0)):
        raised = check_like_pytensor([x, idx], [out], [np.ones((2, 3)), np.array([0, 3])])
        assert isinstance(raised, IndexError)


def test_boolean_mask_of_its_own_values():
    x = pt.matrix("x")
    values = np.array([[1.0, -2.0, np.nan], [0.0, 3.0, -np.inf]])
    check_like_pytensor([x], [x[x > 0], pt.set_subtensor(x[x < 0], 0.0), x[pt.isnan(x).any(axis=1)]], [values])


#: each indexing op -> the tests of this module that compare programs reaching it with PyTensor
#: (read by tests/ir/test_registry.py; test_every_indexing_op_is_reached_from_pytensor lifts one of each)
REACHED_BY = {
    "Slice": ("test_indexing_matches_pytensor",),
    "Gather": ("test_indexing_matches_pytensor", "test_out_of_bounds_index_raises_index_error"),
    "NonZero": ("test_indexing_matches_pytensor", "test_boolean_mask_of_its_own_values"),
    "ScatterFlat": ("test_indexing_matches_pytensor", "test_repeated_indices_accumulate_on_increment_and_keep_the_last_on_set"),
}


def test_every_indexing_op_is_reached_from_pytensor():
    x, idx = pt.matrix("x"), pt.lvector("idx")
    programs = {"Slice": ([x], x[1:, 0]), "Gather": ([x, idx], x[idx]), "NonZero": ([x], x[x > 0]),
                "ScatterFlat": ([x, idx], pt.inc_subtensor(x[idx], 1.0)), "Range": ([x], pt.arange(x.shape[0]))}
    lifted = set(ptonnx.lift(ptonnx.api.function_graph([x, idx], [out for _, out in programs.values()])).op_counts())
    family = {name for name, s in ptonnx.ir.all_schemas().items() if s.family in ("indexing", "creation")}
    assert family - lifted == set(), "reach these ops from a PyTensor program in this module"
    for op, (inputs, out) in programs.items():
        assert op in ptonnx.lift(ptonnx.api.function_graph(inputs, [out])).op_counts(), op
    assert set(REACHED_BY) == {name for name, s in ptonnx.ir.all_schemas().items() if s.family == "indexing"}
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)


def test_write_through_an_index_of_unknown_length_with_static_updates():
    """The gradient of `a[group_idx]` with the index as data (PyMC's hierarchical models
    under mode="ONNX"): the updates' static length meets an index of unknown length."""
    z, idx, g = pt.dvector("z"), pt.lvector("idx"), pt.dvector("g", shape=(5,))
    outs = [pt.inc_subtensor(z[idx], g), pt.set_subtensor(z[idx], g)]
    check_like_pytensor([z, idx, g], outs, [np.zeros(6), np.array([0, 1, 1, 2, 5]), np.arange(5.0)])
    # an index of another length: PyTensor's ValueError, not an onnxruntime failure
    raised = check_like_pytensor([z, idx, g], outs[:1], [np.zeros(6), np.array([0, 1]), np.arange(5.0)])
    assert isinstance(raised, ValueError)


def test_a_sum_or_product_of_one_term():
    """PyMC's AR(1) log-density builds `add(x)`; fast_run removes it, the plain graph keeps it.
    (-0.0 is left out: PyTensor's Python code sums from +0.0 and gives +0.0; ptonnx keeps x.)"""
    x = pt.dvector("x")
    check_like_pytensor([x], [pt.add(x), pt.mul(x), pt.add(pt.cast(x, "float32"))], [np.array([1.5, 0.0, np.inf, np.nan])])
