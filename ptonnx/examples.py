"""Built-in example graphs for the command line.

Each builder returns an `Example`: the PyTensor inputs and outputs, sample
input arrays, and the tolerance its ONNX-vs-PyTensor check uses.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np


@attrs.frozen
class Example:
    name: str
    description: str
    inputs: list
    outputs: list
    arrays: list
    rtol: float = 1e-5
    atol: float = 1e-6


def yolo11n(imgsz: int = 640, weights=None, **_) -> Example:
    """YOLO11n at imgsz x imgsz; random weights scaled so the image stays visible at the output."""
    from ptonnx.models import SIGNAL_GAIN, random_weights
    from ptonnx.models import yolo11n as build

    source = weights if weights is not None else random_weights(0, SIGNAL_GAIN)
    x, y = build(source, imgsz=imgsz)
    image = np.random.default_rng(0).uniform(0, 1, (1, 3, imgsz, imgsz)).astype(np.float32)
    what = f"weights from {weights}" if isinstance(weights, str) else f"random weights (seed 0, gain {SIGNAL_GAIN:g})"
    # Boxes are in pixels; float32 rounding through 88 convs reaches ~4e-3 px.
    return Example("yolo11n", f"YOLO11n {imgsz}x{imgsz}, {what}", [x], [y], [image], rtol=1e-3, atol=2e-2)


def elementwise(batch: int = 4, **_) -> Example:
    """Elementwise math with Python literals, mixed dtypes, a constant subexpression and a switch."""
    import pytensor.tensor as pt

    x = pt.matrix("x", dtype="float32")
    i = pt.matrix("i", dtype="int32")
    affine = ((x * 2) + 3) / 4
    affine.name = "affine"
    gate = pt.switch(x > 0, pt.tanh(x), pt.sigmoid(x) * 0.5)
    gate.name = "gate"
    scale = pt.exp(pt.constant(np.float32(1.0))) * pt.constant(np.float32(0.5))  # folded at compile time
    scaled = x * scale
    scaled.name = "scaled"
    floor_mod = i // 3 + i % 3
    floor_mod.name = "floor_mod"
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(batch, 8)).astype(np.float32), rng.integers(-20, 20, size=(batch, 8)).astype(np.int32)]
    return Example("elementwise", "elementwise math with literals and mixed dtypes", [x, i], [affine, gate, scaled, floor_mod], arrays)


#: name -> builder; the first is the default
EXAMPLES: dict[str, Callable[..., Example]] = {
    "yolo11n": yolo11n,
    "elementwise": elementwise,
}
