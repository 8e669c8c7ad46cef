"""Target "iree": a model's static inputs, and its static outputs, of one dtype in one flat buffer.

IREE's Python runtime pays per buffer of a call, not per byte: 2.5 µs for each input passed
or output read on ptonnx's own call path (`iree_call.IreeCall`), against a floor of 10 µs for
invoking a small model at all (`benchmarks/results/iree_call.md`). A PyMC log-density with
five parameters and their gradients has 5 inputs and 6 outputs; packed, it has one of each
(k = 20 parameters: 42 µs a call packed, 129 unpacked). Packing costs the model a Slice and a Reshape per input and a Reshape and a Concat per
output group, which IREE fuses into their neighbours.

Packed are the values whose shape is fully static (the caller's check of the static dims is
then a check of each piece's size), of non-zero size (IREE's zero-size dispatches crash its
compiler: `known_zeros.py`), of a dtype IREE holds as it is (not bool; a key is int64 by
then: `passes/carry_dtypes.py`), two or more of a dtype. `SIGNATURE_KEY` in the model's
metadata says where each one went; `ptonnx.iree_runtime.Signature` reads it.
"""

from __future__ import annotations

import json
import math

import onnx
from onnx import TensorProto, helper

#: the metadata key of the packing: {"inputs": [...], "outputs": [...]}, one entry per original
#: input (output) in order: [position] where it is passed as it is, or [position, offset, shape]
#: where it is the flat buffer's elements offset..offset + size at that position
SIGNATURE_KEY = "ptonnx.iree.signature"
PACKED_TYPES = (TensorProto.DOUBLE, TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32)


def pack_signature(ctx, inputs: list, outputs: list) -> tuple[list, list, list, dict]:
    """The model's inputs and outputs once packed, the declarations of the values that were
    inputs or outputs, and the metadata; the nodes that unpack inputs go first in `ctx.nodes`,
    the ones that pack outputs last."""
    first: list[onnx.NodeProto] = []
    new_inputs, in_layout = _groups(inputs)
    packed_inputs = []
    for members in new_inputs:
        if isinstance(members, list):
            packed = helper.make_tensor_value_info(ctx.unique(f"packed_{_dtype_name(members)}"), members[0].type.tensor_type.elem_type,
                                                   [sum(_size(v) for v in members)])
            offset = 0
            for v in members:
                piece = ctx.unique(f"{v.name}_flat")
                first.append(helper.make_node("Slice", [packed.name, ctx.ints([offset]), ctx.ints([offset + _size(v)])], [piece]))
                first.append(helper.make_node("Reshape", [piece, ctx.ints(_shape(v))], [v.name]))
                offset += _size(v)
            packed_inputs.append(packed)
        else:
            packed_inputs.append(members)
    ctx.nodes[:0] = first
    new_outputs, out_layout = _groups(outputs)
    packed_outputs = []
    for members in new_outputs:
        if isinstance(members, list):
            flat = [ctx.emit1("Reshape", [v.name, ctx.ints([_size(v)])], hint=f"{v.name}_flat") for v in members]
            name = ctx.unique(f"packed_{_dtype_name(members)}_out")
            ctx.emit1("Concat", flat, out=name, axis=0)
            packed_outputs.append(helper.make_tensor_value_info(name, members[0].type.tensor_type.elem_type,
                                                                [sum(_size(v) for v in members)]))
        else:
            packed_outputs.append(members)
    declared = [v for v in [*inputs, *outputs] if v not in packed_inputs and v not in packed_outputs]
    return packed_inputs, packed_outputs, declared, {SIGNATURE_KEY: json.dumps({"inputs": in_layout, "outputs": out_layout})}


def _groups(values: list) -> tuple[list, list]:
    """The packed signature's values (a list of the members of a packed buffer, or a value as
    it is) and each original value's place in it."""
    by_type: dict[int, list[int]] = {}
    for i, v in enumerate(values):
        if _packable(v):
            by_type.setdefault(v.type.tensor_type.elem_type, []).append(i)
    packed = {i: members for members in by_type.values() if len(members) > 1 for i in members}
    new: list = []
    layout: list = [None] * len(values)
    for i, v in enumerate(values):
        if i not in packed:
            layout[i] = [len(new)]
            new.append(v)
        elif i == packed[i][0]:
            offset = 0
            for k in packed[i]:
                layout[k] = [len(new), offset, _shape(values[k])]
                offset += _size(values[k])
            new.append([values[k] for k in packed[i]])
    return new, layout


def _packable(v: onnx.ValueInfoProto) -> bool:
    t = v.type.tensor_type
    return (t.elem_type in PACKED_TYPES and t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim)
            and _size(v) > 0)


def _shape(v: onnx.ValueInfoProto) -> list[int]:
    return [d.dim_value for d in v.type.tensor_type.shape.dim]


def _size(v: onnx.ValueInfoProto) -> int:
    return math.prod(_shape(v))


def _dtype_name(members: list) -> str:
    return helper.tensor_dtype_to_np_dtype(members[0].type.tensor_type.elem_type).name
