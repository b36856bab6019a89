"""The Gaussian moments of twostep/analysis/moments.py against closed forms and direct
quadrature: the spread of sigma', one sample's share of the remainder, the local slope of
sqrt(log N / N), E[y^2 z^2] of the Hermite links and Stein's identity."""

from __future__ import annotations

import numpy as np
import pytest

from twostep.analysis.moments import (cross_moment, derivative_spread, log_corrected_slope,
                                      single_sample_norm, stein_gap)
from twostep.model.activations import Tanh, get_activation
from twostep.model.hermite import gaussian_expectation
from twostep.model.targets import hermite_link

POLY4 = get_activation("poly4")
TANH = get_activation("tanh")


def test_derivative_spread_of_sigma4_has_its_closed_form():
    # sigma_4' - mu_1 = He_1 + He_2/2 + He_3/6, variance 1 + 2/4 + 6/36
    assert derivative_spread(POLY4) == pytest.approx(np.sqrt(1 + 0.5 + 1 / 6), rel=1e-10)
    mu1 = TANH.hermite_coefficients(1)[1]
    direct = np.sqrt(gaussian_expectation(lambda z: (1 - np.tanh(z) ** 2 - mu1) ** 2))
    assert derivative_spread(TANH) == pytest.approx(direct, rel=1e-8)


def test_single_sample_norm():
    assert single_sample_norm(-3.0, 1.5, 400, 100) == pytest.approx(3.0 * 1.5 * 10 / 400)


def test_log_corrected_slope_is_the_local_slope():
    N = 4000.0
    f = lambda x: 0.5 * (np.log(np.log(x)) - np.log(x))  # log sqrt(log N / N)
    h = 1e-4
    numeric = (f(N * np.exp(h)) - f(N * np.exp(-h))) / (2 * h)
    assert log_corrected_slope(N) == pytest.approx(numeric, rel=1e-6)


def test_cross_moment_of_hermite_links():
    # E[z^4] = 3; E[(z^2-1)^2 z^2]/2 = (15 - 6 + 1)/2 = 5; E[(z^3-3z)^2 z^2]/6 = (105-90+27)/6 = 7
    assert cross_moment(hermite_link(1)) == pytest.approx(3.0, rel=1e-10)
    assert cross_moment(hermite_link(2)) == pytest.approx(5.0, rel=1e-10)
    assert cross_moment(hermite_link(3)) == pytest.approx(7.0, rel=1e-10)


def test_stein_gap_is_tiny_for_tanh():
    assert 0 <= stein_gap(Tanh(), 3) < 1e-8
