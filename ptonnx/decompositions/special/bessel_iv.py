"""Ive(v, x) = exp(-|x|) I_v(x) and Iv(v, x) = I_v(x) for every real order v, in float64.

For v >= 0, three regions of (v, |x|), each with positive terms only (nothing cancels):

- x <= 20 or x**2 <= 24 (v + 1), and v < 170: the power series (x/2)**v / Gamma(v + 1) sum_k (x**2/4)**k / (k! (v+1)_k),
  40 terms (the last is below 1e-17 of the sum at x = 20, v = 0), with exp(-x) and
  Gamma(v + 1) (gamma.py, within 4 ulp) in the prefactor;
- v >= 25 elsewhere: Debye's expansion (bessel_debye.py);
- v < 25, x > 20: Debye's expansion at the orders N, N + 1 (N = v + ceil(25 - v)), then
  the recurrence I_{n-1} = I_{n+1} + (2n/x) I_n down to v, at most 25 steps; I_v is the
  recurrence's minimal solution, so recurring downwards is stable.

Orders 0 and 1 (constant, or at run time) use Cephes' i0e and i1e (bessel_i.py).
I_{-n} = I_n for integer n; for x < 0, I_n(x) = (-1)**n I_n(|x|) (-0.0 for odd n at -0.0).
A negative non-integer order -v takes I_-v = I_v + (2/pi) sin(v pi) K_v (bessel_k.py's kv_exp_minus:
exp(-x) K_v(x) without forming Kve, which overflows where the result does not); at
x < 0 a non-integer order gives NaN (the result is complex), as in SciPy.

Iv does not form exp(-|x|) I_v, which underflows where I_v does not (1e-208 at v = 760,
x = 289): the series and Debye's expansion without exp(-x); elsewhere Ive times exp(|x|)
as two halves (finite up to 713.98); +-inf at |x| = inf.
"""

from __future__ import annotations

import math

import numpy as np

from ptonnx.decompositions.signs import is_negative
from ptonnx.decompositions.expr import Ex, ceil, exp, floor, fmod, select, where
from ptonnx.decompositions.registry import decomposes
from ptonnx.decompositions.special.bessel_debye import FROM_ORDER, iv_large_order, ive_large_order
from ptonnx.decompositions.special.bessel_i import i0, i0e, i1, i1e
from ptonnx.decompositions.special.bessel_k import kv_exp_minus
from ptonnx.decompositions.special.gamma import gamma_factors, sin_pi
from ptonnx.decompositions.special.order import constant_order

#: the power series up to this |x|, or x**2 <= 24 (v + 1) (below SERIES_ORDERS_BELOW), with this
#: many terms: the rest is below 1e-21 of the sum in both regions
SERIES_UP_TO = 20.0
SERIES_SQUARE_PER_ORDER = 24.0
SERIES_TERMS = 40
#: Gamma(v + 1) overflows from 170.6 on
SERIES_ORDERS_BELOW = 170.0


def _series(v: Ex, x: Ex, scaled: bool = True) -> Ex:
    """exp(-x) I_v(x) (`scaled`, else I_v(x)) for x >= 0 in the series region (x <= 20 or
    x**2 <= 24 (v + 1)), 0 <= v < 170."""
    q = x * x * 0.25
    term = total = x.const(1.0)
    for k in range(1, SERIES_TERMS):
        term = term * q / ((v + float(k)) * float(k))
        total = total + term
    # Gamma(v + 1) = v a b from 1 on, with v exact (v + 1 rounds: 22 ulp of Gamma at v = 15.9)
    below_one = v < 1.0
    a, b = gamma_factors(where(below_one, v + 1.0, v))
    # (x/2)**v: x/2 rounds for subnormal x, where x**v 2**-v cannot overflow
    power = where(x >= 2.0**-1000, (x * 0.5).op("Pow", v), x.op("Pow", v) * x.const(0.5).op("Pow", v))
    return (power * exp(-x) if scaled else power) / where(below_one, 1.0, v) / a / b * total


def _recurred(v: Ex, x: Ex) -> Ex:
    """exp(-x) I_v(x), v >= 0: Debye's expansion at v from 25 on; below, at N, N + 1 >= 25,
    recurring down to v."""
    steps = ceil(FROM_ORDER - v).op("Max", 0.0)
    top = v + steps
    above, at = ive_large_order(top + 1.0, x), ive_large_order(top, x)
    two_over_x = 2.0 / x
    for j in range(int(FROM_ORDER), 0, -1):
        active = steps >= float(j)
        below = above + (v + float(j)) * two_over_x * at
        above, at = where(active, at, above), where(active, below, at)
    return at


def _in_series(v: Ex, a: Ex) -> Ex:
    return ((a <= SERIES_UP_TO) | (a * a <= (v + 1.0) * SERIES_SQUARE_PER_ORDER)) & (v < SERIES_ORDERS_BELOW)


def ive_nonnegative(v: Ex, a: Ex) -> Ex:
    """exp(-a) I_v(a) for v >= 0, a = |x| >= 0."""
    general = where(_in_series(v, a), _series(v, a), _recurred(v, a))
    return where(v.eq(0.0), i0e(a), where(v.eq(1.0), i1e(a), general))


def times_exp(scaled: Ex, a: Ex) -> Ex:
    """scaled exp(a), the exponential as two halves (finite up to the product's own overflow)."""
    half = exp(a * 0.5)
    return scaled * half * half


def iv_nonnegative(v: Ex, a: Ex) -> Ex:
    """I_v(a) for v >= 0, a = |x| >= 0: the series and Debye's expansion without exp(-a) (exp(-a) I_v
    underflows where I_v does not: 1e-208 at v = 760, a = 289); below order 25 beyond the series,
    the recurrence's exp(-a) I_v (near 1 / sqrt(2 pi a)) times exp(a)."""
    general = select((_in_series(v, a), _series(v, a, scaled=False)), (v >= FROM_ORDER, iv_large_order(v, a)),
                     otherwise=times_exp(_recurred(v, a), a))
    return where(v.eq(0.0), i0(a), where(v.eq(1.0), i1(a), general))


def _sin_pi(v: Ex) -> Ex:
    """sin(pi v) from the exactly reduced r = v - round(v): (-1)**round(v) sin(pi r)."""
    k = v.op("Round")
    sine = sin_pi(v - k)
    return where(abs(fmod(k, 2.0)).eq(1.0), -sine, sine)


def ive(v: Ex, x: Ex, reflect: bool = True) -> Ex:
    """exp(-|x|) I_v(x); `reflect`: some orders may be negative non-integers, for which
    I_-v = I_v + (2/pi) sin(v pi) K_v (Kve from bessel_k.py)."""
    return _bessel_i(v, x, reflect, scaled=True)


def iv(v: Ex, x: Ex, reflect: bool = True) -> Ex:
    """I_v(x), as `ive` without its exp(-|x|) (a negative non-integer order: exp(|x|) times ive's sum)."""
    return _bessel_i(v, x, reflect, scaled=False)


def _bessel_i(v: Ex, x: Ex, reflect: bool, scaled: bool) -> Ex:
    a = abs(x)
    integer = floor(v).eq(v)
    n = abs(v)  # I_{-n} = I_n
    scaled_n = ive_nonnegative(n, a)
    result = scaled_n if scaled else iv_nonnegative(n, a)
    if reflect:
        reflected = scaled_n + kv_exp_minus(n, a, _sin_pi(n) * (2 / math.pi))
        result = where((v < 0.0) & integer.op("Not"), reflected if scaled else times_exp(reflected, a), result)
    if not scaled:
        result = where(a.eq(math.inf) & v.eq(v), math.inf, result)  # the halves' inf times a zero (a NaN order stays NaN)
    odd_order = integer & abs(fmod(n, 2.0)).eq(1.0)
    negative_x = is_negative(x)
    result = result * where(odd_order & negative_x, -1.0, 1.0, like=x)  # a product keeps -0.0
    return where((x < 0.0) & integer.op("Not"), math.nan, result)  # complex


def _emitter(general, order0, order1):
    def decomposition(node, inputs):
        v, x = inputs
        order = constant_order(node)
        if order is not None and abs(order) in (0.0, 1.0):
            return order0(x) if order == 0 else order1(x)
        # unless the orders are constants without one, some may be negative non-integers
        known = node.inputs[0].const
        return general(v, x, known is None or bool(((known < 0) & (np.floor(known) != known)).any()))

    return decomposition


#: Cephes' i0e/i1e (i0/i1) for a constant order 0 or ±1; the series, Debye and the recurrence otherwise
#: (and K_v for negative non-integer orders). Iv: PyTensor 2's op, and PyTensor 3's ive(v, x) * exp(|x|),
#: which lifting recognises (ptonnx/lifting/idioms.py)
decomposes("Ive")(_emitter(ive, i0e, i1e))
decomposes("Iv")(_emitter(iv, i0, i1))
