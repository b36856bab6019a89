"""The finite-difference check of the correlation loss's gradient."""

import numpy as np
import pytest

import twostep as ts
from twostep.model.activations import PolynomialActivation
from twostep.analysis import gradcheck
from twostep.analysis.gradcheck import gradient_check


def small(seed=0, N=6, n=9, d=4):
    rng = np.random.default_rng(seed)
    W, a = ts.initialise(N, d, rng)
    X = ts.gaussian_inputs(n, d, rng)
    return W, a, X, rng.standard_normal(n)


@pytest.mark.parametrize("name", ["poly2", "poly4", "tanh", "relu"])
def test_analytic_gradient_passes(name):
    W, a, X, y = small()
    assert gradient_check(W, a, X, y, ts.get_activation(name)) < 1e-7


def test_check_detects_a_wrong_gradient(monkeypatch):
    # The loss of a linear activation is linear in W, so its finite differences are exact
    # (the check gives rounding only); a stand-in gradient, that of another activation, fails.
    W, a, X, y = small()
    lin = PolynomialActivation([0.0, 1.0])
    assert gradient_check(W, a, X, y, lin) < 1e-8
    poly4 = ts.get_activation("poly4")
    monkeypatch.setattr(gradcheck, "gradient_core",
                        lambda W, a, X, y, act: ts.gradient(W, a, X, y, poly4))
    assert gradient_check(W, a, X, y, lin) > 1e-3


def test_rejects_bad_input():
    W, a, X, y = small()
    with pytest.raises(ValueError, match=r"h must be in \(0.0, inf\]"):
        gradient_check(W, a, X, y, ts.get_activation("tanh"), h=0.0)
    Wb, ab = ts.initialise(200, 101, np.random.default_rng(0))
    Xb = ts.gaussian_inputs(3, 101, np.random.default_rng(1))
    with pytest.raises(ValueError, match="W must have at most 20000 entries"):
        gradient_check(Wb, ab, Xb, np.ones(3), ts.get_activation("tanh"))
    with pytest.raises(ValueError, match="identically zero"):
        gradient_check(W, a, X, np.zeros_like(y), ts.get_activation("tanh"))
    with pytest.raises(TypeError, match="activation must be a twostep Activation"):
        gradient_check(W, a, X, y, np.tanh)
