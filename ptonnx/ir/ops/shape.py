"""Layout IR ops: Transpose, Unsqueeze, Squeeze, Reshape, Expand, Shape, Concat, Split.

Axes and perms decide ranks, and ranks are static, so they are attributes
(non-negative: lifting normalises them). Sizes are int64 inputs: a reshape
target, an expand shape or split sizes may be computed at run time; the type
rules see their known contents (`ptonnx.ir.dims`), so a constant or a shape
read from a symbolic dim keeps the output type as precise as it can be.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.errors import TypeRuleError
from ptonnx.ir import dims
from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir import range_rules as rr
from ptonnx.ir.schema import REQUIRED, define
from ptonnx.ir.types import ALL_DTYPES, Dim, TensorType, broadcast_dims

INT64 = frozenset({"int64"})


def _check_axis(op: str, axis, ndim: int) -> None:
    _need(isinstance(axis, int) and 0 <= axis < ndim, op, lambda: f"axis {axis!r} must be in [0, {ndim})")


def _sized(op: str, t: TensorType, what: str) -> int:
    """The static length of a 1-D int64 size input."""
    _need(t.ndim == 1 and isinstance(t.shape[0], int), op, lambda: f"{what} must be 1-D with a static length, got {t}")
    return t.shape[0]


def _contents(a: Mapping[str, Any], port: str, length: int) -> tuple[Dim, ...]:
    c = a.get(port)
    return tuple(c) if isinstance(c, tuple) else (None,) * length


def _transpose_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (t,) = types
    perm = a["perm"]
    _need(sorted(perm) == list(range(t.ndim)), "Transpose", lambda: f"perm {perm} is not a permutation of {t.ndim} axes")
    return [t.with_shape(tuple(t.shape[p] for p in perm))]


def _unsqueeze_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (t,) = types
    axes = a["axes"]
    ndim = t.ndim + len(axes)
    _need(
        sorted(axes) == list(axes) and len(set(axes)) == len(axes) and all(0 <= ax < ndim for ax in axes),
        "Unsqueeze",
        lambda: f"axes {axes} must be sorted, distinct and in [0, {ndim})",
    )
    dims = iter(t.shape)
    return [t.with_shape(tuple(1 if i in axes else next(dims) for i in range(ndim)))]


def _squeeze_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (t,) = types
    axes = a["axes"]
    _need(sorted(set(axes)) == list(axes) and all(0 <= ax < t.ndim for ax in axes), "Squeeze",
          lambda: f"axes {axes} must be sorted, distinct and in [0, {t.ndim})")
    for ax in axes:
        _need(not isinstance(t.shape[ax], int) or t.shape[ax] == 1, "Squeeze",
              lambda: f"axis {ax} has static size {t.shape[ax]} (must be 1)")
    return [t.with_shape(tuple(d for i, d in enumerate(t.shape) if i not in axes))]


def _reshape_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    x, shape_t = types
    target = list(_contents(a, "shape", _sized("Reshape", shape_t, "shape")))
    _need(all(not isinstance(d, int) or d >= -1 for d in target) and target.count(-1) <= 1, "Reshape",
          lambda: f"shape {tuple(target)} must hold sizes >= 0 and at most one -1")
    if -1 in target:
        target[target.index(-1)] = _inferred(x.shape, target)
    elif all(isinstance(d, int) for d in target) and x.is_static:
        _need(int(np.prod(target)) == int(np.prod(x.shape)), "Reshape", lambda: f"cannot reshape {x} to {tuple(target)}")
    return [x.with_shape(tuple(target))]


def _inferred(source: Sequence[Dim], target: Sequence[Dim]) -> Dim:
    """The size NumPy gives the -1 of `target`: symbolic dims cancel by name, and one
    name left over with equal static products is the -1 (`(B, 64) -> (-1, 4, 16)` is B)."""
    rest = [d for d in target if d != -1]
    if any(d is None for d in (*source, *rest)):
        return None
    left = Counter(d for d in source if isinstance(d, str))
    right = Counter(d for d in rest if isinstance(d, str))
    if right - left:
        return None
    extra = left - right
    total = int(np.prod([d for d in source if isinstance(d, int)], dtype=np.int64))
    known = int(np.prod([d for d in rest if isinstance(d, int)], dtype=np.int64))
    if extra:
        return next(iter(extra)) if sum(extra.values()) == 1 and known > 0 and total == known else None
    _need(known > 0 and total % known == 0, "Reshape", lambda: f"cannot infer -1: {tuple(source)} to {tuple(target)}")
    return total // known


def _expand_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    """ONNX's Expand: x and the target shape broadcast both ways."""
    x, shape_t = types
    target = _contents(a, "shape", _sized("Expand", shape_t, "shape"))
    ndim = max(x.ndim, len(target))
    padded_x = (1,) * (ndim - x.ndim) + x.shape
    padded_t = (1,) * (ndim - len(target)) + tuple(target)
    out = []
    for have, want in zip(padded_x, padded_t, strict=True):
        if want is None:
            out.append(have if isinstance(have, int) and have != 1 else None)
        else:
            try:
                out.append(broadcast_dims([have, want]))
            except TypeRuleError:
                _need(False, "Expand", lambda: f"cannot broadcast {x} with the shape {target}")
    return [x.with_shape(tuple(out))]


def _shape_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (x,) = types
    return [TensorType("int64", (len(range(x.ndim)[slice(a["start"], a["end"])]),))]


def _concat_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    first = types[0]
    axis = a["axis"]
    _check_axis("Concat", axis, first.ndim)
    dtypes = sorted({t.dtype for t in types})
    _need(len(dtypes) == 1, "Concat", lambda: f"inputs must share one dtype, got {dtypes}; cast them first")
    _need(all(t.ndim == first.ndim for t in types), "Concat", lambda: f"inputs differ in rank: {[str(t) for t in types]}")
    shape = []
    for i in range(first.ndim):
        dims = [t.shape[i] for t in types]
        if i == axis:
            shape.append(sum(dims) if all(isinstance(d, int) for d in dims) else None)
            continue
        static = {d for d in dims if isinstance(d, int)}
        _need(len(static) <= 1, "Concat", lambda: f"axis {i} sizes differ: {[str(t) for t in types]}")
        shape.append(static.pop() if static else (dims[0] if len(set(dims)) == 1 else None))
    return [first.with_shape(tuple(shape))]


def _split_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    x, split_t = types
    axis, n = a["axis"], a["num_outputs"]
    _check_axis("Split", axis, x.ndim)
    _need(_sized("Split", split_t, "split") == n, "Split", lambda: f"{n} outputs need {n} sizes, got {split_t}")
    sizes = _contents(a, "split", n)
    if all(isinstance(s, int) for s in sizes) and isinstance(x.shape[axis], int):
        _need(sum(sizes) == x.shape[axis], "Split", lambda: f"sizes {sizes} do not add up to axis {axis} of {x}")
    if n == 1:
        sizes = (x.shape[axis],)
    return [x.with_shape(x.shape[:axis] + (None if isinstance(s, int) and s < 0 else s,) + x.shape[axis + 1 :]) for s in sizes]


def _split(x, split, axis, num_outputs):
    if np.any(split < 0) or int(np.sum(split)) != x.shape[axis]:
        raise ValueError(f"split sizes {split} do not add up to {x.shape[axis]}")
    return tuple(np.split(x, np.cumsum(split)[:-1], axis=axis))


def _expand(x, shape):
    return np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(int(d) for d in shape))).copy()


LAYOUT = ("layout",)
ANY = {"T": ALL_DTYPES}

define("Transpose", ranges=rr.same, inputs=("x: T",), outputs=("out: T",), dtypes=ANY, type_rule=_transpose_rule,
       semantics=lambda x, perm: np.transpose(x, perm), attributes={"perm": (tuple, REQUIRED)},
       traits=(*LAYOUT, "copies"), family="shape", doc="permute axes")
define("Unsqueeze", ranges=rr.same, contents=dims.unsqueeze_contents, inputs=("x: T",), outputs=("out: T",), dtypes=ANY, type_rule=_unsqueeze_rule,
       semantics=lambda x, axes: np.expand_dims(x, axes), attributes={"axes": (tuple, REQUIRED)},
       traits=(*LAYOUT, "batchable", "copies"), family="shape", doc="insert size-1 axes (positions in the output)")
define("Squeeze", ranges=rr.same, contents=dims.squeeze_contents, inputs=("x: T",), outputs=("out: T",), dtypes=ANY, type_rule=_squeeze_rule,
       semantics=lambda x, axes: np.squeeze(x, axes) if axes else x, attributes={"axes": (tuple, REQUIRED)},
       traits=(*LAYOUT, "batchable", "copies"), family="shape", doc="drop size-1 axes")
define("Reshape", ranges=rr.same, contents=dims.reshape_contents, inputs=("x: T", "shape: int64"), outputs=("out: T",), dtypes=ANY, type_rule=_reshape_rule,
       semantics=lambda x, shape: np.reshape(x, tuple(int(d) for d in shape)), reads=("shape",),
       traits=(*LAYOUT, "copies"), family="shape", doc="NumPy reshape: -1 is inferred, 0 is an empty axis")
define("Expand", ranges=rr.same, inputs=("x: T", "shape: int64"), outputs=("out: T",), dtypes=ANY, type_rule=_expand_rule,
       semantics=_expand, reads=("shape",), traits=(*LAYOUT, "copies"), family="shape",
       doc="x broadcast with a shape (both ways, as ONNX's Expand)")
define("Shape", ranges=rr.shape, contents=dims.shape_contents, inputs=("x: T",), outputs=("out: int64",), dtypes=ANY, type_rule=_shape_rule,
       semantics=lambda x, start, end: np.asarray(x.shape[slice(start, end)], dtype=np.int64),
       attributes={"start": (int, 0), "end": (int, None)}, traits=(*LAYOUT, "shape_only"), family="shape",
       doc="the sizes of axes start:end as an int64 vector")
define("Concat", ranges=rr.union, contents=dims.concat_contents, inputs=("*xs: T",), outputs=("out: T",), dtypes=ANY, type_rule=_concat_rule,
       semantics=lambda *xs, axis: np.concatenate(xs, axis=axis), attributes={"axis": (int, REQUIRED)},
       traits=(*LAYOUT, "copies"), family="shape", doc="join inputs of one dtype along `axis`")
define("Split", inputs=("x: T", "split: int64"), outputs=("*parts: T",), dtypes=ANY, type_rule=_split_rule,
       semantics=_split, reads=("split",), attributes={"axis": (int, REQUIRED), "num_outputs": (int, REQUIRED)},
       traits=(*LAYOUT, "copies"), family="shape", doc="cut `axis` into pieces of the given sizes")
