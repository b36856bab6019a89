"""Links and teachers: Hermite description, information exponents, labels."""

import numpy as np
import pytest

import twostep as ts


@pytest.mark.parametrize("name, exponent", [("he1", 1), ("he2", 2), ("he3", 3), ("he4", 4), ("odd", 3)])
def test_information_exponents(name, exponent):
    g = ts.get_link(name)
    assert g.information_exponent == exponent
    assert g.second_moment == pytest.approx(1.0, abs=1e-10)


def test_odd_link_is_odd_bounded_with_closed_form_c3():
    g = ts.odd_bounded_link(2.0)
    z = np.linspace(-50, 50, 1001)
    np.testing.assert_allclose(g(-z), -g(z), atol=1e-12)
    c = g.coefficients
    assert c[1] == 0 and c[2] == 0
    # c_3 = scale * E[sin(2z) He_3] = scale * (-8 e^{-2})
    c1 = 2 * np.exp(-2.0)
    scale = 1 / np.sqrt(0.5 * (1 - np.exp(-8.0)) - c1 ** 2)
    assert c[3] == pytest.approx(-8 * np.exp(-2.0) * scale, rel=1e-10)


def test_hermite_link_coefficients():
    c = ts.hermite_link(3).coefficients
    expected = np.zeros_like(c)
    expected[3] = 6 / np.sqrt(6)  # E[He_3^2]/sqrt(3!)
    np.testing.assert_allclose(c, expected, atol=1e-10)


def test_link_arithmetic():
    g = ts.hermite_link(1) + 2.0 * ts.hermite_link(3)
    assert g.information_exponent == 1
    assert g.second_moment == pytest.approx(5.0, rel=1e-10)


def test_teacher_directions_orthonormal_and_labels():
    rng = np.random.default_rng(3)
    teacher = ts.Teacher([ts.hermite_link(1), ts.odd_bounded_link()], 50, rng, noise=0.5)
    B = teacher.directions
    np.testing.assert_allclose(B @ B.T, np.eye(2), atol=1e-12)
    X = ts.gaussian_inputs(200_000, 50, rng)
    y = teacher.labels(X, rng)
    assert y.shape == (200_000,)
    # E[y^2] = 1 + 1 + 0.25. Over seeds 0-19: mean(y^2) - 2.25 has mean -0.001, sd 0.007,
    # extremes -0.016 and 0.009 (seed 3: 0.004). abs=0.025; noise 0.5^2 left out gives 2.0.
    assert np.mean(y ** 2) == pytest.approx(teacher.second_moment, abs=0.025)
    assert teacher.second_moment == pytest.approx(2.25, abs=1e-10)
    # Without noise the labels are exactly the links of the projections.
    quiet = ts.Teacher(ts.hermite_link(2), 50, np.random.default_rng(0))
    Xs = X[:10]
    np.testing.assert_allclose(quiet.labels(Xs, rng), ts.hermite_link(2)(Xs @ quiet.directions[0]))
