"""lifting/creation.py: ARange (constant or computed bounds), Eye, ExtractDiag."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

from ptonnx.errors import LiftingError
from tests.lifting.helpers import check_lift, lifted, ops


def test_arange_of_computed_integer_bounds_is_a_range():
    a, b, s = pt.lscalar("a"), pt.lscalar("b"), pt.lscalar("s")
    cases = [(1, 8, 2), (8, 1, -3), (-3, 4, 1), (5, 5, 1), (0, 5, -1), (np.iinfo(np.int64).max - 3, np.iinfo(np.int64).max, 1)]
    g = check_lift([a, b, s], [pt.arange(a, b, s)], *([np.int64(v) for v in c] for c in cases))
    assert ops(g) == ["Range"]


def test_arange_of_float_bounds():
    a, b, s = pt.dscalar("a"), pt.dscalar("b"), pt.dscalar("s")
    cases = [(0.5, 2.6, 0.5), (1.0, -1.0, -0.25), (0.0, 1.0, 0.1), (3.0, 3.0, 1.0), (-0.0, 1e-300, 5e-301)]
    g = check_lift([a, b, s], [pt.arange(a, b, s)], *([np.float64(v) for v in c] for c in cases))
    assert ops(g) == ["Range"] and g.outputs[0].dtype == "float64"


def test_arange_of_constant_bounds_is_a_constant_even_float_into_int():
    """NumPy steps `arange(0.5, 2.6, 0.5, dtype=int)` in floats then casts: a constant keeps that."""
    g = check_lift([], [pt.arange(0.5, 2.6, 0.5, dtype="int64"), pt.arange(3, dtype="uint8")], [])
    assert ops(g) == [] and all(o.const is not None for o in g.outputs)


def test_arange_of_computed_float_bounds_into_an_integer_dtype_is_refused():
    f = pt.dscalar("f")
    y = pt.arange(f, 5.0, 0.5, dtype="int64")
    with pytest.raises(LiftingError, match=r"arange with float bounds into int64 .*ARange.*cast the bounds"):
        lifted([f], [y])


@pytest.mark.parametrize("dtype", ["float64", "int8", "bool"])
def test_eye(dtype):
    n, m, k = pt.lscalar("n"), pt.lscalar("m"), pt.lscalar("k")
    cases = [(3, 4, 1), (3, 2, -1), (0, 3, 0), (2, 2, 5), (4, 4, -4), (1, 0, 0)]
    g = check_lift([n, m, k], [pt.eye(n, m, k, dtype=dtype)], *([np.int64(v) for v in c] for c in cases))
    assert ops(g)[-1] == ("Equal" if dtype == "bool" else "Cast")


@pytest.mark.parametrize(("offset", "axis1", "axis2"), [(0, 0, 1), (1, 0, 2), (-1, 2, 0), (2, 1, 2), (-5, 0, 1), (0, -1, -2)])
def test_extract_diag(offset, axis1, axis2):
    x = pt.tensor3("x")
    cube = np.arange(24.0).reshape(2, 3, 4)
    cube[0, 0, 0], cube[1, 1, 1] = np.nan, -0.0
    g = check_lift([x], [x.diagonal(offset, axis1, axis2)], [cube], [np.zeros((0, 3, 4))], [np.zeros((3, 0, 2))])
    assert "Gather" in ops(g)


def test_extract_diag_of_a_static_matrix():
    x = pt.tensor("x", dtype="int32", shape=(3, 5))
    data = np.arange(15, dtype=np.int32).reshape(3, 5)
    data[1, 1] = np.iinfo(np.int32).min
    check_lift([x], [x.diagonal(), x.diagonal(2), x.diagonal(-2)], [data])
