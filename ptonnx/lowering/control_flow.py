"""The IR's `Loop` and `If` as ONNX `Loop` and `If`: the one builder of structured control.

A body is lowered in a child context (`lower_body`): its nodes get names unique in the
whole model, its constants become initializers the body reads from the outer scope,
and a body input that is an outer value (a Loop's invariants, every input of an If)
is simply bound to that value's outer name, since ONNX bodies see the outer scope.

A Loop that runs no trip gives its per-trip outputs shaped (0, *per-trip sizes), as
PyTensor's Scan does (`per_trip_shape`): onnxruntime gives (0, <declared sizes, 0 where
unknown>), so the body declares its per-trip outputs' static sizes, and a symbolic size
that names an outer value's dim is restored after the Loop by a Reshape to (rows, *sizes)
(3 nodes and a Shape per such dim; none when every size is static).

Per-trip outputs leave the body as vectors (`emit_loop`'s `finish`): a per-trip value of rank 0 or >= 2
is Reshaped to (-1,) inside and back to (rows, *sizes) after the Loop. The ONNX spec's text
says a Loop "concatenates" its per-trip values where its pseudo-code and onnxruntime stack
them on a new axis; ONNX's reference evaluator concatenates (`np.vstack`: rank >= 2 values
lose the new axis). On vectors the two readings agree, so every runtime reads the same file.
A size known neither statically nor from an outer value is carried out of the Loop as the
last trip's shape (one more loop-carried value).

For IREE (`ctx.target == "iree"`) a Loop has no per-trip outputs (`loop_buffers.py`), and an
If's branches give their checks' failure flags as outputs (`lowering/check.py`).
"""

from __future__ import annotations

import onnx
from onnx import helper

from ptonnx.lowering.context import kept, onnx_dtype
from ptonnx.lowering.loop_buffers import emit_loop_buffered, outer_dims
from ptonnx.lowering.lower import lower_body
from ptonnx.lowering.registry import EMITTERS


def _info(name: str, value, *, sizes: bool = True) -> onnx.ValueInfoProto:
    """A body value's declaration: dtype and rank, and static sizes where known and wanted."""
    shape = [d if isinstance(d, int) and sizes else None for d in value.shape]
    return helper.make_tensor_value_info(name, onnx_dtype(value.dtype), shape)


def build_loop(ctx, nodes, name: str, trip: str, cond_in: str, carried_in: list, outputs: list, inputs: list[str],
               value_info=()) -> list[str]:
    """The one ONNX `Loop` builder: a body of `nodes` taking (trip, cond_in, *carried_in: value
    infos) and giving `outputs` (value infos: keep going, carried, per-trip), run on `inputs`
    (trip count, condition, initial carried values); returns the Loop's output names."""
    graph = helper.make_graph(
        nodes, ctx.unique(name),
        [helper.make_tensor_value_info(trip, onnx.TensorProto.INT64, []),
         helper.make_tensor_value_info(cond_in, onnx.TensorProto.BOOL, []), *carried_in],
        outputs, value_info=list(value_info),
    )
    return ctx.emit("Loop", inputs, len(outputs) - 1, hint="loop", body=graph)


def emit_loop(ctx, node, inputs):
    if ctx.target == "iree":
        return emit_loop_buffered(ctx, node, inputs)
    body, n_carried = node.attrs["body"], node.attrs["n_carried"]
    trip_count, cond, *args = inputs
    carried, invariants = args[:n_carried], args[n_carried:]
    trip, cond_in = ctx.unique("trip"), ctx.unique("cond_in")
    carried_in = [ctx.unique(f"{v.name or 'carried'}_in") for v in body.inputs[1 : 1 + n_carried]]
    per_trip = body.outputs[1 + n_carried:]
    outer = outer_dims(body, args)
    # per-trip outputs to flatten, and those of them whose shape is carried out (a size not known outside)
    flat = [k for k, v in enumerate(per_trip) if len(v.shape) != 1]
    shaped = [k for k in flat if any(not isinstance(d, int) and d not in outer for d in per_trip[k].shape)]
    shape_in = [ctx.unique("per_trip_shape_in") for _ in shaped]

    def finish(inner, outs):
        head, tail = outs[: 1 + n_carried], outs[1 + n_carried:]
        shapes = [inner.emit1("Shape", [tail[k]]) for k in shaped]
        return [*head, *shapes, *(inner.emit1("Reshape", [n, inner.ints([-1])]) if k in flat else n
                                  for k, n in enumerate(tail))]

    inner, outs = lower_body(ctx, body, [trip, *carried_in, *invariants], out_hint=f"{body.name}_out", finish=finish)
    nodes = inner.nodes
    shape_infos = [helper.make_tensor_value_info(n, onnx.TensorProto.INT64, [len(per_trip[k].shape)]) for n, k in zip(shape_in, shaped, strict=True)]
    out_infos = [_info(n, v) for n, v in zip(outs[: 1 + n_carried], body.outputs[: 1 + n_carried], strict=True)]
    out_infos += [helper.make_tensor_value_info(n, onnx.TensorProto.INT64, [len(per_trip[k].shape)])
                  for n, k in zip(outs[1 + n_carried: 1 + n_carried + len(shaped)], shaped, strict=True)]
    out_infos += [_flat_info(n, v) if k in flat else _info(n, v)
                  for k, (n, v) in enumerate(zip(outs[1 + n_carried + len(shaped):], per_trip, strict=True))]
    results = build_loop(
        ctx, nodes, body.name, trip, cond_in,
        [_info(n, v) for n, v in zip(carried_in, body.inputs[1 : 1 + n_carried], strict=True)] + shape_infos,
        out_infos,
        [trip_count, cond, *carried, *(ctx.ints([0] * len(per_trip[k].shape)) for k in shaped)],
    )
    last_shapes = dict(zip(shaped, results[n_carried: n_carried + len(shaped)], strict=True))
    stacked = results[n_carried + len(shaped):]
    return results[:n_carried] + [_sized(ctx, outer, r, v, last_shapes.get(k), k in flat)
                                  for k, (r, v) in enumerate(zip(stacked, per_trip, strict=True))]


def _flat_info(name: str, value) -> onnx.ValueInfoProto:
    """A flattened per-trip value's declaration: a vector, of its static size where known."""
    size = 1
    for d in value.shape:
        size = size * d if isinstance(d, int) and size is not None else None
    return helper.make_tensor_value_info(name, onnx_dtype(value.dtype), [size])


def _sized(ctx, outer: dict, stacked: str, value, last_shape: str | None, flat: bool) -> str:
    """`stacked` reshaped to (rows, *the per-trip sizes): a flattened one always; a vector one
    where a size is a symbol an outer value's dim gives (its rows are 0 when no trip ran, where
    onnxruntime would give 0 for that size). A size neither static nor outer is the last trip's."""
    if not flat and not any(isinstance(d, str) and d in outer for d in value.shape):
        return stacked
    sizes = [ctx.emit1("Shape", [stacked], start=0, end=1)]
    for k, d in enumerate(value.shape):
        if isinstance(d, int):
            sizes.append(ctx.ints([d]))
        elif d in outer:
            name, axis = outer[d]
            sizes.append(ctx.emit1("Shape", [name], start=axis, end=axis + 1))
        elif flat:
            sizes.append(ctx.emit1("Slice", [last_shape, ctx.ints([k]), ctx.ints([k + 1])]))
        else:
            sizes.append(ctx.emit1("Shape", [stacked], start=k + 1, end=k + 2))
    return ctx.emit1("Reshape", [stacked, ctx.emit1("Concat", sizes, axis=0)], allowzero=1)


def emit_if(ctx, node, inputs):
    cond, *args = inputs
    lowered = {key: lower_body(ctx, node.attrs[key], args, out_hint=f"{key.split('_')[0]}_out")
               for key in ("then_body", "else_body")}
    # the checks of either branch (target "iree"): each branch gives every flag, 0 where it has not that check
    checks = list(dict.fromkeys(check for inner, _ in lowered.values() for check, _ in inner.flags))
    branches = {}
    for key, (inner, outs) in lowered.items():
        body, have = node.attrs[key], dict(inner.flags)
        flags = [have[c] if c in have else inner.emit1("Identity", [inner.scalar(0, "int64")], hint="no_failure")
                 for c in checks]
        branches[key.replace("body", "branch")] = helper.make_graph(
            inner.nodes, ctx.unique(body.name), [],
            [_info(n, v) for n, v in zip(outs, body.outputs, strict=True)] + [_flag_info(f) for f in flags],
            value_info=kept(inner.infos),
        )
    results = ctx.emit("If", [cond], len(node.outputs) + len(checks), hint="if", **branches)
    ctx.flags.extend(zip(checks, results[len(node.outputs):], strict=True))
    return results[: len(node.outputs)]


def _flag_info(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, onnx.TensorProto.INT64, [])


# the bodies' ops are legalised one by one; Loop and If move values, they compute nothing
EMITTERS["Loop"] = emit_loop
EMITTERS["If"] = emit_if
