"""J0 and J1 in float64, from Cephes' rational approximations (j0.c, j1.c).

- |x| <= 5: J0(x) = (x**2 - r1**2)(x**2 - r2**2) R(x**2) and J1(x) = x (x**2 - s1**2)(x**2 - s2**2) R(x**2),
  r_k, s_k the first zeros. Cephes subtracts the squares; here each factor is
  ((|x| - hi) - lo)(|x| + z) with the zero split in two doubles, so |x| - hi is exact
  near the zero and J keeps its relative accuracy at the first zeros (2.405 for J0;
  3.832 for J1), which SciPy's x*x - r**2 loses to the rounding of x*x.
- |x| > 5: Hankel's asymptotic form sqrt(2/(pi x)) (P cos(x - phase) - (5/x) Q sin(x - phase))
  with Cephes' rational P and Q in 25/x**2, and the phase x - pi/4 (x - 3pi/4) expanded
  as sums of cos x and sin x, computed with an exactly reduced argument (elementary/trigonometric.py):
  x - pi/4 rounded to a double would cost ulp(x) of absolute accuracy.

Beyond 5, near a zero the result is the small difference of two terms of the envelope's
size: there the error is absolute, within 6e-16 of the envelope sqrt(2/(pi x)) (SciPy
uses the same form, and beyond ~1e8 its rounded phase x - pi/4 loses even that).
At ±inf both give their limit 0 (SciPy: NaN).
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, cos, polyval, polyval1, sin, sqrt, where
from ptonnx.decompositions.registry import decomposes, unary
from ptonnx.decompositions.special.bessel_i import odd

#: Cephes j0.c: J0 = (z - r1**2)(z - r2**2) RP(z)/RQ(z), z = x**2 <= 25 (RQ's leading 1 implied)
J0_RP = (-4.79443220978201773821e9, 1.95617491946556577543e12, -2.49248344360967716204e14, 9.70862251047306323952e15)
J0_RQ = (4.99563147152651017219e2, 1.73785401676374683123e5, 4.84409658339962045305e7, 1.11855537045356834862e10,
         2.11277520115489217587e12, 3.10518229857422583814e14, 3.18121955943204943306e16, 1.71086294081043136091e18)
#: Cephes j0.c: Hankel's P = PP/PQ and Q = QP/QQ in 25/x**2 (QQ's leading 1 implied)
J0_PP = (7.96936729297347051624e-4, 8.28352392107440799803e-2, 1.23953371646414299388e0, 5.44725003058768775090e0,
         8.74716500199817011941e0, 5.30324038235394892183e0, 9.99999999999999997821e-1)
J0_PQ = (9.24408810558863637013e-4, 8.56288474354474431428e-2, 1.25352743901058953537e0, 5.47097740330417105182e0,
         8.76190883237069594232e0, 5.30605288235394617618e0, 1.00000000000000000218e0)
J0_QP = (-1.13663838898469149931e-2, -1.28252718670509318512e0, -1.95539544257735972385e1, -9.32060152123768231369e1,
         -1.77681167980488050595e2, -1.47077505154951170175e2, -5.14105326766599330220e1, -6.05014350600728481186e0)
J0_QQ = (6.43178256118178023184e1, 8.56430025976980587198e2, 3.88240183605401609683e3, 7.24046774195652478189e3,
         5.93072701187316984827e3, 2.06209331660327847417e3, 2.42005740240291393179e2)
#: Cephes j1.c, the same forms for J1
J1_RP = (-8.99971225705559398224e8, 4.52228297998194034323e11, -7.27494245221818276015e13, 3.68295732863852883286e15)
J1_RQ = (6.20836478118054335476e2, 2.56987256757748830383e5, 8.35146791431949253037e7, 2.21511595479792499675e10,
         4.74914122079991414898e12, 7.84369607876235854894e14, 8.95222336184627338078e16, 5.32278620332680085395e18)
J1_PP = (7.62125616208173112003e-4, 7.31397056940917570436e-2, 1.12719608129684925192e0, 5.11207951146807644818e0,
         8.42404590141772420927e0, 5.21451598682361504063e0, 1.00000000000000000254e0)
J1_PQ = (5.71323128072548699714e-4, 6.88455908754495404082e-2, 1.10514232634061696926e0, 5.07386386128601488557e0,
         8.39985554327604159757e0, 5.20982848682361821619e0, 9.99999999999999997461e-1)
J1_QP = (5.10862594750176621635e-2, 4.98213872951233449420e0, 7.58238284132545283818e1, 3.66779609360150777800e2,
         7.10856304998926107277e2, 5.97489612400613639965e2, 2.11688757100572135698e2, 2.52070205858023719784e1)
J1_QQ = (7.42373277035675149943e1, 1.05644886038262816351e3, 4.98641058337653607651e3, 9.56231892404756170795e3,
         7.99704160447350683650e3, 2.82619278517639096600e3, 3.36093607810698293419e2)
#: the first two zeros of J0 and of J1 (not 0) as hi + lo (references/special_constants.py)
J0_ZEROS = ((2.404825557695773, -1.176691651530894e-16), (5.520078110286311, 8.088597146146722e-17))
J1_ZEROS = ((3.8317059702075125, -1.5269184090088067e-16), (7.015586669815619, -9.414165653410389e-17))
#: the rational form below, Hankel's above
SPLIT = 5.0
#: below this |x| the two-term Taylor series is exact to the last bit
TAYLOR_BELOW = 1e-5
SQRT_1_PI = 1 / math.sqrt(math.pi)


def _zero_factors(a: Ex, zeros) -> Ex:
    """prod (a - z)(a + z) over the zeros z = hi + lo: a - hi is exact near hi."""
    result = None
    for hi, lo in zeros:
        factor = ((a - hi) - lo) * (a + hi)
        result = factor if result is None else result * factor
    return result


def _cos_sin(a: Ex) -> tuple[Ex, Ex]:
    return cos(a), sin(a)


def _hankel(a: Ex, pp, pq, qp, qq) -> tuple[Ex, Ex]:
    """(P, (5/a) Q) of Hankel's form, for a > 5."""
    w = 5.0 / a
    z = w * w
    return polyval(z, pp) / polyval(z, pq), w * (polyval(z, qp) / polyval1(z, qq))


def j0(x: Ex) -> Ex:
    a = abs(x)
    z = a * a
    near = _zero_factors(a, J0_ZEROS) * (polyval(z, J0_RP) / polyval1(z, J0_RQ))
    near = where(a < TAYLOR_BELOW, 1.0 - z * 0.25, near)
    p, wq = _hankel(a, J0_PP, J0_PQ, J0_QP, J0_QQ)
    cos, sin = _cos_sin(a)
    # cos(a - pi/4) = (cos a + sin a)/sqrt(2), sin(a - pi/4) = (sin a - cos a)/sqrt(2)
    far = ((p + wq) * cos + (p - wq) * sin) * SQRT_1_PI / sqrt(a)
    far = where(a.eq(math.inf), 0.0, far)
    return where(a <= SPLIT, near, far)


def j1(x: Ex) -> Ex:
    a = abs(x)
    z = a * a
    near = _zero_factors(a, J1_ZEROS) * (polyval(z, J1_RP) / polyval1(z, J1_RQ)) * a
    near = where(a < TAYLOR_BELOW, a * (0.5 - z * 0.0625), near)
    p, wq = _hankel(a, J1_PP, J1_PQ, J1_QP, J1_QQ)
    cos, sin = _cos_sin(a)
    # cos(a - 3pi/4) = (sin a - cos a)/sqrt(2), sin(a - 3pi/4) = -(sin a + cos a)/sqrt(2)
    far = ((wq - p) * cos + (p + wq) * sin) * SQRT_1_PI / sqrt(a)
    far = where(a.eq(math.inf), 0.0, far)
    return odd(x, where(a <= SPLIT, near, far))


decomposes("J0")(unary(j0))
decomposes("J1")(unary(j1))
