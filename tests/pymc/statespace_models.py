"""State-space models as pymc-extras (0.10) builds them, in plain PyMC and PyTensor: its standard
Kalman filter (`filters/kalman_filter.py`: StandardFilter) as a Scan, its system matrices written
into zero arrays as its `PytensorRepresentation` writes them, the data a `pm.Data` container, and
the log-likelihood of each time step checked against the data's length (`SequenceMvNormal`'s
logp). Issue 34: ptonnx refused both at their first call (a Scan-stacked (1, 1) innovation
covariance PyTensor types as broadcastable, whose size the IR did not know)."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters

JITTER = 1e-8             # pymc-extras' cov_jitter in float64
MISSING_FILL = -9999.0    # its marker of a missing observation
MVN_CONST = pt.log(2 * pt.constant(np.pi, dtype="float64"))


def _stabilize(cov):
    return cov + pt.identity_like(cov) * JITTER


def _quad_form_sym(a, b):
    out = a @ b @ a.mT
    return 0.5 * (out + out.mT)


def _kalman_step(y, a, P, c, d, T, Z, R, H, Q):
    """One step: missing values masked, the update (gain and log-likelihood by solves with the
    innovation covariance F), then the prediction; StandardFilter's seven outputs."""
    nan_mask = pt.or_(pt.isnan(y), pt.eq(y, MISSING_FILL))
    all_nan = pt.all(nan_mask).astype("float64")
    W = pt.diag(pt.bitwise_not(nan_mask).astype("float64"))
    Z, H, y = W.dot(Z), W.dot(H), pt.set_subtensor(y[nan_mask], 0.0)

    y_hat = d + Z @ a
    v = y - y_hat
    PZT = P.dot(Z.mT)
    F = Z.dot(PZT) + _stabilize(H)
    K = pt.linalg.solve(F.mT, PZT.mT, assume_a="pos", check_finite=False).mT
    I_KZ = pt.eye(T.type.shape[0]) - K.dot(Z)
    a_filtered = a + K @ v
    P_filtered = _stabilize(_quad_form_sym(I_KZ, P) + _quad_form_sym(K, H))
    inner = v.T @ pt.linalg.solve(F, v, assume_a="pos", check_finite=False)
    ll = pt.switch(all_nan, 0.0, -0.5 * (MVN_CONST + pt.log(pt.linalg.det(F)) + inner).ravel()[0])

    a_hat = T @ a_filtered + c
    P_hat = _quad_form_sym(T, P_filtered) + _quad_form_sym(R, Q)
    return a_filtered, a_hat, y_hat, P_filtered, P_hat, F, ll


def _kalman_loglike(data, a0, P0, c, d, T, Z, R, H, Q) -> None:
    """The filter's Scan over the data (no matrix varies in time) and its log-likelihood, a
    Potential of one term per time step, as `build_statespace_graph` adds it."""
    a0, P0, c, d, T, Z, R, H, Q = map(pt.as_tensor, (a0, P0, c, d, T, Z, R, H, Q))
    data = pt.specify_shape(data, (data.type.shape[0], Z.type.shape[0]))
    outs = pytensor.scan(_kalman_step, sequences=[data], outputs_info=[None, a0, None, None, P0, None, None],
                         non_sequences=[c, d, T, Z, R, H, Q], name="forward_kalman_pass", strict=False,
                         return_updates=False)
    n = data.type.shape[0]
    mus = pt.specify_shape(outs[2], (n, Z.type.shape[0]))
    covs = pt.specify_shape(outs[5], (n, Z.type.shape[0], Z.type.shape[0]))
    loglike = pt.specify_shape(outs[6].squeeze(), (n,))
    pm.Potential("obs", check_parameters(loglike, pt.eq(data.shape[0], mus.shape[0]), pt.eq(covs.shape[0], mus.shape[0]),
                                         msg="Observed data and parameters must have the same number of timesteps"))


def _write(shape, index, value):
    """A system matrix as pymc-extras writes one: `value` set at `index` of zeros with a leading
    axis of 1 (its time axis), which is then squeezed away."""
    return pt.set_subtensor(pt.as_tensor(np.zeros((1, *shape)))[index], value).squeeze(0)


def level_trend_measurement_error(n: int = 40) -> pm.Model:
    """pymc-extras' `LevelTrend(order=2, innovations_order=[1, 1]) + MeasurementError()`: a local
    linear trend (level and slope each with its own innovation) observed with noise; the initial
    state a free variable, its covariance fixed (10 I)."""
    rng = np.random.default_rng(23)
    y = np.cumsum(0.1 + rng.normal(scale=0.3, size=n)) + rng.normal(scale=0.5, size=n)
    with pm.Model() as model:
        a0 = pm.Normal("initial_level_trend", 0, 1, shape=2)
        sigma_level_trend = pm.Gamma("sigma_level_trend", 2, 2, shape=2)
        sigma_obs = pm.Gamma("sigma_obs", 2, 2)
        P0 = pm.Deterministic("P0", pt.eye(2) * 10.0)
        data = pm.Data("data", y[:, None])
        none = pt.zeros((0, 0))  # MeasurementError adds no state: its blocks are empty
        T = pt.linalg.block_diag(_write((2, 2), (0, [0, 0, 1], [0, 1, 1]), 1.0), none)
        Q = pt.linalg.block_diag(_write((2, 2), (0, [0, 1], [0, 1]), sigma_level_trend**2), none)
        H = _write((1, 1), (0, [0], [0]), sigma_obs**2)
        _kalman_loglike(data, a0, P0, np.zeros(2), np.zeros(1), T, np.array([[1.0, 0.0]]), np.eye(2), H, Q)
    return model


def sarimax_arma11(n: int = 40) -> pm.Model:
    """pymc-extras' `BayesianSARIMAX(order=(1, 0, 1))`: an ARMA(1, 1) in two states, its initial
    state and covariance the stationary ones (a solve, and the discrete Lyapunov equation)."""
    rng = np.random.default_rng(24)
    e, y = rng.normal(size=n + 1), np.zeros(n)
    for t in range(1, n):
        y[t] = 0.5 * y[t - 1] + e[t] + 0.3 * e[t - 1]
    with pm.Model() as model:
        ar_params = pm.Normal("ar_params", 0, 0.3, shape=1)
        ma_params = pm.Normal("ma_params", 0, 0.3, shape=1)
        sigma_state = pm.Gamma("sigma_state", 2, 2)
        data = pm.Data("data", y[:, None])
        T = pt.set_subtensor(pt.as_tensor(np.array([[[0.0, 1.0], [0.0, 0.0]]]))[0, 0:1, 0], ar_params).squeeze(0)
        R = pt.set_subtensor(pt.as_tensor(np.array([[[1.0], [0.0]]]))[0, 1:2, 0], ma_params).squeeze(0)
        Q = _write((1, 1), (0, [0], [0]), sigma_state**2)
        c = np.zeros(2)
        a0 = pt.linalg.solve(pt.identity_like(T) - T, c, assume_a="gen", check_finite=False)
        P0 = pt.linalg.solve_discrete_lyapunov(T, pt.linalg.matrix_dot(R, Q, R.T), method="bilinear")
        _kalman_loglike(data, a0, P0, c, np.zeros(1), T, np.array([[1.0, 0.0]]), R, np.zeros((1, 1)), Q)
    return model
