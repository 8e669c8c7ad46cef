"""Argument sweeps (as `audit/function_sweeps.py`) of the incomplete gamma and beta functions,
their inverses and Hyp2F1: by parameter bands from subnormal to huge, and the regions where the
lowerings change method (gamma_inc.py: x = 3, x = 1.1 a, a = 13, Temme's |x - a| < 0.4 a from
a = 20; beta.py: min(a, b) = 10, b = 0.1, near the mean; hyp2f1.py: z = 0.95, -19, 1) or the
inverse is hard (y near 0 and 1, tiny parameters: x ~ (y a B)**(1/a)). mpmath's incomplete
gamma function takes ~60 ms per point from a = 1e4 (Temme's expansion), the inverses several
evaluations per point: those rows are smaller (their weight).
"""

from __future__ import annotations

import numpy as np
import scipy.special

from references import hyp2f1_reference
from audit.function_sweeps import SUB, TINY, Draw, Sweep

#: BetaInc's fraction converges within MAX_TRIPS up to a, b ~ 1e10 near the mean (beta.py)
BETA_CONVERGES_BELOW = 1e9


def _normal(d: Draw, spread):
    return d.rng.normal(0, 1, d.n) * spread


def _around_a(d: Draw, a, sds):
    """x within `sds` standard deviations sqrt(a) of a (where P and Q are neither 0 nor 1)."""
    return np.abs(a + _normal(d, sds * np.sqrt(a)))


GAMMA_ROWS = (
    ("a subnormal..1e-8, x a..1e3 (Q ~ a E1(x), -a log x)", lambda d: (lambda a: (a, d.lu(np.maximum(a, 1e-300), 1e3)))(d.lu(SUB, 1e-8))),
    ("a 1e-8..1, x 1e-300..3 (series of Q or P)", lambda d: (d.lu(1e-8, 1), d.lu(1e-300, 3))),
    ("a 1e-8..20, x near 3 (series to the fraction)", lambda d: (d.lu(1e-8, 20), d.near(3.0))),
    ("a 1e-8..20, x 3..1e3 (continued fraction)", lambda d: (d.lu(1e-8, 20), d.lu(3, 1e3))),
    ("a 1..20, x 1e-3 a..a (series of P)", lambda d: (lambda a: (a, a * d.lu(1e-3, 1)))(d.u(1, 20))),
    ("a 0.1..2.7, x near a / 1.1 (Q's series to P's)", lambda d: (lambda a: (a, d.near(a / 1.1, 1e-14, 1e-2)))(d.u(0.1, 2.7))),
    ("a near 13 (the prefactor's two forms)", lambda d: (lambda a: (a, a * d.lu(0.3, 3)))(d.near(13.0, 1e-14, 1e-2))),
    ("a near 20, |x - a| < 0.4 a (Temme from 20)", lambda d: (lambda a: (a, a * (1 + d.u(-0.4, 0.4))))(d.near(20.0, 1e-14, 1e-2))),
    ("a 20..1e4, x within 6 sqrt(a) of a (Temme)", lambda d: (lambda a: (a, np.clip(_around_a(d, a, 6), 0.6 * a, 1.4 * a)))(d.lu(20, 1e4))),
    ("a 20..1e4, |x - a| near 0.4 a (Temme's edges)", lambda d: (lambda a: (a, a * (1 + d.signed(d.near(0.4, 1e-14, 1e-2)))))(d.lu(20, 1e4))),
    ("a 20..1e4, x near a/2 and 2a (x - a exact within)", lambda d: (lambda a: (a, a * d.near(d.pick(0.5, 2.0), 1e-16, 1e-3)))(d.lu(20, 1e4))),
    ("a 20..1e4, x < 0.6 a or x > 1.4 a", lambda d: (lambda a: (a, a * np.where(d.u(0, 1) < 0.5, d.lu(1e-3, 0.6), d.lu(1.4, 10))))(d.lu(20, 1e4))),
    ("a 1e4..1e8, x within 10 sqrt(a) of a", lambda d: (lambda a: (a, _around_a(d, a, 10)))(d.lu(1e4, 1e8)), 0.2),
    ("a 1e8..1e300, x within 10 sqrt(a) of a", lambda d: (lambda a: (a, _around_a(d, a, 10)))(d.lu(1e8, 1e300)), 0.2),
    ("x subnormal..1e-8, a 1e-3..10", lambda d: (d.lu(1e-3, 10), d.lu(SUB, 1e-8))),
    ("x 1e3..1e300, a 1e-3..1e3 (Q underflows)", lambda d: (d.lu(1e-3, 1e3), d.lu(1e3, 1e300))),
)

GAMMA_INVERSE_ROWS = (
    ("a subnormal..1e-3, y 0..1", lambda d: (d.lu(SUB, 1e-3), d.u(0, 1))),
    ("a 1e-3..1, y 0..1", lambda d: (d.lu(1e-3, 1), d.u(0, 1))),
    ("a 1..20, y 0..1", lambda d: (d.u(1, 20), d.u(0, 1))),
    ("a 20..1e4, y 0..1", lambda d: (d.lu(20, 1e4), d.u(0, 1))),
    ("a 1e4..1e8, y 0..1", lambda d: (d.lu(1e4, 1e8), d.u(0, 1)), 0.1),
    ("y subnormal, a 1e-2..1e3", lambda d: (d.lu(1e-2, 1e3), d.lu(SUB, TINY))),
    ("y 1e-308..1e-8, a 1e-2..1e3", lambda d: (d.lu(1e-2, 1e3), d.lu(TINY, 1e-8))),
    ("y near 1/2 (the tails swap)", lambda d: (d.lu(1e-2, 1e3), d.near(0.5))),
    ("1 - y 2**-53..1e-8, a 1e-2..1e3", lambda d: (d.lu(1e-2, 1e3), 1 - d.lu(2.0**-53, 1e-8))),
    ("a 1e-12..1e-2, y = P(a, e**-k), k 1..700 (x ~ (y Gamma(a + 1))**(1/a))",
     lambda d: (lambda a: (a, scipy.special.gammainc(a, np.exp(-d.u(1, 700)))))(d.lu(1e-12, 1e-2))),
)
#: GammaIncCInv: the last row's y as Q(a, e**-k)
GAMMA_C_INVERSE_ROWS = GAMMA_INVERSE_ROWS[:-1] + (
    ("a 1e-12..1e-2, y = Q(a, e**-k), k 1..700 (1 - y ~ x**a)",
     lambda d: (lambda a: (a, scipy.special.gammaincc(a, np.exp(-d.u(1, 700)))))(d.lu(1e-12, 1e-2))),
)


def _near_mean(d: Draw, a, b, sds):
    """x within `sds` standard deviations of the mean a / (a + b) of Beta(a, b)."""
    mean = a / (a + b)
    sd = np.sqrt(mean * (1 - mean) / (a + b + 1))
    return np.clip(mean + _normal(d, sd * d.u(0, sds)), 0, 1)


def _large(d: Draw, lo, hi, sds):
    a = d.lu(lo, hi)
    b = a * 10 ** d.u(-1, 1)
    return a, b, _near_mean(d, a, b, sds)


def _swap(d: Draw, a, b, x):
    """Half the triples mirrored: (b, a, 1 - x)."""
    flip = d.u(0, 1) < 0.5
    return np.where(flip, b, a), np.where(flip, a, b), np.where(flip, 1 - x, x)


def _beta_refused(operands):
    """BetaInc's fraction may not converge in MAX_TRIPS beyond a, b ~ 1e10 near the mean (NaN): from
    1e9, x (or BetaIncInv's root) not below half the mean, nor 1 - x below half of 1 - mean."""
    a, b, x = operands
    mean = a / (a + b)
    return (np.maximum(a, b) >= BETA_CONVERGES_BELOW) & (x > mean / 2) & (1 - x > (1 - mean) / 2)


def _far_from_mean(d: Draw):
    a, b = d.lu(1e9, 1e300), d.lu(1e9, 1e300)
    mean = a / (a + b)
    return a, b, np.where(d.u(0, 1) < 0.5, mean * d.lu(1e-3, 0.5), 1 - (1 - mean) * d.lu(1e-3, 0.5))


BETA_ROWS = (
    ("a, b 1e-3..1e2, x 0..1", lambda d: (d.lu(1e-3, 1e2), d.lu(1e-3, 1e2), d.u(0, 1))),
    ("a, b 1e-300..1e-3, x 0..1", lambda d: (d.lu(1e-300, 1e-3), d.lu(1e-300, 1e-3), d.u(0, 1))),
    ("a or b 1e-300..1e-3, the other 1e-3..1e3", lambda d: _swap(d, d.lu(1e-300, 1e-3), d.lu(1e-3, 1e3), d.u(0, 1))),
    ("x subnormal..1e-8, a, b 1e-3..1e3", lambda d: (d.lu(1e-3, 1e3), d.lu(1e-3, 1e3), d.lu(SUB, 1e-8))),
    ("1 - x 2**-53..1e-8, a, b 1e-3..1e3", lambda d: (d.lu(1e-3, 1e3), d.lu(1e-3, 1e3), 1 - d.lu(2.0**-53, 1e-8))),
    ("min(a, b) near 10 (brcomp from 10), x near the mean",
     lambda d: (lambda a, b: _swap(d, a, b, _near_mean(d, a, b, 12)))(d.near(10.0, 1e-14, 1e-2), d.lu(10, 1e4))),
    ("a, b 10..1e4, x within 12 sd of the mean", lambda d: _large(d, 10, 1e4, 12)),
    ("a, b 1e4..1e9, x within 12 sd of the mean", lambda d: _large(d, 1e4, 1e9, 12), 0.3),
    ("b near 0.1 (small b from 0.1), x near 1",
     lambda d: (lambda a, b: (a, b, 1 - b / a * d.lu(1e-3, 10)))(d.lu(1, 1e5), d.near(0.1, 1e-14, 1e-2))),
    ("a 10..1e7, b 1e-3..0.1, 1 - x ~ b / a",
     lambda d: _swap(d, *(lambda a, b: (a, b, np.clip(1 - b / a * d.lu(1e-3, 10), 0, 1)))(d.lu(10, 1e7), d.lu(1e-3, 0.1)))),
    ("a, b 1e9..1e300, x far from the mean (0 or 1)", _far_from_mean),
)

BETA_INVERSE_ROWS = (
    ("a, b 1e-2..1e2, y 0..1", lambda d: (d.lu(1e-2, 1e2), d.lu(1e-2, 1e2), d.u(0, 1))),
    ("a, b 1e-6..1e6, y 0..1", lambda d: (d.lu(1e-6, 1e6), d.lu(1e-6, 1e6), d.u(0, 1))),
    ("y 1e-300..1e-5, a, b 1e-2..1e3", lambda d: (d.lu(1e-2, 1e3), d.lu(1e-2, 1e3), d.lu(1e-300, 1e-5))),
    ("y subnormal, a, b 1e-2..1e3", lambda d: (d.lu(1e-2, 1e3), d.lu(1e-2, 1e3), d.lu(SUB, TINY))),
    ("1 - y 2**-53..1e-5, a, b 1e-2..1e3", lambda d: (d.lu(1e-2, 1e3), d.lu(1e-2, 1e3), 1 - d.lu(2.0**-53, 1e-5))),
    ("a, b near 1 (the start changes)", lambda d: (d.near(1.0, 1e-16, 0.1), d.near(1.0, 1e-16, 0.1), d.u(0, 1))),
    ("a or b 1e-12..0.1, y 0..1", lambda d: _swap(d, d.lu(1e-12, 0.1), d.lu(1e-2, 1e2), d.u(0, 1))),
    ("a, b 1e-300..1e-12, y 0..1", lambda d: (d.lu(1e-300, 1e-12), d.lu(1e-300, 1e-12), d.u(0, 1))),
    ("a, b 1e3..1e8, y 0..1", lambda d: (d.lu(1e3, 1e8), d.lu(1e3, 1e8), d.u(0, 1)), 0.3),
    ("a or b 1e-12..1e-2, y = I at x = e**-k or 1 - x = e**-k, k 1..700 (x ~ (y a B)**(1/a))",
     lambda d: (lambda a, b, x: (a, b, scipy.special.betainc(a, b, x)))(*_swap(d, d.lu(1e-12, 1e-2), d.lu(1e-2, 1e2), np.exp(-d.u(1, 700))))),
)


def _abc(d: Draw, lo, hi):
    return d.u(lo, hi), d.u(lo, hi), d.u(lo, hi)


def _gauss_at_one(d: Draw, excess):
    a, b = d.u(-5, 5), d.u(-5, 5)
    return a, b, a + b + excess, np.ones(d.n)


HYP2F1_ROWS = (
    ("|a|, |b|, |c| < 5, |z| < 1", lambda d: (*_abc(d, -5, 5), d.u(-1, 1))),
    ("a, b, c 0..10, z 0..0.9", lambda d: (*_abc(d, 0, 10), d.u(0, 0.9))),
    ("|a|, |b|, |c| < 10, z 0.9..0.95 (the series' last stretch)", lambda d: (*_abc(d, -10, 10), d.u(0.9, 0.95))),
    ("|a|, |b|, |c| < 10, z 0.95..1 (refused outside polynomials)", lambda d: (*_abc(d, -10, 10), 1 - d.lu(2.0**-53, 0.05))),
    ("z = 1, c - a - b 1e-3..10 (Gauss's theorem)", lambda d: _gauss_at_one(d, d.lu(1e-3, 10))),
    ("z = 1, c - a - b 1e-15..1e-3 (refused near 0)", lambda d: _gauss_at_one(d, d.lu(1e-15, 1e-3))),
    ("|a|, |b|, |c| < 20, z -19..0 (Pfaff)", lambda d: (*_abc(d, -20, 20), d.u(-19, 0))),
    ("|a|, |b|, |c| < 5, z near -19", lambda d: (*_abc(d, -5, 5), d.near(-19.0, 1e-16, 1e-2))),
    ("|a|, |b|, |c| < 5, z -1e300..-19 (refused outside polynomials)", lambda d: (*_abc(d, -5, 5), -d.lu(19, 1e300))),
    ("|a|, |b|, |c| < 5, z 1..1e300 (complex outside polynomials)", lambda d: (*_abc(d, -5, 5), d.lu(1, 1e300))),
    ("a = -n, n <= 20, |z| < 1e6 (polynomials)", lambda d: (-d.ints(0, 20), d.u(-10, 10), d.u(0.5, 10), d.signed(d.lu(1e-3, 1e6)))),
    ("a = -n, n <= 20, |z| 1e6..1e300", lambda d: (-d.ints(0, 20), d.u(-10, 10), d.u(0.5, 10), d.signed(d.lu(1e6, 1e300)))),
    ("a, b, c 1e-10..1, z -19..0.95 (tiny parameters)", lambda d: (d.lu(1e-10, 1), d.lu(1e-10, 1), d.lu(1e-10, 10), d.u(-19, 0.95))),
    ("|a|, |b|, |c| < 5, |z| subnormal..1e-8", lambda d: (*_abc(d, -5, 5), d.signed(d.lu(SUB, 1e-8)))),
    ("|a|, |b|, |c| 20..100, z -19..0.95", lambda d: (*(d.signed(v) for v in _abc(d, 20, 100)), d.u(-19, 0.95))),
    ("|a|, |b| 1..100, c 100..1e4, z -19..0.95 (large c)", lambda d: (d.signed(d.lu(1, 100)), d.signed(d.lu(1, 100)), d.lu(100, 1e4), d.u(-19, 0.95)), 0.25),
    ("c near -n, n <= 10 (near the poles)", lambda d: (d.u(-5, 5), d.u(-5, 5), -d.ints(0, 10) + d.signed(d.lu(1e-10, 1e-2)), d.u(-1, 0.9))),
)

INCOMPLETE = {
    **{op: Sweep(GAMMA_ROWS, share=0.25) for op in ("GammaInc", "GammaIncC", "GammaL", "GammaU")},
    "GammaIncInv": Sweep(GAMMA_INVERSE_ROWS, share=0.2),
    "GammaIncCInv": Sweep(GAMMA_C_INVERSE_ROWS, share=0.2),
    "BetaInc": Sweep(BETA_ROWS, share=0.3, refused=_beta_refused),
    "BetaIncInv": Sweep(BETA_INVERSE_ROWS, share=0.2, refused=lambda ops: np.maximum(ops[0], ops[1]) >= BETA_CONVERGES_BELOW),
    "Hyp2F1": Sweep(HYP2F1_ROWS, share=0.3, refused=lambda operands: hyp2f1_reference.refused(*operands)),
}

#: op -> its sweep
SWEEPS = INCOMPLETE
