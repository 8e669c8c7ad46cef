"""GammaU = Q Gamma(k) and GammaL = P Gamma(k) where PyTensor's products are not their values:
Q or P underflows, or Gamma(k) overflows (k > 171.6, subnormal k), but the value is finite
(decompositions/special/gamma_inc_products.py); the exact values from mpmath."""

from __future__ import annotations

import mpmath
import numpy as np
import pytensor.tensor as pt
import scipy.special

import ptonnx
from tests.conftest import run_at_every_level

RTOL = 1e-12


def _exact(op: str, k: float, x: float) -> float:
    with mpmath.workprec(200):
        k_, x_ = mpmath.mpf(k), mpmath.mpf(x)
        return float(mpmath.gammainc(k_, x_, mpmath.inf) if op == "GammaU" else mpmath.gammainc(k_, 0, x_))


#: (k, x): the audit's finds (Q underflows at k = 154.3; Gamma(k) = inf at a subnormal k), k > 171.6,
#: a value in the subnormal range, and ordinary points of each region
POINTS = {
    "GammaU": ((154.31297079262205, 1460.1338420265497), (8.400355239864897e-24, 699.9959042915197),
               (1.1024822094e-313, 5.5343259879575505e-14), (200.0, 2000.0), (1000.0, 9000.0), (400.0, 3000.0), (3000.0, 31000.0),
               (1e-10, 1e-5), (0.3, 2.0), (2.5, 1.0), (50.0, 45.0), (6.3979685903137835e-06, 700.0)),
    "GammaL": ((1e4, 1.0), (300.0, 1.0), (500.0, 3.0), (150.0, 10.0), (2.5, 1.0), (30.0, 5.0), (1e-10, 1e-5),
               (50.0, 45.0), (0.5, 1e-300)),
}


def _check(op: str, build):
    k, x = (np.array(v) for v in zip(*POINTS[op], strict=True))
    kv, xv = pt.dvector("k"), pt.dvector("x")
    cm = ptonnx.compile_function([kv, xv], [build(kv, xv)])
    exact = np.array([_exact(op, *p) for p in POINTS[op]])
    assert np.all(np.isfinite(exact) & (exact > 0))
    with np.errstate(all="ignore"):
        pytensors = (scipy.special.gammaincc if op == "GammaU" else scipy.special.gammainc)(k, x) * scipy.special.gamma(k)
    assert not np.all(np.isfinite(pytensors) & (pytensors > 0)), "some points should be where the product fails"
    for level, (got,) in run_at_every_level(cm, k, x).items():
        rel = np.abs(got - exact) / exact
        worst = int(np.argmax(rel))
        assert rel[worst] <= RTOL, f"{op}({k[worst]!r}, {x[worst]!r}) at {level}: {got[worst]!r}, exact {exact[worst]!r}"


def test_gammau_finite_where_the_product_is_not():
    _check("GammaU", pt.gammau)


def test_gammal_finite_where_the_product_is_not():
    _check("GammaL", pt.gammal)


def test_inf_where_the_value_overflows_though_its_tail_underflows():
    """GammaL(8413, 5048) = 6e28959: P = e**-932 underflows, so the product through logs takes
    Temme's log of the tail, not the log of its 0 (which gave 0; found by the audit)."""
    kv, xv = pt.dvector("k"), pt.dvector("x")
    cm = ptonnx.compile_function([kv, xv], [pt.gammal(kv, xv), pt.gammau(kv, xv)])
    k, x = np.array([8413.347828465428, 200.0, 5000.0]), np.array([5048.0087694115555, 280.0, 7000.0])
    for level, (lower, upper) in run_at_every_level(cm, k, x).items():
        np.testing.assert_array_equal(lower, np.inf, err_msg=level)
        np.testing.assert_array_equal(upper, np.inf, err_msg=level)
