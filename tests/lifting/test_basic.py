"""lifting/basic.py: DeepCopyOp, ViewOp, TensorFromScalar and ScalarFromTensor forward their input."""

from __future__ import annotations

import numpy as np
import pytensor.scalar as ps
import pytensor.tensor as pt
from pytensor.compile.ops import deep_copy_op, view_op
from pytensor.tensor.basic import scalar_from_tensor, tensor_from_scalar

from tests.lifting.helpers import check_lift, ops


def test_deep_copy_and_view_are_their_input():
    x = pt.tensor("x", dtype="float32", shape=(None, 2))
    values = np.array([[-0.0, np.nan], [np.inf, 1e-45]], np.float32)
    g = check_lift([x], [deep_copy_op(x), view_op(x)], [values], [np.zeros((0, 2), np.float32)])
    assert ops(g) == [] and g.outputs[0] is g.inputs[0] and g.outputs[1] is g.inputs[0]


def test_tensor_from_scalar_and_back():
    """A 0-d tensor through the scalar world (ScalarFromTensor, a ScalarOp, TensorFromScalar)."""
    x = pt.dscalar("x")
    s = scalar_from_tensor(x)
    y = tensor_from_scalar(s * s)
    g = check_lift([x], [y], *([np.float64(v)] for v in (-0.0, 3.0, np.nan, -np.inf, 1e200)))
    assert ops(g) == ["Mul"]


def test_a_scalar_input_is_a_0d_value():
    s = ps.int16("s")
    g = check_lift([s], [tensor_from_scalar(s)], [np.int16(-32768)], [np.int16(32767)])
    assert ops(g) == [] and g.inputs[0].type.shape == () and g.inputs[0].dtype == "int16"
