"""Jv(n, x) for integer orders |n| <= 100, constant or computed at run time, in float64.

Orders 0 and 1 are J0 and J1 (bessel_j.py). For m = |n| >= 2 and a = |x|:

- a <= 1: the power series (a/2)**m / m! sum_k (-a**2/4)**k / (k! (m+1)_k), 12 terms
  (each term is at most 1/(4(m+1)) of the one before: nothing cancels);
- 1 < a < m: Miller's algorithm, J_{k-1} = (2k/a) J_k - J_{k+1} downwards from J_{N+1} = 0,
  J_N = 2**-900 with N - m = 20 + 8 m**(1/3) (the start's error has decayed below 1e-17 of
  J_m by then), normalised by whichever of J0(a), J1(a) is larger in magnitude;
- a >= m: the recurrence upwards from J0 and J1, stable beyond the turning point m. Near the
  zeros of J_m only absolute accuracy is possible (as for J0 and J1): there the error is
  within about m 5e-17 of the envelope sqrt(J_m**2 + Y_m**2).

J_-n = (-1)**n J_n and J_n(-x) = (-1)**n J_n(x), as products, so zeros keep their signs.
A constant order that is not such an integer is refused; at run time it gives NaN.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ptonnx.decompositions.signs import is_negative
from ptonnx.decompositions.expr import Ex, floor, fmod, where
from ptonnx.decompositions.registry import decomposes
from ptonnx.decompositions.special.bessel_j import j0, j1
from ptonnx.decompositions.special.gamma import gamma_factors
from ptonnx.decompositions.special.order import constant_order, refuse

MAX_ORDER = 100
SERIES_TERMS = 12


def _top(m: int) -> int:
    """Where Miller's recurrence starts for order m."""
    return m + int(20 + 8 * m ** (1 / 3))


def _series(m, a: Ex) -> Ex:
    q = a * a * -0.25
    term = total = a.const(1.0)
    for k in range(1, SERIES_TERMS):
        term = term * q / (float(k) * (m + float(k)))
        total = total + term
    if isinstance(m, int):
        return a.op("Pow", float(m)) * float(Fraction(1, 2**m * math.factorial(m))) * total
    g, h = gamma_factors(m + 1.0)  # m! = g * h
    return a.op("Pow", m) * a.const(0.5).op("Pow", m) / g / h * total


def _pick(m, k: int, value: Ex, picked: Ex | None) -> Ex | None:
    """`value` if it is the recurrence's value at order m (m an int, or per element)."""
    if isinstance(m, int):
        return value if k == m else picked
    return where(m.eq(float(k)), value, picked if picked is not None else 0.0)


def _miller(m, a: Ex, limit: int) -> Ex:
    two_over_a = 2.0 / a
    above, at, picked = None, a.const(2.0**-900), None
    for k in range(_top(m if isinstance(m, int) else limit), 0, -1):
        scaled = at * (float(k) * two_over_a)
        above, at = at, scaled if above is None else scaled - above
        picked = _pick(m, k - 1, at, picked)
    j0_, j1_ = j0(a), j1(a)
    return picked * where(abs(j0_) >= abs(j1_), j0_ / at, j1_ / above)


def _forward(m, a: Ex, j0_: Ex, j1_: Ex, limit: int) -> Ex:
    two_over_a = 2.0 / a
    before, at, picked = j0_, j1_, None
    for k in range(1, (m if isinstance(m, int) else limit)):
        before, at = at, at * (float(k) * two_over_a) - before
        picked = _pick(m, k + 1, at, picked)
    return picked


def jn_nonnegative(m, a: Ex, limit: int = MAX_ORDER) -> Ex:
    """J_m(a), a >= 0, m >= 2 (an int, or an integer-valued Ex with 2 <= m <= limit where it matters)."""
    miller, forward = _miller(m, a, limit), _forward(m, a, j0(a), j1(a), limit)
    return where(a <= 1.0, _series(m, a), where(a < m, miller, forward))


def _signed(x: Ex, flip: Ex | bool, value: Ex) -> Ex:
    if flip is False:
        return value
    return value * (-1.0 if flip is True else where(flip, -1.0, 1.0, like=value))


def jn(n, x: Ex, limit: int = MAX_ORDER) -> Ex:
    """J_n(x) for an int n, or an Ex n (NaN where it is not an integer with |n| <= 100; the
    recurrences unrolled for orders up to `limit` only, when the orders are known to stay below)."""
    a = abs(x)
    negative_x = is_negative(x)
    if isinstance(n, int):
        m = abs(n)
        value = j0(a) if m == 0 else j1(a) if m == 1 else jn_nonnegative(m, a)
        if m % 2 == 0:
            return value
        return _signed(x, negative_x, _signed(x, n < 0, value))
    m = abs(n)
    value = where(m.eq(0.0), j0(a), where(m.eq(1.0), j1(a), jn_nonnegative(m, a, limit)))
    odd = abs(fmod(m, 2.0)).eq(1.0)
    value = _signed(x, odd & negative_x.op("Xor", n < 0.0), value)
    # value second (-0.0), and no Not straight into the Where: onnxruntime's NotWhereFusion swaps the branches
    unsupported = floor(n).ne(n) | (m > float(MAX_ORDER))
    return where(unsupported, math.nan, value)


@decomposes("Jv")
def decompose_jv(node, inputs):
    """Integer orders |n| <= 100: J0, J1, a power series, Miller's algorithm, the forward recurrence."""
    order = constant_order(node)
    x = inputs[1]
    if order is None:
        known = node.inputs[0].const
        limit = MAX_ORDER if known is None or not np.isfinite(known).all() else int(min(MAX_ORDER, max(2, np.abs(known).max())))
        return jn(inputs[0], x, limit)
    if order != math.floor(order) or abs(order) > MAX_ORDER:
        refuse(node, f"ptonnx computes Jv only for integer orders n, |n| <= {MAX_ORDER} (J0, J1, a power series, "
                     f"Miller's algorithm and the forward recurrence); got the order {order!r}")
    return jn(int(order), x)
