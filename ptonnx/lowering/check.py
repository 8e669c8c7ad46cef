"""Run-time checks in ONNX, which has no assert: a failed check makes a Gather index
out of range, so onnxruntime stops the run with an error naming that Gather node.

`Check(x, *conds)` becomes `Reshape(x, Gather(Unsqueeze(Shape(x)), failed))`: with
`failed` = 0 the Reshape returns `x` unchanged (onnxruntime aliases it, no copy);
with 1 the Gather's index is out of range. The node's name and the check's message
go to the model's metadata (`CHECKS_KEY`), where `ptonnx.CompiledModel` finds them
to raise the exception PyTensor raises. Other runtimes see an indexing error.

For IREE (`ctx.target == "iree"`), whose Gather does not bound its index (it reads past the
buffer), a check is its failure flag instead: what it guards is zeros where it failed (no
later Gather reads out of range), the flag goes to `ctx.flags`, a Loop or If carries its
bodies' flags out (`control_flow.py`), and the model reports each as an output after the
user's (`FLAGS_KEY` names their checks), which `IreeModel.run` raises on.
"""

from __future__ import annotations

import json

from onnx import TensorProto, helper

from ptonnx.lowering.elementwise import where
from ptonnx.lowering.registry import emits

#: metadata key: JSON {node name: {"message": ..., "exception": "module:qualname"}} (read by ptonnx.check_errors)
CHECKS_KEY = "ptonnx.checks"
#: metadata key (target "iree"): JSON [check node name, ...], the checks of the flag outputs in order
FLAGS_KEY = "ptonnx.check_flags"


def _all_true(ctx, value, name: str) -> str:
    """A 0-D bool: every element of `name` is true (true for an empty tensor)."""
    if value.type.ndim == 0:
        return name
    bad = ctx.emit1("Cast", [ctx.emit1("Not", [name])], to=TensorProto.INT64)
    count = ctx.emit1("ReduceSum", [bad], keepdims=0)
    return ctx.emit1("Equal", [count, ctx.scalar(0, "int64")])


@emits("Check")
def emit_check(ctx, node, inputs):
    x, *conds = inputs
    ok = None
    for value, name in zip(node.inputs[1:], conds, strict=True):
        this = _all_true(ctx, value, name)
        ok = this if ok is None else ctx.emit1("And", [ok, this])
    failed = ctx.emit1("Cast", [ctx.emit1("Not", [ok])], to=TensorProto.INT64)
    check = ctx.unique("ptonnx_check")
    ctx.checks[check] = {
        "message": node.attrs["message"] + _where(node),
        "exception": node.attrs["exception"],
    }
    if ctx.target == "iree":
        ctx.flags.append((check, failed))
        return _zeroed_where_failed(ctx, ok, x, node.inputs[0].dtype)
    shape = ctx.emit1("Unsqueeze", [ctx.emit1("Shape", [x]), ctx.const([0], "axes_0")])
    guarded = ctx.emit1("Gather", [shape, failed], node_name=check, axis=0)
    return ctx.emit("Reshape", [x, guarded], allowzero=1)


def _zeroed_where_failed(ctx, ok: str, x: str, dtype: str) -> str:
    """x where the check holds, 0 (False) where it failed: a bool is And-ed (no Where kernel takes
    bool); a float keeps its -0.0 as Where's second branch (`elementwise.where`)."""
    if dtype == "bool":
        return ctx.emit1("And", [ok, x])
    zero = ctx.emit1("CastLike", [ctx.scalar(0, "int64"), x])
    return where(ctx, ctx.emit1("Not", [ok]), zero, x, dtype)


def _where(node) -> str:
    """The checked PyTensor variable, by name (no file paths: the model may be shipped)."""
    name = getattr(getattr(node, "source", None), "name", None)
    return f" (at PyTensor variable {name})" if name else ""


def checks_metadata(ctx) -> dict[str, str]:
    meta = {CHECKS_KEY: json.dumps(ctx.checks)} if ctx.checks else {}
    if ctx.flags:
        meta[FLAGS_KEY] = json.dumps([check for check, _ in ctx.flags])
    return meta


def flag_outputs(ctx) -> list:
    """The graph outputs of the checks' flags (target "iree"), after the user's."""
    return [helper.make_tensor_value_info(flag, TensorProto.INT64, []) for _, flag in ctx.flags]
