"""Reductions (Sum, Prod, Max, Min, All, Any, Argmax/argmin, mean) over none, some or
all axes, every dtype, extreme values, size-0 and unknown dims, against PyTensor.

A float sum or product depends on the order of its terms, and PyTensor's own
backends (Python, C, Numba) use different orders; so float Sum/Prod results are
held to the bound any order meets: NaN where a NaN or opposite infinities make
it, the infinity where one decides it, and otherwise within n·eps·Σ|x| of
PyTensor's number. Where partial results can overflow or underflow, only what
the order cannot change (NaN, the sign) is compared. Everything else is exact
(integers wrap as NumPy's), except the sign of a zero that Max/Min picks among
+0 and -0, which NumPy leaves to the CPU's vector instructions.
"""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptonnx
from tests.conftest import assert_same, check_like_pytensor, rewritten_graph
from tests.e2e.test_op_properties import ALL
from tests.e2e.test_shape_programs import arrays

OPS = ("sum", "prod", "max", "min", "all", "any", "argmax", "argmin", "mean")


def _slices(x: np.ndarray, axes) -> np.ndarray:
    """x as (kept..., K): each row the elements one output reduces."""
    axes = tuple(range(x.ndim)) if axes is None else tuple(a % x.ndim for a in axes)
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, kept + list(axes))
    return moved.reshape(moved.shape[: len(kept)] + (int(np.prod([x.shape[a] for a in axes])),))


def order_free(op: str, x: np.ndarray, axes, keepdims: bool):
    """compare(actual, expected, context) for a float sum/product: what no order can change."""
    acc = np.float64 if x.dtype != np.float64 else x.dtype

    def compare(actual, expected, context):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, context
        sliced = _slices(x.astype(acc), axes)
        rows = sliced.reshape(expected.size, sliced.shape[-1])
        eps = np.finfo(expected.dtype).eps
        for a, e, row in zip(actual.ravel(), expected.ravel(), rows, strict=True):
            n = max(len(row), 1)
            if np.isnan(e):
                assert np.isnan(a), f"{context}: {a} for NaN; terms {row}"
                continue
            with np.errstate(all="ignore"):
                if op == "prod":
                    big = np.prod(np.maximum(np.abs(row), 1))
                    nonzero = np.abs(row[row != 0])
                    small = np.prod(np.minimum(nonzero, 1)) if nonzero.size else 1.0
                    safe = np.isfinite(big) and small >= np.finfo(expected.dtype).tiny
                    bound = 2 * n * eps * abs(e)
                else:
                    total = np.sum(np.abs(row))
                    safe = np.isfinite(total) or (np.isinf(row).any() and np.isinf(e))
                    bound = 2 * n * eps * total / (n if op == "mean" else 1) + np.finfo(expected.dtype).tiny
            if not safe:
                if e != 0 and not np.isnan(a):
                    assert np.sign(a) == np.sign(e) or a == 0, f"{context}: sign of {a} vs {e}"
                continue
            if np.isinf(e) or e == 0 and op == "prod":
                assert a == e and np.signbit(a) == np.signbit(e), f"{context}: {a} vs {e}; terms {row}"
                continue
            assert abs(float(a) - float(e)) <= bound, f"{context}: {a} vs {e} (bound {bound}); terms {row}"

    return compare


def ties_of_zero(x: np.ndarray, axes):
    """compare for Max/Min: exact, but a zero result may have either sign where the slice has both."""

    def compare(actual, expected, context):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, context
        np.testing.assert_array_equal(actual, expected, err_msg=context)
        if expected.dtype.kind == "f" and x.size:
            sliced = _slices(x, axes)
            rows = sliced.reshape(expected.size, sliced.shape[-1])
            both = np.array([((r == 0) & np.signbit(r)).any() and ((r == 0) & ~np.signbit(r)).any() for r in rows])
            zero = (expected.ravel() == 0) & ~both
            np.testing.assert_array_equal(np.signbit(actual.ravel()[zero]), np.signbit(expected.ravel()[zero]), err_msg=context)

    return compare


@st.composite
def reductions(draw):
    x, static = draw(arrays(ALL, max_ndim=3))
    op = draw(st.sampled_from(OPS))
    axes = draw(st.one_of(st.none(), st.lists(st.integers(-x.ndim, x.ndim - 1), unique_by=lambda a: a % x.ndim).map(tuple)
                          if x.ndim else st.just(())))
    if op.startswith("arg") and axes == ():
        axes = None
    keepdims = draw(st.booleans())
    return x, static, op, axes, keepdims


def _comparison(op, x, axes, keepdims):
    if op in ("sum", "prod", "mean") and (x.dtype.kind == "f" or op == "mean"):
        return order_free(op, x, axes, keepdims)
    if op in ("max", "min"):
        return ties_of_zero(x, axes)
    return assert_same


@given(reductions())
def test_reduction_matches_pytensor(case):
    x, static, op, axes, keepdims = case
    if op == "mean" and x.dtype.kind not in "fiu":
        op = "sum"
    v = pt.tensor("x", dtype=x.dtype.name, shape=static)
    out = getattr(pt, op)(v, axis=axes, keepdims=keepdims)
    check_like_pytensor([v], [out], [x], compare=_comparison(op, x, axes, keepdims))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint64", "bool"])
def test_sum_dtype_and_acc_dtype(dtype):
    """PyTensor's `dtype` and `acc_dtype`: accumulate wide, return narrow (casts around the IR reduction)."""
    x = pt.matrix("x", dtype="float32" if dtype.startswith("float") else "int8")
    values = np.array([[1e30, 3e38, -3e38], [1, 2, 3]], dtype=x.dtype) if x.dtype == "float32" else \
        np.array([[127, 127, -128], [1, -2, 3]], dtype="int8")
    outs = [pt.sum(x, axis=1, dtype=dtype), pt.sum(x, axis=1, acc_dtype="float64" if dtype.startswith("float") else "int64"),
            pt.prod(x, axis=0, dtype=dtype)]
    check_like_pytensor([x], outs, [values], compare=lambda a, e, c: np.testing.assert_allclose(a, e, rtol=1e-6, err_msg=c))


def test_integer_sums_and_products_wrap_exactly_as_numpy():
    """onnxruntime 1.32's integer ReduceSum/ReduceProd go through double: 2**62 + 1 loses the 1."""
    x = pt.matrix("x", dtype="int64")
    values = np.array([[2**62, 2**62, 2**62, 1], [2**53 + 1, 2, 3, 5]], dtype=np.int64)
    check_like_pytensor([x], [x.sum(axis=1), x.prod(axis=1), x.sum(), x.prod(axis=0)], [values])
    ints = ptonnx.compile_function([x], [x.prod(axis=1)])
    made_by = {o: n.op_type for n in ints.model.graph.node for o in n.output}
    reduced = {made_by.get(n.input[0]) for n in ints.model.graph.node if n.op_type == "ReduceProd"}
    assert reduced <= {"Shape"}, "integer products go through the Mul tree (only sizes through ReduceProd)"


@pytest.mark.parametrize("fn", ["max", "min", "argmax", "argmin"])
def test_nan_propagates_and_argmax_points_at_the_first_nan(fn):
    x = pt.matrix("x")
    values = np.array([[1.0, np.nan, 3.0, np.nan], [-np.inf, -np.inf, -0.0, 0.0], [np.inf, 5e-324, np.nan, np.inf]])
    for axis in (1, 0, None):
        compare = ties_of_zero(values, axis if axis is None else (axis,)) if fn in ("max", "min") else assert_same
        check_like_pytensor([x], [getattr(pt, fn)(x, axis=axis)], [values], compare=compare)


@pytest.mark.parametrize("fn", ["max", "min", "argmax"])
def test_reductions_without_identity_refuse_an_empty_slice(fn):
    x = pt.matrix("x")
    raised = check_like_pytensor([x], [getattr(pt, fn)(x, axis=1)], [np.zeros((3, 0))])
    assert isinstance(raised, ValueError)
    assert check_like_pytensor([x], [getattr(pt, fn)(x, axis=0)], [np.zeros((3, 0))]) is None  # 0 slices: fine


def test_prod_without_zeros_from_the_gradient_of_prod():
    x = pt.vector("x")
    cost = pt.prod(x)
    values = [np.array([2.0, 0.0, 3.0]), np.array([0.0, 0.0]), np.array([1.5, -2.0, 4.0]), np.zeros(0)]
    for value in values:
        check_like_pytensor([x], [cost, pt.grad(cost, x)], [value])


#: each reduction op -> the tests of this module that compare programs reaching it with PyTensor
#: (read by tests/ir/test_registry.py; test_every_reduction_op_is_reached_from_pytensor lifts one of each)
REACHED_BY = {
    "ReduceSum": ("test_reduction_matches_pytensor", "test_integer_sums_and_products_wrap_exactly_as_numpy"),
    "ReduceProd": ("test_reduction_matches_pytensor", "test_integer_sums_and_products_wrap_exactly_as_numpy"),
    "ReduceMax": ("test_reduction_matches_pytensor", "test_nan_propagates_and_argmax_points_at_the_first_nan"),
    "ReduceMin": ("test_reduction_matches_pytensor", "test_nan_propagates_and_argmax_points_at_the_first_nan"),
    "ReduceAll": ("test_reduction_matches_pytensor",),
    "ReduceAny": ("test_reduction_matches_pytensor",),
    "ArgMax": ("test_reduction_matches_pytensor", "test_nan_propagates_and_argmax_points_at_the_first_nan"),
}
#: the function of OPS (what test_reduction_matches_pytensor draws) whose program reaches each op
REACHED_WITH = {"ReduceSum": "sum", "ReduceProd": "prod", "ReduceMax": "max", "ReduceMin": "min", "ReduceAll": "all",
                "ReduceAny": "any", "ArgMax": "argmax"}


def test_every_reduction_op_is_reached_from_pytensor():
    x, b = pt.matrix("x"), pt.matrix("b", dtype="bool")
    outs = [getattr(pt, op)(x, axis=0) for op in OPS] + [b.all(axis=0), b.any(axis=0)]
    rewritten = pytensor.function([x, b], outs, mode=ptonnx.mode.onnx_mode()).maker.fgraph  # min(x) is -max(-x) before
    lifted = set(ptonnx.lift(ptonnx.api.function_graph([x, b], outs)).op_counts()) | set(ptonnx.lift(rewritten).op_counts())
    family = {name for name, s in ptonnx.ir.all_schemas().items() if s.family == "reduction"}
    assert family - lifted == set(), "reach these ops from a PyTensor program in this module"
    assert set(REACHED_BY) == set(REACHED_WITH) == family and set(REACHED_WITH.values()) <= set(OPS)
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)
    for op, fn in REACHED_WITH.items():  # each program alone, plain or as the ONNX mode rewrites it
        v = b if fn in ("all", "any") else x
        out = getattr(pt, fn)(v, axis=0)
        plain = set(ptonnx.lift(ptonnx.api.function_graph([v], [out])).op_counts())
        assert op in plain or op in ptonnx.lift(rewritten_graph([v], [out])).op_counts(), (op, fn)
