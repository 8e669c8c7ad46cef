"""Indexing IR ops: Slice and Gather (ONNX names; NumPy's meaning).

`Slice` bounds are int64 inputs, one entry per axis in `axes`, read as Python
slices: negative starts and ends count from the end, out-of-range bounds clamp,
and a negative step walks backwards (opset 18's Slice does exactly that; the
"from the end" sentinels are INT64_MAX/INT64_MIN). `Gather` takes integer
indices along one axis; negative ones count from the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.ir import dims
from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir import range_rules as rr
from ptonnx.ir.schema import REQUIRED, define
from ptonnx.ir.types import ALL_DTYPES, TensorType

INDEX_DTYPES = frozenset({"int32", "int64"})
INT64_MIN, INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)


def _slice_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    x = types[0]
    axes = a["axes"]
    _need(len(set(axes)) == len(axes) and all(0 <= ax < x.ndim for ax in axes), "Slice",
          lambda: f"axes {axes} must be distinct and in [0, {x.ndim})")
    bounds = []
    for port, t in zip(("starts", "ends", "steps"), types[1:], strict=True):
        _need(t.ndim == 1 and t.shape[0] in (len(axes), None), "Slice", lambda: f"{port} must be 1-D with {len(axes)} entries, got {t}")
        c = a[port]
        bounds.append(c if isinstance(c, tuple) else (None,) * len(axes))
    shape = list(x.shape)
    for ax, start, end, step in zip(axes, *bounds, strict=True):
        _need(step != 0, "Slice", "a step of 0")
        known = all(isinstance(v, int) for v in (x.shape[ax], start, end, step))
        whole = (step == 1 and start in (0, INT64_MIN) and end == INT64_MAX) or (step == -1 and start == INT64_MAX and end == INT64_MIN)
        shape[ax] = len(range(x.shape[ax])[slice(start, end, step)]) if known else (x.shape[ax] if whole else None)
    return [x.with_shape(tuple(shape))]


def _slice(x, starts, ends, steps, axes):
    index = [slice(None)] * x.ndim
    for ax, start, end, step in zip(axes, starts.tolist(), ends.tolist(), steps.tolist(), strict=True):
        index[ax] = slice(start, end, step)
    return x[tuple(index)].copy()


def _gather_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    x, idx = types
    axis = a["axis"]
    _need(0 <= axis < x.ndim, "Gather", lambda: f"axis {axis} must be in [0, {x.ndim})")
    return [x.with_shape(x.shape[:axis] + idx.shape + x.shape[axis + 1 :])]


define("Slice", ranges=rr.same, contents=dims.slice_contents, inputs=("x: T", "starts: int64", "ends: int64", "steps: int64"), outputs=("out: T",),
       dtypes={"T": ALL_DTYPES}, type_rule=_slice_rule, semantics=_slice, reads=("starts", "ends", "steps"),
       attributes={"axes": (tuple, REQUIRED)}, traits=("layout", "batchable", "copies"), family="indexing",
       doc="Python slicing start:end:step along each of `axes`")
define("Gather", ranges=rr.same, contents=dims.gather_contents, inputs=("x: T", "indices: Tind"), outputs=("out: T",), dtypes={"T": ALL_DTYPES, "Tind": INDEX_DTYPES},
       type_rule=_gather_rule, semantics=lambda x, indices, axis: np.take(x, indices, axis=axis),
       attributes={"axis": (int, REQUIRED)}, traits=("layout", "batchable", "copies"), family="indexing",
       doc="take `indices` along `axis` (negative ones count from the end)")


def _nonzero_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (x,) = types
    _need(x.ndim >= 1, "NonZero", "a 0-D mask has no axis to index")
    return [TensorType("int64", (x.ndim, None))]


def _scatter_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    x, positions, updates = types
    _need(a["reduction"] in ("none", "add"), "ScatterFlat", lambda: f"reduction {a['reduction']!r} is not 'none' or 'add'")
    _need(positions.ndim == updates.ndim and all(p is None or u is None or p == u for p, u in zip(positions.shape, updates.shape, strict=True)),
          "ScatterFlat", lambda: f"positions {positions} and updates {updates} must have one shape")
    return [x]


def _scatter(x, positions, updates, reduction):
    out = x.copy().reshape(-1)
    if reduction == "add":
        np.add.at(out, positions.reshape(-1), updates.reshape(-1))
    else:
        out[positions.reshape(-1)] = updates.reshape(-1)  # a repeated position keeps the last write, as NumPy's
    return out.reshape(x.shape)


define("NonZero", inputs=("x: bool",), outputs=("out: int64",), dtypes={}, type_rule=_nonzero_rule,
       semantics=lambda x: np.asarray(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1), family="indexing",
       doc="the indices of the true elements, one row per axis (NumPy's nonzero, stacked)")
define("ScatterFlat", inputs=("x: T", "positions: int64", "updates: T"), outputs=("out: T",), dtypes={"T": ALL_DTYPES},
       type_rule=_scatter_rule, semantics=_scatter, attributes={"reduction": (str, "none")}, family="indexing",
       doc="x with the elements at flat (C-order) `positions` set to `updates` (the last of repeats wins), "
           "or incremented by them (`add`: repeats accumulate, as np.add.at)")
