"""BetaInc by power series (DiDonato and Morris' bpser), where the continued fraction
is slow (near the mean with a small parameter) or would be subtracted from 1.

`power_series`: I_u(p, q) = u**p / (p B(p, q)) (1 + p sum_{j>=1} (1 - q)_j u**j / (j! (p + j)))
for u <= SERIES_UP_TO and q u <= 1: each term is at most max(u, q u)**j / j!-bounded, so
SERIES_TERMS terms reach 1e-17, and the sum cancels by at most e**2.6.

`small_b`: for b < SMALL_B the mass of Beta(a, b) sits near 1 and I_x(a, b) is O(b) near
and above the mean, where 1 - J, J = I_{1-x}(b, a) would cancel. With y = 1 - x,

    J = y**b / (b B(a, b)) (1 + b T),   T = sum_{j>=1} (1 - a)_j y**j / (j! (b + j)),
    I = -expm1(log J),   log J = b log y - log(b B(a, b)) + log1p(b T),

with every term of log J relatively accurate: log(b B(a, b)) = lgamma(1 + b) +
[lgamma(a) - lgamma(a + b)], the first by its Taylor series in b (1 + b rounds), the
second as a sum of log1p(b / (a + k)) that moves a to A >= 10, where Stirling's series
gives lgamma(A) - lgamma(A + b) without subtracting lgammas (gamma_ratio_log).
It is taken for y <= SERIES_UP_TO and a y <= 1 (T as the series above).
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, ceil, expm1, log, log1p, polyval, where

#: the path's range of b
SMALL_B = 0.1
SERIES_TERMS = 64
SERIES_UP_TO = 0.55
EULER = 0.5772156649015329
#: zeta(2), zeta(3), ...: lgamma(1 + b) = -EULER b + sum_k (-1)**k zeta(k) b**k / k
ZETA = (1.6449340668482264, 1.2020569031595942, 1.0823232337111381, 1.03692775514337, 1.0173430619844492,
        1.008349277381923, 1.0040773561979444, 1.0020083928260821, 1.000994575127818, 1.0004941886041194,
        1.000246086553308, 1.0001227133475785, 1.0000612481350588, 1.000030588236307, 1.0000152822594086,
        1.0000076371976379, 1.000003817293265, 1.0000019082127165, 1.0000009539620338, 1.0000004769329869)
#: Stirling's correction del(x) = sum_k c_k x**(1 - 2k): (c_k, 2k - 1)
STIRLING_TERMS = ((1 / 12, 1), (-1 / 360, 3), (1 / 1260, 5), (-1 / 1680, 7), (1 / 1188, 9),
                  (-691 / 360360, 11), (1 / 156, 13), (-3617 / 122400, 15), (43867 / 244188, 17))
SHIFT_TO = 10.0


def lgamma1p_small(b: Ex) -> Ex:
    """lgamma(1 + b) for 0 <= b <= SMALL_B, relatively accurate (20 terms: 0.1**20 / 21)."""
    coefficients = [(-1) ** k * z / k for k, z in zip(range(2, 2 + len(ZETA)), ZETA, strict=True)]
    return b * (polyval(b, coefficients[::-1]) * b - EULER)


def stirling_difference(a: Ex, b: Ex) -> Ex:
    """del(a) - del(a + b) for a >= 10, b >= 0, relatively accurate for tiny b:
    a**-n - (a + b)**-n = -a**-n expm1(-n log1p(b / a))."""
    l1 = log1p(b / a)
    total = None
    for c, n in STIRLING_TERMS:
        term = a ** float(-n) * expm1(l1 * float(-n)) * (-c)
        total = term if total is None else total + term
    return total


def gamma_ratio_log(a: Ex, b: Ex) -> Ex:
    """lgamma(a) - lgamma(a + b) for a > 0, 0 <= b: relatively accurate, also for tiny b."""
    shifts = where(a < SHIFT_TO, ceil(SHIFT_TO - a), 0.0)
    big_a = a + shifts
    total = None
    for k in range(int(SHIFT_TO)):
        term = where(a + float(k) < SHIFT_TO, log1p(b / (a + float(k))), 0.0)
        total = term if total is None else total + term
    # lgamma(A) - lgamma(A + b) = -(A + b - 1/2) log1p(b/A) - b log A + b + del(A) - del(A + b)
    algdiv = (b - (big_a + b - 0.5) * log1p(b / big_a) - b * log(big_a)) + stirling_difference(big_a, b)
    return total + algdiv


def pochhammer_sum(p: Ex, q: Ex, u: Ex) -> Ex:
    """sum_{j>=1} (1 - q)_j u**j / (j! (p + j))."""
    term = u * 0.0 + 1.0
    total = u * 0.0
    for j in range(1, SERIES_TERMS + 1):
        term = term * (float(j) - q) * u / float(j)
        total = total + term / (p + float(j))
    return total


def power_series(p: Ex, q: Ex, u: Ex, log_prefactor: Ex, lv: Ex) -> Ex:
    """I_u(p, q), given log_prefactor = log(u**p v**q / (p B(p, q))) and lv = log v, v = 1 - u."""
    return (log_prefactor - q * lv).op("Exp") * (1.0 + p * pochhammer_sum(p, q, u))


def small_b_log_complement(a: Ex, b: Ex, y: Ex, ly: Ex) -> Ex:
    """log J = log I_y(b, a) = log(1 - I_x(a, b)) for b < SMALL_B, y = 1 - x <= SERIES_UP_TO, a y <= 1."""
    return b * ly - (lgamma1p_small(b) + gamma_ratio_log(a, b)) + log1p(b * pochhammer_sum(b, a, y))


def small_b(a: Ex, b: Ex, y: Ex, ly: Ex) -> Ex:
    """I_x(a, b) = 1 - I_y(b, a) for b < SMALL_B, y = 1 - x <= SERIES_UP_TO, a y <= 1; ly = log y."""
    return -expm1(small_b_log_complement(a, b, y, ly))
