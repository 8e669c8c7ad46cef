"""The gamma family: gamma, inverse gamma, beta, Student's t, generalized gamma, Dirichlet,
over rejection loops (`rejection.py`; von Mises, the other rejection sampler, is `vonmises.py`).

A standard gamma variate of shape a >= 1 is Marsaglia and Tsang's (2000): with d = a - 1/3
and c = 1 / sqrt(9 d), a normal x and a uniform u, accept v = (1 + c x)**3 where c x > -1
and log u < x**2 / 2 + d (1 - v + log v), giving d v; 1 - v + log v is written
3 log1p(w) - w (3 + w (3 + w)) for w = c x (no cancellation against 1 for huge a). The
acceptance rate is above 0.95 for every a >= 1. For a < 1 it is G(a + 1) u**(1/a), computed
as exp(log G + log(u) / a): 0 where that underflows, as NumPy's is; a = 0 gives 0, a = inf
inf, NaN NaN (NumPy's). Ratios of gammas (beta, Dirichlet) are taken in logs, so that
parameters so small that both gammas underflow still give NumPy's 0s and 1s. Everything
transcendental is computed on vectors of the draws' elements (`flat`), whatever their shape.
"""

from __future__ import annotations

import math

import numpy as np

from ptonnx.decompositions.expr import Ex, select, sqrt, where
from ptonnx.decompositions.random.bits import lane_bits, open_unit
from ptonnx.decompositions.random.continuous import SCIPY_DOMAIN, random_op, scipy_scale
from ptonnx.decompositions.random.draws import Draws, above, at_least
from ptonnx.decompositions.random.portable import exp, log, log1p
from ptonnx.decompositions.random.rejection import Trip, sampler_key, until_accepted, zeros


def _marsaglia_tsang(trip: Trip, params: list[Ex]) -> tuple[Ex, Ex]:
    d, c = params
    (x,), (u,) = trip.normals, trip.uniforms
    w = c * x
    v = (1.0 + w) * (1.0 + w) * (1.0 + w)
    bound = x * x * 0.5 + d * (log1p(w) * 3.0 - w * (3.0 + w * (3.0 + w)))
    return d * v, (w > -1.0) & (log(u, normal=True) < bound)


def non_negative(x: Ex) -> Ex:
    """NumPy's CONS_NON_NEGATIVE: x >= 0 and not -0.0 (its check is the sign bit's), true for NaN."""
    return ((x < 0.0) | (x.eq(0.0) & ((1.0 / x) < 0.0))).op("Not")


def flat(d: Draws, p: Ex) -> Ex:
    """`p` broadcast against the draws, as a vector of their n elements (by adding zeros: -0.0
    becomes 0.0, as NumPy's `shape == 0` takes it). The samplers compute on vectors (one Loop
    state whatever the draws' shape; their logs and exps are `portable.py`'s, exact ops, which
    round an element alike wherever the runtime's layout puts it)."""
    return (p + d.shaped(zeros(d.n))).op("Reshape", vector(d))


def vector(d: Draws) -> Ex:
    """The shape [n] of the draws as a vector."""
    return d.n.op("Unsqueeze", axes=(0,))


class Gamma:
    """Standard gamma variates of shapes `a` (a float64 vector of the draws' n elements, `flat`)
    from the op's sampler `which`: `value` (the variate) and `log` (its log, finite where the
    variate underflows), as vectors."""

    def __init__(self, d: Draws, a: Ex, which: int = 0):
        key = sampler_key(d.key, which)
        regular = (a >= 0.0) & (a < math.inf)
        self.a, self.boost = a, a < 1.0
        shape = where(regular, where(self.boost, a + 1.0, a), 1.0)
        dd = shape - 1.0 / 3.0
        c = 1.0 / sqrt(dd * 9.0)
        self.g = until_accepted(key, d.n, [dd, c], _marsaglia_tsang, normals=1, uniforms=1, op=d.op)
        self.log_u = log(open_unit(lane_bits(key, 0, d.n)), normal=True)
        self._special = ((a.isnan(), math.nan), (a.eq(math.inf), math.inf))

    @property
    def log(self) -> Ex:
        """The variate's log: log G + log(u) / a below a = 1 (-inf for a = 0)."""
        log_g = log(self.g)
        return select(*self._special, otherwise=where(self.boost, log_g + self.log_u / self.a, log_g))

    @property
    def value(self) -> Ex:
        return select(*self._special, otherwise=where(self.boost, exp(log(self.g) + self.log_u / self.a), self.g))

    @property
    def log_exponent(self) -> Ex:
        """log(-log(u) / a): which of two gammas whose logs are both -inf is larger."""
        return log(-self.log_u) - log(self.a)


@random_op("RandomGamma")
def gamma(d: Draws, alpha: Ex, scale: Ex) -> Ex:
    """NumPy's gamma: scale times a standard gamma of shape `alpha` (PyTensor's and NumPy's `shape`)."""
    x = d.shaped(flat(d, scale) * Gamma(d, flat(d, alpha)).value)
    return d.checked(x, (non_negative(alpha), "shape < 0"), (non_negative(scale), "scale < 0"))


@random_op("RandomInvGamma")
def invgamma(d: Draws, alpha: Ex, scale: Ex) -> Ex:
    """PyTensor's: 1 / gamma(alpha, 1 / scale)."""
    inverse = 1.0 / scale
    x = d.shaped(1.0 / (Gamma(d, flat(d, alpha)).value * flat(d, inverse)))
    return d.checked(x, (non_negative(alpha), "shape < 0"), (non_negative(inverse), "scale < 0"))


@random_op("RandomBeta")
def beta(d: Draws, alpha: Ex, beta: Ex) -> Ex:
    """X / (X + Y) for gammas X of shape alpha and Y of shape beta, as 1 / (1 + exp(log Y - log X));
    where both logs are -inf (parameters near the least double), the one with the smaller
    exponent -log(u) / a wins."""
    gx, gy = Gamma(d, flat(d, alpha), 0), Gamma(d, flat(d, beta), 1)
    lx, ly = gx.log, gy.log
    x = 1.0 / (1.0 + exp(ly - lx))
    x = where(lx.eq(-math.inf) & ly.eq(-math.inf), where(gx.log_exponent < gy.log_exponent, 1.0, 0.0, like=x), x)
    return d.checked(d.shaped(x), (above(alpha, 0.0), "a <= 0"), (above(beta, 0.0), "b <= 0"))


@random_op("RandomStudentT")
def student_t(d: Draws, df: Ex, loc: Ex, scale: Ex) -> Ex:
    """SciPy's t (NumPy's standard_t): loc + scale z sqrt(df / 2 / G), G a gamma of shape df / 2."""
    half = flat(d, df * 0.5)
    z = d.normal().op("Reshape", vector(d))
    x = loc + scale * d.shaped(z * sqrt(half / Gamma(d, half).value))
    return d.checked(x, (df > 0.0, SCIPY_DOMAIN.format(what="df must be > 0", dist="t")), scipy_scale(d, scale, "t"))


@random_op("RandomGenGamma")
def gengamma(d: Draws, alpha: Ex, p: Ex, lambd: Ex) -> Ex:
    """PyTensor's: SciPy's gengamma(a = alpha / p, c = p, scale = lambd), lambd G**(1/p) for a
    gamma G of shape alpha / p (in logs: no underflow of G for tiny shapes)."""
    a = alpha / p
    x = lambd * d.shaped(exp(Gamma(d, flat(d, a)).log / flat(d, p)))
    ok = (a > 0.0) & p.ne(0.0)
    return d.checked(x, (ok, SCIPY_DOMAIN.format(what="alpha / p must be > 0 and p != 0", dist="gengamma")),
                     scipy_scale(d, lambd, "gengamma"))


@random_op("RandomDirichlet")
def dirichlet(d: Draws, alphas: Ex) -> Ex:
    """Gammas of shapes `alphas` normalised along the last axis (in logs, shifted by their
    maximum); all 0 where every gamma is 0 (alphas of 0), as NumPy's."""
    last = d.shape.value.type.shape[0] - 1
    logs = d.shaped(Gamma(d, flat(d, alphas)).log)
    top = logs.op("ReduceMax", axes=(last,), keepdims=True)
    top = where(top.eq(-math.inf), 0.0, top)
    e = d.shaped(exp((logs - top).op("Reshape", vector(d))))
    # a running sum's last element: added in order on every runtime and level (a ReduceSum's order
    # is onnxruntime's, which changes with the layout its optimiser picks)
    starts, ends, steps = (Ex(e.scope, e.scope.constant(np.array([i], dtype=np.int64))) for i in (-1, np.iinfo(np.int64).max, 1))
    total = e.op("CumSum", axis=last).op("Slice", starts, ends, steps, axes=(last,))
    x = where(total.eq(0.0), 0.0, e / total)
    return d.checked(x, (at_least(alphas, 0.0), "alpha < 0"))


__all__ = ["Gamma", "flat", "non_negative", "vector", "beta", "dirichlet", "gamma", "gengamma", "invgamma", "student_t"]
