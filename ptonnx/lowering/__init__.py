"""Lowering: IR -> ONNX. Knows the IR and ONNX, never PyTensor."""

from ptonnx.lowering import bits, check, creation, division, elementwise, integer_pow, shape  # noqa: F401  (register the emitters)
from ptonnx.lowering import control_flow, fused, indexing, nn, reduction, sequence, tensor  # noqa: F401
from ptonnx.lowering.lower import IR_VERSION, OPSET, check_lowerable, lower
from ptonnx.lowering.registry import EMITTERS, emits

__all__ = ["EMITTERS", "IR_VERSION", "OPSET", "check_lowerable", "emits", "lower"]
