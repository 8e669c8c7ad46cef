"""Tensor IR ops: Softmax, MatMul (ONNX names and meaning; axes are non-negative attributes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.errors import TypeRuleError
from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir import range_rules as rr
from ptonnx.ir.schema import REQUIRED, define
from ptonnx.ir.types import ALL_DTYPES, FLOAT_DTYPES, Dim, TensorType, broadcast_shapes, promote

#: dtypes NumPy's matmul takes (lowering computes the integers onnxruntime lacks in int64)
MATMUL_DTYPES = ALL_DTYPES


def _check_axis(op: str, axis, ndim: int) -> None:
    _need(isinstance(axis, int) and 0 <= axis < ndim, op, lambda: f"axis {axis!r} must be in [0, {ndim})")


def _softmax_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (x,) = types
    _check_axis("Softmax", a["axis"], x.ndim)
    return [x]


def _softmax(x, axis):
    if x.shape[axis] == 0:  # no element to normalise: an empty result, as PyTensor's and onnxruntime's
        return x.copy()
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(x.dtype, copy=False)


def _matmul_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    x, y = types
    _need(x.ndim >= 1 and y.ndim >= 1, "MatMul", lambda: f"inputs must be at least 1-D, got {x} and {y}")
    xs = (1,) + x.shape if x.ndim == 1 else x.shape
    ys = y.shape + (1,) if y.ndim == 1 else y.shape
    k1, k2 = xs[-1], ys[-2]
    if isinstance(k1, int) and isinstance(k2, int):
        _need(k1 == k2, "MatMul", lambda: f"contracted sizes differ: {x} @ {y}")
    try:
        batch = broadcast_shapes(xs[:-2], ys[:-2])
    except TypeRuleError as exc:
        raise TypeRuleError(f"MatMul: batch axes of {x} and {y} do not broadcast: {exc}") from None
    shape: tuple[Dim, ...] = batch + (() if x.ndim == 1 else (xs[-2],)) + (() if y.ndim == 1 else (ys[-1],))
    return [TensorType(promote(x.dtype, y.dtype), shape)]


def _matmul(x, y):
    dtype = promote(x.dtype.name, y.dtype.name)
    return np.matmul(x.astype(dtype, copy=False), y.astype(dtype, copy=False))


define("Softmax", ranges=rr.unit_interval, inputs=("x: T",), outputs=("out: T",), dtypes={"T": FLOAT_DTYPES}, type_rule=_softmax_rule,
       semantics=_softmax, attributes={"axis": (int, REQUIRED)}, traits=("batchable", "mixes"), family="tensor",
       doc="exp(x - max) / sum along one axis")
define("MatMul", inputs=("a: T", "b: T"), outputs=("out: T",), dtypes={"T": MATMUL_DTYPES}, type_rule=_matmul_rule,
       semantics=_matmul, family="tensor", doc="NumPy matmul: batched, broadcasting, 1-D operands promoted")
