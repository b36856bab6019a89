"""The network, the correlation loss and its gradient."""

import numpy as np
import pytest

import twostep as ts
from twostep.model.activations import PolynomialActivation


def correlation_loss(W, a, X, y, act):
    # L(W) = -(1/n) sum_j y_j a^T sigma(W x_j), sample by sample: the loss ts.gradient derives
    return -np.mean(y * np.array([a @ act(W @ x) for x in X]))


def small_problem(seed=0, N=7, n=11, d=5, activation="poly4"):
    rng = np.random.default_rng(seed)
    W, a = ts.initialise(N, d, rng)
    X = ts.gaussian_inputs(n, d, rng)
    y = rng.standard_normal(n)
    return W, a, X, y, ts.get_activation(activation)


@pytest.mark.parametrize("activation", ["poly4", "tanh", "relu"])
def test_gradient_matches_central_finite_differences(activation):
    W, a, X, y, act = small_problem(activation=activation)
    G = ts.gradient(W, a, X, y, act)
    h = 1e-6
    fd = np.zeros_like(W)
    for i in range(W.shape[0]):
        for k in range(W.shape[1]):
            E = np.zeros_like(W)
            E[i, k] = h
            fd[i, k] = (correlation_loss(W + E, a, X, y, act)
                        - correlation_loss(W - E, a, X, y, act)) / (2 * h)
    # central differences have O(h^2) truncation and O(eps/h) rounding error
    np.testing.assert_allclose(G, fd, rtol=1e-6, atol=1e-8)


def test_initialisation_scales():
    rng = np.random.default_rng(1)
    W, a = ts.initialise(2000, 500, rng)
    assert W.shape == (2000, 500) and a.shape == (2000,)
    # entries N(0, 1/d) and N(0, 1/N): relative standard error sqrt(2/(N d)) = 1e-3 and
    # sqrt(2/N) = 3e-2. Over seeds 0-19: W.var() d - 1 sd 0.0012, extremes -0.0031 (seed 1)
    # and 0.0013; a.var() N - 1 sd 0.035, extremes -0.046 and 0.077 (seed 1: 0.022). Bounds
    # 0.01 and 0.12 (3.4 sd); a 1/N-for-1/d mix-up is off by a factor 4.
    assert W.var() * 500 == pytest.approx(1.0, abs=0.01)
    assert a.var() * 2000 == pytest.approx(1.0, abs=0.12)


def test_float32_keeps_dtype():
    rng = np.random.default_rng(2)
    W, a = ts.initialise(20, 10, rng, dtype=np.float32)
    X = ts.gaussian_inputs(30, 10, rng, dtype=np.float32)
    y = rng.standard_normal(30).astype(np.float32)
    G = ts.gradient(W, a, X, y, ts.get_activation("poly4"))
    assert G.dtype == np.float32
    G64 = ts.gradient(W.astype(float), a.astype(float), X.astype(float), y.astype(float),
                      ts.get_activation("poly4"))
    np.testing.assert_allclose(G, G64, rtol=1e-4, atol=1e-6)


def test_blocked_gradient_equals_single_block():
    from twostep.model._core import gradient_core

    W, a, X, y, act = small_problem(N=13, n=9, d=6)
    whole = gradient_core(W, a, X, y, act, block_elements=10 ** 6)
    for block in (1, 9, 20, 50):  # one row, one row exactly, two rows, several
        np.testing.assert_allclose(gradient_core(W, a, X, y, act, block_elements=block), whole,
                                   rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_one_gradient_for_every_array_library(dtype):
    # array_api_strict is the array API standard's reference library, with none of numpy's
    # extras: the gradient and the step run on it through the same code as on CuPy or
    # PyTorch, and agree with numpy to rounding.
    xps = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(4)
    act = PolynomialActivation([0.0, 1.0, 0.5, 1 / 6, 1 / 24])
    W, a = ts.initialise(50, 30, rng, dtype=dtype)
    X = ts.gaussian_inputs(70, 30, rng, dtype=dtype)
    y = (X[:, 0] + X[:, 1] ** 2).astype(dtype)
    ref = ts.gradient(W, a, X, y, act)
    on = [xps.asarray(v) for v in (W, a, X, y)]
    G = ts.gradient(*on, act)
    assert type(G) is type(on[0]) and G.dtype == on[0].dtype
    tol = 1e-12 if dtype == "float64" else 2e-5
    np.testing.assert_allclose(np.asarray(G), ref, rtol=tol, atol=tol * np.abs(ref).max())
    W1 = ts.one_step(*on, act, 0.3)
    np.testing.assert_allclose(np.asarray(W1), ts.one_step(W, a, X, y, act, 0.3), rtol=tol,
                               atol=tol * np.abs(W).max())
