"""The Bessel functions' cases for tests/e2e/test_special.py and test_bessel.py: the points
where the lowerings change regime, the orders tested, and where ptonnx departs from
PyTensor's evaluation (SciPy 1.17) because SciPy is wrong there (references/bessel_reference.py:
i0/i1 overflow from 709.78 and are NaN at ±inf, j0/j1 lose the phase beyond ~1e8, ive/kve are
NaN at ±inf and for huge orders or arguments, kve(0, subnormal) is inf, and zero signs; iv is
compared with the exact I_v throughout: PyTensor 3's ive * exp(|x|) overflows from 709.78)."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from references import bessel_reference

#: zeros of J0 and J1 (the first two are in the rational regions, the others beyond)
J0_ZEROS = (2.404825557695773, 5.520078110286311, 8.653727912911013, 11.791534439014281, 1e3 + 0.6508)
J1_ZEROS = (3.8317059702075125, 7.015586669815619, 10.173468135062722, 13.323691936314223)
#: where the lowerings change regime, and the ends of the range
POINTS = (0.0, -0.0, 5e-324, 1e-310, 1e-300, 1e-20, 1e-5, 0.5, 1.0, 2.0, 5.0, 8.0, 20.0, 25.0, 32.0, 50.0,
          700.0, 709.8, 713.0, 713.98, 714.0, 1e5, 1e8, 1e20, 1e300)
#: the orders the binary ops' cases take (each against every argument; up to 100: beyond, SciPy
#: is often NaN and test_accuracy.py covers them against mpmath)
ORDERS = {
    "Ive": (0.0, 1.0, -1.0, 2.0, 2.5, -3.0, 7.0, 24.5, 25.0, 30.3, 99.0),  # negative non-integer: test_bessel.py
    "Iv": (0.0, 1.0, -1.0, 2.0, 2.5, -3.0, 7.0, 24.5, 25.0, 30.3, 99.0),
    "Jv": (0.0, 1.0, -1.0, 2.0, 3.0, -7.0, 10.0, 33.0),  # 100: test_bessel.py (a larger graph)
    "Kve": (0.0, 1.0, -1.0, 0.5, -1.5, 2.0, 0.3, 7.7, 24.6, 25.0, 30.3, 99.0),
}
BUILD = {"I0": pt.i0, "I1": pt.i1, "J0": pt.j0, "J1": pt.j1, "Ive": pt.ive, "Iv": pt.iv, "Jv": pt.jv, "Kve": pt.kve}


def with_orders(op: str):
    """x -> op(orders, x), the orders a constant along a new leading axis (output (k, *x.shape))."""

    def build(x):
        dtype = x.dtype if x.dtype.startswith("float") else "float64"
        orders = np.array(ORDERS[op], dtype=dtype).reshape((-1,) + (1,) * x.ndim)
        return BUILD[op](pt.as_tensor(orders), x)

    return build


def departure(op: str):
    """(inputs, PyTensor's result) -> the result with SciPy's wrong values replaced by the exact ones."""

    def fix(values, expected):
        x = np.asarray(values).astype(np.float64)
        args = [x] if op not in ORDERS else np.broadcast_arrays(np.array(ORDERS[op]).reshape((-1,) + (1,) * x.ndim), x)
        if op == "Iv":  # PyTensor 3's ive * exp(|x|) is inf or 0 where I_v is not (and NaN at +-inf): exact throughout
            dtype = np.asarray(values).dtype if np.asarray(values).dtype.kind == "f" else np.float64
            orders = np.array(ORDERS[op], dtype=dtype).astype(np.longdouble).reshape((-1,) + (1,) * x.ndim)
            with np.errstate(all="ignore"):
                return bessel_reference.iv(*np.broadcast_arrays(orders, x.astype(np.longdouble))).astype(expected.dtype)
        _, doubtful = bessel_reference.scipy_value(op, *args)
        if not doubtful.any():
            return expected
        fixed = np.array(expected, copy=True)
        with np.errstate(all="ignore"):
            fixed[doubtful] = bessel_reference.reference(op, *(a[doubtful] for a in args)).astype(fixed.dtype)
        return fixed

    return fix
