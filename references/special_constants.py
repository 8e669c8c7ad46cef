"""Constants of ptonnx's special-function lowerings that are computed, not published:
recomputed here with mpmath at 200 bits. `tests/decompositions/test_special_constants.py`
checks the values in ptonnx/decompositions/special/ against this; `python -m references.special_constants`
prints them.
"""

from __future__ import annotations

import math

import mpmath

#: how many Taylor terms of digamma about its positive root ptonnx uses
DIGAMMA_ROOT_TERMS = 26


def digamma_root() -> tuple[float, float]:
    """The positive zero of digamma as a double and the double nearest its remainder."""
    with mpmath.workprec(200):
        root = mpmath.findroot(mpmath.digamma, mpmath.mpf("1.4616321449683623"))
        hi = float(root)
        return hi, float(root - hi)


def digamma_root_taylor(terms: int = DIGAMMA_ROOT_TERMS) -> tuple[float, ...]:
    """c[k-1] = psi^(k)(x0) / k! = (-1)**(k+1) zeta(k+1, x0), k = 1..terms."""
    with mpmath.workprec(200):
        root = mpmath.findroot(mpmath.digamma, mpmath.mpf("1.4616321449683623"))
        return tuple(float((-1) ** (k + 1) * mpmath.zeta(k + 1, root)) for k in range(1, terms + 1))


#: how many Taylor terms of lgamma about 2 ptonnx uses (|x - 2| <= 1/2: the next is below 1e-19)
LGAMMA_TWO_TERMS = 30


def lgamma_about_two(terms: int = LGAMMA_TWO_TERMS) -> tuple[float, ...]:
    """c[k-1] with lgamma(2 + t) = sum c[k-1] t**k: c[0] = 1 - gamma, c[k-1] = (-1)**k (zeta(k) - 1) / k."""
    with mpmath.workprec(200):
        first = 1 - mpmath.euler
        return (float(first),) + tuple(float((-1) ** k * (mpmath.zeta(k) - 1) / k) for k in range(2, terms + 1))



#: lgamma, psi and trigamma move x below GAMMA_SHIFT up by GAMMA_SHIFT (ptonnx/decompositions/special/gamma.py),
#: then use a fit of their asymptotic series' remainder on z >= GAMMA_SHIFT in w = 1/z**2, of this many terms
GAMMA_SHIFT = 4
ASYMPTOTIC_TERMS = {"lgamma": 8, "digamma": 8, "trigamma": 10}


def _asymptotic_remainder(name: str, w):
    """lgamma(z) = (z - 1/2)(log z - 1) + log sqrt(2 pi) - 1/2 + R(w) / z; psi(z) = log z - 1/(2z) - w R(w);
    psi'(z) = 1/z + 1/(2 z**2) + R(w) / z**3: R(w), with R(0) = 1/12, 1/12, 1/6."""
    if w == 0:
        return mpmath.mpf(1) / {"lgamma": 12, "digamma": 12, "trigamma": 6}[name]
    z = 1 / mpmath.sqrt(w)
    if name == "lgamma":
        return (mpmath.loggamma(z) - (z - mpmath.mpf(1) / 2) * mpmath.log(z) + z - mpmath.log(2 * mpmath.pi) / 2) * z
    if name == "digamma":
        return (mpmath.log(z) - 1 / (2 * z) - mpmath.digamma(z)) / w
    return (mpmath.psi(1, z) - 1 / z - 1 / (2 * z * z)) * z**3


def asymptotic_fit(name: str, terms: int | None = None, shift: int = GAMMA_SHIFT, nodes: int = 80) -> tuple[float, ...]:
    """R(w) of `_asymptotic_remainder` on 0 <= w <= 1/shift**2 as a polynomial (highest power first):
    least squares at Chebyshev nodes, near minimax (|error| 6e-17 for lgamma, 2e-16 for psi, 3e-17 relative
    for trigamma, at z = 4)."""
    terms = terms or ASYMPTOTIC_TERMS[name]
    with mpmath.workprec(200):
        top = mpmath.mpf(1) / shift**2
        ws = [top * (1 + mpmath.cos(mpmath.pi * (2 * i + 1) / (2 * nodes))) / 2 for i in range(nodes)]
        a = mpmath.matrix([[w**j for j in range(terms)] for w in ws])
        b = mpmath.matrix([_asymptotic_remainder(name, w) for w in ws])
        c = mpmath.qr_solve(a, b)[0]
        return tuple(float(c[j]) for j in reversed(range(terms)))


# -- erfinv / erfcinv: float-grade starting values, fitted here (Chebyshev least squares) -----------
#: erfinv(a) = a P(a**2) for 0 <= a <= 1/2 (P of degree 8 in t = 8 a**2 - 1)
ERFINV_SMALL = (0.0, 0.25, 8)
#: erfcinv(q) = s P(log s), s = sqrt(-log q), 0 < q <= 1/2, on two pieces of log s (degree 8 each)
ERFCINV_TAIL = ((0.5 * math.log(math.log(2)), math.log(3.0), 8), (math.log(3.0), math.log(27.5), 8))


def _erfinv_over_a(z):
    with mpmath.workprec(200):
        a = mpmath.sqrt(mpmath.mpf(z))
        return float(mpmath.erfinv(a) / a) if z > 0 else float(mpmath.sqrt(mpmath.pi) / 2)


def _erfcinv_over_s(v):
    """erfcinv(q) / s for s = sqrt(-log q) = e**v (the root of log erfc(y) = -s**2)."""
    with mpmath.workprec(200):
        s = mpmath.exp(mpmath.mpf(v))
        y = mpmath.findroot(lambda t: mpmath.log(mpmath.erfc(t)) + s * s, s)
        return float(y / s)


def chebyshev_fit(f, lo: float, hi: float, degree: int, nodes: int = 64) -> tuple[float, tuple[float, ...]]:
    """(the centre and half width of [lo, hi], the coefficients of the least-squares polynomial of
    `degree` in t = (v - centre) / half width, highest first), fitted at Chebyshev nodes."""
    import numpy as np
    from numpy.polynomial import chebyshev

    t = np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)
    centre, half = (lo + hi) / 2, (hi - lo) / 2
    values = np.array([f(centre + half * u) for u in t])
    monomial = chebyshev.cheb2poly(chebyshev.chebfit(t, values, degree))
    return (centre, half), tuple(float(c) for c in monomial[::-1])


def erfinv_small_start():
    lo, hi, degree = ERFINV_SMALL
    return chebyshev_fit(_erfinv_over_a, lo, hi, degree)


def erfcinv_tail_start():
    return tuple(chebyshev_fit(_erfcinv_over_s, lo, hi, degree) for lo, hi, degree in ERFCINV_TAIL)


# -- Owen's T: Gauss-Legendre nodes and weights on [0, 1] --------------------------------------------
OWENS_T_NODES = 24


def gauss_legendre_mp(n: int, prec: int = 200) -> tuple[list, list]:
    """The n-point Gauss-Legendre rule on [0, 1] (nodes ascending, weights) as mpmath numbers,
    by Newton's method on P_n at `prec` bits."""
    with mpmath.workprec(prec):
        nodes, weights = [], []
        for i in range(n, 0, -1):
            x = mpmath.cos(mpmath.pi * (i - mpmath.mpf(1) / 4) / (n + mpmath.mpf(1) / 2))
            for _ in range(100):
                step = mpmath.legendre(n, x) / (n * (x * mpmath.legendre(n, x) - mpmath.legendre(n - 1, x)) / (x * x - 1))
                x -= step
                if abs(step) < mpmath.mpf(2) ** (10 - prec):
                    break
            derivative = n * (x * mpmath.legendre(n, x) - mpmath.legendre(n - 1, x)) / (x * x - 1)
            nodes.append((x + 1) / 2)
            weights.append(1 / ((1 - x * x) * derivative * derivative))
        return nodes, weights


def gauss_legendre(n: int = OWENS_T_NODES) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The n-point Gauss-Legendre rule on [0, 1], rounded to doubles."""
    nodes, weights = gauss_legendre_mp(n)
    return tuple(float(v) for v in nodes), tuple(float(v) for v in weights)


# -- Bessel functions: the first zeros of J0 and J1, the Taylor series of 1/Gamma(1+z) ------------------
def bessel_j_zeros(order: int, count: int = 2) -> tuple[tuple[float, float], ...]:
    """The first `count` positive zeros of J_order, each as a double and the double nearest its remainder."""
    with mpmath.workprec(200):
        zeros = [mpmath.besseljzero(order, k) for k in range(1, count + 1)]
        return tuple((float(z), float(z - float(z))) for z in zeros)


def rgamma_taylor(terms: int) -> tuple[float, ...]:
    """c_k of 1/Gamma(1+z) = sum c_k z**k, k < terms (Temme's Gamma1 and Gamma2 for K_mu)."""
    with mpmath.workprec(200):
        return tuple(float(c) for c in mpmath.taylor(lambda z: 1 / mpmath.gamma(1 + z), 0, terms - 1))


if __name__ == "__main__":
    print("LGAMMA_ABOUT_TWO =", lgamma_about_two())
    print("DIGAMMA_ROOT =", digamma_root())
    print("DIGAMMA_ROOT_TAYLOR = (")
    for c in digamma_root_taylor():
        print(f"    {c!r},")
    print(")")
    for name in ASYMPTOTIC_TERMS:
        print(f"{name.upper()}_ASYMPTOTIC =", asymptotic_fit(name))
