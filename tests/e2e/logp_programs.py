"""PyMC-style log-densities written in pure PyTensor (PyMC's formulas), so they run without PyMC.

Kept from the op survey's corpus (audit/op_survey.py, removed): each is a scalar
log-density of data and parameters, with the constrained parameters given through
PyMC's transforms (log, simplex, ordered, interval) and their log-Jacobians, and
PyMC's `check_parameters` as a `CheckAndRaise`. Their gradients bring in what the
array programs elsewhere do not in one graph: scatter-adds into a matrix of 2-D
gathers, `take_along_axis`, `cumsum` and `concatenate` of transformed parameters,
`switch` to -inf, gammaln/erfcx/log1mexp/logaddexp.

`PROGRAMS[name]` holds the builder (returns the inputs and the log-density), the
names of the inputs to differentiate (the parameters, as PyMC does), and the values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytensor.tensor as pt
from pytensor.raise_op import CheckAndRaise

LOG_2PI = 1.8378770664093453
PI = 3.141592653589793


@dataclass(frozen=True)
class Program:
    build: Callable[[], tuple[list, object]]
    wrt: tuple[str, ...]
    values: dict[str, np.ndarray]

    def arrays(self, inputs) -> list[np.ndarray]:
        return [self.values[v.name] for v in inputs]


PROGRAMS: dict[str, Program] = {}
_rng = np.random.default_rng(0)


def program(wrt: str, **values):
    def register(build):
        PROGRAMS[build.__name__] = Program(build, tuple(wrt.split()), {k: np.asarray(v) for k, v in values.items()})
        return build

    return register


def _normal(*shape):
    return _rng.normal(size=shape)


def _ints(high, n):
    return _rng.integers(0, high, size=n).astype(np.int64)


# ---- PyMC's formulas ------------------------------------------------------------------
def normal_logp(value, mu, sigma):
    return -0.5 * pt.sqr((value - mu) / sigma) - pt.log(sigma) - 0.5 * LOG_2PI


def halfnormal_logp(value, sigma):
    return 0.5 * pt.log(2.0 / PI) - pt.log(sigma) - 0.5 * pt.sqr(value / sigma)


def check_parameters(logp, *conditions):
    """PyMC's check_parameters: CheckParameterValue is a CheckAndRaise."""
    cond = pt.all([pt.all(c) for c in conditions]) if len(conditions) > 1 else pt.all(conditions[0])
    return CheckAndRaise(ValueError, "parameter constraint violated")(logp, cond)


def logpow(x, m):
    return pt.switch(pt.and_(pt.eq(x, 0), pt.eq(m, 0)), 0.0, m * pt.log(pt.switch(pt.eq(x, 0), 1.0, x)))


def poisson_logp(value, mu):
    res = logpow(mu, value) - pt.gammaln(value + 1) - mu
    res = pt.switch(pt.lt(value, 0), -pt.inf, res)
    return check_parameters(res, mu >= 0)


def log_transformed(log_s):
    """A positive parameter through PyMC's log transform: value and log-Jacobian."""
    return pt.exp(log_s), log_s


def simplex_backward(value):
    """PyMC's SimplexTransform: unconstrained (k-1) -> simplex (k), and its log-Jacobian."""
    full = pt.concatenate([value, -pt.sum(value, -1, keepdims=True)], axis=-1)
    e = pt.exp(full - pt.max(full, -1, keepdims=True))
    simplex = e / pt.sum(e, -1, keepdims=True)
    N = value.shape[-1] + 1
    sum_value = pt.sum(value, -1, keepdims=True)
    expanded = pt.concatenate([value + sum_value, pt.zeros(sum_value.shape)], axis=-1)
    lse = pt.logsumexp(expanded, -1, keepdims=True)
    jac = pt.sum(pt.log(N) + N * sum_value - N * lse, -1)
    return simplex, jac


# ---- the programs ---------------------------------------------------------------------
@program("mu log_sigma log_nu", y=_normal(6), mu=-0.1, log_sigma=0.4, log_nu=1.2)
def studentt():
    y, mu, log_sigma, log_nu = pt.vector("y"), pt.scalar("mu"), pt.scalar("log_sigma"), pt.scalar("log_nu")
    sigma, j1 = log_transformed(log_sigma)
    nu, j2 = log_transformed(log_nu)
    lam = 1.0 / sigma**2
    logp = (
        pt.gammaln((nu + 1.0) / 2.0) + 0.5 * pt.log(lam / (nu * PI)) - pt.gammaln(nu / 2.0)
        - (nu + 1.0) / 2.0 * pt.log1p(lam * (y - mu) ** 2 / nu)
    )
    total = check_parameters(logp, lam > 0, nu > 0).sum() + j1 + j2
    total += -nu / 10.0 - pt.log(10.0)  # Exponential(0.1) prior on nu
    return [y, mu, log_sigma, log_nu], total


@program("alpha beta", X=_normal(6, 3), y=_ints(2, 6), alpha=0.5, beta=_normal(3))
def bernoulli_logit_glm():
    X, y, alpha, beta = pt.matrix("X"), pt.lvector("y"), pt.scalar("alpha"), pt.vector("beta")
    logit_p = alpha + pt.dot(X, beta)
    logp = pt.switch(y, -pt.softplus(-logit_p), -pt.softplus(logit_p))
    logp = pt.switch(pt.or_(pt.lt(y, 0), pt.gt(y, 1)), -pt.inf, logp)
    total = logp.sum() + normal_logp(beta, 0.0, 2.5).sum() + normal_logp(alpha, 0.0, 10.0)
    return [X, y, alpha, beta], total


@program("beta", X=_normal(6, 3), y=np.array([0, 3, 1, 0, 7, 2]), beta=0.3 * _normal(3))
def poisson_glm():
    X, y, beta = pt.matrix("X"), pt.lvector("y"), pt.vector("beta")
    mu = pt.exp(X @ beta)
    total = poisson_logp(y, mu).sum() + normal_logp(beta, 0.0, 1.0).sum()
    return [X, y, beta], total


@program("mu log_tau theta log_sigma", y=_normal(8), group_idx=_ints(2, 8), county_idx=_ints(3, 8),
         mu=-0.3, log_tau=0.2, theta=_normal(2, 3), log_sigma=-0.1)
def hierarchical_centered_2d():
    y, group_idx, county_idx = pt.vector("y"), pt.lvector("group_idx"), pt.lvector("county_idx")
    mu, log_tau, theta, log_sigma = pt.scalar("mu"), pt.scalar("log_tau"), pt.matrix("theta"), pt.scalar("log_sigma")
    tau, j1 = log_transformed(log_tau)
    sigma, j2 = log_transformed(log_sigma)
    total = (
        normal_logp(theta, mu, tau).sum() + normal_logp(y, theta[group_idx, county_idx], sigma).sum()
        + normal_logp(mu, 0.0, 5.0) + halfnormal_logp(tau, 5.0) + halfnormal_logp(sigma, 5.0) + j1 + j2
    )
    return [y, group_idx, county_idx, mu, log_tau, theta, log_sigma], total


@program("w_raw mu log_sigma", y=_normal(8), w_raw=_normal(2), mu=_normal(3), log_sigma=0.3 * _normal(3))
def mixture_normal():
    y, w_raw, mu, log_sigma = pt.vector("y"), pt.vector("w_raw"), pt.vector("mu"), pt.vector("log_sigma")
    w, j1 = simplex_backward(w_raw)
    sigma, j2 = pt.exp(log_sigma), log_sigma.sum()
    comp = normal_logp(y[:, None], mu[None, :], sigma[None, :])
    logp = pt.logsumexp(pt.log(w)[None, :] + comp, axis=-1).sum()
    total = logp + normal_logp(mu, 0.0, 10.0).sum() + halfnormal_logp(sigma, 2.0).sum() + j1 + j2
    return [y, w_raw, mu, log_sigma], total


@program("p_raw", y=_ints(3, 8), a=np.array([1.0, 2.5, 0.7]), p_raw=_normal(2))
def dirichlet_categorical():
    y, a, p_raw = pt.lvector("y"), pt.vector("a"), pt.vector("p_raw")
    p, jac = simplex_backward(p_raw)
    dirichlet = pt.sum(logpow(p, a - 1) - pt.gammaln(a), -1) + pt.gammaln(pt.sum(a, -1))
    k = p.shape[-1]
    p = p / pt.sum(p, -1, keepdims=True)
    value_clip = pt.clip(y, 0, k - 1)
    categorical = pt.switch(pt.or_(pt.lt(y, 0), pt.gt(y, k - 1)), -pt.inf, pt.log(p[value_clip]))
    total = check_parameters(categorical, 0 <= p, p <= 1).sum() + dirichlet + jac
    return [y, a, p_raw], total


@program("beta c_raw", X=_normal(6, 2), y=_ints(4, 6), beta=_normal(2), c_raw=np.array([-1.0, 0.2, -0.4]))
def ordered_logistic():
    X, y, beta, c_raw = pt.matrix("X"), pt.lvector("y"), pt.vector("beta"), pt.vector("c_raw")
    # PyMC's ordered transform: backward is cumsum of (first, exp(rest)); log-Jacobian sum(rest)
    x = pt.zeros(c_raw.shape)
    x = pt.inc_subtensor(x[..., 0], c_raw[..., 0])
    x = pt.inc_subtensor(x[..., 1:], pt.exp(c_raw[..., 1:]))
    cutpoints = pt.cumsum(x, axis=-1)
    jac = pt.sum(c_raw[..., 1:], axis=-1)
    eta = X @ beta
    pa = pt.sigmoid(cutpoints[None, :] - eta[:, None])
    p_cum = pt.concatenate([pt.zeros_like(pa[:, :1]), pa, pt.ones_like(pa[:, :1])], axis=-1)
    p = p_cum[..., 1:] - p_cum[..., :-1]
    logp = pt.log(pt.take_along_axis(p, y[:, None], axis=-1)).sum()
    total = logp + normal_logp(beta, 0.0, 1.0).sum() + normal_logp(cutpoints, 0.0, 5.0).sum() + jac
    return [X, y, beta, c_raw], total


@program("x phi_raw log_sigma", x=_normal(8), phi_raw=0.4, log_sigma=-0.3)
def ar1():
    x, phi_raw, log_sigma = pt.vector("x"), pt.scalar("phi_raw"), pt.scalar("log_sigma")
    # phi in (-1, 1) through PyMC's interval transform
    phi = -1.0 + 2.0 * pt.sigmoid(phi_raw)
    j1 = pt.log(2.0) + pt.log(pt.sigmoid(phi_raw)) + pt.log(pt.sigmoid(-phi_raw))
    sigma, j2 = log_transformed(log_sigma)
    innov = x[1:] - phi * x[:-1]
    init = normal_logp(x[0], 0.0, sigma / pt.sqrt(1 - phi**2))
    total = init + normal_logp(innov, 0.0, sigma).sum() + halfnormal_logp(sigma, 1.0) + j1 + j2
    return [x, phi_raw, log_sigma], total


@program("psi_raw log_mu", y=np.array([0, 0, 3, 1, 0, 5, 2, 0]), psi_raw=0.6, log_mu=0.9)
def zero_inflated_poisson():
    y, psi_raw, log_mu = pt.lvector("y"), pt.scalar("psi_raw"), pt.scalar("log_mu")
    psi = pt.sigmoid(psi_raw)
    jac = pt.log(psi) + pt.log1p(-psi)
    mu = pt.exp(log_mu)
    pois = poisson_logp(y, mu)
    logp = pt.switch(pt.eq(y, 0), pt.logaddexp(pt.log1p(-psi), pt.log(psi) + pois), pt.log(psi) + pois)
    total = logp.sum() + jac + log_mu + normal_logp(log_mu, 0.0, 1.0)
    return [y, psi_raw, log_mu], total


@program("mu log_sigma", y=np.minimum(_normal(8), 0.5), upper=0.5, mu=4.0, log_sigma=-0.5)
def censored_normal():
    """mu far above the censoring point: the normal lcdf's erfcx branch (z < -1)."""
    y, upper, mu, log_sigma = pt.vector("y"), pt.scalar("upper"), pt.scalar("mu"), pt.scalar("log_sigma")
    sigma, jac = log_transformed(log_sigma)

    def normal_lcdf(x):  # PyMC's
        z = (x - mu) / sigma
        return pt.switch(
            pt.lt(z, -1.0),
            pt.log(pt.erfcx(-z / pt.sqrt(2.0)) / 2.0) - pt.sqr(z) / 2.0,
            pt.log1p(-pt.erfc(z / pt.sqrt(2.0)) / 2.0),
        )

    log_sf = pt.log1mexp(normal_lcdf(upper))
    logp = pt.switch(pt.ge(y, upper), log_sf, normal_logp(y, mu, sigma))
    return [y, upper, mu, log_sigma], logp.sum() + normal_logp(mu, 0.0, 10.0) + jac
