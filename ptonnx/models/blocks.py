"""YOLO11 building blocks (Ultralytics 8.4.190 `nn/modules`) as PyTensor graph builders.

Each builder takes a PyTensor input `x` (NCHW; static C, H, W, the batch may be None), a weights source
`p` (a `Params` or a mapping name -> array; see `ptonnx.models.params`), the
state_dict `prefix` of the module and the constructor arguments that are not
implied by `x`. It returns the block's output. The forward passes follow
`shared/yolo11n/ARCH.md` line by line; only `ptonnx.nn` ops and standard
PyTensor ops are used, so the graph stays simple to export.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from ptonnx.models.params import as_params
from ptonnx.nn import batch_norm, conv2d, max_pool2d, silu
from ptonnx.nn import upsample as _resize

#: Ultralytics' `initialize_weights` sets every BatchNorm2d to this eps.
BN_EPS = 1e-3


def channels(x) -> int:
    c = x.type.shape[1]
    if c is None:
        raise ValueError(f"{x} needs a static channel count; build the input with a static shape")
    return int(c)


def reshape_batch(x) -> int:
    """`x`'s batch size as a reshape target entry: the static size, or -1 (inferred) when unknown.

    -1 keeps the reshape target a constant, so an unknown batch costs no Shape ops
    and the graph is the same as for a static batch.
    """
    b = x.type.shape[0]
    return -1 if b is None else int(b)


def spatial(x) -> tuple[int, int]:
    """`x`'s static (H, W); the reshapes of attention and Detect need them."""
    h, w = x.type.shape[2:]
    if h is None or w is None:
        raise ValueError(f"{x} needs a static height and width; build the input with a static image size")
    return int(h), int(w)


def _named(y, name: str):
    y.name = name
    return y


def conv(x, p, prefix: str, c2: int, k: int = 1, s: int = 1, g: int = 1, act: bool = True):
    """`Conv`: SiLU(BN(conv(x))) with padding k//2, no conv bias; `act=False` drops the SiLU."""
    p, c1 = as_params(p), channels(x)
    w = p(f"{prefix}.conv.weight", (c2, c1 // g, k, k))
    stats = [p(f"{prefix}.bn.{n}", (c2,)) for n in ("weight", "bias", "running_mean", "running_var")]
    y = batch_norm(conv2d(x, w, stride=s, padding=k // 2, groups=g), *stats, eps=BN_EPS)
    return _named(silu(y) if act else y, prefix)


#: public name for benchmarks: one Conv block (conv + BN + SiLU)
conv_block = conv


def conv2d_bias(x, p, prefix: str, c2: int, k: int = 1):
    """Plain `nn.Conv2d(c1, c2, k)` with bias and padding 0 (the last conv of each Detect branch)."""
    p, c1 = as_params(p), channels(x)
    w = p(f"{prefix}.weight", (c2, c1, k, k))
    b = p(f"{prefix}.bias", (c2,))
    return _named(conv2d(x, w, b), prefix)


def bottleneck(x, p, prefix: str, c2: int, shortcut: bool = True, k=(3, 3), e: float = 0.5):
    """`Bottleneck`: cv2(cv1(x)) (+ x when shortcut and c1 == c2)."""
    c1, c_ = channels(x), int(c2 * e)
    y = conv(x, p, f"{prefix}.cv1", c_, k[0])
    y = conv(y, p, f"{prefix}.cv2", c2, k[1])
    return _named(x + y if shortcut and c1 == c2 else y, prefix)


def c3k(x, p, prefix: str, c2: int, n: int = 2, shortcut: bool = True, e: float = 0.5):
    """`C3k`: cv3(cat(m(cv1(x)), cv2(x))) with n 3x3 bottlenecks (e=1.0); the m-branch comes first."""
    c_ = int(c2 * e)
    a = conv(x, p, f"{prefix}.cv1", c_)
    for i in range(n):
        a = bottleneck(a, p, f"{prefix}.m.{i}", c_, shortcut, e=1.0)
    b = conv(x, p, f"{prefix}.cv2", c_)
    return _named(conv(pt.concatenate([a, b], axis=1), p, f"{prefix}.cv3", c2), prefix)


def c3k2(x, p, prefix: str, c2: int, n: int = 1, use_c3k: bool = False, e: float = 0.5, shortcut: bool = True):
    """`C3k2` (C2f forward): chunk cv1(x) in two, chain n blocks (C3k or Bottleneck) on the last chunk, cv2 over all."""
    c = int(c2 * e)
    ys = list(pt.split(conv(x, p, f"{prefix}.cv1", 2 * c), [c, c], axis=1))
    for i in range(n):
        inner = c3k(ys[-1], p, f"{prefix}.m.{i}", c, 2, shortcut) if use_c3k else bottleneck(ys[-1], p, f"{prefix}.m.{i}", c, shortcut)
        ys.append(inner)
    return _named(conv(pt.concatenate(ys, axis=1), p, f"{prefix}.cv2", c2), prefix)


def sppf(x, p, prefix: str, c2: int, k: int = 5):
    """`SPPF` (YOLO11: cv1 activated): cv2(cat(y, m(y), m(m(y)), m(m(m(y))))) with y = cv1(x)."""
    c_ = channels(x) // 2
    ys = [conv(x, p, f"{prefix}.cv1", c_)]
    for _ in range(3):
        ys.append(max_pool2d(ys[-1], k, stride=1, padding=k // 2))
    return _named(conv(pt.concatenate(ys, axis=1), p, f"{prefix}.cv2", c2), prefix)


def attention(x, p, prefix: str, num_heads: int, attn_ratio: float = 0.5):
    """`Attention`: per head [q | k | v] channels of qkv(x), softmax over keys, plus pe(v) positional term."""
    b, dim, (h, w) = reshape_batch(x), channels(x), spatial(x)
    head_dim = dim // num_heads
    key_dim = int(head_dim * attn_ratio)
    scale = np.float32(key_dim**-0.5)
    n = h * w
    qkv = conv(x, p, f"{prefix}.qkv", dim + 2 * key_dim * num_heads, act=False)
    qkv = qkv.reshape((b, num_heads, 2 * key_dim + head_dim, n))
    q, k, v = pt.split(qkv, [key_dim, key_dim, head_dim], axis=2)
    attn = pt.special.softmax(pt.matmul((q * scale).transpose(0, 1, 3, 2), k), axis=-1)  # (B, heads, N, N)
    y = pt.matmul(v, attn.transpose(0, 1, 3, 2)).reshape((b, dim, h, w))
    y = y + conv(v.reshape((b, dim, h, w)), p, f"{prefix}.pe", dim, 3, g=dim, act=False)
    return _named(conv(y, p, f"{prefix}.proj", dim, act=False), prefix)


def psa_block(x, p, prefix: str, attn_ratio: float = 0.5, num_heads: int = 4, shortcut: bool = True):
    """`PSABlock`: x + attn(x), then + ffn (Conv 1x1 to 2c with SiLU, Conv 1x1 back without)."""
    c = channels(x)
    y = attention(x, p, f"{prefix}.attn", num_heads, attn_ratio)
    x = x + y if shortcut else y
    y = conv(conv(x, p, f"{prefix}.ffn.0", 2 * c), p, f"{prefix}.ffn.1", c, act=False)
    return _named(x + y if shortcut else y, prefix)


def c2psa(x, p, prefix: str, c2: int, n: int = 1, e: float = 0.5):
    """`C2PSA`: split cv1(x) into (a, b), run n PSABlocks on b, cv2(cat(a, b))."""
    c = int(channels(x) * e)
    a, b = pt.split(conv(x, p, f"{prefix}.cv1", 2 * c), [c, c], axis=1)
    for i in range(n):
        b = psa_block(b, p, f"{prefix}.m.{i}", attn_ratio=0.5, num_heads=max(c // 64, 1))
    return _named(conv(pt.concatenate([a, b], axis=1), p, f"{prefix}.cv2", c2), prefix)


def upsample(x, scale: int = 2):
    """`nn.Upsample(None, scale, "nearest")`."""
    return _resize(x, scale_factor=scale, mode="nearest")


def concat(xs):
    """`Concat(dim=1)` in the given order."""
    return pt.concatenate(list(xs), axis=1)
