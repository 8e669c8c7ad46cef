"""YOLO11n (Ultralytics 8.4.190, `yolo11n.yaml` at scale n) as one PyTensor graph.

`build` is the 24-layer assembly of `shared/yolo11n/ARCH.md`, with the widths
already scaled (depth 0.50, width 0.25). Parameters are named constants with
the exact Ultralytics state_dict names, so `torch` weights load unchanged.
"""

from __future__ import annotations

import functools

import numpy as np
import pytensor.tensor as pt

from ptonnx.models.blocks import c2psa, c3k2, concat, conv, sppf, upsample
from ptonnx.models.detect import detect
from ptonnx.models.errors import ModelArgumentError
from ptonnx.models.params import Params, check_weights, load_weights, random_weights_for

#: the strides of the P3, P4, P5 outputs; the input size must be a multiple of the largest
STRIDES = (8, 16, 32)
#: number of classes (COCO)
NC = 80
#: conv-weight gain of `random_weights` that keeps the input's signal alive to the output
SIGNAL_GAIN = 2.8


def build(x, p):
    """The YOLO11n forward pass (eval mode) of `x` (B, 3, H, W) with weights from `p`."""
    x0 = conv(x, p, "model.0", 16, 3, 2)  # P1/2
    x1 = conv(x0, p, "model.1", 32, 3, 2)  # P2/4
    x2 = c3k2(x1, p, "model.2", 64, 1, False, e=0.25)
    x3 = conv(x2, p, "model.3", 64, 3, 2)  # P3/8
    x4 = c3k2(x3, p, "model.4", 128, 1, False, e=0.25)
    x5 = conv(x4, p, "model.5", 128, 3, 2)  # P4/16
    x6 = c3k2(x5, p, "model.6", 128, 1, True)
    x7 = conv(x6, p, "model.7", 256, 3, 2)  # P5/32
    x8 = c3k2(x7, p, "model.8", 256, 1, True)
    x9 = sppf(x8, p, "model.9", 256, 5)
    x10 = c2psa(x9, p, "model.10", 256, 1)
    x13 = c3k2(concat([upsample(x10), x6]), p, "model.13", 128, 1, False)  # layers 11, 12, 13
    x16 = c3k2(concat([upsample(x13), x4]), p, "model.16", 64, 1, False)  # 14, 15, 16: P3 out
    x19 = c3k2(concat([conv(x16, p, "model.17", 64, 3, 2), x13]), p, "model.19", 128, 1, False)  # P4 out
    x22 = c3k2(concat([conv(x19, p, "model.20", 128, 3, 2), x10]), p, "model.22", 256, 1, True)  # P5 out
    return detect([x16, x19, x22], p, "model.23", NC, 16, STRIDES)


def check_size(imgsz, batch) -> None:
    if not isinstance(imgsz, int) or isinstance(imgsz, bool) or imgsz < STRIDES[-1] or imgsz % STRIDES[-1]:
        raise ModelArgumentError(f"imgsz={imgsz!r}: must be a positive multiple of {STRIDES[-1]} (e.g. 320, 640)")
    if batch is not None and (not isinstance(batch, int) or isinstance(batch, bool) or batch < 1):
        raise ModelArgumentError(f"batch={batch!r}: must be an int >= 1, or None for a batch size chosen at run time")


def input_variable(imgsz: int, batch: int | None = 1):
    check_size(imgsz, batch)
    return pt.tensor("images", dtype="float32", shape=(batch, 3, imgsz, imgsz))


#: rank of a name component among its siblings in PyTorch module registration order (numbers rank by value)
MODULE_ORDER = {
    "conv": 0, "bn": 1, "weight": 0, "bias": 1, "running_mean": 2, "running_var": 3,
    "cv1": 0, "cv2": 1, "cv3": 2, "m": 3, "dfl": 4, "attn": 0, "ffn": 1, "qkv": 0, "proj": 1, "pe": 2,
}


def state_dict_order(name: str) -> tuple[int, ...]:
    """Sort key putting names in the order of Ultralytics' `state_dict()` (modules in `__init__` order)."""
    return tuple(int(part) if part.isdigit() else MODULE_ORDER[part] for part in name.split(".")[1:])


@functools.cache
def _spec() -> tuple[tuple[str, tuple[int, ...]], ...]:
    p = Params()
    build(input_variable(STRIDES[-1]), p)
    return tuple(sorted(p.spec.items(), key=lambda item: state_dict_order(item[0])))


def yolo11n_state_dict_spec() -> dict[str, tuple[int, ...]]:
    """Name -> shape of the 418 state_dict tensors (no num_batches_tracked), in Ultralytics' state_dict order."""
    return dict(_spec())


def random_weights(seed: int = 0, gain: float = 1.0) -> dict[str, np.ndarray]:
    """Deterministic random YOLO11n weights (see `params.random_tensor` for the distributions).

    With PyTorch's default conv scale (`gain=1`) the input's influence fades
    layer by layer: at the output it is ~1e-8 of the spread, so the result is
    practically a constant of the weights. `gain=SIGNAL_GAIN` scales the conv
    weights so that the input still matters at the output (for numeric checks).
    """
    return random_weights_for(yolo11n_state_dict_spec(), seed, gain)


def yolo11n(weights=None, imgsz: int = 640, batch: int | None = 1):
    """YOLO11n as `(x, y)`: input images (batch, 3, imgsz, imgsz) float32, output (batch, 84, anchors).

    `batch=None` leaves the batch size unknown until run time (one symbolic dim,
    `images_dim0`, from the ONNX input to the output); the graph is otherwise the same.

    `weights`: mapping state_dict name -> array, a path to an `.npz` of them, or
    None for `random_weights(0)`. Output rows: box cx, cy, w, h in input pixels,
    then 80 class probabilities; anchors = sum((imgsz / s)^2 for s in 8, 16, 32).
    """
    x = input_variable(imgsz, batch)
    spec = yolo11n_state_dict_spec()
    weights = random_weights() if weights is None else load_weights(weights)
    check_weights(weights, spec, "YOLO11n")
    return x, build(x, Params(weights))
