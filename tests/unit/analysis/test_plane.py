"""The (alpha1, alpha2) plane (twostep.analysis.plane): the theory's regions and the empirical
count from the exact terms, the count over the plane and the count test at chosen settings
(twostep.scale.device.count_on), on small draws."""

import math

import numpy as np
import pytest

import twostep as ts
from twostep.analysis import plane

from twostep.analysis.plane import (clearing_width, count_test,
                                    extrapolated_width, nstar_spread, plane_grid, plane_map,
                                    power_gram, rank_points, spike_sum_values, spike_widths)
from twostep.analysis.rescaling import StepFamily
from twostep.analysis.spectra import singular_values
from twostep.analysis.spikes import (core_singular_values, own_bulk_edge, outlier_strength,
                                     power_cosine, power_law_constant, rank_one_sum_singular_values,
                                     spike_core, spike_sum_factors, width_to_reach)
from twostep.analysis.sweep import rng_for
from twostep.analysis.theory import n_spikes
from twostep.experiments.spikes import spike_experiment
from twostep.model.activations import get_activation
from twostep.model.steps import two_steps
from twostep.scale.backend import get_backend
from twostep.scale.device import count_on, count_points, draw_problem_on

NS, SEEDS = (60, 120, 240), (0, 1)


@pytest.fixture(scope="module")
def records():
    out = []
    for N in NS:
        for seed in SEEDS:
            r = spike_experiment(rng_for(seed), N=N, batch="fresh", corrected=True,
                                 settings=[(0.3, 0.3), (0.45, 0.3)])
            r.update(N=N, seed=seed)
            out.append(r)
    return out


def test_the_grid_avoids_every_boundary():
    pts = plane_grid(step=0.02, offset=0.01, gap=0.004)
    assert 100 <= len(pts) < 625 and np.all((pts >= 0) & (pts < 0.5))
    for k in (1, 2, 3):
        assert np.all(np.abs(pts[:, 1] - k * (0.5 - pts[:, 0])) >= 0.004)
    with pytest.raises(ValueError, match="step must be"):
        plane_grid(step=0.0)


def test_the_core_gives_the_spike_sum_at_any_step_sizes(records):
    # the rescaled core reproduces the spike sum the experiment measured at its settings
    r = records[-1]
    for i, (a1, a2) in enumerate([(0.3, 0.3), (0.45, 0.3)]):
        got = spike_sum_values(r, [(a1, a2)], 0.2)[0]
        np.testing.assert_allclose(got, r["settings_spikes_corrected"][i], rtol=1e-6, atol=1e-9)
    f = spike_sum_factors(np.array([2.0, 3.0]), np.array([5.0, 7.0]), 2)
    np.testing.assert_allclose(f, [[2, 5, 10], [3, 7, 21]])


def test_core_singular_values_equal_a_dense_svd():
    from twostep.analysis.decomposition import RankOne

    rng = np.random.default_rng(3)
    parts = [RankOne.from_vectors(s, rng.standard_normal(50), rng.standard_normal(40))
             for s in (3.0, 1.5, 0.5)]
    dense = sum(p.matrix() for p in parts)
    np.testing.assert_allclose(rank_one_sum_singular_values(parts),
                               np.linalg.svd(dense, compute_uv=False)[:3], rtol=1e-10)
    RL, RR, theta = spike_core(parts)
    scaled = sum(p.matrix() * f for p, f in zip(parts, (2.0, 1.0, 4.0)))
    np.testing.assert_allclose(core_singular_values(RL, RR, theta, [[2.0, 1.0, 4.0]])[0],
                               np.linalg.svd(scaled, compute_uv=False)[:3], rtol=1e-10)


def test_the_map_fits_every_point(records):
    pts = plane_grid(step=0.1, offset=0.05)
    m = plane_map(records, pts, 0.2)
    assert m.term_exp.shape == (len(pts), 4) and m.sum_exp.shape == (len(pts), 5)
    assert m.df == len(records) - 2
    assert np.array_equal(m.lam, [n_spikes(a1, a2, 4) for a1, a2 in pts])
    # s1(T_k) = kappa^(k+1) N^(alpha2 + k alpha1) s1(T^_k): the exponent shifts exactly
    d = m.term_exp - (pts[:, 1:2] + np.arange(4) * pts[:, 0:1])
    assert np.allclose(d, d[0])
    counts = m.count("sum")
    assert counts.shape == (len(pts),) and counts.max() <= 3
    assert m.resolved("term").dtype == bool
    with pytest.raises(ValueError, match="at least 3 draws"):
        plane_map(records[:2], pts, 0.2)
    with pytest.raises(ValueError, match="method must be"):
        m.count("raw")


def test_clearing_width():
    N = np.array([1000.0, 2000.0, 4000.0])
    # a power law 0.5 (N/1000)^0.25 reaches 1 at N = 16000
    assert clearing_width(N, 0.5 * (N / 1000) ** 0.25, 1.0) == pytest.approx(16000)
    assert clearing_width(N, 0.5 * (N / 1000) ** -0.1, 1.0) == math.inf   # falls, below
    assert clearing_width(N, 2.0 * (N / 1000) ** -0.1, 1.0) == 1000.0     # falls, cleared


def test_rank_points_orders_by_the_predicted_width(records):
    pts = plane_grid(step=0.1, offset=0.05)
    ranked = rank_points(records, pts, 0.2, top=2)
    assert set(ranked) == {0, 1, 2, 3}
    for lam, rows in ranked.items():
        assert all(n_spikes(a1, a2, 4) == lam for a1, a2, _ in rows)
        if lam >= 1:
            assert [r[2] for r in rows] == sorted(r[2] for r in rows)


def test_count_on_matches_dense_computation():
    bk = get_backend("numpy")
    N, settings = 160, [(0.45, 0.4), (0.2, 0.2)]
    out = count_on(bk, N=N, batch="fresh", settings=settings, kappas=(0.2,), extra_kappas=(0.5,),
                   extra_max_N=200)
    assert out["points"].tolist() == count_points(N, settings, (0.2,), (0.5,), 200).tolist()
    assert len(out["points"]) == 4 and count_points(400, settings, (0.2,), (0.5,), 200).shape == (2, 3)
    run = two_steps(draw_problem_on(bk, N, N, N, "he1", "fresh", 0), get_activation("poly4"),
                    ((0.2, 0.4), (0.2, 0.25)))
    fam = StepFamily(run)
    for i, (kappa, a1, a2) in enumerate(out["points"]):
        W2 = fam.W2(kappa * N ** a1, kappa * N ** a2)
        edge = own_bulk_edge(W2, run.a, 4)
        s = singular_values(W2)
        assert out["edge_own"][i] == pytest.approx(edge, rel=1e-4)
        assert out["count_own"][i] == min(8, int(np.sum(s > 1.05 * edge)))
        assert out["count_raw"][i] == min(8, int(np.sum(s > 2.1)))
    with pytest.raises(ValueError, match="settings must be"):
        count_on(bk, N=N, batch="fresh", settings=[(0.6, 0.1)])


def test_count_test_judges_only_beyond_the_predicted_width():
    bk = get_backend("numpy")
    settings = [(0.2, 0.2), (0.45, 0.4)]
    recs = []
    for N in (80, 160, 320):
        for seed in (0, 1, 2):
            r = count_on(bk, N=N, batch="fresh", settings=settings, seed=seed)
            r.update(N=N, batch="fresh", seed=seed)
            recs.append(r)
    t = count_test(recs, "fresh", 0.2, settings, 4)
    assert t.lam.tolist() == [0, 3] and t.Ns == [80, 160, 320]
    ns = t.nstar[np.arange(len(t.lam)), t.lam]   # N* of the full count
    assert np.all(ns[:, 0] <= ns[:, 1]) and np.all(ns[:, 1] <= ns[:, 2])
    assert np.isnan(t.nstar[0, 1:]).all() and not np.isnan(t.nstar[1]).any()
    for j in range(2):
        judged = [N for N in t.Ns if N >= ns[j, 2]]
        assert t.total[j] == 3 * len(judged)
        assert t.hits[j] == sum(int(np.sum(t.count[N][:, j] == 1 + t.lam[j])) for N in judged)
    # each new outlier of the Lambda = 3 setting, where its own N*_j is reached
    triples = [(m, N) for m in (1, 2, 3) for N in t.Ns if N >= t.nstar[1, m, 2]]
    assert t.spike_total[1] == 3 * len(triples) and t.spike_total[0] == 0
    assert t.spike_hits[1] == sum(int(np.sum(t.count[N][:, 1] >= 1 + m)) for m, N in triples)
    with pytest.raises(ValueError, match="no point"):
        count_test(recs, "fresh", 0.3, settings, 4)
    with pytest.raises(ValueError, match="no run of batch"):
        count_test(recs, "reused", 0.2, settings, 4)


def test_extrapolated_width_solves_the_power_law_both_ways():
    N = np.array([100.0, 100.0, 400.0, 400.0, 1600.0])
    strength = 0.3 * N ** 0.2 * np.array([1.0, 1.02, 0.99, 1.01, 1.0])
    w = extrapolated_width(N, strength, 0.2, 3.0)
    C = np.exp(np.mean(np.log(strength) - 0.2 * np.log(N)))
    assert w["n_star"] == pytest.approx((3.0 / C) ** 5, rel=1e-12)
    assert w["e_fit"] == pytest.approx(0.2, abs=0.01) and 0 < w["e_fit_se"] < 0.01
    assert w["n_fit"] == pytest.approx(w["n_star"], rel=0.5)
    # a strength that does not grow never gets there
    assert extrapolated_width(N, np.full(5, 0.5), 0.0, 3.0)["n_star"] == np.inf


def test_spike_widths_extrapolate_every_new_spike_of_every_setting():
    N = np.repeat([100.0, 200.0, 400.0], 2)
    settings = [(0.2, 0.2), (0.45, 0.3)]                     # Lambda = 0 and 3
    x = np.ones((6, 2, 5)) * (N[:, None, None] / 100) ** 0.2 * 0.1
    rows = spike_widths(N, x, settings, 1.0)
    assert [(r["i"], r["k"]) for r in rows] == [(1, 1), (1, 2), (1, 3)]
    r = rows[0]
    assert r["e"] == pytest.approx(0.25) and r["strength_max"] == pytest.approx(0.1 * 4 ** 0.2)
    assert r == {**r, **extrapolated_width(N, x[:, 1, 1], r["e"], 1.0)}
    with pytest.raises(ValueError, match="strengths"):
        spike_widths(N, x[0], settings, 1.0)


def test_nstar_spread_spans_the_seeds_and_the_margins():
    N = np.tile([100.0, 200.0, 400.0], 2)
    seeds = np.repeat([0, 1], 3)
    strength = np.where(seeds == 0, 0.1, 0.2) * N ** 0.1
    out = nstar_spread(N, strength, seeds, 0.1, margins=(0.10, 0.02))
    assert (out["margin_lo"], out["margin_hi"]) == (0.02, 0.10) and out["growth"] == 2 ** 0.1
    C = [power_law_constant(N[seeds == s], strength[seeds == s], 0.1)[0] for s in (0, 1)]
    assert C == pytest.approx([0.1, 0.2])
    assert out["lo"] == pytest.approx(width_to_reach(outlier_strength(1.0, 0.02), 0.2, 0.1))
    assert out["hi"] == pytest.approx(width_to_reach(outlier_strength(1.0, 0.10), 0.1, 0.1))
    assert out["decades"] == pytest.approx(math.log10(out["hi"] / out["lo"]))
    with pytest.raises(TypeError, match="margins must be a pair"):
        nstar_spread(N, strength, seeds, 0.1, margins=0.05)


def test_power_gram_is_the_cosine_matrix_and_tends_to_its_limit():
    a = np.random.default_rng(0).standard_normal(7)
    G = power_gram(a, 3)
    assert G.shape == (3, 3) and np.allclose(np.diag(G), 1) and np.allclose(G, G.T)
    direct = abs(a @ a ** 3) / (np.linalg.norm(a) * np.linalg.norm(a ** 3))
    assert G[0, 2] == pytest.approx(direct)
    big = power_gram(np.random.default_rng(1).standard_normal(200_000), 4)
    # Over seeds 0-29 at 200000 draws: the deviation of the cosine from its limit has sd 0.0017
    # (largest 0.0036), and G_01 (limit 0) sd 0.003 (largest 0.010): bounds at about 3 sd.
    assert big[0, 2] == pytest.approx(power_cosine(1, 3), abs=0.006)
    assert big[0, 1] == pytest.approx(0, abs=0.012)
    with pytest.raises(ValueError, match="a"):
        power_gram(np.ones((2, 2)), 2)
    with pytest.raises(ValueError, match="powers"):
        power_gram(a, 0)


# --------------------------------------------------------------------------- the phase diagram

A = np.array([0.05, 0.14, 0.23, 0.32, 0.41])


def test_theory_count_matches_n_spikes():
    a1, a2 = np.meshgrid(A, A, indexing="ij")
    got = plane.theory_count(a1, a2, 4)
    assert got.shape == (5, 5) and got.dtype.kind == "i"
    for i in range(5):
        for j in range(5):
            assert got[i, j] == ts.n_spikes(A[i], A[j], 4)
    with pytest.raises(ValueError, match="alpha1"):
        plane.theory_count(0.5, 0.1)


def test_empirical_count_with_theoretical_exponents_is_lambda():
    a1, a2 = np.meshgrid(A, A, indexing="ij")
    e = -np.arange(6) / 2.0
    spike = np.ones(6, dtype=bool)
    np.testing.assert_array_equal(plane.empirical_count(a1, a2, e, spike, L=4),
                                  plane.theory_count(a1, a2, 4))
    np.testing.assert_array_equal(plane.empirical_count(a1, a2, e, spike),
                                  plane.theory_count(a1, a2, 6))
    spike[2] = False  # a term that is not a spike never counts
    got = plane.empirical_count(0.41, 0.41, e, spike, L=4)
    assert got == 2 and ts.n_spikes(0.41, 0.41, 4) == 3
    # steeper measured decay moves the boundary up: fewer spikes
    assert plane.empirical_count(0.32, 0.23, e - 0.1, np.ones(6, bool), L=4) == 0
    with pytest.raises(ValueError, match="spike"):
        plane.empirical_count(0.1, 0.1, e, [1, 1, 1, 1, 1, 1])


def test_boundaries_and_is_spike():
    np.testing.assert_allclose(plane.empirical_boundary(A, 2, -1.0), ts.phase_boundaries(A, 2))
    got = plane.is_spike([0.9, 0.9, 0.5, 0.99], [0.99, 0.8, 0.9, 0.99], [0.1, 0.2, 0.3, -0.01])
    np.testing.assert_array_equal(got, [True, True, False, False])
    assert plane.ALIGNED == pytest.approx(2 ** -0.5)
    with pytest.raises(ValueError, match="threshold"):
        plane.is_spike([1.0], [1.0], [1.0], threshold=0.0)
    with pytest.raises(ValueError, match="right"):
        plane.is_spike([1.0], [1.0, 1.0], [1.0])


def test_count_margins_by_hand_and_as_the_window_of_the_count():
    out = plane.count_margins([0.1, 0.3], [0.0, -0.5], 2)
    # e_1 = alpha2 - (1/2 - alpha1) on the grid: -0.3, -0.1, -0.1, +0.1
    assert out["down"] == [pytest.approx(0.1)] and out["up"] == [pytest.approx(0.1)]
    assert out["dev"] == [pytest.approx(0.0)]
    a1, a2 = np.meshgrid(A, A, indexing="ij")
    theory = plane.theory_count(a1, a2, 4)
    for shift in (-0.03, 0.0, 0.03):
        e_hat = np.array([0.0] + [-k / 2 + shift for k in (1, 2, 3)])
        m = plane.count_margins(A, e_hat, 4)
        inside = all(-d <= x < u for d, x, u in zip(m["down"], m["dev"], m["up"]))
        same = np.array_equal(plane.empirical_count(a1, a2, e_hat, np.ones(4, bool), 4), theory)
        assert inside == same
    with pytest.raises(ValueError, match="exponents"):
        plane.count_margins(A, [0.0, 1.0], 4)
    with pytest.raises(ValueError, match="alphas"):
        plane.count_margins([0.7], [0.0, 0.0], 2)
