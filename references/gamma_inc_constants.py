"""Constants of the incomplete gamma functions (ptonnx/decompositions/special/gamma_inc*.py), computed
exactly here and checked against the copies in lowering by tests/lowering/test_gamma_inc_constants.py.

Temme's uniform expansion (DLMF 8.12): with lambda = x/a, mu = lambda - 1 and
eta**2/2 = lambda - 1 - log(lambda) (eta of mu's sign),
Q(a, x) = erfc(eta sqrt(a/2))/2 + exp(-a eta**2/2) / sqrt(2 pi a) sum_k c_k(eta) a**-k,
c_0 = 1/mu - 1/eta, c_k = (c_{k-1}'(eta) + (-1)**k g_k / mu... ) / eta (DLMF 8.12.9-10), g_k the
coefficients of Stirling's series of Gamma (DLMF 5.11.3). The c_k are analytic at eta = 0; their
Maclaurin coefficients d[k][n] are computed in exact rational arithmetic: mu(eta) from
mu mu' = eta (1 + mu), g_k from Stirling's series log Gamma*(z) = sum B_2m / (2m (2m-1) z**(2m-1)).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache


def _bernoulli(n: int) -> list[Fraction]:
    """B_0 .. B_n (B_1 = -1/2)."""
    b = [Fraction(0)] * (n + 1)
    a = [Fraction(0)] * (n + 1)
    for m in range(n + 1):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        b[m] = a[0]
    b[1] = -b[1]  # the recurrence gives B_1 = +1/2
    return b


@cache
def stirling_g(count: int) -> tuple[Fraction, ...]:
    """g_0 .. g_{count-1}: Gamma(z) ~ exp(-z) z**z sqrt(2 pi / z) sum g_k z**-k."""
    b = _bernoulli(2 * count + 2)
    # s(u) = log Gamma*(1/u) = sum_m B_2m / (2m (2m - 1)) u**(2m - 1)
    s = [Fraction(0)] * count
    for m in range(1, count):
        if 2 * m - 1 < count:
            s[2 * m - 1] = b[2 * m] / (2 * m * (2 * m - 1))
    # e = exp(s): e' = s' e, e_0 = 1
    e = [Fraction(1)] + [Fraction(0)] * (count - 1)
    for n in range(1, count):
        e[n] = sum(j * s[j] * e[n - j] for j in range(1, n + 1)) / n
    return tuple(e)


@cache
def mu_series(order: int) -> tuple[Fraction, ...]:
    """alpha_0 .. alpha_order of mu(eta) = lambda - 1 = eta + eta**2/3 + ... (DLMF 8.12.13)."""
    al = [Fraction(0), Fraction(1)]
    for n in range(2, order + 1):
        conv = sum(al[j] * (n + 1 - j) * al[n + 1 - j] for j in range(2, n))
        al.append((al[n - 1] - conv) / (n + 1))
    return tuple(al)


@cache
def temme_coefficients(rows: int, columns: int) -> tuple[tuple[Fraction, ...], ...]:
    """d[k][n], k < rows, n < columns: c_k(eta) = sum_n d[k][n] eta**n."""
    order = columns + 2 * rows + 2
    al = mu_series(order + 1)
    v = list(al[1:order + 2])  # mu / eta
    w = [Fraction(1)] + [Fraction(0)] * order  # eta / mu = 1 / v
    for n in range(1, order + 1):
        w[n] = -sum(v[j] * w[n - j] for j in range(1, n + 1))
    g = stirling_g(rows + 1)
    c = w[1:]  # c_0 = (w - 1) / eta
    table = [c[:columns]]
    for k in range(1, rows):
        deriv = [(n + 1) * c[n + 1] for n in range(len(c) - 1)]
        sign = -1 if k % 2 else 1
        num = [deriv[n] + sign * g[k] * w[n] for n in range(len(deriv))]
        assert num[0] == 0
        c = num[1:]
        table.append(c[:columns])
    return tuple(tuple(row) for row in table)


def temme_table(rows: int, columns: int) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(d) for d in row) for row in temme_coefficients(rows, columns))
