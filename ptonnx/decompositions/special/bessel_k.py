"""Kve(v, x) = exp(x) K_v(x), x >= 0, in float64, for every real order (K_-v = K_v).

With v = m + mu, m = round(v), |mu| <= 1/2: exp(x) K_mu and exp(x) K_{mu+1}, then the
recurrence K_{n+1} = K_{n-1} + (2n/x) K_n upwards to v (K_v grows with v: it is the
recurrence's dominant solution, so recurring upwards is stable; every term is positive).

- mu = 0: Cephes' k0e and k1e (k0.c, k1.c): Chebyshev expansions of K0(x) + log(x/2) I0(x)
  and x (K1(x) - log(x/2) I1(x)) in x**2 - 2 for x <= 2, of exp(x) sqrt(x) K(x) in 8/x - 2
  beyond. log(x/2) is log(x) - log(2) for subnormal x (x/2 rounds there):
  Kve(0, 5e-324) = 744.9 (SciPy: inf).
- mu = ±1/2: sqrt(pi/(2x)) and sqrt(pi/(2x)) (1 + 1/x), exactly.
- other mu: Temme's series, the trapezoidal rule, Hankel's expansion (bessel_temme.py).
- From order 25 on: Debye's expansion (bessel_debye.py), no recurrence.

x < 0 gives NaN, x = 0 inf (as SciPy); +inf gives the limit 0 (SciPy: NaN).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ptonnx.decompositions.expr import Ex, exp, log, sqrt, where
from ptonnx.decompositions.registry import decomposes
from ptonnx.decompositions.special.bessel_debye import FROM_ORDER, kve_large_order
from ptonnx.decompositions.special.bessel_i import chbevl, i0, i1
from ptonnx.decompositions.special.bessel_temme import kve_pair
from ptonnx.decompositions.special.order import constant_order

#: Cephes k0.c: K0(x) + log(x/2) I0(x) in x**2 - 2 (x <= 2), exp(x) sqrt(x) K0(x) in 8/x - 2 (x > 2)
K0_SMALL = (1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
            1.90451637722020886025e-9, 2.53479107902614945675e-7, 2.28621210311945178607e-5,
            1.26461541144692592338e-3, 3.59799365153615016266e-2, 3.44289899924628486886e-1,
            -5.35327393233902768720e-1)
K0_LARGE = (5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
            -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
            6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
            -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
            1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
            -1.69753450938905987466e-9, 8.57403401741422608519e-9, -4.66048989768794782956e-8,
            2.76681363944501510342e-7, -1.83175552271911948767e-6, 1.39498137188764993662e-5,
            -1.28495495816278026384e-4, 1.56988388573005337491e-3, -3.14481013119645005427e-2,
            2.44030308206595545468e0)
#: Cephes k1.c: x (K1(x) - log(x/2) I1(x)) in x**2 - 2 (x <= 2), exp(x) sqrt(x) K1(x) in 8/x - 2 (x > 2)
K1_SMALL = (-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
            -1.41148839263352776110e-10, -2.21338763073472585583e-8, -2.43340614156596823496e-6,
            -1.73028895751305206302e-4, -6.97572385963986435018e-3, -1.22611180822657148235e-1,
            -3.53155960776544875667e-1, 1.52530022733894777053e0)
K1_LARGE = (-5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
            1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
            -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
            3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
            -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
            2.01504975519703286596e-9, -1.03457624656780970260e-8, 5.74108412545004946722e-8,
            -3.50196060308781257119e-7, 2.40648494783721712015e-6, -1.93619797416608296024e-5,
            1.95215518471351631108e-4, -2.85781685962277938680e-3, 1.03923736576817238437e-1,
            2.72062619048444266945e0)
#: the two expansions meet here
SPLIT = 2.0
SQRT_HALF_PI = math.sqrt(math.pi / 2)


class Orders(NamedTuple):
    """What the orders at run time may need: recurrence steps, Temme's pair, Debye's expansion
    (all, unless the orders are an array of constants)."""

    steps: int = int(FROM_ORDER)
    general: bool = True
    large: bool = True

    @classmethod
    def of(cls, known) -> Orders:
        if known is None or not np.isfinite(known).all():
            return cls()
        n = np.abs(known)
        small = n[n < FROM_ORDER]
        mu = np.abs(small - np.round(small))
        steps = int(np.round(small).max()) - 1 if small.size else 0
        return cls(max(steps, 0), bool(((mu != 0) & (mu != 0.5)).any()), bool((n >= FROM_ORDER).any()))


#: orders unknown when compiling: everything may be needed
ANY_ORDERS = Orders()


def _log_half(x: Ex) -> Ex:
    """log(x/2); x/2 rounds for subnormal x, log(x) - log(2) cancels near 2: each where it is exact."""
    return where(x < 2.0**-1000, log(x) - math.log(2), log(x * 0.5))


def k0e(x: Ex) -> Ex:
    near = (chbevl(x * x - 2.0, K0_SMALL) - _log_half(x) * i0(x)) * exp(x)
    far = chbevl(8.0 / x - 2.0, K0_LARGE) / sqrt(x)
    return where(x <= SPLIT, near, far)


def k1e(x: Ex) -> Ex:
    near = (_log_half(x) * i1(x) + chbevl(x * x - 2.0, K1_SMALL) / x) * exp(x)
    far = chbevl(8.0 / x - 2.0, K1_LARGE) / sqrt(x)
    return where(x <= SPLIT, near, far)


def _half_orders(x: Ex) -> tuple[Ex, Ex]:
    """(Kve(1/2, x), Kve(3/2, x))."""
    half = SQRT_HALF_PI / sqrt(x)
    return half, half * (1.0 + 1.0 / x)


def _start(mu, x: Ex, general: bool = True) -> tuple[Ex, Ex]:
    """(exp(x) K_mu(x), exp(x) K_{mu+1}(x)), |mu| <= 1/2 (a float, or an Ex; `general`: it may be
    other than 0 and ±1/2)."""
    half, three_halves = _half_orders(x)
    if not isinstance(mu, Ex):
        if mu == 0:
            return k0e(x), k1e(x)
        if abs(mu) == 0.5:
            return half, three_halves if mu > 0 else half  # K_-1/2 = K_1/2
        return kve_pair(x.const(mu), x)
    general = kve_pair(mu, x) if general else (x.const(math.nan), x.const(math.nan))
    k0, k1 = k0e(x), k1e(x)
    first = where(mu.eq(0.0), k0, where(abs(mu).eq(0.5), half, general[0]))
    second = where(mu.eq(0.0), k1, where(mu.eq(0.5), three_halves, where(mu.eq(-0.5), half, general[1])))
    return first, second


def kve_small_order(v, x: Ex, orders: Orders = ANY_ORDERS, scale: Ex | None = None) -> Ex:
    """exp(x) K_v(x) for 0 <= v < 25 (a float, or an Ex), times `scale` (applied to the recurrence's
    start, which is linear: no overflow before the result's own)."""
    if isinstance(v, Ex):
        m = v.op("Round")
        steps, count = m - 1.0, orders.steps
    else:
        m = float(round(v))
        steps = count = int(m) - 1
    mu = v - m
    first, second = _start(mu, x, orders.general)
    if scale is not None:
        first, second = first * scale, second * scale
    two_over_x = 2.0 / x
    for j in range(1, count + 1):
        nxt = first + (mu + float(j)) * two_over_x * second
        if isinstance(steps, int):
            first, second = second, nxt
        else:
            active = steps >= float(j)
            first, second = where(active, second, first), where(active, nxt, second)
    if isinstance(m, float):
        return first if m == 0 else second
    return where(m.eq(0.0), first, second)


def kve(v, x: Ex, orders: Orders = ANY_ORDERS) -> Ex:
    """exp(x) K_v(x): NaN for x < 0, inf at ±0 and for infinite orders, 0 at +inf."""
    n, a = abs(v), abs(x)  # |x|: +inf at -0.0, as at +0.0
    if not isinstance(n, Ex) and math.isinf(n):
        n = a.const(n)
    if isinstance(n, Ex):
        large = kve_large_order(n, a) if orders.large else a.const(math.nan)
        value = where(n >= FROM_ORDER, large, kve_small_order(n, a, orders))
    else:
        value = kve_large_order(a.const(n), a) if n >= FROM_ORDER else kve_small_order(n, a)
    infinite = a.eq(0.0) | n.eq(math.inf) if isinstance(n, Ex) else a.eq(0.0)
    value = where(infinite, math.inf, where(a.eq(math.inf), 0.0, value))  # the limits (inf * 0 in the formulas)
    undefined = (x < 0.0) | a.isnan() | n.isnan() if isinstance(n, Ex) else (x < 0.0) | a.isnan()
    return where(undefined, math.nan, value)


def kv_exp_minus(v: Ex, a: Ex, factor: Ex) -> Ex:
    """factor exp(-a) K_v(a) = factor Kve(v, a) exp(-2a) for v, a >= 0, without forming Kve, which
    overflows before the product does (the reflection of Ive at large negative non-integer orders:
    ive(-386.3, 43.03) = 1.16e296 while kve(386.3, 43.03) = inf)."""
    large = kve_large_order(v, a, a * -2.0, factor)
    value = where(v >= FROM_ORDER, large, kve_small_order(v, a, ANY_ORDERS, factor * exp(a * -2.0)))
    return where(a.eq(0.0), factor * math.inf, where(a.eq(math.inf), 0.0, value))


@decomposes("Kve")
def decompose_kve(node, inputs):
    """Every real order: Cephes, closed forms, Temme, the upward recurrence, Debye from 25."""
    order = constant_order(node)
    if order is not None:
        return kve(order, inputs[1])
    return kve(*inputs, Orders.of(node.inputs[0].const))
