"""Hyp2F1 in float64 against mpmath over typical and extreme (a, b, c, z), at every onnxruntime
level; NaN in each region ptonnx refuses (never a number with an unknown error); SciPy's special
values; PyTensor's gradient loops (Grad2F1Loop) of hyp2f1 against PyTensor."""

from __future__ import annotations

import mpmath
import numpy as np
import onnx
import pytensor.tensor as pt
import pytest

import ptonnx
from tests.conftest import check_like_pytensor, run_at_every_level

#: the largest relative error accepted (measured: 5e-14)
RTOL = 1e-12


def _reference(a, b, c, z) -> float:
    with mpmath.workdps(40):
        return float(mpmath.hyp2f1(*(mpmath.mpf(float(v)) for v in (a, b, c, z))))


def _quadruples(rng, n=40):
    def u(lo, hi):
        return rng.uniform(lo, hi, n)
    yield "small parameters, |z| < 1", u(-5, 5), u(-5, 5), u(-5, 5), u(-1, 1)
    yield "positive, z up to 0.95", u(0, 10), u(0, 10), u(0, 10), u(0, 0.95)
    yield "Pfaff, z down to -19", u(-20, 20), u(-20, 20), u(-20, 20), u(-19, 0)
    yield "polynomials", -rng.integers(0, 15, n).astype(float), u(-10, 10), u(0.5, 10), u(-50, 5)
    yield "tiny parameters", 10 ** u(-10, 0), 10 ** u(-10, 0), 10 ** u(-10, 1), u(-19, 0.95)
    yield "large parameters", u(-100, 100), u(-100, 100), u(-100, 100), u(-19, 0.95)


@pytest.fixture(scope="module")
def hyp2f1_model():
    a, b, c, z = (pt.dvector(n) for n in "abcz")
    cm = ptonnx.compile_function([a, b, c, z], [pt.hyp2f1(a, b, c, z)])
    onnx.checker.check_model(cm.model, full_check=True)
    return cm


@pytest.mark.one_environment
def test_float64_within_bound_of_mpmath(hyp2f1_model):
    answered = 0
    for label, *args in _quadruples(np.random.default_rng(0)):
        exact = np.array([_reference(*q) for q in zip(*args, strict=True)])
        for level, (got,) in run_at_every_level(hyp2f1_model, *args).items():
            with np.errstate(all="ignore"):
                err = np.where(np.isnan(got) | (got == exact), 0.0, np.abs(got - exact) / np.abs(exact))
            worst = int(np.argmax(err))
            assert err[worst] <= RTOL, (
                f"{label} at {level}: hyp2f1{tuple(float(x[worst]) for x in args)} = {got[worst]!r}, "
                f"exact {exact[worst]!r} (relative error {err[worst]:.3g})")
            answered += int(np.sum(~np.isnan(got)))
    assert answered >= 0.8 * 2 * 6 * 40  # most are answered (NaN: cancelling series, large parameters)


def test_refused_regions_give_nan(hyp2f1_model):
    """z > 1 outside polynomials (complex; SciPy says inf), z < -19 and 0.95 < z < 1 outside
    polynomials, cancelling series (large a, b with small c on z < 0), c = a = -n (SciPy's conventions
    differ), a polynomial's zero, c - a - b near 0 at z = 1, infinite parameters."""
    q = np.array([
        (1.0, 2.0, 3.0, 1.5), (0.5, 0.5, 1.5, 1e10), (1.0, 2.0, 3.0, np.inf), (1.0, 2.0, 3.0, -np.inf),
        (1.0, 2.0, 3.0, -20.0), (1.5, 2.5, 3.3, -1e6), (0.3, 0.7, 1.9, 0.96), (0.3, 0.7, 1.9, 1 - 1e-9),
        (6.37, 8.968, 0.062, -1.121), (-2.0, 1.0, -2.0, 0.5), (-1.0, 2.0, 3.0, 1.5),
        (1.0, 2.0, 3.0 + 1e-14, 1.0), (np.inf, 1.0, 2.0, 0.5), (1.0, 1.0, np.inf, 0.5),
    ]).T
    for level, (got,) in run_at_every_level(hyp2f1_model, *q).items():
        assert np.isnan(got).all(), (level, got)


def test_polynomials_and_gauss_theorem(hyp2f1_model):
    """a or b = -n: the terminating sum for any z; z = 1 by Gauss's theorem (inf for c - a - b <= 0, as SciPy)."""
    q = np.array([(-3.0, 1.0, 2.0, 5.0), (-5.0, 3.0, 4.0, -1e5), (2.5, -4.0, 1.5, 30.0), (-2.0, 1.0, -3.0, 0.5),
                  (1.0, 2.0, 4.0, 1.0), (0.5, 1.5, 3.25, 1.0), (-1.5, 2.25, 0.5, 1.0), (1.0, 2.0, 3.0, 1.0)]).T
    exact = [_reference(*t) for t in q.T[:-1]] + [np.inf]
    for level, (got,) in run_at_every_level(hyp2f1_model, *q).items():
        np.testing.assert_allclose(got, exact, rtol=RTOL, err_msg=level)


def test_special_values_as_scipy(hyp2f1_model):
    import scipy.special

    nan = np.nan
    q = np.array([(1.0, 2.0, 3.0, 0.0), (nan, 1.0, 1.0, 0.0), (1.0, 1.0, -2.0, 0.0), (nan, 1.0, 2.0, 0.5),
                  (1.0, 2.0, 3.0, nan), (1.0, 1.0, -2.0, 0.5), (1.0, 1.0, -2.0, -5.0), (-3.0, 1.0, -2.0, 0.5),
                  (0.0, 2.0, 3.0, 0.7), (1.0, 2.0, 2.5, 1.0), (-1.0, 2.0, 3.0, 1.0)]).T
    expected = scipy.special.hyp2f1(*q)
    for level, (got,) in run_at_every_level(hyp2f1_model, *q).items():
        np.testing.assert_allclose(got, expected, rtol=RTOL, err_msg=level)


def test_size_zero(hyp2f1_model):
    empty = np.zeros(0)
    for level, (got,) in run_at_every_level(hyp2f1_model, empty, empty, empty, empty).items():
        assert got.shape == (0,), level


def test_float32_is_float64_rounded_once():
    a, b, c, z = (pt.fvector(n) for n in "abcz")
    cm = ptonnx.compile_function([a, b, c, z], [pt.hyp2f1(a, b, c, z)])
    q = np.array([(1.0, 2.0, 3.0, 0.5), (0.5, 1.5, 2.5, -3.0), (-3.0, 1.5, 2.0, 0.75)], dtype=np.float32).T
    exact = np.array([_reference(*t) for t in q.T.astype(np.float64)]).astype(np.float32)
    for level, (got,) in run_at_every_level(cm, *q).items():
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, exact, err_msg=level)


def test_pytensor_gradient_loops_of_hyp2f1():
    """d/da, d/db, d/dc (PyTensor's Grad2F1Loop ScalarLoops, lowered as ONNX Loops) and d/dz (a
    hyp2f1 of shifted parameters), against PyTensor at well-conditioned points."""
    a, b, c, z = (pt.dvector(n) for n in "abcz")
    grads = pt.grad(pt.hyp2f1(a, b, c, z).sum(), [a, b, c, z])
    points = np.array([(1.0, 2.0, 3.0, 0.5), (0.5, 1.5, 2.5, 0.3), (2.5, 1.25, 4.0, -0.4), (0.7, 0.9, 1.8, 0.8)]).T
    check_like_pytensor([a, b, c, z], grads, list(points))
