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


def test_limits_table(limits):
    header, rows = ch.limits_table(limits, TARGETS)
    # transposed: one column per target, rows inf. exp., E[g^3 z], u_k per batch, tilde u_2
    assert header == ["", *TARGETS.values()] and len(rows) == 2 + 2 * 4 + 1
    assert all(len(row) == len(header) for row in rows)
    assert rows[1][2] == f"{population.cubed_link_moment('he3'):.3f}"


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
    dev = ch.signal_deviations(data, limits, "odd")
    assert dev.shape == (2 * 4 * len(NS),) and np.all(dev >= 0)
    first = dict(where, n=NS[0])
    assert dev[0] == pytest.approx(
        abs(data.at("overlaps", (0, 0), **first) - limits.overlap("odd", "reused", 0, n=NS[0]))
        / data.at("overlaps", (0, 0), True, **first))


def test_signal_table_and_plots(data, limits, fits_the_column):
    (head, main), (head_odd, odd) = ch.signal_table(data, limits, {**TARGETS, "he1+odd": "two"})
    # a measured and a theory row per direction and batch (two-index: 2 directions), the same
    # rows in both tables (u_0, u_2, tilde u_2; u_1, u_3)
    assert len(main) == len(odd) == 2 * (2 * len(TARGETS) + 2 * 2)
    assert head == ["target", "batch", "$u_0$", "$u_2$", "$\\tilde u_2$"]
    assert head_odd == ["target", "batch", "$u_1$", "$u_3$"]
    assert main[1][:3] == ["odd bounded", "theory", f"{limits.overlap('odd', 'reused', 0, n=NS[-1]):.3f}"]
    where = dict(target="odd", batch="reused", n=NS[-1])
    assert main[0][3] == report.pm(data.at("overlaps", (2, 0), **where),
                                   data.at("overlaps", (2, 0), True, **where), 3)
    axes = _against_width(fits_the_column(ch.plot_signal_overlaps(data, limits, TARGETS)))
    assert len(axes) == 2 * len(TARGETS) and "odd bounded" in axes[0].get_title()
    axes = _against_width(fits_the_column(ch.plot_two_index(data, limits, "he1+odd")))
    fig = ch.plot_two_index(data, limits, "he1+odd")
    assert len(axes) == 2 and len(fig.legends) == 1            # one legend, below the panels


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


def test_network_table_and_plots(net, limits, fits_the_column):
    (head, term), (head_w2, w2) = ch.network_table(net, TARGETS, 3)
    # two tables: T_2, then W_2; one row per target, batch and size
    assert len(term) == len(w2) == len(TARGETS) * 2 * len(NS)
    assert len(head) == 6 and "$s_1(W_2)$" in head_w2
    assert ch.span_chance(net, 3) == (f"{np.sqrt(3 / NS[0]):.3f}, {np.sqrt(3 / NS[1]):.3f} "
                                      f"at $N = $ {NS[0]}, {NS[1]}")
    axes = _against_width(fits_the_column(ch.plot_term(net, limits, TARGETS)))
    assert len(axes) == 2 and axes[1].get_ylim() == (0, 1.05)
    axes = _against_width(fits_the_column(ch.plot_learned_subspace(net, limits, TARGETS, 3)))
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
    fresh = [lam["summary"].at("subspace_unmemorised", alpha2=a2, batch="fresh", N=NS[-1])
             / np.sqrt((1 + k) / NS[-1]) for a2, k in lam["n_spikes"].items()]
    assert ch.lambda_fresh_ratio(lam) == pytest.approx(max(fresh))
    header, rows = ch.lambda_table(lam)
    assert len(header) == 2 + len(NS) and len(rows) == 3 * len(A2S)
    assert rows[2] == ["0", "chance"] + [f"{np.sqrt(1 / N):.3f}" for N in NS]
    axes = _against_width(fits_the_column(ch.plot_lambda(lam, limits)))
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


def test_paired_data_table_and_figure(limits):
    pd = paired.paired_data(PAIRED, {"odd": [30, 40], "tanh": [40]}, [0, 1], 0.4, 0.25, [0.05])
    assert pd.alpha2s == (0.25, 0.05) and pd.n_spikes == (2, 0)
    assert pd.Ns("odd") == [30, 40] and pd.Ns("tanh") == [40]
    direct = ex.paired_reuse_experiment(ts.rng_for(1), N=40, activation="tanh", c1=1.0, c2=1.0,
                                        alpha2s=[0.05])
    diff = pd.values("tanh", 40, "subspace_unmemorised", "diff", 0)
    assert diff[1] == pytest.approx(direct["subspace_unmemorised_reused"][0]
                                    - direct["subspace_unmemorised_fresh"][0])
    with pytest.raises(ValueError, match="no runs at"):
        pd.values("tanh", 30, "subspace")
    (_, diff), (_, rows) = paired.paired_table(pd)
    # two tables (differences; memorisation and row norms), 3 rows each
    assert len(diff) == len(rows) == 3 and diff[-1][2] == "n/a"      # no T_2 for tanh
    # the rows table: means over the seeds in the cells; its spread, for the caption, the
    # largest standard error of a memorisation and of a row ratio (relative).
    cells = next(row for row in rows if row[:2] == ["sigma4, odd", "40"])[2:]
    want = [pd.values("odd", 40, k, b, 0) for k in ("top_memorisation", "row_ratio")
            for b in ("reused", "fresh")]
    for cell, x, digits in zip(cells, want, (2, 2, 1, 1), strict=True):
        assert cell == f"{np.mean(x):.{digits}f}"
    sem = lambda x: np.std(x, ddof=1) / np.sqrt(x.size)  # noqa: E731
    every = [(key, N) for key in pd.configs for N in pd.Ns(key)]
    memo = max(sem(pd.values(k, N, "top_memorisation", b, 0)) for k, N in every
               for b in ("reused", "fresh"))
    ratio = max(sem(x) / abs(np.mean(x)) for k, N in every for b in ("reused", "fresh")
                for x in [pd.values(k, N, "row_ratio", b, 0)])
    assert memo > 0 and ratio > 0
    assert paired.paired_table_spread(pd) == (
        f"standard errors at most {report.sig(memo)} for a memorisation and "
        f"{report.sig(100 * ratio)}% of the entry for a row ratio")
    fig = paired.plot_paired(pd, limits, "odd", ["tanh"], 40)
    assert isinstance(fig, Figure) and fig.get_figwidth() <= 7.0 and len(fig.legends) == 1
    assert all(ax.get_ylabel() for ax in fig.axes)
    header, lam_rows = paired.paired_lambda_table(pd, "odd", 0.4)
    assert len(header) == 4 and lam_rows[0][:3] == ["0", "0.05", "-0.15"]   # Lambda = 0 first
    x = pd.values("odd", 40, "subspace_unmemorised", "diff", 0)          # Lambda = 2
    assert lam_rows[1][3].lstrip("+") == report.pm(x.mean(), np.std(x, ddof=1) / np.sqrt(2), 3)
    numbers = paired.paired_numbers(pd, limits, "odd", "odd", "tanh", 40)
    t2 = [pd.values("odd", N, "term_overlap", "diff") for N in (30, 40)]
    assert numbers["p_t2_hi"] == pytest.approx(max(x.mean() for x in t2))
    assert numbers["p_lam_sem"] == pytest.approx(max(
        np.std(pd.values("odd", 40, "subspace_unmemorised", "diff", i), ddof=1)
        / np.sqrt(len(pd.values("odd", 40, "subspace_unmemorised", "diff", i)))
        for i in range(len(pd.n_spikes))))
    assert numbers["p_tanh_chance"] == pytest.approx(np.sqrt(3 / 40))


# --------------------------------------------------------------------------- T_2 seen through a^3

def test_term_evidence_numbers_verdicts_table_and_figure():
    limits = population.population_limits(["odd", "he2"], 1.0, [2], SIGMA)
    configs = {"odd": paired.PairedConfig("sigma4, odd", "poly4", "odd", 0.5),
               "he2": paired.PairedConfig("sigma4, He2", "poly4", "he2", 0.5)}
    pd = paired.paired_data(configs, {"odd": [40, 60], "he2": [60]}, [0, 1, 2], 0.4, 0.25)
    for key in ex.TERM_KEYS:
        assert np.all(np.isfinite(pd.values("odd", 60, key, "reused")))
    numbers = paired.term_evidence_numbers(pd, limits, "odd", "he2")
    assert numbers["ev_N_lo"] == 40 and numbers["ev_N_hi"] == 60
    assert numbers["proj_re"] == pytest.approx(pd.values("odd", 60, "projected_overlap", "reused").mean())
    assert numbers["proj_theory"] == pytest.approx(limits.overlap("odd", "reused", aware=True))
    v = paired.term_verdicts(pd, limits, "odd", "he2")
    # the reuse verdict's null is the strongest control, seed by seed
    controls = np.max([pd.values("odd", 60, "projected_overlap", "fresh"),
                       pd.values("odd", 60, "projected_random_sign", "reused"),
                       pd.values("odd", 60, "projected_memorised_null", "reused")], axis=0)
    assert v["reuse"].null == pytest.approx(controls.mean())
    assert v["fresh"].prediction == pytest.approx(limits.overlap("odd", "fresh", n=60, aware=True))
    assert numbers["verdict_reuse"] == v["reuse"].label
    table = paired.term_evidence_table(pd, limits, ["odd", "he2"]).data
    assert ":name: tab-reuse-projected\n" in table and table.count("\n| ") == 1 + 3
    controls = paired.term_controls_table(pd, ["odd", "he2"]).data
    assert ":name: tab-reuse-projected-controls" in controls and controls.count("\n| ") == 1 + 3
    assert "random signs" in controls and "random signs" not in table
    header, summary = paired.term_summary_table(pd, "odd", "he2")
    assert len(header) == 2 and len(summary) == 7 and summary[-1][0] == "sigma4, He2, $N = 60$"
    fig = paired.plot_term_evidence(pd, limits, "odd", "he2")
    assert isinstance(fig, Figure) and all(ax.get_ylabel() for ax in fig.axes)
    assert fig.get_figwidth() <= 7.0


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
