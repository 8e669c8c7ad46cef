"""Standalone graphs of single YOLO11n blocks, at their real place and size in the network, for benchmarks.

Each block keeps its state_dict prefix and gets the same random weights as
`random_weights(seed)` gives the whole model (the initialisation is seeded per name).
"""

from __future__ import annotations

import pytensor.tensor as pt

from ptonnx.models.blocks import c2psa, c3k2, conv, sppf
from ptonnx.models.errors import ModelArgumentError
from ptonnx.models.params import Params, random_weights_for
from ptonnx.models.yolo11n import check_size, yolo11n_state_dict_spec

#: name -> (state_dict prefix, input channels, input stride w.r.t. the image, builder(x, p, prefix))
BLOCKS = {
    "conv": ("model.1", 16, 2, lambda x, p, prefix: conv(x, p, prefix, 32, 3, 2)),
    "c3k2": ("model.2", 32, 4, lambda x, p, prefix: c3k2(x, p, prefix, 64, 1, False, e=0.25)),
    "c3k2_c3k": ("model.6", 128, 16, lambda x, p, prefix: c3k2(x, p, prefix, 128, 1, True)),
    "sppf": ("model.9", 256, 32, lambda x, p, prefix: sppf(x, p, prefix, 256, 5)),
    "c2psa": ("model.10", 256, 32, lambda x, p, prefix: c2psa(x, p, prefix, 256, 1)),
}


def block_graph(name: str, imgsz: int = 640, seed: int = 0, batch: int | None = 1, gain: float = 1.0):
    """(x, y) for block `name` of YOLO11n run on an `imgsz` image, e.g. "sppf" -> x of shape (1, 256, 20, 20) at 640.

    The weights are `random_weights(seed, gain)` restricted to the block.
    """
    if name not in BLOCKS:
        raise ModelArgumentError(f"unknown block {name!r}; choose one of {sorted(BLOCKS)}")
    check_size(imgsz, batch)
    prefix, c_in, stride, builder = BLOCKS[name]
    spec = {k: v for k, v in yolo11n_state_dict_spec().items() if k.startswith(prefix + ".")}
    x = pt.tensor("x", dtype="float32", shape=(batch, c_in, imgsz // stride, imgsz // stride))
    p = Params(random_weights_for(spec, seed, gain))
    y = builder(x, p, prefix)
    if p.spec != spec:
        raise RuntimeError(f"builder bug: block {name!r} used {sorted(set(p.spec) ^ set(spec))} differently from the model spec")
    return x, y
