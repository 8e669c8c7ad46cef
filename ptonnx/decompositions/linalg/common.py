"""The vocabulary the linear-algebra decompositions are written in: sizes as int64 values,
slices of the last two axes, masks by index, and a counted Loop with values stacked per trip.

Matrices are `Ex` values of shape (*batch, rows, cols); every helper keeps the batch axes
as they are, so one decomposition serves a single matrix and a batch of them, with sizes
known only at run time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ptonnx.decompositions.expr import Ex, Scope, where
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.ir.dims import contents

BIG = np.iinfo(np.int64).max


def ints(scope: Scope, *values: int) -> Ex:
    """An int64 vector constant."""
    return Ex(scope, scope.constant(np.asarray(values, dtype=np.int64)))


def int_scalar(scope: Scope, value: int) -> Ex:
    return Ex(scope, scope.scalar(value, "int64"))


def static(x: Ex) -> int | None:
    """The value of an int64 scalar when the graph fixes it (a static size, or arithmetic on them)."""
    found = contents(x.value) if x.value.type.ndim == 0 else None
    return found if isinstance(found, int) and not isinstance(found, bool) else None


def dim(x: Ex, axis: int) -> Ex:
    """The size of `x`'s `axis` as an int64 scalar (a constant where the type knows it)."""
    size = x.value.type.shape[axis]
    if isinstance(size, int):
        return int_scalar(x.scope, size)
    return x.op("Shape", start=axis, end=axis + 1).op("Squeeze", axes=(0,))


def vec(*scalars: Ex) -> Ex:
    """int64 scalars as one vector."""
    parts = [s.op("Unsqueeze", axes=(0,)) for s in scalars]
    return parts[0] if len(parts) == 1 else parts[0].op("Concat", *parts[1:], axis=0)


def batch_shape(x: Ex) -> Ex:
    """The sizes of `x`'s batch axes (all but the last two) as an int64 vector (maybe empty)."""
    return x.op("Shape", start=0, end=x.value.type.ndim - 2)


def common_batch(*xs: Ex) -> list[Ex]:
    """Matrices with their batch axes broadcast to one shape (every way, as Blockwise broadcasts
    them)."""
    if all(x.value.type.ndim == 2 for x in xs):
        return list(xs)
    ones = ints(xs[0].scope, 1, 1)
    full = xs[0]
    for other in xs[1:]:
        full = full.op("Expand", batch_shape(other).op("Concat", ones, axis=0))
    shape = batch_shape(full).op("Concat", ones, axis=0)
    return [full] + [x.op("Expand", shape) for x in xs[1:]]


def flatten_batch(x: Ex, core: int) -> tuple[Ex, Ex]:
    """x with its batch axes (all but the last `core`) as one leading axis, and the batch shape."""
    r = x.value.type.ndim
    batch = x.op("Shape", start=0, end=r - core)
    count = batch.op("ReduceProd", axes=(0,), keepdims=True) if r > core else ints(x.scope, 1)
    return x.op("Reshape", count.op("Concat", x.op("Shape", start=r - core), axis=0)), batch


def restore_batch(x: Ex, batch: Ex, core: int) -> Ex:
    """The inverse of `flatten_batch`."""
    return x.op("Reshape", batch.op("Concat", x.op("Shape", start=x.value.type.ndim - core), axis=0))


def emit(scope: Scope, op: str, inputs: Sequence[Ex], **attrs) -> list[Ex]:
    """The results of one IR node `op` (another linear-algebra op, decomposed in turn)."""
    return [Ex(scope, v) for v in scope.builder.node(op, [x.value for x in inputs], attrs).outputs]


def cholesky_diagonal(a: Ex) -> tuple[Ex, Ex]:
    """(the diagonal of a's lower Cholesky factor (B, n), whether every matrix of the batch is
    positive definite: every such diagonal positive and finite, a bool scalar) for a (B, n, n)
    read in its lower triangle. The IR's Cholesky gives NaN for a matrix that is not (and inf or
    NaN for one holding them): the test that lets SLogDet and Eigh take their cheaper path."""
    (low,) = emit(a.scope, "Cholesky", [a], lower=True)
    d = diagonal(low)
    bad = ((d > 0.0) & (d < float("inf"))).op("Not")
    return d, bad.op("ReduceAny", axes=(0, 1), keepdims=False).op("Not")


def solve(a: Ex, b: Ex) -> Ex:
    """x with a x = b (matrices), as the IR's Solve (LU with partial pivoting, `lu.py`)."""
    return emit(a.scope, "Solve", [a, b], assume_a="gen", b_ndim=2)[0]


def mirror(a: Ex, lower: bool) -> Ex:
    """The symmetric matrices (*batch, n, n) the triangle `lower` names stands for (the other
    triangle is never read)."""
    r = a.value.type.ndim
    n = dim(a, r - 1)
    rows, cols = arange(n).op("Unsqueeze", axes=(1,)), arange(n).op("Unsqueeze", axes=(0,))
    return where(rows < cols if lower else rows > cols, mT(a), a)


def power_of_two(x: Ex) -> Ex:
    """A power of two near x > 0 (1 for 0, inf or NaN): dividing by it is exact, so scaling a
    matrix by its largest magnitude keeps sums of squares from overflowing or underflowing."""
    ok = (x > 0.0) & (x < float("inf"))
    exponent = where(ok, x, 1.0).op("Log") * (1.0 / math.log(2.0))
    return x.const(2.0).op("Pow", exponent.op("Floor"))


def round_robin(h: Ex) -> tuple[Ex, Ex]:
    """Where the rows of [P; Q] (h pairs, P[i] with Q[i]) come from for the next round of the
    circle method (Jacobi's parallel ordering): P[0] stays, the others move one place round, so
    after 2h - 1 rounds every pair has met once and the order is the original one."""
    i = arange(h)
    new_p = where(i.eq(0), int_scalar(h.scope, 0), where(i.eq(1), h, i - 1))
    new_q = where(i.eq(h - 1), (h - 1) + h.eq(1).cast("int64"), h + i + 1)
    return new_p, new_q


def cut(x: Ex, axis: int, start, end) -> Ex:
    """x[..., start:end, ...] along `axis` (start, end: int64 scalars or Python ints)."""
    scope = x.scope
    bound = [vec(v) if isinstance(v, Ex) else ints(scope, v) for v in (start, end)]
    return x.op("Slice", bound[0], bound[1], ints(scope, 1), axes=(axis,))


def reverse(x: Ex, axes: Sequence[int]) -> Ex:
    """x with `axes` in reverse order (a Gather of n - 1, ..., 0 a axis: a Slice of step -1 lowers
    to some 20 nodes normalising Python's bounds)."""
    for axis in axes:
        n = dim(x, axis)
        x = x.op("Gather", (n - 1) - arange(n), axis=axis)
    return x


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


def non_finite(x: Ex) -> Ex:
    """Per matrix of x (*batch, m, n): whether it holds an inf or a NaN (shape `batch`)."""
    r = x.value.type.ndim
    return (x.op("IsNaN") | x.op("IsInf")).op("ReduceAny", axes=(r - 2, r - 1), keepdims=False)


def diagonal(x: Ex) -> Ex:
    """The diagonals of square matrices (*batch, n, n) -> (*batch, n)."""
    r = x.value.type.ndim
    n = dim(x, r - 1)
    size = vec(n * n)  # not -1: NumPy cannot infer it for an empty batch
    flat = x.op("Reshape", batch_shape(x).op("Concat", size, axis=0) if r > 2 else size)
    return flat.op("Gather", arange(n) * (n + 1), axis=r - 2)  # not a Slice of step n + 1: see reverse


def loose(t: TensorType, keep: int) -> TensorType:
    """`t` with all but its first `keep` sizes unknown (a value whose sizes change from trip to trip)."""
    return t.with_shape(t.shape[:keep] + (None,) * (t.ndim - keep))


Step = Callable[[Ex, list[Ex], list[Ex]], tuple[list[Ex], list[Ex]]]


#: a Loop whose trip count the graph fixes at most this high is unrolled: no per-trip cost, and
#: constant folding sees the trip numbers (a 3 x 3 Cholesky in a scan is a few dozen nodes)
UNROLL = 8


def counted_loop(count: Ex, carried: Sequence[Ex], invariants: Sequence[Ex], step: Step,
                 carried_types: Sequence[TensorType] | None = None) -> tuple[list[Ex], list[Ex]]:
    """An IR Loop of `count` trips: `step(trip, carried, invariants) -> (new carried, per-trip)`,
    written over the body's own inputs. Returns the final carried values and the per-trip values
    stacked on a new axis 0. `carried_types`: the body's types for the carried values (unknown
    sizes where they change from trip to trip). A count the graph fixes at 1 to UNROLL trips is
    unrolled: `step` runs once per trip on the outer values, with constant trip numbers."""
    trips = static(count)
    if trips is not None and 1 <= trips <= UNROLL:
        return _unrolled(count.scope, trips, list(carried), list(invariants), step)
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


def _unrolled(scope: Scope, trips: int, carried: list[Ex], invariants: list[Ex], step: Step) -> tuple[list[Ex], list[Ex]]:
    stacked: list[list[Ex]] = []
    for t in range(trips):
        carried, per_trip = step(int_scalar(scope, t), carried, invariants)
        stacked.append([v.op("Unsqueeze", axes=(0,)) for v in per_trip])
    joined = [parts[0] if len(parts) == 1 else parts[0].op("Concat", *parts[1:], axis=0) for parts in zip(*stacked, strict=True)]
    return list(carried), joined


def slice2(x: Ex, start: Ex | None, end: Ex | None) -> Ex:
    """x[..., start:end, start:end] in one Slice (start, end: 1-element int64 vectors; None: 0 / the end)."""
    r, scope = x.value.type.ndim, x.scope
    starts = ints(scope, 0, 0) if start is None else start.op("Concat", start, axis=0)
    ends = ints(scope, BIG, BIG) if end is None else end.op("Concat", end, axis=0)
    return x.op("Slice", starts, ends, ints(scope, 1, 1), axes=(r - 2, r - 1))


def index_masks(n: Ex) -> tuple[Ex, Ex, Ex]:
    """(row < col, row > col, row == col) for n x n matrices (bool)."""
    idx = arange(n)
    rows, cols = idx.op("Unsqueeze", axes=(1,)), idx.op("Unsqueeze", axes=(0,))
    return rows < cols, rows > cols, rows.eq(cols)


def eye_like(x: Ex, n: Ex) -> Ex:
    """Identity matrices (*batch, n, n) of `x`'s dtype and batch shape."""
    one = index_masks(n)[2].cast(x.dtype)
    return one.op("Expand", batch_shape(x).op("Concat", vec(n, n), axis=0)) if x.value.type.ndim > 2 else one


def pad_identity(x: Ex, size: Ex) -> Ex:
    """Square matrices (*batch, n, n) as (*batch, size, size): x in the corner, the identity after
    it (a factor or a solve of the padded matrix is the one of x, padded the same way)."""
    r = x.value.type.ndim
    n, batch = dim(x, r - 1), batch_shape(x)
    pad = size - n
    top = x.op("Concat", zeros(x, batch.op("Concat", vec(n, pad), axis=0)), axis=r - 1)
    bottom = zeros(x, batch.op("Concat", vec(pad, n), axis=0)).op("Concat", eye_like(x, pad), axis=r - 1)
    return top.op("Concat", bottom, axis=r - 2)


def unstack(stacked: Ex, shape: Ex, batch_rank: int) -> Ex:
    """A Loop's stacked values (trips, *batch, ...) as `shape` (int64 vector) with the trips axis
    after the batch axes: (trips, *batch, b, c) -> (*batch, trips * b, c), say. Reshape, not
    Squeeze or -1: a loop of no trips stacks (0, ...) with 0 for a size it does not know."""
    if batch_rank:
        rank = stacked.value.type.ndim
        stacked = stacked.op("Transpose", perm=(*range(1, batch_rank + 1), 0, *range(batch_rank + 1, rank)))
    return stacked.op("Reshape", shape)


def ceil_div(a: Ex, b) -> Ex:
    """ceil(a / b) of int64 scalars a >= 0, b > 0 (an Ex or a Python int), through float64: exact
    below 2**53, and 4 ONNX nodes where IntDiv's NumPy floor semantics lower to a dozen."""
    known_a, known_b = static(a), (static(b) if isinstance(b, Ex) else b)
    if known_a is not None and known_b is not None:
        return int_scalar(a.scope, -(-known_a // known_b))
    quotient = a.cast("float64") / (b.cast("float64") if isinstance(b, Ex) else float(b))
    return quotient.op("Ceil").cast("int64")


def branch(cond: Ex, args: list[Ex], then_fn, else_fn) -> list[Ex]:
    """An IR If on the bool scalar `cond`: `then_fn(args)` or `else_fn(args)`, each written over
    its body's own inputs; only the branch taken runs."""
    outer = cond.scope
    bodies = []
    for fn in (then_fn, else_fn):
        body = Graph("if_body")
        scope = Scope(Builder(body, source=outer.builder.source))
        inner = [Ex(scope, body.add_input(a.value.type, f"arg{i}")) for i, a in enumerate(args)]
        body.set_outputs([o.value for o in fn(inner)])
        bodies.append(body)
    node = outer.builder.node("If", [cond.value, *(a.value for a in args)], dict(then_body=bodies[0], else_body=bodies[1]))
    return [Ex(outer, v) for v in node.outputs]


def take_rows(x: Ex, rows: Ex) -> Ex:
    """x[b, rows[b, i], :] for x (B, m, c) and int64 rows (B, k): one Gather on the flattened rows."""
    count, m = dim(x, 0), dim(x, 1)
    flat = x.op("Reshape", vec(count * m).op("Concat", x.op("Shape", start=2), axis=0))
    offsets = (arange(count) * m).op("Unsqueeze", axes=(1,))
    picked = flat.op("Gather", (rows + offsets).op("Reshape", ints(x.scope, -1)), axis=0)
    return picked.op("Reshape", vec(count, dim(rows, 1)).op("Concat", x.op("Shape", start=2), axis=0))


def take_flat(x: Ex, at: Ex) -> Ex:
    """x[b].flat[at[b, i]] for x (B, ...) and int64 at (B, k) -> (B, k): one Gather on the
    flattened batch."""
    count = dim(x, 0)
    size = x.op("Shape", start=1).op("ReduceProd", axes=(0,), keepdims=False)
    return x.op("Reshape", vec(count * size)).op("Gather", at + (arange(count) * size).op("Unsqueeze", axes=(1,)), axis=0)
