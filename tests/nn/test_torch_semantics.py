"""Optional: the ptonnx.nn Ops compute what PyTorch computes (skipped when torch is absent)."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ptonnx.nn as nn
from ptonnx.testing import REORDERED_SUMS
from tests.nn.helpers import EVAL
from tests.nn.strategies import conv_params, pool_params

torch = pytest.importorskip("torch")
F = torch.nn.functional
TOL = REORDERED_SUMS["float32"]
rng = np.random.default_rng(17)


def run(build, x):
    t = pt.tensor("x", shape=x.shape, dtype=x.dtype)
    return pytensor.function([t], build(t), mode=EVAL)(x)


@settings(max_examples=25, deadline=None)
@given(conv_params(dtypes=("float32",)))
def test_conv2d_like_torch(p):
    x = rng.standard_normal(p["x_shape"]).astype(np.float32)
    w = rng.standard_normal(p["w_shape"]).astype(np.float32)
    b = rng.standard_normal(p["w_shape"][0]).astype(np.float32) if p["bias"] else None
    top, left, bottom, right = p["padding"]
    padded = F.pad(torch.from_numpy(x), (left, right, top, bottom))
    expected = F.conv2d(padded, torch.from_numpy(w), None if b is None else torch.from_numpy(b), p["stride"], 0, p["dilation"], p["groups"])
    got = run(lambda t: nn.conv2d(t, w, b, p["stride"], p["padding"], p["dilation"], p["groups"]), x)
    np.testing.assert_allclose(got, expected.numpy(), **TOL)


@settings(max_examples=25, deadline=None)
@given(pool_params(dtypes=("float32",)))
def test_pools_like_torch(p):
    x = rng.standard_normal(p["x_shape"]).astype(np.float32)
    pad = p["padding"][:2]  # torch pads symmetrically
    assume(all(n + 2 * q >= k for n, q, k in zip(p["x_shape"][2:], pad, p["kernel"], strict=True)))
    kw = dict(kernel_size=p["kernel"], stride=p["stride"], padding=pad, ceil_mode=p["ceil_mode"])
    expected = F.max_pool2d(torch.from_numpy(x), **kw).numpy()
    np.testing.assert_allclose(run(lambda t: nn.max_pool2d(t, p["kernel"], p["stride"], pad, p["ceil_mode"]), x), expected, **TOL)
    expected = F.avg_pool2d(torch.from_numpy(x), count_include_pad=p["count_include_pad"], **kw).numpy()
    got = run(lambda t: nn.avg_pool2d(t, p["kernel"], p["stride"], pad, p["ceil_mode"], p["count_include_pad"]), x)
    np.testing.assert_allclose(got, expected, **TOL)


@settings(max_examples=25, deadline=None)
@given(
    st.tuples(st.integers(1, 7), st.integers(1, 7)),
    st.one_of(
        st.fixed_dictionaries({"scale_factor": st.sampled_from([0.5, 0.75, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0])}),
        st.fixed_dictionaries({"size": st.tuples(st.integers(1, 9), st.integers(1, 9))}),
    ),
    st.sampled_from([("nearest", False), ("bilinear", False), ("bilinear", True)]),
)
def test_resize_like_torch(hw, kwargs, mode):
    mode, align = mode
    if "scale_factor" in kwargs and kwargs["scale_factor"] not in (1.0, 2.0):
        # Whatever the scale, PyTorch copies an axis whose size is unchanged, and its nearest
        # mode maps one that doubles with x // 2; ptonnx (like ONNX) applies the scale's formula.
        outs = [int(n * kwargs["scale_factor"]) for n in hw]
        assume(all(o != n for o, n in zip(outs, hw, strict=True)))
        assume(mode != "nearest" or all(o != 2 * n for o, n in zip(outs, hw, strict=True)))
    x = rng.standard_normal((1, 2, *hw)).astype(np.float32)
    extra = {} if mode == "nearest" else {"align_corners": align}
    try:
        expected = F.interpolate(torch.from_numpy(x), mode=mode, **kwargs, **extra).numpy()
    except RuntimeError:  # an empty output: ptonnx refuses it too
        with pytest.raises(ValueError):
            nn.resize(pt.tensor("x", shape=x.shape, dtype="float32"), mode=mode, **kwargs, **extra)
        return
    got = run(lambda t: nn.resize(t, mode=mode, **kwargs, **extra), x)
    np.testing.assert_allclose(got, expected, **TOL)


def test_batch_norm_and_silu_like_torch():
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    stats = [rng.standard_normal(3).astype(np.float32) for _ in range(3)] + [rng.random(3).astype(np.float32) + 0.5]
    gamma, beta, mean, var = stats
    expected = F.silu(F.batch_norm(torch.from_numpy(x), *map(torch.from_numpy, (mean, var, gamma, beta)), eps=1e-3))
    got = run(lambda t: nn.silu(nn.batch_norm(t, gamma, beta, mean, var, eps=1e-3)), x)
    np.testing.assert_allclose(got, expected.numpy(), **TOL)
