"""I0 and I1, and their scaled forms i0e(x) = exp(-|x|) I0(x), i1e(x) = exp(-|x|) I1(x),
from Cephes' Chebyshev expansions (i0.c, i1.c), in float64.

- |x| <= 8: exp(-x) I0(x) and exp(-x) I1(x) / x are smooth in x/2 - 2 in [-2, 2];
- |x| > 8: exp(-x) sqrt(x) I0(x) and exp(-x) sqrt(x) I1(x) are smooth in 32/x - 2.

The unscaled functions multiply by exp(|x|), as two factors exp(|x|/2) from 700 on:
I0 and I1 are finite up to 713.98, beyond exp's overflow at 709.78 (SciPy 1.17's
Cephes overflows there and gives NaN at ±inf: ptonnx gives the finite values and ±inf).
I1 is odd, with I1(-0.0) = -0.0 (SciPy gives +0.0); tiny and subnormal x keep full relative
accuracy (below 1e-9 two terms of the Taylor series, where the expansions' last bit is off).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ptonnx.decompositions.signs import is_negative
from ptonnx.decompositions.expr import Ex, exp, sqrt, where
from ptonnx.decompositions.registry import decomposes, unary

#: exp(-x) I0(x), x in [0, 8], in x/2 - 2 (Cephes i0.c: A)
I0_SMALL = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)
#: exp(-x) sqrt(x) I0(x), x > 8, in 32/x - 2 (Cephes i0.c: B)
I0_LARGE = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)
#: exp(-x) I1(x) / x, x in [0, 8], in x/2 - 2 (Cephes i1.c: A)
I1_SMALL = (
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
    9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
    -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
    4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
    -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
    2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
    -1.76416518357834055153e-1, 2.52587186443633654823e-1,
)
#: exp(-x) sqrt(x) I1(x), x > 8, in 32/x - 2 (Cephes i1.c: B)
I1_LARGE = (
    7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
    -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
    -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
    4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
    3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
    -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
    -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
    7.78576235018280120474e-1,
)
#: the two expansions meet here
SPLIT = 8.0
#: from here exp(|x|) is taken as two factors exp(|x|/2) (it overflows at 709.78)
HALVES_FROM = 700.0
#: below this |x| two terms of the Taylor series are exact to 1e-18
TAYLOR_BELOW = 1e-9


def chbevl(x: Ex, coefficients: Sequence[float]) -> Ex:
    """sum' c_k T_k(x/2) by Clenshaw's recurrence, highest order first (Cephes' chbevl)."""
    b0, b1, b2 = x.const(coefficients[0]), None, None
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 + c if b2 is None else x * b1 - b2 + c
    return (b0 - b2) * 0.5


def odd(x: Ex, value: Ex) -> Ex:
    """value (computed at |x|) with x's sign: times -1 where x < 0 or x is -0.0 (a product,
    not a Where, so a zero keeps its sign)."""
    negative = is_negative(x)
    return value * where(negative, -1.0, 1.0, like=x)


def _scaled(a: Ex, small: Sequence[float], large: Sequence[float], odd_order: bool) -> Ex:
    """exp(-a) I(a), a >= 0, from Cephes' pair of expansions (I1's small one times a); below 1e-9
    Taylor's 1 - a and a (1 - a) / 2 (the expansions' last bit is off there)."""
    near = where(a < TAYLOR_BELOW, 1.0 - a, chbevl(a * 0.5 - 2.0, small))
    if odd_order:
        near = where(a < TAYLOR_BELOW, 0.5 - a * 0.5, chbevl(a * 0.5 - 2.0, small)) * a
    far = chbevl(32.0 / a - 2.0, large) / sqrt(a)
    return where(a > SPLIT, far, near)


def _unscaled(a: Ex, scaled: Ex, taylor: Ex) -> Ex:
    """scaled * exp(a), finite as long as the product is; +inf at +inf; `taylor` below 1e-9."""
    half = exp(a * 0.5)
    result = where(a >= HALVES_FROM, scaled * half * half, scaled * exp(a))
    result = where(a < TAYLOR_BELOW, taylor, result)
    return where(a.eq(math.inf), math.inf, result)


def i0e(x: Ex) -> Ex:
    return _scaled(abs(x), I0_SMALL, I0_LARGE, odd_order=False)


def i1e(x: Ex) -> Ex:
    return odd(x, _scaled(abs(x), I1_SMALL, I1_LARGE, odd_order=True))


def i0(x: Ex) -> Ex:
    a = abs(x)
    return _unscaled(a, _scaled(a, I0_SMALL, I0_LARGE, odd_order=False), 1.0 + a * a * 0.25)


def i1(x: Ex) -> Ex:
    a = abs(x)
    return odd(x, _unscaled(a, _scaled(a, I1_SMALL, I1_LARGE, odd_order=True), a * 0.5))


decomposes("I0")(unary(i0))
decomposes("I1")(unary(i1))
