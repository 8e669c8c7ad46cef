"""Hyp2F1's reference, and where ptonnx refuses it by design, for `audit/function_table.py`.

- `hyp2f1`: mpmath's hyp2f1 (which raises its precision where a series cancels) at 120 and 180
  bits, at 400 where those two differ beyond 1e-30 (values beyond 2**+-1200 are 0 or inf, far
  outside float64's range, where mpmath would otherwise not converge); a complex value (z > 1 outside
  polynomials, the branch cut) is NaN. Outside finite arguments and at the poles c = 0, -1, ...:
  SciPy's conventions.
- `refused`: the regions ptonnx/decompositions/special/hyp2f1.py documents as NaN, where a NaN is a
  refusal and not an error: z > 1, z < -19, 0.95 < z < 1 outside polynomials; infinite
  arguments; c = -n with a polynomial of degree n; z = 1 where Gauss's theorem's error bound
  (the distances of c - a, c - b, c - a - b to the poles of Gamma) exceeds ACCEPT or a parameter
  exceeds 60; and where every candidate series' first-order bound of its rounding errors exceeds
  ACCEPT (cancelling series, large parameters, a polynomial's zeros) or it needs more than
  MAX_TRIPS terms. That bound is recomputed here in NumPy as the docstring describes it (terms'
  relative errors (ep + eq + xe + 7) eps accumulated along the series, each times |term|, plus
  eps |partial sum|; computed parameters c - a, c - b with error scale |c| + |a|, |c| + |b|), and
  a NaN counts as refused where it exceeds ACCEPT / 4 (a margin for this estimate's own
  roundings): a NaN where the estimate is well within ACCEPT is wrong.
"""

from __future__ import annotations

import functools
import math
import warnings

import mpmath
import numpy as np
import scipy.special

from ptonnx.decompositions.special.hyp2f1 import ACCEPT, GAMMA_ULP, GAUSS_MAX, MAX_TRIPS, STEP_ROUNDINGS, TOLERANCE, X_MAX

EPS = 2.0**-53
PFAFF_DOWN_TO = X_MAX / (X_MAX - 1)  # w = z / (z - 1) = 0.95 at z = -19
MARGIN = 4.0


@functools.lru_cache(maxsize=1 << 16)
def _one(a: float, b: float, c: float, z: float) -> np.longdouble:
    integer_c = c <= 0 and c == math.floor(c)
    if not all(math.isfinite(v) for v in (a, b, c, z)) or integer_c or z == 0:
        return np.longdouble(scipy.special.hyp2f1(a, b, c, z))
    values = []
    for prec in (120, 180, 400):
        with mpmath.workprec(prec):
            v = _mp_hyp2f1(a, b, c, z)
        values.append(v)
        if len(values) == 2 and (values[0] == values[1] or mpmath.isinf(values[1])
                                 or abs(values[0] - values[1]) <= 1e-30 * abs(values[1])):
            break
    v = values[-1]
    if isinstance(v, mpmath.mpc):
        if v.imag != 0:
            return np.longdouble(np.nan)  # complex: the branch cut z > 1
        v = v.real
    with np.errstate(over="ignore"), warnings.catch_warnings():  # beyond the long double range: inf
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.longdouble(mpmath.nstr(v, 25, min_fixed=1, max_fixed=0)) if mpmath.isfinite(v) else np.longdouble(v)


def _mp_hyp2f1(a, b, c, z):
    """mpmath's hyp2f1 (0 below 2**-1200, inf above 2**1200); where it gives up (its transformations
    for z < -1 at large c: hypercomb does not converge), Pfaff's (1 - z)**-a 2F1(a, c - b; c; z / (z - 1)),
    whose argument is in (0, 1) for z < 0."""
    try:
        return mpmath.hyp2f1(a, b, c, z, zeroprec=1200, infprec=1200)
    except ValueError:
        if z >= 0:
            raise
        a, b, c, z = (mpmath.mpf(v) for v in (a, b, c, z))
        return (1 - z) ** -a * mpmath.hyp2f1(a, c - b, c, z / (z - 1), zeroprec=1200, infprec=1200)


def hyp2f1(a, b, c, z) -> np.ndarray:
    """The exact 2F1 as long doubles (mpmath)."""
    ufunc = np.frompyfunc(lambda *v: _one(*(float(t) for t in v)), 4, 1)
    return np.asarray(ufunc(a, b, c, z)).astype(np.longdouble)


def _nonpositive_integer(v):
    return (v <= 0) & (np.floor(v) == v) & np.isfinite(v)


def _series_bound(p, q, r, x, sp, sq, xe):
    """The first-order rounding bound err / |sum| of F(p, q; r; x) as ptonnx accumulates it (inf where
    not converged in MAX_TRIPS terms); NumPy arrays."""
    t, s = np.ones_like(x), np.ones_like(x)
    rel, err = np.zeros_like(x), np.zeros_like(x)
    done = np.zeros(x.shape, bool)
    with np.errstate(all="ignore"):
        for m in range(1, MAX_TRIPS + 1):
            k = m - 1.0
            ep = np.where(sp > 0, 1 + sp / np.abs(p + k), 1.0)
            eq = np.where(sq > 0, 1 + sq / np.abs(q + k), 1.0)
            numerator = (p + k) * (q + k)
            t_new = t * np.where(numerator == 0, 0.0, numerator / ((r + k) * m) * x)
            s_new = s + t_new
            rel_new = rel + (ep + eq + xe + STEP_ROUNDINGS + 1) * EPS
            err_new = err + np.abs(t_new) * rel_new + np.abs(s_new) * EPS
            ahead = (p + m > 0) & (q + m > 0) & (r + m > 0)
            ratio = np.maximum(np.abs((p + m) * (q + m) / ((r + m) * (m + 1.0)) * x), np.abs(x))
            converged = (t_new == 0) | (ahead & (ratio < 1) & (np.abs(t_new) * ratio <= np.abs(s_new) * (1 - ratio) * TOLERANCE))
            converged |= ~np.isfinite(s_new)
            t, s, rel, err = (np.where(done, old, new) for old, new in ((t, t_new), (s, s_new), (rel, rel_new), (err, err_new)))
            done |= converged
            if done.all():
                break
        bound = err / np.abs(s)
    return np.where(done & (bound <= np.inf), bound, np.inf)


def series_bound(a, b, c, z) -> np.ndarray:
    """The smallest bound (with its prefactor's) of the candidates ptonnx runs, for finite arguments, z < 1."""
    a, b, c, z = (np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(a, b, c, z))
    a_int, b_int = _nonpositive_integer(a), _nonpositive_integer(b)
    negative = z < 0
    with np.errstate(all="ignore"):
        log1mz = np.where(z < 1, np.log1p(-np.where(z < 1, z, 0.0)), 0.0)
        w = np.where(negative, -z / (1 - z), z)
        zero, sa, sb, sc = np.zeros_like(z), np.abs(a), np.abs(b), np.abs(c)
        xe = np.where(negative, 3.0, 0.0)
        on1 = (w <= X_MAX) | a_int | (b_int & ~negative)
        b1 = _series_bound(a, np.where(negative, c - b, b), c, w, zero, np.where(negative, sc + sb, 0.0), xe)
        b1 += np.where(negative, (sa * np.abs(log1mz) * 2 + sa + 2) * EPS, 0.0)
        on2 = (w <= X_MAX) | (b_int & negative)
        expo2 = np.where(negative, -b * log1mz, (c - a - b) * log1mz)
        scale2 = np.where(negative, sb, (sa + sb + sc) * 2)
        b2 = _series_bound(np.where(negative, b, c - a), np.where(negative, c - a, c - b), c, w,
                           np.where(negative, 0.0, sc + sa), sc + np.where(negative, sa, sb), xe)
        b2 += (scale2 * np.abs(log1mz) * 2 + np.abs(expo2) * 2 + sb + 4) * EPS
        b3 = np.where(negative & (a_int | b_int), _series_bound(a, b, c, z, zero, zero, zero), np.inf)
    return np.minimum(np.minimum(np.where(on1, b1, np.inf), np.where(on2, b2, np.inf)), b3)


def _gauss_bound(a, b, c):
    """Gauss's theorem's bound at z = 1, as ptonnx states it (inf beyond |a|, |b|, |c| = 60)."""
    with np.errstate(all="ignore"):
        sens = np.zeros_like(a)
        for x in (c - a, c - b, c - a - b):
            nearest = np.floor(x + 0.5)
            sens = sens + np.log(np.abs(x) + 2) + 1 / np.where(x > 0.5, x, np.abs(x - nearest))
        bound = (sens * (np.abs(a) + np.abs(b) + np.abs(c)) + 4 * GAMMA_ULP) * EPS
    small = (np.abs(a) <= GAUSS_MAX) & (np.abs(b) <= GAUSS_MAX) & (np.abs(c) <= GAUSS_MAX)
    return np.where(small, bound, np.inf)


def refused(a, b, c, z) -> np.ndarray:
    """Where a NaN from ptonnx is one of its documented refusals (see the module docstring)."""
    a, b, c, z = (np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(a, b, c, z))
    poly = _nonpositive_integer(a) | _nonpositive_integer(b)
    with np.errstate(invalid="ignore"):
        degree = np.minimum(np.where(_nonpositive_integer(a), -a, np.inf), np.where(_nonpositive_integer(b), -b, np.inf))
        outside = (z > 1) | (z < PFAFF_DOWN_TO) | ((z > X_MAX) & (z < 1))
    infinite = ~(np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & np.isfinite(z))
    ambiguous = _nonpositive_integer(c) & poly & (degree == -c)
    at_one = (z == 1) & ~poly & (c - a - b > 0) & ~(_gauss_bound(a, b, c) <= ACCEPT / MARGIN)
    region = (~poly & outside) | infinite | ambiguous | at_one
    series = ~region & ~infinite & (z != 1) & (z < 1) | poly & ~infinite
    out = region.copy()
    if series.any():
        out[series] |= ~(series_bound(a[series], b[series], c[series], z[series]) <= ACCEPT / MARGIN)
    return out
