"""Emitters of the special functions, composed from ops onnxruntime runs in float64."""

from ptonnx.lowering.special import erf, gamma  # noqa: F401  (register the emitters)
