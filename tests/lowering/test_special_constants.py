"""The computed constants of the special-function lowerings are what mpmath gives
(`audit/special_constants.py` recomputes them at 200 bits)."""

from __future__ import annotations

import numpy as np

from audit import special_constants as exact
from ptonnx.lowering.special import gamma


def test_digamma_root_and_its_taylor_series():
    assert gamma.DIGAMMA_ROOT == exact.digamma_root()
    np.testing.assert_array_equal(gamma.DIGAMMA_ROOT_TAYLOR, exact.digamma_root_taylor(len(gamma.DIGAMMA_ROOT_TAYLOR)))


def test_lgamma_series_about_two():
    np.testing.assert_array_equal(gamma.LGAMMA_ABOUT_TWO, exact.lgamma_about_two(len(gamma.LGAMMA_ABOUT_TWO)))
