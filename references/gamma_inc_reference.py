"""References for GammaInc, GammaIncC, GammaL and GammaU (`references/accuracy_reference.py`), from
mpmath at 100 bits; the smaller of P and Q is computed, the other is 1 minus it.

mpmath's gammainc sums a hypergeometric series whose length grows like sqrt(a) (it gives up
beyond a ~ 1e7); from a = 1e4 on the reference is Temme's uniform expansion (DLMF 8.12) at
100 bits with 40 rows of exact coefficients (references/gamma_inc_constants.py) and 80 columns:
there a phi < 800 (the only x where the result is not 0 or 1 in float64) means |eta| < 0.4,
where the rows converge like (0.4 / 3.5)**n and the expansion like 1e-4**k.
"""

from __future__ import annotations

import numpy as np

from references.gamma_inc_constants import temme_coefficients

TEMME_REFERENCE_FROM = 1e4
ROWS, COLUMNS = 40, 80


def _temme(mp, a, x):
    """(smaller of P and Q, is it P) by Temme's expansion, for a >= 1e4."""
    t = (x - a) / a
    phi = t - mp.log1p(t)
    if a * phi > 800:
        return mp.mpf(0), t < 0
    eta = mp.sqrt(2 * phi) * (1 if t >= 0 else -1)
    d = temme_coefficients(ROWS, COLUMNS)
    total = mp.mpf(0)
    for k in range(ROWS - 1, -1, -1):
        total = total / a + mp.polyval([mp.mpf(c.numerator) / c.denominator for c in d[k][::-1]], eta)
    s = mp.exp(-a * phi) / mp.sqrt(2 * mp.pi * a) * total
    z = abs(eta) * mp.sqrt(a / 2)
    return mp.erfc(z) / 2 + (s if t >= 0 else -s), t < 0


def _legendre(mp, a, x):
    """Q(a, x) for x > a by Legendre's continued fraction (modified Lentz), to the working precision."""
    tiny, eps = mp.mpf(2) ** -1000, mp.eps
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for k in range(1, 10**6):
        an = -k * (k - a)
        b += 2
        d = an * d + b
        c = b + an / c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < eps:
            break
    return mp.exp(a * mp.log(x) - x - mp.loggamma(a)) * h


#: below this a and up to x = 1, Q by its own series (`_tiny_a`): mpmath takes seconds there
TINY_A = 1e-8


def _tiny_a(mp, a, x):
    """Q(a, x) for a < TINY_A, 0 < x <= 1 (then Q < 1e-5 is the smaller): the series of P with its
    first term apart, Q = -expm1(a log x - lgamma(1 + a)) - a x**a T / Gamma(1 + a),
    T = sum_{n >= 1} (-x)**n / (n! (n + a)), lgamma(1 + a) by its Taylor series (1 + a rounds)."""
    with mp.workprec(160):
        lg = -mp.euler * a + sum((-1) ** k * mp.zeta(k) * a**k / k for k in range(2, 8))
        t, term, n = mp.mpf(0), mp.mpf(1), 1
        while True:
            term *= -x / n
            t += term / (n + a)
            if abs(term) < mp.eps * abs(t):
                break
            n += 1
        power = a * mp.log(x)
        return -mp.expm1(power - lg) - a * mp.exp(power - lg) * t


def smaller(a: float, x: float):
    """(min(P, Q) as an mpf at 100 bits, whether it is P), for finite a > 0 and x > 0."""
    import mpmath as mp

    with mp.workprec(100):
        a, x = mp.mpf(a), mp.mpf(x)
        if a >= TEMME_REFERENCE_FROM:
            return _temme(mp, a, x)
        if a < TINY_A and x <= 1:
            return _tiny_a(mp, a, x), False
        if x > a:  # Q is the smaller or close to it; mpmath's upper function is fast there
            try:
                q = mp.gammainc(a, x, mp.inf, regularized=True)
            except (mp.libmp.NoConvergence, ValueError):  # it gives up (a = 7402.6, x = 2a; Q ~ e**-1e300): Legendre's fraction
                q = _legendre(mp, a, x)
            return (+q, False) if q <= 0.5 else (1 - q, True)
        try:
            p = mp.gammainc(a, 0, x, regularized=True)
        except mp.libmp.NoConvergence:  # its series gives up: 1F1(1; a + 1; x) with more terms
            p = mp.exp(a * mp.log(x) - x - mp.loggamma(a + 1)) * mp.hyp1f1(1, a + 1, x, maxterms=10**7)
        if p < 0.5:
            return +p, True
        return mp.gammainc(a, x, mp.inf, regularized=True), False


def _longdouble(value) -> np.longdouble:
    """An mpmath number as the nearest long double (through 25 digits). Beyond the long double's
    range it is ±inf or a signed zero at once: printing 10**±100000 in decimal takes mpmath a
    second a value, and the underflowed tails of GammaU/GammaL are full of them."""
    import mpmath as mp

    if mp.isfinite(value) and value != 0:
        sign = -1 if value < 0 else 1
        magnitude = mp.mag(value)  # |value| < 2**magnitude, within a factor 4
        if magnitude > 16400:
            return np.longdouble(sign * np.inf)
        if magnitude < -16500:
            return np.longdouble(sign * 0.0)
    return np.longdouble(mp.nstr(value, 25, min_fixed=1, max_fixed=0))


def _one(which: str, a: float, x: float) -> np.longdouble:
    import mpmath as mp
    import scipy.special

    if not (np.isfinite(a) and np.isfinite(x)) or a <= 0 or x <= 0:
        fn = {"P": scipy.special.gammainc, "L": scipy.special.gammainc}.get(which, scipy.special.gammaincc)
        value = fn(a, x) * (scipy.special.gamma(a) if which in ("L", "U") else 1.0)
        return np.longdouble(value)
    far = x < a / 2 if which == "L" else x > 2 * a  # mpmath's own methods are quick there, at any a
    if which in ("L", "U") and (x < a) == (which == "L") and (a < TEMME_REFERENCE_FROM or far):
        # the non-regularized tail directly: it may be finite where P or Q is below the Temme reference's reach
        with mp.workprec(100):
            try:
                value = mp.gammainc(a, 0, x) if which == "L" else mp.gammainc(a, x, mp.inf)
                return _longdouble(value)
            except (mp.libmp.NoConvergence, ValueError):
                pass
    s, is_p = smaller(a, x)
    with mp.workprec(100):
        p = s if is_p else 1 - s
        q = 1 - s if is_p else s
        value = {"P": p, "Q": q, "L": p * mp.gamma(a), "U": q * mp.gamma(a)}[which]
        return _longdouble(value)


def _vectorised(which: str):
    one = np.frompyfunc(lambda a, x: _one(which, float(a), float(x)), 2, 1)

    def reference(a: np.ndarray, x: np.ndarray) -> np.ndarray:
        return one(a, x).astype(np.longdouble)

    return reference


gammainc, gammaincc = _vectorised("P"), _vectorised("Q")
gamma_lower, gamma_upper = _vectorised("L"), _vectorised("U")

OPS = ("GammaInc", "GammaIncC", "GammaL", "GammaU")


def hard_pairs(op: str, dtype: str, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, x) where the methods meet or strain: x near a (Temme's region and its edges
    |x - a| = 0.4 a), x = a/2 (the exponent's two forms), x near 3 and 1.1 a, tiny a and x."""
    fi = np.finfo(dtype)
    top = min(float(np.log10(fi.max)), 8.0 if dtype == "float64" else 6.0)
    a = 10.0 ** rng.uniform(-6, top, n)
    kind = rng.integers(0, 5, n)
    spread = np.minimum(0.5, 6 / np.sqrt(a)) * rng.normal(0, 1, n)
    x = np.select(
        [kind == 0, kind == 1, kind == 2, kind == 3],
        [a * (1 + spread), a * rng.choice([0.6, 1.4, 0.5, 1.1], n) * (1 + rng.normal(0, 1e-3, n)),
         3.0 * (1 + rng.normal(0, 0.05, n)), 10.0 ** rng.uniform(-30, 3, n)],
        a * 10.0 ** rng.uniform(-2, 1, n),
    )
    with np.errstate(all="ignore"):
        return a.astype(dtype), np.abs(x).astype(dtype)
