"""float64 CNN ops and onnxruntime: an error by default, float32 compute on request.

onnxruntime (1.31, CPU) has no float64 kernel for Conv, AveragePool,
GlobalAveragePool, GlobalMaxPool or Resize (MaxPool, BatchNormalization,
Softmax and MatMul do have one). A model using them in float64 passes the
ONNX checker but cannot open a session, so lowering refuses it with a
`LoweringError`. To run such a graph anyway, opt in to computing these ops in
float32 by adding the `float64_via_float32` pass (`ptonnx.passes.Float64ViaFloat32`)::

    ptonnx.compile_function(inputs, outputs, passes=[*ptonnx.DEFAULT_PASSES, "float64_via_float32"])

It wraps each such op in Casts (float64 -> float32 -> float64): the model's
inputs and outputs keep their dtypes, the op itself loses float64 precision.
"""

from __future__ import annotations

from ptonnx.errors import LoweringError
from ptonnx.ir import Node, format_node
from ptonnx.ir.printer import describe_source

from ptonnx.runtime_support import NO_FLOAT64_KERNEL  # noqa: F401  (re-exported)


def check_float64(node: Node) -> None:
    """Raise `LoweringError` if `node` is an op onnxruntime cannot run in float64."""
    if node.op in NO_FLOAT64_KERNEL and node.outputs[0].dtype == "float64":
        raise LoweringError(
            f"{format_node(node)}{describe_source(node)}\n  onnxruntime has no float64 {node.op} kernel, so this model could not run. "
            "Either compute it in float32 in the PyTensor graph (cast the input and weights), or opt in to "
            "float32 compute for such ops: compile with passes=[*ptonnx.DEFAULT_PASSES, "
            "'float64_via_float32']."
        )
