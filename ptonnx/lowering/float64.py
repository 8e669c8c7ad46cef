"""float64 CNN ops and onnxruntime: an error by default, float32 compute on request.

onnxruntime (1.31, CPU) has no float64 kernel for Conv, AveragePool,
GlobalAveragePool, GlobalMaxPool or Resize (MaxPool, BatchNormalization,
Softmax and MatMul do have one). A model using them in float64 passes the
ONNX checker but cannot open a session, so lowering refuses it with a
`LoweringError`. To run such a graph anyway, opt in to computing these ops in
float32 by adding the `Float64ViaFloat32` pass::

    ptonnx.compile_function(inputs, outputs, passes=[*ptonnx.DEFAULT_PASSES, Float64ViaFloat32()])

It wraps each such op in Casts (float64 -> float32 -> float64): the model's
inputs and outputs keep their dtypes, the op itself loses float64 precision.
"""

from __future__ import annotations

import attrs
import numpy as np

from ptonnx.errors import LoweringError
from ptonnx.ir import Builder, Graph, Node, Value, format_node
from ptonnx.passes.base import PassResult

#: IR ops onnxruntime cannot run in float64 (checked against onnxruntime 1.31)
NO_FLOAT64_KERNEL = frozenset({"Conv", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Resize"})


def check_float64(node: Node) -> None:
    """Raise `LoweringError` if `node` is an op onnxruntime cannot run in float64."""
    if node.op in NO_FLOAT64_KERNEL and node.outputs[0].dtype == "float64":
        raise LoweringError(
            f"{format_node(node)}\n  onnxruntime has no float64 {node.op} kernel, so this model could not run. "
            "Either compute it in float32 in the PyTensor graph (cast the input and weights), or opt in to "
            "float32 compute for such ops: compile with passes=[*ptonnx.DEFAULT_PASSES, "
            "ptonnx.lowering.float64.Float64ViaFloat32()]."
        )


def _to_float32(builder: Builder, value: Value) -> Value:
    if value.dtype != "float64":
        return value
    if value.const is not None:
        return Value.constant(value.const.astype(np.float32), value.name)
    return builder.op("Cast", value, to="float32")


@attrs.define
class Float64ViaFloat32:
    """Compute float64 `ops` in float32 between Casts, so onnxruntime can run them."""

    ops: frozenset = NO_FLOAT64_KERNEL
    name: str = "float64_via_float32"

    def run(self, graph: Graph) -> PassResult:
        count = 0
        for node in list(graph):
            if node.op not in self.ops or node.outputs[0].dtype != "float64":
                continue
            builder = Builder(graph, before=node)
            inputs = [_to_float32(builder, v) for v in node.inputs]
            narrow = builder.node(node.op, inputs, node.attrs)
            for old, new in zip(node.outputs, narrow.outputs):
                graph.replace_all_uses(old, builder.op("Cast", new, to="float64", name=old.name))
            graph.remove(node)
            count += 1
        return PassResult(count > 0, count, {"ops_in_float32": count} if count else {})
