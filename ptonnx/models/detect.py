"""The YOLO11 `Detect` head (legacy=False) with DFL decoding, eval-mode output (B, 4 + nc, anchors).

Anchors and strides depend only on the static feature-map sizes, so they enter
the graph as constants, exactly as Ultralytics caches them per input shape.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from ptonnx.models.blocks import channels, conv, conv2d_bias, reshape_batch, spatial
from ptonnx.models.params import as_params
from ptonnx.nn import conv2d


def make_anchors(sizes, strides, offset: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Anchor points (2, A) as (x + offset, y + offset), row-major per level, and their strides (A,)."""
    points, stride_per_point = [], []
    for (h, w), s in zip(sizes, strides, strict=True):
        sy, sx = np.meshgrid(np.arange(h, dtype=np.float32) + offset, np.arange(w, dtype=np.float32) + offset, indexing="ij")
        points.append(np.stack([sx.ravel(), sy.ravel()]))
        stride_per_point.append(np.full(h * w, s, dtype=np.float32))
    return np.concatenate(points, axis=1), np.concatenate(stride_per_point)


def dfl(x, p, prefix: str, reg_max: int = 16):
    """`DFL`: per box side, the expectation of softmax(logits) under the (frozen) 1x1 conv weights."""
    b, a = reshape_batch(x), int(x.type.shape[2])
    w = as_params(p)(f"{prefix}.conv.weight", (1, reg_max, 1, 1))
    probs = pt.special.softmax(x.reshape((b, 4, reg_max, a)).transpose(0, 2, 1, 3), axis=1)  # (B, reg_max, 4, A)
    return conv2d(probs, w).reshape((b, 4, a))


def dist2bbox(distance, anchors):
    """(l, t, r, b) distances along axis 1 -> (cx, cy, w, h), in grid units."""
    lt, rb = pt.split(distance, [2, 2], axis=1)
    x1y1 = anchors - lt
    x2y2 = anchors + rb
    return pt.concatenate([(x1y1 + x2y2) / np.float32(2), x2y2 - x1y1], axis=1)


def detect(feats, p, prefix: str, nc: int = 80, reg_max: int = 16, strides=(8, 16, 32)):
    """`Detect(nc, reg_max, ch)` on the P3/P4/P5 maps: rows 0-3 boxes (cx, cy, w, h in pixels), then class scores."""
    p = as_params(p)
    ch = [channels(f) for f in feats]
    c2, c3 = max(16, ch[0] // 4, reg_max * 4), max(ch[0], min(nc, 100))
    boxes, scores, sizes = [], [], []
    for i, (x, ci) in enumerate(zip(feats, ch, strict=True)):
        b, (h, w) = reshape_batch(x), spatial(x)
        sizes.append((h, w))
        box = conv(conv(x, p, f"{prefix}.cv2.{i}.0", c2, 3), p, f"{prefix}.cv2.{i}.1", c2, 3)
        box = conv2d_bias(box, p, f"{prefix}.cv2.{i}.2", 4 * reg_max)
        cls = conv(x, p, f"{prefix}.cv3.{i}.0.0", ci, 3, g=ci)  # DWConv: groups = gcd(ci, ci)
        cls = conv(cls, p, f"{prefix}.cv3.{i}.0.1", c3)
        cls = conv(cls, p, f"{prefix}.cv3.{i}.1.0", c3, 3, g=c3)  # DWConv
        cls = conv(cls, p, f"{prefix}.cv3.{i}.1.1", c3)
        cls = conv2d_bias(cls, p, f"{prefix}.cv3.{i}.2", nc)
        boxes.append(box.reshape((b, 4 * reg_max, h * w)))
        scores.append(cls.reshape((b, nc, h * w)))
    anchors, stride = make_anchors(sizes, strides)
    anchors = pt.constant(anchors[None], name=f"{prefix}.anchors")  # (1, 2, A)
    stride = pt.constant(stride[None, None], name=f"{prefix}.strides")  # (1, 1, A)
    dist = dfl(pt.concatenate(boxes, axis=-1), p, f"{prefix}.dfl", reg_max)
    dbox = dist2bbox(dist, anchors) * stride
    y = pt.concatenate([dbox, pt.sigmoid(pt.concatenate(scores, axis=-1))], axis=1)
    y.name = prefix
    return y
