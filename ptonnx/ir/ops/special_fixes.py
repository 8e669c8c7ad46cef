"""SciPy's special functions where they are wrong, as the IR's reference semantics: SciPy's value
elsewhere. Each fix is checked against mpmath (tests/lowering/test_special.py) and listed in
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
