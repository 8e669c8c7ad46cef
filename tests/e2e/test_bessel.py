"""The Bessel functions beyond test_special.py's cases: orders computed at run time against
PyTensor, the accuracy of each regime against mpmath (stronger than ptonnx.accuracy's bounds,
whose absolute floors cover the zeros), the tails, refusals, gradients and pytensor 2.x's Iv."""

from __future__ import annotations

import mpmath
import numpy as np
import pytensor
import pytensor.scalar.math as psm
import pytensor.tensor as pt
import pytest

import ptonnx
from references import bessel_reference
from references.accuracy_reference import errors
from ptonnx.errors import LoweringError
from tests.conftest import assert_same, check_like_pytensor, run_at_every_level
from tests.e2e import bessel_cases as bessel

EPS = 2.0**-52


def _run(build, *arrays):
    """ptonnx's float64 results at every onnxruntime level."""
    variables = [pt.dvector(f"x{i}") for i in range(len(arrays))]
    cm = ptonnx.compile_function(variables, [build(*variables)])
    return [out for (out,) in run_at_every_level(cm, *arrays).values()]


def _mp(fn, *arrays) -> np.ndarray:
    with mpmath.workprec(120):
        return np.array([float(fn(*(mpmath.mpf(float(a)) for a in args))) for args in zip(*arrays, strict=True)])


def _relative(got, exact):
    return np.abs(got - exact) / np.abs(exact)


#: (order, x) grids at run time: Ive with negative non-integer orders (the reflection), Kve with
#: orders of every kind, Jv with integer orders and some it gives NaN for (as PyTensor does not)
RUNTIME_ORDERS = {
    "Ive": (0.0, 1.0, -1.0, 2.0, -2.5, -0.5, 3.3, -7.7, 24.9, 25.0, 60.5),
    "Kve": (0.0, -1.0, 0.5, 1.5, -0.3, 3.3, 12.5, 24.9, 25.0, 60.5),
    "Jv": (0.0, 1.0, -1.0, 2.0, -3.0, 17.0, 100.0),
}


@pytest.mark.parametrize("op", sorted(RUNTIME_ORDERS))
def test_orders_at_run_time_match_pytensor(op):
    v, x = pt.dvector("v"), pt.dvector("x")
    points = np.array((*bessel.POINTS, *(-p for p in bessel.POINTS[2:]), np.inf, -np.inf, np.nan, 3.7, 11.0, 26.0, 40.0))
    orders, args = (a.ravel() for a in np.meshgrid(RUNTIME_ORDERS[op], points))
    _, doubtful = bessel_reference.scipy_value(op, orders, args)  # where SciPy departs: the exact value
    exact = bessel_reference.reference(op, orders, args)

    def compare(actual, expected, context):
        assert_same(actual, np.where(doubtful, exact, expected), context)

    check_like_pytensor([v, x], [bessel.BUILD[op](v, x)], [orders, args], compare=compare)


def test_jv_gives_nan_for_orders_it_does_not_compute():
    got = _run(pt.jv, np.array([2.5, -0.5, 101.0, np.inf, np.nan, 100.0]), np.full(6, 3.0))
    for out in got:
        assert np.isnan(out[:5]).all() and np.isfinite(out[5])


def test_jv_refuses_a_constant_order_it_does_not_compute():
    x = pt.dvector("x")
    for order in (2.5, 101):
        with pytest.raises(LoweringError, match=r"Jv only for integer orders n, \|n\| <= 100"):
            ptonnx.compile_function([x], [pt.jv(order, x)])


@pytest.mark.one_environment
def test_j0_j1_relative_at_their_first_zeros_absolute_beyond():
    """Below 5 relative (each zero as two doubles); beyond, within 1e-15 of the envelope."""
    for build, order, zeros in ((pt.j0, 0, bessel.J0_ZEROS), (pt.j1, 1, bessel.J1_ZEROS)):
        near = np.array([z + k * np.spacing(z) for z in zeros for k in range(-3, 4)])
        far = np.geomspace(5.0, 1e300, 300)
        x = np.concatenate([near, far, -far])
        exact = _mp(lambda t, n=order: mpmath.besselj(n, t), x)
        first = np.abs(x) <= 5
        envelope = np.sqrt(2 / (np.pi * np.abs(x)))
        for got in _run(build, x):
            assert _relative(got[first], exact[first]).max() <= 8 * EPS
            assert (np.abs(got - exact)[~first] / envelope[~first]).max() <= 1e-15


@pytest.mark.one_environment
def test_jv_relative_below_the_turning_point_absolute_beyond():
    n = np.array([2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, -7.0])
    rng = np.random.default_rng(1)
    below = np.abs(n)[:, None] * rng.uniform(0, 1, (n.size, 12))
    beyond = np.abs(n)[:, None] * rng.uniform(1, 3, (n.size, 12))
    orders, x = np.repeat(n, 24), np.concatenate([below, beyond], axis=1).ravel()
    exact = _mp(mpmath.besselj, orders, x)
    envelope = np.sqrt(exact**2 + _mp(mpmath.bessely, np.abs(orders), x) ** 2)
    inside = x < np.abs(orders)
    for got in _run(pt.jv, orders, x):
        assert _relative(got[inside], exact[inside]).max() <= 128 * EPS
        assert (np.abs(got - exact)[~inside] / envelope[~inside]).max() <= 1e-14


@pytest.mark.one_environment
@pytest.mark.parametrize(("op", "bound"), [("Ive", 64), ("Kve", 40)])
def test_ive_kve_below_order_25(op, bound):
    rng = np.random.default_rng(2)
    orders = np.concatenate([rng.uniform(0, 25, 120), np.round(rng.uniform(0, 25, 40)), np.round(rng.uniform(0, 25, 40)) + 0.5])
    x = np.exp(rng.uniform(np.log(1e-6), np.log(1e4), orders.size))
    fn = mpmath.besseli if op == "Ive" else mpmath.besselk
    exact = _mp(lambda v, t: fn(v, t) * mpmath.exp(-t if op == "Ive" else t), orders, x)
    for got in _run(bessel.BUILD[op], orders, x):
        assert _relative(got, exact).max() <= bound * EPS


@pytest.mark.one_environment
def test_ive_negative_non_integer_orders_absolute_near_the_zeros():
    """I_-v = I_v + (2/pi) sin(v pi) K_v cancels where I_-v has a zero: absolute there."""
    rows = []
    for v in (1.3, 1.5, 3.5, 7.5):
        with mpmath.workprec(120):
            zero = float(mpmath.findroot(lambda t, v=v: mpmath.besseli(-v, t), 0.5 if v < 5 else v / 2))
        rows += [(-v, zero + k * 1e3 * np.spacing(zero)) for k in range(-5, 6)]
    orders, x = (np.array(c) for c in zip(*rows, strict=True))
    exact = _mp(lambda v, t: mpmath.besseli(v, t) * mpmath.exp(-t), orders, x)
    scale = _mp(lambda v, t: mpmath.besseli(-v, t) * mpmath.exp(-t), orders, x)
    for got in _run(pt.ive, orders, x):
        assert (np.abs(got - exact) / scale).max() <= 2e-15


#: (order, x): large negative non-integer orders, where I_-v ~ (2/pi) sin(v pi) K_v is finite while
#: Kve(-v, x) overflows (ive(-386.3, 43.03) was inf), crosses the overflow threshold (40.3141717251337)
#: or is inf; small orders where Kve overflows and sin(v pi) brings the product back
LARGE_NEGATIVE_ORDERS = [
    *((-386.31949893461024, x) for x in (43.03239974706398, 40.31417172513371, 40.314171725133704, 40.0, 45.0,
                                          60.0, 200.0, 1.0, 0.0)),
    (-400.7, 43.0), (-300.2, 30.0), (-150.5, 10.0), (-1000.3, 300.0), (-1376.357404917946, 452.03200402626857),
    (-952.6880945040472, 666.5958923791005), (-30.25, 1e-8), (-25.5, 1e-5), (-170.3, 1e-2),
    (-24.9999999999, 4.4e-12), (-24.9999999999, 3e-12), (-24.9999999999, 1e-11), (-7.000000000001, 1e-40),
]


@pytest.mark.one_environment
def test_ive_large_negative_non_integer_orders():
    """Within 4 ulp per unit of |ln Kve(-v, x)| + 2x (the rounding of the exponent of K_v e^-x), inf
    exactly where the result overflows (ptonnx.accuracy's note on Ive)."""
    orders, x = (np.array(c) for c in zip(*LARGE_NEGATIVE_ORDERS, strict=True))
    exact = bessel_reference.exact("Ive", orders.astype(np.longdouble), x.astype(np.longdouble))
    kve = bessel_reference.exact("Kve", -orders.astype(np.longdouble), x.astype(np.longdouble))
    allowed = 4 * (np.abs(np.log(kve)).astype(np.float64) + 2 * x) + 64
    for got in _run(pt.ive, orders, x):
        ulps, _ = errors(got, exact, "float64")
        assert np.isfinite(ulps).all() and (ulps <= allowed).all(), [(o, t, g, float(e)) for o, t, g, e, u, m in zip(orders, x, got, exact, ulps, allowed, strict=True) if not u <= m or np.isinf(u)]


#: where Debye's exponent v eta - x cancels in mpmath at 100 bits (the audit's old reference was wrong)
HUGE = [("Kve", 1.3554369151267625e112, 1.9669202638112088e222, 1.7135068289635517e-91),
        ("Kve", 1.3919937725063055e80, 1.4692093863984328e117, np.inf),
        ("Ive", -2.480412758979968e62, -1.74456254555036e103, 0.0)]


@pytest.mark.one_environment
@pytest.mark.parametrize(("op", "order", "x", "value"), HUGE)
def test_huge_orders_and_arguments(op, order, x, value):
    exact = bessel_reference.exact(op, np.array([order], np.longdouble), np.array([x], np.longdouble))
    np.testing.assert_allclose(float(exact[0]), value, rtol=1e-15)
    for got in _run(bessel.BUILD[op], np.array([order]), np.array([x])):
        ulps, _ = errors(got, exact, "float64")
        assert ulps[0] <= 4096, (got, exact)


def _tail(name, build, arg, fn, rtol):
    with mpmath.workprec(200):
        return (name, build, arg, float(fn(mpmath.mpf(arg))), rtol)


TAILS = [
    _tail("i0(713.9)", pt.i0, 713.9, lambda t: mpmath.besseli(0, t), 1e-15),
    _tail("i1(-713.9)", pt.i1, -713.9, lambda t: mpmath.besseli(1, t), 1e-15),
    _tail("i1(1e-300)", pt.i1, 1e-300, lambda t: mpmath.besseli(1, t), 1e-16),
    _tail("j0(first zero)", pt.j0, bessel.J0_ZEROS[0], lambda t: mpmath.besselj(0, t), 1e-15),
    _tail("j1(first zero)", pt.j1, bessel.J1_ZEROS[0], lambda t: mpmath.besselj(1, t), 1e-15),
    _tail("j0(1e300)", pt.j0, 1e300, lambda t: mpmath.besselj(0, t), 1e-14),
    _tail("ive(0, 1e300)", lambda x: pt.ive(0, x), 1e300, lambda t: 1 / mpmath.sqrt(2 * mpmath.pi * t), 1e-15),
    _tail("ive(30.5, 1e-3)", lambda x: pt.ive(30.5, x), 1e-3, lambda t: mpmath.besseli(30.5, t) * mpmath.exp(-t), 1e-14),
    _tail("ive(3, 700)", lambda x: pt.ive(3, x), 700.0, lambda t: mpmath.besseli(3, t) * mpmath.exp(-t), 1e-14),
    _tail("kve(0, 5e-324)", lambda x: pt.kve(0, x), 5e-324, lambda t: mpmath.besselk(0, t) * mpmath.exp(t), 1e-15),
    _tail("kve(0.3, 1.5)", lambda x: pt.kve(0.3, x), 1.5, lambda t: mpmath.besselk(0.3, t) * mpmath.exp(t), 1e-14),
    _tail("kve(2.5, 1e-3)", lambda x: pt.kve(2.5, x), 1e-3, lambda t: mpmath.besselk(2.5, t) * mpmath.exp(t), 1e-15),
    _tail("kve(33.5, 1.49e-8)", lambda x: pt.kve(33.5, x), 1.4901161193847663e-08,
          lambda t: mpmath.besselk(33.5, t) * mpmath.exp(t), 1e-12),
    _tail("jv(3, 1e-100)", lambda x: pt.jv(3, x), 1e-100, lambda t: mpmath.besselj(3, t), 1e-15),
    _tail("jv(100, 50)", lambda x: pt.jv(100, x), 50.0, lambda t: mpmath.besselj(100, t), 1e-14),
    _tail("jv(-7, 3.3)", lambda x: pt.jv(-7, x), 3.3, lambda t: mpmath.besselj(-7, t), 1e-15),
]


@pytest.mark.one_environment
@pytest.mark.parametrize(("name", "build", "arg", "exact", "rtol"), TAILS, ids=[t[0] for t in TAILS])
def test_tails(name, build, arg, exact, rtol):
    for got in _run(build, np.array([arg])):
        assert np.isfinite(got[0]) and abs(got[0] - exact) <= rtol * abs(exact), f"{name}: {got[0]!r}, exact {exact!r}"


GRADIENTS = {
    "i0": pt.i0, "i1": pt.i1, "j0": pt.j0, "j1": pt.j1,  # j1's uses jv(2, x), i1's ive(2, x)
    "ive": lambda x: pt.ive(2.5, x), "kve": lambda x: pt.kve(1.5, x), "jv": lambda x: pt.jv(3, x),
    "von_mises": lambda x: pt.cos(x) * x - pt.log(pt.i0(x)),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_match_pytensor(name):
    x = pt.dvector("x")
    out = GRADIENTS[name](x)
    grad = pytensor.grad(out.sum(), x)
    check_like_pytensor([x], [out, grad], [np.array([0.3, 1.0, 2.5, 7.0, 30.0, 0.01])])


@pytest.mark.skipif(not hasattr(psm, "Iv"), reason="pytensor 2.x only (3.0 builds iv as ive * exp(|x|))")
def test_iv_of_pytensor_2():
    v, x = pt.dvector("v"), pt.dvector("x")
    orders = np.array([0.0, 1.0, 2.5, 3.0, 0.0, -2.5])
    args = np.array([1.0, -2.0, 3.0, -700.0, 713.0, 0.5])
    check_like_pytensor([v, x], [pt.iv(v, x)], [orders, args])  # SciPy's iv(0, 713) is 1.2e-13 off (AMOS); ptonnx 1 ulp
    got = _run(pt.iv, np.array([0.0, 1.0, 3.0, 0.5]), np.array([np.inf, -np.inf, -np.inf, -np.inf]))
    for out in got:
        np.testing.assert_array_equal(out, [np.inf, -np.inf, -np.inf, np.nan])


def test_iv_is_one_op_in_both_pytensors():
    """PyTensor 3 builds iv(v, x) as ive(v, x) * exp(|x|), which is inf from |x| = 709.78 and 0 where
    ive underflows, though I_v is finite: lifting recognises the product (ptonnx/lifting/idioms.py),
    as it lifts PyTensor 2's Iv, and I_v is computed without exp(-|x|) (the points: the audit's finds)."""
    import scipy.special

    v, x = pt.dvector("v"), pt.dvector("x")
    orders = np.array([759.8541133775672, 23.28087783288138, 0.0, 1.0, 2.5, 300.0, 40.0, 5.0, 3.0, -2.5])
    args = np.array([288.9150065138604, 713.5222711486605, 713.9, -712.0, 711.0, 150.0, 1e-3, 0.5, -30.0, 4.0])
    for cm in (ptonnx.compile_function([v, x], [pt.iv(v, x)]), ptonnx.compile(pytensor.function([v, x], pt.iv(v, x)))):
        assert "Iv" in cm.report.decomposed and "Ive" not in cm.report.decomposed
        exact = _mp(mpmath.besseli, orders, args)
        assert np.all(np.isfinite(exact) & (exact != 0))
        with np.errstate(all="ignore"):
            assert not np.all(np.isfinite(scipy.special.ive(orders, args) * np.exp(np.abs(args))))
        for level, (got,) in run_at_every_level(cm, orders, args).items():
            rel = _relative(got, exact)
            assert rel.max() < 1e-12, f"{level}: Iv({orders[rel.argmax()]}, {args[rel.argmax()]}) = {got[rel.argmax()]!r}"


def test_iv_keeps_a_product_ive_shares():
    """The product is rewritten also where its Ive has other users (they keep it)."""
    v, x = pt.dvector("v"), pt.dvector("x")
    scaled = pt.ive(v, x)
    cm = ptonnx.compile_function([v, x], [scaled * pt.exp(pt.abs(x)), scaled])
    assert {"Iv", "Ive"} <= set(cm.report.decomposed)
    (got_iv, got_ive), = [outs for outs in run_at_every_level(cm, np.array([3.0]), np.array([2.0])).values()][:1]
    assert abs(got_iv[0] / float(mpmath.besseli(3, 2)) - 1) < 1e-14 and abs(got_ive[0] / float(mpmath.besseli(3, 2) * mpmath.exp(-2)) - 1) < 1e-14


class _ScaledBessel(psm.UnaryScalarOp):
    """A scalar op of another library computing scipy.special.i0e or i1e (as PyMC's I0e, I1e
    in the Rice distribution): ptonnx knows it by its nfunc_spec."""

    def __init__(self, name):
        super().__init__(psm.upgrade_to_float_no_complex, name=name)
        self.nfunc_spec = (f"scipy.special.{name}", 1, 1)

    def impl(self, x):
        import scipy.special

        return getattr(scipy.special, self.name)(x)


@pytest.mark.parametrize("name", ["i0e", "i1e"])
def test_other_libraries_scaled_bessel_ops_by_their_scipy_function(name):
    from pytensor.tensor.elemwise import Elemwise

    x = pt.dvector("x")
    out = Elemwise(_ScaledBessel(name))(x)
    # not -0.0: SciPy gives i1e(-0.0) = +0.0, ptonnx -0.0 (I1 is odd; test_special.py)
    check_like_pytensor([x], [out], [np.array([0.0, 1e-300, -2.5, 8.0, 700.0, -np.inf, np.nan])])
