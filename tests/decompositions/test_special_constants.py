"""The computed constants of the special-function lowerings are what mpmath gives
(`references/special_constants.py` recomputes them at 200 bits)."""

from __future__ import annotations

import numpy as np

from references import special_constants as exact
from ptonnx.decompositions.special import gamma


def test_digamma_root_and_its_taylor_series():
    assert gamma.DIGAMMA_ROOT == exact.digamma_root()
    np.testing.assert_array_equal(gamma.DIGAMMA_ROOT_TAYLOR, exact.digamma_root_taylor(len(gamma.DIGAMMA_ROOT_TAYLOR)))


def test_lgamma_series_about_two():
    np.testing.assert_array_equal(gamma.LGAMMA_ABOUT_TWO, exact.lgamma_about_two(len(gamma.LGAMMA_ABOUT_TWO)))


def test_bessel_zeros_and_the_reciprocal_gamma_series():
    from ptonnx.decompositions.special import bessel_j, bessel_temme

    assert bessel_j.J0_ZEROS == exact.bessel_j_zeros(0)
    assert bessel_j.J1_ZEROS == exact.bessel_j_zeros(1)
    np.testing.assert_array_equal(bessel_temme.RGAMMA_TAYLOR, exact.rgamma_taylor(len(bessel_temme.RGAMMA_TAYLOR)))


def test_erfinv_starts_gauss_legendre_rule_and_cot_derivative_table():
    """Erfinv's fitted starts (a least-squares fit: equal to rounding), Owen's T's quadrature rule,
    and PolyGamma's table of pi**s P_n / n! (P_n: cot's derivative polynomials) against mpmath."""
    import mpmath

    from references import special_reference
    from ptonnx.decompositions.special import erfinv, owens_t, polygamma

    (centre, half), coefficients = exact.erfinv_small_start()
    assert (centre, half) == erfinv.ERFINV_SMALL[:2]
    np.testing.assert_allclose(erfinv.ERFINV_SMALL[2], coefficients, rtol=1e-9, atol=1e-15)
    for (centre, half, stored), ((c, h), fitted) in zip(erfinv.ERFCINV_TAIL, exact.erfcinv_tail_start(), strict=True):
        assert (centre, half) == (c, h)
        np.testing.assert_allclose(stored, fitted, rtol=1e-9, atol=1e-15)
    assert (owens_t.NODES, owens_t.WEIGHTS) == exact.gauss_legendre()
    table = polygamma.reflection_table()
    with mpmath.workprec(200):
        for n in (2, 4, 10, 50, 170):
            p = special_reference._cot_derivative(n)
            row = [float(mpmath.pi ** (n + 1) * c / mpmath.factorial(n)) for c in p[1::2]]
            np.testing.assert_allclose(table[n // 2 - 1, : len(row)], row, rtol=2e-16)
            assert not table[n // 2 - 1, len(row):].any()


def test_fitted_asymptotic_series_of_lgamma_psi_and_trigamma():
    """The remainders' coefficients in gamma.py are what references/special_constants fits (on z >= 4)."""
    for name, coefficients in (("lgamma", gamma.LGAMMA_ASYMPTOTIC), ("digamma", gamma.DIGAMMA_ASYMPTOTIC),
                               ("trigamma", gamma.TRIGAMMA_ASYMPTOTIC)):
        np.testing.assert_allclose(coefficients, exact.asymptotic_fit(name), rtol=1e-9, err_msg=name)
