"""Hermite coefficients and Gaussian expectations against closed forms."""

import math

import numpy as np
import pytest

import twostep as ts
from twostep.model.hermite import gauss_nodes, hermite_coefficients, hermite_polynomial, information_exponent


@pytest.mark.parametrize("omega", [0.5, 1.0, 2.0])
def test_sine_coefficients_closed_form(omega):
    # E[sin(wz) He_k(z)] = w^k E[sin^(k)(wz)] = w^k e^{-w^2/2} sin(k pi/2)  (Stein)
    c = hermite_coefficients(lambda z: np.sin(omega * z), 8)
    k = np.arange(9)
    expected = omega ** k * np.exp(-omega ** 2 / 2) * np.sin(k * np.pi / 2)
    np.testing.assert_allclose(c, expected, atol=1e-12)


def test_exponential_coefficients_closed_form():
    # E[e^{tz} He_k(z)] = t^k e^{t^2/2}
    t = 0.7
    c = hermite_coefficients(lambda z: np.exp(t * z), 10)
    np.testing.assert_allclose(c, t ** np.arange(11) * np.exp(t * t / 2), rtol=1e-10)


def test_hermite_orthogonality():
    for j in range(6):
        c = hermite_coefficients(lambda z, j=j: hermite_polynomial(j, z), 6)
        expected = np.zeros(7)
        expected[j] = math.factorial(j)
        np.testing.assert_allclose(c, expected, atol=1e-10)


def test_gaussian_expectation_moments():
    for p, m in [(2, 1.0), (4, 3.0), (6, 15.0), (8, 105.0)]:
        assert ts.gaussian_expectation(lambda z: z ** p) == pytest.approx(m, rel=1e-12)


def test_information_exponent_of_coefficient_arrays():
    assert information_exponent([5.0, 0.0, 0.0, 2.0]) == 3
    assert information_exponent([1.0, 0.3]) == 1
    assert information_exponent([1.0, 0.0, 0.0]) is None


def test_gauss_nodes_normalised():
    z, w = gauss_nodes(50)
    assert w.sum() == pytest.approx(1.0, abs=1e-13)
    assert z.shape == w.shape == (50,)
