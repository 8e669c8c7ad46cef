"""lifting/reduction.py: CAReduce (Sum, Prod, Max, Min, All, Any, ProdWithoutZeros; acc_dtype and
dtype as Casts; Max/Min of an empty slice refused as NumPy) and Argmax (over several axes too)."""

from __future__ import annotations

import numpy as np
import pytensor.scalar as ps
import pytensor.tensor as pt
import pytensor.tensor.math as ptm
import pytest
from pytensor.tensor.elemwise import CAReduce
from pytensor.tensor.math import ProdWithoutZeros

from ptonnx.errors import UnsupportedOpError
from tests.lifting.helpers import check_lift, ints_at_limits, lifted, ops, raises_check

CUBE = np.arange(24.0).reshape(2, 3, 4) - 11.5
CUBE[0, 0, 0], CUBE[0, 1, 1], CUBE[1, 2, 3], CUBE[1, 0, 2] = np.nan, -0.0, np.inf, 0.0
FINITE = np.where(np.isfinite(CUBE), CUBE, 1e300)
EMPTY = [np.zeros((0, 3, 4)), np.zeros((2, 0, 4)), np.zeros((2, 3, 0))]



def _min(x, axis=None):
    """PyTensor's own Min (`pt.min` builds -max(-x))."""
    if axis is None:
        axis = tuple(range(x.type.ndim))
    return ptm.Min(axis=tuple(np.atleast_1d(axis).tolist()))(x)


REDUCERS = {"Sum": pt.sum, "Prod": pt.prod, "Max": pt.max, "Min": _min, "All": pt.all, "Any": pt.any}

@pytest.mark.parametrize("axis", [None, 0, (0, 2), -1, ()])
@pytest.mark.parametrize("name", sorted(REDUCERS))
def test_float_reductions(name, axis):
    x = pt.dtensor3("x")
    y = REDUCERS[name](x, axis=axis)
    values = [CUBE, FINITE, np.full((2, 3, 4), -0.0)]
    if name == "Sum" and axis == ():  # CAReduce.perform gives +0.0 for -0.0 (docs/numerics.md, Where PyTensor is wrong)
        values = [v + 0.0 for v in values]
    g = check_lift([x], [y], *([v] for v in values), *([e] for e in EMPTY))
    expected = {"Sum": "ReduceSum", "Prod": "ReduceProd", "Max": "ReduceMax", "Min": "ReduceMin", "All": "ReduceAll",
                "Any": "ReduceAny"}[name]
    assert (expected in ops(g)) == (axis != ())


@pytest.mark.parametrize("dtype", ["int8", "uint64", "bool"])
@pytest.mark.parametrize("name", sorted(REDUCERS))
def test_integer_and_bool_reductions(name, dtype):
    """Sums and products of small integers accumulate in a wider dtype (PyTensor's acc_dtype)."""
    x = pt.matrix("x", dtype=dtype)
    values = (np.array([[0, 1], [1, 1], [1, 0]], bool) if dtype == "bool"
              else np.resize(ints_at_limits(dtype), (4, 2)))
    g = check_lift([x], [REDUCERS[name](x, axis=0), REDUCERS[name](x)], [values], [values[:0]])
    assert g.outputs[1].dtype == REDUCERS[name](x).dtype


def test_acc_dtype_and_dtype_are_casts():
    x = pt.bvector("x")
    y = pt.sum(x, dtype="int8", acc_dtype="int64")
    z = pt.prod(x, dtype="float32")
    values = np.array([127, 127, -128, 5], np.int8)
    g = check_lift([x], [y, z], [values], [values[:0]])
    assert sorted(n.attrs["to"] for n in g if n.op == "Cast") == ["float32", "int64", "int8"]
    assert [o.producer.op for o in g.outputs] == ["Cast", "Cast"]


def test_max_and_min_of_an_empty_slice_fail_as_numpy():
    x = pt.dmatrix("x")
    g = check_lift([x], [pt.max(x, axis=0)], [np.ones((2, 3))], [np.ones((0, 3))], [np.ones((3, 0))])
    raises_check(g, [np.ones((0, 3))], ValueError, "zero-size array to reduction operation maximum")


def test_a_static_nonempty_axis_needs_no_check():
    x = pt.tensor("x", shape=(2, None))
    g = check_lift([x], [pt.min(x, axis=0)], [np.array([[np.nan, 1.0], [-0.0, 0.0]])])
    assert "Check" not in ops(g)


@pytest.mark.parametrize("axis", [0, 1, None])
def test_prod_without_zeros(axis):
    """The product of the nonzero elements; 0 where all are zero (the gradient of prod builds it)."""
    x = pt.dmatrix("x")
    y = ProdWithoutZeros(axis=None if axis is None else (axis,))(x)
    values = np.array([[0.0, 2.0, -0.0], [0.0, -3.0, np.inf], [0.0, 0.0, np.nan]])
    g = check_lift([x], [y], [values], [np.zeros((2, 3))], [np.zeros((0, 3))])
    assert "Where" in ops(g)


def test_a_reduction_of_another_scalar_op_is_refused_by_name():
    x = pt.bmatrix("x")
    y = CAReduce(ps.xor, axis=(0,))(x)
    y.name = "parity"
    with pytest.raises(UnsupportedOpError, match=r"(?s)CAReduce\{XOR.*producing parity.*Supported CAReduce scalar ops: .*Add"):
        lifted([x], [y])


@pytest.mark.parametrize("axis", [None, 0, 2, (0, 2), (1, 2), ()])
def test_argmax(axis):
    """Over several axes: the kept axes first, the reduced ones flattened (PyTensor's perform)."""
    x = pt.dtensor3("x")
    y = pt.argmax(x, axis=axis)
    ties = np.zeros((2, 3, 4))
    g = check_lift([x], [y], [CUBE], [FINITE], [ties], [np.full((2, 3, 4), np.nan)], *([e] for e in EMPTY))
    assert ("ArgMax" in ops(g)) == (axis != ())


def test_argmax_of_integers_and_argmin():
    x = pt.matrix("x", dtype="uint64")
    values = np.resize(ints_at_limits("uint64"), (2, 4))
    check_lift([x], [pt.argmax(x, axis=1), pt.argmin(x, axis=0)], [values])


def test_argmax_of_an_empty_axis_fails_as_pytensor():
    x = pt.dmatrix("x")
    g = lifted([x], [pt.argmax(x, axis=1)])
    raises_check(g, [np.ones((2, 0))], ValueError, "attempt to get argmax of an empty sequence")


def test_a_sum_over_no_axes_is_its_input_as_pytensors_c_code():
    x = pt.dvector("x")
    g = lifted([x], [pt.sum(x, axis=())])
    assert g.outputs[0] is g.inputs[0], "CAReduce.perform's +0.0: docs/numerics.md, Where PyTensor is wrong"
