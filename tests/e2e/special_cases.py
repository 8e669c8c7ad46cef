"""Erfinv, Erfcinv, PolyGamma and OwensT cases for tests/e2e/test_special.py: the points where
the lowerings change regime, the second operands tested, and where ptonnx departs from
PyTensor's evaluation (SciPy 1.17) because SciPy is wrong there (references/special_reference.py):
erfinv(-0.0) is +0.0, erfcinv of the smallest subnormals is inf, polygamma(n >= 2, x < 0)
cancels, owens_t is only absolutely accurate in its tails."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from references import special_reference

ERFINV_POINTS = (0.0, -0.0, 0.5, -0.5, np.nextafter(0.5, 1), 0.8427, -0.99, 1.0, -1.0, 1 - 2**-53, -(1 - 2**-53),
                 2.0**-26, -(2.0**-27), 1e-300, -5e-324, 1.5, -2.0)
ERFCINV_POINTS = (0.0, 2.0, 1.0, 0.5, 1.5, np.nextafter(0.5, 0), 0.1573, 1e-10, 1e-300, 1e-310, 5e-324, 1 - 2**-53,
                  1 + 2**-52, 2 - 2**-52, -0.0, -1.0, 2.5)
POLYGAMMA_POINTS = (0.0, -0.0, 1.0, 0.5, 1e-300, 5e-324, 9.5, 10.0, 1e8, 1e300, -0.5, -1.0, -2.5, -1.5 + 1e-9, -3.49999,
                    -0.25, -0.75, -100.5, -1e3 - 0.3)
#: the orders PolyGamma's case takes (each against every argument; up to 170: test_accuracy.py)
POLYGAMMA_ORDERS = (0, 1, 2, 3, 4, 7, 20)
OWENS_T_POINTS = (0.0, -0.0, 0.5, 1.0, 2.0, 8.6, 9.0, 20.0, 37.0, 38.6, 40.0, 1e-300, 1e300)
#: the second operand a of OwensT's case: |a| <= 1 (the quadrature) and > 1 (Owen's identity)
OWENS_T_A = (0.0, -0.0, 1e-300, 0.1, -0.5, 0.99, 1.0, 1 + 2**-52, -2.0, 10.0, 1e300, np.inf, -np.inf, np.nan)


def _float(x) -> str:
    return x.dtype if x.dtype.startswith("float") else "float64"


def polygamma_with_orders(x):
    """x -> polygamma(orders, x), the orders along a new leading axis (output (k, *x.shape))."""
    orders = np.array(POLYGAMMA_ORDERS, dtype="int64").reshape((-1,) + (1,) * x.ndim)
    return pt.polygamma(pt.as_tensor(orders), x)


def owens_t_with_a(h):
    """h -> owens_t(h, a) for each a of OWENS_T_A along a new leading axis."""
    with np.errstate(over="ignore"):  # 1e300 is inf in float16/float32
        a = np.array(OWENS_T_A, dtype=_float(h)).reshape((-1,) + (1,) * h.ndim)
    return pt.owens_t(h, pt.as_tensor(a))


def _erfinv(values, expected):
    x = np.asarray(values).astype(expected.dtype)
    return np.where(x == 0, x, expected)  # SciPy loses the sign of -0.0


def _erfcinv(values, expected):
    q = np.asarray(values).astype(np.float64)
    wrong = (q > 0) & np.isinf(expected)  # SciPy's inf for the smallest subnormals
    if not wrong.any():
        return expected
    fixed = np.array(expected, copy=True)
    fixed[wrong] = special_reference.erfcinv(q[wrong].astype(np.longdouble)).astype(fixed.dtype)
    return fixed


def _polygamma(values, expected):
    x = np.asarray(values).astype(np.float64)
    n, x = np.broadcast_arrays(np.array(POLYGAMMA_ORDERS).reshape((-1,) + (1,) * x.ndim), x)
    wrong = (x < 0) & (n >= 2) | ~np.isfinite(expected)  # SciPy's sum cancels; in float16 n! overflows
    if not wrong.any():
        return expected
    fixed = np.array(expected, copy=True)
    with np.errstate(over="ignore"):  # beyond float16: inf
        fixed[wrong] = special_reference.polygamma(n[wrong], x[wrong].astype(np.longdouble)).astype(fixed.dtype)
    return fixed


def _owens_t(values, expected):
    h = np.asarray(values).astype(np.float64)
    h, a = np.broadcast_arrays(h, np.array(OWENS_T_A).reshape((-1,) + (1,) * h.ndim))
    exact = special_reference.owens_t(h.astype(np.longdouble), a.astype(np.longdouble)).astype(np.float64)
    with np.errstate(all="ignore"):  # SciPy's tails are accurate to 1e-16 absolutely
        wrong = np.abs(expected.astype(np.float64) - exact) > 1e-13 * np.abs(exact)
    return np.where(wrong, exact.astype(expected.dtype), expected)


DEPARTURES = {"Erfinv": _erfinv, "Erfcinv": _erfcinv, "PolyGamma": _polygamma, "OwensT": _owens_t}


def tails():
    """(name, PyTensor expression of x, x, exact value, relative bound) for test_special.TAILS."""
    def exact(op, *args):
        return float(special_reference.__dict__[op](*(np.array([a], np.longdouble) for a in args))[0])
    return [
        ("erfcinv(1e-300)", pt.erfcinv, 1e-300, exact("erfcinv", 1e-300), 1e-15),
        ("erfcinv(5e-324)", pt.erfcinv, 5e-324, exact("erfcinv", 5e-324), 1e-15),
        ("erfinv(1 - 2**-53)", pt.erfinv, 1 - 2**-53, exact("erfinv", 1 - 2**-53), 1e-15),
        ("erfinv(1e-300)", pt.erfinv, 1e-300, exact("erfinv", 1e-300), 1e-15),
        ("polygamma(3, -2.5)", lambda x: pt.polygamma(3, x), -2.5, exact("polygamma", 3, -2.5), 1e-15),
        ("polygamma(10, -2.5)", lambda x: pt.polygamma(10, x), -2.5, exact("polygamma", 10, -2.5), 1e-15),
        ("polygamma(2, -1e8 - 0.5)", lambda x: pt.polygamma(2, x), -1e8 - 0.5, exact("polygamma", 2, -1e8 - 0.5), 1e-15),
        ("polygamma(170, 100)", lambda x: pt.polygamma(170, x), 100.0, exact("polygamma", 170, 100.0), 1e-14),
        ("owens_t(9.7, 0.5)", lambda x: pt.owens_t(x, 0.5), 9.7, exact("owens_t", 9.7, 0.5), 1e-14),
        ("owens_t(30, 0.9)", lambda x: pt.owens_t(x, 0.9), 30.0, exact("owens_t", 30.0, 0.9), 1e-14),
        ("owens_t(2, 1e300)", lambda x: pt.owens_t(x, 1e300), 2.0, exact("owens_t", 2.0, 1e300), 1e-15),
    ]
