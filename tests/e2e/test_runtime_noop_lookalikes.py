"""float64 constants that onnxruntime's NoopElimination takes for an identity: it rounds a
one-element constant to float32 before comparing it with 0 (Add, Sub) or 1 (Mul, Div), so from
ORT_ENABLE_BASIC on it would drop `x * (1 + 1e-9)`, `x / (1 - 2e-8)`, `x + 1e-300` and
`x - 5e-324`, constants a float64 model may well hold (a series' coefficient, a tiny offset).
The lowering keeps them (`elementwise._noop_lookalike`): every model here gives PyTensor's
numbers at both levels, at every rank, with the constant on either side, and on the values
where the dropped operation would show (0, subnormals, the largest magnitudes, inf, NaN)."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from tests.conftest import check_like_pytensor

def c(value):
    """A float64 constant (a Python or NumPy float would be autocast to float32 where it rounds
    to itself there, which these do not)."""
    return pt.constant(np.asarray(value, dtype="float64"))


#: (what, its graph of x): each constant rounds to float32's 0 or 1 and is not it
CASES = {
    "x * (1 + 1e-9)": lambda x: x * c(1 + 1e-9),
    "(1 - 2e-8) * x": lambda x: c(1 - 2e-8) * x,
    "x / (1 + 2**-30)": lambda x: x / c(1 + 2**-30),
    "x + 1e-300": lambda x: x + c(1e-300),
    "5e-324 + x": lambda x: c(5e-324) + x,
    "x - 1e-310": lambda x: x - c(1e-310),
}

VALUES = np.array([0.0, -0.0, 3.0, -7.5, 1e-300, -1e-310, 5e-324, 1e308, -1.7e308, np.inf, -np.inf, np.nan, 1.0, 0.1])


def test_near_identity_constants_are_kept():
    """The constant meets an intermediate value (x w, w = 1) and the result goes on into another
    node: onnxruntime keeps a node that reads a graph input or writes a graph output."""
    for name, graph in CASES.items():
        for x, value in ((pt.dvector("x"), VALUES), (pt.dscalar("x"), np.float64(1e-300)), (pt.dmatrix("x"), VALUES.reshape(2, 7))):
            w = x.type("w")
            check_like_pytensor([x, w], [graph(x * w) * w], [value, np.ones_like(value)], message=f"{name}, rank {x.ndim}")


def test_the_rounding_it_guards_against():
    """Each constant above is one onnxruntime would take for 0 or 1 (so the cases can fail)."""
    for value in (1 + 1e-9, 1 - 2e-8, 1 + 2**-30):
        assert value != 1.0 and float(np.float32(value)) == 1.0
    for value in (1e-300, 5e-324, 1e-310):
        assert value != 0.0 and float(np.float32(value)) == 0.0
