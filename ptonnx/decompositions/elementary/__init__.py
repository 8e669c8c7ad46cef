"""The accurate elementary functions as decompositions into ops onnxruntime runs in float64."""

from ptonnx.decompositions.elementary import exp_log, hyperbolic, inverse_trig, trigonometric  # noqa: F401  (register the decompositions)
