"""The vocabulary the linear-algebra decompositions are written in: sizes as int64 values,
slices of the last two axes, masks by index, and a counted Loop with values stacked per trip.

Matrices are `Ex` values of shape (*batch, rows, cols); every helper keeps the batch axes
as they are, so one decomposition serves a single matrix and a batch of them, with sizes
known only at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ptonnx.decompositions.expr import Ex, Scope, where
from ptonnx.ir import Builder, Graph, TensorType, Value

BIG = np.iinfo(np.int64).max


def ints(scope: Scope, *values: int) -> Ex:
    """An int64 vector constant."""
    return Ex(scope, scope.constant(np.asarray(values, dtype=np.int64)))


def int_scalar(scope: Scope, value: int) -> Ex:
    return Ex(scope, scope.scalar(value, "int64"))


def dim(x: Ex, axis: int) -> Ex:
    """The size of `x`'s `axis` as an int64 scalar."""
    return x.op("Shape", start=axis, end=axis + 1).op("Squeeze", axes=(0,))


def vec(*scalars: Ex) -> Ex:
    """int64 scalars as one vector."""
    parts = [s.op("Unsqueeze", axes=(0,)) for s in scalars]
    return parts[0] if len(parts) == 1 else parts[0].op("Concat", *parts[1:], axis=0)


def batch_shape(x: Ex) -> Ex:
    """The sizes of `x`'s batch axes (all but the last two) as an int64 vector (maybe empty)."""
    return x.op("Shape", start=0, end=x.value.type.ndim - 2)


def cut(x: Ex, axis: int, start, end) -> Ex:
    """x[..., start:end, ...] along `axis` (start, end: int64 scalars or Python ints)."""
    scope = x.scope
    bound = [vec(v) if isinstance(v, Ex) else ints(scope, v) for v in (start, end)]
    return x.op("Slice", bound[0], bound[1], ints(scope, 1), axes=(axis,))


def reverse(x: Ex, axes: Sequence[int]) -> Ex:
    """x with `axes` in reverse order."""
    scope, k = x.scope, len(axes)
    return x.op("Slice", ints(scope, *[-1] * k), ints(scope, *[-BIG] * k), ints(scope, *[-1] * k), axes=tuple(axes))


def mT(x: Ex) -> Ex:
    """The matrices transposed."""
    r = x.value.type.ndim
    return x.op("Transpose", perm=(*range(r - 2), r - 1, r - 2))


def arange(n: Ex) -> Ex:
    """0, 1, ..., n - 1 (int64)."""
    scope = n.scope
    return Ex(scope, scope.scalar(0, "int64")).op("Range", n, int_scalar(scope, 1))


def zeros(like: Ex, shape: Ex) -> Ex:
    """Zeros of `like`'s dtype and the int64 vector `shape`."""
    return like.const(0.0).op("Expand", shape)


def fill_nan(bad: Ex, x: Ex) -> Ex:
    """x, with every matrix whose batch entry of `bad` (shape `batch`) holds replaced by NaN."""
    r = x.value.type.ndim
    return where(bad.op("Unsqueeze", axes=(r - 2, r - 1)), float("nan"), x)


def diagonal(x: Ex) -> Ex:
    """The diagonals of square matrices (*batch, n, n) -> (*batch, n)."""
    r, scope = x.value.type.ndim, x.scope
    n = dim(x, r - 1)
    size = vec(n * n)  # not -1: NumPy cannot infer it for an empty batch
    flat = x.op("Reshape", batch_shape(x).op("Concat", size, axis=0) if r > 2 else size)
    return flat.op("Slice", ints(scope, 0), size, vec(n + 1), axes=(r - 2,))


def loose(t: TensorType, keep: int) -> TensorType:
    """`t` with all but its first `keep` sizes unknown (a value whose sizes change from trip to trip)."""
    return t.with_shape(t.shape[:keep] + (None,) * (t.ndim - keep))


Step = Callable[[Ex, list[Ex], list[Ex]], tuple[list[Ex], list[Ex]]]


def counted_loop(count: Ex, carried: Sequence[Ex], invariants: Sequence[Ex], step: Step,
                 carried_types: Sequence[TensorType] | None = None) -> tuple[list[Ex], list[Ex]]:
    """An IR Loop of `count` trips: `step(trip, carried, invariants) -> (new carried, per-trip)`,
    written over the body's own inputs. Returns the final carried values and the per-trip values
    stacked on a new axis 0. `carried_types`: the body's types for the carried values (unknown
    sizes where they change from trip to trip)."""
    outer = count.scope
    body = Graph("linalg_body")
    scope = Scope(Builder(body, source=outer.builder.source))
    trip = Ex(scope, body.add_input(TensorType("int64", ()), "trip"))
    types = carried_types or [c.value.type for c in carried]
    inner_c = [Ex(scope, body.add_input(t, f"carried{i}")) for i, t in enumerate(types)]
    inner_i = [Ex(scope, body.add_input(v.value.type, f"invariant{i}")) for i, v in enumerate(invariants)]
    new, per_trip = step(trip, inner_c, inner_i)
    body.set_outputs([Value.constant(np.asarray(True)), *(v.value for v in new), *(v.value for v in per_trip)])
    loop = outer.builder.node("Loop", [count.value, Value.constant(np.asarray(True)), *(c.value for c in carried),
                                       *(v.value for v in invariants)],
                              dict(body=body, n_carried=len(carried), n_scan=len(per_trip)))
    results = [Ex(outer, v) for v in loop.outputs]
    return results[: len(carried)], results[len(carried):]
