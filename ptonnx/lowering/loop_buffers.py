"""A Loop without per-trip outputs: the form IREE reads (`lower(target="iree")`).

IREE's ONNX importer (torch-mlir's `onnx.Loop` pattern) converts a Loop only without per-trip
(scan) outputs, and types the loop's carried values as their initial values, so those must
be exactly the body's input and output types. So:

- each per-trip value is written flat by `ScatterND` at the trip number into a carried buffer
  of (trip count, per-trip size), allocated before the Loop and reshaped after it to
  (trips, *per-trip sizes) (IREE 3.13 dropped the writes into a (rows, 1, 1) buffer); a Loop that may stop early also
  carries how many trips ran, and its buffers are sliced to that after it;
- a per-trip size known neither statically nor from an outer value (the state of an AR(1)
  Scan over run-time sizes: a broadcast of two of them) is refused: sized from a first trip
  run alone before (a one-trip Loop carrying out the shapes, flat or not, carried or read from
  the outer scope), IREE 3.13 wrote the per-trip values at the wrong rows (docs/iree.md);
- every initial value passes through a Reshape to its own shape declared with the body's
  type (IREE's importer removes an Identity), and `iree_runtime.compile_model` keeps the
  declared types over the more static ones ONNX's shape inference finds;
- the body's checks (`lowering/check.py`) are carried out as failure flags (0 or 1, the
  largest over the trips), which the enclosing graph reports in turn;
- a for-like Loop (condition always true) has `cond_out = Identity(cond_in)`, the form the
  importer turns into a counted loop.
"""

from __future__ import annotations

import attrs
import numpy as np
import onnx
import onnx.numpy_helper
from onnx import helper

from ptonnx.errors import LoweringError
from ptonnx.lowering.context import kept, onnx_dtype
from ptonnx.lowering.lower import lower_body


def outer_dims(body, args: list[str]) -> dict:
    """{symbol: (outer name, axis)} for the body inputs' symbolic sizes an outer value gives."""
    outer = {}
    for inner, name in zip(body.inputs[1:], args, strict=True):
        for k, d in enumerate(inner.shape):
            if isinstance(d, str):
                outer.setdefault(d, (name, k))
    return outer


def emit_loop_buffered(ctx, node, inputs):
    body, n_carried = node.attrs["body"], node.attrs["n_carried"]
    trip_count, cond, *args = inputs
    invariants = args[n_carried:]
    per_trip = body.outputs[1 + n_carried:]
    outer = outer_dims(body, args)
    late = [k for k, v in enumerate(per_trip) if any(not isinstance(d, int) and d not in outer for d in v.shape)]
    carried = [_typed(ctx, name, _declared(v)) for name, v in zip(args[:n_carried], node.outputs[:n_carried], strict=True)]
    if late:
        v = per_trip[late[0]]
        raise LoweringError(
            f"a Loop ({body.name}) gives a per-trip value whose sizes are known only inside its body "
            f"({v.name or 'unnamed'}: {v.type}); IREE's form of a Loop writes per-trip values into a buffer "
            "allocated before it, and IREE 3.13 miscomputes every way tried to size it from a first trip "
            "(docs/iree.md): give the value static sizes (pt.specify_shape), or use runtime='onnxruntime'")
    allocated, used = _rows(ctx, node.inputs[0], trip_count)
    sizes = [_sizes(ctx, outer, v) for v in per_trip]
    flat = [_product(ctx, s) for s in sizes]
    groups = _groups(ctx, per_trip, flat)
    buffers = [_typed(ctx, _filled(ctx, allocated, g.total, g.dtype, k + 1), helper.make_tensor_value_info("", *g.type))
               for k, g in enumerate(groups)]
    results, checks = _loop(ctx, node, trip_count, cond, carried, invariants, buffers=buffers, groups=groups)
    filled = results[n_carried: n_carried + len(groups)]
    if len(results) > n_carried + len(groups) + len(checks):  # a Loop that may stop early: rows = trips run
        used = ctx.emit1("Reshape", [results[n_carried + len(groups)], ctx.ints([1])])
    rows = used if used is not None else allocated
    values: dict[int, str] = {}
    for g, b in zip(groups, filled, strict=True):
        if used is not None:
            b = ctx.emit1("Slice", [b, ctx.ints([0]), used, ctx.ints([0])])
        for k, start, end in g.columns:
            # a Gather of the columns: a Slice of them failed iree-compile ("LLVM Translation failed for
            # operation: builtin.unrealized_conversion_cast", scan_custom_dist)
            column = b if len(g.columns) == 1 else ctx.emit1("Gather", [b, ctx.emit1("Range", [
                ctx.emit1("Squeeze", [start, ctx.ints([0])]), ctx.emit1("Squeeze", [end, ctx.ints([0])]), ctx.scalar(1, "int64")])], axis=1)
            column = ctx.emit1("Reshape", [column, ctx.emit1("Concat", [rows, *sizes[k]], axis=0)], allowzero=1)
            values[k] = ctx.emit1("Cast", [column], to=onnx_dtype(per_trip[k].dtype)) if per_trip[k].dtype in _STORED else column
    ctx.flags.extend(zip(checks, results[len(results) - len(checks):], strict=True))
    return results[:n_carried] + [values[k] for k in range(len(per_trip))]


@attrs.frozen
class _Group:
    """The per-trip values of one stored dtype, side by side in one buffer of (rows, total):
    IREE 3.13 miscomputed Loops carrying several buffers (writes dropped, two buffers sharing
    storage: level_trend_measurement_error's gradient); a total of 1 is a buffer of (rows,)."""
    dtype: str
    members: tuple  # (per-trip index, flat size as a 1-vector name)
    total: str  # 1-vector (empty for a (rows,) buffer)
    static_total: int | None
    columns: tuple  # (per-trip index, start, end) as 1-vectors

    @property
    def vector(self) -> bool:
        return self.static_total == 1 and len(self.members) == 1

    @property
    def type(self):
        return onnx_dtype(self.dtype), [None, *([] if self.vector else [self.static_total])]


def _columns(inner, trip: str, start: str, end: str) -> str:
    """ScatterND's indices [[trip, start], ..., [trip, end - 1]] (start, end: 1-vectors)."""
    columns = inner.emit1("Range", [inner.emit1("Squeeze", [start, inner.ints([0])]), inner.emit1("Squeeze", [end, inner.ints([0])]),
                                    inner.scalar(1, "int64")])
    rows = inner.emit1("Expand", [trip, inner.emit1("Shape", [columns])])
    return inner.emit1("Concat", [inner.emit1("Unsqueeze", [rows, inner.ints([1])]), inner.emit1("Unsqueeze", [columns, inner.ints([1])])], axis=1)


def _static(ctx, size: str) -> int | None:
    value = ctx.constant_value(size)
    return None if value is None else int(value[0])


def _groups(ctx, per_trip, flat) -> list[_Group]:
    by_dtype: dict[str, list[int]] = {}
    for k, v in enumerate(per_trip):
        by_dtype.setdefault(_STORED.get(v.dtype, v.dtype), []).append(k)
    groups = []
    for dtype, members in by_dtype.items():
        known = [flat[k] for k in members]
        static_total = sum(known) if all(isinstance(f, int) for f in known) else None
        names = [ctx.ints([f]) if isinstance(f, int) else f for f in known]  # each piece's length, a 1-vector
        columns, start = [], ctx.ints([0])
        for k, size in zip(members, names, strict=True):
            end = ctx.emit1("Add", [start, size])
            columns.append((k, start, end))
            start = end
        vector = static_total == 1 and len(members) == 1
        total = ctx.ints([]) if vector else (ctx.ints([static_total]) if static_total is not None else start)
        groups.append(_Group(dtype, tuple(zip(members, names, strict=True)), total, static_total, tuple(columns)))
    return groups


def _loop(ctx, node, trip_count: str, cond: str, carried: list[str], invariants: list[str], *, buffers, groups) -> tuple[list[str], list[str]]:
    """The ONNX Loop of `node`'s body over `carried` (typed), writing each trip's per-trip values
    as one row of each group's buffer; returns the Loop's outputs (carried, buffers, trips run if
    it may stop early, failure flags) and the names of the checks whose flags end them."""

    body, n_carried = node.attrs["body"], node.attrs["n_carried"]
    for_like = _is_true(node.inputs[1]) and _is_true(body.outputs[0])
    trip, cond_in = ctx.unique("trip"), ctx.unique("cond_in")
    carried_in = [ctx.unique(f"{v.name or 'carried'}_in") for v in body.inputs[1: 1 + n_carried]]
    inner, outs = lower_body(ctx, body, [trip, *carried_in, *invariants], out_hint=f"{body.name}_out")
    going = inner.emit1("Identity", [cond_in], hint="cond_out") if for_like else outs[0]
    per_trip = outs[1 + n_carried:]
    declared = [_declared(v) for v in node.outputs[:n_carried]]
    ins = [_named(n, t) for n, t in zip(carried_in, declared, strict=True)]
    results = [_named(going, _declared(body.outputs[0]))] + [_named(n, t) for n, t in zip(outs[1: 1 + n_carried], declared, strict=True)]
    initial = [trip_count, cond, *carried]
    at = inner.emit1("Reshape", [trip, inner.ints([1, 1])], hint="at_trip")
    for b, g in zip(buffers, groups, strict=True):
        ins.append(helper.make_tensor_value_info(ctx.unique("per_trip_buffer_in"), *g.type))
        written = ins[-1].name
        for (k, size), (_, start, end) in zip(g.members, g.columns, strict=True):
            value = per_trip[k]
            if body.outputs[1 + n_carried + k].dtype in _STORED:
                value = inner.emit1("Cast", [value], to=g.type[0])
            if g.vector:
                where, update = at, inner.emit1("Reshape", [value, inner.ints([1])])
            else:  # (trip, start + j) for j < size: a Concat of the values into one row failed iree-compile
                where, update = _columns(inner, trip, start, end), inner.emit1("Reshape", [value, size], allowzero=1)
            # declared: ONNX's inference inside a body cannot read an outer size's value (IREE's importer
            # would take the update for a scalar and write nothing)
            inner.infos.append(helper.make_tensor_value_info(update, g.type[0], [1 if g.vector else _static(ctx, size)]))
            written = inner.emit1("ScatterND", [written, where, update], hint="per_trip_buffer")
        results.append(helper.make_tensor_value_info(written, *g.type))
        initial.append(b)
    if not for_like:
        ins.append(_flag(ctx.unique("trips_in")))
        results.append(_flag(inner.emit1("Add", [trip, inner.scalar(1, "int64")], hint="trips")))
        initial.append(ctx.scalar(0, "int64"))
    checks = [check for check, _ in inner.flags]
    for k, (_, failed) in enumerate(inner.flags):  # from -1, -2, ...: a flag is set when above 0
        ins.append(_flag(ctx.unique("failed_in")))
        results.append(_flag(inner.emit1("Max", [ins[-1].name, failed], hint="failed")))
        initial.append(ctx.scalar(-1 - k, "int64"))
    graph = helper.make_graph(inner.nodes, ctx.unique(body.name),
                              [helper.make_tensor_value_info(trip, onnx.TensorProto.INT64, []),
                               helper.make_tensor_value_info(cond_in, onnx.TensorProto.BOOL, []), *kept(ins)],
                              kept(results), value_info=kept(inner.infos))
    outputs = ctx.emit("Loop", initial, len(results) - 1, hint="loop", body=graph)
    # ONNX's shape inference gives a Loop's results no shape where a body output's differs from
    # its initial value's; IREE's importer would read them as scalars
    ctx.infos.extend(_named(n, t) for n, t in zip(outputs, results[1:], strict=True))
    return outputs, checks


def _sizes(ctx, outer: dict, value) -> list[str]:
    """The per-trip value's sizes as 1-vectors: static, or an outer value's dim."""
    sizes = []
    for d in value.shape:
        if isinstance(d, int):
            sizes.append(ctx.ints([d]))
        else:
            name, axis = outer[d]
            sizes.append(ctx.emit1("Shape", [name], start=axis, end=axis + 1))
    return sizes


def _product(ctx, sizes: list[str]) -> int | str:
    """The product of 1-vector sizes: an int where all are constants, else a 1-vector."""
    known = [ctx.constant_value(s) for s in sizes]
    if all(k is not None for k in known):
        return int(np.prod([int(k[0]) for k in known], dtype=np.int64))
    product = sizes[0]
    for size in sizes[1:]:
        product = ctx.emit1("Mul", [product, size])
    return product


#: per-trip dtypes a buffer stores as another (a buffer's fill is its own number: bool has two)
_STORED = {"bool": "uint8"}


def _filled(ctx, rows: str, size: str, dtype, fill: int) -> str:
    """(rows, size) of `fill`: each buffer of a Loop starts as a value of its own (every row the
    Loop keeps is written; the fill is never read). IREE 3.13 gave two buffers one storage when
    their initial values were equal computations (level_trend_measurement_error's gradient)."""
    value = onnx.numpy_helper.from_array(np.full(1, fill, dtype=dtype), "fill")
    return ctx.emit1("ConstantOfShape", [ctx.emit1("Concat", [rows, size], axis=0)], hint="per_trip_buffer", value=value)


def _typed(ctx, name: str, info: onnx.ValueInfoProto) -> str:
    """`name` as a value of exactly the type `info` declares (its static sizes may be forgotten): a
    Reshape to its own shape, which IREE's importer types as declared (an Identity it removes).
    Each is a value of its own: torch-mlir's Loop conversion mixed up the results of a Loop given
    one value as two initial values (two buffers' zeros, two failure flags' 0)."""
    typed = ctx.emit("Reshape", [name, ctx.emit1("Shape", [name])], [ctx.unique(f"{name}_typed")])[0]
    ctx.infos.append(_named(typed, info))
    return typed


def _declared(value) -> onnx.ValueInfoProto:
    """A value's type as the Loop declares it: its dtype, rank and static sizes."""
    return helper.make_tensor_value_info("", onnx_dtype(value.dtype), [d if isinstance(d, int) else None for d in value.shape])


def _named(name: str, info: onnx.ValueInfoProto) -> onnx.ValueInfoProto:
    named = onnx.ValueInfoProto()
    named.CopyFrom(info)
    named.name = name
    return named


def _flag(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, onnx.TensorProto.INT64, [])


def _is_true(value) -> bool:
    return value.const is not None and bool(value.const.all())


def _rows(ctx, trip_value, trip_count: str) -> tuple[str, str | None]:
    """A buffer's rows as a 1-vector: the trip count, at least 1 (IREE's runtime refuses an empty
    buffer: "Expected dim size > 0"); and the rows to keep after the Loop (None: all)."""
    if trip_value.const is not None:
        n = int(trip_value.const)
        return ctx.ints([max(n, 1)]), (None if n >= 1 else ctx.ints([0]))
    allocated = ctx.emit1("Max", [trip_count, ctx.scalar(1, "int64")])
    used = ctx.emit1("Max", [trip_count, ctx.scalar(0, "int64")])
    return (ctx.emit1("Reshape", [allocated, ctx.ints([1])], hint="rows"),
            ctx.emit1("Reshape", [used, ctx.ints([1])], hint="rows_used"))
