"""The YOLO11 blocks and the Detect head against an independent NumPy reference (tests/models/reference.py)."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode

from ptonnx.models import BLOCKS, SIGNAL_GAIN, ModelArgumentError, WeightsError, block_graph, random_weights, yolo11n
from ptonnx.models.blocks import attention, conv_block
from ptonnx.models.detect import dfl, dist2bbox, make_anchors
from tests.models.reference import Ref

PY_MODE = Mode(linker="py", optimizer=None)


def run(x, y, value):
    return pytensor.function([x], y, mode=PY_MODE)(value)


def uniform(shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


@pytest.fixture(scope="module")
def gained():
    """Weights whose convs keep the signal alive, so the reference comparison sees every layer."""
    return random_weights(0, SIGNAL_GAIN)


REFERENCE = {
    "conv": lambda r, x: r.Conv(x, "model.1", 3, 2),
    "c3k2": lambda r, x: r.C3k2(x, "model.2", False),
    "c3k2_c3k": lambda r, x: r.C3k2(x, "model.6", True),
    "sppf": lambda r, x: r.SPPF(x, "model.9"),
    "c2psa": lambda r, x: r.C2PSA(x, "model.10"),
}


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_block_graph_matches_reference(name):
    assert set(REFERENCE) == set(BLOCKS)
    x, y = block_graph(name, imgsz=128, seed=0)
    value = uniform(x.type.shape)
    out = run(x, y, value)
    expected = REFERENCE[name](Ref(random_weights(0)), value.astype(np.float64))
    assert out.shape == expected.shape == y.type.shape
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_block_graph_shapes_at_640():
    shapes = {name: block_graph(name, imgsz=640) for name in BLOCKS}
    got = {name: (x.type.shape, y.type.shape) for name, (x, y) in shapes.items()}
    assert got == {
        "conv": ((1, 16, 320, 320), (1, 32, 160, 160)),
        "c3k2": ((1, 32, 160, 160), (1, 64, 160, 160)),
        "c3k2_c3k": ((1, 128, 40, 40), (1, 128, 40, 40)),
        "sppf": ((1, 256, 20, 20), (1, 256, 20, 20)),
        "c2psa": ((1, 256, 20, 20), (1, 256, 20, 20)),
    }


def test_block_graph_errors():
    with pytest.raises(ModelArgumentError, match="unknown block 'detect'.*c2psa"):
        block_graph("detect")
    with pytest.raises(ModelArgumentError, match="imgsz=100"):
        block_graph("sppf", imgsz=100)


def test_attention_on_a_non_square_map_matches_reference(gained):
    """The per-head [q(32) | k(32) | v(64)] split, softmax over keys, pe on v as (B, C, H, W)."""
    x = pt.tensor("x", dtype="float32", shape=(1, 128, 3, 5))
    weights = {k: v for k, v in gained.items() if k.startswith("model.10.m.0.attn.")}
    y = attention(x, weights, "model.10.m.0.attn", num_heads=2)
    value = uniform(x.type.shape, 3)
    expected = Ref(weights).Attention(value.astype(np.float64), "model.10.m.0.attn", 2)
    np.testing.assert_allclose(run(x, y, value), expected, rtol=1e-4, atol=1e-5)


def test_builders_take_a_plain_mapping_and_name_a_missing_key():
    x = pt.tensor("x", dtype="float32", shape=(1, 16, 8, 8))
    weights = {k: v for k, v in random_weights(0).items() if k.startswith("model.1.")}
    assert conv_block(x, weights, "model.1", 32, 3, 2).type.shape == (1, 32, 4, 4)
    del weights["model.1.bn.running_var"]
    with pytest.raises(WeightsError, match=r"'model\.1\.bn\.running_var' \(shape \(32,\)\) is missing"):
        conv_block(x, weights, "model.1", 32, 3, 2)


def test_make_anchors_are_cell_centres_row_major_per_level():
    anchors, strides = make_anchors([(2, 3), (1, 1)], (8, 32))
    np.testing.assert_array_equal(anchors.T, [[0.5, 0.5], [1.5, 0.5], [2.5, 0.5], [0.5, 1.5], [1.5, 1.5], [2.5, 1.5], [0.5, 0.5]])
    np.testing.assert_array_equal(strides, [8, 8, 8, 8, 8, 8, 32])


def test_dfl_and_dist2bbox():
    """Expected bin index per side, then (cx, cy, w, h) around the anchor."""
    logits = pt.tensor("logits", dtype="float32", shape=(1, 64, 2))
    dist = dfl(logits, {"dfl.conv.weight": np.arange(16, dtype=np.float32).reshape(1, 16, 1, 1)}, "dfl")
    value = np.full((1, 64, 2), -30.0, np.float32)
    for side, b in enumerate([1, 2, 3, 4]):  # one-hot bins: l=1, t=2, r=3, b=4 at anchor 0
        value[0, side * 16 + b, 0] = 30.0
    value[0, :, 1] = 0.0  # uniform: every side 7.5
    np.testing.assert_allclose(run(logits, dist, value), [[[1, 7.5], [2, 7.5], [3, 7.5], [4, 7.5]]], atol=1e-5)
    d = pt.tensor("d", dtype="float32", shape=(1, 4, 1))
    box = dist2bbox(d, pt.constant(np.array([[[10.5], [20.5]]], np.float32)))
    np.testing.assert_allclose(run(d, box, np.array([[[1], [2], [3], [4]]], np.float32)), [[[11.5], [21.5], [4], [6]]])


def test_whole_model_matches_reference(gained):
    x, y = yolo11n(gained, imgsz=64)
    value = uniform(x.type.shape, 5, 0.0, 1.0)
    out = run(x, y, value)
    expected = Ref(gained).model(value.astype(np.float64))
    assert out.shape == expected.shape == (1, 84, 84)
    assert expected[:, 4:].std() > 0.1  # the scores are not saturated or constant: the check has teeth
    np.testing.assert_allclose(out[:, :4], expected[:, :4], rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(out[:, 4:], expected[:, 4:], rtol=1e-4, atol=1e-5)


def test_block_graph_gain_scales_the_conv_weights():
    from ptonnx.models import block_graph

    def conv_weight(gain):
        x, y = block_graph("conv", imgsz=64, gain=gain)
        from ptonnx.api import function_graph

        fg = function_graph([x], [y])
        return next(v.data for n in fg.apply_nodes for v in n.inputs if getattr(v, "name", None) == "model.1.conv.weight")

    np.testing.assert_allclose(conv_weight(2.0), 2.0 * conv_weight(1.0), rtol=1e-6)
