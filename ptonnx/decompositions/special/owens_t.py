"""OwensT: Owen's T function T(h, a) = 1/(2 pi) integral_0^a exp(-h**2 (1 + x**2) / 2) / (1 + x**2) dx.

T is even in h and odd in a; for |a| > 1, with Q(x) = erfc(x / sqrt 2) / 2,
T(h, a) = Q(h)/2 + Q(ah)/2 - Q(h) Q(ah) - T(ah, 1/a) (Owen's identity; the result is
at least Q(h)/4 and its largest term Q(h)/2, so it cancels by at most a factor 4).
For 0 <= a <= 1, T = exp(-h**2/2) / (2 pi) J with J = integral_0^a exp(-(hx)**2/2) / (1 + x**2) dx:

- ah <= 8.6: J by 24-point Gauss-Legendre on [0, a] (all terms positive: relatively
  accurate; its error is below 1e-17 for ah <= 9, the poles x = ±i and the Gaussian
  of width 1/h both far enough from the nodes' reach);
- ah > 8.6: J is its value to infinity, T = Q(h) / 2, to within exp(-(ah)**2/2) 0.8/(ah) < 1e-17.

Where Patefield and Tandy (SciPy, Boost) select one of six series per region of (h, a)
for an absolute 1e-16, this keeps T relatively accurate where it is tiny: exp(-h**2/2) is
Cephes' split expx2 form, Q(h) = exp(-h**2/2) erfcx(h / sqrt 2) / 2, not erfc of a
rounded h / sqrt 2 (whose rounding costs x**2 ulp). Special values as SciPy's: T(h, ±inf)
= ±Q(|h|)/2, T(±inf, a) = ±0 (a's sign), NaN in, NaN out.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, exp, where
from ptonnx.decompositions.registry import decomposes
from ptonnx.decompositions.special.erf import erf_small, erfcx_large, exp_square

#: 24-point Gauss-Legendre rule on [0, 1] (references/special_constants.py gauss_legendre)
NODES = (
    0.00240639000148932, 0.012635722014345251, 0.030862723998633622, 0.056792236497799485, 0.08999900701304854,
    0.12993790421072282, 0.17595317403151223, 0.22728926430558022, 0.2831032461869774, 0.3424786601519183,
    0.40444056626319186, 0.4679715535686972, 0.5320284464313028, 0.5955594337368082, 0.6575213398480817,
    0.7168967538130225, 0.7727107356944197, 0.8240468259684878, 0.8700620957892772, 0.9100009929869515,
    0.9432077635022005, 0.9691372760013663, 0.9873642779856547, 0.9975936099985107,
)
WEIGHTS = (
    0.0061706148999936, 0.014265694314466832, 0.022138719408709904, 0.02964929245771839, 0.03667324070554015,
    0.04309508076597664, 0.04880932605205694, 0.05372213505798282, 0.0577528340268628, 0.060835236463901696,
    0.06291872817341415, 0.06396909767337608, 0.06396909767337608, 0.06291872817341415, 0.060835236463901696,
    0.0577528340268628, 0.05372213505798282, 0.04880932605205694, 0.04309508076597664, 0.03667324070554015,
    0.02964929245771839, 0.022138719408709904, 0.014265694314466832, 0.0061706148999936,
)
#: above this ah, T(h, a) = T(h, inf) = Q(h)/2 to within 1e-17 relative
QUADRATURE_UP_TO = 8.6
INV_SQRT2 = 1 / math.sqrt(2)
INV_2PI = 1 / (2 * math.pi)


def upper_normal(h: Ex) -> Ex:
    """Q(h) = P(Z > h) = erfc(h / sqrt 2) / 2 for h >= 0, relatively accurate in the tail."""
    x = h * INV_SQRT2
    tail = exp_square(h, -0.5) * erfcx_large(x) * 0.5  # x's rounding is harmless to erfcx
    return where(x >= 1.0, tail, (1.0 - erf_small(x)) * 0.5)


def _pairwise_sum(terms: list[Ex]) -> Ex:
    while len(terms) > 1:
        terms = [a + b for a, b in zip(terms[::2], terms[1::2], strict=False)] + terms[len(terms) - len(terms) % 2:]  # an odd last term has no partner
    return terms[0]


def owens_t_core(h: Ex, a: Ex) -> Ex:
    """T(h, a) for h >= 0 and 0 <= a <= 1."""
    t = a * h
    terms = []
    for u, w in zip(NODES, WEIGHTS, strict=True):
        v, au = t * u, a * u
        terms.append(exp(v * v * -0.5) / (au * au + 1.0) * w)
    quadrature = exp_square(h, -0.5) * (a * _pairwise_sum(terms)) * INV_2PI
    return where(t > QUADRATURE_UP_TO, upper_normal(h) * 0.5, quadrature)


def owens_t(h: Ex, a: Ex) -> Ex:
    h_abs, a_abs = abs(h), abs(a)
    ah = a_abs * h_abs
    reflect = a_abs > 1.0
    core = owens_t_core(where(reflect, ah, h_abs), where(reflect, 1.0 / a_abs, a_abs))
    qh, qah = upper_normal(h_abs), upper_normal(ah)
    reflected = ((qh + qah) * 0.5 - qh * qah) - core
    t = where(reflect, reflected, core)
    t = where(a_abs.eq(math.inf), qh * 0.5, t)  # ah is NaN at h = 0
    t = where(h_abs.eq(math.inf), 0.0, t)
    signed = where(a >= 0.0, t, -t)  # -t second: T(inf, -1) = -0.0, as SciPy
    return where(h.isnan() | a.isnan(), math.nan, signed)


@decomposes("OwensT")
def decompose_owens_t(node, inputs):
    return owens_t(*inputs)
