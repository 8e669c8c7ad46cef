"""Argument sweeps of the special functions for `audit/function_table.py`, as data: op -> `Sweep`,
its rows (range label, sampler) over the function's whole float64 domain by parameter regions,
magnitudes from the subnormals to the largest doubles where the domain allows, and the regions
where the lowering changes method or strains (its constants named in the labels): the Bessel
functions, Erfinv, Erfcinv, PolyGamma, OwensT. The incomplete gamma and beta functions, their
inverses and Hyp2F1 are in `audit/function_sweeps_incomplete.py`.

Importing this module registers the references and PyTensor expressions that
`references/accuracy_reference.py` lacks: Iv (PyTensor's ive(v, x) exp(|x|)), BetaInc and BetaIncInv
(`references/beta_reference.py`), Hyp2F1 (`references/hyp2f1_reference.py`), GammaIncInv and GammaIncCInv
(`references/gamma_inv_reference.py`).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import pytensor.tensor as pt
import scipy.special

from references import accuracy_reference, beta_reference, bessel_reference, gamma_inv_reference, hyp2f1_reference, special_reference

SUB, TINY, HUGE = 5e-324, 2.2250738585072014e-308, 1.7e308
#: near a zero no double hits, where |f| is below NEAR times the size of its cancelling terms, only
#: an absolute error is meaningful (elsewhere an error of an ulp of those terms is < 1e-14 relative)
NEAR = 1e-2


class Draw:
    """A row's samplers: `n` values each, from one generator."""

    def __init__(self, rng: np.random.Generator, n: int):
        self.rng, self.n = rng, n

    def lu(self, lo, hi):
        """Log-uniform in [lo, hi] (arrays broadcast)."""
        return np.exp(self.rng.uniform(np.log(lo), np.log(hi), self.n))

    def u(self, lo, hi):
        return self.rng.uniform(lo, hi, self.n)

    def ints(self, lo, hi):
        return self.rng.integers(lo, hi, self.n, endpoint=True).astype(np.float64)

    def pick(self, *values):
        return self.rng.choice(np.asarray(values, dtype=np.float64), self.n)

    def signed(self, x):
        return x * self.rng.choice([-1.0, 1.0], self.n)

    def near(self, x, lo=1e-16, hi=1e-2):
        """x (1 +- d), d log-uniform in [lo, hi]: both sides of a point where methods meet."""
        return x * (1 + self.signed(self.lu(lo, hi)))


@dataclasses.dataclass(frozen=True)
class Sweep:
    #: (range label, sampler(Draw) -> operands[, weight: a multiple of the row's size])
    rows: tuple
    #: points per row as a fraction of --n (the references' cost differs by 100x)
    share: float = 0.1
    #: (operands, exact) -> where only an absolute error is meaningful (near zeros no double hits)
    near: Callable | None = None
    #: (operands) -> the unit of the absolute error there (None: 1)
    scale: Callable | None = None
    #: (operands) -> where ptonnx documents a NaN result (a refusal, counted apart from errors)
    refused: Callable | None = None


# -- Bessel ----------------------------------------------------------------------------------------
def _envelope(order, x):
    """~ sqrt(J**2 + Y**2) beyond the turning point: sqrt(2 / (pi sqrt(x**2 - n**2)))."""
    with np.errstate(all="ignore"):
        return np.sqrt(2 / (np.pi * np.maximum(np.sqrt(np.abs(x * x - order * order)), 1.0)))


def _j_near(order, x, exact):
    """J's error is absolute near its zeros beyond |x| = 5 (orders 0, 1: Hankel's form) or
    |x| = |n| (the recurrence upwards): where |J| is below NEAR times the envelope."""
    order = np.abs(np.asarray(order, dtype=np.float64))
    start = np.where(order < 2, 5.0, order)
    return (np.abs(x) > start) & (np.abs(exact.astype(np.float64)) < NEAR * _envelope(order, x))


def _j_zeros(d: Draw, orders, most: int = 40):
    """Zeros j_{n,k} of J_|n| (SciPy's jn_zeros, to ~1e-15), k random up to `most`, each nudged by a
    relative 1e-16..1e-4."""
    table = {int(n): scipy.special.jn_zeros(int(n), most) for n in np.unique(np.abs(orders))}
    zeros = np.array([table[int(abs(n))][int(k) - 1] for n, k in zip(orders, d.ints(1, most), strict=True)])
    return d.near(zeros, 1e-16, 1e-4)


def _reflection_unit(scaled: bool):
    """(operands) -> exp(-|x|) I_|v|(x) (Ive; times exp(|x|) for Iv) for negative non-integer
    orders, the size of the two terms of I_-v = I_v + (2/pi) sin(v pi) K_v; 1 elsewhere."""
    def unit(operands):
        v, x = (np.asarray(a, np.float64) for a in operands)
        reflected = (v < 0) & (v != np.round(v))
        size = np.ones(np.shape(x))
        if reflected.any():
            size[reflected] = np.abs(bessel_reference.reference("Ive", -v[reflected], np.abs(x[reflected])))
            size[reflected] *= 1.0 if scaled else np.exp(np.abs(x[reflected]))
        return size
    return unit


def _reflection_near(scaled: bool):
    """(operands, exact) -> near the zeros of I_-v, where ptonnx.accuracy states an absolute bound."""
    unit = _reflection_unit(scaled)
    return lambda operands, exact: (operands[0] < 0) & (operands[0] != np.round(operands[0])) & (
        np.abs(exact.astype(np.float64)) < NEAR * unit(operands))


_I01 = (
    ("|x| subnormal", lambda d: (d.signed(d.lu(SUB, TINY)),)),
    ("|x| 1e-308..1e-9 (Taylor)", lambda d: (d.signed(d.lu(TINY, 1e-9)),)),
    ("|x| 1e-9..8", lambda d: (d.signed(d.lu(1e-9, 8)),)),
    ("|x| near 8 (the expansions meet)", lambda d: (d.signed(d.near(8.0)),)),
    ("|x| 8..700", lambda d: (d.signed(d.lu(8, 700)),)),
    ("|x| 700..713.98 (exp as two halves)", lambda d: (d.signed(d.u(700, 713.98)),)),
    ("|x| 713.98..1.7e308 (inf)", lambda d: (d.signed(d.lu(713.99, HUGE)),)),
)


def _j01(first_zero: float, order: int):
    return (
        ("|x| subnormal", lambda d: (d.signed(d.lu(SUB, TINY)),)),
        ("|x| 1e-308..1e-5 (Taylor)", lambda d: (d.signed(d.lu(TINY, 1e-5)),)),
        ("|x| 1e-5..5 (rational)", lambda d: (d.signed(d.lu(1e-5, 5)),)),
        (f"|x| near the first zero {first_zero:.4g} (relative)", lambda d: (d.signed(d.near(first_zero, 1e-16, 1e-3)),)),
        ("|x| near 5 (rational to Hankel)", lambda d: (d.signed(d.near(5.0)),)),
        ("|x| 5..1e3", lambda d: (d.signed(d.lu(5, 1e3)),)),
        ("|x| near zeros 2..300 (absolute)", lambda d: (d.signed(_j_zeros(d, np.full(d.n, order), 300)),)),
        ("|x| 1e3..1e8", lambda d: (d.signed(d.lu(1e3, 1e8)),)),
        ("|x| 1e8..1.7e308 (exact phase)", lambda d: (d.signed(d.lu(1e8, HUGE)),)),
    )


def _j_rows_near(order: int):
    return lambda operands, exact: _j_near(np.full(np.shape(operands[0]), float(order)), operands[0], exact)


BESSEL = {
    "I0": Sweep(_I01, share=0.5),
    "I1": Sweep(_I01, share=0.5),
    "J0": Sweep(_j01(2.404825557695773, 0), share=0.5, near=_j_rows_near(0)),
    "J1": Sweep(_j01(3.8317059702075125, 1), share=0.5, near=_j_rows_near(1)),
    "Ive": Sweep((
        ("orders 0, +-1 (i0e, i1e), |x| subnormal..1e300", lambda d: (d.pick(0, 1, -1), d.signed(d.lu(SUB, 1e300)))),
        ("0 < v < 25, x 1e-300..20 (series)", lambda d: (d.u(0, 25), d.lu(1e-300, 20))),
        ("0 < v < 25, x near max(20, sqrt(24 (v + 1))) (series to Debye)",
         lambda d: (lambda v: (v, d.near(np.maximum(20.0, np.sqrt(24 * (v + 1))), 1e-12, 0.05)))(d.u(0, 25))),
        ("0 < v < 25, x 20..1e5 (Debye at 25, recurrence down)", lambda d: (d.u(0, 25), d.lu(20, 1e5))),
        ("v near 25 (Debye from 25)", lambda d: (d.near(25.0, 1e-14, 0.04), d.lu(1e-3, 1e4))),
        ("25 < v < 170, x**2 <= 24 (v + 1) (series)", lambda d: (lambda v: (v, np.sqrt(24 * (v + 1)) * d.u(0, 1)))(d.u(25, 170))),
        ("v near 170 (series to Debye)", lambda d: (lambda v: (v, np.sqrt(24 * (v + 1)) * d.u(0.5, 1)))(d.near(170.0, 1e-14, 0.01))),
        ("25 < v < 2000, x 1e-3..1e5 (Debye)", lambda d: (d.u(25, 2000), d.lu(1e-3, 1e5))),
        ("v 2e3..1e150, x ~ v**2 (Debye, Hankel)", lambda d: (lambda v: (v, np.minimum(v * v * d.lu(1e-3, 1e3), 1e308)))(d.lu(2e3, 1e150))),
        ("v 0..50, x subnormal..1e-8", lambda d: (d.u(0, 50), d.lu(SUB, 1e-8))),
        ("integer orders -40..40, x < 0", lambda d: (d.ints(-40, 40), -d.lu(1e-3, 1e4))),
        ("negative non-integer orders -25..0 (reflection)", lambda d: (-(d.u(0, 25)), d.lu(1e-3, 1e3))),
        ("negative non-integer orders -2000..-25", lambda d: (-(d.u(25, 2000)), d.lu(1e-1, 1e4))),
    ), share=0.4, near=_reflection_near(True), scale=_reflection_unit(True)),
    "Iv": Sweep((
        ("orders 0, +-1, |x| 1e-300..709", lambda d: (d.pick(0, 1, -1), d.signed(d.lu(1e-300, 709)))),
        ("0 < v < 25, x 1e-300..20", lambda d: (d.u(0, 25), d.lu(1e-300, 20))),
        ("0 < v < 25, x 20..709", lambda d: (d.u(0, 25), d.lu(20, 709))),
        ("25 < v < 2000, x 1e-3..709", lambda d: (d.u(25, 2000), d.lu(1e-3, 709))),
        ("v 0..50, |x| 709.78..713.98 (exp(|x|) overflows, I_v does not)", lambda d: (d.u(0, 50), d.u(709.79, 713.98))),
        ("integer orders -40..40, x < 0", lambda d: (d.ints(-40, 40), -d.lu(1e-3, 700))),
        ("negative non-integer orders -25..0", lambda d: (-(d.u(0, 25)), d.lu(1e-3, 700))),
    ), share=0.4, near=_reflection_near(False), scale=_reflection_unit(False)),
    "Kve": Sweep((
        ("orders 0, 1, x subnormal..2 (k0e, k1e)", lambda d: (d.signed(d.pick(0, 1)), d.lu(SUB, 2))),
        ("orders 0, 1, x near 2 (the expansions meet)", lambda d: (d.signed(d.pick(0, 1)), d.near(2.0))),
        ("orders 0, 1, x 2..1e300", lambda d: (d.signed(d.pick(0, 1)), d.lu(2, 1e300))),
        ("half-integer orders < 25 (closed forms, recurrence)", lambda d: (d.signed(d.ints(0, 24) + 0.5), d.lu(1e-300, 1e4))),
        ("other v < 25, x 1e-300..1 (Temme's series)", lambda d: (d.signed((d.u(0, 25))), d.lu(1e-300, 1))),
        ("other v < 25, x near 1 (series to the integral)", lambda d: (d.signed((d.u(0, 25))), d.near(1.0))),
        ("other v < 25, x 1..32 (trapezoidal rule)", lambda d: (d.signed((d.u(0, 25))), d.lu(1, 32))),
        ("other v < 25, x near 32 (the integral to Hankel)", lambda d: (d.signed((d.u(0, 25))), d.near(32.0))),
        ("other v < 25, x 32..1e300 (Hankel)", lambda d: (d.signed((d.u(0, 25))), d.lu(32, 1e300))),
        ("v near 25 (Debye from 25)", lambda d: (d.near(25.0, 1e-14, 0.04), d.lu(1e-3, 1e4))),
        ("25 < v < 2000, x 1e-3..1e5 (Debye)", lambda d: (d.u(25, 2000), d.lu(1e-3, 1e5))),
        ("v 2e3..1e150, x ~ v (Debye)", lambda d: (lambda v: (v, v * d.lu(1e-2, 1e2)))(d.lu(2e3, 1e150))),
        ("v 0..2, x subnormal..1e-8 (near overflow)", lambda d: (d.u(0, 2), d.lu(SUB, 1e-8))),
    ), share=0.4),
    "Jv": Sweep((
        ("orders 0, +-1, |x| 1e-300..1e300", lambda d: (d.pick(0, 1, -1), d.signed(d.lu(1e-300, 1e300)))),
        ("2 <= |n| <= 100, |x| subnormal..1 (series)", lambda d: (d.signed(d.ints(2, 100)), d.signed(d.lu(SUB, 1)))),
        ("2 <= |n| <= 100, 1 < |x| < |n| (Miller)", lambda d: (lambda n: (n, d.signed(1 + (np.abs(n) - 1) * d.u(0, 1))))(d.signed(d.ints(2, 100)))),
        ("|x| near |n| (the turning point)", lambda d: (lambda n: (n, d.signed(d.near(np.abs(n), 1e-12, 0.1))))(d.signed(d.ints(2, 100)))),
        ("|n| <= |x| <= 1e3 (recurrence up)", lambda d: (lambda n: (n, d.signed(np.abs(n) * d.lu(1, 1e3 / np.abs(n)))))(d.signed(d.ints(2, 100)))),
        ("near zeros j_{n,k}, k <= 20 (absolute)", lambda d: (lambda n: (n, d.signed(_j_zeros(d, n, 20))))(d.signed(d.ints(2, 100)))),
        ("|x| 1e3..1e300", lambda d: (d.signed(d.ints(2, 100)), d.signed(d.lu(1e3, 1e300)))),
    ), share=0.4, near=lambda operands, exact: _j_near(operands[0], operands[1], exact)),
}

# -- Erfinv, Erfcinv, PolyGamma, OwensT --------------------------------------------------------------
ERFC_1 = 0.15729920705028513  # erfc(1): Erfcinv's residual changes form at y = 1


def _polygamma_unit(operands):
    """n! zeta(n + 1, 1 - x), the size of the cancelling terms for even n >= 2 at x < 0 (PolyGamma's
    bound: absolute within 2e-15 of it near the zeros); 1 for n = 0 (Psi's absolute 4e-15)."""
    n, x = operands
    return np.where(n == 0, 1.0, special_reference.polygamma_floor(n, x) / 2e-15)


def _polygamma_near(operands, exact):
    n, x = operands
    even = (x < 0) & (np.mod(n, 2) == 0)
    return even & (np.abs(exact.astype(np.float64)) < NEAR * _polygamma_unit(operands))


SPECIAL = {
    "Erfinv": Sweep((
        ("|y| subnormal", lambda d: (d.signed(d.lu(SUB, TINY)),)),
        ("|y| 1e-308..2**-26", lambda d: (d.signed(d.lu(TINY, 2.0**-26)),)),
        ("|y| 2**-26..0.5 (erf residual)", lambda d: (d.signed(d.lu(2.0**-26, 0.5)),)),
        ("|y| near 0.5 (the residuals meet)", lambda d: (d.signed(d.near(0.5)),)),
        ("|y| 0.5..1 - erfc(1)", lambda d: (d.signed(d.u(0.5, 1 - ERFC_1)),)),
        ("|y| near 1 - erfc(1) = 0.8427 (erfc to log erfc residual)", lambda d: (d.signed(d.near(1 - ERFC_1)),)),
        ("1 - |y| 1e-8..erfc(1)", lambda d: (d.signed(1 - d.lu(1e-8, ERFC_1)),)),
        ("1 - |y| 2**-53..1e-8 (the last doubles below 1)", lambda d: (d.signed(1 - d.lu(2.0**-53, 1e-8)),)),
    ), share=0.5),
    "Erfcinv": Sweep((
        ("q subnormal", lambda d: (d.lu(SUB, TINY),)),
        ("q 1e-308..1e-8", lambda d: (d.lu(TINY, 1e-8),)),
        ("q 1e-8..erfc(1) (log erfc residual)", lambda d: (d.lu(1e-8, ERFC_1),)),
        ("q near erfc(1) = 0.1573 (residuals meet)", lambda d: (d.near(ERFC_1),)),
        ("q erfc(1)..0.5", lambda d: (d.u(ERFC_1, 0.5),)),
        ("q near 0.5 (to -erfinv(q - 1))", lambda d: (d.near(0.5),)),
        ("q 0.5..1.5", lambda d: (d.u(0.5, 1.5),)),
        ("q near 1 (the zero)", lambda d: (d.near(1.0, 1e-16, 1e-3),)),
        ("2 - q 2**-52..0.5", lambda d: (2 - d.lu(2.0**-52, 0.5),)),
    ), share=0.5),
    "PolyGamma": Sweep((
        ("n = 0, x 1e-300..1e300", lambda d: (np.zeros(d.n), d.lu(1e-300, 1e300))),
        ("n 1..10, x subnormal..1e-8", lambda d: (d.ints(1, 10), d.lu(SUB, 1e-8))),
        ("n 1..10, x 1e-8..10 (ten terms, Euler-Maclaurin)", lambda d: (d.ints(1, 10), d.lu(1e-8, 10))),
        ("n 1..10, x 10..1e300", lambda d: (d.ints(1, 10), d.lu(10, 1e300))),
        ("n 11..170, x 1e-3..1e4", lambda d: (d.ints(11, 170), d.lu(1e-3, 1e4))),
        ("n 0..170, x near the poles -1000..0", lambda d: (d.ints(0, 170), -d.ints(0, 1000) + d.signed(d.lu(1e-12, 0.25)))),
        ("odd n, x -1e4..-1e-3 (positive terms)", lambda d: (2 * d.ints(0, 84) + 1, -d.lu(1e-3, 1e4))),
        ("even n, x near -m - 1/2 (two-sided sum's zeros: absolute)",
         lambda d: (2 * d.ints(0, 85), -(d.ints(0, 1000) + 0.5) + d.signed(d.lu(1e-14, 0.2)))),
        ("n 0..170, x -1e15..-1e4", lambda d: (d.ints(0, 170), -d.lu(1e4, 1e15))),
    ), share=0.4, near=_polygamma_near, scale=_polygamma_unit),
    "OwensT": Sweep((
        ("|h| subnormal..1e-8, |a| 1e-3..1e3", lambda d: (d.signed(d.lu(SUB, 1e-8)), d.signed(d.lu(1e-3, 1e3)))),
        ("|h| 1e-8..1, |a| <= 1 (quadrature)", lambda d: (d.signed(d.lu(1e-8, 1)), d.signed(d.u(0, 1)))),
        ("|h| 1..8.6, |a| <= 1", lambda d: (d.signed(d.u(1, 8.6)), d.signed(d.u(0, 1)))),
        ("ah near 8.6 (quadrature to Q(h)/2)", lambda d: (lambda a: (d.signed(d.near(8.6 / a, 1e-12, 1e-2)), d.signed(a)))(d.u(0.23, 1))),
        ("|h| 8.6..38.5, |a| <= 1 (T tiny)", lambda d: (d.signed(d.u(8.6, 38.5)), d.signed(d.u(0, 1)))),
        ("|h| 37..40 (T underflows)", lambda d: (d.signed(d.u(37, 40)), d.signed(d.lu(1e-3, 1e3)))),
        ("|h| 40..1e300 (T = 0)", lambda d: (d.signed(d.lu(40, 1e300)), d.signed(d.lu(1e-3, 1e3)))),
        ("|a| near 1 (Owen's identity from 1)", lambda d: (d.signed(d.lu(1e-3, 20)), d.signed(d.near(1.0)))),
        ("|a| 1..1e3, |h| 1e-3..20 (Owen's identity)", lambda d: (d.signed(d.lu(1e-3, 20)), d.signed(d.lu(1, 1e3)))),
        ("|a| 1e3..1e300", lambda d: (d.signed(d.lu(1e-3, 20)), d.signed(d.lu(1e3, 1e300)))),
        ("|a| subnormal..1e-8", lambda d: (d.signed(d.lu(1e-3, 20)), d.signed(d.lu(SUB, 1e-8)))),
    ), share=0.4),
}


accuracy_reference.REFERENCE.update({
    "BetaInc": beta_reference.betainc, "BetaIncInv": beta_reference.betaincinv, "Hyp2F1": hyp2f1_reference.hyp2f1,
    "GammaIncInv": gamma_inv_reference.gammaincinv, "GammaIncCInv": gamma_inv_reference.gammainccinv,
})
accuracy_reference.BUILD.update({"BetaInc": pt.betainc, "BetaIncInv": pt.betaincinv, "Hyp2F1": pt.hyp2f1,
                                 "GammaIncInv": pt.gammaincinv, "GammaIncCInv": pt.gammainccinv})
accuracy_reference.BINARY = accuracy_reference.BINARY | {"GammaIncInv", "GammaIncCInv"}

#: op -> its sweep; `audit/function_sweeps_incomplete.py` has the rest
SWEEPS = {**BESSEL, **SPECIAL}
