"""Activations: derivatives against finite differences, Hermite coefficients against closed forms."""

import math

import numpy as np
import pytest

import twostep as ts
from twostep.model.activations import ACTIVATIONS, Activation, CentredReLU, PolynomialActivation
from twostep.model.hermite import hermite_coefficients, hermite_polynomial

Z = np.linspace(-2.5, 2.5, 41)


def numerical_derivative(f, z, h=1e-5):
    return (f(z + h) - f(z - h)) / (2 * h)


@pytest.mark.parametrize("act", [ts.get_activation("poly4"), ts.Tanh(),
                                 PolynomialActivation([0.1, -0.5, 0.3, 2.0])])
def test_derivatives_match_finite_differences(act):
    for order in range(1, 4):
        fd = numerical_derivative(lambda z: act.derivative(z, order - 1), Z)
        np.testing.assert_allclose(act.derivative(Z, order), fd, rtol=1e-6, atol=1e-6)


def test_polynomial_hermite_coefficients_roundtrip():
    mu = np.array([0.2, 1.0, -0.5, 0.25, 1.0])
    act = PolynomialActivation(mu)
    quad = hermite_coefficients(act, 6)
    np.testing.assert_allclose(quad, np.r_[mu, 0, 0], atol=1e-12)
    np.testing.assert_allclose(act.hermite_coefficients(6), np.r_[mu, 0, 0])
    # Stein: mu_k = E[sigma^(k)(z)]
    for k in range(5):
        assert ts.gaussian_expectation(lambda z: act.derivative(z, k)) == pytest.approx(mu[k], abs=1e-12)


def test_polynomial_derivatives_beyond_degree_vanish():
    act = ts.get_activation("poly3")
    assert act.degree == 3
    np.testing.assert_array_equal(act.derivative(Z, 4), 0.0)


def test_poly_family_definition():
    # "polyL" is sum_{k=1}^L He_k / k!, i.e. mu_1 = ... = mu_L = 1.
    act = ts.get_activation("poly4")
    z = Z
    expected = sum(hermite_polynomial(k, z) / math.factorial(k) for k in range(1, 5))
    np.testing.assert_allclose(act(z), expected, atol=1e-12)


def test_tanh_closed_forms():
    t = np.tanh(Z)
    act = ts.Tanh()
    np.testing.assert_allclose(act.derivative(Z, 1), 1 - t ** 2, atol=1e-14)
    np.testing.assert_allclose(act.derivative(Z, 2), -2 * t * (1 - t ** 2), atol=1e-14)
    mu = act.hermite_coefficients(6)
    np.testing.assert_allclose(mu[::2], 0.0, atol=1e-14)  # odd function
    assert mu[1] == pytest.approx(0.6057055, abs=1e-6)  # E[1 - tanh^2 z]


def test_relu_coefficients_closed_form_and_quadrature():
    act = CentredReLU()
    mu = act.hermite_coefficients(6)
    phi0 = 1 / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(mu, [0, 0.5, phi0, 0, -phi0, 0, 3 * phi0], atol=1e-14)
    # Generic quadrature converges slowly past the kink; it agrees to the
    # 1e-3 that a 300-point rule reaches (measured error 8e-4 at 200 points).
    quad = hermite_coefficients(act, 4, points=300)
    np.testing.assert_allclose(quad, mu[:5], atol=2e-3)
    with pytest.raises(ValueError, match="order"):
        act.derivative(Z, 2)


def test_get_activation_names():
    for name in ACTIVATIONS:
        assert isinstance(ts.get_activation(name), Activation)
    with pytest.raises(ValueError, match="name must be one of"):
        ts.get_activation("sigmoid")


def test_tanh_derivatives_keep_float32_and_agree_with_float64():
    # float32 in, float32 out: the gradient then runs its products in float32, as for sigma_4.
    # Each derivative is a polynomial in tanh z of degree order + 1; float32's rounding
    # (6e-8) moves it by about 1e-7 per unit of its largest coefficient (measured 1.7e-5 at
    # order 5, whose coefficients reach 136); the bound is 1e-6 times their sum of moduli.
    tanh = ts.get_activation("tanh")
    z = np.random.default_rng(0).normal(scale=2.0, size=(50, 40))
    for order in range(6):
        low, high = tanh.derivative(z.astype(np.float32), order), tanh.derivative(z, order)
        assert low.dtype == np.float32 and high.dtype == np.float64
        scale = np.abs(tanh._polys[order].coef).sum()
        np.testing.assert_allclose(low, high, rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(tanh.derivative(z, 1), 1 - np.tanh(z) ** 2, rtol=0, atol=1e-15)
