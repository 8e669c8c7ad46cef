"""Creation and layout programs users write, against PyTensor: arange, eye, tri/tril/triu,
diagonal, diag, repeat, tile, roll, flatten, stack, swapaxes, moveaxis, pad (the modes
that do not need Scan), softmax and log_softmax over several axes with unknown dims,
and OpFromGraph (inlined). Every dtype where PyTensor allows it, extreme values,
size-0 and unknown dims, the plain and ONNX-mode graphs, every onnxruntime level.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pytensor.compile.builders import OpFromGraph

import ptonnx
from tests.conftest import check_like_pytensor
from tests.e2e.test_op_properties import ALL, FLOATS, NUMERIC
from tests.e2e.test_shape_programs import arrays

#: name -> (dtypes, min_ndim, build(v, x) -> outputs); x is the drawn array
LAYOUT = {
    "diagonal": (ALL, 2, lambda v, x: [pt.diagonal(v), pt.diagonal(v, 1), pt.diagonal(v, -1, v.ndim - 1, 0)]),
    "diag": (ALL, 1, lambda v, x: [pt.diag(v.flatten())]),
    "tril_triu": (NUMERIC, 2, lambda v, x: [pt.tril(v), pt.triu(v, 1), pt.tril(v, -1)]),
    "repeat": (ALL, 1, lambda v, x: [pt.repeat(v, 2, axis=0), pt.repeat(v, 3, axis=-1)]),
    "tile": (ALL, 1, lambda v, x: [pt.tile(v, (2,) * v.ndim), pt.tile(v, (1, 2) + (1,) * (v.ndim - 1))]),
    "roll": (ALL, 1, lambda v, x: [pt.roll(v, 1, axis=0), pt.roll(v, -2), pt.roll(v, 5, axis=-1)]),
    "flatten_stack": (ALL, 1, lambda v, x: [v.flatten(), pt.stack([v, v], axis=-1), pt.swapaxes(v, 0, -1),
                                             pt.moveaxis(v, 0, -1)]),
    "pad": (ALL, 1, lambda v, x: [pt.pad(v, 1), pt.pad(v, (1, 2), mode="edge") if x.size else pt.pad(v, 0),
                                   pt.pad(v, 2, mode="constant", constant_values=3)]),
    "softmax": (FLOATS, 2, lambda v, x: [pt.special.softmax(v, axis=None), pt.special.softmax(v, axis=0),
                                          pt.special.log_softmax(v, axis=-1)]),
}


@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_layout_program_matches_pytensor(name):
    dtypes, min_ndim, build = LAYOUT[name]

    @given(arrays(dtypes, min_ndim=min_ndim, max_ndim=3))
    def check(item):
        x, static = item
        if name == "softmax" and x.size == 0:
            return  # max over an empty axis: NumPy raises, PyTensor's Numba backend gives -inf; see test_reductions
        v = pt.tensor("x", dtype=x.dtype.name, shape=static)
        check_like_pytensor([v], build(v, x), [x])

    if name == "pad":  # PyTensor's Pad is an OpFromGraph its Python reference compiles for every example (~1 s each)
        check = settings(max_examples=min(8, settings().max_examples))(check)
    check()


#: each creation op -> the tests of this module that compare programs reaching it with PyTensor
#: (read by tests/ir/test_registry.py; checked by test_every_creation_op_is_reached_from_pytensor)
REACHED_BY = {"Range": ("test_eye_arange_tri_with_computed_sizes",)}


def test_every_creation_op_is_reached_from_pytensor():
    n, k = pt.lscalar("n"), pt.lscalar("k")
    programs = {"Range": pt.arange(k, n)}  # as test_eye_arange_tri_with_computed_sizes builds it
    for op, out in programs.items():
        assert op in ptonnx.lift(ptonnx.api.function_graph([n, k], [out])).op_counts(), op
    assert set(REACHED_BY) == set(programs) == {name for name, s in ptonnx.ir.all_schemas().items() if s.family == "creation"}
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)


@given(st.integers(0, 4), st.integers(0, 4), st.integers(-5, 5), st.sampled_from(["float64", "int8", "bool", "float32"]))
def test_eye_arange_tri_with_computed_sizes(n, m, k, dtype):
    vn, vm, vk = pt.lscalar("n"), pt.lscalar("m"), pt.lscalar("k")
    outs = [pt.eye(vn, vm, vk, dtype=dtype), pt.tri(vn, vm, vk, dtype=dtype), pt.arange(vk, vn), pt.arange(vn, vk, -2)]
    check_like_pytensor([vn, vm, vk], outs, [np.array(n), np.array(m), np.array(k)])


def test_an_op_from_graph_is_inlined():
    a, b = pt.vector("a"), pt.vector("b")
    inner = OpFromGraph([a, b], [pt.exp(a) * b + a[::-1]])
    x, y = pt.vector("x"), pt.vector("y")
    out = inner(x, y) + inner(y, x)
    check_like_pytensor([x, y], [out, pt.grad(out.sum(), x)], [np.array([1.0, -0.0, np.inf]), np.array([2.0, 3.0, -1.0])])


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
@settings(max_examples=min(6, settings().max_examples))  # PyTensor's reference compiles a Scan per graph (seconds each)
@given(item=arrays(ALL, min_ndim=1, max_ndim=2), data=st.data())
def test_pad_reflect_and_symmetric(mode, item, data):
    """PyTensor builds these with a Scan; ptonnx gathers through NumPy's periodic mirror.
    Axes of size 0 and 1 are compared with NumPy below: PyTensor departs from it there."""
    x, static = item
    assume(min(x.shape) >= 2)
    widths = tuple((data.draw(st.integers(0, 7)), data.draw(st.integers(0, 7))) for _ in x.shape)
    v = pt.tensor("x", dtype=x.dtype.name, shape=static)
    check_like_pytensor([v], [pt.pad(v, widths, mode=mode)], [x])


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_pad_of_short_axes_is_numpys(mode):
    """pytensor 3.0.7 pads [7] by 9 in reflect mode to [7] (NumPy: nineteen 7s) and pads an
    empty axis in symmetric mode (NumPy: ValueError); ptonnx follows NumPy."""
    v = pt.vector("v")
    cm = ptonnx.compile_function([v], [pt.pad(v, 9, mode=mode)])
    np.testing.assert_array_equal(cm(np.array([7.0]))[0], np.pad(np.array([7.0]), 9, mode=mode))
    with pytest.raises(ValueError, match="empty axis"):
        cm(np.zeros(0))


@pytest.mark.parametrize("mode, kwargs", [("maximum", {}), ("minimum", {}), ("mean", {}), ("wrap", {}),
                                          ("linear_ramp", {"end_values": 2.0}), ("maximum", {"stat_length": 1})])
def test_pad_modes_built_from_pytensor_ops(mode, kwargs):
    """PyTensor's own Pad graph for these modes, inlined (median: PyTensor has none)."""
    x = pt.matrix("x")
    values = np.array([[1.0, -2.0, 3.0], [0.5, np.inf, -7.0], [-0.0, 5e-324, 2.0]])
    check_like_pytensor([x], [pt.pad(x, ((1, 2), (2, 1)), mode=mode, **kwargs)], [values])


@pytest.mark.parametrize("spec", ["ij,jk->ik", "ij->ji", "ij,ij->i", "ij->", "ii->i"])
def test_einsum(spec):
    a, b = pt.matrix("a"), pt.matrix("b")
    rng = np.random.default_rng(0)
    if spec == "ii->i":
        check_like_pytensor([a], [pt.einsum(spec, a)], [rng.normal(size=(3, 3))])
    elif spec.count(",") == 0:
        check_like_pytensor([a], [pt.einsum(spec, a)], [rng.normal(size=(3, 4))])
    else:
        other = (4, 2) if spec == "ij,jk->ik" else (3, 4)
        check_like_pytensor([a, b], [pt.einsum(spec, a, b)], [rng.normal(size=(3, 4)), rng.normal(size=other)])
