"""Paired comparison of 0, 1 and 2 steps by test error."""

import numpy as np
import pytest

import twostep as ts
from twostep.experiments.readout import (SCHEMES, learned_directions, measured_directions,
                                      train_schemes)
from twostep.model.targets import make_teacher

N, n, d = 30, 40, 20
ACT = ts.get_activation("poly4")


def schemes(seed=0, alpha2s=(0.05, 0.35), target="he1+odd"):
    sch = train_schemes(np.random.default_rng(seed), N=N, n=n, d=d, activation=ACT,
                        target=target, c=0.5, alpha1=0.4, alpha2s=alpha2s)
    return sch, sch.teacher, seed


def test_schemes_follow_the_definitions_and_match_run_two_steps():
    sch, teacher, _ = schemes()
    for i, a2 in enumerate(sch.alpha2s):
        steps = ((0.5, 0.4), (0.5, a2))
        for batch, W2 in (("reused", sch.W2_reused[i]), ("fresh", sch.W2_fresh[i])):
            rng = np.random.default_rng(0)
            make_teacher("he1+odd", d, rng)  # the same draws as schemes()
            run = ts.run_two_steps(N, n, d, ACT, teacher, steps, batch, rng)
            np.testing.assert_array_equal(run.W0, sch.W0)
            np.testing.assert_allclose(run.W1, sch.W1, rtol=1e-13)
            np.testing.assert_allclose(run.W2, W2, rtol=1e-12)
        eta = sch.eta1 + sch.eta2s[i]
        np.testing.assert_allclose(sch.W1_total[i],
                                   ts.one_step(sch.W0, sch.a, sch.X1, sch.y1, ACT, eta), rtol=1e-13)
    assert set(sch.weights(1)) == set(SCHEMES)
    with pytest.raises(ValueError, match="i must be"):
        sch.weights(2)


def test_learned_directions_are_the_spike_vectors_of_the_decomposition():
    sch, teacher, _ = schemes(alpha2s=(0.05, 0.35))
    lam = [ts.n_spikes(0.4, a2, 4) for a2 in sch.alpha2s]
    assert lam == [0, 3]
    for i, a2 in enumerate(sch.alpha2s):
        dirs = learned_directions(sch, i)
        assert dirs["W0"].shape == (0, d)
        np.testing.assert_allclose(dirs["W1"][0], sch.X1.T @ sch.y1 / n)
        assert dirs["W2_reused"].shape == dirs["W2_fresh"].shape == (1 + lam[i], d)
        for batch, key in (("reused", "W2_reused"), ("fresh", "W2_fresh")):
            rng = np.random.default_rng(0)
            make_teacher("he1+odd", d, rng)
            run = ts.run_two_steps(N, n, d, ACT, teacher, ((0.5, 0.4), (0.5, a2)), batch, rng)
            for k in range(1, lam[i] + 1):
                s = run.X2 @ run.v   # u_k = X2^T (y2 s^k) / n
                np.testing.assert_allclose(dirs[key][k], run.X2.T @ (run.y2 * s ** k) / run.n,
                                           rtol=1e-12)
        v2 = sch.X2.T @ sch.y2 / n
        np.testing.assert_allclose(dirs["W2_fresh"][0],
                                   sch.eta1 * dirs["W1"][0] + sch.eta2s[i] * v2)


def test_payoff_experiment_shapes_determinism_and_sanity():
    kw = dict(target="he1+odd", N=N, n=n, d=d, alpha2s=(0.05, 0.25, 0.35), n_train=60,
              n_test=50, scalings=("standardised", "raw"))
    a = ts.payoff_experiment(np.random.default_rng(3), **kw)
    b = ts.payoff_experiment(np.random.default_rng(3), **kw)
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    for suffix in ("", "_raw"):
        for name in ("W0", "W1", "linear"):
            assert np.isscalar(a[f"err_{name}{suffix}"]) and a[f"err_{name}{suffix}"] > 0
        for name in ("W1_total", "W2_reused", "W2_fresh"):
            assert a[f"err_{name}{suffix}"].shape == (3,)
            assert set(np.unique(a[f"edge_{name}{suffix}"])) <= {-1.0, 0.0, 1.0}
    assert a["best_linear"] == pytest.approx(0.5)  # He_1 + odd: the linear half
    assert a["ideal_W0"] == pytest.approx(1.0)
    assert 0 < a["ideal_W1"] < 1
    # One step of size eta1 + eta2 learns the same direction as one step of size eta1.
    np.testing.assert_allclose(a["ideal_W1_total"], a["ideal_W1"])
    assert a["overlap_v"].shape == (2,) and a["overlap_u_reused"].shape == (3, 2)


def test_make_teacher_and_validation():
    rng = np.random.default_rng(4)
    t = make_teacher("he1+odd", 10, rng)
    assert t.rank == 2 and t.d == 10
    assert make_teacher(t, 10, rng) is t
    assert make_teacher(ts.hermite_link(3), 10, rng).rank == 1
    with pytest.raises(ValueError, match="d=10"):
        make_teacher(t, 11, rng)
    with pytest.raises(TypeError, match="target must be"):
        make_teacher(3, 10, rng)
    with pytest.raises(ValueError, match="alpha2 must be"):
        train_schemes(rng, N=N, n=n, d=d, alpha2s=(0.6,))
    with pytest.raises(TypeError, match="alpha2s"):
        train_schemes(rng, N=N, n=n, d=d, alpha2s=())
    with pytest.raises(ValueError, match="d=11"):
        train_schemes(rng, N=N, n=n, d=11, target=t)
    with pytest.raises(ValueError, match="scalings"):
        ts.payoff_experiment(rng, N=N, n=n, d=d, scalings=("none",))
    with pytest.raises(ValueError, match="dtype must be float64 or float32"):
        ts.payoff_experiment(rng, N=N, n=n, d=d, dtype="float16")
    with pytest.raises(TypeError, match="measured_ideal"):
        ts.payoff_experiment(rng, N=N, n=n, d=d, measured_ideal="yes")
    with pytest.raises(TypeError):   # keyword-only after rng
        ts.payoff_experiment(rng, "he1", N, n, d)


def test_neuron_memorisation_matches_the_single_vector_diagnostic():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((30, 50))
    D = rng.standard_normal((6, 50))
    D[2] = 3 * X[7]          # a memorised input
    D[4] = 0.0               # a neuron that did not move
    got = ts.neuron_memorisation(D, X)
    for i in (0, 1, 3, 5):
        assert got[i] == pytest.approx(ts.memorisation(D[i], X)[0])
    assert got[2] == pytest.approx(1.0) and got[4] == 0.0
    with pytest.raises(ValueError, match="same d"):
        ts.neuron_memorisation(D[:, :5], X)


def test_train_schemes_draws_through_draw_problem_with_n_d_defaults_and_float32():
    sch = train_schemes(np.random.default_rng(6), N=12, alpha2s=(0.25,))
    p = ts.model.steps.draw_problem(12, 12, 12, "he1", "fresh", np.random.default_rng(6))
    for name in ("W0", "a", "X1", "y1", "X2", "y2"):
        np.testing.assert_array_equal(getattr(sch, name), getattr(p, name))
    assert sch.X1.shape == sch.X2.shape == (12, 12)
    low = train_schemes(np.random.default_rng(6), N=12, dtype="float32")
    assert low.W0.dtype == low.W2_reused[0].dtype == low.X1.dtype == np.float32
    with pytest.raises(ValueError, match="dtype must be float64 or float32"):
        train_schemes(np.random.default_rng(6), N=12, dtype="int8")


def test_measured_directions_are_the_top_singular_vectors_of_the_weights():
    sch, teacher, _ = schemes(alpha2s=(0.05, 0.35))
    for i in range(2):
        theory, meas = learned_directions(sch, i), measured_directions(sch, i)
        for s in SCHEMES:
            assert meas[s].shape == theory[s].shape
        for s, W in sch.weights(i).items():
            k = meas[s].shape[0]
            if k:
                Vt = np.linalg.svd(W)[2][:k]
                # Same subspace as the dense SVD's top-k right vectors (each up to sign).
                np.testing.assert_allclose(np.abs(meas[s] @ Vt.T), np.eye(k), atol=1e-6)
    with pytest.raises(TypeError, match="schemes"):
        measured_directions("W", 0)


def test_payoff_experiment_measured_ideal_and_float32():
    kw = dict(target="he1", N=N, n=n, d=d, alpha2s=(0.25,), n_train=60, n_test=50)
    a = ts.payoff_experiment(np.random.default_rng(3), measured_ideal=True, **kw)
    b = ts.payoff_experiment(np.random.default_rng(3), **kw)
    for key in b:   # the measured ideal adds keys and draws nothing
        np.testing.assert_array_equal(a[key], b[key])
    assert a["ideal_svd_W0"] == a["ideal_W0"] == pytest.approx(1.0)
    assert a["ideal_svd_W2_reused"].shape == (1,)
    for s in SCHEMES:
        assert np.all((0 <= np.asarray(a[f"ideal_svd_{s}"])) & (np.asarray(a[f"ideal_svd_{s}"]) <= 1 + 1e-12))
    low = ts.payoff_experiment(np.random.default_rng(3), dtype="float32", **kw)
    assert low.keys() == b.keys()
    assert all(np.all(np.isfinite(low[k])) for k in low)
    # n and d default to N
    c = ts.payoff_experiment(np.random.default_rng(3), N=12, n_train=20, n_test=20)
    assert np.ndim(c["err_W1"]) == 0 and c["overlap_v"].shape == (1,)


def test_float32_features_of_float64_draws_move_test_errors_far_below_their_spread():
    # The readout chapter reads its float64 problems out with float32 features. Same draws: the
    # linear baseline (no features) is unchanged bit for bit, and each first layer's test error
    # moves by a tiny fraction of its spread over seeds. Measured (2026-12-05, this size, seeds
    # 0-5): at most 1.4e-6 of the standard deviation over seeds; at N = n = d = 1000, 3.4e-7.
    # The bound 1e-3 leaves three orders of magnitude for other BLAS builds, and would still
    # catch a change of draws (which moves an error by about one standard deviation).
    kw = dict(target="he1+odd", N=200, alpha2s=(0.05, 0.25), n_train=200, n_test=400)
    runs = {ft: [ts.payoff_experiment(np.random.default_rng(s), feature_dtype=ft, **kw)
                 for s in range(6)] for ft in ("float64", "float32")}
    for key in runs["float64"][0]:
        if not key.startswith("err_"):
            continue
        a, b = (np.array([r[key] for r in runs[ft]]) for ft in ("float64", "float32"))
        if key == "err_linear":
            np.testing.assert_array_equal(a, b)
            continue
        assert np.all(a != b), key      # the features did change precision
        assert np.max(np.abs(a - b) / a.std(0, ddof=1)) < 1e-3, key
    with pytest.raises(ValueError, match="feature_dtype"):
        ts.payoff_experiment(np.random.default_rng(0), feature_dtype="float16", **kw)
