"""Slow, loop-by-loop reference implementations of the CNN ops, for tiny inputs.

Written from the definitions (PyTorch's documented semantics), independently of
`ptonnx.ir.ops.nn_kernels`: every output element is computed on its own,
accumulating in float64.
"""

from __future__ import annotations

import math

import numpy as np


def conv2d(x, w, b=None, stride=(1, 1), pads=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    top, left, bottom, right = pads
    oh = (h + top + bottom - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + left + right - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow))
    for ni in range(n):
        for oc in range(o):
            g = oc // og
            for y in range(oh):
                for xq in range(ow):
                    acc = 0.0 if b is None else float(b[oc])
                    for ci in range(cg):
                        for i in range(kh):
                            for j in range(kw):
                                yy = y * stride[0] - top + i * dilation[0]
                                xx = xq * stride[1] - left + j * dilation[1]
                                if 0 <= yy < h and 0 <= xx < wd:
                                    acc += float(x[ni, g * cg + ci, yy, xx]) * float(w[oc, ci, i, j])
                    out[ni, oc, y, xq] = acc
    return out.astype(x.dtype)


def window_starts(size, k, stride, begin, end, ceil_mode):
    """Window starts in input coordinates (may be negative = in the begin padding).

    floor mode: slide while the next window fits in the padded input. ceil mode:
    slide while the current window has not reached the padded end, then drop
    windows that start in the end padding.
    """
    padded = size + begin + end
    starts = [0]
    while True:
        nxt = starts[-1] + stride
        if ceil_mode and starts[-1] + k < padded:
            starts.append(nxt)
        elif not ceil_mode and nxt + k <= padded:
            starts.append(nxt)
        else:
            break
    if ceil_mode:
        starts = [s for s in starts if s < begin + size]
    return [s - begin for s in starts]


def pool2d(x, mode, kernel, stride, pads=(0, 0, 0, 0), ceil_mode=False, count_include_pad=False):
    n, c, h, w = x.shape
    top, left, bottom, right = pads
    rows = window_starts(h, kernel[0], stride[0], top, bottom, ceil_mode)
    cols = window_starts(w, kernel[1], stride[1], left, right, ceil_mode)
    out = np.zeros((n, c, len(rows), len(cols)))
    for ni in range(n):
        for ci in range(c):
            for a, r in enumerate(rows):
                for bq, s in enumerate(cols):
                    values, padded_count = [], 0
                    for yy in range(r, r + kernel[0]):
                        for xx in range(s, s + kernel[1]):
                            if -top <= yy < h + bottom and -left <= xx < w + right:
                                padded_count += 1
                            if 0 <= yy < h and 0 <= xx < w:
                                values.append(float(x[ni, ci, yy, xx]))
                    if mode == "max":
                        out[ni, ci, a, bq] = max(values)
                    else:
                        out[ni, ci, a, bq] = sum(values) / (padded_count if count_include_pad else len(values))
    return out.astype(x.dtype)


def _source(i, in_size, out_size, scale, ctm):
    if ctm == "asymmetric":
        return i / scale
    if ctm == "half_pixel":
        return (i + 0.5) / scale - 0.5
    return 0.0 if out_size == 1 else i * (in_size - 1) / (out_size - 1)


def resize(x, out_hw, scales, mode, ctm):
    """Nearest (floor) or bilinear resize of H and W; `scales` as given or out / in."""
    n, c, h, w = x.shape
    oh, ow = out_hw
    out = np.zeros((n, c, oh, ow))

    def taps(i, size, out_size, scale):
        src = _source(i, size, out_size, scale, ctm)
        if mode == "nearest":
            return [(min(max(math.floor(src), 0), size - 1), 1.0)]
        src = min(max(src, 0.0), size - 1)
        lo = min(math.floor(src), size - 1)
        hi = min(lo + 1, size - 1)
        frac = src - lo
        return [(lo, 1.0 - frac), (hi, frac)]

    for y in range(oh):
        for xq in range(ow):
            acc = np.zeros((n, c))
            for yy, wy in taps(y, h, oh, scales[0]):
                for xx, wx in taps(xq, w, ow, scales[1]):
                    acc += wy * wx * x[:, :, yy, xx].astype(np.float64)
            out[:, :, y, xq] = acc
    return out.astype(x.dtype)


def batch_norm(x, gamma, beta, mean, var, eps):
    out = np.zeros(x.shape)
    for idx in np.ndindex(*x.shape):
        ch = idx[1]
        out[idx] = (float(x[idx]) - mean[ch]) / math.sqrt(var[ch] + eps) * gamma[ch] + beta[ch]
    return out.astype(x.dtype)


def silu(x):
    return np.vectorize(lambda v: v / (1.0 + math.exp(-v)) if v > -700 else 0.0)(x.astype(np.float64)).astype(x.dtype)
