"""pytensor.grad of scalar costs built from slices, gathers, masks, reductions, cumsum,
sort, softmax and shape ops: the gradient graph compiles and matches PyTensor, from
the plain graph and from the ONNX mode's rewritten graph, at every onnxruntime level.
Inputs: random normals, and the extremes (±0, ±inf, NaN, subnormals, huge)."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.conftest import check_like_pytensor
from tests.e2e.test_op_properties import _elements

x = pt.vector("x")
X = pt.matrix("X")
idx = pt.lvector("idx")

#: name -> (inputs, cost)
COSTS = {
    "slices": ([x], (x[1:] * x[:-1]).sum() + (x[::-2] ** 2).sum()),
    "gather": ([x, idx], (x[idx] ** 2).sum() + pt.exp(x[idx[0]])),
    "mask": ([x], (x[x > 0] ** 2).sum()),
    "set_inc": ([x, idx], (pt.set_subtensor(x[idx], 0.0) * x).sum() + pt.inc_subtensor(x[1:], x[:-1]).sum()),
    "reductions": ([X], X.sum(axis=0).prod() + X.max(axis=1).sum() + pt.min(X) + X.mean()),
    "logsumexp": ([X], pt.logsumexp(X, axis=1).sum() + pt.special.log_softmax(X, axis=0).sum()),
    "softmax": ([X], (pt.special.softmax(X, axis=-1) * X).sum()),
    "cumsum_cumprod": ([x], pt.cumsum(x).sum() + pt.cumprod(x)[-1]),
    # stable: NumPy's quicksort orders ties as it likes, and the gradient follows the order
    "sort": ([x], (pt.sort(x, kind="stable") * pt.arange(x.shape[0])).sum()),
    "shapes": ([X], (X.reshape((X.shape[0], -1)) ** 2).sum() / X.shape[0] + pt.sum(X.T[0])),
    "prod_with_zeros": ([x], pt.prod(x)),
}


#: costs with products, compared only where no order of the product over- or underflows
PRODUCTS = ("cumsum_cumprod", "prod_with_zeros", "reductions")


def _inputs(ins, values):
    out = []
    for v in ins:
        if v is idx:
            out.append(np.array([0, -1, 1, 0]) % max(values.shape[0], 1) if values.size else np.zeros(0, np.int64))
        elif v.ndim == 1:
            out.append(values.reshape(-1))
        else:
            out.append(values.reshape(values.shape[0], -1) if values.ndim else values.reshape(1, 1))
    return out


@pytest.mark.parametrize("name", sorted(COSTS))
@given(values=st.one_of(
    st.integers(1, 6).flatmap(lambda n: st.lists(st.floats(-3, 3), min_size=2 * n, max_size=2 * n).map(
        lambda v: np.array(v).reshape(2, -1))),
    st.integers(1, 4).flatmap(lambda n: st.lists(_elements("float64", "any"), min_size=2 * n, max_size=2 * n).map(
        lambda v: np.array(v, dtype="float64").reshape(2, -1))),
))
def test_gradient_matches_pytensor(name, values):
    ins, cost = COSTS[name]
    if name in PRODUCTS:
        # products are computed in another order (onnxruntime's ReduceProd; cumprod's log-depth scan): where
        # partial products overflow or underflow the order decides the result, and the gradient divides by it
        tiny = np.abs(values[values != 0])
        assume(not tiny.size or tiny.min() > 1e-150 and np.prod(np.maximum(tiny, 1)) < 1e150)
    wrt = [v for v in ins if v.dtype.startswith("float")]
    outs = [cost, *pt.grad(cost, wrt)]
    check_like_pytensor(ins, outs, _inputs(ins, values), compare=_close)


def _close(actual, expected, context):
    """Gradients through sums: the summation-order bound, relative to the terms' size."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, context
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=f"NaN: {context}")
    np.testing.assert_array_equal(actual[np.isinf(expected)], expected[np.isinf(expected)], err_msg=f"inf: {context}")
    np.testing.assert_allclose(actual[finite], expected[finite], rtol=1e-9, atol=1e-12, err_msg=context)
