"""exp(x) K_mu(x) and exp(x) K_{mu+1}(x) for |mu| <= 1/2 and x >= 0, in float64: the start
of the upward recurrence for K of any real order below 25 (bessel_k.py).

- x <= 1: Temme's series (J. Comput. Phys. 19, 1975): with c_k = (x**2/4)**k / k!,
  K_mu = sum c_k f_k and K_{mu+1} = (2/x) sum c_k (p_k - k f_k), where
  p_0 = Gamma(1+mu) (x/2)**-mu / 2, q_0 = Gamma(1-mu) (x/2)**mu / 2,
  f_0 = (mu pi / sin(mu pi)) (Gamma1(mu) cosh(s) + Gamma2(mu) log(2/x) sinh(s)/s), s = mu log(2/x),
  f_k = (k f_{k-1} + p_{k-1} + q_{k-1}) / (k**2 - mu**2), p_k = p_{k-1}/(k - mu), q_k = q_{k-1}/(k + mu).
  Gamma1 = (1/Gamma(1-mu) - 1/Gamma(1+mu)) / (2 mu) and Gamma2 = (1/Gamma(1-mu) + 1/Gamma(1+mu)) / 2
  come from the Taylor series of 1/Gamma(1+z) (references/special_constants.py), so nothing cancels
  as mu -> 0; (x/2)**-mu is a Pow of x (exact), not exp(mu log(x/2)). 16 terms. Its terms
  grow with x while K falls (46 ulp lost near 2): the integral takes over from 1 on.
- 1 < x <= 32: the trapezoidal rule on exp(x) K_v(x) = int_0^inf exp(-x (cosh t - 1)) cosh(v t) dt,
  step 1/8 up to t = 5: every term positive, and the rule converges geometrically for this
  integrand (its error, exp(-pi**2 / h) and exp(-2 pi**2 / (x h**2)), is below 1e-17 here).
- x > 32: Hankel's expansion sqrt(pi/(2x)) sum_k prod_{j<=k} (4v**2 - (2j-1)**2) / (8 j x), 20 terms.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, exp, log, polyval, sin_kernel, sqrt, where

#: 1/Gamma(1+z) = sum c_k z**k (references/special_constants.py), enough for |z| <= 1/2 to 1e-18
RGAMMA_TAYLOR = (
    1.0, 0.5772156649015329, -0.6558780715202539, -0.04200263503409524, 0.16653861138229148,
    -0.04219773455554433, -0.009621971527876973, 0.0072189432466631, -0.0011651675918590652,
    -0.00021524167411495098, 0.0001280502823881162, -2.013485478078824e-05, -1.2504934821426706e-06,
    1.133027231981696e-06, -2.056338416977607e-07, 6.116095104481416e-09, 5.002007644469223e-09,
    -1.18127457048702e-09, 1.0434267116911005e-10, 7.782263439905071e-12, -3.696805618642206e-12,
    5.100370287454476e-13,
)
#: Gamma1(mu) = -sum_{k odd} c_k mu**(k-1) and Gamma2(mu) = sum_{k even} c_k mu**k, in mu**2, highest first
GAMMA1 = tuple(-c for c in RGAMMA_TAYLOR[1::2])[::-1]
GAMMA2 = RGAMMA_TAYLOR[0::2][::-1]
#: sinh(s)/s = sum s**2k / (2k+1)! below |s| = 1/2 (7 terms: 1e-19)
SINHC = tuple(1 / math.factorial(2 * k + 1) for k in range(7))[::-1]
SERIES_TERMS = 16
SERIES_UP_TO = 1.0
#: the trapezoidal rule's step and nodes t_j = j/8, j = 1..40, with cosh t_j - 1 = 2 sinh(t_j/2)**2
STEP = 0.125
NODES = tuple(j * STEP for j in range(1, 41))
COSH_M1 = tuple(2 * math.sinh(t / 2) ** 2 for t in NODES)
TRAPEZOID_UP_TO = 32.0
HANKEL_TERMS = 20


def _temme(mu: Ex, x: Ex) -> tuple[Ex, Ex]:
    m2 = mu * mu
    g1, g2 = polyval(m2, GAMMA1), polyval(m2, GAMMA2)
    rgamma_plus, rgamma_minus = g2 - mu * g1, g2 + mu * g1  # 1/Gamma(1+mu), 1/Gamma(1-mu)
    log_2_x = where(x < 2.0**-1000, math.log(2) - log(x), log(2.0 / x))  # 2/x overflows for subnormal x
    s = mu * log_2_x
    power = x.op("Pow", -mu) * x.const(2.0).op("Pow", mu)  # (x/2)**-mu = exp(s)
    cosh = (power + 1.0 / power) * 0.5
    sinhc = where(abs(s) < 0.5, polyval(s * s, SINHC), (power - 1.0 / power) * 0.5 / s)
    angle = mu * math.pi
    pi_mu_over_sin = where(abs(angle) < 2.0**-26, 1.0, angle / sin_kernel(angle), like=mu)  # |angle| <= pi/2
    f = pi_mu_over_sin * (g1 * cosh + g2 * sinhc * log_2_x)
    p, q = power * 0.5 / rgamma_plus, 0.5 / (power * rgamma_minus)
    c, q4 = None, x * x * 0.25
    k0, k1 = f, p
    for k in range(1, SERIES_TERMS):
        f = (f * float(k) + p + q) / (float(k * k) - m2)
        c = q4 if c is None else c * q4 * (1.0 / k)
        p, q = p / (float(k) - mu), q / (float(k) + mu)
        k0, k1 = k0 + c * f, k1 + c * (p - f * float(k))
    e = exp(x)
    return k0 * e, k1 * 2.0 / x * e  # 2/x overflows for subnormal x


def _trapezoid(mu: Ex, x: Ex) -> tuple[Ex, Ex]:
    k0 = k1 = x.const(0.5)
    for t, cosh_m1 in zip(NODES, COSH_M1, strict=True):
        weight = exp(x * -cosh_m1)
        e = exp(mu * t)
        cosh, sinh = (e + 1.0 / e) * 0.5, (e - 1.0 / e) * 0.5
        k0 = k0 + weight * cosh
        k1 = k1 + weight * (cosh * math.cosh(t) + sinh * math.sinh(t))  # cosh((mu + 1) t)
    return k0 * STEP, k1 * STEP


def _hankel(mu: Ex, x: Ex) -> tuple[Ex, Ex]:
    scale = math.sqrt(math.pi / 2) / sqrt(x)
    result = []
    for v in (mu, mu + 1.0):
        four_v2 = v * v * 4.0
        term = total = x.const(1.0)
        for k in range(1, HANKEL_TERMS):
            term = term * (four_v2 - float((2 * k - 1) ** 2)) / (x * float(8 * k))
            total = total + term
        result.append(total * scale)
    return tuple(result)


def kve_pair(mu: Ex, x: Ex) -> tuple[Ex, Ex]:
    """(exp(x) K_mu(x), exp(x) K_{mu+1}(x)) for |mu| <= 1/2, x >= 0."""
    pairs = (_temme(mu, x), _trapezoid(mu, x), _hankel(mu, x))
    near, middle = x <= SERIES_UP_TO, x <= TRAPEZOID_UP_TO
    return tuple(where(near, a, where(middle, b, c)) for a, b, c in zip(*pairs, strict=True))
