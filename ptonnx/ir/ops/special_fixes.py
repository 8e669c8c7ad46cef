"""SciPy's special functions where they are wrong, as the IR's reference semantics: SciPy's value
elsewhere. Each fix is checked against mpmath (tests/decompositions/test_special.py) and listed in
docs/numerics.md ("Where SciPy is wrong").
"""

from __future__ import annotations

import numpy as np


def gamma_sign(x: np.ndarray) -> np.ndarray:
    """The sign of Gamma(x) off its poles: + for x > 0, (-1)**ceil(-x) below."""
    with np.errstate(invalid="ignore"):
        return np.where((x > 0) | (np.floor(x) % 2 == 0), 1.0, -1.0)


def hyp2f1(a, b, c, z):
    """SciPy's hyp2f1, but at z = 1 with c - a - b <= 0 (a, b not non-positive integers, c not a
    pole) the limit z -> 1-: infinite with the sign of Gamma(c) Gamma(a + b - c) / (Gamma(a) Gamma(b))
    (c - a - b < 0; for c - a - b = 0 of Gamma(c) / (Gamma(a) Gamma(b)), the log's coefficient),
    where SciPy says +inf for some (2F1(-0.5, 2.5; 1.75; 1) = -inf: SciPy +inf)."""
    import scipy.special

    a, b, c, z = np.broadcast_arrays(*(np.asarray(v) for v in (a, b, c, z)))
    out = np.asarray(scipy.special.hyp2f1(a, b, c, z))
    with np.errstate(invalid="ignore"):
        pole = lambda v: (v <= 0) & (np.floor(v) == v)  # noqa: E731
        diverges = (z == 1) & np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & (c - a - b <= 0)
        diverges &= ~pole(a) & ~pole(b) & ~pole(c)
    if not diverges.any():
        return out
    signed = gamma_sign(a) * gamma_sign(b) * gamma_sign(c) * np.inf
    return np.where(diverges, signed, out).astype(out.dtype)


#: |x| from which SciPy's ive (AMOS) may refuse (NaN from about 2.1e9) and the asymptotic series is exact
IVE_HUGE = 1e9
#: |x| below which I_v(x) is its series' first term (x/2)**v / Gamma(v + 1) to double precision
IV_TINY = 1e-150


def _integer_sign(v, x):
    """I_v(-x) = (-1)**v I_v(x) for an integer v; NaN for another v (complex)."""
    with np.errstate(invalid="ignore"):
        odd = np.mod(v, 2) == 1
        return np.where(x < 0, np.where(np.floor(v) == v, np.where(odd, -1.0, 1.0), np.nan), 1.0)


def _ive_asymptotic(v, x):
    """exp(-|x|) I_v(x) for huge |x| (Hankel's expansion, 1/sqrt(2 pi |x|) times a sum in 1/|x|);
    NaN where the sum does not settle in 40 terms (|v| near sqrt(|x|)) or is complex (x < 0, v not
    an integer). inf gives 0 (with I_v's sign at -inf)."""
    ax = np.abs(x)
    mu = 4.0 * v * v
    with np.errstate(all="ignore"):
        term, total, settled = np.ones_like(ax), np.ones_like(ax), np.zeros(ax.shape, bool)
        for k in range(1, 41):
            term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * ax)
            total = total + term
            settled |= np.abs(term) <= 1e-17 * np.abs(total)
            if settled.all():
                break
        value = np.where(settled | np.isinf(ax), total / np.sqrt(2.0 * np.pi * ax), np.nan)
        return value * _integer_sign(v, x)


def _iv_first_term(v, x):
    """I_v(x) for tiny |x|: (|x|/2)**v / Gamma(v + 1), through logs (over- and underflow only where
    the result does); I_-n = I_n; the sign of (-1)**v for x < 0 (NaN if v is not an integer)."""
    import scipy.special

    with np.errstate(all="ignore"):
        v = np.where((v < 0) & (np.floor(v) == v), -v, v)
        log = v * (np.log(np.abs(x)) - np.log(2.0)) - scipy.special.gammaln(v + 1.0)  # x / 2 may round to 0
        value = np.exp(log) * gamma_sign(v + 1.0)
        return np.where(v == 0, 1.0, value) * _integer_sign(v, x)


def _fixed(name: str, region, replacement):
    """SciPy's `name`, and `replacement` where `region(v, x)` holds (v finite, x not NaN)."""
    def fn(v, x):
        import scipy.special

        v, x = np.broadcast_arrays(np.asarray(v), np.asarray(x))
        out = np.asarray(getattr(scipy.special, name)(v, x))
        where = region(v, x) & np.isfinite(v) & ~np.isnan(x)
        if not where.any():
            return out
        return np.where(where, replacement(v.astype(np.float64), x.astype(np.float64)), out).astype(out.dtype)

    fn.__name__ = name
    return fn


#: SciPy's ive is NaN from |x| ~ 2.1e9 on and at +-inf (AMOS's range), where I0e, I1e and the limit are finite
ive = _fixed("ive", lambda v, x: np.abs(x) >= IVE_HUGE, _ive_asymptotic)
#: SciPy's iv is NaN at subnormal x (iv(0, 5e-324)) and 0 for iv(0.5, 2.2e-308) = 1.18e-154
iv = _fixed("iv", lambda v, x: (np.abs(x) < IV_TINY) & (x != 0), _iv_first_term)
