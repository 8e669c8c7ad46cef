"""lifting/xtensor.py: XTensorFromTensor, TensorFromXTensor and Rename (pytensor.xtensor's
named-dim tensors, as pymc.dims models build them) are the same array: the same IR value."""

from __future__ import annotations

import warnings

import numpy as np
import pytensor.tensor as pt

with warnings.catch_warnings():  # "xtensor module is experimental"
    warnings.simplefilter("ignore", UserWarning)
    import pytensor.xtensor as px
    from pytensor.xtensor.basic import tensor_from_xtensor

from tests.lifting.helpers import check_lift, ops

M = np.array([[0.0, -0.0, np.nan], [np.inf, 5e-324, -1.5]])


def test_a_tensor_through_named_dims_and_back_is_itself():
    x = pt.dmatrix("x")
    named = px.as_xtensor(x, dims=("a", "b"))
    renamed = named.rename(a="c")
    back = tensor_from_xtensor(renamed)
    assert [type(v.owner.op).__name__ for v in (named, renamed, back)] == ["XTensorFromTensor", "Rename", "TensorFromXTensor"]
    g = check_lift([x], [back, back * 2], [M], [np.zeros((0, 3))])
    assert ops(g) == ["Unsqueeze", "Mul"] and g.outputs[0] is g.inputs[0]


def test_an_xtensor_input_is_a_tensor_input():
    xs = px.xtensor("xs", dims=("a", "b"), shape=(None, 3))
    y = tensor_from_xtensor(xs.rename(b="z"))
    g = check_lift([xs], [y], [M])
    assert ops(g) == [] and g.inputs[0].type.shape == ("xs_dim0", 3)
