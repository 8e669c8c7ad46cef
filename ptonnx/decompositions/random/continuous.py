"""Continuous draws by inverse CDFs and transformations of uniform and normal variates.

Each is the formula NumPy's or SciPy's generator uses for the same distribution (the one
PyTensor's `rng_fn` calls), with the same parameter checks: NumPy's let NaN through
(`scale < 0` is false for NaN), SciPy's refuse it (`scale >= 0` must hold). Formulas
that cancel or overflow in their textbook form are rearranged (Wald's root).
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, sqrt, where
from ptonnx.decompositions.random.draws import Draws, above, at_least
from ptonnx.decompositions.random.portable import exp, expm1, log, log1p, power, tan_pi
from ptonnx.decompositions.registry import decomposes

#: SciPy's refusal of parameters outside a distribution's domain (NaN included)
SCIPY_DOMAIN = "Domain error in arguments ({what}), as SciPy's {dist}.rvs raises"


def scipy_scale(d: Draws, scale: Ex, dist: str) -> tuple[Ex, str]:
    return scale >= 0.0, SCIPY_DOMAIN.format(what="scale must be >= 0", dist=dist)


def random_op(name: str):
    """Register `fn(d: Draws, *params) -> Ex` as the decomposition of the random op `name`."""

    def decorate(fn):
        @decomposes(name, as_given=True)
        def decomposition(node, inputs):
            d = Draws(node, inputs)
            return fn(d, *d.params)

        decomposition.__doc__, decomposition.__qualname__ = fn.__doc__, fn.__qualname__
        return fn

    return decorate


@random_op("RandomUniform")
def uniform(d: Draws, low: Ex, high: Ex) -> Ex:
    """NumPy's: low + (high - low) u."""
    width = high - low
    x = low + width * d.unit()
    x = d.checked(x, (abs(width) < math.inf, "high - low range exceeds valid bounds"), exception="builtins:OverflowError")
    return d.checked(x, (at_least(width, 0.0), "high - low < 0"))


@random_op("RandomNormal")
def normal(d: Draws, loc: Ex, scale: Ex) -> Ex:
    return d.checked(loc + scale * d.normal(), (at_least(scale, 0.0), "scale < 0"))


@random_op("RandomHalfNormal")
def halfnormal(d: Draws, loc: Ex, scale: Ex) -> Ex:
    """SciPy's halfnorm: loc + scale |z|."""
    return d.checked(loc + scale * abs(d.normal()), scipy_scale(d, scale, "halfnorm"))


@random_op("RandomLogNormal")
def lognormal(d: Draws, mean: Ex, sigma: Ex) -> Ex:
    return d.checked(exp(mean + sigma * d.normal()), (at_least(sigma, 0.0), "sigma < 0"))


def standard_exponential(d: Draws) -> Ex:
    """-log(1 - u), u in [0, 1): in [0, 36.7]."""
    return -log1p(-d.unit(), small=True)


@random_op("RandomExponential")
def exponential(d: Draws, scale: Ex) -> Ex:
    return d.checked(scale * standard_exponential(d), (at_least(scale, 0.0), "scale < 0"))


@random_op("RandomTruncExpon")
def truncexpon(d: Draws, b: Ex, loc: Ex, scale: Ex) -> Ex:
    """SciPy's ppf: -log1p(u expm1(-b)), on [0, b)."""
    x = loc + scale * -log1p(d.unit() * expm1(-b))
    return d.checked(x, (b > 0.0, SCIPY_DOMAIN.format(what="b must be > 0", dist="truncexpon")),
                     scipy_scale(d, scale, "truncexpon"))


@random_op("RandomGumbel")
def gumbel(d: Draws, loc: Ex, scale: Ex) -> Ex:
    """SciPy's gumbel_r ppf: loc - scale log(-log u), u in (0, 1)."""
    return d.checked(loc - scale * log(-log(d.open_unit(), normal=True), normal=True), scipy_scale(d, scale, "gumbel_r"))


@random_op("RandomLogistic")
def logistic(d: Draws, loc: Ex, scale: Ex) -> Ex:
    """NumPy's: loc + scale log(u / (1 - u)), u in (0, 1)."""
    u = d.open_unit()
    return d.checked(loc + scale * (log(u, normal=True) - log1p(-u, small=True)), (at_least(scale, 0.0), "scale < 0"))


@random_op("RandomLaplace")
def laplace(d: Draws, loc: Ex, scale: Ex) -> Ex:
    """NumPy's: loc - scale log(2 - 2u) from u = 1/2 on, loc + scale log(2u) below; u in (0, 1)."""
    u = d.open_unit()
    x = where(u >= 0.5, loc - scale * log(2.0 - 2.0 * u, normal=True), loc + scale * log(2.0 * u, normal=True))
    return d.checked(x, (at_least(scale, 0.0), "scale < 0"))


@random_op("RandomCauchy")
def cauchy(d: Draws, loc: Ex, scale: Ex) -> Ex:
    """The inverse CDF: loc + scale tan(pi (u - 1/2)), u in (0, 1)."""
    return d.checked(loc + scale * tan_pi(d.open_unit() - 0.5), scipy_scale(d, scale, "cauchy"))


@random_op("RandomHalfCauchy")
def halfcauchy(d: Draws, loc: Ex, scale: Ex) -> Ex:
    """The inverse CDF: loc + scale tan(pi u / 2), u in [0, 1)."""
    return d.checked(loc + scale * tan_pi(d.unit() * 0.5), scipy_scale(d, scale, "halfcauchy"))


@random_op("RandomWeibull")
def weibull(d: Draws, shape: Ex) -> Ex:
    """NumPy's: E ** (1 / a) for a standard exponential E, and 0 for a = 0."""
    x = where(shape.eq(0.0), 0.0, power(standard_exponential(d), 1.0 / shape))
    return d.checked(x, (at_least(shape, 0.0), "a < 0"))


@random_op("RandomPareto")
def pareto(d: Draws, b: Ex, scale: Ex) -> Ex:
    """SciPy's pareto ppf: scale u ** (-1 / b), u in (0, 1)."""
    x = scale * power(d.open_unit(), -1.0 / b)
    return d.checked(x, (b > 0.0, SCIPY_DOMAIN.format(what="b must be > 0", dist="pareto")), scipy_scale(d, scale, "pareto"))


@random_op("RandomTriangular")
def triangular(d: Draws, left: Ex, mode: Ex, right: Ex) -> Ex:
    """NumPy's inverse CDF: left + sqrt(u (mode - left)(right - left)) up to the mode's
    share of the mass, right - sqrt((1 - u)(right - mode)(right - left)) above."""
    base = right - left
    u = d.unit()
    x = where(u <= (mode - left) / base, left + sqrt(u * ((mode - left) * base)),
              right - sqrt((1.0 - u) * ((right - mode) * base)))
    return d.checked(x, ((left > mode).op("Not"), "left > mode"), ((mode > right).op("Not"), "mode > right"),
                     (left.eq(right).op("Not"), "left == right"))


@random_op("RandomWald")
def wald(d: Draws, mean: Ex, scale: Ex) -> Ex:
    """NumPy's (Michael, Schucany and Haas), with the smaller root written without
    cancellation: x = mean 4 s y / (y + r)**2 for y = mean z**2, r = sqrt(y) sqrt(y + 4 s);
    x where u <= mean / (mean + x), else mean**2 / x."""
    z = d.normal()
    y = mean * (z * z)
    r = sqrt(y) * sqrt(y + 4.0 * scale)
    x = where(y.eq(0.0), mean, mean * (4.0 * scale * y / (y + r)) / (y + r))
    x = where(d.unit() <= mean / (mean + x), x, mean * (mean / x))
    return d.checked(x, (above(mean, 0.0), "mean <= 0"), (above(scale, 0.0), "scale <= 0"))
