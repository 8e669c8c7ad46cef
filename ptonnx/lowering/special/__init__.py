"""Emitters of the special functions, composed from ops onnxruntime runs in float64."""

from ptonnx.lowering.special import (  # noqa: F401  (register the emitters)
    bessel_i,
    bessel_iv,
    bessel_j,
    bessel_jv,
    bessel_k,
    erf,
    erfinv,
    gamma,
    owens_t,
    polygamma,
)
