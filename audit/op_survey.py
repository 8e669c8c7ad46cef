"""Which PyTensor Ops must ptonnx lift? Found by compiling a corpus of real programs.

    python -m audit.op_survey                      # both PyTensor lines, writes audit/results/op_survey.md
    python -m audit.op_survey --out other.md
    python -m audit.op_survey --pythons /work/main/.venv/bin/python      # one interpreter only
    python -m audit.op_survey --collect out.json   # (internal) survey with this interpreter only, as JSON
    python -m audit.op_survey --link               # also link each function (C/Numba), slower; same graphs

The corpus (`PROGRAMS`) holds small general array programs and pure-PyTensor
versions of PyMC-style log-densities. Each program is a function returning
`(inputs, outputs)`; each numeric one also gets a gradient variant: the
`pytensor.grad` of a scalar cost (the sum of its float outputs; a log-density is
its own cost) with respect to its float inputs (for the PyMC-style programs: the
parameters only, as PyMC differentiates). Every variant is looked at in three
graphs:

- `plain`: `FunctionGraph(inputs, outputs)` as built, no rewrites;
- `fast_run`: `pytensor.function(..., mode="FAST_RUN").maker.fgraph` (PyTensor 2.38:
  the C VM linker; PyTensor 3: the Numba linker, whose rewrite set differs);
- `onnx`: ptonnx's ONNX-mode rewrite set: `Mode(linker="py",
  optimizer=RewriteDatabaseQuery(include=["fast_run"], exclude=[...]))`.

The rewritten graphs are made by `FunctionMaker.__init__`, which is where
PyTensor rewrites; linking (C compilation, Numba JIT) is skipped unless `--link`,
since it does not change the graph and would take minutes.

Each interpreter surveys in a child process (`--collect`), in parallel; the parent
merges their JSON into one markdown table, deterministic for the same corpus and
PyTensor versions. Per-program failures (a function that does not build in one
version, a rewrite that raises) are recorded, never fatal.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "audit" / "results" / "op_survey.md"
DEFAULT_PYTHONS = ("/work/main/.venv/bin/python", "/tmp/v238/bin/python")

#: the rewrite tags ptonnx's ONNX mode excludes (ptonnx/mode.py, ONNXLinker.incompatible_rewrites)
ONNX_EXCLUDE = ["cxx_only", "BlasOpt", "inplace", "local_careduce_fusion", "scan_reduce_trace_prealloc"]
GRAPH_KINDS = ("plain", "fast_run", "onnx")

# --------------------------------------------------------------------------------------
# What ptonnx lifts today: a snapshot of ptonnx/lifting/*.py at commit 7d48b06 (the IR is
# being rewritten, so this is read from the source once rather than imported).
# --------------------------------------------------------------------------------------
SNAPSHOT = "7d48b06"
#: Elemwise scalar op class names with a lifting rule (SCALAR_OPS and SPECIAL in ptonnx/lifting/elemwise.py)
LIFTED_SCALARS = frozenset((
    "Add", "Sub", "Mul", "TrueDiv", "IntDiv", "Mod", "Pow", "Maximum", "Minimum", "Neg", "Abs", "Sign",
    "Reciprocal", "Exp", "Log", "Sqrt", "Log1p", "Expm1", "Softplus", "Sin", "Cos", "Tanh", "Erf", "Sigmoid",
    "Floor", "Ceil", "RoundHalfToEven", "RoundHalfAwayFromZero", "LT", "GT", "LE", "GE", "EQ", "NEQ", "AND",
    "OR", "XOR", "Invert", "Switch", "Cast", "Identity", "Sqr", "Clip", "Composite",
))
#: Op class names with a lifting rule (found along the MRO), and the condition ptonnx puts on them
LIFTED_OPS = {
    "DeepCopyOp": "yes", "ViewOp": "yes", "SpecifyShape": "yes", "TensorFromScalar": "yes",
    "ScalarFromTensor": "yes", "DimShuffle": "yes", "MakeVector": "yes", "Softmax": "yes (several axes: static shape)",
    "Join": "const axis", "Split": "const axis and sizes", "Reshape": "const shape",
    "Dot": "yes", "Dot22": "yes", "BatchedDot": "yes", "Dot22Scalar": "yes", "Gemv": "yes", "Gemm": "yes",
    "Ger": "yes", "AllocEmpty": "yes (as beta=0 accumulator)",
}
LIFTED_BLOCKWISE_CORES = frozenset({"Dot"})


# --------------------------------------------------------------------------------------
# The corpus
# --------------------------------------------------------------------------------------
@dataclass
class Program:
    name: str
    group: str  # "array" or "pymc"
    fn: object
    wrt: tuple | None = None  # input names to differentiate; None = every float input
    note: str = ""


PROGRAMS: list[Program] = []


def program(name, group="array", wrt=None, note=""):
    def decorate(fn):
        PROGRAMS.append(Program(name, group, fn, wrt, note))
        return fn

    return decorate


def _pt():
    import pytensor.tensor as pt

    return pt


# ---- general array programs ----------------------------------------------------------
@program("sub_self")
def _():
    pt = _pt()
    x = pt.vector("x")
    return [x], [x - x]


@program("reshape_keep_first")
def _():
    pt = _pt()
    x = pt.tensor3("x")
    return [x], [x.reshape((x.shape[0], -1))]


@program("dot_unknown")
def _():
    pt = _pt()
    X, v = pt.matrix("X"), pt.vector("v")
    return [X, v], [pt.dot(X, v)]


@program("matmul")
def _():
    pt = _pt()
    A, B = pt.matrix("A"), pt.matrix("B")
    return [A, B], [A @ B]


@program("reverse")
def _():
    pt = _pt()
    x = pt.vector("x")
    return [x], [x[::-1]]


@program("strided_slice")
def _():
    pt = _pt()
    x = pt.vector("x")
    return [x], [x[1:-1:2]]


@program("take_idx")
def _():
    pt = _pt()
    x, idx = pt.vector("x"), pt.lvector("idx")
    return [x, idx], [x[idx]]


@program("take_rows_cols")
def _():
    pt = _pt()
    X, i, j = pt.matrix("X"), pt.lvector("i"), pt.lvector("j")
    return [X, i, j], [X[i], X[:, j], X[i, j], X[i, 1:]]


@program("set_slice_zero")
def _():
    pt = _pt()
    x = pt.vector("x")
    return [x], [pt.set_subtensor(x[1:], 0)]


@program("inc_idx")
def _():
    pt = _pt()
    x, idx = pt.vector("x"), pt.lvector("idx")
    return [x, idx], [pt.inc_subtensor(x[idx], 1)]


@program("mean_by_shape")
def _():
    pt = _pt()
    x = pt.matrix("x")
    return [x], [x.sum(axis=0) / x.shape[0]]


@program("mean_var")
def _():
    pt = _pt()
    x = pt.matrix("x")
    return [x], [x.mean(axis=0), x.var(), x.std(axis=1)]


@program("max_argmax")
def _():
    pt = _pt()
    x = pt.matrix("x")
    return [x], [x.max(axis=1), pt.argmax(x, axis=1), x.max(), x.min(axis=0)]


@program("argsort")
def _():
    pt = _pt()
    x = pt.vector("x")
    order = pt.argsort(x)
    return [x], [order, x[order]]


@program("sort")
def _():
    pt = _pt()
    x = pt.matrix("x")
    return [x], [pt.sort(x, axis=-1)]


@program("cumsum")
def _():
    pt = _pt()
    x = pt.matrix("x")
    return [x], [pt.cumsum(x, axis=0), pt.cumsum(x)]


@program("cumprod")
def _():
    pt = _pt()
    x = pt.vector("x")
    return [x], [pt.cumprod(x)]


@program("logsumexp")
def _():
    pt = _pt()
    x = pt.matrix("x")
    return [x], [pt.logsumexp(x, axis=1), pt.logsumexp(x)]


@program("arange_mul")
def _():
    pt = _pt()
    x = pt.vector("x")
    return [x], [x * pt.arange(x.shape[0])]


@program("all_any")
def _():
    pt = _pt()
    x = pt.matrix("x")
    return [x], [pt.all(x > 0), pt.any(x > 0, axis=0)]


@program("bool_mask")
def _():
    pt = _pt()
    X = pt.matrix("X")
    return [X], [X[X > 0]]


@program("tile")
def _():
    pt = _pt()
    x, n = pt.matrix("x"), pt.lscalar("n")
    return [x, n], [pt.tile(x, (2, 3)), pt.tile(x, (n, 1))]


@program("roll")
def _():
    pt = _pt()
    x, k = pt.matrix("x"), pt.lscalar("k")
    return [x, k], [pt.roll(x, 2, axis=0), pt.roll(x, k)]


@program("flatten")
def _():
    pt = _pt()
    x = pt.tensor3("x")
    return [x], [x.flatten(), pt.flatten(x, ndim=2)]


@program("stack")
def _():
    pt = _pt()
    a, b = pt.vector("a"), pt.vector("b")
    return [a, b], [pt.stack([a, b, a * b]), pt.stack([a, b], axis=1)]


@program("swapaxes")
def _():
    pt = _pt()
    x = pt.tensor3("x")
    return [x], [pt.swapaxes(x, 0, 2)]


@program("moveaxis")
def _():
    pt = _pt()
    x = pt.tensor3("x")
    return [x], [pt.moveaxis(x, 0, -1)]


def _pad_program(mode, **kwargs):
    def build():
        pt = _pt()
        x = pt.matrix("x")
        return [x], [pt.pad(x, ((1, 2), (0, 1)), mode=mode, **kwargs)]

    return build


for _mode in ("constant", "edge", "linear_ramp", "maximum", "minimum", "mean", "median", "reflect", "symmetric", "wrap"):
    program(f"pad_{_mode}")(_pad_program(_mode))


@program("searchsorted")
def _():
    pt = _pt()
    a, v = pt.vector("a"), pt.vector("v")
    pos = pt.searchsorted(a, v)
    return [a, v], [pos, a[pt.minimum(pos, a.shape[0] - 1)]]


@program("bincount")
def _():
    pt = _pt()
    idx, w = pt.lvector("idx"), pt.vector("w")
    return [idx, w], [pt.bincount(idx), pt.bincount(idx, weights=w)]


@program("unique")
def _():
    pt = _pt()
    x = pt.vector("x")
    values, inverse, counts = pt.unique(x, return_inverse=True, return_counts=True)
    return [x], [pt.unique(x), values, inverse, counts]


@program("fill_diagonal")
def _():
    pt = _pt()
    X, s = pt.matrix("X"), pt.scalar("s")
    return [X, s], [pt.fill_diagonal(X, 0.0), pt.fill_diagonal(X, s)]


@program("einsum")
def _():
    pt = _pt()
    A, B, T = pt.matrix("A"), pt.matrix("B"), pt.tensor3("T")
    return [A, B, T], [
        pt.einsum("ij,jk->ik", A, B),
        pt.einsum("bij,bjk->bik", T, T),
        pt.einsum("ii->i", A),
        pt.einsum("ij,ij->i", A, B),
        pt.einsum("i,j->ij", A[0], B[0]),
    ]


@program("log_softmax")
def _():
    pt = _pt()
    x = pt.matrix("x")
    return [x], [pt.special.log_softmax(x, axis=-1)]


@program("softmax_axes")
def _():
    pt = _pt()
    x = pt.tensor3("x")
    sm = pt.special.softmax
    return [x], [sm(x, axis=0), sm(x, axis=-1), sm(x, axis=None)]


@program("softmax_two_axes")
def _():
    pt = _pt()
    x = pt.tensor3("x")
    return [x], [pt.special.softmax(x, axis=(0, 2))]


@program("eye")
def _():
    pt = _pt()
    x = pt.matrix("x")
    return [x], [pt.eye(x.shape[0]) * x, pt.eye(3, k=1)]


@program("tri_tril_triu")
def _():
    pt = _pt()
    X, n = pt.matrix("X"), pt.lscalar("n")
    return [X, n], [pt.tri(n), pt.tril(X), pt.triu(X, k=1)]


@program("diag")
def _():
    pt = _pt()
    X, v = pt.matrix("X"), pt.vector("v")
    return [X, v], [pt.diag(v), pt.diag(X), pt.diagonal(X, offset=1)]


@program("repeat")
def _():
    pt = _pt()
    x, reps = pt.matrix("x"), pt.lvector("reps")
    return [x, reps], [pt.repeat(x, 2, axis=0), pt.repeat(x, reps, axis=0)]


@program("concat_split")
def _():
    pt = _pt()
    x, y = pt.vector("x"), pt.vector("y")
    c = pt.concatenate([x, y])
    a, b = pt.split(c, [x.shape[0], y.shape[0]], n_splits=2)
    return [x, y], [a * 2, b]


@program("squeeze")
def _():
    pt = _pt()
    x, y = pt.tensor3("x", shape=(None, 1, None)), pt.matrix("y")
    return [x, y], [pt.squeeze(x), pt.squeeze(y[None, :, :], axis=0)]


@program("broadcast_to")
def _():
    pt = _pt()
    v, n = pt.vector("v"), pt.lscalar("n")
    return [v, n], [pt.broadcast_to(v, (n, v.shape[0]))]


@program("specify_shape")
def _():
    pt = _pt()
    x = pt.matrix("x")
    return [x], [pt.specify_shape(x, (None, 3)) * 2]


@program("assert_check")
def _():
    pt = _pt()
    from pytensor.raise_op import Assert, CheckAndRaise

    x = pt.vector("x")
    a = Assert("x must be positive")(x, pt.all(x > 0))
    finite = pt.invert(pt.or_(pt.isnan(x), pt.isinf(x)))  # pt.isfinite is PyTensor 3 only
    b = CheckAndRaise(ValueError, "x must be finite")(x, pt.all(finite))
    return [x], [a * 2, b + 1]


@program("opfromgraph")
def _():
    pt = _pt()
    from pytensor.compile.builders import OpFromGraph

    a, b = pt.vector("a"), pt.vector("b")
    op = OpFromGraph([a, b], [a * b + pt.exp(a)])
    x, y = pt.vector("x"), pt.vector("y")
    return [x, y], [op(x, y)]


@program("scan_recurrence")
def _():
    import pytensor

    pt = _pt()
    x, phi = pt.vector("x"), pt.scalar("phi")
    out, _ = pytensor.scan(lambda xt, prev, phi: phi * prev + xt, sequences=[x], outputs_info=[pt.zeros(())], non_sequences=[phi])
    return [x, phi], [out]


@program("creation_shapes")
def _():
    pt = _pt()
    x, n = pt.matrix("x"), pt.lscalar("n")
    return [x, n], [pt.zeros((x.shape[0], 2)) + x[:, :1], pt.ones_like(x) * 3, pt.full((n,), 2.5), x.reshape((x.shape[0] * x.shape[1],))]


@program("elemwise_misc")
def _():
    pt = _pt()
    x, y = pt.vector("x"), pt.vector("y")
    return [x, y], [pt.where(x > 0, x, 0), pt.clip(x, -1, 1), pt.abs(x) + pt.sqr(y), pt.maximum(x, y), x**3, x // 2 + x % 3]


@program("special_math")
def _():
    pt = _pt()
    x = pt.vector("x")
    return [x], [pt.gammaln(x), pt.erfc(x), pt.erfcx(x), pt.log1mexp(-pt.abs(x) - 1), pt.logaddexp(x, 2 * x),
                 pt.softplus(x), pt.sigmoid(x), pt.log1p(x), pt.expm1(x), pt.psi(x), pt.erfinv(pt.tanh(x))]


# ---- PyMC-style log-densities (pure PyTensor; PyMC's formulas) -----------------------
LOG_2PI = 1.8378770664093453


def _normal_logp(pt, value, mu, sigma):
    return -0.5 * pt.sqr((value - mu) / sigma) - pt.log(sigma) - 0.5 * LOG_2PI


def _halfnormal_logp(pt, value, sigma):
    return 0.5 * pt.log(2.0 / 3.141592653589793) - pt.log(sigma) - 0.5 * pt.sqr(value / sigma)


def _halfcauchy_logp(pt, value, beta):
    return pt.log(2.0) - pt.log(3.141592653589793 * beta) - pt.log1p(pt.sqr(value / beta))


def _check_parameters(pt, logp, *conditions):
    """PyMC's check_parameters: CheckParameterValue is a CheckAndRaise."""
    from pytensor.raise_op import CheckAndRaise

    cond = pt.all([pt.all(c) for c in conditions]) if len(conditions) > 1 else pt.all(conditions[0])
    return CheckAndRaise(ValueError, "parameter constraint violated")(logp, cond)


def _logpow(pt, x, m):
    return pt.switch(pt.and_(pt.eq(x, 0), pt.eq(m, 0)), 0.0, m * pt.log(pt.switch(pt.eq(x, 0), 1.0, x)))


def _betaln(pt, a, b):
    return pt.gammaln(a) + pt.gammaln(b) - pt.gammaln(a + b)


def _poisson_logp(pt, value, mu):
    res = _logpow(pt, mu, value) - pt.gammaln(value + 1) - mu
    res = pt.switch(pt.lt(value, 0), -pt.inf, res)
    return _check_parameters(pt, res, mu >= 0)


def _log_sigma(pt, log_s):
    """A positive parameter through PyMC's log transform: value and log-Jacobian."""
    return pt.exp(log_s), log_s


@program("normal_logp", "pymc", wrt=("mu", "log_sigma"))
def _():
    pt = _pt()
    y, mu, log_sigma = pt.vector("y"), pt.scalar("mu"), pt.scalar("log_sigma")
    sigma, jac = _log_sigma(pt, log_sigma)
    logp = _check_parameters(pt, _normal_logp(pt, y, mu, sigma), sigma > 0).sum()
    logp += _normal_logp(pt, mu, 0.0, 10.0) + _halfnormal_logp(pt, sigma, 5.0) + jac
    return [y, mu, log_sigma], [logp]


@program("studentt_logp", "pymc", wrt=("mu", "log_sigma", "log_nu"))
def _():
    pt = _pt()
    y, mu, log_sigma, log_nu = pt.vector("y"), pt.scalar("mu"), pt.scalar("log_sigma"), pt.scalar("log_nu")
    sigma, j1 = _log_sigma(pt, log_sigma)
    nu, j2 = _log_sigma(pt, log_nu)
    lam = 1.0 / sigma**2
    logp = (
        pt.gammaln((nu + 1.0) / 2.0) + 0.5 * pt.log(lam / (nu * 3.141592653589793)) - pt.gammaln(nu / 2.0)
        - (nu + 1.0) / 2.0 * pt.log1p(lam * (y - mu) ** 2 / nu)
    )
    total = _check_parameters(pt, logp, lam > 0, nu > 0).sum() + j1 + j2
    total += -nu / 10.0 - pt.log(10.0)  # Exponential(0.1) prior on nu
    return [y, mu, log_sigma, log_nu], [total]


@program("bernoulli_logit_glm", "pymc", wrt=("alpha", "beta"))
def _():
    pt = _pt()
    X, y, alpha, beta = pt.matrix("X"), pt.lvector("y"), pt.scalar("alpha"), pt.vector("beta")
    logit_p = alpha + pt.dot(X, beta)
    logp = pt.switch(y, -pt.softplus(-logit_p), -pt.softplus(logit_p))
    logp = pt.switch(pt.or_(pt.lt(y, 0), pt.gt(y, 1)), -pt.inf, logp)
    total = logp.sum() + _normal_logp(pt, beta, 0.0, 2.5).sum() + _normal_logp(pt, alpha, 0.0, 10.0)
    return [X, y, alpha, beta], [total]


@program("poisson_glm", "pymc", wrt=("beta",))
def _():
    pt = _pt()
    X, y, beta = pt.matrix("X"), pt.lvector("y"), pt.vector("beta")
    mu = pt.exp(X @ beta)
    total = _poisson_logp(pt, y, mu).sum() + _normal_logp(pt, beta, 0.0, 1.0).sum()
    return [X, y, beta], [total]


@program("negative_binomial", "pymc", wrt=("log_mu", "log_alpha"))
def _():
    pt = _pt()
    y, log_mu, log_alpha = pt.lvector("y"), pt.vector("log_mu"), pt.scalar("log_alpha")
    mu, j1 = pt.exp(log_mu), log_mu.sum()
    alpha, j2 = _log_sigma(pt, log_alpha)
    binomln = -_betaln(pt, 1 + (y + alpha - 1) - y, 1 + y) - pt.log(y + alpha)
    negbinom = binomln + _logpow(pt, mu / (mu + alpha), y) + _logpow(pt, alpha / (mu + alpha), alpha)
    logp = pt.switch(pt.gt(alpha, 1e10), _poisson_logp(pt, y, mu), negbinom)
    logp = pt.switch(pt.lt(y, 0), -pt.inf, logp)
    total = _check_parameters(pt, logp, mu > 0, alpha > 0).sum() + j1 + j2 + (2.0 * log_alpha - alpha)  # Gamma(2, 1)
    return [y, log_mu, log_alpha], [total]


@program("hierarchical_noncentered", "pymc", wrt=("mu_a", "log_sigma_a", "a_offset", "b", "log_sigma_y"))
def _():
    pt = _pt()
    y, x, group_idx = pt.vector("y"), pt.vector("x"), pt.lvector("group_idx")
    mu_a, log_sigma_a, a_offset = pt.scalar("mu_a"), pt.scalar("log_sigma_a"), pt.vector("a_offset")
    b, log_sigma_y = pt.scalar("b"), pt.scalar("log_sigma_y")
    sigma_a, j1 = _log_sigma(pt, log_sigma_a)
    sigma_y, j2 = _log_sigma(pt, log_sigma_y)
    a = mu_a + sigma_a * a_offset
    mu = a[group_idx] + b * x
    total = (
        _normal_logp(pt, y, mu, sigma_y).sum() + _normal_logp(pt, a_offset, 0.0, 1.0).sum()
        + _normal_logp(pt, mu_a, 0.0, 10.0) + _halfcauchy_logp(pt, sigma_a, 5.0) + _halfcauchy_logp(pt, sigma_y, 5.0)
        + _normal_logp(pt, b, 0.0, 10.0) + j1 + j2
    )
    return [y, x, group_idx, mu_a, log_sigma_a, a_offset, b, log_sigma_y], [total]


@program("hierarchical_centered_2d", "pymc", wrt=("mu", "log_tau", "theta", "log_sigma"))
def _():
    pt = _pt()
    y, group_idx, county_idx = pt.vector("y"), pt.lvector("group_idx"), pt.lvector("county_idx")
    mu, log_tau, theta, log_sigma = pt.scalar("mu"), pt.scalar("log_tau"), pt.matrix("theta"), pt.scalar("log_sigma")
    tau, j1 = _log_sigma(pt, log_tau)
    sigma, j2 = _log_sigma(pt, log_sigma)
    total = (
        _normal_logp(pt, theta, mu, tau).sum() + _normal_logp(pt, y, theta[group_idx, county_idx], sigma).sum()
        + _normal_logp(pt, mu, 0.0, 5.0) + _halfnormal_logp(pt, tau, 5.0) + _halfnormal_logp(pt, sigma, 5.0) + j1 + j2
    )
    return [y, group_idx, county_idx, mu, log_tau, theta, log_sigma], [total]


def _simplex_backward(pt, value):
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


@program("mixture_normal", "pymc", wrt=("w_raw", "mu", "log_sigma"))
def _():
    pt = _pt()
    y, w_raw, mu, log_sigma = pt.vector("y"), pt.vector("w_raw"), pt.vector("mu"), pt.vector("log_sigma")
    w, j1 = _simplex_backward(pt, w_raw)
    sigma, j2 = pt.exp(log_sigma), log_sigma.sum()
    comp = _normal_logp(pt, y[:, None], mu[None, :], sigma[None, :])
    logp = pt.logsumexp(pt.log(w)[None, :] + comp, axis=-1).sum()
    total = logp + _normal_logp(pt, mu, 0.0, 10.0).sum() + _halfnormal_logp(pt, sigma, 2.0).sum() + j1 + j2
    return [y, w_raw, mu, log_sigma], [total]


@program("dirichlet_categorical", "pymc", wrt=("p_raw",))
def _():
    pt = _pt()
    y, a, p_raw = pt.lvector("y"), pt.vector("a"), pt.vector("p_raw")
    p, jac = _simplex_backward(pt, p_raw)
    dirichlet = pt.sum(_logpow(pt, p, a - 1) - pt.gammaln(a), -1) + pt.gammaln(pt.sum(a, -1))
    k = p.shape[-1]
    p = p / pt.sum(p, -1, keepdims=True)
    value_clip = pt.clip(y, 0, k - 1)
    categorical = pt.switch(pt.or_(pt.lt(y, 0), pt.gt(y, k - 1)), -pt.inf, pt.log(p[value_clip]))
    total = _check_parameters(pt, categorical, 0 <= p, p <= 1).sum() + dirichlet + jac
    return [y, a, p_raw], [total]


@program("ordered_logistic", "pymc", wrt=("beta", "c_raw"))
def _():
    pt = _pt()
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
    total = logp + _normal_logp(pt, beta, 0.0, 1.0).sum() + _normal_logp(pt, cutpoints, 0.0, 5.0).sum() + jac
    return [X, y, beta, c_raw], [total]


@program("ar1", "pymc", wrt=("x", "phi_raw", "log_sigma"))
def _():
    pt = _pt()
    x, phi_raw, log_sigma = pt.vector("x"), pt.scalar("phi_raw"), pt.scalar("log_sigma")
    # phi in (-1, 1) through PyMC's interval transform
    phi = -1.0 + 2.0 * pt.sigmoid(phi_raw)
    j1 = pt.log(2.0) + pt.log(pt.sigmoid(phi_raw)) + pt.log(pt.sigmoid(-phi_raw))
    sigma, j2 = _log_sigma(pt, log_sigma)
    innov = x[1:] - phi * x[:-1]
    init = _normal_logp(pt, x[0], 0.0, sigma / pt.sqrt(1 - phi**2))
    total = init + _normal_logp(pt, innov, 0.0, sigma).sum() + _halfnormal_logp(pt, sigma, 1.0) + j1 + j2
    return [x, phi_raw, log_sigma], [total]


@program("gaussian_random_walk", "pymc", wrt=("x", "log_sigma"))
def _():
    pt = _pt()
    x, y, log_sigma = pt.vector("x"), pt.vector("y"), pt.scalar("log_sigma")
    sigma, jac = _log_sigma(pt, log_sigma)
    total = (
        _normal_logp(pt, x[0], 0.0, 10.0) + _normal_logp(pt, pt.diff(x), 0.0, sigma).sum()
        + _normal_logp(pt, y, x, 1.0).sum() + _halfnormal_logp(pt, sigma, 1.0) + jac
    )
    return [x, y, log_sigma], [total]


@program("mvnormal_cholesky", "pymc", wrt=("mu", "L_raw"))
def _():
    pt = _pt()
    Y, mu, L_raw = pt.matrix("Y"), pt.vector("mu"), pt.matrix("L_raw")
    # a Cholesky factor built PyMC-style: strict lower part + exp(diagonal)
    L = pt.tril(L_raw, k=-1) + pt.diag(pt.exp(pt.diag(L_raw)))
    cov = L @ L.T
    chol = pt.linalg.cholesky(cov)
    delta = (Y - mu[None, :]).T
    z = pt.linalg.solve_triangular(chol, delta, lower=True)
    k = pt.cast(Y.shape[1], "float64")
    logp = -0.5 * pt.sum(z**2, axis=0) - pt.sum(pt.log(pt.diag(chol))) - 0.5 * k * LOG_2PI
    return [Y, mu, L_raw], [logp.sum() + pt.sum(pt.diag(L_raw))]


@program("zero_inflated_poisson", "pymc", wrt=("psi_raw", "log_mu"))
def _():
    pt = _pt()
    y, psi_raw, log_mu = pt.lvector("y"), pt.scalar("psi_raw"), pt.scalar("log_mu")
    psi = pt.sigmoid(psi_raw)
    jac = pt.log(psi) + pt.log1p(-psi)
    mu = pt.exp(log_mu)
    pois = _poisson_logp(pt, y, mu)
    logp = pt.switch(pt.eq(y, 0), pt.logaddexp(pt.log1p(-psi), pt.log(psi) + pois), pt.log(psi) + pois)
    total = logp.sum() + jac + log_mu + _normal_logp(pt, log_mu, 0.0, 1.0)
    return [y, psi_raw, log_mu], [total]


@program("censored_normal", "pymc", wrt=("mu", "log_sigma"))
def _():
    pt = _pt()
    y, upper, mu, log_sigma = pt.vector("y"), pt.scalar("upper"), pt.scalar("mu"), pt.scalar("log_sigma")
    sigma, jac = _log_sigma(pt, log_sigma)

    def normal_lcdf(x):  # PyMC's
        z = (x - mu) / sigma
        return pt.switch(
            pt.lt(z, -1.0),
            pt.log(pt.erfcx(-z / pt.sqrt(2.0)) / 2.0) - pt.sqr(z) / 2.0,
            pt.log1p(-pt.erfc(z / pt.sqrt(2.0)) / 2.0),
        )

    log_sf = pt.log1mexp(normal_lcdf(upper))
    logp = pt.switch(pt.ge(y, upper), log_sf, _normal_logp(pt, y, mu, sigma))
    return [y, upper, mu, log_sigma], [logp.sum() + _normal_logp(pt, mu, 0.0, 10.0) + jac]


@program("linear_regression", "pymc", wrt=("alpha", "beta", "log_sigma"))
def _():
    pt = _pt()
    X, y, alpha, beta, log_sigma = pt.matrix("X"), pt.vector("y"), pt.scalar("alpha"), pt.vector("beta"), pt.scalar("log_sigma")
    sigma, jac = _log_sigma(pt, log_sigma)
    mu = alpha + X @ beta
    total = (
        _normal_logp(pt, y, mu, sigma).sum() + _normal_logp(pt, beta, 0.0, 1.0).sum() + _normal_logp(pt, alpha, 0.0, 10.0)
        + _halfcauchy_logp(pt, sigma, 1.0) + jac
    )
    return [X, y, alpha, beta, log_sigma], [total]


# --------------------------------------------------------------------------------------
# Describing a graph: op keys, families, lowering-relevant properties
# --------------------------------------------------------------------------------------
def _is_const(var):
    from pytensor.graph.basic import Constant

    return isinstance(var, Constant)


def _const_repr(var):
    import numpy as np

    data = np.asarray(var.data)
    if data.size == 1:
        v = data.item()
        return repr(v) if not isinstance(v, float) else f"{v:g}"
    return f"const{list(data.shape)}"


def _slice_part(var):
    if var is None:
        return ""
    return _const_repr(var) if _is_const(var) else "s"


def _render_slice(parts, has_step):
    """numpy-style text of a slice from its rendered start/stop/step ("" = None)."""
    text = ":".join(parts) if has_step else ":".join(parts[:2])
    return text if text.strip(":") else ":"


def _tensor_index_kind(var):
    t = var.type
    dtype = getattr(t, "dtype", "?")
    ndim = getattr(t, "ndim", None)
    base = "bool" if dtype == "bool" else ("int" if "int" in dtype else dtype)
    if ndim == 0:
        return f"{base} scalar" + (f"={_const_repr(var)}" if _is_const(var) else "")
    return f"{base}{ndim}d" + ("(const)" if _is_const(var) else "")


def _index_entry(var):
    """One index input of an Advanced*Subtensor in 2.38 (no idx_list): tensor, slice or None."""
    tname = type(var.type).__name__
    if tname == "SliceType":
        if _is_const(var):
            s = var.data
            parts = ["" if p is None else str(int(p)) for p in (s.start, s.stop, s.step)]
            return _render_slice(parts, s.step is not None)
        owner = var.owner
        if owner is not None and type(owner.op).__name__ == "MakeSlice":
            parts = ["" if type(p.type).__name__ == "NoneTypeT" else _slice_part(p) for p in owner.inputs]
            return _render_slice(parts, parts[2] != "")
        return "slice(s)"
    if tname == "NoneTypeT":
        return "None"
    return _tensor_index_kind(var)


def _walk_idx_list(idx_list, index_inputs, tensor_entries: bool):
    """Render an idx_list (Subtensor, and AdvancedSubtensor in PyTensor 3) against its index inputs."""
    it = iter(index_inputs)
    out = []
    for entry in idx_list:
        if isinstance(entry, slice):
            parts = ["" if p is None else _slice_part(next(it)) for p in (entry.start, entry.stop, entry.step)]
            out.append(_render_slice(parts, entry.step is not None))
        elif entry is None:
            out.append("None")
        else:
            var = next(it)
            if tensor_entries or getattr(var.type, "ndim", 0) > 0:
                out.append(_tensor_index_kind(var))
            else:
                out.append(_const_repr(var) if _is_const(var) else "i")
    return "[" + ", ".join(out) + "]"


def _index_description(op, node, first):
    index_inputs = node.inputs[first:]
    idx_list = getattr(op, "idx_list", None)
    name = type(op).__name__
    if name in ("AdvancedSubtensor1", "AdvancedIncSubtensor1"):
        return "[" + _tensor_index_kind(index_inputs[0]) + "]"
    if idx_list is not None:
        return _walk_idx_list(idx_list, index_inputs, tensor_entries=name.startswith("Advanced"))
    return "[" + ", ".join(_index_entry(v) for v in index_inputs) + "]"


def _dtype_class(dtype):
    if dtype == "bool":
        return "bool"
    if dtype.startswith(("int", "uint")):
        return "int"
    return "float"


def _axis_kind(axis, ndim):
    if axis is None:
        return "axis=None"
    axis = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if ndim is not None and len(axis) == ndim:
        return f"axis=all {ndim} (tuple)"
    return f"axis=partial ({len(axis)} of {ndim})"


def _scalar_keys(scalar_op, prefix, dtypes, where, sink):
    """Add `prefix[ScalarOp]` keys to sink; expand Composite (and nested Composites)."""
    name = type(scalar_op).__name__
    props = [where] if where else []
    if name == "Cast":
        props.append(f"to {scalar_op.o_type.dtype}")
    elif dtypes:
        props.append("out " + "/".join(sorted({_dtype_class(d) for d in dtypes})))
    sink.append((f"{prefix}[{name}]", props))
    inner = getattr(scalar_op, "fgraph", None)
    if name in ("Composite",) or (inner is not None and hasattr(inner, "toposort")):
        for apply in inner.toposort():
            _scalar_keys(apply.op, prefix, [o.type.dtype for o in apply.outputs], f"in {name}", sink)


def _generic_props(op):
    out = []
    for p in getattr(op, "__props__", ()) or ():
        if p in ("inplace", "destroy_map", "view_map", "inplace_pattern", "destroyhandler_tolerate_aliased"):
            continue
        v = getattr(op, p, None)
        r = v.__name__ if isinstance(v, type) else repr(v)
        if " at 0x" in r:
            continue
        out.append(f"{p}={r[:40]}")
    s = ", ".join(out)
    return [s[:100]] if s else []


def describe_node(node):
    """[(key, [property strings])] for one Apply node."""
    from pytensor.scalar.basic import ScalarOp
    from pytensor.tensor.elemwise import CAReduce, DimShuffle, Elemwise

    op = node.op
    name = type(op).__name__
    keys = []
    if isinstance(op, Elemwise):
        _scalar_keys(op.scalar_op, "Elemwise", [o.type.dtype for o in node.outputs], "", keys)
        return keys
    if isinstance(op, ScalarOp):
        _scalar_keys(op, "Scalar", [o.type.dtype for o in node.outputs], "", keys)
        return keys
    if isinstance(op, CAReduce):
        props = [_axis_kind(op.axis, node.inputs[0].type.ndim), "out " + _dtype_class(node.outputs[0].type.dtype)]
        keys.append((f"{name}[{type(op.scalar_op).__name__}]", props))
        if type(op.scalar_op).__name__ == "Composite":
            sub = []
            _scalar_keys(op.scalar_op, "Elemwise", [], "in CAReduce[Composite]", sub)
            keys.extend(k for k in sub if not k[0].endswith("[Composite]"))
        return keys
    if isinstance(op, DimShuffle):
        kinds = []
        if op.drop:
            kinds.append("drop")
        if list(op.shuffle) != sorted(op.shuffle):
            kinds.append("transpose")
        if op.augment:
            kinds.append("expand")
        return [(name, ["+".join(kinds) or "identity"])]
    if name == "Blockwise":
        core = type(op.core_op).__name__
        return [(f"Blockwise[{core}]", [f"signature={getattr(op, 'signature', '?')}"])]
    if name in ("Subtensor", "AdvancedSubtensor", "AdvancedSubtensor1"):
        return [(name, [_index_description(op, node, 1)])]
    if name in ("IncSubtensor", "AdvancedIncSubtensor", "AdvancedIncSubtensor1"):
        verb = "set" if op.set_instead_of_inc else "inc"
        return [(name, [f"{verb} {_index_description(op, node, 2)}"])]
    if name == "Alloc":
        value, *shape = node.inputs
        text = (f"ndim={node.outputs[0].type.ndim}, value={'const' if _is_const(value) else 'sym'}, "
                f"shape={'const' if all(_is_const(s) for s in shape) else 'sym'}")
        return [(name, [text])]
    if name == "Shape_i":
        return [(name, [f"i={op.i}"])]
    if name == "Reshape":
        shape = node.inputs[1]
        return [(name, [f"ndim={op.ndim}, shape={'const' if _is_const(shape) else 'sym'}"])]
    if name == "Join":
        axis = node.inputs[0]
        return [(name, [f"axis={'const' if _is_const(axis) else 'sym'}, n={len(node.inputs) - 1}"])]
    if name == "Split":
        _, axis, sizes = node.inputs
        return [(name, [f"axis={'const' if _is_const(axis) else 'sym'}, sizes={'const' if _is_const(sizes) else 'sym'}"])]
    if name == "MakeVector":
        return [(name, ["all const" if all(_is_const(v) for v in node.inputs) else "sym entries"])]
    if name in ("Softmax", "LogSoftmax", "SoftmaxGrad"):
        axis = getattr(op, "axis", None)
        return [(name, [_axis_kind(axis, node.inputs[0].type.ndim), "static shape" if all(d is not None for d in node.inputs[0].type.shape) else "dynamic shape"])]
    if name == "CumOp":
        return [(f"CumOp[{op.mode}]", [f"axis={op.axis}"])]
    if name == "ARange":
        return [(name, ["const args" if all(_is_const(v) for v in node.inputs) else "sym args"])]
    if name in ("Argmax", "MaxAndArgmax"):
        return [(name, [_axis_kind(op.axis, node.inputs[0].type.ndim)])]
    return [(name, _generic_props(op))]


def family(key: str) -> str:
    base = key.split("[")[0]
    if base in ("Elemwise", "Scalar"):
        return "elemwise"
    if base in ("Shape", "Shape_i", "Reshape", "SpecifyShape", "DimShuffle", "MakeVector", "ScalarFromTensor",
                "TensorFromScalar", "Unbroadcast", "Squeeze"):
        return "shape"
    if base in ("Subtensor", "IncSubtensor", "AdvancedSubtensor", "AdvancedSubtensor1", "AdvancedIncSubtensor",
                "AdvancedIncSubtensor1", "Nonzero", "TakeAlongAxis"):
        return "indexing"
    if base in ("Sum", "Prod", "Max", "Min", "All", "Any", "CAReduce", "Argmax", "MaxAndArgmax", "ProdWithoutZeros"):
        return "reductions"
    if base in ("Alloc", "AllocEmpty", "ARange", "Eye", "Tri", "Join", "Split", "Repeat", "AllocDiag", "ExtractDiag",
                "FillDiagonal", "FillDiagonalOffset", "BroadcastTo", "Pad", "Tile", "Second"):
        return "creation/layout"
    if base in ("SortOp", "ArgSortOp", "CumOp", "SearchsortedOp", "Unique", "BinCountOp", "UniqueOp", "Sort", "ArgSort",
                "TopKOp"):
        return "sort/cum"
    if base in ("Dot", "Dot22", "Dot22Scalar", "Gemv", "Gemm", "Ger", "BatchedDot", "Blockwise", "Einsum",
                "Cholesky", "SolveTriangular", "MatrixInverse", "Det", "SLogDet", "CGemv", "CGer"):
        return "linalg"
    return "misc"


def lifted_today(key: str, mro_names: list[str]) -> str:
    base = key.split("[")[0]
    inner = key[len(base) + 1:-1] if "[" in key else ""
    if base == "Elemwise":
        return "yes" if inner in LIFTED_SCALARS else "no"
    if base == "Blockwise":
        return "yes" if inner in LIFTED_BLOCKWISE_CORES else "no"
    if base == "Scalar":
        return "no"
    for cls in mro_names:
        if cls in LIFTED_OPS:
            return LIFTED_OPS[cls] if cls == base else f"{LIFTED_OPS[cls]} (as {cls})"
    return "no"


def collect_graph(fgraph_or_outputs, record_inner=True):
    """{key: sorted props}, {key: mro names}, {outer key: sorted inner keys} for a graph."""
    from pytensor.graph.traversal import io_toposort

    if hasattr(fgraph_or_outputs, "toposort"):
        nodes = fgraph_or_outputs.toposort()
    else:
        inputs, outputs = fgraph_or_outputs
        nodes = io_toposort(inputs, outputs)
    keys: dict[str, set] = defaultdict(set)
    mro: dict[str, list] = {}
    inner: dict[str, set] = defaultdict(set)
    for node in nodes:
        for key, props in describe_node(node):
            keys[key].update(props)
            mro.setdefault(key, [c.__name__ for c in type(node.op).__mro__])
        op = node.op
        inner_outputs = getattr(op, "inner_outputs", None) if record_inner else None
        if inner_outputs is not None and type(op).__name__ != "Composite":
            try:
                sub_keys, sub_mro, sub_inner = collect_graph((list(op.inner_inputs), list(op.inner_outputs)))
            except Exception as exc:  # noqa: BLE001 (an inner graph we cannot walk)
                sub_keys, sub_mro, sub_inner = {f"<inner graph not walked: {type(exc).__name__}>": []}, {}, {}
            outer = describe_node(node)[0][0]
            inner[outer].update(sub_keys)
            for k, v in sub_inner.items():
                inner[k].update(v)
            for k, v in sub_mro.items():
                mro.setdefault(k, v)
    return {k: sorted(v) for k, v in keys.items()}, mro, {k: sorted(v) for k, v in inner.items()}


# --------------------------------------------------------------------------------------
# Running the corpus under one PyTensor
# --------------------------------------------------------------------------------------
def _maker_classes():
    classes = []
    for mod, attr in (("pytensor.compile.maker", "FunctionMaker"), ("pytensor.compile.function.types", "FunctionMaker")):
        try:
            cls = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError):
            continue
        if cls not in classes:
            classes.append(cls)
    return classes


@contextlib.contextmanager
def no_linking(enabled=True):
    """`pytensor.function` returns a stand-in holding `.maker` (rewritten in __init__) without linking."""
    if not enabled:
        yield
        return
    saved = [(cls, cls.__dict__["create"]) for cls in _maker_classes() if "create" in cls.__dict__]
    for cls, _ in saved:
        cls.create = lambda self, *args, **kwargs: SimpleNamespace(maker=self)
    try:
        yield
    finally:
        for cls, create in saved:
            cls.create = create


def _modes():
    from pytensor.compile.mode import Mode, get_mode
    from pytensor.graph.rewriting.db import RewriteDatabaseQuery

    onnx = Mode(linker="py", optimizer=RewriteDatabaseQuery(include=["fast_run"], exclude=list(ONNX_EXCLUDE)))
    fast = get_mode("FAST_RUN")
    return {"fast_run": "FAST_RUN", "onnx": onnx}, fast, onnx


def _mode_description(mode):
    opt = mode.provided_optimizer
    linker = mode.linker
    inc = sorted(getattr(opt, "include", ()) or ())
    exc = sorted(getattr(opt, "exclude", ()) or ())
    req = sorted(getattr(linker, "required_rewrites", ()) or ())
    inc_l = sorted(getattr(linker, "incompatible_rewrites", ()) or ())
    return (f"{type(linker).__name__}; query include={inc} exclude={exc}; "
            f"linker adds include={req} exclude={inc_l}")


def _short_error(exc):
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {msg[:160]}"


def _float_inputs(inputs):
    return [v for v in inputs if getattr(v.type, "dtype", "").startswith("float")]


def survey_program(prog: Program, modes, link: bool):
    import pytensor
    import pytensor.tensor as pt
    from pytensor.graph.fg import FunctionGraph

    result = {"group": prog.group, "variants": {}, "errors": {}}
    try:
        inputs, outputs = prog.fn()
    except Exception as exc:  # noqa: BLE001 (recorded, never fatal)
        result["errors"]["build"] = _short_error(exc)
        return result
    variants = {"program": outputs}
    float_outs = [o for o in outputs if getattr(o.type, "dtype", "").startswith("float")]
    if prog.wrt is not None:
        wrt = [v for v in inputs if v.name in prog.wrt]
    else:
        wrt = _float_inputs(inputs)
    if not float_outs:
        result["grad_skipped"] = "no float output"
    elif not wrt:
        result["grad_skipped"] = "no float input"
    else:
        try:
            parts = [o if o.type.ndim == 0 else o.sum() for o in float_outs]
            cost = parts[0] if len(parts) == 1 else pt.add(*parts)
            grads = pytensor.grad(cost, wrt, disconnected_inputs="ignore")
            variants["grad"] = list(grads)
        except Exception as exc:  # noqa: BLE001 (recorded, never fatal)
            result["errors"]["grad build"] = _short_error(exc)
    for variant, outs in variants.items():
        graphs = {}
        try:
            fg = FunctionGraph(inputs, outs, clone=True)
            graphs["plain"] = collect_graph(fg)
        except Exception as exc:  # noqa: BLE001 (recorded, never fatal)
            result["errors"][f"{variant}/plain"] = _short_error(exc)
        for kind, mode in modes.items():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with no_linking(not link):
                        f = pytensor.function(inputs, outs, mode=mode, on_unused_input="ignore")
                graphs[kind] = collect_graph(f.maker.fgraph)
            except Exception as exc:  # noqa: BLE001 (recorded, never fatal)
                result["errors"][f"{variant}/{kind}"] = _short_error(exc)
        result["variants"][variant] = {
            kind: {"keys": g[0], "mro": g[1], "inner": g[2]} for kind, g in graphs.items()
        }
    return result


def collect(link=False, only=None):
    warnings.simplefilter("ignore")
    import numpy
    import pytensor

    modes, fast, onnx = _modes()
    started = time.perf_counter()
    programs = {}
    for prog in PROGRAMS:
        if only and prog.name not in only:
            continue
        t0 = time.perf_counter()
        try:
            programs[prog.name] = survey_program(prog, modes, link)
        except Exception as exc:  # noqa: BLE001 (recorded, never fatal)
            programs[prog.name] = {"group": prog.group, "variants": {}, "errors": {"survey": _short_error(exc)},
                                   "traceback": traceback.format_exc()[-2000:]}
        programs[prog.name]["seconds"] = round(time.perf_counter() - t0, 2)
    return {
        "pytensor": pytensor.__version__,
        "numpy": numpy.__version__,
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "floatX": pytensor.config.floatX,
        "fast_run_mode": _mode_description(fast),
        "onnx_mode": _mode_description(onnx),
        "linked": link,
        "seconds": round(time.perf_counter() - started, 1),
        "programs": programs,
    }


# --------------------------------------------------------------------------------------
# Merging and writing the markdown
# --------------------------------------------------------------------------------------
FAMILY_ORDER = ("shape", "indexing", "reductions", "elemwise", "creation/layout", "sort/cum", "linalg", "misc")


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


@dataclass
class Index:
    """Per version: key -> kind -> set of programs; key -> programs where only the grad variant has it."""

    where: dict = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    grad_only: dict = field(default_factory=lambda: defaultdict(set))
    props: dict = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    mro: dict = field(default_factory=dict)
    inner: dict = field(default_factory=lambda: defaultdict(set))


def build_index(run):
    idx = Index()
    for pname, res in run["programs"].items():
        per_variant_keys = defaultdict(set)  # onnx graph keys, per variant
        for variant, graphs in res.get("variants", {}).items():
            for kind, g in graphs.items():
                for key, props in g["keys"].items():
                    idx.where[key][kind].add(pname)
                    if kind == "onnx":
                        per_variant_keys[variant].add(key)
                    for p in props:
                        idx.props[key][kind].add(p)
                for key, names in g["mro"].items():
                    idx.mro.setdefault(key, names)
                for outer, inner_keys in g["inner"].items():
                    idx.inner[outer].update(inner_keys)
        for key in per_variant_keys["grad"] - per_variant_keys["program"]:
            idx.grad_only[key].add(pname)
    return idx


def _counts(idx, key):
    return "/".join(str(len(idx.where.get(key, {}).get(k, ()))) for k in GRAPH_KINDS) if key in idx.where else "-"


def render(runs: list[dict], errors: dict[str, str]) -> str:
    runs = sorted(runs, key=lambda r: tuple(int(p) if p.isdigit() else 0 for p in r["pytensor"].split(".")), reverse=True)
    tags = [r["pytensor"] for r in runs]
    indexes = [build_index(r) for r in runs]
    primary = indexes[0] if indexes else Index()
    all_keys = sorted(set().union(*(i.where.keys() for i in indexes)) if indexes else set())
    all_programs = [p.name for p in PROGRAMS]
    mro = {}
    for i in indexes:
        for k, v in i.mro.items():
            mro.setdefault(k, v)

    def n_programs(i, key, kind=None):
        where = i.where.get(key, {})
        if kind:
            return len(where.get(kind, ()))
        return len(set().union(*where.values())) if where else 0

    def rank(key):
        return (-n_programs(primary, key, "onnx"), -max(n_programs(i, key) for i in indexes), key)

    lines = []
    w = lines.append
    w("# Op survey: the PyTensor Ops ptonnx must lift")
    w("")
    w("Generated by `python -m audit.op_survey` (audit/op_survey.py): each program of the corpus is built, "
      "differentiated, and rewritten in each installed PyTensor line, and the Op classes of every graph are "
      "recorded. Nothing is guessed: an op is listed because some program's graph holds it.")
    w("")
    w(f"Corpus: {len(all_programs)} programs ({sum(p.group == 'array' for p in PROGRAMS)} general array programs, "
      f"{sum(p.group == 'pymc' for p in PROGRAMS)} PyMC-style log-densities written in pure PyTensor), each also as "
      "a gradient (`pytensor.grad` of the sum of its float outputs, or of the log-density, with respect to its float "
      "inputs; for the log-densities, the parameters).")
    w("")
    w("Graph kinds: **plain** = `FunctionGraph(inputs, outputs)` as built; **fast_run** = "
      "`pytensor.function(..., mode=\"FAST_RUN\").maker.fgraph`; **onnx** = ptonnx's ONNX-mode rewrite set, "
      f"`Mode(linker=\"py\", optimizer=RewriteDatabaseQuery(include=[\"fast_run\"], exclude={ONNX_EXCLUDE}))`. "
      "Rewritten graphs are taken from `FunctionMaker`, where PyTensor rewrites; linking is skipped "
      "(`--link` links too, with the same graphs).")
    w("")
    w("| PyTensor | NumPy | FAST_RUN is | ONNX mode is |")
    w("|---|---|---|---|")
    for r in runs:
        w(f"| {r['pytensor']} | {r['numpy']} | {_cell(r['fast_run_mode'])} | {_cell(r['onnx_mode'])} |")
    for exe, err in sorted(errors.items()):
        w(f"| (not run: `{exe}`) | | {_cell(err)} | |")
    w("")
    w("Reading the tables: a count `a/b/c` is the number of programs (program or its gradient) whose plain / "
      "fast_run / onnx graph holds the op, per PyTensor version; `-` = never seen in that version. "
      "Rows are ranked by the onnx count in the newest version. *grad-only* = programs where only the gradient "
      "holds it (onnx graph, any version). *lifted today* = a lifting rule in ptonnx/lifting at commit "
      f"{SNAPSHOT} (by class, along the MRO; Elemwise by scalar op). `Elemwise[X]` counts scalar op X whether applied "
      "directly or inside a `Composite` (property `in Composite`); `Scalar[X]` is a scalar op applied to "
      "ScalarType variables outside any Elemwise. Properties are those seen in the onnx graphs (else any graph).")
    w("")

    w("Which graph ptonnx sees: `ptonnx.compile_function(inputs, outputs)` / `export(inputs, ...)` lift the "
      "**plain** graph; `pytensor.function(..., mode=\"ONNX\")` and `ptonnx.compile(f)` of a function compiled in "
      "the ONNX mode lift the **onnx** graph; `ptonnx.compile(f)` of a default-mode function lifts the **fast_run** one.")
    w("")
    by_family = defaultdict(list)
    for key in all_keys:
        by_family[family(key)].append(key)

    # ---- summary: what is missing ----
    w("## Not lifted today, ranked")
    w("")
    w(f"Ops with no lifting rule at {SNAPSHOT} (or lifted only under a condition some graph breaks), by family, "
      "ranked by the number of programs whose plain or onnx graph holds them in any version; "
      "`(onnx n, plain m)` counts programs in the newest version.")
    w("")
    for fam in FAMILY_ORDER:
        missing = []
        for key in by_family.get(fam, []):
            lifted = lifted_today(key, mro.get(key, []))
            if lifted == "yes":
                continue
            score = max(len(i.where.get(key, {}).get("onnx", set()) | i.where.get(key, {}).get("plain", set())) for i in indexes)
            if score:
                missing.append((-score, key, lifted))
        if missing:
            def counts(key):
                for tag, i in zip(tags, indexes):
                    if n_programs(i, key):
                        prefix = "" if i is primary else f"{tag} only: "
                        return f"({prefix}{n_programs(i, key, 'onnx')}, {n_programs(i, key, 'plain')})"
                return ""

            text = ", ".join(
                f"`{key}` {counts(key)}" + ("" if lifted == "no" else f" [lifted: {lifted}]")
                for _, key, lifted in sorted(missing)
            )
            w(f"- **{fam}**: {text}")
    w("")

    # ---- family tables ----
    w("## Ops by family")
    for fam in FAMILY_ORDER:
        keys = sorted(by_family.get(fam, []), key=rank)
        if not keys:
            continue
        w("")
        w(f"### {fam}")
        w("")
        head = "| op | lifted today | " + " | ".join(f"{t} P/F/O" for t in tags) + " | grad-only | properties | examples |"
        w(head)
        w("|" + "---|" * (head.count("|") - 1))
        for key in keys:
            props = set()
            for i in indexes:
                props |= i.props.get(key, {}).get("onnx", set())
            if not props:
                for i in indexes:
                    for s in i.props.get(key, {}).values():
                        props |= s
            props = sorted(props)
            cap = 40 if fam == "indexing" else 8
            prop_text = "; ".join(props[:cap]) + (f"; (+{len(props) - cap} more)" if len(props) > cap else "")
            grad_only = set().union(*(i.grad_only.get(key, set()) for i in indexes))
            progs = set()
            for i in indexes:
                progs |= i.where.get(key, {}).get("onnx", set())
            if not progs:
                for i in indexes:
                    for s in i.where.get(key, {}).values():
                        progs |= s
            examples = sorted(progs, key=all_programs.index)[:4]
            w(f"| `{key}` | {lifted_today(key, mro.get(key, []))} | "
              + " | ".join(_counts(i, key) for i in indexes)
              + f" | {len(grad_only) or ''} | {_cell(prop_text)} | {', '.join(examples)} |")

    # ---- rewrite effects and version differences ----
    w("")
    w("## What the rewrites add and remove")
    for tag, i in zip(tags, indexes):
        added = [k for k in all_keys if n_programs(i, k, "plain") == 0 and (n_programs(i, k, "onnx") or n_programs(i, k, "fast_run"))]
        removed = [k for k in all_keys if n_programs(i, k, "plain") and not n_programs(i, k, "onnx")]
        fr_only = [k for k in all_keys if n_programs(i, k, "fast_run") and not n_programs(i, k, "onnx")]
        onnx_only = [k for k in all_keys if n_programs(i, k, "onnx") and not n_programs(i, k, "fast_run")]
        w("")
        w(f"**PyTensor {tag}**")
        w("")
        w("- only after rewrites (absent from every plain graph): "
          + (", ".join(f"`{k}` ({n_programs(i, k, 'onnx')}/{n_programs(i, k, 'fast_run')} onnx/fast_run)" for k in added) or "none"))
        w("- in plain graphs, gone from every onnx graph: " + (", ".join(f"`{k}`" for k in removed) or "none"))
        w("- in fast_run graphs but no onnx graph: " + (", ".join(f"`{k}`" for k in fr_only) or "none"))
        w("- in onnx graphs but no fast_run graph: " + (", ".join(f"`{k}`" for k in onnx_only) or "none"))
    if len(indexes) >= 2:
        a, b = indexes[0], indexes[1]
        w("")
        w(f"## Differences between PyTensor {tags[0]} and {tags[1]}")
        w("")
        w("Ops seen in one version's graphs of a kind and not the other's (counts are programs):")
        w("")
        w(f"| op | kind | {tags[0]} | {tags[1]} |")
        w("|---|---|---|---|")
        for key in all_keys:
            for kind in GRAPH_KINDS:
                na, nb = n_programs(a, key, kind), n_programs(b, key, kind)
                if (na == 0) != (nb == 0):
                    w(f"| `{key}` | {kind} | {na} | {nb} |")

    # ---- inner graphs ----
    inner_union = defaultdict(set)
    for i in indexes:
        for outer, inner_keys in i.inner.items():
            inner_union[outer] |= inner_keys
    if inner_union:
        w("")
        w("## Ops with inner graphs (OpFromGraph and subclasses, Scan)")
        w("")
        w("Inner-graph ops are not counted in the tables above; lifting the outer op means inlining or lifting these.")
        w("")
        w("| outer op | inner ops (union over versions and graph kinds) |")
        w("|---|---|")
        for outer in sorted(inner_union):
            w(f"| `{outer}` | {', '.join(f'`{k}`' for k in sorted(inner_union[outer]))} |")

    # ---- failures ----
    w("")
    w("## Failures and skipped gradients")
    w("")
    any_fail = False
    for tag, r in zip(tags, runs):
        for pname in all_programs:
            res = r["programs"].get(pname)
            if res is None:
                continue
            for what, err in sorted(res.get("errors", {}).items()):
                w(f"- {tag} `{pname}` {what}: {_cell(err)}")
                any_fail = True
    if not any_fail:
        w("- none")
    skipped = defaultdict(list)
    for r in runs:
        for pname in all_programs:
            res = r["programs"].get(pname, {})
            if res.get("grad_skipped"):
                skipped[res["grad_skipped"]].append(pname)
    for reason, names in sorted(skipped.items()):
        w(f"- gradient not taken ({reason}): {', '.join(sorted(set(names), key=all_programs.index))}")

    # ---- per program ----
    w("")
    w("## Per program")
    w("")
    w(f"For each program and variant: the ops of the onnx graph under PyTensor {tags[0] if tags else '?'}; then, "
      "per graph kind and version, what differs from that list (`+` extra, `-` missing).")
    for prog in PROGRAMS:
        w("")
        w(f"### {prog.name} ({prog.group})")
        results = [r["programs"].get(prog.name) for r in runs]
        base_variants = (results[0] or {}).get("variants", {}) if results else {}
        variants = sorted(set().union(*((res or {}).get("variants", {}).keys() for res in results)) or set(),
                          key=("program", "grad").index)
        if not variants:
            w("")
            w("- not built: " + "; ".join(f"{t}: {(res or {}).get('errors', {}).get('build', '?')}" for t, res in zip(tags, results)))
            continue
        for variant in variants:
            base = set(base_variants.get(variant, {}).get("onnx", {}).get("keys", {}))
            w("")
            w(f"- **{variant}** onnx ({tags[0]}): " + (", ".join(f"`{k}`" for k in sorted(base)) or "(nothing)"))
            same = []
            for tag, res in zip(tags, results):
                graphs = (res or {}).get("variants", {}).get(variant)
                if graphs is None:
                    w(f"  - {tag}: not built")
                    continue
                for kind in GRAPH_KINDS:
                    if tag == tags[0] and kind == "onnx":
                        continue
                    if kind not in graphs:
                        w(f"  - {tag} {kind}: failed")
                        continue
                    keys = set(graphs[kind]["keys"])
                    plus, minus = sorted(keys - base), sorted(base - keys)
                    diff = " ".join([f"+`{k}`" for k in plus] + [f"-`{k}`" for k in minus])
                    if diff:
                        w(f"  - {tag} {kind}: {diff}")
                    else:
                        same.append(f"{tag} {kind}")
            if same:
                w(f"  - same: {', '.join(same)}")
    w("")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------
def _run_children(pythons, link, only):
    """Run `--collect` under each interpreter in parallel; ([run dicts], {exe: error})."""
    procs = {}
    tmpdir = tempfile.mkdtemp(prefix="op_survey_")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for n, exe in enumerate(pythons):
        if not Path(exe).exists():
            procs[exe] = None
            continue
        out = Path(tmpdir) / f"run{n}.json"
        cmd = [exe, "-m", "audit.op_survey", "--collect", str(out)]
        if link:
            cmd.append("--link")
        if only:
            cmd += ["--only", ",".join(only)]
        procs[exe] = (subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), out)
    runs, errors = [], {}
    for exe, entry in procs.items():
        if entry is None:
            errors[exe] = "interpreter not found"
            continue
        proc, out = entry
        _, stderr = proc.communicate()
        if proc.returncode != 0 or not out.exists():
            errors[exe] = f"exit {proc.returncode}: {stderr.strip().splitlines()[-1] if stderr.strip() else ''}"
            continue
        runs.append(json.loads(out.read_text()))
        out.unlink()
    with contextlib.suppress(OSError):
        os.rmdir(tmpdir)
    return runs, errors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="markdown to write")
    parser.add_argument("--pythons", default=",".join(DEFAULT_PYTHONS),
                        help="comma-separated interpreters, one per PyTensor line (default: %(default)s)")
    parser.add_argument("--collect", metavar="JSON", help="survey with this interpreter only and write JSON")
    parser.add_argument("--link", action="store_true", help="also link each function (C/Numba): slower, same graphs")
    parser.add_argument("--only", help="comma-separated program names (for debugging)")
    args = parser.parse_args(argv)
    only = [s for s in (args.only or "").split(",") if s] or None
    if args.collect:
        run = collect(link=args.link, only=only)
        Path(args.collect).write_text(json.dumps(run, sort_keys=True))
        return 0
    started = time.perf_counter()
    runs, errors = _run_children([p for p in args.pythons.split(",") if p], args.link, only)
    for r in runs:
        failed = sum(1 for p in r["programs"].values() if p.get("errors"))
        print(f"pytensor {r['pytensor']}: {len(r['programs'])} programs in {r['seconds']} s, {failed} with failures")
    for exe, err in errors.items():
        print(f"not run: {exe}: {err}", file=sys.stderr)
    if not runs:
        return 1
    text = render(runs, errors)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out} ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
