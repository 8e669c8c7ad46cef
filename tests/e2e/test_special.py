"""Special functions end to end: every IR op of the "special" family, from PyTensor,
against PyTensor's own evaluation (SciPy), in float16/32/64 and from integers, on
typical and extreme values, at every onnxruntime level; and the tails the issue
names, against mpmath. The per-op ulp bounds over the whole domain are asserted
in tests/e2e/test_accuracy.py (`ptonnx.accuracy`).
"""

from __future__ import annotations

import functools
import warnings

import attrs
import mpmath
import numpy as np
import onnx
import pytensor
import pytensor.tensor as pt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ptonnx
from tests.conftest import ORT_LEVELS, REFERENCE_MODE, assert_same, check_like_pytensor, run_at_every_level, session_options
from tests.e2e import bessel_cases as bessel
from tests.e2e import betainc_cases, betaincinv_cases
from tests.e2e import gamma_inc_cases as gamma_inc
from tests.e2e import gamma_inc_inv_cases as gamma_inc_inv
from tests.e2e import hyp2f1_cases
from tests.e2e import special_cases as more


def _gamma_underflow_sign(x: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Far left Gamma(x) underflows to a zero with the sign of Gamma on (floor(x), floor(x) + 1):
    + where floor(x) is even. SciPy gives -0.0 for some such x (-350120558083.08777)."""
    with np.errstate(invalid="ignore"):
        zero = (x < 0) & np.isfinite(x) & (expected == 0) & (x != np.floor(x))
        positive = np.mod(np.floor(x), 2) == 0
    return np.where(zero, np.where(positive, 0.0, -0.0).astype(expected.dtype), expected)


def _lgamma_of_subnormals(x: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """SciPy's gammaln overflows to inf for subnormal x (its recurrence divides by x);
    PyTensor's C and Numba backends (C's lgamma) give -log|x|, and so does ptonnx."""
    subnormal = (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny) & (x.dtype == np.float64)
    with np.errstate(divide="ignore"):
        return np.where(subnormal, -np.log(np.abs(x)), expected)


@attrs.frozen
class Case:
    build: object
    #: interesting arguments: the op's branch points, poles, tails
    points: tuple[float, ...]
    #: the range typical arguments come from
    typical: tuple[float, float] = (-10.0, 10.0)
    #: (inputs, PyTensor's result) -> the result expected where PyTensor's Python code is wrong
    departure: object = None
    #: arguments below this are left out of PyTensor comparisons (SciPy is too slow there);
    #: tests/e2e/test_accuracy.py covers them against mpmath
    lowest: float = -np.inf
    #: typical and spread arguments drawn (each); fewer where the departure solves in mpmath
    n: int = 400


CASES = {
    "Erf": Case(pt.erf, (0.0, -0.0, 0.5, 1.0, -1.0, 1 - 2**-52, 5.9, 6.0, 26.0, -26.0, 1e-300, 1e300)),
    "Erfc": Case(pt.erfc, (0.0, -0.0, 1.0, -1.0, 8.0, 26.0, 26.6, 27.3, -30.0, 1e-300, 1e300)),
    "Erfcx": Case(pt.erfcx, (0.0, -0.0, 1.0, 8.0, 50.0, 1e8, 1e300, -1.0, -26.0, -26.7, -27.0, 1e-300)),
    "GammaLn": Case(
        pt.gammaln,
        (0.0, -0.0, 1.0, 2.0, 1 + 2**-30, 2 - 2**-30, 0.5, 13.0, 1e300, 2.6e305, -0.5, -1.0, -2.5, -2.4570247382208006,
         -171.5, -(2.0**52) - 0.5, 1e-300, 5e-324, -5e-324),
        (-30.0, 30.0),
        departure=_lgamma_of_subnormals,
    ),
    "Gamma": Case(pt.gamma, (0.0, -0.0, 1.0, 0.5, 13.0, 143.5, 171.6, 171.7, -0.5, -1.0, -170.5, -171.5, -200.5, 1e-300, 1e-310), (-30.0, 30.0),
                  departure=_gamma_underflow_sign),
    "Psi": Case(pt.psi, (0.0, -0.0, 1.0, 1.4616321449683622, 1.2, 1.8, 10.0, -0.5, -1.0, -1.5, -2.5, 1e-300, 1e300), (-30.0, 30.0)),
    "TriGamma": Case(pt.tri_gamma, (0.0, -0.0, 1.0, 0.5, 10.0, -0.5, -1.0, -2.5, 1e-300, 1e300), (-30.0, 30.0), lowest=-1e4),
    **{op: Case(bessel.BUILD[op], bessel.POINTS + zeros, (-30.0, 30.0), departure=bessel.departure(op))
       for op, zeros in (("I0", ()), ("I1", ()), ("J0", bessel.J0_ZEROS), ("J1", bessel.J1_ZEROS))},
    **{op: Case(bessel.with_orders(op), bessel.POINTS + bessel.J1_ZEROS, (-30.0, 60.0), departure=bessel.departure(op))
       for op in ("Ive", "Iv", "Jv", "Kve")},
    "Erfinv": Case(pt.erfinv, more.ERFINV_POINTS, (-1.0, 1.0), departure=more.DEPARTURES["Erfinv"]),
    "Erfcinv": Case(pt.erfcinv, more.ERFCINV_POINTS, (0.0, 2.0), departure=more.DEPARTURES["Erfcinv"]),
    "PolyGamma": Case(more.polygamma_with_orders, more.POLYGAMMA_POINTS, (-10.0, 30.0), departure=more.DEPARTURES["PolyGamma"],
                      lowest=-1e4),
    "OwensT": Case(more.owens_t_with_a, more.OWENS_T_POINTS, (-10.0, 10.0), departure=more.DEPARTURES["OwensT"]),
    **{op: Case(gamma_inc.with_k(op), gamma_inc.GAMMA_INC_POINTS, (0.0, 40.0), departure=gamma_inc.departure(op))
       for op in gamma_inc.BUILD},
    **{op: Case(gamma_inc_inv.with_a(op), gamma_inc_inv.POINTS, (0.0, 1.0), departure=gamma_inc_inv.departure(op), n=30)
       for op in gamma_inc_inv.BUILD},
    "BetaInc": Case(betainc_cases.with_ab, betainc_cases.POINTS, (0.0, 1.0), departure=betainc_cases.departure),
    "BetaIncInv": Case(betaincinv_cases.with_ab, betaincinv_cases.POINTS, (0.0, 1.0), departure=betaincinv_cases.departure,
                       n=100),
    "Hyp2F1": Case(hyp2f1_cases.with_abc, hyp2f1_cases.POINTS, (-19.0, 0.95), departure=hyp2f1_cases.departure),
}

EDGES = (np.inf, -np.inf, np.nan)


def test_every_special_op_has_a_case():
    ops = {name for name, s in ptonnx.ir.all_schemas().items() if s.family == "special"}
    assert ops <= set(CASES), "add a Case for these special functions"


def _values(case: Case, dtype: str, rng: np.random.Generator) -> np.ndarray:
    lo, hi, n = *case.typical, case.n
    typical = rng.uniform(lo, hi, n)
    spread = np.ldexp(rng.uniform(0.5, 1, n), rng.integers(-1074, 1024, n)) * rng.choice([-1, 1], n)
    with np.errstate(over="ignore"):
        values = np.concatenate([case.points, EDGES, typical, spread]).astype(dtype)
    return values[~(values < case.lowest)]


def _compare(case: Case, values: np.ndarray):
    departed: dict = {}  # PyTensor's result -> the expected one: one departure (mpmath) per graph and level

    def compare(actual, expected, context):
        if case.departure is not None:
            key = (expected.dtype.str, expected.shape, expected.tobytes())
            if key not in departed:
                departed[key] = case.departure(values, expected).astype(expected.dtype)
            expected = departed[key]
        assert_same(actual, expected, context)

    return compare


#: float16/float32 are float64's decomposition between Casts (onnxruntime_dtypes.py): the PyTensor line only
#: decides which ops lift, which float64 shows in both environments
NARROW = pytest.mark.one_environment


@pytest.mark.parametrize("dtype", [pytest.param("float16", marks=NARROW), pytest.param("float32", marks=NARROW), "float64"])
@pytest.mark.parametrize("op", sorted(CASES))
def test_matches_pytensor(op, dtype):
    case = CASES[op]
    x = pt.vector("x", dtype=dtype)
    values = _values(case, dtype, np.random.default_rng(0))
    check_like_pytensor([x], [case.build(x)], [values], compare=_compare(case, values))


@pytest.mark.parametrize("op", sorted(CASES))
def test_integer_inputs_are_converted_as_pytensor_does(op):
    x = pt.vector("x", dtype="int64")
    values = np.array([0, 1, -1, 5, -30, 2**62, -(2**63), 2**63 - 1], dtype="int64")
    check_like_pytensor([x], [CASES[op].build(x)], [values], compare=_compare(CASES[op], values.astype("float64")))


@functools.cache
def _compiled_once(op: str):
    """(PyTensor's evaluation, {level: compiled model}) of `op` on a float64 vector, built once
    per op: the examples below differ only in values (compiling the iterative ops takes seconds)."""
    x = pt.dvector("x")
    out = CASES[op].build(x)
    cm = ptonnx.compile(ptonnx.api.function_graph([x], [out]))
    onnx.checker.check_model(cm.model, full_check=True)
    return pytensor.function([x], out, mode=REFERENCE_MODE), {level: cm.with_session_options(session_options(level)) for level in ORT_LEVELS}


@given(st.sampled_from(sorted(CASES)), st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=20))
def test_any_float64_matches_pytensor(op, values):
    values = np.array(values)
    values = values[~(values < CASES[op].lowest)]
    evaluate, runs = _compiled_once(op)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = evaluate(values)
    for level, run in runs.items():
        _compare(CASES[op], values)(run(values)[0], expected, f"{op} at {level} on {values!r}")


def _mp(fn, x: float) -> float:
    with mpmath.workprec(200):
        return float(fn(mpmath.mpf(x)))


#: the tails the issue names (and more): (PyTensor expression, argument, mpmath value, relative bound)
TAILS = [
    ("erfc(26)", pt.erfc, 26.0, _mp(mpmath.erfc, 26.0), 1e-14),
    ("erfc(-26)", pt.erfc, -26.0, 2.0, 1e-16),
    ("erfcx(1e8)", pt.erfcx, 1e8, _mp(lambda t: mpmath.exp(t * t) * mpmath.erfc(t), 1e8), 1e-15),
    ("erf(1e-300)", pt.erf, 1e-300, _mp(mpmath.erf, 1e-300), 1e-15),
    ("log1mexp(-1e-300)", pt.log1mexp, -1e-300, _mp(lambda t: mpmath.log(-mpmath.expm1(t)), -1e-300), 1e-15),
    ("log1mexp(-800)", pt.log1mexp, -800.0, _mp(lambda t: mpmath.log(1 - mpmath.exp(t)), -800.0), 1e-15),
    ("gammaln(1e300)", pt.gammaln, 1e300, _mp(lambda t: mpmath.loggamma(t), 1e300), 1e-15),
    ("gammaln(1 + 1e-10)", pt.gammaln, 1 + 1e-10, _mp(lambda t: mpmath.loggamma(t), 1 + 1e-10), 1e-14),
    ("gammaln(2 - 1e-10)", pt.gammaln, 2 - 1e-10, _mp(lambda t: mpmath.loggamma(t), 2 - 1e-10), 1e-14),
    ("gammaln(1 - 2**-53)", pt.gammaln, 1 - 2**-53, _mp(lambda t: mpmath.loggamma(t), 1 - 2**-53), 1e-14),
    ("gammaln(2 + 2**-51)", pt.gammaln, 2 + 2**-51, _mp(lambda t: mpmath.loggamma(t), 2 + 2**-51), 1e-14),
    ("gammaln(5e-324)", pt.gammaln, 5e-324, _mp(lambda t: mpmath.loggamma(t), 5e-324), 1e-15),
    ("psi(-0.5)", pt.psi, -0.5, _mp(mpmath.digamma, -0.5), 1e-14),
    ("psi(1.4616321449683622)", pt.psi, 1.4616321449683622, _mp(mpmath.digamma, 1.4616321449683622), 1e-14),
    ("gamma(171.6)", pt.gamma, 171.6, _mp(mpmath.gamma, 171.6), 1e-14),
    ("gamma(-170.5)", pt.gamma, -170.5, _mp(mpmath.gamma, -170.5), 1e-14),
    ("tri_gamma(-2.5)", pt.tri_gamma, -2.5, _mp(lambda t: mpmath.psi(1, t), -2.5), 1e-14),
    ("sigmoid(-700)", pt.sigmoid, -700.0, _mp(lambda t: 1 / (1 + mpmath.exp(-t)), -700.0), 1e-14),
    ("arcsinh(1e300)", pt.arcsinh, 1e300, _mp(mpmath.asinh, 1e300), 1e-15),
    ("arctanh(1e-300)", pt.arctanh, 1e-300, 1e-300, 1e-16),
    ("sinh(710)", pt.sinh, 710.0, _mp(mpmath.sinh, 710.0), 1e-15),
    ("tan(1.5707963267948966)", pt.tan, np.pi / 2, _mp(mpmath.tan, np.pi / 2), 1e-15),
    *more.tails(),
]


@pytest.mark.one_environment
@pytest.mark.parametrize(("name", "build", "arg", "exact", "rtol"), TAILS, ids=[t[0] for t in TAILS])
def test_tails(name, build, arg, exact, rtol):
    x = pt.dvector("x")
    cm = ptonnx.compile_function([x], [build(x)])
    for level, (got,) in run_at_every_level(cm, np.array([arg])).items():
        assert np.isfinite(got[0]) and abs(got[0] - exact) <= rtol * abs(exact), f"{name} at {level}: {got[0]!r}, exact {exact!r}"


@pytest.mark.one_environment  # unknown dims are ptonnx's own; which ops lift, test_matches_pytensor shows in both
@pytest.mark.parametrize("op", sorted(CASES))
def test_size_zero_and_unknown_dims(op):
    """One model with unknown dims, called at each shape."""
    x = pt.matrix("x", dtype="float64", shape=(None, None))
    value_lists = [[np.linspace(-3.3, 3.7, int(np.prod(shape))).reshape(shape)] for shape in [(0, 3), (3, 0), (2, 3)]]
    # where SciPy is wrong (Hyp2F1 for z > 1, the incomplete gamma functions at a subnormal k) the departure applies here too
    compare_for = (lambda vals: _compare(CASES[op], vals[0])) if CASES[op].departure is not None else None
    check_like_pytensor([x], [CASES[op].build(x)], value_lists[0], more_values=value_lists[1:], compare_for=compare_for)


def test_polygamma_reference_reflection_is_mpmaths_psi():
    """references/special_reference.py's reflection formula (for x < 0) against mpmath's own psi at 1200 bits."""
    from references.special_reference import _polygamma_one

    for n, x in [(1, -0.5), (2, -2.5), (4, -0.49977397564859133), (7, -3.3), (20, -1.25), (50, -762.5)]:
        with mpmath.workprec(1200):
            exact = mpmath.psi(n, mpmath.mpf(x))
        assert abs(float(_polygamma_one(float(n), x)) / float(exact) - 1) < 1e-16, (n, x)


@pytest.mark.parametrize(("dtype", "orders"), [
    ("bool", [0, 1]), ("int8", [-128, -1, 0, 1, 2, 5, 127]), ("uint8", [0, 3, 170, 171, 255]),
    ("int64", [-(2**63), -5, 6, 170, 171, 2**63 - 1]), ("uint64", [0, 2, 2**63, 2**64 - 1]),
])
def test_polygamma_orders_of_every_integer_dtype(dtype, orders):
    """Any integer (or bool) order at run time: 0..170 as exact (mpmath), NaN outside, where n!
    overflows (SciPy: NaN or ±inf there) or n < 0 (SciPy: NaN)."""
    from references.special_reference import polygamma as exact

    n, x = pt.vector("n", dtype=dtype), pt.dvector("x")
    args = np.array([0.5, 2.5, -2.5, -0.3, 1e3])
    ns, xs = np.repeat(np.array(orders, dtype=dtype), args.size), np.tile(args, len(orders))
    valid = (ns.astype(np.float64) >= 0) & (ns.astype(np.float64) <= 170)
    expected = np.full(xs.shape, np.nan)
    with np.errstate(over="ignore"):
        expected[valid] = exact(ns[valid].astype(np.float64), xs[valid].astype(np.longdouble)).astype(np.float64)
    cm = ptonnx.compile_function([n, x], [pt.polygamma(n, x)])
    for level, (got,) in run_at_every_level(cm, ns, xs).items():
        np.testing.assert_allclose(got, expected, rtol=1e-14, err_msg=level)
