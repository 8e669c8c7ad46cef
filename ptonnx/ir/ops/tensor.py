"""Tensor IR ops: Concat, Split, Softmax, MatMul, Reshape (ONNX names and meaning).

Axes are non-negative attributes (lifting normalises them). `Concat` takes any
number of inputs of one dtype: its schema is a `VariadicOpSchema`, and its type
rule insists on a single dtype because the registry's unification looks at
schema inputs position by position; lifting casts the inputs first. `Reshape`
has NumPy's meaning: `-1` is inferred, `0` is a dimension of size zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ptonnx.errors import TypeRuleError
from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir.registry import OpSchema, register
from ptonnx.ir.types import ALL_DTYPES, FLOAT_DTYPES, Dim, TensorType, broadcast_shapes, promote

#: dtypes NumPy's matmul takes (lowering computes the integers onnxruntime lacks in int64)
MATMUL_DTYPES = ALL_DTYPES


@attrs.frozen
class VariadicOpSchema(OpSchema):
    """A schema whose single input type variable applies to any number (>= `min_inputs`) of inputs."""

    min_inputs: int = 1

    def vars_of_inputs(self, n: int) -> tuple[str, ...]:
        if n < self.min_inputs:
            raise TypeRuleError(f"{self.name} takes at least {self.min_inputs} input(s), got {n}")
        return self.inputs[:1] * n




def _check_axis(op: str, axis, ndim: int) -> None:
    _need(isinstance(axis, int) and 0 <= axis < ndim, op, lambda: f"axis {axis!r} must be in [0, {ndim})")


def _concat_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    first = types[0]
    axis = a["axis"]
    _check_axis("Concat", axis, first.ndim)
    dtypes = sorted({t.dtype for t in types})
    _need(len(dtypes) == 1, "Concat", lambda: f"inputs must share one dtype, got {dtypes}; cast them first")
    _need(all(t.ndim == first.ndim for t in types), "Concat", lambda: f"inputs differ in rank: {[str(t) for t in types]}")
    shape = list(first.shape)
    for t in types[1:]:
        for i, d in enumerate(t.shape):
            if i == axis:
                continue
            if isinstance(shape[i], int) and isinstance(d, int):
                _need(shape[i] == d, "Concat", lambda: f"axis {i} sizes differ: {[str(t) for t in types]}")
            elif not isinstance(shape[i], int):
                shape[i] = d if isinstance(d, int) else shape[i]
    along = [t.shape[axis] for t in types]
    shape[axis] = sum(along) if all(isinstance(d, int) for d in along) else None
    return [first.with_shape(tuple(shape))]


def _split_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (x,) = types
    axis, split = a["axis"], a["split"]
    _check_axis("Split", axis, x.ndim)
    _need(
        isinstance(split, tuple) and split and all(isinstance(s, int) and s >= 0 for s in split),
        "Split",
        lambda: f"split must be a non-empty tuple of sizes >= 0, got {split!r}",
    )
    size = x.shape[axis]
    if isinstance(size, int):
        _need(sum(split) == size, "Split", lambda: f"sizes {split} do not add up to axis {axis} of {x}")
    return [x.with_shape(x.shape[:axis] + (s,) + x.shape[axis + 1 :]) for s in split]


def _split(x, axis, split):
    return tuple(np.split(x, np.cumsum(split)[:-1], axis=axis))


def _softmax_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (x,) = types
    _check_axis("Softmax", a["axis"], x.ndim)
    return [x]


def _softmax(x, axis):
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


def _reshape_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (x,) = types
    shape = a["shape"]
    _need(
        isinstance(shape, tuple) and all(isinstance(d, int) and d >= -1 for d in shape) and shape.count(-1) <= 1,
        "Reshape",
        lambda: f"shape must be a tuple of ints >= -1 with at most one -1, got {shape!r}",
    )
    _need(not (-1 in shape and 0 in shape), "Reshape", lambda: f"shape {shape} cannot infer -1 next to a zero-sized axis")
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if not x.is_static:
        return [x.with_shape(tuple(None if d == -1 else d for d in shape))]
    total = int(np.prod(x.shape, dtype=np.int64))
    if -1 in shape:
        _need(known > 0 and total % known == 0, "Reshape", lambda: f"cannot reshape {x} to {shape}")
        shape = tuple(total // known if d == -1 else d for d in shape)
    _need(int(np.prod(shape, dtype=np.int64)) == total, "Reshape", lambda: f"cannot reshape {x} ({total} elements) to {shape}")
    return [x.with_shape(shape)]


register(
    VariadicOpSchema(
        name="Concat",
        inputs=("T",),
        outputs=("T",),
        constraints={"T": ALL_DTYPES},
        type_rule=_concat_rule,
        semantics=lambda *xs, axis: np.concatenate(xs, axis=axis),
        attributes={"axis": (int, attrs.NOTHING)},
        family="tensor",
        layout_only=True,
        doc="join inputs of one dtype along `axis`",
    )
)

#: name -> (input vars, allowed dtypes, type rule, semantics, attributes, layout_only, doc)
TENSOR_OPS: dict[str, tuple] = {
    "Split": (("T",), ALL_DTYPES, _split_rule, _split, {"axis": (int, attrs.NOTHING), "split": (tuple, attrs.NOTHING)}, True, "cut `axis` into pieces of the given sizes"),
    "Softmax": (("T",), FLOAT_DTYPES, _softmax_rule, _softmax, {"axis": (int, attrs.NOTHING)}, False, "exp(x - max) / sum along one axis"),
    "MatMul": (("T", "T"), MATMUL_DTYPES, _matmul_rule, _matmul, {}, False, "NumPy matmul: batched, broadcasting, 1-D operands promoted"),
    "Reshape": (("T",), ALL_DTYPES, _reshape_rule, lambda x, shape: np.reshape(x, shape), {"shape": (tuple, attrs.NOTHING)}, True, "NumPy reshape to a constant shape"),
}

for _name, (_inputs, _allowed, _rule, _fn, _attrs, _layout, _doc) in TENSOR_OPS.items():
    register(
        OpSchema(
            name=_name,
            inputs=_inputs,
            outputs=("T",),
            constraints={"T": _allowed},
            type_rule=_rule,
            semantics=_fn,
            attributes=_attrs,
            family="tensor",
            layout_only=_layout,
            doc=_doc,
        )
    )
