"""Reductions (ONNX names; NumPy's meaning): ReduceSum, ReduceProd, ReduceMax,
ReduceMin, ReduceAll, ReduceAny over `axes`, and ArgMax along one axis.

The result has the input's dtype (PyTensor's `dtype`/`acc_dtype` are Casts made
at lifting). NaN propagates through Max/Min and ArgMax points at the first NaN,
as in NumPy. A reduction over no axes is its input (as PyTensor's). Max, Min and
ArgMax of an empty slice are errors in NumPy; lifting guards PyTensor's with a `Check`.
The IR's float Max and Min of an empty slice are -inf and inf, their identities, as
onnxruntime gives (softmax over an empty axis reads them); integers' raise. Axes are sorted, distinct and non-negative: they
decide the result's rank, so they are attributes (see `ptonnx.ir.schema`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.ir import dims
from ptonnx.ir import range_rules as rr
from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir.schema import define
from ptonnx.ir.types import ALL_DTYPES, NUMERIC_DTYPES, TensorType



def reduced_shape(op: str, x: TensorType, axes: tuple, keepdims: bool) -> tuple:
    _need(list(axes) == sorted(set(axes)) and all(0 <= a < x.ndim for a in axes), op,
          lambda: f"axes {axes} must be sorted, distinct and in [0, {x.ndim})")
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return tuple(d for i, d in enumerate(x.shape) if i not in axes)


#: Max and Min of an empty float slice: -inf and inf, their identities (onnxruntime's too)
EMPTY_FLOAT = {np.maximum: -np.inf, np.minimum: np.inf}


def _reduction(op: str, ufunc):
    def rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
        (x,) = types
        return [x.with_shape(reduced_shape(op, x, a["axes"], a["keepdims"]))]

    def semantics(x, axes, keepdims):
        if not axes:  # the input itself (NumPy's add.reduce over no axes adds 0: -0.0 would become +0.0)
            return np.array(x, copy=True)
        extra = {}
        if ufunc in EMPTY_FLOAT and x.dtype.kind == "f" and any(x.shape[a] == 0 for a in axes):
            extra["initial"] = EMPTY_FLOAT[ufunc]  # an empty slice: the identity, as onnxruntime
        with np.errstate(all="ignore"):
            return np.asarray(ufunc.reduce(x, axis=axes, keepdims=keepdims, **extra), dtype=x.dtype)

    return rule, semantics


def reduction(op: str, *, ufunc, dtypes: frozenset[str], contents=None, ranges=None, zero_sign=()):
    """A reduction over `axes`: NumPy's `ufunc.reduce`, in the input's dtype."""
    rule, semantics = _reduction(op, ufunc)
    define(op, contents=contents, ranges=ranges, zero_sign=zero_sign, inputs=("x: T",), outputs=("out: T",), dtypes={"T": dtypes}, type_rule=rule, semantics=semantics,
           attributes={"axes": (tuple, ()), "keepdims": (bool, False)}, traits=("batchable", "reduces_axes"), family="reduction",
           doc=f"NumPy's `{ufunc.__name__}.reduce` over `axes`")


# a sum over some axes starts from +0.0: -0.0 + -0.0 + ... is +0.0, as NumPy's
reduction("ReduceSum", ufunc=np.add, dtypes=NUMERIC_DTYPES, zero_sign=("blind",))
reduction("ReduceProd", ufunc=np.multiply, dtypes=NUMERIC_DTYPES, contents=dims.product_contents)
reduction("ReduceMax", ufunc=np.maximum, dtypes=ALL_DTYPES)
reduction("ReduceMin", ufunc=np.minimum, dtypes=ALL_DTYPES)
reduction("ReduceAll", ufunc=np.logical_and, dtypes=frozenset({"bool"}), ranges=rr.quantifier("ReduceAll"))
reduction("ReduceAny", ufunc=np.logical_or, dtypes=frozenset({"bool"}), ranges=rr.quantifier("ReduceAny"))


def _argmax_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (x,) = types
    _need(a["nan"] in ("first", "inf"), "ArgMax", lambda: f"nan {a['nan']!r} is not 'first' or 'inf'")
    shape = reduced_shape("ArgMax", x, (a["axis"],), a["keepdims"])
    return [TensorType("int64", shape)]


def _argmax(x, axis, keepdims, nan):
    if nan == "inf" and x.dtype.kind == "f":  # NaN ranks as +inf: the first NaN or +inf
        x = np.where(np.isnan(x), np.inf, x)
    return np.argmax(x, axis=axis, keepdims=keepdims).astype(np.int64)


define("ArgMax", inputs=("x: T",), outputs=("out: int64",), dtypes={"T": ALL_DTYPES}, type_rule=_argmax_rule,
       semantics=_argmax, attributes={"axis": (int, 0), "keepdims": (bool, False), "nan": (str, "first")}, traits=("batchable",),
       family="reduction",
       doc="index of the first largest element along `axis` (the first NaN, if any; with nan 'inf', NaN ranks as +inf)")
