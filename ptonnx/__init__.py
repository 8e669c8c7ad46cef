"""ptonnx: compile PyTensor graphs to ONNX (opset 18)."""

from ptonnx import errors, ir, keys
from ptonnx.api import CompiledModel, compile, compile_function, export
from ptonnx.lifting import lift
from ptonnx.lowering import lower
from ptonnx.mode import ONNXLinker, onnx_mode
from ptonnx.mode import register as _register_mode
from ptonnx.passes import DEFAULT_PASSES, PassManager

_register_mode()

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_PASSES", "CompiledModel", "ONNXLinker", "PassManager", "compile", "compile_function",
    "errors", "export", "ir", "keys", "lift", "lower", "onnx_mode",
]
