"""CNN ops end to end: PyTensor's evaluation == onnxruntime on the compiled model."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytensor.tensor as pt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pytensor.compile.mode import Mode

import ptonnx
import ptonnx.nn as nn
from ptonnx.api import function_graph
from tests.nn.helpers import compare, compare_compiled
from tests.nn.strategies import conv_params, pool_params

rng = np.random.default_rng(7)


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


def sym(shape, dtype="float32", name="x"):
    return pt.tensor(name, shape=shape, dtype=dtype)


# -- conv ---------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(conv_params(dtypes=("float32",)), st.booleans())
def test_conv2d(p, weights_as_input):
    x = sym(p["x_shape"])
    w_val = randn(*p["w_shape"])
    b_val = randn(p["w_shape"][0]) if p["bias"] else None
    kwargs = dict(stride=p["stride"], padding=p["padding"], dilation=p["dilation"], groups=p["groups"])
    if weights_as_input:
        w = sym(p["w_shape"], name="w")
        b = sym((p["w_shape"][0],), name="b") if p["bias"] else None
        inputs = [x, w] + ([b] if p["bias"] else [])
        arrays = [randn(*p["x_shape"]), w_val] + ([b_val] if p["bias"] else [])
        compare(inputs, nn.conv2d(x, w, b, **kwargs), arrays)
    else:
        compare([x], nn.conv2d(x, w_val, b_val, **kwargs), [randn(*p["x_shape"])])


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(bias=True),
        dict(stride=2, padding=1, bias=True),
        dict(padding=(2, 1)),
        dict(padding=(0, 1, 2, 3)),
        dict(dilation=2, padding=2),
        dict(groups=2, bias=True),
        dict(groups=4, padding=1, depthwise=True),
    ],
    ids=["plain", "bias", "stride-pad", "pad-pair", "pad-asymmetric", "dilation", "groups", "depthwise"],
)
def test_conv2d_cases(kwargs):
    kwargs = dict(kwargs)
    bias, depthwise = kwargs.pop("bias", False), kwargs.pop("depthwise", False)
    groups = kwargs.get("groups", 1)
    w = randn(4 if depthwise else 6, 4 // groups, 3, 3)
    b = randn(w.shape[0]) if bias else None
    x = sym((2, 4, 9, 8))
    cm = compare([x], nn.conv2d(x, w, b, **kwargs), [randn(2, 4, 9, 8)])
    (conv,) = [n for n in cm.model.graph.node if n.op_type == "Conv"]
    assert {a.name: a for a in conv.attribute}["group"].i == groups


def test_conv_bn_silu_chain_with_dynamic_batch_and_size():
    x = sym((None, 3, None, None))
    w, stats = randn(8, 3, 3, 3), [randn(8), randn(8), randn(8), rng.random(8).astype("float32") + 0.5]
    y = nn.silu(nn.batch_norm(nn.conv2d(x, w, stride=2, padding=1), *stats, eps=1e-3))
    compare([x], y, [randn(2, 3, 11, 7)])


@pytest.mark.parametrize("order", ["x*sigmoid(x)", "sigmoid(x)*x"])
@pytest.mark.parametrize("static", [True, False], ids=["static", "unknown-dims"])
def test_user_written_silu_after_batch_norm_fuses(order, static):
    """A user's `bn * pt.sigmoid(bn)` (either order) fuses with the Conv and BatchNorm into one
    FusedConv, with no run-time broadcast check between the two same-shape operands, though
    the conv output's sizes are unknown (they have one shape by construction)."""
    x = sym((2, 3, 11, 7) if static else (None, 3, None, None))
    w, stats = randn(8, 3, 3, 3), [randn(8), randn(8), randn(8), rng.random(8).astype("float32") + 0.5]
    bn = nn.batch_norm(nn.conv2d(x, w, stride=2, padding=1), *stats, eps=1e-3)
    y = bn * pt.sigmoid(bn) if order == "x*sigmoid(x)" else pt.sigmoid(bn) * bn
    image = randn(2, 3, 11, 7)
    image[0, 0, :3, 0] = [np.inf, -np.inf, np.nan]
    cm = compare([x], y, [image])
    assert cm.ir.op_counts() == {"FusedConv": 1}, cm.ir.op_counts()
    assert [n.op_type for n in cm.model.graph.node] == ["Conv", "Sigmoid", "Mul"]  # the README's count
    assert cm.report["fuse_conv_bn_silu"].details == {"x*sigmoid(x)->silu": 1, "conv+bn": 1, "conv+silu": 1}


# -- batch norm, silu ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 3, 5, 4), (7, 3)], ids=["4d", "2d"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("stats_as_inputs", [False, True])
def test_batch_norm(shape, dtype, stats_as_inputs):
    x = sym(shape, dtype)
    values = [randn(3, dtype=dtype), randn(3, dtype=dtype), randn(3, dtype=dtype), (rng.random(3) + 0.1).astype(dtype)]
    if stats_as_inputs:
        stats = [sym((3,), dtype, n) for n in ("gamma", "beta", "mean", "var")]
        compare([x, *stats], nn.batch_norm(x, *stats, eps=1e-3), [randn(*shape, dtype=dtype), *values])
    else:
        compare([x], nn.batch_norm(x, *values), [randn(*shape, dtype=dtype)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_silu(dtype):
    x = sym((3, 17), dtype)
    arr = randn(3, 17, dtype=dtype) * 10
    arr[0, :4] = [0, -100, 100, -30]
    cm = compare([x], nn.silu(x), [arr])
    assert [n.op_type for n in cm.model.graph.node] == ["Sigmoid", "Mul"]


# -- pooling --------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(pool_params(dtypes=("float32",)), st.booleans())
def test_pools(p, static):
    """Static sizes lower without ceil_mode (explicit padding); unknown sizes keep ceil_mode=1."""
    x = sym(p["x_shape"] if static else (None, p["x_shape"][1], None, None))
    common = dict(stride=p["stride"], padding=p["padding"], ceil_mode=p["ceil_mode"])
    outputs = [
        nn.max_pool2d(x, p["kernel"], **common),
        nn.avg_pool2d(x, p["kernel"], count_include_pad=p["count_include_pad"], **common),
    ]
    cm = compare([x], outputs, [randn(*p["x_shape"])])
    if static:
        for node in cm.model.graph.node:
            assert all(a.i == 0 for a in node.attribute if a.name == "ceil_mode")


@pytest.mark.parametrize(
    "hw, kernel, stride, padding, ceil_mode, include_pad",
    [
        ((5, 5), 2, 2, 1, True, True),  # the last window would start in the end padding: dropped
        ((6, 7), 3, 2, 1, True, True),  # ceil-mode overhang past the padding: not counted
        ((6, 7), 3, 2, 1, True, False),
        ((7, 5), (3, 2), (2, 3), (1, 0, 0, 1), True, True),  # one axis gains a window, the other drops one
        ((20, 20), 5, 1, 2, False, True),  # YOLO's SPPF pool
        ((6, 6), 2, None, 0, False, True),
    ],
)
@pytest.mark.parametrize("static", [True, False])
def test_pool_cases(hw, kernel, stride, padding, ceil_mode, include_pad, static):
    shape = (2, 3, *hw)
    x = sym(shape if static else (None, 3, None, None))
    outputs = [
        nn.max_pool2d(x, kernel, stride, padding, ceil_mode),
        nn.avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad=include_pad),
    ]
    compare([x], outputs, [randn(*shape)])


def test_max_pool_float64_runs_in_onnxruntime():
    x = sym((1, 2, 7, 6), "float64")
    compare([x], nn.max_pool2d(x, 3, 2, 1, ceil_mode=True), [randn(1, 2, 7, 6, dtype="float64")])


def test_sppf_cascade():
    x = sym((1, 4, 20, 20))
    y1 = nn.max_pool2d(x, 5, 1, 2)
    y2 = nn.max_pool2d(y1, 5, 1, 2)
    y3 = nn.max_pool2d(y2, 5, 1, 2)
    compare([x], pt.concatenate([x, y1, y2, y3], axis=1), [randn(1, 4, 20, 20)])


@pytest.mark.parametrize("hw", [(4, 5), (1, 1)])
def test_global_pools(hw):
    x = sym((2, 3, *hw))
    compare([x], [nn.global_avg_pool2d(x), nn.global_max_pool2d(x)], [randn(2, 3, *hw)])


# -- resize -----------------------------------------------------------------------------------------

RESIZE_CASES = [
    dict(scale_factor=2),
    dict(scale_factor=3),
    dict(scale_factor=1.5),
    dict(scale_factor=(0.5, 2.5)),
    dict(scale_factor=0.7),
    dict(size=(9, 4)),
    dict(size=(2, 3)),
    dict(scale_factor=2, mode="bilinear"),
    dict(scale_factor=1.7, mode="bilinear"),
    dict(scale_factor=0.5, mode="bilinear"),
    dict(size=(11, 3), mode="linear"),
    dict(size=(1, 1), mode="bilinear"),
    dict(scale_factor=2, mode="bilinear", align_corners=True),
    dict(scale_factor=0.6, mode="bilinear", align_corners=True),
    dict(size=(9, 1), mode="bilinear", align_corners=True),
]


@pytest.mark.parametrize("kwargs", RESIZE_CASES, ids=[str(sorted(k.items())) for k in RESIZE_CASES])
@pytest.mark.parametrize("static", [True, False])
def test_resize(kwargs, static):
    shape = (2, 3, 6, 5)
    x = sym(shape if static else (None, 3, None, None))
    compare([x], nn.resize(x, **kwargs), [randn(*shape)])


def test_fpn_upsample_concat():
    p5, p4 = sym((1, 8, 5, 5), name="p5"), sym((1, 4, 10, 10), name="p4")
    out = pt.concatenate([nn.upsample(p5, scale_factor=2), p4], axis=1)
    cm = compare([p5, p4], out, [randn(1, 8, 5, 5), randn(1, 4, 10, 10)])
    (node,) = [n for n in cm.model.graph.node if n.op_type == "Resize"]
    attrs = {a.name: a.s.decode() for a in node.attribute if a.type == a.STRING}
    assert attrs == {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
    assert node.input[1] == ""  # no roi


# -- compiled functions ---------------------------------------------------------------------------


def test_nn_ops_survive_pytensor_rewrites():
    x = sym((1, 3, 12, 12))
    y = nn.silu(nn.conv2d(x, randn(4, 3, 3, 3), randn(4), padding=1))
    y = nn.avg_pool2d(nn.max_pool2d(y, 2, ceil_mode=True), 3, 1, 1, count_include_pad=False)
    out = [nn.resize(y, scale_factor=2, mode="bilinear"), nn.global_max_pool2d(y)]
    compare_compiled([x], out, [randn(1, 3, 12, 12)])


@pytest.mark.parametrize("batch_norm", [False, True])
def test_shared_weight_conv_without_bias_in_onnx_mode(batch_norm):
    """A shared (so shape-unknown) weight and no bias: the IR's Conv leaves the bias off, as
    ONNX's may, so nothing needs the channel count; with BatchNorm, the fold makes the bias."""
    import pytensor

    import ptonnx  # noqa: F401  (registers mode="ONNX")

    x = sym((None, 3, None, None))
    w = pytensor.shared(-np.abs(randn(4, 3, 3, 3)), name="w")
    y = nn.conv2d(x, w, padding=1)
    if batch_norm:
        y = nn.silu(nn.batch_norm(y, randn(4), randn(4), randn(4), np.abs(randn(4)) + 0.5))
    arrays = [randn(2, 3, 6, 5)]
    arrays[0][0] = 0.0  # a zero image: every product is -0.0 (both kernels sum them to +0.0)
    arrays[0][1, :, :2] = np.array([np.inf, -np.inf, np.nan, 1e-40, -1e30], np.float32)
    got = pytensor.function([x], y, mode="ONNX")(*arrays)
    expected = pytensor.function([x], y, mode=Mode(linker="py", optimizer="fast_run"))(*arrays)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert (np.signbit(got) == np.signbit(expected)).all()
    for level in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
        cm = ptonnx.compile_function([x], [y])
        onnx.checker.check_model(cm.model, full_check=True)
        options = ort.SessionOptions()
        options.graph_optimization_level = level
        session = ort.InferenceSession(cm.model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        (out,) = session.run(None, {"x": arrays[0]})
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
        assert (np.signbit(out) == np.signbit(expected)).all()


#: each CNN op -> the tests of this module that compare programs reaching it with PyTensor
#: (read by tests/ir/test_registry.py; checked by test_every_nn_op_is_reached_from_pytensor)
REACHED_BY = {
    "Conv": ("test_conv2d", "test_conv2d_cases"),
    "BatchNorm": ("test_batch_norm",),
    "MaxPool": ("test_pools", "test_pool_cases", "test_max_pool_float64_runs_in_onnxruntime"),
    "AveragePool": ("test_pools", "test_pool_cases"),
    "GlobalAveragePool": ("test_global_pools",),
    "GlobalMaxPool": ("test_global_pools",),
    "Resize": ("test_resize",),
    "SiLU": ("test_silu",),
}


def test_every_nn_op_is_reached_from_pytensor():
    x = sym((1, 4, 6, 6))
    programs = {
        "Conv": nn.conv2d(x, randn(2, 4, 3, 3)), "BatchNorm": nn.batch_norm(x, *(np.abs(randn(4)) + 0.5 for _ in range(4))),
        "MaxPool": nn.max_pool2d(x, 2), "AveragePool": nn.avg_pool2d(x, 2), "GlobalAveragePool": nn.global_avg_pool2d(x),
        "GlobalMaxPool": nn.global_max_pool2d(x), "Resize": nn.resize(x, scale_factor=2, mode="bilinear"), "SiLU": nn.silu(x),
    }
    for op, out in programs.items():
        assert op in ptonnx.lift(function_graph([x], [out])).op_counts(), op
    assert set(REACHED_BY) == set(programs) == {name for name, s in ptonnx.ir.all_schemas().items() if s.family == "nn"}
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)
