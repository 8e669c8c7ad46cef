"""Symbolic batch end to end: `yolo11n(batch=None)` is one ONNX model for every batch size.

The PyTensor input's batch dim is unknown; lifting names it (`images_dim0`), the
type rules carry that name through every value, and lowering writes it as the
`dim_param` of the ONNX input and output. The reshapes of the attention block
and the Detect head take -1 for the batch, so the graph is the same as at
batch=1: no Shape ops, the same nodes. Tolerances as in test_yolo11n_onnx.
"""

from __future__ import annotations

import collections

import numpy as np
import onnx
import pytensor
import pytest

import ptonnx
from ptonnx.api import function_graph
from ptonnx.models import SIGNAL_GAIN, block_graph, random_weights, yolo11n
from tests.conftest import REFERENCE_MODE, assert_no_miscompiled_pattern, run_at_every_level
from tests.models.test_yolo11n_onnx import UNFUSED, assert_detections_match

IMGSZ = 64
#: what lifting names the unknown axis 0 of the input called "images"
BATCH = "images_dim0"
PASSES = {"fused": None, "unfused": UNFUSED}


def n_anchors(imgsz: int) -> int:
    return sum((imgsz // s) ** 2 for s in (8, 16, 32))


@pytest.fixture(scope="module")
def weights():
    return random_weights(0, SIGNAL_GAIN)


@pytest.fixture(scope="module")
def dynamic(weights):
    return yolo11n(weights, imgsz=IMGSZ, batch=None)


@pytest.fixture(scope="module")
def reference(dynamic):
    """PyTensor's own evaluation of the batch=None graph, {batch: (images, expected)}."""
    x, y = dynamic
    f = pytensor.function([x], y, mode=REFERENCE_MODE)
    out = {}
    for batch in (1, 4):
        images = np.random.default_rng(batch).uniform(0, 1, (batch, 3, IMGSZ, IMGSZ)).astype(np.float32)
        out[batch] = images, f(images)
    return out


@pytest.fixture(scope="module", params=sorted(PASSES))
def compiled(request, dynamic, weights):
    """(batch=None model, batch=1 model), both compiled with the same passes."""
    passes = PASSES[request.param]
    x, y = dynamic
    x1, y1 = yolo11n(weights, imgsz=IMGSZ, batch=1)
    return ptonnx.compile(function_graph([x], [y]), passes), ptonnx.compile(function_graph([x1], [y1]), passes)


def dims(value_info) -> list:
    """Each dim of an ONNX input/output: its dim_value, its dim_param, or None when anonymous."""
    out = []
    for d in value_info.type.tensor_type.shape.dim:
        kind = d.WhichOneof("value")
        out.append(d.dim_value if kind == "dim_value" else d.dim_param if kind == "dim_param" and d.dim_param else None)
    return out


def test_pytensor_graph_has_an_unknown_batch(dynamic):
    x, y = dynamic
    assert x.type.shape == (None, 3, IMGSZ, IMGSZ) and x.name == "images"
    assert y.type.shape == (None, 84, n_anchors(IMGSZ))


def test_batch_is_one_named_dim_from_input_to_output(compiled):
    cm, _ = compiled
    onnx.checker.check_model(cm.model, full_check=True)
    onnx.shape_inference.infer_shapes(cm.model, strict_mode=True)
    (images,) = cm.model.graph.input
    (out,) = cm.model.graph.output
    assert dims(images) == [BATCH, 3, IMGSZ, IMGSZ]
    assert dims(out) == [BATCH, 84, n_anchors(IMGSZ)], f"output dims {dims(out)}\n{cm.ir}"
    # every value in between has the same name on axis 0, and is otherwise static
    for node in cm.ir:
        for v in node.outputs:
            assert v.shape[0] == BATCH and all(isinstance(d, int) for d in v.shape[1:]), f"{v}: {v.type}\n{cm.ir}"


def test_same_nodes_as_at_batch_1(compiled):
    cm, cm1 = compiled
    assert dims(cm1.model.graph.input[0])[0] == 1
    ops = collections.Counter(n.op_type for n in cm.model.graph.node)
    assert len(cm.model.graph.node) == len(cm1.model.graph.node)
    assert ops == collections.Counter(n.op_type for n in cm1.model.graph.node)
    assert "Shape" not in ops


@pytest.mark.parametrize("batch", [1, 4])
def test_matches_pytensor_at_batch_1_and_4(compiled, reference, batch):
    cm, _ = compiled
    images, expected = reference[batch]
    assert expected.shape == (batch, 84, n_anchors(IMGSZ))
    assert_no_miscompiled_pattern(cm.model)
    for level, (actual,) in run_at_every_level(cm, images).items():
        assert actual.shape == expected.shape, level
        assert_detections_match(actual, expected)


def test_batch_1_model_and_batch_none_model_agree(compiled, reference):
    cm, cm1 = compiled
    images, _ = reference[1]
    assert_detections_match(cm(images)[0], cm1(images)[0])


@pytest.mark.parametrize("name", ["c2psa", "sppf"])
def test_block_graphs_take_batch_none(name):
    x, y = block_graph(name, imgsz=64, batch=None)
    assert x.type.shape[0] is None and y.type.shape[0] is None
    assert x.type.shape[1:] == block_graph(name, imgsz=64)[0].type.shape[1:]
