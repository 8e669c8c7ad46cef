"""Every random variable ptonnx draws, against SciPy: Cramér–von Mises (continuous) or
chi-square (discrete) at fixed keys, so the tests are deterministic; means and variances
within 6 standard errors; both onnxruntime levels bit for bit alike; shapes and dtypes as
PyTensor's (broadcast parameters, size given or not, unknown and empty sizes, float32);
parameters PyTensor refuses refused with its exception class."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.stats as st

import ptonnx
from ptonnx.keys import key
from tests.conftest import REFERENCE_MODE, run_at_every_level

N = 20_000
#: a fit is rejected below this p-value (fixed keys: the same p-value every run)
P_MIN = 1e-3


@attrs.frozen
class Case:
    draw: Callable  # (rng, *params, size=..., **kw) -> a PyTensor RV
    scipy: Callable  # (*params) -> a frozen SciPy distribution
    params: tuple  # parameter sets that draw
    dtypes: tuple = ("float64",)  # the parameters' dtypes
    constant: tuple = ()  # (parameters, the one value every draw takes)
    bad: tuple = ()  # parameters PyTensor refuses
    discrete: bool = False


def _dtypes(case: Case, params) -> list[str]:
    """Each parameter's dtype (one dtype stands for all)."""
    return list(case.dtypes) if len(case.dtypes) == len(params) else [case.dtypes[0]] * len(params)


def _arrays(case: Case, params) -> list[np.ndarray]:
    return [np.asarray(p, dtype=d) for p, d in zip(params, _dtypes(case, params), strict=True)]


def rv(name):
    fn = getattr(pt.random, name)
    return lambda rng, *p, size=None, **kw: fn(*p, size=size, rng=rng, **kw)


CASES = {
    "RandomUniform": Case(rv("uniform"), lambda lo, hi: st.uniform(lo, hi - lo), ((0.0, 1.0), (-1e300, 1e300), (1e-300, 3e-300)),
                          constant=((5.0, 5.0), 5.0), bad=((0.0, np.inf), (1.0, 0.0))),
    "RandomNormal": Case(rv("normal"), st.norm, ((0.0, 1.0), (0.0, 1e-300), (1e300, 1e299)), constant=((2.0, 0.0), 2.0),
                         bad=((0.0, -1.0),)),
    "RandomHalfNormal": Case(rv("halfnormal"), st.halfnorm, ((0.0, 1.0), (0.0, 1e300), (3.0, 2.0)), constant=((1.0, 0.0), 1.0),
                             bad=((0.0, -1.0), (0.0, np.nan))),
    "RandomLogNormal": Case(rv("lognormal"), lambda m, s: st.lognorm(s, scale=np.exp(m)), ((0.0, 1.0), (-700.0, 1.0), (2.0, 0.01)),
                            constant=((1.0, 0.0), np.e), bad=((0.0, -1.0),)),
    "RandomExponential": Case(rv("exponential"), lambda s: st.expon(scale=s), ((1.0,), (1e-300,), (1e300,)), constant=((0.0,), 0.0),
                              bad=((-1.0,),)),
    "RandomTruncExpon": Case(rv("truncexpon"), st.truncexpon, ((1.0, 0.0, 1.0), (1e-6, 0.0, 1.0), (50.0, -2.0, 3.0)),
                             bad=((0.0, 0.0, 1.0), (1.0, 0.0, -1.0))),
    "RandomGumbel": Case(rv("gumbel"), st.gumbel_r, ((0.0, 1.0), (-1e3, 1e-3), (5.0, 1e300)), bad=((0.0, -1.0),)),
    "RandomLogistic": Case(rv("logistic"), st.logistic, ((0.0, 1.0), (0.0, 1e-300), (-5.0, 1e5)), bad=((0.0, -1.0),)),
    "RandomLaplace": Case(rv("laplace"), st.laplace, ((0.0, 1.0), (0.0, 1e-300), (-5.0, 1e5)), constant=((3.0, 0.0), 3.0),
                          bad=((0.0, -1.0),)),
    "RandomCauchy": Case(rv("cauchy"), st.cauchy, ((0.0, 1.0), (0.0, 1e-300), (-3.0, 1e3)), bad=((0.0, -1.0),)),
    "RandomHalfCauchy": Case(rv("halfcauchy"), st.halfcauchy, ((0.0, 1.0), (0.0, 1e-300), (2.0, 5.0)), bad=((0.0, -1.0),)),
    "RandomWeibull": Case(rv("weibull"), st.weibull_min, ((1.0,), (0.05,), (50.0,)), constant=((0.0,), 0.0), bad=((-1.0,),)),
    "RandomPareto": Case(rv("pareto"), lambda b, s: st.pareto(b, scale=s), ((1.0, 1.0), (0.05, 2.0), (50.0, 1e-3)),
                         bad=((0.0, 1.0), (1.0, -1.0))),
    "RandomTriangular": Case(rv("triangular"), lambda lo, m, hi: st.triang((m - lo) / (hi - lo), lo, hi - lo),
                             ((0.0, 0.5, 1.0), (0.0, 0.0, 1.0), (-1.0, 1.0, 1.0)), bad=((1.0, 0.0, 2.0), (0.0, 3.0, 2.0), (1.0, 1.0, 1.0))),
    "RandomWald": Case(rv("wald"), lambda m, s: st.invgauss(m / s, scale=s), ((1.0, 1.0), (1e-3, 1e3), (1e3, 1e-3)),
                       bad=((0.0, 1.0), (1.0, -1.0))),
    "RandomBernoulli": Case(rv("bernoulli"), st.bernoulli, ((0.3,), (0.999,)), constant=((1.0,), 1), bad=((1.5,), (np.nan,)),
                            discrete=True),
    "RandomGeometric": Case(rv("geometric"), st.geom, ((0.5,), (1e-3,), (0.9,)), constant=((1.0,), 1), bad=((0.0,), (np.nan,)),
                            discrete=True),
    "RandomIntegers": Case(rv("integers"), lambda lo, hi: st.randint(lo, hi), ((0, 2), (-5, 5), (-(2**40), 2**40)),
                           dtypes=("int64", "int64"), constant=((7, 8), 7), bad=((3, 3),), discrete=True),
    "RandomCategorical": Case(rv("categorical"), lambda p: st.rv_discrete(values=(np.arange(len(p)), p)),
                              ((np.array([0.2, 0.3, 0.5]),), (np.array([0.0, 0.9, 0.1]),), (np.array([1e-3, 0.0, 0.999]),)),
                              constant=((np.array([0.0, 0.0, 1.0]),), 2), discrete=True),
}
#: each random IR op and the tests that reach it from PyTensor (read by tests/ir/test_registry.py)
REACHED_BY = {op: ("test_draws_match_scipy", "test_shapes_and_dtypes_are_pytensors") for op in CASES}


def _compiled(case: Case, size=(N,), **kw):
    params = [pt.tensor(f"p{i}", dtype=a.dtype.name, shape=a.shape) for i, a in enumerate(_arrays(case, case.params[0]))]
    rng = pytensor.shared(np.random.default_rng(0), name="rng")
    out = case.draw(rng, *params, size=size, **kw)
    return params, out, ptonnx.compile_function(params, [out])


def _draw(cm, params, seed: int):
    runs = run_at_every_level(cm, *params, key(seed))
    (first,), (second,) = runs.values()
    np.testing.assert_array_equal(first, second, err_msg="the onnxruntime levels draw differently")
    return first


def _fits(case: Case, x: np.ndarray, params) -> None:
    dist = case.scipy(*params)
    if case.discrete:
        values, counts = np.unique(x, return_counts=True)
        support = np.arange(values.min(), values.max() + 1) if values.max() - values.min() < 10**6 else None
        if support is None:  # integers over a wide range: the scaled values are uniform on [0, 1)
            lo, hi = params
            assert st.cramervonmises((x - lo) / (hi - lo), "uniform").pvalue > P_MIN
        else:
            expected = dist.pmf(support) * x.size
            observed = np.array([counts[values == s].sum() for s in support])
            assert observed[expected == 0].sum() == 0, "draws where the distribution has no mass"
            keep = expected >= 5
            obs = np.append(observed[keep], observed[~keep].sum())
            exp = np.append(expected[keep], x.size - expected[keep].sum())
            obs, exp = obs[exp > 0], exp[exp > 0]
            if len(obs) > 1:
                assert st.chisquare(obs, exp).pvalue > P_MIN, (params, obs, exp)
    else:
        assert np.isfinite(x).all() or not np.isfinite(dist.ppf(1 - 1e-12)), "a non-finite draw"
        assert st.cramervonmises(x, dist.cdf).pvalue > P_MIN, params
    mean, var, kurt = (float(m) for m in dist.stats(moments="mvk"))
    if np.isfinite(var) and var > 0 and np.isfinite(mean):
        assert abs(x.mean() - mean) < 6 * np.sqrt(var / x.size), (params, x.mean(), mean)
        if np.isfinite(kurt) and np.isfinite(var * var * (kurt + 2)):
            spread = np.sqrt((kurt + 2 + 2 / (x.size - 1)) / x.size) * var  # the sample variance's error
            assert abs(x.var() - var) < 6 * spread, (params, x.var(), var)


@pytest.mark.one_environment  # the numbers are ptonnx's formulas; the PyTensor line shows in the shapes test
@pytest.mark.parametrize("op", sorted(CASES))
def test_draws_match_scipy(op):
    case = CASES[op]
    _, _, cm = _compiled(case)
    for i, params in enumerate(case.params):
        _fits(case, _draw(cm, _arrays(case, params), seed=100 + i), params)
    if case.constant:
        params, value = case.constant
        x = _draw(cm, _arrays(case, params), seed=5)
        np.testing.assert_allclose(x, value, rtol=1e-15)


@pytest.mark.parametrize("op", sorted(op for op in CASES if CASES[op].bad))
def test_bad_parameters_raise_as_pytensor(op):
    case = CASES[op]
    params, out, cm = _compiled(case, size=(5,))
    reference = pytensor.function(params, out, mode=REFERENCE_MODE)
    for bad in case.bad:
        arrays = _arrays(case, bad)
        with pytest.raises(Exception) as pytensors:
            reference(*arrays)
        with pytest.raises(pytensors.type):
            cm(*arrays, key(1))


def _broadcast_params(case: Case):
    """The first parameter set's values as a column (unknown length) and rows (length 2)."""
    arrays, variables = [], []
    for i, p in enumerate(_arrays(case, case.params[0])):
        d = p.dtype.name
        if p.ndim:  # a vector parameter (categorical's p): two rows of it
            arrays.append(np.stack([p, p]))
            variables.append(pt.tensor(f"p{i}", dtype=d, shape=(None, p.shape[0])))
        elif i == 0:
            arrays.append(np.full((3, 1), p))
            variables.append(pt.tensor(f"p{i}", dtype=d, shape=(None, 1)))
        else:
            arrays.append(np.full((2,), p))
            variables.append(pt.tensor(f"p{i}", dtype=d, shape=(2,)))
    return variables, arrays


@pytest.mark.parametrize("op", sorted(CASES))
def test_shapes_and_dtypes_are_pytensors(op):
    case = CASES[op]
    variables, arrays = _broadcast_params(case)
    kinds = [dict(size=None), dict(size=(4, 3, 2) if op != "RandomCategorical" else (4, 2)), dict(size=(0, 3, 2) if op != "RandomCategorical" else (0, 2))]
    if not case.discrete:
        kinds.append(dict(size=None, dtype="float32"))
    for kw in kinds:
        rng = pytensor.shared(np.random.default_rng(0), name="rng")
        out = case.draw(rng, *variables, **kw)
        expected = pytensor.function(variables, out, mode=REFERENCE_MODE)(*arrays)
        (got,) = ptonnx.compile_function(variables, [out])(*arrays, key(3))
        assert got.shape == expected.shape and got.dtype == expected.dtype, (kw, got.shape, expected.shape, got.dtype)


def test_every_random_op_is_reached_from_pytensor():
    for op, case in CASES.items():
        params, out, _ = _compiled(case, size=(2,))
        assert op in ptonnx.lift(ptonnx.api.function_graph(params, [out])).op_counts(), op
    from tests.random.test_discrete_loops import REACHED_BY as DISCRETE
    from tests.random.test_multivariate import REACHED_BY as MULTIVARIATE
    from tests.random.test_rejection import REACHED_BY as REJECTION

    drawing = {name for name, s in ptonnx.ir.all_schemas().items() if s.family == "random" and name.startswith("Random")}
    assert set(CASES) | set(REJECTION) | set(MULTIVARIATE) | set(DISCRETE) == drawing


@pytest.mark.one_environment
@pytest.mark.parametrize("op", ["RandomUniform", "RandomNormal", "RandomExponential"])
def test_the_standard_variates_at_two_million_draws(op):
    """The variates others are built on, at a size where a 1% error in scale or a skew shows:
    variance within 5 standard errors (0.5% for the normal), the fit to SciPy's at p > 1e-3."""
    case = CASES[op]
    params, _, cm = _compiled(case, size=(2_000_000,))
    x = _draw(cm, [np.asarray(p) for p in case.params[0]], seed=9)
    dist = case.scipy(*case.params[0])
    mean, var, kurt = (float(m) for m in dist.stats(moments="mvk"))
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / x.size)
    assert abs(x.var() - var) < 5 * np.sqrt((kurt + 2) / x.size) * var
    assert st.cramervonmises(x, dist.cdf).pvalue > P_MIN
    assert st.cramervonmises(x[: x.size // 2], dist.cdf).pvalue > P_MIN  # the first half alone too
