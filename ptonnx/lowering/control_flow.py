"""The IR's `Loop` and `If` as ONNX `Loop` and `If`: the one builder of structured control.

A body is lowered in a child context (`lower_body`): its nodes get names unique in the
whole model, its constants become initializers the body reads from the outer scope,
and a body input that is an outer value (a Loop's invariants, every input of an If)
is simply bound to that value's outer name, since ONNX bodies see the outer scope.

A Loop's per-trip outputs are declared by rank alone: onnxruntime gives a Loop that ran
no trip per-trip outputs shaped (0, <declared sizes, 0 where unknown>), without a
declared rank a wrong rank 1; (0, 0, ...) is what PyTensor's Scan gives there too.
"""

from __future__ import annotations

import onnx
from onnx import helper

from ptonnx.lowering.context import onnx_dtype
from ptonnx.lowering.registry import EMITTERS


def _info(name: str, value, *, sizes: bool = True) -> onnx.ValueInfoProto:
    """A body value's declaration: dtype and rank, and static sizes where known and wanted."""
    shape = [d if isinstance(d, int) and sizes else None for d in value.shape]
    return helper.make_tensor_value_info(name, onnx_dtype(value.dtype), shape)


def build_loop(ctx, nodes, name: str, trip: str, cond_in: str, carried_in: list, outputs: list, inputs: list[str]) -> list[str]:
    """The one ONNX `Loop` builder: a body of `nodes` taking (trip, cond_in, *carried_in: value
    infos) and giving `outputs` (value infos: keep going, carried, per-trip), run on `inputs`
    (trip count, condition, initial carried values); returns the Loop's output names."""
    graph = helper.make_graph(
        nodes, ctx.unique(name),
        [helper.make_tensor_value_info(trip, onnx.TensorProto.INT64, []),
         helper.make_tensor_value_info(cond_in, onnx.TensorProto.BOOL, []), *carried_in],
        outputs,
    )
    return ctx.emit("Loop", inputs, len(outputs) - 1, hint="loop", body=graph)


def emit_loop(ctx, node, inputs):
    from ptonnx.lowering.lower import lower_body

    body, n_carried = node.attrs["body"], node.attrs["n_carried"]
    trip_count, cond, *args = inputs
    carried, invariants = args[:n_carried], args[n_carried:]
    trip, cond_in = ctx.unique("trip"), ctx.unique("cond_in")
    carried_in = [ctx.unique(f"{v.name or 'carried'}_in") for v in body.inputs[1 : 1 + n_carried]]
    nodes, outs = lower_body(ctx, body, [trip, *carried_in, *invariants], out_hint=f"{body.name}_out")
    return build_loop(
        ctx, nodes, body.name, trip, cond_in,
        [_info(n, v) for n, v in zip(carried_in, body.inputs[1 : 1 + n_carried], strict=True)],
        # per-trip values by rank only: no trip gives (0, 0, ...), as the type rule says
        [_info(n, v, sizes=k <= n_carried) for k, (n, v) in enumerate(zip(outs, body.outputs, strict=True))],
        [trip_count, cond, *carried],
    )


def emit_if(ctx, node, inputs):
    from ptonnx.lowering.lower import lower_body

    cond, *args = inputs
    branches = {}
    for key in ("then_body", "else_body"):
        body = node.attrs[key]
        nodes, outs = lower_body(ctx, body, args, out_hint=f"{key.split('_')[0]}_out")
        branches[key.replace("body", "branch")] = helper.make_graph(
            nodes, ctx.unique(body.name), [], [_info(n, v) for n, v in zip(outs, body.outputs, strict=True)]
        )
    return ctx.emit("If", [cond], len(node.outputs), hint="if", **branches)


# the bodies' ops are legalised one by one; Loop and If move values, they compute nothing
EMITTERS["Loop"] = emit_loop
EMITTERS["If"] = emit_if
