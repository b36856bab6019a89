"""The exact decomposition W_2 - W_1 = sum_k T_k and the rank-one signal parts."""

import math

import numpy as np
import pytest

import twostep as ts
from twostep.analysis.alignment import overlap
from twostep.analysis.decomposition import (reuse_weight, second_step_term,
                                           second_step_term_operator, signal_directions)

STEPS = ((0.2, 0.4), (0.2, 0.25))


def run(batch, activation="poly4", N=300, n=250, d=200, seed=0, link=None):
    return ts.run_two_steps(N, n, d, ts.get_activation(activation), link or ts.hermite_link(1),
                            STEPS, batch, np.random.default_rng(seed))


@pytest.mark.parametrize("batch", ["reused", "fresh"])
@pytest.mark.parametrize("activation", ["poly2", "poly3", "poly4"])
def test_terms_sum_to_second_update(batch, activation):
    r = run(batch, activation)
    terms = ts.second_step_terms(r)
    assert len(terms) == r.activation.degree
    D = r.W2 - r.W1
    assert np.linalg.norm(sum(terms) - D) <= 1e-10 * np.linalg.norm(D)
    np.testing.assert_array_equal(second_step_term(r, 2 if r.activation.degree > 2 else 1),
                                  terms[2 if r.activation.degree > 2 else 1])


@pytest.mark.parametrize("batch", ["reused", "fresh"])
@pytest.mark.parametrize("k", [0, 2])
def test_the_term_operator_is_the_term(batch, k):
    # T_k applied without forming it: its products with vectors are the dense term's, and its
    # top singular triplet (ARPACK, the reuse experiments' call) is the dense term's.
    r = run(batch)
    T, op = second_step_term(r, k), second_step_term_operator(r, k)
    assert op.shape == T.shape == (r.N, r.d) and op.dtype == T.dtype
    x, u = np.random.default_rng(2).standard_normal((2, r.d))[0], np.ones(r.N)
    np.testing.assert_allclose(op.matvec(x), T @ x, rtol=1e-12, atol=1e-14 * np.abs(T).max())
    np.testing.assert_allclose(op.rmatvec(u), T.T @ u, rtol=1e-12, atol=1e-14 * np.abs(T).max())
    s, Vt = ts.top_singular(op, 1, vectors="right")
    s_dense, _, Vt_dense = ts.top_singular(T, 1)
    np.testing.assert_allclose(s, s_dense, rtol=1e-12)
    assert abs(Vt[0] @ Vt_dense[0]) == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match="k must be in"):
        second_step_term_operator(r, 4)


@pytest.mark.parametrize("batch", ["reused", "fresh"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kept_pre_activations_are_the_products(batch, dtype):
    # keep_pre takes P = W0 X2^T and D = W1 X2^T - P from the steps instead of two products:
    # the same steps bit for bit, and P, D and every term equal to rounding of the dtype
    # (measured at N = 300: 2e-15 in float64, 1.1e-6 in float32, relative to each term's largest
    # entry; bounds 1e-13 and 1e-5).
    args = (300, 200, 250, ts.get_activation("poly4"), ts.hermite_link(1), STEPS, batch)
    plain = ts.run_two_steps(*args, np.random.default_rng(1), dtype=dtype)
    kept = ts.run_two_steps(*args, np.random.default_rng(1), dtype=dtype, keep_pre=True)
    assert plain.pre is None and kept.pre is not None
    np.testing.assert_array_equal(kept.W2, plain.W2)
    tol = 1e-13 if dtype == np.float64 else 1e-5
    P, D = kept.pre
    for got, want in zip((P, D), (plain.W0 @ plain.X2.T, (plain.W1 - plain.W0) @ plain.X2.T)):
        assert got.shape == (300, 200) and got.dtype == dtype
        assert np.abs(got - want).max() <= tol * np.abs(want).max()
    for got, want in zip(ts.second_step_terms(kept), ts.second_step_terms(plain)):
        assert np.abs(got - want).max() <= tol * np.abs(want).max()
    with pytest.raises(TypeError, match="keep_pre must be a bool"):
        ts.run_two_steps(*args, np.random.default_rng(1), keep_pre=1)


def test_kept_pre_activations_need_numpy_arrays():
    xp = pytest.importorskip("array_api_strict")
    from dataclasses import replace
    from twostep.model.steps import draw_problem, two_steps
    p = draw_problem(30, 20, 25, ts.hermite_link(1), "fresh", np.random.default_rng(0))
    on_device = replace(p, W0=xp.asarray(p.W0), a=xp.asarray(p.a), X1=xp.asarray(p.X1),
                        y1=xp.asarray(p.y1), X2=xp.asarray(p.X2), y2=xp.asarray(p.y2))
    with pytest.raises(ValueError, match="keep_pre=True needs numpy arrays"):
        two_steps(on_device, ts.get_activation("poly4"), STEPS, keep_pre=True)


def test_mean_signal_part_formula():
    r = run("fresh")
    mu = r.activation.mu
    s = r.X2 @ (r.X1.T @ r.y1 / r.n)
    for k in range(4):
        u = r.X2.T @ (r.y2 * s ** k) / r.n
        expected = (r.eta2 * mu[k + 1] * (r.eta1 * mu[1]) ** k / math.factorial(k)
                    * np.outer(r.a ** (k + 1), u))
        S = ts.signal_part(r, k, kind="mean")
        np.testing.assert_allclose(S.matrix(), expected, rtol=1e-10, atol=1e-15)
        np.testing.assert_allclose(signal_directions(r.X1, r.y1, [k], r.X2, r.y2)[0], u)
        assert np.linalg.norm(S.left) == pytest.approx(1) and np.linalg.norm(S.right) == pytest.approx(1)


def test_reuse_signal_equals_mean_signal_for_fresh_batches():
    r = run("fresh")
    for k in range(4):
        np.testing.assert_allclose(ts.signal_part(r, k, "reuse").matrix(),
                                   ts.signal_part(r, k, "mean").matrix(), rtol=1e-9, atol=1e-14)


def test_reuse_weight_against_monte_carlo():
    # m_{k,j} = E_z[sigma^(k+1)(z) (mu1 s_j + (sigma'(z) - mu1) r_j)^k]: quadrature vs sampling.
    r = run("reused", N=60, n=40, d=30)
    act = r.activation
    z = np.random.default_rng(1).standard_normal(2_000_000)
    s = r.X2 @ r.v
    rj = r.y2 * np.sum(r.X2 ** 2, axis=1) / r.n
    m = reuse_weight(act, 2, act.mu[1] * s, rj)
    for j in range(3):
        mc = np.mean(act.derivative(z, 3) * (s[j] + (act.derivative(z, 1) - 1) * rj[j]) ** 2)
        # Monte-Carlo relative error, max over j, over z-seeds 0-19 (this run): mean 0.0024,
        # sd 0.0018, max 0.0068 (seed 1: 0.0004); rel=0.02 is 3x the largest.
        assert m[j] == pytest.approx(mc, rel=0.02)
    # The run's reuse-aware signal part is built from these weights.
    u = r.X2.T @ (r.y2 * m) / r.n
    np.testing.assert_allclose(ts.signal_part(r, 2, "reuse").right, u / np.linalg.norm(u),
                               rtol=1e-10)


def test_fresh_terms_are_close_to_their_signal_part():
    # In the fresh scheme T_1 is the rank-one spike plus a smaller remainder. At N = 300,
    # over seeds 0-39, the top right (left) singular vector's overlap with u_1 (a^2): per
    # seed mean 0.87 (0.86), sd 0.10 (0.08), min 0.58 (0.57); the mean of 5 seeds, over
    # the 8 blocks 0-4, ..., 35-39: mean 0.87 (0.86), sd 0.04 (0.03), min 0.83 (0.82),
    # seeds 0-4 0.84 (0.82). Bound 0.75, about mean - 3 sd; chance is ~0.06.
    right, left = [], []
    for seed in range(5):
        r = run("fresh", seed=seed)
        S1 = ts.signal_part(r, 1)
        s, U, Vt = ts.top_singular(second_step_term(r, 1), 1)
        right.append(overlap(Vt[0], S1.right))
        left.append(overlap(U[:, 0], S1.left))
    assert np.mean(right) > 0.75 and np.mean(left) > 0.75


def test_decomposition_rejects_non_polynomial_activation():
    r = run("fresh", activation="tanh", N=20, n=20, d=10)
    with pytest.raises(ValueError, match="PolynomialActivation"):
        ts.second_step_terms(r)
    r = run("fresh", N=20, n=20, d=10)
    with pytest.raises(ValueError, match="k must be in"):
        ts.signal_part(r, 4)


@pytest.mark.parametrize("dtype, bound", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_reused_t0_from_the_first_update(dtype, bound):
    # A reused batch's T_0 is eta2 times the first step's gradient, so second_step_terms(...,
    # reuse_first=True) takes it as (eta2/eta1)(W1 - W0) instead of a product: the same term up
    # to the rounding of W1 - W0 (measured at N = 300: 4e-15 in float64, 1.1e-6 in float32,
    # relative to the term's largest entry; bounds 1e-12 and 1e-5). The other terms, and every
    # term of a fresh batch, are the products themselves, bit for bit.
    for batch in ("reused", "fresh"):
        r = ts.run_two_steps(300, 250, 200, ts.get_activation("poly4"), ts.hermite_link(1),
                             STEPS, batch, np.random.default_rng(3), dtype=dtype)
        plain, reusing = ts.second_step_terms(r), ts.second_step_terms(r, reuse_first=True)
        assert len(reusing) == len(plain) == 4 and reusing[0].dtype == dtype
        for T, R in zip(plain[1:], reusing[1:]):
            np.testing.assert_array_equal(R, T)
        if batch == "fresh":
            np.testing.assert_array_equal(reusing[0], plain[0])
        else:
            err = np.abs(reusing[0] - plain[0]).max() / np.abs(plain[0]).max()
            assert 0 < err <= bound


@pytest.mark.parametrize("batch", ["reused", "fresh"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_run_without_its_second_step_keeps_the_same_pre_activations(batch, dtype):
    # second=False (spike_experiment: W2 rebuilt from the terms) skips the second step's
    # product: no W2, and the kept P, D, hence every term, the same bit for bit.
    from twostep.model._core import two_steps_core
    from twostep.model.steps import draw_problem
    p = draw_problem(300, 250, 200, ts.hermite_link(1), batch, np.random.default_rng(4),
                     dtype=dtype)
    act = ts.get_activation("poly4")
    full, half = (two_steps_core(p, act, STEPS, True, second=s) for s in (True, False))
    assert half.W2 is None and full.W2 is not None
    np.testing.assert_array_equal(half.W1, full.W1)
    for got, want in zip(half.pre, full.pre):
        np.testing.assert_array_equal(got, want)
