"""lifting/pad.py: pad's reflect and symmetric modes (even reflection) as one Gather per axis of
mirrored indices, computed pad widths included; every other mode is PyTensor's own Pad graph
(an OpFromGraph, inlined); extending an empty axis by reflection is NumPy's ValueError."""

from __future__ import annotations

import functools

import numpy as np
import pytensor.tensor as pt
import pytest

from ptonnx import ir
from ptonnx.testing import assert_same
from tests.lifting.helpers import check_lift, lifted, no_c_compiler, ops, raises_check

M = np.arange(12.0).reshape(3, 4) - 5.5
M[0, 0], M[1, 1], M[2, 3] = np.nan, -0.0, np.inf

@pytest.fixture(autouse=True)
def _no_c_compiler():
    """Building a Pad graph constant-folds with C ops (3 C modules on a fresh machine): without C here."""
    with no_c_compiler():
        yield


@functools.cache
def _mirror(mode):
    """x padded by widths given at run time (building a mirror pad, a Scan in PyTensor, takes 0.2 s)."""
    x, w = pt.dmatrix("x"), pt.tensor("w", dtype="int64", shape=(2, 2))
    return x, w, pt.pad(x, w, mode=mode)


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_mirror_modes_are_one_gather_per_axis(mode):
    x, w, y = _mirror(mode)
    cases = [[M, np.array([[1, 2], [3, 0]])], [M, np.array([[7, 5], [9, 10]])], [M[:2], np.array([[2, 2], [0, 1]])],
             [M[:, :1], np.array([[0, 0], [0, 0]])], [np.zeros((0, 4)), np.array([[1, 0], [0, 0]])]]
    g = check_lift([x, w], [y], *cases)
    assert ops(g).count("Gather") >= 2 and "Loop" not in ops(g)
    raises_check(g, [np.zeros((0, 4)), np.array([[1, 0], [0, 0]])], ValueError, "can't extend an empty axis 0")


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_what_pytensor_gets_wrong_is_padded_as_numpy(mode):
    x, w, y = _mirror(mode)
    g = lifted([x, w], [y])
    for data, widths, bug in [(M[:1], [[2, 2], [0, 1]], "reflect pad of an axis of size 1"),
                              (M[:, :1], [[2, 2], [0, 1]], "reflect pad of an axis of size 1"),
                              (np.zeros((0, 4)), [[0, 0], [1, 1]], "mirror pad of an empty array along its other axis")]:
        [got] = ir.interpret(g, data, np.array(widths))
        assert_same(got, np.pad(data, widths, mode=mode), f"{bug}: docs/numerics.md, Where PyTensor is wrong")


def test_a_pad_width_for_every_axis_at_once():
    """A scalar width, broadcast as NumPy's pad_width is."""
    x = pt.dtensor3("x")
    y = pt.pad(x, 2, mode="symmetric")
    check_lift([x], [y], [np.arange(24.0).reshape(2, 3, 4)], [np.ones((1, 1, 1))])


@pytest.mark.parametrize(("mode", "kwargs"), [
    ("constant", dict(constant_values=2.5)), ("edge", {}), ("wrap", {}), ("linear_ramp", dict(end_values=2.0)),
    ("maximum", {}), ("minimum", {}), ("mean", {}),
])
def test_other_modes_are_pytensors_own_graph(mode, kwargs):
    """(PyTensor has no odd reflection: NotImplementedError.)"""
    x = pt.dmatrix("x")
    y = pt.pad(x, ((1, 2), (0, 3)), mode=mode, **kwargs)
    finite = np.where(np.isfinite(M), M, 1.5)
    check_lift([x], [y], [finite], [M if mode in ("constant", "edge", "wrap") else finite * 2])
