"""Von Mises draws: NumPy's `random_vonmises`, Best and Fisher's (1979) rejection sampler as a
rejection loop (`rejection.py`), on vectors of the draws' elements (`gamma.flat`).

For 1e-8 <= kappa <= 1e6, with s = (1 + rho**2) / (2 rho), rho = (r - sqrt(2 r)) / (2 kappa),
r = 1 + sqrt(1 + 4 kappa**2) (s = 1 / kappa + kappa below kappa = 1e-5, where rho rounds to
0): draw uniforms U, V; Z = cos(pi U), W = (1 + s Z) / (s + Z), Y = kappa (s - W); accept
where Y (2 - Y) >= V or log(Y / V) + 1 >= Y (at least 0.65 of the draws on each trip). The
angle is +-acos(W) (the sign from a third uniform) plus mu, folded into [-pi, pi] by fmod
keeping its sign. Below kappa = 1e-8 it is uniform on [-pi, pi); above 1e6 a wrapped normal
mu + z / sqrt(kappa), moved by 2 pi at most once (NumPy's); NaN kappa gives NaN.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, fmod, select, sqrt, where
from ptonnx.decompositions.random.continuous import random_op
from ptonnx.decompositions.random.draws import Draws
from ptonnx.decompositions.random.gamma import flat, non_negative, vector
from ptonnx.decompositions.random.portable import acos, log, sincos_pi
from ptonnx.decompositions.random.rejection import Trip, sampler_key, until_accepted

#: below this kappa, draws are uniform; above HUGE a wrapped normal (NumPy's thresholds)
TINY, SMALL, HUGE = 1e-8, 1e-5, 1e6


def _best_fisher(trip: Trip, params: list[Ex]) -> tuple[Ex, Ex]:
    kappa, s = params
    u, v = trip.uniforms
    _, z = sincos_pi(u)  # cos(pi u)
    w = (1.0 + s * z) / (s + z)
    y = kappa * (s - w)
    accept = ((y * (2.0 - y) - v) >= 0.0) | ((log(y / v) + 1.0 - y) >= 0.0)
    return w, accept


@random_op("RandomVonMises")
def vonmises(d: Draws, mu: Ex, kappa: Ex) -> Ex:
    """NumPy's vonmises (see the module doc)."""
    m, k = flat(d, mu), flat(d, kappa)
    rejecting = (k >= TINY) & (k <= HUGE)
    k_ = where(rejecting, k, 1.0)
    r = 1.0 + sqrt(1.0 + 4.0 * k_ * k_)
    rho = (r - sqrt(2.0 * r)) / (2.0 * k_)
    s = where(k_ < SMALL, 1.0 / k_ + k_, (1.0 + rho * rho) / (2.0 * rho))
    w = until_accepted(sampler_key(d.key, 0), d.n, [k_, s], _best_fisher,
                       normals=0, uniforms=2, op=d.op)
    angle = acos(where(w > 1.0, 1.0, where(w < -1.0, -1.0, w)))
    u = d.unit().op("Reshape", vector(d))
    x = where(u < 0.5, -angle, angle) + m
    folded = fmod(abs(x) + math.pi, 2 * math.pi) - math.pi
    folded = where(x < 0.0, -folded, folded)
    z = d.normal().op("Reshape", vector(d))
    wrapped = m + sqrt(1.0 / k) * z
    wrapped = where(wrapped < -math.pi, wrapped + 2 * math.pi, wrapped)
    wrapped = where(wrapped > math.pi, wrapped - 2 * math.pi, wrapped)
    x = select((k.isnan(), math.nan), (k < TINY, (2.0 * u - 1.0) * math.pi), (k > HUGE, wrapped), otherwise=folded)
    return d.checked(d.shaped(x), (non_negative(kappa), "kappa < 0"))


__all__ = ["vonmises"]
