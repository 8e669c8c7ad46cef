"""`lower(graph)`: an IR graph as a checker-valid ONNX opset-18 model."""

from __future__ import annotations

import onnx
from onnx import helper

from ptonnx.errors import LoweringError
from ptonnx.ir import Graph, Value, format_node
from ptonnx.ir.registry import disallowed_dtypes, mixed_inputs
from ptonnx.lowering.context import LowerContext, onnx_dtype
from ptonnx.lowering.registry import EMITTERS

OPSET = 18
#: onnx writes a newer IR version by default than onnxruntime reads; 10 is read
#: by every onnxruntime since 1.17 and covers opset 18.
IR_VERSION = 10
PRODUCER = "ptonnx"


def _value_info(name: str, value: Value) -> onnx.ValueInfoProto:
    dims = [f"{name}_dim{i}" if d is None else d for i, d in enumerate(value.shape)]
    return helper.make_tensor_value_info(name, onnx_dtype(value.dtype), dims)


def check_lowerable(graph: Graph) -> None:
    """Raise `LoweringError` for any node ONNX cannot take as it is."""
    for node in graph:
        if node.op not in EMITTERS:
            raise LoweringError(f"{format_node(node)}\n  no ONNX lowering for IR op {node.op!r}")
        mixed = mixed_inputs(node)
        if mixed:
            listed = "; ".join(f"input {i} is {dtype}, needs {target}" for i, dtype, target in mixed)
            raise LoweringError(
                f"{format_node(node)}\n  cannot be lowered: {listed}.\n"
                "  Inputs that share a type must have one dtype in ONNX: include the "
                "'unify_dtypes' pass (it is in ptonnx.DEFAULT_PASSES)."
            )
        for var, dtype, allowed in disallowed_dtypes(node):
            raise LoweringError(
                f"{format_node(node)}\n  cannot be lowered: ONNX {node.op} does not take {dtype} "
                f"({var}={dtype} is not one of {sorted(allowed)}).\n"
                f"  Cast its inputs to one of those dtypes in the PyTensor graph."
            )


def lower(graph: Graph, *, name: str | None = None, doc: str = "") -> onnx.ModelProto:
    if not graph.outputs:
        raise LoweringError(f"graph {graph.name!r} has no outputs; an ONNX model needs at least one")
    check_lowerable(graph)
    ctx = LowerContext()
    inputs = []
    for i, v in enumerate(graph.inputs):
        n = ctx.name_of(v, f"input_{i}")
        inputs.append(_value_info(n, v))

    # Outputs keep their IR names when they are plain node results; anything else
    # (an input, a constant, a value listed twice) gets an Identity of its own.
    out_names: dict[Value, str] = {}
    direct: set[Value] = set()
    for i, v in enumerate(graph.outputs):
        if v.producer is not None and v not in direct:
            direct.add(v)
            out_names[v] = ctx.name_of(v, f"output_{i}")

    for node in graph:
        in_names = [ctx.name_of(v) for v in node.inputs]
        o_names = [ctx.name_of(o) for o in node.outputs]
        EMITTERS[node.op](ctx, node, in_names, o_names)

    outputs = []
    seen: set[Value] = set()
    for i, v in enumerate(graph.outputs):
        if v in direct and v not in seen:
            seen.add(v)
            outputs.append(_value_info(out_names[v], v))
            continue
        alias = ctx.unique(f"{v.name or 'output'}_{i}" if v in seen or v.name else f"output_{i}")
        ctx.emit("Identity", [ctx.name_of(v)], [alias])
        outputs.append(_value_info(alias, v))

    read = {name for node in ctx.nodes for name in node.input}
    initializers = [t for t in ctx.initializers if t.name in read]  # an emitter may drop an optional input
    onnx_graph = helper.make_graph(ctx.nodes, name or graph.name, inputs, outputs, initializers)
    model = helper.make_model(
        onnx_graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
        producer_name=PRODUCER,
        doc_string=doc,
    )
    return model
