"""pytensor.tensor.signal.convolve1d (a Blockwise of Convolve1d): full, valid and same
modes, the longer input either side, a run-time mode flag, inf/NaN/-0.0 in the data,
a batch, and empty inputs refused as NumPy refuses them."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from pytensor.tensor.signal import convolve1d

from tests.conftest import check_like_pytensor

A = np.array([1.5, -0.0, 2.0, 1e300, -3.0, 0.25])
B = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize(("a", "b"), [(A, B), (B, A), (A[:1], B[:1]), (np.array([np.inf, 1.0, 0.0]), np.array([1.0, np.nan]))])
def test_convolve1d(mode, a, b):
    x, y = pt.dvector("x"), pt.dvector("y")
    check_like_pytensor([x, y], [convolve1d(x, y, mode=mode)], [a, b])


def test_a_batch_and_empty_inputs():
    x, y = pt.dmatrix("x"), pt.dvector("y")
    check_like_pytensor([x, y], [convolve1d(x, y, mode="valid")], [np.stack([A, -A]), B])
    v, w = pt.dvector("v"), pt.dvector("w")
    check_like_pytensor([v, w], [convolve1d(v, w)], [np.zeros(0), B])  # ValueError, as NumPy
