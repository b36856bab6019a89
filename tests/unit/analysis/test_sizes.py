"""The size formulas of twostep.analysis.sizes: a spike's fading width, the matched step
constant, the typical largest label."""

from __future__ import annotations

import numpy as np
import pytest

import twostep as ts
from twostep.analysis import sizes


def test_fading_width():
    assert sizes.fading_width(-0.05, 1000) == pytest.approx(1000 * 2 ** 20)
    assert sizes.fading_width(0.5, 10, factor=4) == pytest.approx(160)
    with pytest.raises(ValueError, match="exponent must be non-zero"):
        sizes.fading_width(0.0, 1000)
    with pytest.raises(ValueError, match="factor"):
        sizes.fading_width(0.1, 1000, factor=1.0)


def test_matched_constant():
    # sigma_4 has mu_1 = mu_3 = 1; tanh mu_1 = 0.6057, mu_3 = -0.3636 (quadrature), so the
    # order-2 weight mu_1^2 |mu_3| c^3 matches at c' = c / (0.6057^2 * 0.3636)^(1/3).
    sigma = ts.get_activation("poly4")
    c = sizes.matched_constant(sigma, "tanh", 0.5)
    assert c == pytest.approx(0.5 / (0.6057055 ** 2 * 0.3635954) ** (1 / 3), rel=1e-6)
    assert sizes.matched_constant("poly4", "poly4", 0.3, order=3) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="no order-1 term"):
        sizes.matched_constant(sigma, "tanh", 0.5, order=1)   # tanh has mu_2 = 0
    with pytest.raises(ValueError, match="c must be"):
        sizes.matched_constant(sigma, "tanh", 0.0)


def test_typical_max_label():
    a = sizes.typical_max_label(["odd", "he3"], 200, np.random.default_rng(5), draws=7)
    rng = np.random.default_rng(5)
    direct = {t: np.median([np.abs(ts.get_link(t)(rng.standard_normal(200))).max() for _ in range(7)])
              for t in ["odd", "he3"]}
    assert a == pytest.approx(direct)
    with pytest.raises(TypeError, match="rng"):
        sizes.typical_max_label(["odd"], 10, 0)
