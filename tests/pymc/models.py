"""PyMC models of the kinds users write, each built fresh (set_data changes a model) on seeded data
of n observations (100 in the tests; benchmarks/pymc_models.py also times 10,000)."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt

from tests.pymc.statespace_models import level_trend_measurement_error, sarimax_arma11


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def linear_regression(n: int = 100) -> pm.Model:
    """Normal likelihood; x and y in pm.Data (set_data), the mean a Deterministic."""
    rng = _rng(1)
    x = rng.normal(size=n)
    y = 1.0 + 2.0 * x + rng.normal(scale=0.5, size=n)
    with pm.Model() as model:
        x_data = pm.Data("x", x)
        y_data = pm.Data("y", y)
        intercept = pm.Normal("intercept", 0, 10)
        slope = pm.Normal("slope", 0, 10)
        sigma = pm.HalfNormal("sigma", 2)
        mu = pm.Deterministic("mu", intercept + slope * x_data)
        pm.Normal("obs", mu, sigma, observed=y_data, shape=x_data.shape)
    return model


def robust_regression(n: int = 100) -> pm.Model:
    """StudentT likelihood with a Gamma prior on its degrees of freedom."""
    rng = _rng(2)
    x = rng.normal(size=n)
    y = 0.5 - x + rng.standard_t(3, size=n)
    with pm.Model() as model:
        beta = pm.Normal("beta", 0, 5, shape=2)
        sigma = pm.HalfCauchy("sigma", 1)
        nu = pm.Gamma("nu", alpha=2, beta=0.1)
        pm.StudentT("obs", nu=nu, mu=beta[0] + beta[1] * x, sigma=sigma, observed=y)
    return model


def logistic_regression(n: int = 100) -> pm.Model:
    """Bernoulli with a logit link; the design matrix in pm.Data, the probabilities a Deterministic."""
    rng = _rng(3)
    X = rng.normal(size=(n, 3))
    y = rng.binomial(1, 1 / (1 + np.exp(-(X @ [1.0, -2.0, 0.5]))))
    with pm.Model(coords={"feature": ["a", "b", "c"]}) as model:
        X_data = pm.Data("X", X)
        alpha = pm.Normal("alpha", 0, 2)
        beta = pm.Normal("beta", 0, 2, dims="feature")
        logit_p = alpha + X_data @ beta
        pm.Deterministic("p", pm.math.invlogit(logit_p))
        pm.Bernoulli("obs", logit_p=logit_p, observed=y)
    return model


def poisson_regression(n: int = 100) -> pm.Model:
    """Poisson counts with a log link."""
    rng = _rng(4)
    x = rng.uniform(-1, 1, size=n)
    y = rng.poisson(np.exp(0.5 + 1.2 * x))
    with pm.Model() as model:
        a = pm.Normal("a", 0, 2)
        b = pm.Normal("b", 0, 2)
        pm.Poisson("obs", mu=pm.math.exp(a + b * x), observed=y)
    return model


def negative_binomial(n: int = 100) -> pm.Model:
    """Overdispersed counts: NegativeBinomial(mu, alpha)."""
    rng = _rng(5)
    x = rng.uniform(-1, 1, size=n)
    y = rng.negative_binomial(5, 5 / (5 + np.exp(1 + x)))
    with pm.Model() as model:
        a = pm.Normal("a", 0, 2)
        b = pm.Normal("b", 0, 2)
        alpha = pm.Exponential("alpha", 0.2)
        pm.NegativeBinomial("obs", mu=pm.math.exp(a + b * x), alpha=alpha, observed=y)
    return model


def hierarchical(n: int = 100) -> pm.Model:
    """Radon-style varying intercepts, non-centred, indexed by group; the group means a Deterministic."""
    rng = _rng(6)
    n_groups = 8
    group = rng.integers(0, n_groups, size=n)
    x = rng.integers(0, 2, size=n).astype(float)
    y = rng.normal(size=n_groups)[group] - 0.6 * x + rng.normal(scale=0.3, size=n)
    with pm.Model(coords={"group": np.arange(n_groups)}) as model:
        group_idx = pm.Data("group_idx", group)
        mu_a = pm.Normal("mu_a", 0, 5)
        sigma_a = pm.HalfNormal("sigma_a", 2)
        z = pm.Normal("z", 0, 1, dims="group")
        a = pm.Deterministic("a", mu_a + sigma_a * z, dims="group")
        b = pm.Normal("b", 0, 2)
        sigma = pm.Exponential("sigma", 1)
        pm.Normal("obs", a[group_idx] + b * x, sigma, observed=y)
    return model


def eight_schools(n: int = 8) -> pm.Model:
    """The centred eight schools: HalfCauchy group scale, known observation errors
    (n schools: the classic data for 8, synthetic schools like them otherwise)."""
    y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    if n != len(y):
        rng = _rng(7)
        sigma = rng.uniform(9.0, 18.0, size=n)
        y = rng.normal(8.0, 6.0, size=n) + rng.normal(0.0, sigma)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfCauchy("tau", 5)
        theta = pm.Normal("theta", mu, tau, shape=n)
        pm.Normal("obs", theta, sigma, observed=y)
    return model


def mixture(n: int = 100) -> pm.Model:
    """A two-component Gaussian mixture: Dirichlet weights, ordered means (pm.NormalMixture)."""
    rng = _rng(8)
    y = np.concatenate([rng.normal(-2, 0.7, size=n - 2 * n // 5), rng.normal(2, 1.0, size=2 * n // 5)])
    with pm.Model() as model:
        w = pm.Dirichlet("w", a=np.ones(2))
        mu = pm.Normal("mu", 0, 5, shape=2, transform=pm.distributions.transforms.ordered, initval=[-1.0, 1.0])
        sigma = pm.HalfNormal("sigma", 2, shape=2)
        pm.NormalMixture("obs", w=w, mu=mu, sigma=sigma, observed=y)
    return model


def dirichlet_categorical(n: int = 100) -> pm.Model:
    """Categorical outcomes with a Dirichlet prior on the probabilities."""
    rng = _rng(9)
    y = rng.choice(4, p=[0.1, 0.2, 0.3, 0.4], size=n)
    with pm.Model() as model:
        p = pm.Dirichlet("p", a=np.ones(4))
        pm.Categorical("obs", p=p, observed=y)
    return model


def ordered_logistic(n: int = 100) -> pm.Model:
    """An ordered outcome (5 levels): OrderedLogistic with ordered cutpoints."""
    rng = _rng(10)
    x = rng.normal(size=n)
    latent = 1.5 * x + rng.logistic(size=n)
    y = np.digitize(latent, [-2.0, -0.5, 0.5, 2.0])
    with pm.Model() as model:
        beta = pm.Normal("beta", 0, 2)
        cutpoints = pm.Normal(
            "cutpoints", 0, 5, shape=4, transform=pm.distributions.transforms.ordered, initval=[-2.0, -1.0, 1.0, 2.0]
        )
        pm.OrderedLogistic("obs", eta=beta * x, cutpoints=cutpoints, observed=y)
    return model


def time_series(n: int = 100) -> pm.Model:
    """An AR(1) series (pm.AR) observed, and a latent Gaussian random walk under noisy observations."""
    rng = _rng(11)
    ar = np.zeros(n)
    for t in range(1, n):
        ar[t] = 0.7 * ar[t - 1] + rng.normal(scale=0.5)
    walk = np.cumsum(rng.normal(scale=0.3, size=n // 2))
    with pm.Model() as model:
        rho = pm.Uniform("rho", -1, 1)
        sigma = pm.HalfNormal("sigma", 1)
        pm.AR("ar", rho=[rho], sigma=sigma, init_dist=pm.Normal.dist(0, 1), observed=ar)
        step = pm.HalfNormal("step", 1)
        latent = pm.GaussianRandomWalk("latent", sigma=step, init_dist=pm.Normal.dist(0, 1), steps=n // 2 - 1)
        pm.Normal("walk_obs", latent, 0.3, observed=walk)
        pm.Deterministic("latent_diff", latent[1:] - latent[:-1])
    return model


def zero_inflated(n: int = 100) -> pm.Model:
    """Zero-inflated Poisson counts (a mixture with a point mass), a Beta prior on the zero share."""
    rng = _rng(12)
    y = np.where(rng.uniform(size=n) < 0.3, 0, rng.poisson(3.0, size=n))
    with pm.Model() as model:
        psi = pm.Beta("psi", 2, 2)
        rate = pm.Gamma("rate", 2, 0.5)
        pm.ZeroInflatedPoisson("obs", psi=psi, mu=rate, observed=y)
    return model


def potential_lognormal(n: int = 100) -> pm.Model:
    """A LogNormal likelihood plus a Potential (a soft constraint) and a Deterministic of two variables."""
    rng = _rng(13)
    y = rng.lognormal(0.3, 0.6, size=n)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 1)
        sigma = pm.InverseGamma("sigma", 3, 1)
        pm.Potential("soft_mu", -0.5 * (mu / 0.5) ** 2)
        pm.LogNormal("obs", mu, sigma, observed=y)
        pm.Deterministic("median", pm.math.exp(mu) + 0 * sigma)
    return model


def scan_custom_dist(n: int = 100) -> pm.Model:
    """A CustomDist whose `dist` is a scan (an AR(1) series built step by step, as PyMC's docs
    build time series from a generative graph): PyMC derives its logp, a scan of Normal logps."""
    from pymc.pytensorf import collect_default_updates

    rng = _rng(16)
    y = np.zeros(n)
    for t in range(1, n):
        y[t] = 0.6 * y[t - 1] + rng.normal(scale=0.4)

    def ar_dist(init, rho, sigma, size):
        def step(previous, rho_, sigma_):
            new = previous * rho_ + pm.Normal.dist(sigma=sigma_)
            return new, collect_default_updates([new])

        series, _ = pytensor.scan(step, outputs_info=[init], non_sequences=[rho, sigma], n_steps=n - 1, strict=True, return_updates=True)
        return series

    with pm.Model() as model:
        rho = pm.Uniform("rho", -1, 1)
        sigma = pm.HalfNormal("sigma", 1)
        init = pm.Normal("init", 0, 1)
        pm.CustomDist("series", init, rho, sigma, dist=ar_dist, observed=y[1:])
    return model


def kalman_local_trend(n: int = 100) -> pm.Model:
    """A local linear trend state-space model: the Kalman filter's log-likelihood as a scan
    carrying a 2-vector mean and a 2x2 covariance (a pm.Potential), as pymc-extras builds it."""
    rng = _rng(17)
    level, slope, ys = 0.0, 0.1, []
    for _ in range(n):
        slope += rng.normal(scale=0.05)
        level += slope + rng.normal(scale=0.2)
        ys.append(level + rng.normal(scale=0.5))
    T = np.array([[1.0, 1.0], [0.0, 1.0]])
    Z = np.array([1.0, 0.0])
    with pm.Model() as model:
        sigma_level = pm.HalfNormal("sigma_level", 1)
        sigma_slope = pm.HalfNormal("sigma_slope", 1)
        sigma_obs = pm.HalfNormal("sigma_obs", 1)
        Q = pt.diag(pt.stack([sigma_level**2, sigma_slope**2]))

        def step(y, m, P, Q_, r):
            m_pred, P_pred = pt.dot(T, m), pt.dot(pt.dot(T, P), T.T) + Q_
            S = pt.dot(Z, pt.dot(P_pred, Z)) + r
            K = pt.dot(P_pred, Z) / S
            v = y - pt.dot(Z, m_pred)
            ll = -0.5 * (pt.log(2 * np.pi * S) + v**2 / S)
            return m_pred + K * v, P_pred - pt.outer(K, K) * S, ll

        (_, _, lls) = pytensor.scan(step, sequences=[pt.as_tensor(np.array(ys))], outputs_info=[pt.zeros(2), pt.eye(2) * 10.0, None],
                                    non_sequences=[Q, sigma_obs**2], return_updates=False)
        pm.Potential("kalman_loglik", lls.sum())
    return model


def censored_regression(n: int = 100) -> pm.Model:
    """A normal regression whose observations are censored above (a detection limit): pm.Censored,
    whose log-density needs the normal's log survival function (erfc) of free parameters."""
    rng = _rng(18)
    x = rng.normal(size=n)
    y = np.minimum(1.0 + 0.8 * x + rng.normal(scale=0.7, size=n), 1.5)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 2)
        b = pm.Normal("b", 0, 2)
        sigma = pm.HalfNormal("sigma", 1)
        pm.Censored("obs", pm.Normal.dist(a + b * x, sigma), lower=None, upper=1.5, observed=y)
    return model


def bg_nbd(n: int = 100) -> pm.Model:
    """A BG/NBD customer model (Fader, Hardie and Lee 2005, as pymc-marketing's CLV module writes
    it): purchase counts x, recency t_x and age T per customer; its log-likelihood takes
    `gammaln` and `betaln` of the free parameters r, alpha, a, b."""
    from pytensor.tensor.special import betaln

    rng = _rng(19)
    age = rng.uniform(20.0, 40.0, size=n)
    x = rng.poisson(rng.gamma(0.5, 1.0, size=n) * age * rng.binomial(1, 0.6, size=n))
    recency = np.where(x > 0, age * rng.uniform(0.3, 1.0, size=n), 0.0)
    with pm.Model() as model:
        r = pm.Gamma("r", 2, 2)
        alpha = pm.HalfNormal("alpha", 10)
        a = pm.Gamma("a", 2, 2)
        b = pm.Gamma("b", 2, 2)
        a1 = pt.gammaln(r + x) - pt.gammaln(r) + r * pt.log(alpha)
        a2 = betaln(a, b + x) - betaln(a, b)
        a3 = -(r + x) * pt.log(alpha + age)
        a4 = pt.log(a) - pt.log(pt.maximum(b + x - 1, 1e-300)) - (r + x) * pt.log(alpha + recency)
        loglik = a1 + a2 + pt.switch(x > 0, pt.logaddexp(a3, a4), a3)
        pm.Potential("bg_nbd_loglik", loglik.sum())
    return model


def gp_marginal(n: int = 30) -> pm.Model:
    """A Gaussian process regression (pm.gp.Marginal, ExpQuad kernel): its log-density is a
    Cholesky factor of the n x n covariance and triangular solves against it."""
    rng = _rng(20)
    x = np.linspace(0.0, 10.0, n)[:, None]
    y = np.sin(x[:, 0]) + rng.normal(scale=0.2, size=n)
    with pm.Model() as model:
        ell = pm.Gamma("ell", 2, 1)
        eta = pm.HalfNormal("eta", 1)
        sigma = pm.HalfNormal("sigma", 1)
        gp = pm.gp.Marginal(cov_func=eta**2 * pm.gp.cov.ExpQuad(1, ell))
        gp.marginal_likelihood("y", X=x, y=y, sigma=sigma)
    return model


def lkj_mvnormal(n: int = 100) -> pm.Model:
    """Correlated 3-D observations: an LKJCholeskyCov prior on the covariance's Cholesky factor,
    MvNormal(mu, chol) likelihood (triangular solves, and the factor's log-diagonal)."""
    rng = _rng(21)
    cov = np.array([[1.0, 0.5, 0.2], [0.5, 2.0, -0.3], [0.2, -0.3, 0.5]])
    obs = rng.multivariate_normal([0.5, -1.0, 2.0], cov, size=n)
    with pm.Model() as model:
        chol, _, _ = pm.LKJCholeskyCov("chol", n=3, eta=2.0, sd_dist=pm.Exponential.dist(1.0), compute_corr=True)
        mu = pm.Normal("mu", 0, 2, shape=3)
        pm.MvNormal("obs", mu=mu, chol=chol, observed=obs)
    return model


def kalman_bivariate(n: int = 12) -> pm.Model:
    """Two observed series of a 2-state AR model: the Kalman filter as a scan whose steps solve with
    the 2 x 2 innovation covariance F (the gain and v' F^-1 v) and take log det F, as state-space
    packages write it."""
    rng = _rng(22)
    T = np.array([[0.9, 0.05], [0.0, 0.8]])
    Z = np.array([[1.0, 0.0], [0.5, 1.0]])
    state, ys = np.zeros(2), []
    for _ in range(n):
        state = T @ state + rng.normal(scale=[0.3, 0.2])
        ys.append(Z @ state + rng.normal(scale=0.4, size=2))
    with pm.Model() as model:
        sigma_state = pm.HalfNormal("sigma_state", 1, shape=2)
        sigma_obs = pm.HalfNormal("sigma_obs", 1)
        Q = pt.diag(sigma_state**2)
        H = pt.eye(2) * sigma_obs**2

        def step(y, m, P, Q_, H_):
            m_pred, P_pred = pt.dot(T, m), pt.dot(pt.dot(T, P), T.T) + Q_
            F = pt.dot(pt.dot(Z, P_pred), Z.T) + H_
            v = y - pt.dot(Z, m_pred)
            gain = pt.linalg.solve(F, pt.dot(Z, P_pred), assume_a="pos").T  # P Z' F^-1 (F symmetric)
            ll = -0.5 * (2 * np.log(2 * np.pi) + pt.log(pt.linalg.det(F)) + pt.dot(v, pt.linalg.solve(F, v)))
            return m_pred + pt.dot(gain, v), P_pred - pt.dot(gain, pt.dot(Z, P_pred)), ll

        (_, _, lls) = pytensor.scan(step, sequences=[pt.as_tensor(np.array(ys))], outputs_info=[pt.zeros(2), pt.eye(2), None],
                                    non_sequences=[Q, H], return_updates=False)
        pm.Potential("kalman_loglik", lls.sum())
    return model


MODELS = {
    f.__name__: f
    for f in (
        linear_regression, robust_regression, logistic_regression, poisson_regression, negative_binomial,
        hierarchical, eight_schools, mixture, dirichlet_categorical, ordered_logistic, time_series,
        zero_inflated, potential_lognormal, scan_custom_dist, kalman_local_trend, censored_regression, bg_nbd,
        gp_marginal, lkj_mvnormal, kalman_bivariate, level_trend_measurement_error, sarimax_arma11,
    )
}


def data_scale() -> pm.Model:
    """A scale set by data (pm.Data): set_data can make it invalid (sigma <= 0)."""
    y = _rng(14).normal(size=20)
    with pm.Model() as model:
        scale = pm.Data("scale", 1.0)
        mu = pm.Normal("mu", 0, 1)
        pm.Normal("obs", mu, scale, observed=y)
    return model


def untransformed_scale(check_bounds: bool = True) -> pm.Model:
    """A scale drawn without a positivity transform: a negative value is an invalid parameter."""
    y = _rng(15).normal(size=20)
    with pm.Model(check_bounds=check_bounds) as model:
        mu = pm.Normal("mu", 0, 1)
        sigma = pm.Normal("sigma", 1, 1)
        pm.Normal("obs", mu, sigma, observed=y)
    return model


def bambi_names(n: int = 60) -> pm.Model:
    """Group intercepts named as bambi names them (`1|group_offset`): not Python identifiers."""
    rng = _rng(18)
    group = rng.integers(0, 4, n)
    y = rng.normal(size=n) + group * 0.3
    with pm.Model(coords={"group": range(4)}) as model:
        offset = pm.Normal("1|group_offset", 0, 1, dims="group")
        sigma = pm.HalfNormal("1|group_sigma", 1)
        intercept = pm.Normal("Intercept", 0, 2)
        pm.Normal("y", intercept + offset[group] * sigma, 1, observed=y)
    return model


def dims_model(n: int = 50) -> pm.Model:
    """A model built with pymc.dims (as pymc-marketing's MMM is): XTensor value variables."""
    import pymc.dims as pmd

    rng = _rng(19)
    x = rng.normal(size=n)
    with pm.Model(coords={"obs": range(n)}) as model:
        x_data = pmd.as_xtensor(x, dims=("obs",))
        alpha = pmd.Normal("alpha", 0, 1)
        beta = pmd.Normal("beta", 0, 1)
        sigma = pmd.HalfNormal("sigma", 1)
        pmd.Normal("y", alpha + beta * x_data, sigma, observed=pmd.as_xtensor(1 + 2 * x + rng.normal(size=n), dims=("obs",)), dims="obs")
    return model
