"""LAPACK's dlanv2, elementwise over many 2 x 2 blocks at once: the standard form of the real
Schur form's blocks (`schur.py`'s last step)."""

from __future__ import annotations

import numpy as np

from ptonnx.decompositions.expr import Ex, where

#: dlamch('P') in float64
ULP = float(np.finfo(np.float64).eps)


def not_(x: Ex) -> Ex:
    return x.op("Not")


def hypot(x: Ex, y: Ex) -> Ex:
    """sqrt(x^2 + y^2) without overflow or underflow (dlapy2)."""
    big = abs(x).op("Max", abs(y))
    safe = where(big.eq(0.0), 1.0, big)
    return big * ((x / safe) * (x / safe) + (y / safe) * (y / safe)).op("Sqrt")


def dlanv2(a: Ex, b: Ex, c: Ex, d: Ex) -> tuple[Ex, ...]:
    """LAPACK's dlanv2 on 2 x 2 blocks [a b; c d] (elementwise): (a, b, c, d, cs, sn) with
    [a b; c d] = [cs -sn; sn cs] [a' b'; c' d'] [cs sn; -sn cs], c' = 0 for real eigenvalues and
    a' = d', b' c' < 0 for complex ones."""
    one = lambda x: where(x < 0.0, -1.0, 1.0, like=a)  # noqa: E731  (Fortran's SIGN(1, x), +1 for 0)
    temp = a - d
    p = temp * 0.5
    bcmax = abs(b).op("Max", abs(c))
    bcmis = abs(b).op("Min", abs(c)) * one(b) * one(c)
    scale = abs(p).op("Max", bcmax)
    scale_ = where(scale.eq(0.0), 1.0, scale)
    zz = (p / scale_) * p + (bcmax / scale_) * bcmis
    real = zz >= 4.0 * ULP
    # real eigenvalues
    zr = p + one(p) * scale.op("Sqrt") * zz.op("Max", 0.0).op("Sqrt")
    zr_ = where(zr.eq(0.0), 1.0, zr)
    ra, rd = d + zr, d - (bcmax / zr_) * bcmis
    tau = hypot(c, zr)
    tau_ = where(tau.eq(0.0), 1.0, tau)
    rcs, rsn, rb = zr / tau_, c / tau_, b - c
    # complex (or nearly equal real) eigenvalues: equal diagonal
    sigma = b + c
    tau = hypot(sigma, temp)
    tau_ = where(tau.eq(0.0), 1.0, tau)
    cs = ((abs(sigma) / tau_ + 1.0) * 0.5).op("Sqrt")
    sn = -(p / (tau_ * cs)) * one(sigma)
    aa, bb = a * cs + b * sn, -a * sn + b * cs
    cc, dd = c * cs + d * sn, -c * sn + d * cs
    b2 = bb * cs + dd * sn
    c2 = -aa * sn + cc * cs
    mid = ((aa * cs + cc * sn) + (-bb * sn + dd * cs)) * 0.5
    # then: b2, c2 of one sign -> triangular; b2 = 0 -> swap
    same = c2.ne(0.0) & b2.ne(0.0) & one(b2).eq(one(c2))
    swap = c2.ne(0.0) & b2.eq(0.0)
    sab, sac = abs(b2).op("Sqrt"), abs(c2).op("Sqrt")
    pp = one(c2) * sab * sac
    t2 = abs(b2 + c2)
    t2 = where(t2.eq(0.0), 1.0, t2).op("Sqrt").op("Reciprocal")
    cs1, sn1 = sab * t2, sac * t2
    ca = where(same, mid + pp, mid)
    cd = where(same, mid - pp, mid)
    cb = where(same, b2 - c2, where(swap, -c2, b2))
    cc_ = where(same | swap, 0.0, c2)
    ccs = where(same, cs * cs1 - sn * sn1, where(swap, -sn, cs))
    csn = where(same, cs * sn1 + sn * cs1, where(swap, cs, sn))
    # the cases dlanv2 takes first
    c_zero = c.eq(0.0)
    b_zero = b.eq(0.0) & not_(c_zero)
    standard = not_(c_zero) & not_(b_zero) & temp.eq(0.0) & one(b).ne(one(c))
    keep = c_zero | standard
    out_a = where(keep, a, where(b_zero, d, where(real, ra, ca)))
    out_d = where(keep, d, where(b_zero, a, where(real, rd, cd)))
    out_b = where(keep, b, where(b_zero, -c, where(real, rb, cb)))
    out_c = where(keep | b_zero | real, 0.0, cc_)
    out_c = where(keep, c, out_c)
    out_cs = where(keep, 1.0, where(b_zero, 0.0, where(real, rcs, ccs)))
    out_sn = where(keep, 0.0, where(b_zero, 1.0, where(real, rsn, csn)))
    return out_a, out_b, out_c, out_d, out_cs, out_sn
