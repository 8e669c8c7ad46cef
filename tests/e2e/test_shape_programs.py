"""Hypothesis over shape programs: every shape-family IR op, reached from PyTensor as users write it.

Each program draws arrays (every dtype, size-0 dims, extreme values) whose dims
are static or unknown to PyTensor at random, builds a PyTensor graph, and is
compared with PyTensor twice: compiled from the plain graph, and from the graph
PyTensor's own rewrites make in the ONNX mode (where Shape_i, Alloc and
MakeVector come in), both at every onnxruntime level.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import attrs
import hypothesis.extra.numpy as hnp
import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptonnx
from tests.conftest import REFERENCE_MODE, assert_matches, check_onnx_matches_pytensor
from tests.e2e.test_op_properties import ALL, NUMERIC, _elements


@attrs.frozen
class Program:
    #: draw(st draw) -> (list of (array, static shape), build(*variables) -> outputs)
    draw: Callable
    #: the IR ops the plain graph must lift to (at least one of them)
    ops: tuple[str, ...]
    #: the ops appear only when a dim is unknown (static ones fold to constants)
    dynamic_only: bool = False


@st.composite
def arrays(draw, dtypes=ALL, min_ndim=0, max_ndim=3, shape=None, domain="any"):
    """(array, static shape): each dim static or unknown to PyTensor at random."""
    dtype = draw(st.sampled_from(dtypes))
    if shape is None:
        ndim = draw(st.integers(min_ndim, max_ndim))
        shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    array = draw(hnp.arrays(dtype, shape, elements=_elements(dtype, domain)))
    static = tuple(d if draw(st.booleans()) else None for d in shape)
    return array, static


def _reshape(draw):
    x, static = draw(arrays(min_ndim=1))
    kind = draw(st.sampled_from(["keep_first", "flat", "literal", "computed"]))

    def build(v):
        if kind == "keep_first":
            return v.reshape((v.shape[0], -1)) if x.shape[0] else v.reshape((v.shape[0], int(np.prod(x.shape[1:]))))
        if kind == "flat":
            return v.reshape((-1,)) if x.size else v.reshape((0,))
        if kind == "literal":
            return v.reshape(x.shape[::-1]) if x.ndim else v.reshape((1, 1))
        return v.reshape((v.shape[-1], *[v.shape[i] for i in range(v.ndim - 1)]))

    return [(x, static)], build


def _expand(draw):
    x, static = draw(arrays(max_ndim=2))
    n = draw(st.integers(0, 3))

    kinds = ["alloc", "broadcast_to", "zeros_like"] + (["second"] if x.ndim else [])

    def build(v):
        kind = draw(st.sampled_from(kinds))
        if kind == "alloc":
            return pt.alloc(v, n, *[v.shape[i] for i in range(v.ndim)])
        if kind == "broadcast_to":
            return pt.broadcast_to(v, (n, *[v.shape[i] for i in range(v.ndim)]))
        if kind == "zeros_like":
            return pt.zeros_like(v) + pt.ones((n, *x.shape), dtype=v.dtype)
        return pt.fill(v, np.asarray(3, dtype=x.dtype))

    return [(x, static)], build


def _shape(draw):
    x, static = draw(arrays())

    def build(v):
        return [v.shape, *[v.shape[i] for i in range(v.ndim)]] if v.ndim else [v.shape]

    return [(x, static)], build


def _concat(draw):
    x, sx = draw(arrays(dtypes=NUMERIC, min_ndim=1))
    axis = draw(st.integers(0, x.ndim - 1))
    extra = list(x.shape)
    extra[axis] = draw(st.integers(0, 3))
    y, sy = draw(arrays(dtypes=NUMERIC, shape=tuple(extra)))
    return [(x, sx), (y, sy)], lambda a, b: [pt.concatenate([a, b], axis=axis), pt.stack([a, a], axis=0)]


def _split(draw):
    x, static = draw(arrays(min_ndim=1))
    axis = draw(st.integers(0, x.ndim - 1))
    n = x.shape[axis]
    first = draw(st.integers(0, n))

    def build(v):
        size = v.shape[axis]
        return list(pt.split(v, [first, size - first], n_splits=2, axis=axis))

    return [(x, static)], build


def _layout(draw):
    rest = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    x, static = draw(arrays(shape=(1, *rest)))
    static = (1, *static[1:])  # a static size-1 axis to squeeze
    ones = [i for i, d in enumerate(static) if d == 1]
    return [(x, static)], lambda v: [
        v.dimshuffle(*reversed(range(v.ndim))),
        pt.expand_dims(v, (0, v.ndim + 1)),
        pt.squeeze(v, ones),
    ]


@st.composite
def _bound(draw, n: int):
    limits = st.sampled_from([int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)])
    return draw(st.one_of(st.none(), st.integers(-n - 2, n + 2), limits))


def _subtensor(draw):
    x, static = draw(arrays(min_ndim=1))
    index, dynamic = [], []
    for axis, n in enumerate(x.shape):
        kind = draw(st.sampled_from(["all", "slice", "int", "dynamic_slice"] if n else ["all", "slice", "dynamic_slice"]))
        if kind == "int":
            index.append(draw(st.integers(-n, n - 1)))
        elif kind == "all":
            index.append(slice(None))
        else:
            step = draw(st.one_of(st.none(), st.sampled_from([1, 2, 3, -1, -2, -3])))
            index.append(slice(draw(_bound(n)), draw(_bound(n)), step))
            if kind == "dynamic_slice":
                dynamic.append(axis)
    if all(i == slice(None) for i in index):
        index[0] = slice(None, None, -1)
    bounds = [np.int64(b) for axis in dynamic for b in (index[axis].start, index[axis].stop, index[axis].step) if b is not None]
    items = [(x, static)] + [(b, ()) for b in bounds]

    def build(v, *scalars):
        full = list(index)
        it = iter(scalars)
        for axis in dynamic:
            s = full[axis]
            full[axis] = slice(*(None if b is None else next(it) for b in (s.start, s.stop, s.step)))
        return v[tuple(full)]

    return items, build


PROGRAMS: dict[str, Program] = {
    "Subtensor": Program(_subtensor, ("Slice", "Gather")),
    "Reshape": Program(_reshape, ("Reshape",)),
    "Expand": Program(_expand, ("Expand",)),
    "Shape": Program(_shape, ("Shape",), dynamic_only=True),
    "Concat": Program(_concat, ("Concat",)),
    "Split": Program(_split, ("Split",)),
    "Transpose": Program(_layout, ("Transpose",)),
    "Unsqueeze": Program(_layout, ("Unsqueeze",)),
    "Squeeze": Program(_layout, ("Squeeze",)),
}


def check_program(items, build, ops=()):
    variables = [pt.tensor(f"in{k}", dtype=a.dtype.name, shape=static) for k, (a, static) in enumerate(items)]
    values = [a for a, _ in items]
    outs = build(*variables)
    outs = outs if isinstance(outs, list) else [outs]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        check_onnx_matches_pytensor(variables, outs, values)
        rewritten = pytensor.function(variables, outs, mode=ptonnx.mode.onnx_mode())
        expected = pytensor.function(variables, outs, mode=REFERENCE_MODE)(*values)
        assert_matches(ptonnx.compile(rewritten), values, expected)
    if ops:
        lifted = set(ptonnx.lift(ptonnx.api.function_graph(variables, outs)).op_counts())
        assert lifted & set(ops), f"lifted to {sorted(lifted)}, none of {ops}"


@pytest.mark.parametrize("op", sorted(PROGRAMS))
def test_program_matches_pytensor(op):
    program = PROGRAMS[op]

    @given(st.data())
    def check(data):
        items, build = program.draw(data.draw)
        dynamic = any(d is None for _, static in items for d in static)
        check_program(items, build, program.ops if dynamic or not program.dynamic_only else ())

    check()


def test_every_shape_op_has_a_program():
    ops = {name for name, s in ptonnx.ir.all_schemas().items() if s.family == "shape"}  # indexing: test_indexing.py
    tested = {op for program in PROGRAMS.values() for op in program.ops}
    assert ops - tested == set(), "add a Program for these ops"
