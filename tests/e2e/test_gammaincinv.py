"""GammaIncInv and GammaIncCInv against mpmath: the relative error of x over the domain (tiny
and huge a, targets down to the subnormals, y near 1), at every onnxruntime level; the special
values; and PyTensor's gradient in y. (PyTensor comparisons: tests/e2e/test_special.py.)"""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from tests.conftest import check_like_pytensor, run_at_every_level
from tests.e2e.gamma_inc_inv_cases import relative_error, rounds_to_zero

#: the largest relative error of x measured (float64), with the ptonnx.accuracy bound above it
BOUND = 5e-13


def _pairs(rng, n=24):
    """(label, a, y) groups over the domain."""
    def lu(lo, hi):
        return 10.0 ** rng.uniform(lo, hi, n)
    yield "typical", lu(-2, 2), rng.uniform(0, 1, n)
    yield "wide a", lu(-8, 8), rng.uniform(0, 1, n)
    yield "tiny y", lu(-3, 4), lu(-300, -3)
    yield "subnormal y", lu(-1, 3), lu(-323, -308)
    yield "y near 1", lu(-3, 4), 1 - lu(-15.9, -3)
    yield "huge a", lu(5, 300), rng.uniform(0, 1, n)
    yield "huge a, tails", lu(4, 20), np.concatenate([lu(-300, -3)[: n // 2], 1 - lu(-15.9, -3)[: n - n // 2]])
    yield "a near the methods' edges", rng.choice([0.5, 1.0, 13.0, 20.0, 30.0], n) * (1 + rng.normal(0, 1e-3, n)), rng.uniform(0, 1, n)


@pytest.fixture(scope="module")
def compiled():
    a, y = pt.dvector("a"), pt.dvector("y")
    return ptonnx.compile_function([a, y], [pt.gammaincinv(a, y), pt.gammainccinv(a, y)])


@pytest.mark.one_environment
@pytest.mark.parametrize("group", range(8))
def test_x_is_within_the_bound_of_mpmath(compiled, group):
    label, a, y = list(_pairs(np.random.default_rng(group)))[group]
    for level, (p, q) in run_at_every_level(compiled, a, y).items():
        for name, x, of_p in (("GammaIncInv", p, True), ("GammaIncCInv", q, False)):
            assert not np.isnan(x).any(), f"{name} {label} at {level}: NaN at {list(zip(a[np.isnan(x)], y[np.isnan(x)], strict=True))}"
            for ai, yi, xi in zip(a, y, x, strict=True):
                if xi == 0:
                    assert rounds_to_zero(ai, yi, of_p), f"{name}({ai!r}, {yi!r}) = 0 at {level}, but x is not below 2**-1075"
                    continue
                err = relative_error(ai, yi, xi, of_p)
                assert err <= BOUND, f"{name}({ai!r}, {yi!r}) = {xi!r} at {level}: relative error {err:.3g} ({label})"


@pytest.mark.parametrize("fn", [pt.gammaincinv, pt.gammainccinv], ids=["gammaincinv", "gammainccinv"])
def test_pytensor_gradient_in_y(fn):
    """PyTensor's pullback in y (exp(x) Gamma(a) x**(1 - a), signed), composed of lowered ops."""
    a, y = pt.dvector("a"), pt.dvector("y")
    out = fn(a, y)
    grad = pytensor.grad(out.sum(), y)
    values = [np.array([0.5, 1.0, 2.5, 30.0, 1e-3, 4.0, 0.5, 150.0]),
              np.array([0.5, 0.1, 0.9, 1e-20, 0.3, 1 - 2**-53, 0.0, 0.999])]
    check_like_pytensor([a, y], [out, grad], values)
