"""Built-in example graphs for the command line: each returns (inputs, outputs, sample arrays)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def elementwise(batch: int = 4):
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
    return [x, i], [affine, gate, scaled, floor_mod], arrays


#: name -> builder; the first is the default
EXAMPLES: dict[str, Callable] = {
    "elementwise": elementwise,
}
