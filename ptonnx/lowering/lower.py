"""`lower(graph)`: an IR graph as a checker-valid ONNX opset-18 model."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ptonnx import model_files
from ptonnx.contracts import DECOMPOSED, LEGALISED, UNIFIED
from ptonnx.errors import LoweringError
from ptonnx.ir import Graph, Value, format_node
from ptonnx.ir.printer import describe_source
from ptonnx.ir.registry import disallowed_dtypes
from ptonnx.onnxruntime_dtypes import node_rules
from ptonnx.lowering.check import checks_metadata, flag_outputs
from ptonnx.lowering.context import TARGETS, LowerContext, kept, onnx_dtype
from ptonnx.lowering.iree_signature import pack_signature
from ptonnx.lowering.known_zeros import known_zeros
from ptonnx.lowering.registry import EMITTERS

OPSET = 18
#: onnx writes a newer IR version by default than onnxruntime reads; 10 is read
#: by every onnxruntime since 1.17 and covers opset 18.
IR_VERSION = 10
PRODUCER = "ptonnx"
#: what lowering requires of every node (`ptonnx.contracts`), besides an emitter and allowed dtypes
LOWERING_REQUIRES = (DECOMPOSED, UNIFIED, LEGALISED)


def _value_info(name: str, value: Value) -> onnx.ValueInfoProto:
    """Static dims as sizes, symbolic ones by name; an unknown dim (None) stays unnamed."""
    return helper.make_tensor_value_info(name, onnx_dtype(value.dtype), list(value.shape))


def _is_input(value: Value) -> bool:
    return value.producer is None and value.const is None


def _claim_output_names(ctx: LowerContext, graph: Graph, output_names) -> list[str]:
    """The ONNX name of each output, claimed before any node is emitted (so no other value takes one)."""
    wanted = [v.name for v in graph.outputs] if output_names is None else list(output_names)
    if len(wanted) != len(graph.outputs):
        raise LoweringError(f"{len(wanted)} output names given for the {len(graph.outputs)} outputs of graph {graph.name!r}")
    taken = {ctx.name_of(v) for v in graph.inputs}
    names: list[str] = []
    for i, (v, want) in enumerate(zip(graph.outputs, wanted, strict=True)):
        want = want or f"output_{i}"
        if _is_input(v) and ctx.name_of(v) == want and want not in names:
            name = want  # the input itself is the output
        else:
            name = ctx.unique(f"{want}_{i}" if want in taken else want)
        taken.add(name)
        names.append(name)
    return names


def _copy_outputs(ctx: LowerContext, graph: Graph, out_names: list[str]) -> None:
    """An Identity for each output its node could not write under its name (`emit_nodes`): an
    input or a constant, a value listed again, a value an emitter gave without a node of its own."""
    for v, want in zip(graph.outputs, out_names, strict=True):
        have = ctx.name_of(v)
        if have != want:
            ctx.emit("Identity", [have], [want])


def check_lowerable(graph: Graph) -> None:
    """Raise `LoweringError` for any node ONNX cannot take as it is, or onnxruntime cannot run:
    the one place ptonnx refuses a model for its dtypes (`ptonnx/onnxruntime_dtypes.py` says why)."""
    for node in graph:
        if node.op not in EMITTERS and DECOMPOSED.fault(node) is None:
            raise LoweringError(f"{format_node(node)}{describe_source(node)}\n  no ONNX lowering for IR op {node.op!r}")
        for condition in LOWERING_REQUIRES:
            why = condition.fault(node)
            if why is not None:
                raise LoweringError(f"{format_node(node)}{describe_source(node)}\n  cannot be lowered: {why}.\n  To fix: {condition.remedy}.")
        for rule in node_rules(node).values():
            if rule.refuse is not None:
                remedy = (" Either compute it in float32 in the PyTensor graph (cast the input and weights), or opt in "
                          "to float32 compute for such ops: ptonnx.compile(..., float64_via_float32=True).") if rule.narrow else ""
                raise LoweringError(f"{format_node(node)}{describe_source(node)}\n  {rule.refuse}.{remedy}")
        for var, dtype, allowed in disallowed_dtypes(node):
            raise LoweringError(
                f"{format_node(node)}{describe_source(node)}\n  cannot be lowered: ONNX {node.op} does not take {dtype} "
                f"({var}={dtype} is not one of {sorted(allowed)}).\n"
                f"  Cast its inputs to one of those dtypes in the PyTensor graph."
            )


def emit_nodes(ctx: LowerContext, graph: Graph, planned: dict[Value, str] | None = None) -> None:
    """Emit every node of `graph` (its inputs already named in `ctx`), each IR value under its
    final name: the node an emitter made for it writes `planned[value]` (a graph output's name,
    claimed before), else the value's IR name made unique, else the name the emitter gave it.
    A value an emitter gives without a node of its own (one of its inputs, a constant, a node
    emitted before and given again by the emit cache) is read under that name; but where such a
    node emitted before gives a graph output, it writes the output's name (no Identity copies it)."""
    planned = planned or {}
    claimed = set(planned.values())
    for node in graph:
        mark = ctx.mark()
        names = [ctx.name_of(v) for v in node.inputs]
        produced = known_zeros(ctx, node, names) if ctx.target == "iree" else None
        if produced is None:
            produced = EMITTERS[node.op](ctx, node, names)
        if isinstance(produced, str):
            produced = [produced]
        if len(produced) != len(node.outputs):
            raise LoweringError(f"{format_node(node)}\n  its emitter gave {len(produced)} names for {len(node.outputs)} outputs")
        # a name this emitter's node writes -> its final name (a name given for two IR values is
        # settled by the first: the second reads it under that name)
        settled: dict[str, str] = {}
        for v, n in zip(node.outputs, produced, strict=True):
            if n not in settled and ctx.made_since(n, mark):
                settled[n] = ctx.settle(n, mark, final=planned.get(v), hint=v.name) if v in planned or v.name else n
            elif n not in settled and v in planned and ctx.is_written(n) and n not in claimed:
                # an output given as an earlier node's value (a Squeeze of no axes): that node writes
                # the output's name, rather than an Identity copying it (unless it is another output's)
                settled[n] = ctx.settle(n, mark, final=planned[v])
            ctx.bind(v, settled.get(n, n))


def lower_body(ctx: LowerContext, graph: Graph, input_names: list[str], out_hint: str = "body_out",
               finish=None) -> tuple[LowerContext, list[str]]:
    """The nodes and output names of a body graph, its inputs bound to `input_names` (body inputs
    of the ONNX subgraph, or outer-scope names it reads). An output that a body node writes is
    that node's output; any other (an input, an outer value, a constant, a value listed twice)
    is copied by an Identity, as ONNX wants a subgraph's outputs written inside it. onnxruntime
    pays for each Identity on every trip of a loop. `finish(body_context, out_names) -> out_names`
    may add nodes after the body's own (a Loop's flattened per-trip outputs). Returns the body's
    context (its `nodes`, `flags`, `infos`) and its output names."""
    check_lowerable(graph)
    body = ctx.child()
    for v, n in zip(graph.inputs, input_names, strict=True):
        body.bind(v, n)
    emit_nodes(body, graph)
    out_names: list[str] = []
    for i, v in enumerate(graph.outputs):
        have = body.name_of(v)
        if body.is_produced(have) and have not in out_names:
            out_names.append(have)
        else:
            out_names.append(body.emit1("Identity", [have], out=body.unique(f"{out_hint}_{i}")))
    if finish is not None:
        out_names = finish(body, out_names)
    return body, out_names


def lower(graph: Graph, *, name: str | None = None, doc: str = "", output_names=None, weights: dict | None = None,
          target: str = "onnxruntime") -> onnx.ModelProto:
    """`graph` as an ONNX model, in the form `target` (`context.TARGETS`) reads: "iree" has
    Loops without per-trip outputs and checks as flag outputs after the user's.

    With a `weights` dict, a model too large for one protobuf message refers to its large
    tensors (`ptonnx.model_files`) and `weights` gets their arrays, uncopied; without one,
    the model is whole (and may be too large to serialise).

    `output_names` (one per output; None for an unnamed one) names the model's
    outputs, by default their IR names. An unnamed output is `output_<i>`; a
    name already taken by an input or an earlier output becomes `<name>_<i>`
    (`<i>` its position; made unique if even that is taken).
    """
    if not graph.outputs:
        raise LoweringError(f"graph {graph.name!r} has no outputs; an ONNX model needs at least one")
    check_lowerable(graph)
    if target not in TARGETS:
        raise LoweringError(f"target={target!r}: lowering knows {', '.join(TARGETS)}")
    ctx = LowerContext(target)
    inputs = []
    for i, v in enumerate(graph.inputs):
        n = ctx.name_of(v, f"input_{i}")
        inputs.append(_value_info(n, v))

    out_names = _claim_output_names(ctx, graph, output_names)
    planned: dict[Value, str] = {}  # the first output of each node-made value: its node writes that name
    for v, n in zip(graph.outputs, out_names, strict=True):
        if v.producer is not None:
            planned.setdefault(v, n)
    emit_nodes(ctx, graph, planned)
    _copy_outputs(ctx, graph, out_names)
    outputs = [_value_info(n, v) for v, n in zip(graph.outputs, out_names, strict=True)] + flag_outputs(ctx)
    declared, signature = [], {}
    if ctx.target == "iree":
        inputs, outputs, declared, signature = pack_signature(ctx, inputs, outputs)

    read = _names_read(ctx.nodes)
    initializers = [(n, a) for n, a in ctx.initializers if n in read]  # an emitter may drop an optional input
    external = weights is not None and model_files.too_large((a for _, a in initializers), len(ctx.nodes))
    model = _model(ctx.nodes, name or graph.name, inputs, outputs, initializers, doc, weights if external else None)
    model.graph.value_info.extend(_static_shapes(ctx, set(out_names)))
    model.graph.value_info.extend(kept(ctx.infos))
    model.graph.value_info.extend(declared)
    for key, text in {**checks_metadata(ctx), **signature}.items():
        model.metadata_props.add(key=key, value=text)
    return model


def _static_shapes(ctx, outputs: set[str]) -> list[onnx.ValueInfoProto]:
    """The type of every value a node writes whose IR shape is fully known. ONNX's shape
    inference loses sizes that pass through computed shapes (a Reshape to a Concat of
    dims); a consumer that needs static shapes (IREE rejects a ScatterElements on a
    dynamically shaped Slice) gets them from here. onnxruntime checks them against its own.
    For IREE, every value's rank and static sizes are declared. A name several IR values
    share (the emit cache gave a later one the earlier one's node) is declared once."""
    known = (lambda d: isinstance(d, int)) if ctx.target != "iree" else (lambda d: True)
    declared: dict[str, onnx.ValueInfoProto] = {}
    for value, name in ctx.names():
        if (name not in declared and value.producer is not None and ctx.is_produced(name) and name not in outputs
                and all(known(d) for d in value.shape)):
            declared[name] = _declared(name, value)
    return list(declared.values())


def _declared(name: str, value: Value) -> onnx.ValueInfoProto:
    """A value's dtype, rank and static sizes (for IREE, whose importer needs every value's rank
    and wants what is static of a shape alike on producer and consumer)."""
    return helper.make_tensor_value_info(name, onnx_dtype(value.dtype), [d if isinstance(d, int) else None for d in value.shape])


def _names_read(nodes) -> set[str]:
    """Every value name the nodes read, in their body graphs too (which read outer names)."""
    read = set()
    for node in nodes:
        read.update(node.input)
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                read |= _names_read(attribute.g.node)
    return read


def _model(nodes, name, inputs, outputs, initializers, doc, weights: dict | None) -> onnx.ModelProto:
    """The ModelProto, built in place: `helper.make_graph`/`make_model` copy the initializers
    through serialisation, which is slow and fails for a tensor over 2 GiB; and each
    initializer is filled in the model itself, so a weight's bytes are copied once (or,
    in `weights`, not at all)."""
    model = onnx.ModelProto(ir_version=IR_VERSION, producer_name=PRODUCER, doc_string=doc)
    model.opset_import.append(helper.make_opsetid("", OPSET))
    g = model.graph
    g.name = name
    g.node.extend(nodes)
    g.input.extend(inputs)
    g.output.extend(outputs)
    offset = 0
    for tensor_name, array in initializers:
        if weights is not None and model_files.stored_outside(array):
            weights[tensor_name] = array = np.require(array, requirements="C")
            offset = model_files.refer(g.initializer.add(), tensor_name, array, offset)
        else:
            _fill(g.initializer.add(), tensor_name, array)
    return model


def _fill(tensor: onnx.TensorProto, name: str, array: np.ndarray) -> None:
    """`tensor` = `array` as numpy_helper.from_array writes it (raw little-endian bytes for
    the IR's bool, integer and float dtypes), without a TensorProto in between."""
    if array.dtype.kind not in "biuf" or array.dtype.byteorder == ">":
        tensor.CopyFrom(numpy_helper.from_array(np.require(array, requirements="C"), name))
        return
    tensor.name = name
    tensor.data_type = helper.np_dtype_to_tensor_dtype(array.dtype)
    tensor.dims.extend(array.shape)
    tensor.raw_data = np.require(array, requirements="C").tobytes()
