"""The compute, table and plot functions of the chapter *Reused versus fresh batches*
(``twostep.pages.reuse``), at tiny sizes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure
from numpy.polynomial.hermite_e import hermegauss

import twostep as ts
from twostep.analysis import population
from twostep.pages import paired, report, reuse as ch
from twostep.pages.figures import width_grid
from twostep.experiments import reuse as ex

SIGMA = ts.get_activation("poly4")
TARGETS = {"odd": "odd bounded", "he3": "He3"}
NS = (30, 50)
STEPS = ((0.5, 0.4), (0.5, 0.25))
STEP_KW = dict(c1=0.5, alpha1=0.4, c2=0.5, alpha2=0.25)  # STEPS as keywords
A2S = (0.05, 0.25, 0.35)


def _gauss(f, points=120):
    z, w = hermegauss(points)
    return float(np.dot(w / np.sqrt(2 * np.pi), f(z)))


@pytest.fixture(scope="module")
def limits():
    return population.population_limits([*TARGETS, "he1+odd"], 1.0, range(4), SIGMA)


@pytest.fixture(scope="module")
def data():
    return ch.signal_data(NS, [*TARGETS, "he1+odd"], [0, 1], SIGMA)


@pytest.fixture(scope="module")
def net():
    return ch.network_data(NS, list(TARGETS), STEPS, [0, 1], alpha2s={"odd": [0.05, 0.35]},
                           extra_seeds=[3], extra_point=("odd", "reused", NS[-1]), top=4)


def _against_width(axes):
    # The reuse figures put every quantity against the width: log x, N on the bottom row, a
    # title per panel.
    assert any(ax.get_xlabel().startswith("$N$") for ax in axes)
    assert all(ax.get_title() for ax in axes) and all(ax.get_xscale() == "log" for ax in axes)
    return axes


def test_moments_match_direct_quadrature():
    he3 = lambda z: (z ** 3 - 3 * z) / np.sqrt(6)
    assert population.cubed_link_moment("he3") == pytest.approx(_gauss(lambda z: he3(z) ** 3 * z), rel=1e-8)
    assert population.cubed_link_moment(ts.get_link("he2")) == pytest.approx(0, abs=1e-10)   # even link
    # E[sigma''' sigma'^2] against an independent Gauss-Hermite rule
    d1 = lambda z: SIGMA.derivative(z, 1)
    d3 = lambda z: SIGMA.derivative(z, 3)
    assert population.self_term_moment(SIGMA) == pytest.approx(_gauss(lambda z: d3(z) * d1(z) ** 2), rel=1e-10)
    assert population.self_term_moment("poly4") == pytest.approx(population.self_term_moment(SIGMA))
    with pytest.raises(TypeError, match="target"):
        population.cubed_link_moment(3)
    with pytest.raises(TypeError, match="activation"):
        population.self_term_moment(3)


def test_population_limits_agree_with_population_signal(limits):
    assert set(limits.plain) == {(t, b, k) for t in [*TARGETS, "he1+odd"] for b in ts.BATCHES
                                 for k in range(4)}
    direct = ts.population_signal("odd", 1.0, 2, "reused")
    assert limits.overlap("odd", "reused", 2) == pytest.approx(direct.overlaps[0])
    assert limits.overlap("odd", "reused", 2, n=500) == pytest.approx(direct.expected_overlaps(500)[0])
    aware = ts.population_signal("odd", 1.0, 2, "reused", kind="reuse", activation=SIGMA)
    assert limits.overlap("odd", "reused", aware=True) == pytest.approx(aware.overlaps[0])
    assert limits.overlap("he1+odd", "reused", 2, index=1) == pytest.approx(
        ts.population_signal("he1+odd", 1.0, 2, "reused").overlaps[1])
    # The claim: a fresh batch never aligns with an information-exponent-three link.
    assert max(limits.overlap("odd", "fresh", k) for k in range(4)) < 1e-6
    with pytest.raises(ValueError, match="psi"):
        population.population_limits(["odd"], 0.0, range(4), SIGMA)
    with pytest.raises(TypeError, match="targets"):
        population.population_limits("odd", 1.0, range(4), SIGMA)


def test_signal_data_matches_a_direct_run(data, limits):
    where = dict(target="odd", batch="reused", n=NS[-1])
    assert data.at("overlaps", **where).shape == data.at("overlaps_reuse", **where).shape == (4, 1)
    assert data.count(**where) == 2 and data.axis() == list(NS)
    assert data.at("overlaps", target="he1+odd", batch="fresh", n=NS[0]).shape == (4, 2)
    runs = [ts.signal_overlap_experiment(ts.rng_for(s), NS[-1], NS[-1], "odd", "reused",
                                         activation=SIGMA)["overlaps"][2, 0] for s in (0, 1)]
    assert data.at("overlaps", (2, 0), **where) == pytest.approx(np.mean(runs))
    assert data.at("overlaps", (2, 0), True, **where) == pytest.approx(
        np.std(runs, ddof=1) / np.sqrt(2))


def _drawn(fig, panel, series):
    # the rows attach_data gave a figure for one series of one panel
    return [r for r in fig.twostep_data if r["panel"] == panel and r["series"] == series]


def test_signal_plots_carry_the_data_they_draw(data, limits, fits_the_column):
    fig = ch.plot_signal_overlaps(data, limits, TARGETS)
    # one row per drawn point: every target, batch, order and width
    assert len(fig.twostep_data) == len(TARGETS) * 2 * 4 * len(NS)
    rows = _drawn(fig, "odd, reused", "u_2")
    x, mean, sem = data.series("overlaps", (2, 0), target="odd", batch="reused")
    assert [r["x"] for r in rows] == list(x) and [r["mean"] for r in rows] == pytest.approx(mean)
    assert [r["theory"] for r in rows] == pytest.approx(
        [limits.overlap("odd", "reused", 2, n=N) for N in NS])
    axes = _against_width(fits_the_column(fig))
    assert len(axes) == 2 * len(TARGETS) and "odd bounded" in axes[0].get_title()
    fig = ch.plot_two_index(data, limits, "he1+odd")
    # u_0 per batch on beta_1; u_2 per batch and the reused tilde u_2 on beta_2
    assert {(r["panel"], r["series"]) for r in fig.twostep_data} == {
        ("beta_1", "$u_0$, fresh"), ("beta_1", "$u_0$, reused"),
        ("beta_2", r"$u_2 = \tilde u_2$, fresh"), ("beta_2", "$u_2$, reused"),
        ("beta_2", r"$\tilde u_2$, reused")}
    assert len(fig.legends) == 1                                # one legend, below the panels
    assert len(_against_width(fits_the_column(fig))) == 2


def test_network_data_records_and_summary(net):
    assert len(net.records) == len(TARGETS) * 2 * len(NS) * 2 + 1
    where = dict(target="odd", batch="reused", N=NS[-1])
    assert net.count(**where) == 3 and net.count(target="he3", batch="fresh", N=NS[0]) == 2
    assert net.at("subspace", **where).shape == (4, 1)
    assert net.at("term_overlap", **where).shape == (1,)
    direct = ts.reuse_experiment(ts.rng_for(3), N=NS[-1], target="odd", batch="reused", **STEP_KW,
                                 top=4, alpha2s=[0.05, 0.35])
    seeds = net.seed_values("term_overlap", 0, **where)
    assert seeds.shape == (3,) and seeds[-1] == pytest.approx(direct["term_overlap"][0])
    Ns, mean, sem = net.series("term_overlap", 0, target="odd", batch="reused")
    assert list(Ns) == list(NS) and mean[-1] == pytest.approx(seeds.mean())


def test_learned_subspace_plot_carries_its_data(net, limits, fits_the_column):
    fig = ch.plot_learned_subspace(net, limits, TARGETS, 3)
    rows = _drawn(fig, "odd", "reused, memorised set aside")
    x, mean, _ = net.series("subspace_unmemorised", (2, 0), target="odd", batch="reused")
    assert [r["mean"] for r in rows] == pytest.approx(mean)
    assert [r["chance"] for r in rows] == pytest.approx(np.sqrt(3 / x))
    assert all(r["theory"] == pytest.approx(limits.overlap("odd", "reused", aware=True))
               for r in rows)
    axes = _against_width(fits_the_column(fig))
    assert len(axes) == len(TARGETS) + 1 and "top 3" in axes[0].get_title()


def test_lambda_data_uses_the_rescaled_draws(net, limits, fits_the_column):
    lam = ch.lambda_data(net, "odd", 0.4, 0.25, A2S, 4)
    assert lam["n_spikes"] == {0.05: 0, 0.25: 2, 0.35: 3}
    e = [x for x in ts.summarise([r for r in net.records if r["target"] == "odd"], by=["batch", "N"],
                                 values=["subspace_unmemorised", "rescaled_subspace_unmemorised"])
         if (x["batch"], x["N"]) == ("reused", NS[-1])][0]
    at = lambda a2: lam["summary"].at("subspace_unmemorised", alpha2=a2, batch="reused", N=NS[-1])  # noqa: E731
    assert at(0.25) == pytest.approx(e["subspace_unmemorised"][2, 0])
    assert at(0.35) == pytest.approx(e["rescaled_subspace_unmemorised"][1, 3, 0])
    fig = ch.plot_lambda(lam, limits)
    # Lambda = 3: the span of 4 vectors, its chance sqrt(4/d)
    assert [r["chance"] for r in _drawn(fig, "Lambda = 3", "fresh")] == pytest.approx(
        np.sqrt(4 / np.array(NS)))
    axes = _against_width(fits_the_column(fig))
    assert len(axes) == len(A2S) and "Lambda = 3" in axes[-1].get_title()


def test_width_grid():
    grid = width_grid([100, 400], points=5)
    assert grid.shape == (5,) and grid[0] == pytest.approx(80) and grid[-1] == pytest.approx(500)


# --------------------------------------------------------------------------- paired runs

PAIRED = {"odd": paired.PairedConfig("sigma4, odd", "poly4", "odd", 0.5),
          "tanh": paired.PairedConfig("tanh, odd", "tanh", "odd", 1.0)}


def test_paired_runs_are_the_reuse_experiment_of_either_batch_on_one_draw():
    # Same generator: the fresh run draws W0, a, X1, X2 as reuse_experiment(batch="fresh")
    # does, and the reused run uses the same W0, a, X1 as reuse_experiment(batch="reused")
    # (its X2, drawn after them, is never used). Both in float64, so the values agree exactly.
    out = ex.paired_reuse_experiment(ts.rng_for(4), N=60, **STEP_KW, dtype="float64")
    for batch in ("reused", "fresh"):
        ref = ts.reuse_experiment(ts.rng_for(4), N=60, target="odd", batch=batch, **STEP_KW, top=3)
        assert out[f"term_overlap_{batch}"] == pytest.approx(ref["term_overlap"][0], rel=1e-9)
        assert out[f"subspace_{batch}"][0] == pytest.approx(ref["subspace"][2, 0], rel=1e-9)
        assert out[f"subspace_unmemorised_{batch}"][0] == pytest.approx(
            ref["subspace_unmemorised"][2, 0], rel=1e-9)
    assert list(out["K"]) == [3]   # Lambda(0.4, 0.25) = 2


def test_paired_runs_rescale_and_measure_a_bounded_activation():
    out = ex.paired_reuse_experiment(ts.rng_for(0), N=40, activation="tanh", alpha2s=[0.05, 0.35])
    assert list(out["K"]) == [3, 1, 4]
    assert np.isnan(out["term_overlap_reused"])        # no exact terms for tanh
    for key in ex.EXPONENT_KEYS:
        assert out[f"{key}_reused"].shape == out[f"{key}_fresh"].shape == (3,)
    assert np.all(out["row_ratio_fresh"] >= 1)
    assert out["null_subspace"].shape == out["null_unmemorised"].shape == (3,)


@pytest.mark.parametrize("kw, error, match", [
    (dict(N=4), ValueError, "N must be an integer >= 8"),
    (dict(alpha2s=0.1), TypeError, "alpha2s must be a sequence"),
    (dict(alpha2s=[0.7]), ValueError, "alpha2s"),
    (dict(dtype="float16"), ValueError, "dtype must be one of"),
    (dict(activation=3), TypeError, "activation must be a twostep Activation"),
])
def test_paired_runs_reject_bad_input(kw, error, match):
    args = dict(N=20)
    args.update(kw)
    with pytest.raises(error, match=match):
        ex.paired_reuse_experiment(ts.rng_for(0), **args)


def test_paired_data_rescales_only_the_configurations_asked():
    pd = paired.paired_data(PAIRED, {"odd": [30, 40], "tanh": [40]}, [0, 1], 0.4, 0.25, [0.05],
                            rescaled=["odd"])
    assert pd.alpha2s == (0.25, 0.05) and pd.n_spikes == (2, 0)
    assert pd.Ns("odd") == [30, 40] and pd.Ns("tanh") == [40]
    direct = ex.paired_reuse_experiment(ts.rng_for(1), N=40, activation="tanh", c1=1.0, c2=1.0)
    diff = pd.values("tanh", 40, "subspace_unmemorised", "diff", 0)
    assert diff[1] == pytest.approx(direct["subspace_unmemorised_reused"][0]
                                    - direct["subspace_unmemorised_fresh"][0])
    assert pd.values("odd", 40, "subspace", "reused", 1).shape == (2,)     # rescaled
    with pytest.raises(IndexError):
        pd.values("tanh", 40, "subspace", "reused", 1)                    # not rescaled
    with pytest.raises(ValueError, match="no runs at"):
        pd.values("tanh", 30, "subspace")


# --------------------------------------------------------------------------- T_2 seen through a^3

def _stand_in(level, controls, rng, seeds=6, N=1000):
    # PairedData whose reused projection sits at ``level`` and every control at ``controls``
    # (odd link), with the even link's reused projection at its own finite-size level
    records = []
    for config in ("odd", "he2"):
        for seed in range(seeds):
            noise = lambda: 0.005 * rng.standard_normal()  # noqa: E731
            r = {"config": config, "N": N, "seed": seed,
                 "projected_overlap_reused": (level if config == "odd" else 0.05) + noise(),
                 "projected_overlap_fresh": controls + noise(),
                 "projected_random_sign_reused": controls + noise(),
                 "projected_memorised_null_reused": controls + noise()}
            records.append(r)
    configs = {k: paired.PairedConfig(k, "poly4", k, 0.5) for k in ("odd", "he2")}
    return paired.PairedData(configs, (0.25,), (2,), records)


def test_term_verdicts_follow_the_rule_on_stand_in_data():
    limits = population.population_limits(["odd", "he2"], 1.0, [2], SIGMA)
    rng = np.random.default_rng(0)
    limit = limits.overlap("odd", "reused", aware=True)
    v = paired.term_verdicts(_stand_in(limit, 0.03, rng), limits, "odd", "he2")
    # the paper's effect: far above the strongest control (here the chance level 1/sqrt(1000)
    # is the strongest) is confirmed; at the predicted size the book's size is confirmed too
    assert v["reuse"].label == "confirmed"
    assert v["reuse"].null == pytest.approx(1 / np.sqrt(1000), rel=0.2)
    assert v["reuse_size"].label == "confirmed" and v["reuse_size"].prediction == limit
    # half the predicted size: the effect is still confirmed, the size differs, on its own line
    v = paired.term_verdicts(_stand_in(limit / 2, 0.03, rng), limits, "odd", "he2")
    assert (v["reuse"].label, v["reuse_size"].label) == ("confirmed",
                                                        "differs from the prediction")
    # controls as strong as the projection: not resolved; the fresh batch far above its
    # finite-size level (the controls at 0.3): an effect where none is claimed
    v = paired.term_verdicts(_stand_in(0.3, 0.3, rng), limits, "odd", "he2")
    assert v["reuse"].label == "consistent, not resolved"
    assert v["fresh"].label == "contradicted"
    assert v["fresh"].null == pytest.approx(limits.overlap("odd", "fresh", n=1000, aware=True))
    assert v["even"].null == pytest.approx(limits.overlap("he2", "reused", n=1000, aware=True))


@pytest.fixture(scope="module")
def pd3():
    configs = {"odd": paired.PairedConfig("sigma4, odd", "poly4", "odd", 0.5),
               "he3": paired.PairedConfig("sigma4, He3", "poly4", "he3", 0.5),
               "he2": paired.PairedConfig("sigma4, He2", "poly4", "he2", 0.5)}
    return paired.paired_data(configs, {"odd": [40, 60], "he3": [NS[0]], "he2": [60]}, [0, 1, 2],
                              0.4, 0.25)


def test_term_tables_and_the_narrow_figure(pd3, fits_the_column):
    limits = population.population_limits(["odd", "he2"], 1.0, [2], SIGMA)
    for key in ex.TERM_KEYS:
        assert np.all(np.isfinite(pd3.values("odd", 60, key, "reused")))
    table = paired.term_evidence_table(pd3, limits, ["odd", "he2"]).data
    assert ":name: tab-reuse-projected\n" in table and table.count("\n| ") == 1 + 3
    controls = paired.term_controls_table(pd3, ["odd", "he2"]).data
    assert ":name: tab-reuse-projected-controls" in controls and controls.count("\n| ") == 1 + 3
    assert "random signs" in controls and "random signs" not in table
    fig = paired.plot_term_evidence(pd3, limits, "odd", "he2")
    rows = _drawn(fig, "projection", "reused")
    assert [r["mean"] for r in rows] == pytest.approx(
        paired.PairedData.series(pd3, "odd", "projected_overlap", "reused")[0])
    assert [r["theory"] for r in rows] == pytest.approx(
        [limits.overlap("odd", "reused", n=N, aware=True) for N in (40, 60)])
    # whole on a phone: narrow enough to show at 80 % of its size in a 358 px column
    assert fig.get_figwidth() <= 4.8
    assert len(fits_the_column(fig)) == 2


def test_views_pair_each_reused_run_with_its_null(pd3, net, data, fits_the_column):
    views = ch.views(pd3, net, data, "he3", 3)
    N0, N1 = NS
    # W_2: the paired runs where they exist, the network runs (paired by seed) elsewhere; null
    # the fresh run of the same draw or the chance level sqrt(K/d), whichever is larger
    re, null, chance = views["w2"][N0]
    assert re == pytest.approx(pd3.values("he3", N0, "subspace_unmemorised", "reused", 0))
    assert null == pytest.approx(np.maximum(
        pd3.values("he3", N0, "subspace_unmemorised", "fresh", 0), np.sqrt(3 / N0)))
    re, null, _ = views["w2"][N1]
    assert re == pytest.approx(net.seed_values("subspace_unmemorised", (2, 0), target="he3",
                                               batch="reused", N=N1))
    assert np.all(null >= np.sqrt(3 / N1))
    assert views["term"][N0][1] == pytest.approx(paired.strongest_control(pd3, "he3", N0))
    assert list(views["term"]) == [N0]
    re, null, chance = views["u2"][N1]
    assert re == pytest.approx(data.seed_values("overlaps", (2, 0), target="he3",
                                                batch="reused", n=N1))
    assert chance == pytest.approx(1 / np.sqrt(N1)) and np.all(null >= chance)
    fig = ch.plot_views(views, {"w2": "W2", "term": "T2", "u2": "u2"})
    assert len(fig.twostep_data) == 2 * (2 + 1 + 2)           # reused and null per point
    u2 = _drawn(fig, "u2", "null")
    assert [r["mean"] for r in u2] == pytest.approx([np.mean(views["u2"][N][1]) for N in NS])
    assert fig.get_figwidth() <= 4.8 and len(_against_width(fits_the_column(fig))) == 3


@pytest.mark.parametrize("kw, match", [
    (dict(activation="tanh"), "activation must be a polynomial"),
    (dict(top=20), r"top must be in \[1, N\] = \[1, 12\]"),
])
def test_reuse_experiment_names_bad_input_before_work(kw, match):
    with pytest.raises(ValueError, match=match):
        ts.reuse_experiment(ts.rng_for(0), N=12, **kw)


def test_float32_changes_the_measured_overlaps_by_far_less_than_their_spread_over_seeds():
    """Why the chapter runs reuse_experiment in float32: on the same draws (float64, then cast),
    the learned subspace's and T_2's top-vector overlaps with beta* move by at most 5.5e-6 of
    their standard deviation over 6 seeds (measured at N = 200 and 400, both batches, when
    float32 was adopted); the test allows 1e-3 of it."""
    from dataclasses import replace

    from twostep.analysis.alignment import overlaps, subspace_overlap
    from twostep.analysis.decomposition import second_step_term
    from twostep.analysis.spectra import top_singular
    from twostep.analysis.sweep import rng_for
    from twostep.model.steps import draw_problem, two_steps

    act, steps, N = ts.get_activation("poly4"), ((0.5, 0.4), (0.5, 0.25)), 200
    for batch in ("reused", "fresh"):
        values = {np.float64: [], np.float32: []}
        for seed in range(6):
            p = draw_problem(N, N, N, "odd", batch, rng_for(seed))
            for dt in values:
                X1, y1 = p.X1.astype(dt), p.y1.astype(dt)
                X2, y2 = (X1, y1) if batch == "reused" else (p.X2.astype(dt), p.y2.astype(dt))
                run = two_steps(replace(p, W0=p.W0.astype(dt), a=p.a.astype(dt), X1=X1, y1=y1,
                                        X2=X2, y2=y2), act, steps)
                B = p.teacher.directions
                Vt = top_singular(run.W2, 3)[2].astype(float)
                v2 = top_singular(second_step_term(run, 2), 1)[2].astype(float)
                values[dt].append([subspace_overlap(Vt, B)[0], overlaps(v2, B)[0][0]])
        x64, x32 = np.array(values[np.float64]), np.array(values[np.float32])
        assert np.all(np.abs(x32 - x64).max(axis=0) < 1e-3 * x64.std(axis=0, ddof=1)), batch
