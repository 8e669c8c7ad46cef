"""The portable elementary functions (`decompositions/random/portable.py`): the same bytes in
interpret and at both onnxruntime levels, within their stated ulps of mpmath's values at the ends
of their ranges, and NumPy's special values (0, inf, NaN, zero signs) where the result is not
finite and non-zero; and no random op's decomposition keeps a runtime's transcendental kernel."""

from __future__ import annotations

import mpmath
import numpy as np
import onnxruntime as ort
import pytest

from ptonnx import stages
from ptonnx.decompositions.expr import Ex, Scope
from ptonnx.decompositions.random import portable as P
from ptonnx.ir import Builder, Graph, TensorType, Value, interpret
from ptonnx.ir.core import nested_graphs
from ptonnx.ir.ops.random import DISTRIBUTIONS
from ptonnx.passes.decompose import decompose
from tests.conftest import ORT_LEVELS, session_options

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

RNG = np.random.default_rng(20261129)
EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
                  1.7976931348623157e308, -1.7976931348623157e308, 1.0, -1.0])
POWERS = np.concatenate([2.0 ** np.arange(-1074, 1024, 3), np.nextafter(2.0 ** np.arange(-1020, 1024, 5), 0),
                         np.nextafter(2.0 ** np.arange(-1020, 1023, 5), np.inf)])


def _graph(fn, n_in: int) -> Graph:
    g = Graph()
    xs = [g.add_input(TensorType("float64", (None,)), f"x{i}") for i in range(n_in)]
    g.set_outputs([fn(*(Ex(Scope(Builder(g)), x) for x in xs)).value])
    return g


def _everywhere(fn, *arrays) -> np.ndarray:
    """fn's result in interpret (its decomposition) and at both onnxruntime levels: the same bytes."""
    g = _graph(fn, len(arrays))
    decompose(g)
    (expected,) = interpret(g, *arrays)
    model = stages.compile_graph(g).model
    feed = {i.name: a for i, a in zip(model.graph.input, arrays, strict=True)}
    for level in ORT_LEVELS:
        session = ort.InferenceSession(model.SerializeToString(), session_options(level), providers=["CPUExecutionProvider"])
        (got,) = session.run(None, feed)
        assert got.tobytes() == expected.tobytes(), f"onnxruntime at {level} differs from interpret"
    return expected


def _same_special(got, want):
    """Equal values, zero signs and NaN positions."""
    same = (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (got[~same][:8], want[~same][:8])


def _check(fn, exact, numpy_fn, bound, *arrays, signed_zeros=True, slack=None):
    """fn within `bound` ulps of mpmath's `exact` (plus `slack(*arrays)` ulps) where NumPy's result is
    finite and non-zero; NumPy's value elsewhere. Returns the largest error seen (ulps)."""
    got = _everywhere(fn, *arrays)
    with np.errstate(all="ignore"):
        want = numpy_fn(*arrays)
    normal = np.isfinite(want) & (want != 0)
    if signed_zeros:
        _same_special(got[~normal], want[~normal])
    else:
        np.testing.assert_array_equal(got[~normal], want[~normal])
    worst = 0.0
    allowed = bound + (slack(*arrays) if slack else 0.0)
    for i in np.flatnonzero(normal):
        e = exact(*(mpmath.mpf(float(a[i])) for a in arrays))
        err = float(abs(mpmath.mpf(float(got[i])) - e) / np.spacing(abs(float(e))))
        limit = allowed[i] if np.ndim(allowed) else allowed
        assert err <= limit, (fn.__name__, [float(a[i]) for a in arrays], float(got[i]), err)
        worst = max(worst, err)
    return worst


@pytest.fixture(autouse=True, scope="module")
def _precision():
    with mpmath.workprec(160):
        yield


def test_log():
    x = np.concatenate([np.exp(RNG.uniform(-744, 709, 4000)), RNG.uniform(0.5, 2.0, 2000), POWERS, EDGES, -POWERS[:5]])
    assert _check(P.log, mpmath.log, np.log, 1.0, x) < 1.0


def test_exp():
    x = np.concatenate([RNG.uniform(-745.2, 709.8, 4000), RNG.uniform(-1, 1, 1000), RNG.uniform(-1e-9, 1e-9, 500),
                        np.linspace(-745.2, -708.3, 1000), np.nextafter(709.782712893384, [0, 1000]),
                        [-745.1332191019411, -745.1332191019412, 1e-300, -1e-300, 710.0, -746.0], EDGES, POWERS[::20]])
    assert _check(P.exp, mpmath.exp, np.exp, 1.0, x) < 1.0


def test_log1p():
    x = np.concatenate([RNG.uniform(-1, 10, 3000), -np.exp(RNG.uniform(-745, 0, 2000)), np.exp(RNG.uniform(-745, 709, 2000)),
                        [-1.0, np.nextafter(-1.0, 0), -1.5, 1e300, 2.0**-53, -(2.0**-53)], EDGES, POWERS[::10]])
    assert _check(P.log1p, mpmath.log1p, np.log1p, 2.0, x) < 2.0


def test_expm1():
    x = np.concatenate([RNG.uniform(-40, 709, 3000), RNG.uniform(-1e-3, 1e-3, 1000), -np.exp(RNG.uniform(-745, 6, 1500)),
                        np.exp(RNG.uniform(-745, 6.5, 1500)), [709.78, 710.0, -40.0, -800.0], EDGES])
    assert _check(P.expm1, mpmath.expm1, np.expm1, 2.5, x) < 2.5


def test_power_has_cs_special_values_and_its_bound():
    """pow at 0, inf, 1, -1, NaN and negative bases as C's; elsewhere within 1 + 2 |y log x| ulps (the
    rounding of y log x, magnified by exp: as that of y itself would be)."""
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, -2.0, -0.5, 2.0, 0.5]
    xs, ys = np.meshgrid(specials, [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, np.inf, -np.inf, np.nan], indexing="ij")
    x = np.concatenate([np.exp(RNG.uniform(-40, 40, 3000)), RNG.uniform(0, 1, 1000), xs.ravel()])
    y = np.concatenate([RNG.uniform(-20, 20, 3000), RNG.uniform(-50, 50, 1000), ys.ravel()])

    def exact(a, b):
        return mpmath.power(abs(a), b) * (-1 if a < 0 and b % 2 == 1 else 1)

    def slack(a, b):
        with np.errstate(all="ignore"):
            return np.nan_to_num(2 * np.abs(b * np.log(np.abs(a))), nan=0.0)  # pow(0, 0) = 1

    _check(P.power, exact, np.power, 1.0, x, y, slack=slack)


def _turns(n: int) -> np.ndarray:
    """Uniforms on [0, 1) as `unit` makes them (multiples of 2**-53), with the octants' ends."""
    u = np.floor(RNG.uniform(0, 1, n) * 2**53) * 2.0**-53
    ends = np.arange(16) / 16
    return np.concatenate([u, ends, np.nextafter(ends[1:], 0), ends + 2.0**-53, [1 - 2.0**-53]])


def test_sin_and_cos_of_a_turn():
    """sin(2 pi u), cos(2 pi u) within 1 ulp, exact 0 and +-1 at the quarter turns (no sign kept)."""
    t = 2 * _turns(5000)
    exact_zero_sin, exact_zero_cos = t % 1 == 0, (t - 0.5) % 1 == 0
    for k, exact, zero in ((0, lambda v: mpmath.sin(mpmath.pi * v), exact_zero_sin), (1, lambda v: mpmath.cos(mpmath.pi * v), exact_zero_cos)):
        def fn(v, k=k):
            return P.sincos_pi(v)[k]

        fn.__name__ = ("sin", "cos")[k]
        got = _everywhere(fn, t)
        assert (got[zero] == 0).all()
        worst = 0.0
        for v, g in zip(t[~zero], got[~zero], strict=True):
            e = exact(mpmath.mpf(float(v)))
            worst = max(worst, float(abs(mpmath.mpf(float(g)) - e) / np.spacing(abs(float(e)))))
        assert worst <= 1.0, (fn.__name__, worst)


def test_tan_pi():
    """tan(pi v) on (-1/2, 1/2), as the Cauchy's open uniforms make v: within 2.5 ulps, to the poles."""
    u = (np.floor(RNG.uniform(0, 1, 4000) * 2**52) + 0.5) * 2.0**-52
    v = np.concatenate([u - 0.5, [2.0**-53 - 0.5, 0.5 - 2.0**-53, 0.0, 0.25, -0.25]])
    assert _check(P.tan_pi, lambda a: mpmath.tan(mpmath.pi * a), lambda a: np.tan(np.pi * a), 2.5, v) < 2.5


def test_acos():
    w = np.concatenate([RNG.uniform(-1, 1, 3000), 1 - np.exp(RNG.uniform(-37, 0, 1000)), -1 + np.exp(RNG.uniform(-37, 0, 1000)),
                        [-1.0, 1.0, 0.0, -0.0, 0.5, -0.5, np.nan, 1.5, -1.5, np.inf, 1e-300]])
    assert _check(P.acos, mpmath.acos, np.arccos, 2.5, w) < 2.5


def test_the_forms_for_uniforms_are_the_general_ones_there():
    """log(u, normal=True) and log1p(-u, small=True), for u as `unit` and `open_unit` make them
    (and -log u), are the general forms' bytes."""
    u = np.concatenate([_turns(3000), (np.floor(RNG.uniform(0, 1, 3000) * 2**52) + 0.5) * 2.0**-52])
    positive = u[u > 0]
    for x in (positive, -np.log(positive[positive < 1])):
        np.testing.assert_array_equal(_everywhere(lambda v: P.log(v, normal=True), x), _everywhere(P.log, x))
    np.testing.assert_array_equal(_everywhere(lambda v: P.log1p(-v, small=True), u), _everywhere(lambda v: P.log1p(-v), u))


def test_scaling_by_powers_of_two_rounds_once():
    x = np.concatenate([RNG.uniform(0.5, 2.0, 2000), [1.0, 1.5, 1.9999999999999998]])
    k = np.concatenate([RNG.integers(-1080, 1081, 2000), [-1074, -1075, 1023]]).astype(np.float64)
    got = _everywhere(P.scale, x, k)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, np.ldexp(x, k.astype(np.int64)))


#: the IR ops a runtime computes with its own polynomials: none may stay in a random op's decomposition
TRANSCENDENTAL = {"Exp", "Log", "Log1p", "Expm1", "Sin", "Cos", "Tan", "Pow", "ArcCos", "ArcSin", "ArcTan", "Tanh", "Sigmoid",
                  "Softplus", "Erf", "SinKernel", "CosKernel", "Exp2", "Log2", "Log10"}


def _only_guesses(log: Value) -> bool:
    """A Log whose value only guesses an exponent: floor(Log(x) / ln 2 + 1/2), corrected exactly."""
    chain = [log]
    for op in ("Mul", "Add", "Floor"):
        nexts = [user for v in chain for user, _ in v.uses]
        if not nexts or any(getattr(u, "op", None) != op for u in nexts):
            return False
        chain = [u.output for u in nexts]
    return True


@pytest.mark.parametrize("op", sorted(DISTRIBUTIONS))
def test_no_runtime_kernel_decides_a_draw(op):
    from tests.random.test_bit_identity import CASES, op_graph

    g = op_graph(op, *CASES[op])
    decompose(g)
    for graph in [g, *nested_graphs(g)]:
        for node in graph:
            if node.op == "Log" and _only_guesses(node.output):
                continue
            assert node.op not in TRANSCENDENTAL, (op, node.op)
