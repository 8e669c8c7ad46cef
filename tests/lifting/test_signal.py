"""lifting/signal.py: Convolve1d (pytensor.tensor.signal.convolve1d, a Blockwise of it) as one masked
product and a sum: full and valid modes (a constant or a run-time flag), the longer input either
side, inf/NaN/-0.0 outside the window kept out, and empty inputs refused as NumPy refuses them."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from pytensor.tensor.signal import convolve1d
from pytensor.tensor.signal.conv import Convolve1d

from tests.lifting.helpers import check_lift, ops, raises_check

A = np.array([1.5, -0.0, 2.0, 1e300, -3.0, 0.25])
B = np.array([0.5, -1.0, 2.0])
PAIRS = [(A, B), (B, A), (A[:1], B[:1]), (np.array([np.inf, 1.0, 0.0]), np.array([1.0, np.nan])), (np.full(2, -0.0), np.full(3, -0.0))]


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_convolve1d(mode):
    x, y = pt.dvector("x"), pt.dvector("y")
    g = check_lift([x, y], [convolve1d(x, y, mode=mode)], *([a, b] for a, b in PAIRS), [np.zeros(0), B], [A, np.zeros(0)])
    assert "ReduceSum" in ops(g) and ("Slice" in ops(g)) == (mode != "full")
    if mode != "same":  # "same" pads x first
        raises_check(g, [np.zeros(0), B], ValueError, "convolve: a and v cannot be empty")


def test_a_mode_flag_computed_at_run_time():
    x, y, full = pt.dvector("x"), pt.dvector("y"), pt.scalar("full", dtype="bool")
    out = Convolve1d()(x, y, full)
    g = check_lift([x, y, full], [out], *([a, b, np.bool_(f)] for a, b in PAIRS[:2] for f in (True, False)))
    assert ops(g)[-1] == "Slice" and "Where" in ops(g)


def test_a_batch_of_float32():
    x, y = pt.fmatrix("x"), pt.fvector("y")
    a = np.where(A > 1e30, np.inf, A).astype(np.float32)
    check_lift([x, y], [convolve1d(x, y, mode="valid")], [np.stack([a, -a]), B.astype(np.float32)])
