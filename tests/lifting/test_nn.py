"""lifting/nn.py: the ptonnx.nn Ops (Conv2D, BatchNorm, Pool2D, GlobalPool2D, Resize, SiLU), each
one IR op with its attributes. (Their kernels are shared by the Ops' `perform` and the IR's
semantics, so `interpret` gives PyTensor's numbers exactly.)"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

from ptonnx import nn
from tests.lifting.helpers import check_lift, ops

RNG = np.random.default_rng(0)
IMAGE = RNG.normal(size=(2, 4, 5, 6)).astype(np.float32)
IMAGE[0, 0, 0, :3] = [np.nan, np.inf, -0.0]


def _x():
    return pt.tensor("x", dtype="float32", shape=(None, 4, None, None))


@pytest.mark.parametrize(("stride", "padding", "dilation", "groups", "bias"), [
    (1, 0, 1, 1, False), (2, 1, 1, 2, True), (1, (0, 1, 2, 1), 2, 4, True),
])
def test_conv2d(stride, padding, dilation, groups, bias):
    x = _x()
    w = pt.tensor("w", dtype="float32", shape=(4, 4 // groups, 3, 3))
    b = pt.tensor("b", dtype="float32", shape=(4,)) if bias else None
    y = nn.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    weights = RNG.normal(size=(4, 4 // groups, 3, 3)).astype(np.float32)
    inputs, values = [x, w, *([b] if bias else [])], [IMAGE, weights, *([np.arange(4, dtype=np.float32)] if bias else [])]
    g = check_lift(inputs, [y], values)
    [conv] = [n for n in g if n.op == "Conv"]
    assert conv.attrs["group"] == groups and conv.attrs["strides"] == (stride, stride) and len(conv.inputs) == 2 + bias


def test_batch_norm():
    x = _x()
    params = [pt.tensor(n, dtype="float32", shape=(4,)) for n in ("gamma", "beta", "mean", "var")]
    y = nn.batch_norm(x, *params, eps=1e-3)
    values = [np.array([1.0, -2.0, 0.5, 0.0], np.float32), np.array([0.0, 1.0, -0.0, 3.0], np.float32),
              np.array([0.1, 0.0, -1.0, np.inf], np.float32), np.array([1.0, 0.0, 4.0, 2.0], np.float32)]
    g = check_lift([x, *params], [y], [IMAGE, *values])
    assert ops(g) == ["BatchNorm"] and g.outputs[0].producer.attrs["epsilon"] == pytest.approx(1e-3)


@pytest.mark.parametrize(("build", "ir_op"), [
    (lambda x: nn.max_pool2d(x, 2), "MaxPool"),
    (lambda x: nn.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), "MaxPool"),
    (lambda x: nn.avg_pool2d(x, 2, stride=1, padding=1), "AveragePool"),
    (lambda x: nn.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), "AveragePool"),
    (nn.global_max_pool2d, "GlobalMaxPool"),
    (nn.global_avg_pool2d, "GlobalAveragePool"),
])
def test_pooling(build, ir_op):
    x = _x()
    g = check_lift([x], [build(x)], [IMAGE], [np.abs(IMAGE[:1])])
    assert ops(g) == [ir_op]


@pytest.mark.parametrize("kwargs", [
    dict(scale_factor=2), dict(size=(3, 7)), dict(scale_factor=(2, 1.5), mode="bilinear"),
    dict(size=(8, 4), mode="bilinear", align_corners=True),
])
def test_resize(kwargs):
    x = _x()
    g = check_lift([x], [nn.resize(x, **kwargs)], [IMAGE])
    assert ops(g) == ["Resize"]


def test_silu():
    x = pt.dvector("x")
    g = check_lift([x], [nn.silu(x)], [np.array([0.0, -0.0, 1.0, -745.0, 710.0, np.inf, -np.inf, np.nan, 5e-324])])
    assert ops(g) == ["SiLU"]
