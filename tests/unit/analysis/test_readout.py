"""Ridge readout: against a direct solve, exact recovery, and the linear baseline."""

import math

import numpy as np
import pytest

import twostep as ts
from twostep.analysis.readout import (asymptotic_ideal, explained_fraction, mse, ridge,
                                      ridge_path)
from twostep.model.hermite import hermite_polynomial


def test_ridge_matches_direct_solve():
    rng = np.random.default_rng(0)
    for n, N in [(40, 25), (25, 40)]:
        F = rng.standard_normal((n, N))
        y = rng.standard_normal(n)
        lam = 0.3
        direct = np.linalg.solve(F.T @ F / n + lam * np.eye(N), F.T @ y / n)
        np.testing.assert_allclose(ridge(F, y, lam), direct, rtol=1e-10, atol=1e-12)
        path = ridge_path(F, y, [0.1, 0.3])
        np.testing.assert_allclose(path[1], direct, rtol=1e-10, atol=1e-12)


def test_features_represent_target_exactly():
    # y = sigma(X W^T) theta lies in the feature span: the test error goes to ~0.
    rng = np.random.default_rng(1)
    act = ts.get_activation("poly3")
    W, _ = ts.initialise(30, 10, rng)
    theta = rng.standard_normal(30)
    X, Xt = rng.standard_normal((400, 10)), rng.standard_normal((200, 10))
    F, Ft = ts.features(W, X, act), ts.features(W, Xt, act)
    coef = ridge(F, F @ theta, 1e-10)
    assert mse(Ft, Ft @ theta, coef) < 1e-8 * np.mean((Ft @ theta) ** 2)


def test_readout_on_random_features_beats_zero_and_linear_baseline_formula():
    rng = np.random.default_rng(3)
    teacher = ts.Teacher(ts.hermite_link(1) + ts.hermite_link(2), 20, rng)
    assert ts.best_linear_error(teacher) == pytest.approx(1.0, abs=1e-10)  # He_2 part is left
    W, _ = ts.initialise(200, 20, rng)
    act = ts.get_activation("poly2")
    X, y = teacher.sample(1000, rng)
    Xt, yt = teacher.sample(1000, rng)
    res = ts.fit_readout(ts.features(W, X, act), y, ts.features(W, Xt, act), yt,
                         rng.permutation(1000)[:250])
    # E[y^2] = 2; the best linear predictor leaves 1; random features with a quadratic
    # activation also fit most of He_2 at d = 20. Test MSE over seeds 0-19 of this draw:
    # mean 0.19, sd 0.05, range 0.11-0.25 (seed 3: 0.17). Bound 0.5, half the linear error.
    assert res.test_mse < 0.5
    assert res.penalty > 0


def test_readout_validation():
    rng = np.random.default_rng(4)
    W, _ = ts.initialise(5, 4, rng)
    with pytest.raises(ValueError, match="lambdas must be"):
        ridge_path(np.ones((3, 2)), np.ones(3), [0.0])
    with pytest.raises(ValueError, match="lam must be in"):
        ridge(np.ones((3, 2)), np.ones(3), -1.0)


# --- paired readouts, the Gram-based path, the ideal subspace readout -------------------

from twostep.analysis.readout import (  # noqa: E402
    RELATIVE_LAMBDAS, _gram, _gram_ridge_path, _refit, _ridge_solve, _validation_path)


@pytest.mark.parametrize("shape", [(60, 25), (25, 60)])
def test_gram_path_and_solve_match_the_svd_path(shape):
    rng = np.random.default_rng(5)
    F = rng.standard_normal(shape) * rng.uniform(0.1, 10, shape[1])
    y = rng.standard_normal(shape[0])
    lams = np.logspace(-4, 2, 7)
    np.testing.assert_allclose(_gram_ridge_path(F, y, lams), ridge_path(F, y, lams),
                               rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(_ridge_solve(F, y, 0.3), ridge(F, y, 0.3), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("nk, N", [(80, 50), (40, 90), (2, 5), (5, 2)])
def test_the_tridiagonal_validation_path_is_the_eigendecomposition_path(nk, N):
    # The validation predictions of every penalty from Gk = Q T Q^T (one tridiagonal solve per
    # penalty) are those of the eigendecomposition's path, up to rounding (measured: at most
    # 1.6e-13 of the largest, also at 800 x 1000 and 3200 x 1000); Gram matrices of fewer than
    # three rows or columns take the eigendecomposition itself.
    rng = np.random.default_rng(7)
    F = rng.standard_normal((nk + 20, N)) * rng.uniform(0.1, 3, N)
    y = rng.standard_normal(nk + 20)
    Fk, Fv, yk = F[:nk], F[nk:], y[:nk]
    lams = RELATIVE_LAMBDAS * float(np.mean(F * F))
    Gk = _gram(Fk)
    kept = Gk.copy()
    expected = _gram_ridge_path(Fk, yk, lams) @ Fv.T
    got = _validation_path(Fk, yk, Fv, lams, Gk)
    assert got.shape == (lams.size, 20)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-11 * np.abs(expected).max())
    np.testing.assert_array_equal(Gk, kept)   # the refit reads it afterwards
    if nk < N:
        np.testing.assert_array_equal(_validation_path(Fk, yk, Fv, lams, Gk, Fk @ Fv.T), got)


# Held-out rows of 60: the kept rows' Gram is primal (25 columns) or dual (80 columns).
@pytest.mark.parametrize("N", [25, 80])
def test_the_refit_from_the_paths_gram_is_the_ridge_on_all_rows(N):
    # The readout is refitted on all rows with the Gram matrix of the path's rows plus the
    # held-out rows' blocks: the same coefficients as a solve on all rows, up to rounding.
    rng = np.random.default_rng(6)
    F = rng.standard_normal((60, N)) * rng.uniform(0.1, 10, N)
    y = rng.standard_normal(60)
    keep = np.arange(60) % 5 != 0
    Fk, Fv = F[keep], F[~keep]
    coef = _refit(Fk, y[keep], Fv, y[~keep], _gram(Fk), 0.3)
    np.testing.assert_allclose(coef, _ridge_solve(F, y, 0.3), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(coef, ridge(F, y, 0.3), rtol=1e-9, atol=1e-12)


def test_fit_readout_follows_its_rule():
    rng = np.random.default_rng(6)
    F = rng.standard_normal((80, 30)) * rng.uniform(0.5, 5, 30)
    y = F @ rng.standard_normal(30) + rng.standard_normal(80)
    Ft = rng.standard_normal((50, 30)) * rng.uniform(0.5, 5, 30)
    yt = rng.standard_normal(50)
    val = rng.permutation(80)[:20]
    rel = np.logspace(-3, 1, 9)
    for standardise in (False, True):
        res = ts.fit_readout(F, y, Ft, yt, val, standardise, rel)
        s = ts.feature_scale(F) if standardise else np.ones(30)
        G, Gt = F / s, Ft / s
        lams = rel * np.mean(G ** 2)
        keep = np.setdiff1d(np.arange(80), val)
        errs = [mse(G[val], y[val], ridge(G[keep], y[keep], lam)) for lam in lams]
        lam = lams[int(np.argmin(errs))]
        assert res.penalty == pytest.approx(lam)
        coef = ridge(G, y, lam)
        assert res.test_mse == pytest.approx(mse(Gt, yt, coef), rel=1e-8)
        assert res.train_mse == pytest.approx(mse(G, y, coef), rel=1e-8)
    # A pure-noise target: the largest penalty wins, at the edge of the grid.
    assert ts.fit_readout(F, rng.standard_normal(80), Ft, yt, val, True, rel).edge == 1
    assert ts.fit_readout(F, F[:, 0], Ft, yt, val, True, np.logspace(0, 2, 5)).edge == -1


def test_standardising_is_invariant_to_feature_scales():
    rng = np.random.default_rng(7)
    F, Ft = rng.standard_normal((60, 20)), rng.standard_normal((40, 20))
    y, yt = F[:, 0] + 0.1 * rng.standard_normal(60), Ft[:, 0]
    D = np.diag(np.logspace(-4, 4, 20))
    val = np.arange(15)
    a = ts.fit_readout(F, y, Ft, yt, val, True)
    b = ts.fit_readout(F @ D, y, Ft @ D, yt, val, True)
    assert a.test_mse == pytest.approx(b.test_mse, rel=1e-6)


def test_paired_readout_shares_the_data():
    rng = np.random.default_rng(8)
    d = 15
    teacher = ts.Teacher(ts.hermite_link(1), d, rng)
    W, _ = ts.initialise(40, d, rng)
    act = ts.get_activation("poly2")
    out = ts.paired_readout({"a": W, "b": W.copy(), "c": 2 * W}, act, teacher, 200, 100,
                            np.random.default_rng(9), scalings=("standardised", "raw"))
    assert set(out) == {"standardised", "raw"}
    assert set(out["raw"]) == {"a", "b", "c", "linear", "zero"}
    assert out["raw"]["zero"] == out["standardised"]["zero"]
    # E[y^2] = 1, averaged over n_test = 100 points: sd sqrt(2/100) = 0.14. Over 30 draws
    # of this setting: mean 1.02, sd 0.13, range 0.67-1.31 (this one: 1.10). abs=0.45.
    assert out["raw"]["zero"].test_mse == pytest.approx(1.0, abs=0.45)
    for s in out:
        assert out[s]["a"] == out[s]["b"]  # same features, same data, same split
    # The linear readout recovers a noise-free linear target from n > d samples: over 30
    # draws the test MSE was 6e-13 to 2.4e-12 (this one 1.2e-12), rounding and the penalty.
    assert out["raw"]["linear"].test_mse < 1e-8
    with pytest.raises(ValueError, match="scalings"):
        ts.paired_readout({"a": W}, act, teacher, 20, 10, rng, scalings=("scaled",))
    with pytest.raises(ValueError, match="other than 'linear'"):
        ts.paired_readout({"linear": W}, act, teacher, 20, 10, rng)
    with pytest.raises(ValueError, match="teacher's d=15"):
        ts.paired_readout({"a": W[:, :5]}, act, teacher, 20, 10, rng)
    with pytest.raises(TypeError, match="weights"):
        ts.paired_readout([W], act, teacher, 20, 10, rng)


def test_subspace_error_limits_and_linear_case():
    rng = np.random.default_rng(10)
    d = 12
    teacher = ts.Teacher([ts.hermite_link(1), ts.odd_bounded_link()], d, rng, noise=0.3)
    B = teacher.directions
    m2 = teacher.second_moment
    assert ts.subspace_error(teacher, np.zeros((0, d))) == pytest.approx(m2)
    # The whole target subspace: only the noise (and a truncation below 1e-3) is left.
    assert ts.subspace_error(teacher, B) == pytest.approx(0.09, abs=1e-3)
    # A direction orthogonal to both: nothing explained.
    u = rng.standard_normal(d)
    u -= B.T @ (B @ u)
    assert ts.subspace_error(teacher, u) == pytest.approx(m2, abs=1e-12)
    # He_1 alone, overlap rho: 1 - rho^2 (the best linear predictor restricted to u).
    he1 = ts.Teacher(ts.hermite_link(1), d, rng)
    rho, b = 0.6, he1.directions[0]
    u -= b * (u @ b)
    w = rho * b + np.sqrt(1 - rho ** 2) * u / np.linalg.norm(u)
    assert ts.subspace_error(he1, 3.0 * w) == pytest.approx(1 - rho ** 2, abs=1e-12)
    assert ts.projected_error(he1, [[rho ** 2]]) == pytest.approx(1 - rho ** 2, abs=1e-12)
    with pytest.raises(ValueError, match="linearly independent"):
        ts.subspace_error(teacher, np.vstack([u, 2 * u]))
    with pytest.raises(ValueError, match="M must be"):
        ts.projected_error(teacher, [[2.0, 0.0], [0.0, 0.5]])


def test_subspace_error_matches_monte_carlo_of_the_conditional_mean():
    # The predictor E[y | <u, x>] = sum_k c_k rho^k He_k(w)/k! (Mehler), scored by Monte Carlo.
    rng = np.random.default_rng(11)
    d = 6
    g = ts.odd_bounded_link()
    teacher = ts.Teacher(g, d, rng)
    beta = teacher.directions[0]
    perp = rng.standard_normal(d)
    perp -= beta * (perp @ beta)
    perp /= np.linalg.norm(perp)
    rho = 0.8
    u = rho * beta + np.sqrt(1 - rho ** 2) * perp
    X = rng.standard_normal((400_000, d))
    y = teacher.labels(X, rng)
    w = X @ u
    c = g.coefficients
    pred = sum(c[k] * rho ** k * hermite_polynomial(k, w) / math.factorial(k)
               for k in range(1, c.size))
    mc = np.mean((y - pred) ** 2)
    # Monte Carlo minus the quadrature value 0.834 over 20 sample seeds: mean 0.0003,
    # sd 0.0018, extremes -0.0031 and 0.0034 (this draw: -0.0010). abs=6e-3, 3.3 sd.
    assert ts.subspace_error(teacher, u) == pytest.approx(mc, abs=6e-3)
    assert ts.subspace_error(teacher, u) < 0.95  # overlap 0.8 explains 0.166 of E[y^2] = 1


# --- the ideal readout of one direction and of a first-order spike ---------------------

def test_explained_fraction_is_rho_squared_for_he1_and_rho6_leading_for_he3():
    he1 = ts.make_teacher("he1", 5, np.random.default_rng(0))
    he3 = ts.make_teacher("he3", 5, np.random.default_rng(0))
    rho = np.array([0.0, 0.1, 0.5, 1.0])
    np.testing.assert_allclose(explained_fraction(he1, rho), rho ** 2, atol=1e-12)
    assert isinstance(explained_fraction(he1, 0.5), float)
    # He_3/sqrt(6): c_3^2/3! = 1, so the fraction is exactly rho^6.
    np.testing.assert_allclose(explained_fraction(he3, rho), rho ** 6, atol=1e-12)


def test_explained_fraction_rejects_bad_input():
    two = ts.make_teacher("he1+odd", 5, np.random.default_rng(0))
    one = ts.make_teacher("he1", 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="single-index"):
        explained_fraction(two, 0.5)
    with pytest.raises(ValueError, match="rho"):
        explained_fraction(one, 1.5)
    with pytest.raises(TypeError, match="teacher"):
        explained_fraction("he1", 0.5)


def test_asymptotic_ideal_matches_closed_forms_and_the_one_step_overlap():
    he1 = ts.make_teacher("he1", 5, np.random.default_rng(0))
    psis = np.array([0.5, 1.0, 4.0])
    np.testing.assert_allclose(asymptotic_ideal(he1, psis), 1 / (1 + psis), rtol=1e-12)
    # Two equal steps on independent batches: twice the data.
    np.testing.assert_allclose(asymptotic_ideal(he1, psis, (1.0, 1.0)), 1 / (1 + 2 * psis),
                               rtol=1e-12)
    # A general link: the overlap of v_1 is the one-step theory's.
    mix = ts.make_teacher("he1+odd", 5, np.random.default_rng(0))
    c1 = np.array([g.coefficients[1] for g in mix.links])
    rho = c1 / np.sqrt(c1 @ c1 + mix.second_moment / 2.0)
    want = ts.projected_error(mix, np.outer(rho, rho)) / mix.second_moment
    assert asymptotic_ideal(mix, 2.0) == pytest.approx(want, rel=1e-12)
    # More weight on the second step than equal weights gives a worse direction.
    assert asymptotic_ideal(he1, 1.0, (1.0, 3.0)) > asymptotic_ideal(he1, 1.0, (1.0, 1.0))


def test_asymptotic_ideal_rejects_bad_input():
    he1 = ts.make_teacher("he1", 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="psi"):
        asymptotic_ideal(he1, 0.0)
    with pytest.raises(ValueError, match="psi"):
        asymptotic_ideal(he1, [1.0, -1.0])
    with pytest.raises(ValueError, match="weights"):
        asymptotic_ideal(he1, 1.0, (0.0, 0.0))
    with pytest.raises(TypeError, match="psi"):
        asymptotic_ideal(he1, "1")


def test_a_step_is_read_out_as_the_layer_it_is():
    # W = B - eta G given as a Step: features X B^T - eta X G^T, the same readout as the
    # plain W to rounding (the relative differences of the errors here: below 1e-13).
    from twostep.analysis.readout import Step
    rng = np.random.default_rng(3)
    d = 20
    teacher = ts.Teacher(ts.hermite_link(1), d, rng)
    B, _ = ts.initialise(30, d, rng)
    G = rng.standard_normal((30, d)) / d
    W = B - 0.7 * G
    plain = ts.paired_readout({"w": W}, ts.get_activation("poly2"), teacher, 120, 60,
                              np.random.default_rng(4), linear=False)
    step = ts.paired_readout({"w": Step(W, B, 0.7, G)}, ts.get_activation("poly2"), teacher,
                             120, 60, np.random.default_rng(4), linear=False)
    a, b = plain["standardised"]["w"], step["standardised"]["w"]
    assert a.penalty == b.penalty and a.test_mse == pytest.approx(b.test_mse, rel=1e-10)
    with pytest.raises(ValueError, match="three matrices alike"):
        ts.paired_readout({"w": Step(W, B, 0.7, G[:, :5])}, ts.get_activation("poly2"),
                          teacher, 20, 10, rng)
