"""32-bit words carried in int64 for IREE, whose ONNX importer has no unsigned tensors.

ptonnx's generator (`decompositions/random/bits.py`) computes in uint32: wrapping Add,
BitShift, bitwise Or/Xor, and Casts between uint32 and the integers and floats. torch-mlir's
ONNX importer, which IREE's path goes through, refuses uint32 ("failed to legalize
onnx.Cast ... ui32"). So the model IREE compiles carries every uint32 value as an int64
holding the same number (in [0, 2**32)), and keeps it there:

- Add, Sub and Mul are followed by `BitwiseAnd 0xFFFFFFFF` (wrapping mod 2**32: the low
  32 bits of an int64 result are the uint32 result's, even where the int64 product wraps);
- a shift by a constant r is a Mul by 2**r (then the mask) or a Div by 2**r (exact floor
  division of a non-negative number): ONNX's BitShift is unsigned-only;
- BitwiseNot is a Xor with the mask; a Cast to uint32 is a Cast to int64 and the mask;
- everything else (Or, Xor, And, comparisons, Gather, Concat, Reshape, Casts from the words)
  reads the same numbers and needs nothing.

The generator's counters are uint64 element numbers below 2**56; uint64 values are carried
as the same int64 numbers without a mask (ptonnx makes none at or above 2**63).
The model's uint32 inputs and outputs (keys) become int64: `IreeModel.run` converts the
arrays at the boundary. A shift by a run-time amount, or uint32 inside a loop or branch
body (which IREE does not compile anyway), is refused by name.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

U32, U64, I64 = onnx.TensorProto.UINT32, onnx.TensorProto.UINT64, onnx.TensorProto.INT64
UNSIGNED = (U32, U64)
MASK = np.int64(0xFFFFFFFF)
#: ops whose int64 result can leave [0, 2**32) and is brought back by the mask
WRAPPING = {"Add", "Sub", "Mul", "Neg"}


class WordsError(ValueError):
    """A uint32 computation the int64 carrying cannot express (`iree_runtime` re-raises it)."""


def carried_in_int64(model: onnx.ModelProto, dtypes: dict) -> tuple[onnx.ModelProto, list[int], list[int]]:
    """A copy of `model` with its uint32 values as int64; the positions of the inputs and
    outputs that were uint32 (the caller converts those arrays)."""
    words = {name for name, t in dtypes.items() if t == U32}
    wide = {name for name, t in dtypes.items() if t == U64}
    graph = model.graph
    inputs = [i for i, v in enumerate(graph.input) if v.type.tensor_type.elem_type in UNSIGNED]
    outputs = [i for i, v in enumerate(graph.output) if v.type.tensor_type.elem_type in UNSIGNED]
    if not words and not wide and not inputs and not outputs:
        return model, [], []
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH and _has_words(attribute.g):
                raise WordsError(f"{node.op_type} node {node.name!r} computes in uint32 inside its body")
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    g = copy.graph
    for value in [*g.input, *g.output, *g.value_info]:
        if value.type.tensor_type.elem_type in UNSIGNED:
            value.type.tensor_type.elem_type = I64
    constants = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for i, tensor in enumerate(g.initializer):
        if tensor.data_type in UNSIGNED:
            g.initializer[i].CopyFrom(numpy_helper.from_array(constants[tensor.name].astype(np.int64), tensor.name))
    g.initializer.append(numpy_helper.from_array(MASK, "words_mask"))
    nodes = []
    for k, node in enumerate(model.graph.node):
        nodes.extend(_carried(node, words, wide, constants, g, k))
    del g.node[:]
    g.node.extend(nodes)
    return copy, inputs, outputs


def _carried(node, words: set, wide: set, constants: dict, graph, k: int) -> list:
    out = node.output[0] if node.output else ""
    if node.op_type == "Constant" and (out in words or out in wide):
        value = numpy_helper.to_array(helper.get_attribute_value(node.attribute[0])).astype(np.int64)
        return [helper.make_node("Constant", [], [out], value=numpy_helper.from_array(value, out))]
    if node.op_type == "Cast" and helper.get_attribute_value(node.attribute[0]) == U32:
        return _masked(helper.make_node("Cast", list(node.input), [f"words_{k}"], to=I64), out, k)
    if node.op_type == "Cast" and helper.get_attribute_value(node.attribute[0]) == U64:
        return [helper.make_node("Cast", list(node.input), [out], to=I64)]
    if out not in words and out not in wide:
        return [node]
    if node.op_type in WRAPPING and out in words:
        return _masked(helper.make_node(node.op_type, list(node.input), [f"words_{k}"]), out, k)
    if node.op_type == "BitwiseNot" and out in words:
        return [helper.make_node("BitwiseXor", [node.input[0], "words_mask"], [out])]
    if node.op_type == "BitShift":
        amount = constants.get(node.input[1])
        if amount is None:
            raise WordsError(f"BitShift node {node.name!r} shifts by an amount known only at run time")
        factor = f"words_{k}_factor"
        graph.initializer.append(numpy_helper.from_array(np.left_shift(np.int64(1), amount.astype(np.int64)), factor))
        if helper.get_attribute_value(node.attribute[0]) == b"LEFT":
            if out in wide:
                return [helper.make_node("Mul", [node.input[0], factor], [out])]
            return _masked(helper.make_node("Mul", [node.input[0], factor], [f"words_{k}"]), out, k)
        return [helper.make_node("Div", [node.input[0], factor], [out])]
    return [node]


def _masked(node, out: str, k: int) -> list:
    return [node, helper.make_node("BitwiseAnd", [node.output[0], "words_mask"], [out])]


def _has_words(graph) -> bool:
    typed = [*graph.input, *graph.output, *graph.value_info]
    if any(v.type.tensor_type.elem_type in UNSIGNED for v in typed) or any(t.data_type in UNSIGNED for t in graph.initializer):
        return True
    for node in graph.node:
        if node.op_type == "Cast" and helper.get_attribute_value(node.attribute[0]) in UNSIGNED:
            return True
        if any(a.type == onnx.AttributeProto.GRAPH and _has_words(a.g) for a in node.attribute):
            return True
    return False
