"""The special functions as decompositions into ops onnxruntime runs in float64."""

from ptonnx.decompositions.special import (  # noqa: F401  (register the decompositions)
    beta,
    beta_inv,
    bessel_i,
    bessel_iv,
    bessel_j,
    bessel_jv,
    bessel_k,
    erf,
    erfinv,
    gamma,
    gamma_inc,
    gamma_inc_inv,
    gamma_inc_products,
    hyp2f1,
    owens_t,
    polygamma,
)
