"""BetaIncInv in float64 against an mpmath reference (tests/e2e/betaincinv_cases.py) over typical
and extreme (a, b, y), at every onnxruntime level: the relative error of x, and the error relative
to min(x, 1 - x) beyond one ulp of x (near 1 the answer x holds 1 - x only to an ulp); SciPy's
special values; the round trip through BetaInc; float32 and size 0."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytensor.tensor as pt
import pytest

import ptonnx
from tests.conftest import run_at_every_level
from tests.e2e import betaincinv_cases as cases

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

#: the largest error accepted (measured: 2.9e-13 relative, at a = 1.1e-11, y = 1 - 2.2e-9, x = 3.6e-83)
RTOL = 1e-12


@pytest.fixture(scope="module")
def model():
    a, b, y = pt.dvector("a"), pt.dvector("b"), pt.dvector("y")
    return ptonnx.compile_function([a, b, y], [pt.betaincinv(a, b, y)])


def _check(model, label, a, b, y):
    for level, (got,) in run_at_every_level(model, a, b, y).items():
        rel, side = cases.errors(got, a, b, y)
        worst = int(np.argmax(np.maximum(rel, side)))
        assert max(rel[worst], side[worst]) <= RTOL, (
            f"{label} at {level}: betaincinv({a[worst]!r}, {b[worst]!r}, {y[worst]!r}) = {got[worst]!r} "
            f"(relative error {rel[worst]:.3g}, in min(x, 1 - x) {side[worst]:.3g})")


def test_float64_within_bound_of_mpmath(model):
    for label, a, b, y in cases.triples(np.random.default_rng(0), n=8):
        _check(model, label, a, b, y)


def test_ends_of_the_range(model):
    ps = (1e-300, 1e-3, 0.5, 7.0, 1e4)
    ys = (5e-324, 1e-300, 1e-10, 0.3, 0.7, 1 - 1e-10, 1 - 2**-53)
    a, b, y = (np.array(v) for v in zip(*itertools.product(ps, ps, ys), strict=True))
    _check(model, "ends", a, b, y)


def test_huge_parameters(model):
    a, b, y = np.array([1e10, 1e10, 3.0, 1e10]), np.array([1e10, 2.0, 1e10, 1e-300]), np.array([0.3, 1e-200, 0.9, 0.5])
    _check(model, "huge", a, b, y)


def test_tiny_a_with_y_near_1(model):
    """I_x(a, b) ~ 1 - a |log x| for tiny a: 1 - I from the complement in a's terms, not 1 minus I
    (which was 4.6e-6 off at the first triple, found by `python -m audit.function_table`)."""
    a = np.array([1.1442284572515656e-11, 1e-11, 1e-5, 1e-9, 0.05])
    b = np.array([0.8608862270197688, 1e4, 3.0, 50.0, 0.5])
    y = np.array([0.9999999978248508, 1 - 2.7e-10, 1 - 1e-4, 1 - 1e-7, 1 - 1e-6])
    _check(model, "tiny a, y near 1", a, b, y)


def test_tiny_a_and_b_with_y_near_1(model):
    """There x moves by 600 times 1 - I's relative error: 1 - I is compared with 1 - y directly, not
    as the difference of their logs (~-20, which cost 1.6e-12 in x at the first triple, found by
    `python -m audit.function_table`)."""
    a = np.array([2.8034349663769676e-12, 1e-12, 3e-11])
    b = np.array([0.035415482206556215, 0.01, 0.09])
    y = np.array([0.9999999983137687, 1 - 1e-9, 1 - 3e-8])
    _check(model, "tiny a and b, y near 1", a, b, y)


def test_special_values_as_scipy(model):
    import scipy.special

    inf, nan = np.inf, np.nan
    a = np.array([2.0, 2.0, 0.0, -1.0, inf, inf, 2.0, 2.0, 2.0, nan, 2.0, 2.0, 1e-20, 3.0, 1.0, inf, inf, 0.5])
    b = np.array([3.0, 3.0, 1.0, 1.0, 1.0, 1.0, inf, 3.0, 3.0, 1.0, nan, 3.0, 1e-20, 3.0, inf, 2.0, inf, inf])
    y = np.array([0.0, 1.0, 0.3, 0.3, 0.3, 0.0, 0.3, -0.1, 1.1, 0.3, 0.3, nan, 0.5, 0.5, 0.3, 0.3, 0.3, 0.3])
    expected = scipy.special.betaincinv(a, b, y)
    for level, (got,) in run_at_every_level(model, a, b, y).items():
        np.testing.assert_array_equal(got, expected, err_msg=level)


def test_round_trip_through_betainc():
    a, b, y = pt.dvector("a"), pt.dvector("b"), pt.dvector("y")
    cm = ptonnx.compile_function([a, b, y], [pt.betainc(a, b, pt.betaincinv(a, b, y))])
    rng = np.random.default_rng(1)
    av, bv = 10 ** rng.uniform(-1, 3, 40), 10 ** rng.uniform(-1, 3, 40)
    yv = rng.uniform(0.01, 0.99, 40)
    for level, (got,) in run_at_every_level(cm, av, bv, yv).items():
        np.testing.assert_allclose(got, yv, rtol=1e-12, err_msg=level)


def test_float32_is_float64_rounded_and_size_zero():
    import scipy.special

    a, b, y = pt.fvector("a"), pt.fvector("b"), pt.fvector("y")
    cm = ptonnx.compile_function([a, b, y], [pt.betaincinv(a, b, y)])
    onnx.checker.check_model(cm.model, full_check=True)
    av, bv, yv = (np.array(v, dtype="float32") for v in ([2.0, 0.5, 30.0], [3.0, 0.5, 40.0], [0.3, 0.9, 1e-3]))
    expected = scipy.special.betaincinv(*(v.astype(np.float64) for v in (av, bv, yv))).astype("float32")
    for level, (got,) in run_at_every_level(cm, av, bv, yv).items():
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=1e-7, err_msg=level)
    empty = np.zeros(0, dtype="float32")
    for level, (got,) in run_at_every_level(cm, empty, empty, empty).items():
        assert got.shape == (0,), level
