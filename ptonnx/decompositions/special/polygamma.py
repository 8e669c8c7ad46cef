"""PolyGamma: psi^(n)(x), the n-th derivative of digamma, for a run-time integer order n.

For n >= 1, psi^(n)(x) = (-1)**(n+1) n! zeta(s, x), s = n + 1 (Hurwitz zeta).

- n! zeta(s, q), q > 0: ten terms n! (q + k)**-s, then the Euler-Maclaurin tail at
  y = q + 10 with ten Bernoulli terms (their remainder is below 1e-19 of the sum for
  every n <= 170 and q > 0). Each power is taken in halves, (n! p) p with
  p = (q + k)**(-s/2), so n! (up to 7e306) times a power far below 1e-308 neither
  overflows nor underflows before the product does; q + k is rounded, and each
  term corrected by its exact remainder (a base's relative error costs s times it).
- x < 0, x = r - m with m = -round(x) and |r| <= 1/2 exact: psi^(n)(x) =
  (-1)**(n+1) n! sum_{j >= -m} (r + j)**-s. For odd n every term is positive:
  n! [|r|**-s + zeta(s, 1 + r) + zeta(s, 1 - r) - zeta(s, 1 - x)]. For even n it is
  -n! [B(r) + zeta(s, 1 - x)] with the two-sided sum B(r) = sum_j (r + j)**-s, which
  vanishes at r = ±1/2, where r**-s + zeta(s, 1 + r) - zeta(s, 1 - r) would cancel.
  There (where (|r| / (1 - |r|))**s > 1/4), n! B(r) = pi**s P_n(cot(pi r)), P_n the
  polynomial with cot^(n)(z) = P_n(cot z) (odd for even n, with positive
  coefficients), evaluated at |cot(pi r)| = tan(pi (1/2 - |r|)) < 0.4 from a table
  gathered by n. These terms are summed in units of n! / 2**k, k near log2(n!) / 2,
  so that no two overflow into inf - inf.
- n = 0 is digamma; n < 0 is NaN (as SciPy). n > 170 is NaN: n! overflows there,
  and SciPy gives NaN or ±inf. x = -inf and the poles (0, -1, -2, ...) give
  (-1)**(n+1) inf, x = inf a zero of that sign, as SciPy.
"""
from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

from ptonnx.decompositions.signs import with_zero_sign
from ptonnx.decompositions.expr import Ex, floor, fmod, where
from ptonnx.decompositions.registry import decomposes
from ptonnx.decompositions.special.gamma import digamma, reduced_fraction, sin_pi

#: the largest order computed: 170! is the largest factorial below float64's overflow
MAX_ORDER = 170
#: terms summed before the Euler-Maclaurin tail, and the tail's Bernoulli terms
DIRECT_TERMS = 10
BERNOULLI_TERMS = 10
#: B(r) comes from the table where the direct sum would cancel more than this (|r| >= 0.386 for
#: n = 2, nearer 1/2 for higher n, where cot(pi r) is small and P_n nearly linear in it)
TABLE_ABOVE = 0.25
#: pi to 64 digits, for the table's pi**s
PI_DIGITS = "3.141592653589793238462643383279502884197169399375105820974944592307"


def bernoulli_over_factorial(count: int) -> tuple[float, ...]:
    """B_2j / (2j)! for j = 1..count, exact (Akiyama-Tanigawa) and then rounded."""
    a, numbers = [], []
    for m in range(2 * count + 1):
        a.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        numbers.append(a[0])
    return tuple(float(numbers[2 * j] / math.factorial(2 * j)) for j in range(1, count + 1))


def cot_derivatives(count: int):
    """Coefficients (of c**0, c**1, ...) of P_0 .. P_count: P_0 = c, P_{k+1} = -(1 + c**2) P_k'."""
    p = [0, 1]
    for _ in range(count + 1):
        yield p
        d = [i * p[i] for i in range(1, len(p))] + [0, 0]
        p = [-(d[i] + (d[i - 2] if i >= 2 else 0)) for i in range(len(d))]


@functools.cache
def reflection_table(max_order: int = MAX_ORDER) -> np.ndarray:
    """Row e, column k: the coefficient of w**k in pi**s / n! P_n(c) / c, w = c**2, for the even
    order n = 2e + 2 (s = n + 1); each row's values are O(4**s), far from overflow. (Built when
    first needed: 0.1 s of exact integer arithmetic.)"""
    rows = []
    with localcontext() as context:
        context.prec = 60
        pi = Decimal(PI_DIGITS)
        for n, p in enumerate(cot_derivatives(max_order)):
            if n >= 2 and n % 2 == 0:
                scale = pi ** (n + 1) / math.factorial(n)
                rows.append([float(Decimal(c) * scale) for c in p[1::2]])
    table = np.zeros((len(rows), max(len(row) for row in rows)))
    for e, row in enumerate(rows):
        table[e, : len(row)] = row
    return table


BERNOULLI = bernoulli_over_factorial(BERNOULLI_TERMS)
FACTORIALS = np.array([float(math.factorial(n)) for n in range(MAX_ORDER + 1)])
#: a power of two near sqrt(n!): the reflection's terms are summed in units of n! / it (below 1e206), so
#: that two of them overflowing cannot make inf - inf where their difference does not overflow
ROOT_FACTORIALS = np.ldexp(1.0, np.frexp(FACTORIALS)[1] // 2)


def _gather(table: np.ndarray, index: Ex, like: Ex) -> Ex:
    scope = like.scope
    return Ex(scope, scope.op("Gather", [scope.constant(table.astype(like.dtype)), index.value], {"axis": 0}))


def _sum(big: Ex, small, lo: Ex | None) -> tuple[Ex, Ex]:
    """(hi, lo) with hi + lo = big + small + lo exactly up to lo's own rounding (Fast2Sum: big >= small >= 0)."""
    hi = big + small
    err = (big - hi) + small
    return hi, err if lo is None else err + lo


def scaled_zeta(q: Ex, s: Ex, factorial: Ex, q_lo: Ex | None = None) -> Ex:
    """n! zeta(s, q + q_lo) for q > 0 (s = n + 1 >= 2); +inf at q = 0, NaN at q = inf.

    q + k rounds (where its binade grows), and a relative error e of a term's base is
    s e in the term: each term is corrected by (1 - s lo / hi), with hi + lo = q + q_lo + k
    exactly, and the tail by (1 - (s - 1) lo / y), its leading power's."""
    half = s * -0.5
    y, y_lo = _sum(q.op("Max", float(DIRECT_TERMS)), q.op("Min", float(DIRECT_TERMS)), q_lo)
    w = 1.0 / (y * y)
    g = s / y
    terms = []
    for j, b in enumerate(BERNOULLI, start=1):
        if j > 1:
            g = g * ((s + float(2 * j - 3)) * (s + float(2 * j - 2)) * w)
        terms.append(g * b)
    bracket = terms[-1]
    for t in reversed(terms[:-1]):
        bracket = bracket + t
    bracket = bracket + 0.5 + y / (s - 1.0)  # n! y**-s (y / n + 1/2 + ...): the tail, smallest terms first
    p = y.op("Pow", half)
    tail = factorial * p * bracket * p * (1.0 - (s - 1.0) * (y_lo / y))
    direct = []
    for k in range(DIRECT_TERMS):
        hi, lo = (q, q_lo) if k == 0 else _sum(q.op("Max", float(k)), q.op("Min", float(k)), q_lo)
        pk = hi.op("Pow", half)
        term = (factorial * pk) * pk
        direct.append(term if lo is None else term * (1.0 - s * (lo / hi.op("Max", 0.25))))  # lo = 0 below 1/2
    while len(direct) > 1:  # pairwise: the terms are alike near q = 10, and rounding adds up
        direct = [a + b for a, b in zip(direct[::2], direct[1::2], strict=False)] + direct[len(direct) - len(direct) % 2:]
    return direct[0] + tail  # the tail is the smaller for small q, the larger far right: one rounding either way


def _two_sided_far(r: Ex, n: Ex, factorial: Ex) -> Ex:
    """n! B(r) times `factorial` / n!, for even n and |r| <= 1/2 (accurate near |r| = 1/2): the table."""
    a = abs(r)
    c = sin_pi(0.5 - a) / sin_pi(a)  # |cot(pi r)| = tan(pi (1/2 - |r|)), 1/2 - |r| exact
    w = c * c
    row = floor(n * 0.5 - 1.0).op("Max", 0.0).cast("int64")
    table = reflection_table()
    acc = _gather(table[:, -1], row, r)
    for k in range(table.shape[1] - 2, -1, -1):
        acc = acc * w + _gather(table[:, k], row, r)
    magnitude = factorial * (c * acc)
    return where(r < 0.0, -magnitude, magnitude)


def polygamma(n: Ex, x: Ex) -> Ex:
    """psi^(n)(x); `n` is the order as a float of x's dtype."""
    order = n.op("Max", 0.0).op("Min", float(MAX_ORDER))
    index = order.cast("int64")
    factorial = _gather(FACTORIALS, index, x)
    s = order + 1.0
    parity = fmod(order, 2.0)
    odd = parity.eq(1.0)
    negative = x < 0.0
    ax = abs(x)
    one_minus, one_minus_lo = _sum(ax.op("Max", 1.0), ax.op("Min", 1.0), None)  # 1 - x = 1 + |x| exactly, for x < 0
    q = where(negative, one_minus, ax)  # zeta(s, x) for x >= 0, zeta(s, 1 - x) for x < 0
    zq = where(q.eq(math.inf), 0.0, scaled_zeta(q, s, factorial, where(negative, one_minus_lo, 0.0)))
    positive = where(odd, zq, -zq)  # -0.0 for even n far right, as SciPy
    _, r = reduced_fraction(x)
    a = abs(r)
    root = _gather(ROOT_FACTORIALS, index, x)
    rest = factorial / root  # exact
    p = a.op("Pow", s * -0.5)
    pole = (root * p) * p  # n! |r|**-s / rest
    plus, minus = 1.0 + r, 1.0 - r
    z_plus = scaled_zeta(plus, s, root, (1.0 - plus) + r)  # exact remainders: |r| <= 1/2
    z_minus = scaled_zeta(minus, s, root, (1.0 - minus) - r)
    odd_sum = ((pole + z_plus) + z_minus) * rest - zq
    near = where(r < 0.0, -pole, pole) + (z_plus - z_minus)
    cancels = (a / (1.0 - a)).op("Pow", s) > TABLE_ABOVE  # |r|**-s against zeta(s, 1 - |r|) ~ (1 - |r|)**-s
    two_sided = where(cancels, _two_sided_far(r, order, root), near)
    reflected = where(odd, odd_sum, -(two_sided * rest + zq))
    result = where(negative, reflected, positive)
    infinite = where(odd, math.inf, -math.inf, like=x)
    result = where((negative & r.eq(0.0)) | x.eq(-math.inf), infinite, result)
    # a zero (an underflow) has the sign of (-1)**(n+1): for x < 0 only even n can vanish, where
    # r = ±1/2 and the two-sided sum is exactly 0; the Wheres above may have lost it
    even_zero = result.eq(0.0) & parity.eq(0.0)
    result = with_zero_sign(result, even_zero)
    result = where(n.eq(0.0), digamma(x), result)
    return where((n < 0.0) | (n > float(MAX_ORDER)), math.nan, result)


@decomposes("PolyGamma")
def decompose_polygamma(node, inputs):
    """The order (any integer dtype, or bool) comes converted to x's float dtype."""
    return polygamma(*inputs)
