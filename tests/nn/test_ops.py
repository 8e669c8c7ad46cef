"""The ptonnx.nn PyTensor Ops: `perform` against slow loop references, shapes, argument checks."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from hypothesis import given, settings
from pytensor.compile.mode import Mode

import ptonnx.nn as nn
from ptonnx.testing import REORDERED_SUMS
from ptonnx.errors import PtonnxError
from tests.nn import reference as ref
from tests.nn.strategies import conv_params, pool_params

EVAL = Mode(linker="py", optimizer=None)
TOL = REORDERED_SUMS


def evaluate(fn, *arrays):
    """Build `fn` on symbolic inputs shaped like `arrays` and run PyTensor's perform."""
    xs = [pt.tensor(f"in{i}", shape=a.shape, dtype=a.dtype) for i, a in enumerate(arrays)]
    out = fn(*xs)
    value = pytensor.function(xs, out, mode=EVAL)(*arrays)
    assert out.type.shape == value.shape, "static shape from make_node disagrees with perform"
    assert value.dtype == arrays[0].dtype
    return value


def check(actual, expected, tol=None):
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, **(tol or TOL[expected.dtype.name]))


rng = np.random.default_rng(1234)


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


# -- conv -------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(conv_params())
def test_conv2d_matches_loop_reference(p):
    x, w = randn(*p["x_shape"], dtype=p["dtype"]), randn(*p["w_shape"], dtype=p["dtype"])
    b = randn(p["w_shape"][0], dtype=p["dtype"]) if p["bias"] else None
    kwargs = dict(stride=p["stride"], padding=p["padding"], dilation=p["dilation"], groups=p["groups"])
    got = evaluate(lambda t: nn.conv2d(t, w, b, **kwargs), x)
    check(got, ref.conv2d(x, w, b, p["stride"], p["padding"], p["dilation"], p["groups"]))


@pytest.mark.parametrize(
    "padding, pads",
    [(0, (0, 0, 0, 0)), (2, (2, 2, 2, 2)), ((1, 2), (1, 2, 1, 2)), ((0, 1, 2, 3), (0, 1, 2, 3))],
)
def test_conv2d_padding_forms(padding, pads):
    x, w = randn(1, 2, 5, 6), randn(3, 2, 3, 3)
    got = evaluate(lambda t: nn.conv2d(t, w, padding=padding), x)
    check(got, ref.conv2d(x, w, None, pads=pads))


def test_depthwise_conv2d():
    x, w, b = randn(2, 4, 6, 6), randn(4, 1, 3, 3), randn(4)
    got = evaluate(lambda t: nn.conv2d(t, w, b, padding=1, groups=4), x)
    check(got, ref.conv2d(x, w, b, pads=(1, 1, 1, 1), groups=4))


def test_conv2d_weights_as_inputs_and_dtype_conversion():
    x, w, b = randn(1, 3, 5, 5), randn(2, 3, 3, 3), randn(2)
    got = evaluate(lambda t, u, v: nn.conv2d(t, u, v, stride=2), x, w, b)
    check(got, ref.conv2d(x, w, b, stride=(2, 2)))
    y = nn.conv2d(pt.tensor("x", shape=(1, 3, 5, 5), dtype="float32"), w.astype("float64"))
    assert y.dtype == "float32"


# -- batch norm, silu --------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (6, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm(shape, dtype):
    x = randn(*shape, dtype=dtype)
    gamma, beta, mean = randn(3), randn(3), randn(3)
    var = rng.random(3) + 0.1
    got = evaluate(lambda t: nn.batch_norm(t, gamma, beta, mean, var, eps=1e-3), x)
    eps32 = float(np.float32(1e-3))  # ONNX stores epsilon as float32
    check(got, ref.batch_norm(x, gamma.astype(dtype), beta.astype(dtype), mean.astype(dtype), var.astype(dtype), eps32))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_silu(dtype):
    x = np.concatenate([randn(20, dtype=dtype), np.array([0, -80, 80, -1000, 1000], dtype=dtype)])
    check(evaluate(nn.silu, x), ref.silu(x))


# -- pooling -----------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(pool_params())
def test_pools_match_loop_reference(p):
    x = randn(*p["x_shape"], dtype=p["dtype"])
    common = dict(stride=p["stride"], padding=p["padding"], ceil_mode=p["ceil_mode"])
    got = evaluate(lambda t: nn.max_pool2d(t, p["kernel"], **common), x)
    check(got, ref.pool2d(x, "max", p["kernel"], p["stride"], p["padding"], p["ceil_mode"]))
    got = evaluate(lambda t: nn.avg_pool2d(t, p["kernel"], count_include_pad=p["count_include_pad"], **common), x)
    check(got, ref.pool2d(x, "avg", p["kernel"], p["stride"], p["padding"], p["ceil_mode"], p["count_include_pad"]))


def test_ceil_mode_drops_a_window_that_starts_in_the_end_padding():
    # H = 5, pad 1, k = 2, s = 2: ceil((5 + 2 - 2) / 2) + 1 = 4 windows, but the 4th starts
    # at padded row 6 = the end padding, so PyTorch (and ptonnx) keep 3.
    x = randn(1, 1, 5, 5)
    y = nn.max_pool2d(pt.tensor("x", shape=x.shape, dtype="float32"), 2, 2, 1, ceil_mode=True)
    assert y.type.shape == (1, 1, 3, 3)
    check(evaluate(lambda t: nn.max_pool2d(t, 2, 2, 1, ceil_mode=True), x), ref.pool2d(x, "max", (2, 2), (2, 2), (1, 1, 1, 1), True))


def test_count_include_pad_both_ways():
    x = np.ones((1, 1, 3, 3), np.float32)
    with_pad = evaluate(lambda t: nn.avg_pool2d(t, 3, 1, 1, count_include_pad=True), x)
    without = evaluate(lambda t: nn.avg_pool2d(t, 3, 1, 1, count_include_pad=False), x)
    assert with_pad[0, 0, 0, 0] == pytest.approx(4 / 9) and with_pad[0, 0, 1, 1] == 1
    np.testing.assert_array_equal(without, np.ones_like(without))


def test_max_pool_pads_with_minus_infinity():
    x = -np.ones((1, 1, 2, 2), np.float32) * 5
    got = evaluate(lambda t: nn.max_pool2d(t, 2, 1, 1), x)
    np.testing.assert_array_equal(got, np.full((1, 1, 3, 3), -5, np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_global_pools_keep_dims(dtype):
    x = randn(2, 3, 4, 5, dtype=dtype)
    check(evaluate(nn.global_avg_pool2d, x), x.mean(axis=(2, 3), keepdims=True))
    check(evaluate(nn.global_max_pool2d, x), x.max(axis=(2, 3), keepdims=True))


# -- resize ------------------------------------------------------------------------------

RESIZE_CASES = [
    # (input HW, kwargs, expected output HW)
    ((3, 4), dict(scale_factor=2), (6, 8)),
    ((4, 5), dict(scale_factor=1.5), (6, 7)),
    ((5, 3), dict(scale_factor=(0.5, 2.5)), (2, 7)),
    ((4, 4), dict(size=(7, 3)), (7, 3)),
    ((3, 4), dict(scale_factor=2, mode="bilinear"), (6, 8)),
    ((6, 5), dict(scale_factor=0.5, mode="bilinear"), (3, 2)),
    ((4, 5), dict(size=(9, 2), mode="linear"), (9, 2)),
    ((3, 4), dict(scale_factor=2, mode="bilinear", align_corners=True), (6, 8)),
    ((7, 6), dict(size=(3, 1), mode="bilinear", align_corners=True), (3, 1)),
    ((5, 5), dict(size=(1, 2), mode="bilinear"), (1, 2)),
]
CTM = {("nearest", False): "asymmetric", ("bilinear", False): "half_pixel", ("linear", False): "half_pixel", ("bilinear", True): "align_corners"}


@pytest.mark.parametrize("hw, kwargs, out_hw", RESIZE_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_resize_matches_loop_reference(hw, kwargs, out_hw, dtype):
    x = randn(2, 3, *hw, dtype=dtype)
    got = evaluate(lambda t: nn.resize(t, **kwargs), x)
    assert got.shape[2:] == out_hw
    mode = kwargs.get("mode", "nearest")
    ctm = CTM[(mode, kwargs.get("align_corners", False))]
    if "scale_factor" in kwargs:
        sf = kwargs["scale_factor"]
        scales = (sf, sf) if np.ndim(sf) == 0 else sf
    else:
        scales = (out_hw[0] / hw[0], out_hw[1] / hw[1])
    # Source coordinates are float32 for every dtype (as in onnxruntime); the reference uses float64.
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == "float64" else None
    check(got, ref.resize(x, out_hw, scales, "nearest" if mode == "nearest" else "linear", ctm), tol)


def test_upsample_is_resize_and_nearest_x2_repeats_pixels():
    assert nn.upsample is nn.resize
    x = randn(1, 2, 3, 3)
    got = evaluate(lambda t: nn.upsample(t, scale_factor=2), x)
    np.testing.assert_array_equal(got, x.repeat(2, axis=2).repeat(2, axis=3))


# -- symbolic shapes (infer_shape) -------------------------------------------------------------

SHAPE_CASES = [
    lambda t: nn.conv2d(t, np.ones((4, 3, 3, 2), np.float32), stride=(2, 1), padding=(1, 0, 2, 1), dilation=(1, 2)),
    lambda t: nn.max_pool2d(t, 2, 2, 1, ceil_mode=True),
    lambda t: nn.avg_pool2d(t, 3, 2, 1, ceil_mode=True),
    lambda t: nn.max_pool2d(t, (3, 2)),
    lambda t: nn.resize(t, scale_factor=1.5),
    lambda t: nn.resize(t, size=(4, 9), mode="bilinear"),
    lambda t: nn.global_max_pool2d(t),
    lambda t: nn.batch_norm(t, np.ones(3), np.zeros(3), np.zeros(3), np.ones(3)),
    nn.silu,
]


@pytest.mark.parametrize("hw", [(5, 5), (7, 6), (8, 9)])
@pytest.mark.parametrize("build", SHAPE_CASES)
def test_infer_shape_agrees_with_perform(build, hw):
    x = pt.tensor("x", shape=(None, 3, None, None), dtype="float32")
    y = build(x)
    f = pytensor.function([x], [y, y.shape], mode=Mode(linker="py", optimizer="fast_run"))
    value, shape = f(randn(2, 3, *hw))
    assert tuple(shape) == value.shape
    static = build(pt.tensor("s", shape=(2, 3, *hw), dtype="float32")).type.shape
    assert static == value.shape


# -- argument checks ---------------------------------------------------------------------------

X = pt.tensor("x", shape=(1, 4, 6, 6), dtype="float32")
BAD_CALLS = [
    (lambda: nn.conv2d(X, np.ones((2, 3, 3, 3))), ValueError, "4 channels"),
    (lambda: nn.conv2d(X, np.ones((3, 2, 3, 3)), groups=2), ValueError, "divisible by groups"),
    (lambda: nn.conv2d(X, np.ones((2, 4, 3, 3)), padding=(1, 2, 3)), ValueError, "padding must be"),
    (lambda: nn.conv2d(X, np.ones((2, 4, 3, 3)), stride=0), ValueError, "stride must be >= 1"),
    (lambda: nn.conv2d(X, np.ones((2, 4, 9, 9))), ValueError, "smaller than the dilated kernel"),
    (lambda: nn.conv2d(pt.tensor("i", shape=(1, 4, 6, 6), dtype="int32"), np.ones((2, 4, 3, 3))), TypeError, "cast it"),
    (lambda: nn.conv2d(pt.matrix("m"), np.ones((2, 4, 3, 3))), TypeError, "expected 4"),
    (lambda: nn.max_pool2d(X, 2, padding=2), ValueError, "at most half the kernel"),
    (lambda: nn.avg_pool2d(X, 7), ValueError, "smaller than the kernel"),
    (lambda: nn.resize(X), ValueError, "exactly one"),
    (lambda: nn.resize(X, 2, mode="cubic"), ValueError, "mode must be"),
    (lambda: nn.resize(X, 2, align_corners=True), ValueError, "only for linear"),
    (lambda: nn.resize(X, 0.1), ValueError, "empty"),
    (lambda: nn.batch_norm(X, np.ones(3), np.ones(4), np.ones(4), np.ones(4)), ValueError, "3 entries for 4 channels"),
]


@pytest.mark.parametrize("call, error, match", BAD_CALLS)
def test_bad_arguments_are_explained(call, error, match):
    with pytest.raises(error, match=match) as info:
        call()
    assert isinstance(info.value, PtonnxError)
