"""An independent NumPy (float64) YOLO11n, written from ARCH.md's PyTorch forward passes.

It shares nothing with ptonnx.models but the weights dict, so a wrong split,
concat order, head layout or decoding shows up as a mismatch.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-3


def conv(x, w, b=None, stride=1, pad=0, groups=1):
    """Grouped cross-correlation, one einsum per kernel tap."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    xg = xp.reshape(n, groups, cg, *xp.shape[2:])
    wg = w.reshape(groups, o // groups, cg, kh, kw)
    out = np.zeros((n, groups, o // groups, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xg[..., i : i + stride * (oh - 1) + 1 : stride, j : j + stride * (ow - 1) + 1 : stride]
            out += np.einsum("goc,ngchw->ngohw", wg[..., i, j], patch)
    out = out.reshape(n, o, oh, ow)
    return out if b is None else out + b[None, :, None, None]


def silu(x):
    return x / (1 + np.exp(-x))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


class Ref:
    """The YOLO11n modules over a float64 copy of a weights dict."""

    def __init__(self, weights):
        self.w = {k: np.asarray(v, np.float64) for k, v in weights.items()}

    def Conv(self, x, p, k=1, s=1, g=1, act=True):
        w = self.w
        y = conv(x, w[f"{p}.conv.weight"], stride=s, pad=k // 2, groups=g)
        scale = w[f"{p}.bn.weight"] / np.sqrt(w[f"{p}.bn.running_var"] + EPS)
        y = (y - w[f"{p}.bn.running_mean"][None, :, None, None]) * scale[None, :, None, None] + w[f"{p}.bn.bias"][None, :, None, None]
        return silu(y) if act else y

    def Bottleneck(self, x, p, k=3):
        y = self.Conv(self.Conv(x, f"{p}.cv1", k), f"{p}.cv2", k)
        return x + y if x.shape[1] == y.shape[1] else y

    def C3k(self, x, p):
        a = self.Conv(x, f"{p}.cv1")
        a = self.Bottleneck(self.Bottleneck(a, f"{p}.m.0"), f"{p}.m.1")
        return self.Conv(np.concatenate([a, self.Conv(x, f"{p}.cv2")], 1), f"{p}.cv3")

    def C3k2(self, x, p, c3k):
        y = self.Conv(x, f"{p}.cv1")
        c = y.shape[1] // 2
        ys = [y[:, :c], y[:, c:]]
        ys.append(self.C3k(ys[-1], f"{p}.m.0") if c3k else self.Bottleneck(ys[-1], f"{p}.m.0"))
        return self.Conv(np.concatenate(ys, 1), f"{p}.cv2")

    def SPPF(self, x, p):
        ys = [self.Conv(x, f"{p}.cv1")]
        for _ in range(3):
            y = ys[-1]
            h, wd = y.shape[2:]
            yp = np.pad(y, ((0, 0), (0, 0), (2, 2), (2, 2)), constant_values=-np.inf)
            ys.append(np.max([yp[..., i : i + h, j : j + wd] for i in range(5) for j in range(5)], axis=0))
        return self.Conv(np.concatenate(ys, 1), f"{p}.cv2")

    def Attention(self, x, p, num_heads):
        b, c, h, wd = x.shape
        n, head_dim = h * wd, c // num_heads
        key_dim = head_dim // 2
        qkv = self.Conv(x, f"{p}.qkv", act=False).reshape(b, num_heads, 2 * key_dim + head_dim, n)
        q, k, v = qkv[:, :, :key_dim], qkv[:, :, key_dim : 2 * key_dim], qkv[:, :, 2 * key_dim :]
        attn = softmax(np.swapaxes(q * key_dim**-0.5, -1, -2) @ k, axis=-1)
        y = (v @ np.swapaxes(attn, -1, -2)).reshape(b, c, h, wd)
        y = y + self.Conv(v.reshape(b, c, h, wd), f"{p}.pe", 3, g=c, act=False)
        return self.Conv(y, f"{p}.proj", act=False)

    def C2PSA(self, x, p):
        y = self.Conv(x, f"{p}.cv1")
        c = y.shape[1] // 2
        a, b = y[:, :c], y[:, c:]
        b = b + self.Attention(b, f"{p}.m.0.attn", c // 64)
        b = b + self.Conv(self.Conv(b, f"{p}.m.0.ffn.0"), f"{p}.m.0.ffn.1", act=False)
        return self.Conv(np.concatenate([a, b], 1), f"{p}.cv2")

    def Detect(self, feats, p="model.23", strides=(8, 16, 32)):
        w = self.w
        boxes, scores, anchors, stride_row = [], [], [], []
        for i, (x, s) in enumerate(zip(feats, strides, strict=True)):
            bsz, ci, h, wd = x.shape
            bx = self.Conv(self.Conv(x, f"{p}.cv2.{i}.0", 3), f"{p}.cv2.{i}.1", 3)
            boxes.append(conv(bx, w[f"{p}.cv2.{i}.2.weight"], w[f"{p}.cv2.{i}.2.bias"]).reshape(bsz, 64, -1))
            cl = self.Conv(self.Conv(x, f"{p}.cv3.{i}.0.0", 3, g=ci), f"{p}.cv3.{i}.0.1")
            cl = self.Conv(self.Conv(cl, f"{p}.cv3.{i}.1.0", 3, g=cl.shape[1]), f"{p}.cv3.{i}.1.1")
            scores.append(conv(cl, w[f"{p}.cv3.{i}.2.weight"], w[f"{p}.cv3.{i}.2.bias"]).reshape(bsz, 80, -1))
            for y in range(h):
                for xx in range(wd):
                    anchors.append((xx + 0.5, y + 0.5))
                    stride_row.append(s)
        box, score = np.concatenate(boxes, -1), np.concatenate(scores, -1)
        bsz, a = box.shape[0], box.shape[-1]
        prob = softmax(box.reshape(bsz, 4, 16, a), axis=2)
        dist = np.einsum("nsja,j->nsa", prob, w[f"{p}.dfl.conv.weight"].ravel())
        anchor = np.array(anchors).T[None]  # (1, 2, A)
        x1y1, x2y2 = anchor - dist[:, :2], anchor + dist[:, 2:]
        dbox = np.concatenate([(x1y1 + x2y2) / 2, x2y2 - x1y1], 1) * np.array(stride_row)
        return np.concatenate([dbox, sigmoid(score)], 1)

    def model(self, x):
        up = lambda t: t.repeat(2, axis=2).repeat(2, axis=3)  # noqa: E731
        x = self.Conv(self.Conv(x, "model.0", 3, 2), "model.1", 3, 2)
        x4 = self.C3k2(self.Conv(self.C3k2(x, "model.2", False), "model.3", 3, 2), "model.4", False)
        x6 = self.C3k2(self.Conv(x4, "model.5", 3, 2), "model.6", True)
        x8 = self.C3k2(self.Conv(x6, "model.7", 3, 2), "model.8", True)
        x10 = self.C2PSA(self.SPPF(x8, "model.9"), "model.10")
        x13 = self.C3k2(np.concatenate([up(x10), x6], 1), "model.13", False)
        x16 = self.C3k2(np.concatenate([up(x13), x4], 1), "model.16", False)
        x19 = self.C3k2(np.concatenate([self.Conv(x16, "model.17", 3, 2), x13], 1), "model.19", False)
        x22 = self.C3k2(np.concatenate([self.Conv(x19, "model.20", 3, 2), x10], 1), "model.22", True)
        return self.Detect([x16, x19, x22])
