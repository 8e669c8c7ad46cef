"""`float64_via_float32`: compute the float64 ops onnxruntime cannot run in float32, between Casts.

An explicit opt-in (see `ptonnx.lowering.float64`): the model's inputs and
outputs keep their dtypes; the wrapped ops lose float64 precision.
"""

from __future__ import annotations

import attrs
import numpy as np

from ptonnx.ir import Builder, Graph, Value
from ptonnx.passes.base import PassResult
from ptonnx.runtime_support import NO_FLOAT64_KERNEL


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
