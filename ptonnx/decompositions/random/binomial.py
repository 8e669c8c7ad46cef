"""Binomial, beta-binomial and multinomial draws as IR `Loop`s, on vectors of the draws' elements.

A binomial of n trials of probability p draws with p' = min(p, 1 - p) (and gives n - k where
p > 1/2). Where n p' >= 10 it is Hörmann's (1993) BTRS transformed rejection (as TensorFlow's
and JAX's samplers), a rejection loop (`rejection.py`): from uniforms U, V, with
us = 1/2 - |U - 1/2|, the candidate k = floor((2 a / us + b)(U - 1/2) + c) is accepted at once
where us >= 0.07 and V <= vr, else where it lies in [0, n] and
log(V alpha / (a / us**2 + b)) is at most the log of the mass at k over the mass at the mode m
(Stirling's series for the factorials; its large terms taken as log1p's, without cancellation for
n in the billions and beyond). Below, it is inversion by sequential search from
p_0 = (1 - p')**n with p_k = p_(k-1) (n - k + 1) p' / (k (1 - p')) (`poisson.invert`), as
NumPy's `random_binomial_inversion`. n = 0 or p = 0 give 0, p = 1 gives n.

A beta-binomial (SciPy's betabinom) is a binomial of a beta probability (`gamma.beta`); a
multinomial is NumPy's conditional binomials over the categories, a `Loop` over them (each trip
a binomial's two loops).
"""

from __future__ import annotations

import numpy as np

from ptonnx.decompositions.expr import Ex, Scope, floor, sqrt, where
from ptonnx.decompositions.random import gamma as gamma_family
from ptonnx.decompositions.random.bits import lane_bits, unit
from ptonnx.decompositions.random.continuous import SCIPY_DOMAIN, random_op
from ptonnx.decompositions.random.draws import Draws, at_least
from ptonnx.decompositions.random.gamma import flat, vector
from ptonnx.decompositions.random.poisson import invert, stirling_tail
from ptonnx.decompositions.random.portable import exp, log, log1p
from ptonnx.decompositions.random.rejection import _enter, sampler_key, until_accepted, zeros
from ptonnx.ir import Builder, Graph, TensorType, Value

#: from this mean n min(p, 1 - p) on, binomial draws are by BTRS (else inversion)
BTRS_FROM = 10.0


def _log_ratio(k: Ex, big_p: Ex, q: Ex) -> Ex:
    """(k + 1/2) log(r (n - k + 1) / (k + 1)), r = p / q, as a log1p of
    (p (n + 2) - (k + 1)) / (q (k + 1)) (`big_p` = p (n + 2)): no cancellation for n in the billions."""
    return (k + 0.5) * log1p((big_p - (k + 1.0)) / (q * (k + 1.0)))


def _btrs(trip, params: list[Ex]) -> tuple[Ex, Ex]:
    n, m, big_p, q, a, b, c, vr, log_alpha, top = params
    u, v = trip.uniforms
    u = u - 0.5
    us = 0.5 - abs(u)
    k = floor((2.0 * a / us + b) * u + c)
    fast = (us >= 0.07) & (v <= vr)
    inside = (k >= 0.0) & (k <= n)
    kk = k.op("Max", 0.0).op("Min", n)
    rest = n - kk
    # (n + 1) log((n - m + 1) / (n - k + 1)) as a log1p
    bound = (top + (n + 1.0) * log1p((kk - m) / (rest + 1.0)) + _log_ratio(kk, big_p, q)
             - stirling_tail(kk) - stirling_tail(rest))
    slow = inside & (log(v, normal=True) + log_alpha - log(a / (us * us) + b) <= bound)
    return k, fast | slow


def _inversion_ratio(m: Ex, params: list[Ex]) -> Ex:
    n1, r = params
    return (n1 - m) * r / m


def binomial_vector(key: tuple[Ex, Ex], count: Ex, n: Ex, p: Ex, op: str) -> Ex:
    """Binomial draws (a float64 vector of `count`) of n trials (non-negative integers) of
    probability p (in [0, 1]), vectors of `count`, under the sampler key `key`: inversion's
    uniforms on its lane 0, BTRS's trips on lanes 1, 2, ..."""
    flip = p > 0.5
    q = where(flip, 1.0 - p, p)
    large = n * q >= BTRS_FROM
    # BTRS, with n = 20, p = 1/2 where it is not used
    nb, pb = where(large, n, 20.0), where(large, q, 0.5)
    spq = sqrt(nb * pb * (1.0 - pb))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * pb
    c = nb * pb + 0.5
    vr = 0.92 - 4.2 / b
    qb = 1.0 - pb
    big_p = pb * (nb + 2.0)
    log_alpha = log((2.83 + 5.1 / b) * spq)
    m = floor((nb + 1.0) * pb)
    top = stirling_tail(m) + stirling_tail(nb - m) - _log_ratio(m, big_p, qb)
    rejected = until_accepted(key, count, [nb, m, big_p, qb, a, b, c, vr, log_alpha, top], _btrs, normals=0, uniforms=2,
                              op=op, skip=large.op("Not"))
    # inversion, with n = 0 where it is not used
    ni, qi = where(large, 0.0, n), where(large, 0.0, q)
    u = unit(lane_bits(key, 0, count))
    searched = invert(u, exp(ni * log1p(-qi)), _inversion_ratio, [ni + 1.0, qi / (1.0 - qi)]).op("Min", ni)
    k = where(large, rejected, searched)
    return where(flip, n - k, k)


def _ints(like: Ex, value: int) -> Ex:
    """[value], an int64 vector."""
    return Ex(like.scope, like.scope.constant(np.array([value], dtype=np.int64)))


def _valid_p(p: Ex) -> Ex:
    return (p >= 0.0) & (p <= 1.0)


@random_op("RandomBinomial")
def binomial(d: Draws, n: Ex, p: Ex) -> Ex:
    """NumPy's binomial (see the module doc); it refuses n < 0 and p outside [0, 1] (NaN too)."""
    nn, pp = flat(d, n), flat(d, p)
    ok = (nn >= 0.0) & _valid_p(pp)
    x = binomial_vector(sampler_key(d.key, 0), d.n, where(ok, nn, 0.0), where(ok, pp, 0.0), d.op)
    return d.checked(d.shaped(x), (at_least(n, 0.0), "n < 0"), (_valid_p(p), "p < 0, p > 1 or p is NaN"))


@random_op("RandomBetaBinomial")
def beta_binomial(d: Draws, n: Ex, a: Ex, b: Ex) -> Ex:
    """SciPy's betabinom: a binomial of n trials of a probability drawn from beta(a, b); SciPy
    refuses a <= 0, b <= 0 and n negative or not an integer (NaN too)."""
    ok_ab = (a > 0.0) & (b > 0.0)
    ok_n = (n >= 0.0) & floor(n).eq(n)
    nn = flat(d, where(ok_n, n, 0.0))
    p = gamma_family.beta(d, where(ok_ab, a, 1.0), where(ok_ab, b, 1.0)).op("Reshape", vector(d))
    x = binomial_vector(sampler_key(d.key, 2), d.n, nn, p, d.op)
    return d.checked(d.shaped(x), (ok_ab & ok_n, SCIPY_DOMAIN.format(what="n must be a non-negative integer, a > 0, b > 0",
                                                                      dist="betabinom")))


def _by_categories(d: Draws, count: Ex, trials: Ex, probs: Ex, categories: Ex) -> tuple[Ex, Ex]:
    """A `Loop` over the categories but the last, j = 0 .. K - 2: the trials left (`trials`, a vector
    of `count`) give x_j, a binomial of probability p_j / (what is left of 1) (`probs`: a (count, K)
    matrix), drawn under the op's sampler key j. Returns the draws (K - 1, count) and the trials left."""
    outer = count.scope
    body = Graph("multinomial_body")
    scope = Scope(Builder(body, source=outer.builder.source))
    trip = body.add_input(TensorType("int64", ()), "trip")
    left = Ex(scope, body.add_input(trials.value.type, "left"))
    remaining = Ex(scope, body.add_input(trials.value.type, "remaining"))
    fixed: list = []
    key = tuple(_enter(scope, body, k, f"key{i}", fixed) for i, k in enumerate(d.key))
    inner_count, inner_probs = (_enter(scope, body, v, name, fixed) for v, name in ((count, "count"), (probs, "probs")))
    j = Ex(scope, trip)
    pj = inner_probs.op("Gather", j, axis=1)
    share = where(remaining > 0.0, (pj / remaining).op("Min", 1.0).op("Max", 0.0), 1.0)
    share = where(share.isnan(), 0.0, share)
    x = binomial_vector(sampler_key(key, j.cast("uint32")), inner_count, left, share, d.op)
    body.inputs = [trip, left.value, remaining.value, *(inner for inner, _ in fixed)]
    body.set_outputs([(j >= 0).value, (left - x).value, (remaining - pj).value, x.value])
    trips = (categories - 1).op("Max", 0)
    start = trials * 0.0 + 1.0
    loop = outer.builder.node("Loop", [trips.value, Value.constant(np.asarray(True)), trials.value, start.value, *(v for _, v in fixed)],
                              dict(body=body, n_carried=2, n_scan=1))
    final, _, draws = (Ex(outer, v) for v in loop.outputs)
    return draws, final


@random_op("RandomMultinomial")
def multinomial(d: Draws, n: Ex, p: Ex) -> Ex:
    """NumPy's multinomial: for each category j but the last, x_j a binomial of the trials left of
    probability p_j / (1 - p_0 - ... - p_(j-1)) (clipped to [0, 1]); the last takes the trials left
    (a `Loop` over the categories, `_by_categories`). NumPy refuses n < 0, p outside [0, 1] (NaN
    too) and p[:-1] summing above 1 + 1e-12."""
    last = d.shape.value.type.shape[0] - 1
    axis = p.value.type.ndim - 1
    categories = d.shape.op("Gather", Ex(d.shape.scope, d.shape.scope.scalar(last, "int64")), axis=0)
    batch_shape = d.shape.op("Slice", _ints(d.shape, 0), _ints(d.shape, last), _ints(d.shape, 1), axes=(0,))
    count = d.n.op("IntDiv", categories.op("Max", 1))
    rows = zeros(count).op("Reshape", batch_shape)
    trials = (n + rows).op("Reshape", count.op("Unsqueeze", axes=(0,)))
    probs = (p + zeros(d.n).op("Reshape", d.shape)).op("Reshape", count.op("Unsqueeze", axes=(0,)).op(
        "Concat", categories.op("Unsqueeze", axes=(0,)), axis=0))
    draws, left = _by_categories(d, count, where(trials >= 0.0, trials, 0.0), probs, categories)
    x = draws.op("Transpose", perm=(1, 0)).op("Concat", left.op("Unsqueeze", axes=(1,)), axis=1).op("Reshape", d.shape)
    head = p.op("Slice", _ints(p, 0), _ints(p, -1), _ints(p, 1), axes=(axis,))
    valid = _valid_p(p).op("Not").op("ReduceAny", axes=tuple(range(p.value.type.ndim))).op("Not")
    return d.checked(x, (at_least(n, 0.0), "n < 0"), (valid, "pvals < 0, pvals > 1 or pvals contains NaNs"),
                     ((head.op("ReduceSum", axes=(axis,), keepdims=False) > 1.0 + 1e-12).op("Not"), "sum(pvals[:-1]) > 1.0"))


__all__ = ["BTRS_FROM", "beta_binomial", "binomial", "binomial_vector", "multinomial"]
