"""Erfinv and Erfcinv in float64: a float-grade start refined by one Halley step.

The inverse is solved for y in f(y) = 0 with a residual f that stays exact where
the answer is sensitive to it:

- erfinv(a), a <= 1/2: f = erf(y) - a (Cephes' erf, relatively accurate there);
- erfcinv(q), q <= 1/2 (erfinv(a) for a > 1/2 is erfcinv(1 - a), and 1 - a is
  exact): below y = 1, f = erfc(y) - q = ((1 - q) - erf(y)), 1 - q carried as an
  exact sum of two doubles; from y = 1 on, f = log erfc(y) - log q with
  log erfc(y) = log erfcx(y) - y**2, which neither overflows nor loses the
  subnormal q's few bits (erfcinv(5e-324) = 27.2).

The residuals' second derivatives are cheap (f''/f' = -2y for erf and erfc), so one
Halley step y - u / (1 + c u), u = f / f', triples the start's ~7 digits; erf's own
error is then all that is left (up to 6 ulp near x = 0.84, where 1/erf'(y) doubles
it). The starting values are least-squares polynomials fitted in
references/special_constants.py, relatively within 1e-7: a P(a**2) for a <= 1/2,
s P(log s) with s = sqrt(-log q) for q <= 1/2.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import (
    Ex,
    exp,
    log,
    polyval,
    select,
    sqrt,
    where,
)
from ptonnx.decompositions.registry import decomposes, unary
from ptonnx.decompositions.special.erf import erf_small, erfcx_large

SQRT_PI_2 = math.sqrt(math.pi) / 2
INV_SQRT_PI = 1 / math.sqrt(math.pi)
#: below this |x|, erfinv(x) = sqrt(pi)/2 x to within 2**-54 (the next term is pi x**2 / 12 relative)
TINY = 2.0**-26
#: (centre, half width, coefficients): erfinv(a) / a in t = (a**2 - centre) / half width (references/special_constants.py)
ERFINV_SMALL = (0.125, 0.125, (
    5.682402005956335e-09, 4.557047456562703e-08, 3.6178694815584835e-07, 3.0625427782998673e-06,
    2.697707257772366e-05, 0.00025227509015065587, 0.002614027336289775, 0.033567430271862694, 0.9174083670524497,
))
#: erfcinv(q) / s in t = (log s - centre) / half width, s = sqrt(-log q), for log s below and above log 3
ERFCINV_TAIL = (
    (0.4576779141886388, 0.640934374479471, (
        1.1821169080599154e-05, 9.46737640068283e-05, -0.00033496885951389126, -0.0005136626928610088,
        0.0044914010172507745, -0.003713929323569526, -0.04273133777560056, 0.17016370674307216, 0.7774526726586787,
    )),
    (2.206399146670318, 1.1077868580022079, (
        8.032475412357863e-05, -0.00020816646363715541, 8.174082787050021e-05, 0.0010442671566294253,
        -0.005150013773420327, 0.014548975146921828, -0.02691959455550972, 0.03086899365036984, 0.9830818780520906,
    )),
)
TAIL_SPLIT = math.log(3.0)


def _halley(y: Ex, u: Ex, c) -> Ex:
    """One Halley step for f with f''/f' = -2c: y - u / (1 + c u), u = f / f'."""
    return y - u / (u * c + 1.0)


def erfinv_small(a: Ex) -> Ex:
    """erfinv(a) for 0 <= a <= 1/2."""
    centre, half, coefficients = ERFINV_SMALL
    y = a * polyval((a * a - centre) * (1 / half), coefficients)
    u = (erf_small(y) - a) * exp(y * y) * SQRT_PI_2
    return _halley(y, u, y)


def erfcinv_tail(q: Ex) -> Ex:
    """erfcinv(q) for 0 < q <= 1/2 (y >= 0.47)."""
    s = sqrt(-log(q))
    v = log(s)
    (c1, h1, p1), (c2, h2, p2) = ERFCINV_TAIL
    y = s * where(v < TAIL_SPLIT, polyval((v - c1) * (1 / h1), p1), polyval((v - c2) * (1 / h2), p2))
    one_minus = 1.0 - q
    one_minus_error = (1.0 - one_minus) - q  # exact: 1 - q = one_minus + one_minus_error
    near = ((one_minus - erf_small(y)) + one_minus_error) * exp(y * y) * -SQRT_PI_2
    e = erfcx_large(y)
    far = (log(e) - y * y - log(q)) * e * -SQRT_PI_2
    below_one = y < 1.0
    return _halley(y, where(below_one, near, far), where(below_one, y, y - INV_SQRT_PI / e))


def _erfinv_inner(x: Ex) -> Ex:
    """erfinv(x) for |x| <= 1/2, -0.0 kept."""
    a = abs(x)
    core = erfinv_small(a)
    return where(a >= TINY, where(x < 0.0, -core, core), x * SQRT_PI_2)


def erfinv(x: Ex) -> Ex:
    a = abs(x)
    core = where(a <= 0.5, erfinv_small(a), erfcinv_tail(1.0 - a))  # 1 - a is exact for a >= 1/2
    result = where(a >= TINY, where(x < 0.0, -core, core), x * SQRT_PI_2)  # -0.0 (and NaN) second
    result = where(a.eq(1.0), where(x < 0.0, -math.inf, math.inf, like=x), result)
    return where(a > 1.0, math.nan, result)


def erfcinv(q: Ex) -> Ex:
    """erfcinv(q) = -erfinv(q - 1): by the tail below 1/2 and (negated) above 3/2, where 2 - q is exact."""
    result = select(
        (q < 0.5, erfcinv_tail(q)),
        (q > 1.5, -erfcinv_tail(2.0 - q)),
        otherwise=-_erfinv_inner(q - 1.0),  # exact for 1/2 <= q <= 3/2; -0.0 at 1, as SciPy
    )
    result = select((q.eq(0.0), math.inf), (q.eq(2.0), -math.inf), otherwise=result)
    return where((q < 0.0) | (q > 2.0), math.nan, result)


decomposes("Erfinv")(unary(erfinv))
decomposes("Erfcinv")(unary(erfcinv))
