"""YOLO11n as a PyTensor graph: state_dict spec, weights handling, and its evaluation.

The numbers were checked once against Ultralytics' PyTorch model with
benchmarks/check_against_ultralytics.py; these tests guard the structure and
the properties that must hold whatever the weights.
"""

from __future__ import annotations

import collections
import time

import numpy as np
import pytensor
import pytest
from pytensor.compile.mode import Mode
from pytensor.graph.basic import Constant
from pytensor.graph.traversal import applys_between, graph_inputs

from ptonnx.errors import PtonnxError
from ptonnx.models import (
    SIGNAL_GAIN, ModelArgumentError, WeightsError, random_weights, yolo11n, yolo11n_state_dict_spec,
)

#: PyTensor's own Python implementations, no rewrites
PY_MODE = Mode(linker="py", optimizer=None)


def n_anchors(imgsz: int) -> int:
    return sum((imgsz // s) ** 2 for s in (8, 16, 32))


def compile_model(weights=None, imgsz=64, batch=1):
    x, y = yolo11n(weights, imgsz=imgsz, batch=batch)
    return pytensor.function([x], y, mode=PY_MODE)


def images(shape, seed=0):
    return np.random.default_rng(seed).uniform(0, 1, shape).astype(np.float32)


@pytest.fixture(scope="module")
def weights():
    return random_weights(0)


@pytest.fixture(scope="module")
def model64(weights):
    return compile_model(weights, 64)


# -- the state_dict spec -------------------------------------------------------------


def test_spec_has_the_418_ultralytics_tensors_in_state_dict_order():
    spec = yolo11n_state_dict_spec()
    assert len(spec) == 418
    assert spec["model.0.conv.weight"] == (16, 3, 3, 3)
    assert spec["model.0.bn.running_mean"] == (16,)
    assert spec["model.10.m.0.attn.qkv.conv.weight"] == (256, 128, 1, 1)
    assert spec["model.10.m.0.attn.pe.conv.weight"] == (128, 1, 3, 3)
    assert spec["model.23.cv3.0.0.0.conv.weight"] == (64, 1, 3, 3)
    assert spec["model.23.cv2.0.2.bias"] == (64,)
    assert spec["model.23.dfl.conv.weight"] == (1, 16, 1, 1)
    assert not any("num_batches_tracked" in name for name in spec)
    names = list(spec)
    assert names[:5] == [f"model.0.{n}" for n in ("conv.weight", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var")]
    # module registration order (cv1, cv2, m), not forward order
    assert names.index("model.2.cv2.conv.weight") < names.index("model.2.m.0.cv1.conv.weight")
    assert names.index("model.6.m.0.cv3.conv.weight") < names.index("model.6.m.0.m.0.cv1.conv.weight")
    assert names[-1] == "model.23.dfl.conv.weight"


def test_parameter_count_is_ultralytics():
    """2,624,080 = weights + biases + BN gamma/beta; running statistics are buffers, not parameters."""
    spec = yolo11n_state_dict_spec()
    sizes = {name: int(np.prod(shape)) for name, shape in spec.items()}
    params = sum(n for name, n in sizes.items() if not name.endswith(("running_mean", "running_var")))
    assert params == 2_624_080
    assert sum(name.endswith("running_mean") for name in spec) == 81  # BatchNorm2d modules
    assert sum(len(shape) == 4 for shape in spec.values()) == 88  # Conv2d modules


def test_random_weights_are_deterministic_float32_with_the_documented_distributions(weights):
    spec = yolo11n_state_dict_spec()
    again, other = random_weights(0), random_weights(1)
    assert list(weights) == list(spec)
    for name, shape in spec.items():
        w = weights[name]
        assert w.dtype == np.float32 and w.shape == shape, name
        np.testing.assert_array_equal(w, again[name])
    assert not np.array_equal(weights["model.0.conv.weight"], other["model.0.conv.weight"])
    bn = lambda kind: np.concatenate([w for n, w in weights.items() if n.endswith(f".bn.{kind}")])  # noqa: E731
    assert 0.5 <= bn("weight").min() and bn("weight").max() <= 1.5
    assert 0.5 <= bn("running_var").min() and bn("running_var").max() <= 2.0
    assert 0.05 < bn("bias").std() < 0.15 and 0.05 < bn("running_mean").std() < 0.15
    np.testing.assert_array_equal(weights["model.23.dfl.conv.weight"].ravel(), np.arange(16))
    w = weights["model.8.cv2.conv.weight"]  # fan_in 384: PyTorch's default bound 1/sqrt(384)
    assert np.abs(w).max() <= 1 / np.sqrt(384) and np.abs(w).max() > 0.9 / np.sqrt(384)
    scaled = random_weights(0, gain=2.0)
    np.testing.assert_allclose(scaled["model.8.cv2.conv.weight"], 2 * w, rtol=1e-6)
    np.testing.assert_array_equal(scaled["model.8.cv2.bn.weight"], weights["model.8.cv2.bn.weight"])
    np.testing.assert_array_equal(scaled["model.23.dfl.conv.weight"], weights["model.23.dfl.conv.weight"])


# -- the graph -----------------------------------------------------------------------


def test_weights_enter_as_named_constants(weights):
    x, y = yolo11n(weights, imgsz=64)
    constants = {v.name: v for v in graph_inputs([y]) if isinstance(v, Constant) and v.name in weights}
    assert set(constants) == set(weights)
    for name, c in constants.items():
        assert c.type.dtype == "float32"
        np.testing.assert_array_equal(c.data, weights[name])
    assert [v for v in graph_inputs([y]) if not isinstance(v, Constant)] == [x]


def test_graph_has_the_architecture_op_counts():
    """88 convs, 81 BatchNorms, 77 SiLUs (SPPF.cv1 activated; qkv/proj/pe/ffn.1 not), 3 max pools, 2 upsamples."""
    x, y = yolo11n(imgsz=64)
    ops = collections.Counter(type(node.op).__name__ for node in applys_between([x], [y]))
    assert (ops["Conv2D"], ops["BatchNorm"], ops["SiLU"], ops["Pool2D"], ops["Resize"]) == (88, 81, 77, 3, 2)
    assert ops["Softmax"] == 2  # attention over keys, DFL over bins


@pytest.mark.parametrize("imgsz", [32, 320, 640, 1280])
def test_static_output_shape(imgsz):
    x, y = yolo11n(imgsz=imgsz)
    assert x.type.shape == (1, 3, imgsz, imgsz) and x.type.dtype == "float32" and x.name == "images"
    assert y.type.shape == (1, 84, n_anchors(imgsz)) and y.type.dtype == "float32"
    assert n_anchors(640) == 8400 and n_anchors(320) == 2100


@pytest.mark.parametrize("imgsz", [0, 31, 48, 100, 641, 320.0, "640", True])
def test_imgsz_must_be_a_multiple_of_32(imgsz):
    with pytest.raises(ModelArgumentError, match=f"imgsz={imgsz!r}: must be a positive multiple of 32"):
        yolo11n(imgsz=imgsz)


@pytest.mark.parametrize("batch", [0, -1, 1.0])
def test_batch_must_be_a_positive_int(batch):
    with pytest.raises(ModelArgumentError, match="batch"):
        yolo11n(imgsz=64, batch=batch)


# -- weights errors ---------------------------------------------------------------------


def test_missing_extra_and_misshaped_weights_are_all_named(weights):
    bad = dict(weights)
    del bad["model.0.conv.weight"], bad["model.23.dfl.conv.weight"]
    bad["model.24.conv.weight"] = np.zeros((2, 2), np.float32)
    bad["model.1.bn.weight"] = np.ones(16, np.float32)
    bad["model.0.bn.num_batches_tracked"] = np.array(0)  # PyTorch bookkeeping: ignored
    with pytest.raises(WeightsError) as info:
        yolo11n(bad, imgsz=64)
    err, message = info.value, str(info.value)
    assert isinstance(err, PtonnxError)
    assert err.missing == ("model.0.conv.weight", "model.23.dfl.conv.weight")
    assert err.extra == ("model.24.conv.weight",)
    assert err.misshaped == {"model.1.bn.weight": ((32,), (16,))}
    assert "model.0.conv.weight: expected shape (16, 3, 3, 3)" in message
    assert "model.23.dfl.conv.weight: expected shape (1, 16, 1, 1)" in message
    assert "model.24.conv.weight: given shape (2, 2)" in message
    assert "model.1.bn.weight: expected (32,), given (16,)" in message
    assert "num_batches_tracked" not in message.split("\n")[1]


@pytest.mark.parametrize("kind", ["missing", "extra", "misshaped"])
def test_each_kind_of_weights_error_alone(weights, kind):
    bad = dict(weights)
    if kind == "missing":
        del bad["model.10.m.0.attn.pe.bn.running_var"]
    elif kind == "extra":
        bad["model.10.m.0.attn.pe.bn.extra"] = np.zeros(3, np.float32)
    else:
        bad["model.10.m.0.attn.pe.conv.weight"] = np.zeros((128, 128, 3, 3), np.float32)
    with pytest.raises(WeightsError, match=r"model\.10\.m\.0\.attn\.pe\.") as info:
        yolo11n(bad, imgsz=64)
    assert len(getattr(info.value, {"missing": "missing", "extra": "extra", "misshaped": "misshaped"}[kind])) == 1


def test_weights_load_from_npz_path(tmp_path, weights):
    path = tmp_path / "yolo11n.npz"
    np.savez(path, **weights)
    for given in (path, str(path)):
        _, y = yolo11n(given, imgsz=32)
        data = {v.name: v.data for v in graph_inputs([y]) if isinstance(v, Constant) and v.name in weights}
        assert set(data) == set(weights)
        np.testing.assert_array_equal(data["model.22.m.0.m.1.cv2.bn.running_var"], weights["model.22.m.0.m.1.cv2.bn.running_var"])


def test_bad_weights_sources(tmp_path):
    with pytest.raises(WeightsError, match="does not exist"):
        yolo11n(tmp_path / "nope.npz", imgsz=32)
    (tmp_path / "junk.npz").write_text("not an npz")
    with pytest.raises(WeightsError, match="cannot read weights file"):
        yolo11n(tmp_path / "junk.npz", imgsz=32)
    with pytest.raises(WeightsError, match="mapping"):
        yolo11n([1, 2, 3], imgsz=32)


def test_float64_weights_are_converted_to_float32(weights):
    x, y = yolo11n({k: v.astype(np.float64) for k, v in weights.items()}, imgsz=32)
    assert y.type.dtype == "float32"
    assert all(v.type.dtype == "float32" for v in graph_inputs([y]) if isinstance(v, Constant) and v.name in weights)


# -- evaluation ---------------------------------------------------------------------


def check_output(out, batch, imgsz):
    assert out.shape == (batch, 84, n_anchors(imgsz)) and out.dtype == np.float32
    assert np.isfinite(out).all()
    assert (out[:, 2:4] > 0).all(), "box widths and heights are sums of two non-negative DFL expectations"
    assert (out[:, 2:4] <= 2 * 15 * 32).all(), "a side is at most reg_max-1 = 15 grid cells"
    assert ((out[:, 4:] > 0) & (out[:, 4:] < 1)).all()


def test_evaluation_at_64(model64):
    check_output(model64(images((1, 3, 64, 64))), 1, 64)


def test_evaluation_at_320_once():
    f = compile_model(imgsz=320)
    start = time.perf_counter()
    out = f(images((1, 3, 320, 320)))
    assert time.perf_counter() - start < 30
    check_output(out, 1, 320)


def test_batch_items_are_independent(weights, model64):
    a, b = images((1, 3, 64, 64), 1), images((1, 3, 64, 64), 2)
    both = compile_model(weights, 64, batch=2)(np.concatenate([a, b]))
    check_output(both, 2, 64)
    np.testing.assert_allclose(both[:1], model64(a), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(both[1:], model64(b), rtol=1e-5, atol=1e-4)


def test_signal_gain_keeps_the_input_visible_at_the_output(model64):
    """With PyTorch's default conv scale the output barely depends on the image; SIGNAL_GAIN fixes that."""
    a, b = images((1, 3, 64, 64), 1), images((1, 3, 64, 64), 2)
    default = np.abs(model64(a) - model64(b))[:, 4:].max()
    f = compile_model(random_weights(0, SIGNAL_GAIN), 64)
    gained = np.abs(f(a) - f(b))[:, 4:].max()
    assert default < 1e-3 < gained
