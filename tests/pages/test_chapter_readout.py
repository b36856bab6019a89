"""The readout chapter's page module: sweeps, summaries and figures, at tiny sizes.

The figures are checked for what they draw: the numbers attached to each
(``figures.attach_data``) are the summaries' means and standard errors and the theory's values,
and each fits the text column.
"""

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import twostep as ts  # noqa: E402
from twostep.analysis.readout import asymptotic_ideal, explained_fraction  # noqa: E402
from twostep.analysis.summary import Summary  # noqa: E402
from twostep.analysis.verdicts import mean_sem  # noqa: E402
from twostep.experiments import readout as ex  # noqa: E402
from twostep.pages import figures  # noqa: E402
from twostep.pages import readout as ch  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
D = 16
A1S = [0.3, 0.4]
A2S = [0.05, 0.25]
REF = (0.4, 0.25)
PSIS = [0.5, 1.0]
SEEDS = [0, 1]
L = 4
TARGETS = ("he1", "odd", "he1+odd")
BASE = dict(N=D, d=D, activation="poly4", c=0.5, n_train=D, n_test=2 * D)
CONFIGS = {"reference": {}, "tanh": dict(activation="tanh"), "small_c": dict(c=0.25),
           "more_data": dict(n_train=4 * D)}


@pytest.fixture(scope="module")
def runs():
    grid1 = [dict(target=t, n=D, alpha1=a1, alpha2s=A2S, scalings=("standardised", "raw"),
                  measured_ideal=(t, a1) == ("he1", REF[0]), **BASE)
             for t in TARGETS for a1 in A1S]
    rec1 = ch.payoff_runs(grid1, SEEDS)
    grid2 = [dict(target=t, n=int(p * D), alpha1=REF[0], alpha2s=(REF[1],), **BASE)
             for t in TARGETS for p in PSIS if p != 1.0]
    rec2 = ch.payoff_runs(grid2, SEEDS)
    ref_run = dict(BASE, target="he1", n=D, alpha1=REF[0], alpha2s=(REF[1],), measured_ideal=True)
    rec_cfg = ch.payoff_runs([{**ref_run, **c} for c in CONFIGS.values()], SEEDS)
    rec_pen = ch.payoff_runs([dict(ref_run, N=m, n=m, d=m, n_train=m, n_test=2 * m,
                                   dtype="float32") for m in (D, 2 * D)], SEEDS)
    u2 = ts.sweep(ts.signal_overlap_experiment,
                  [dict(n=m, d=m, target="odd", batch=b, ks=(2,)) for m in (D, 2 * D)
                   for b in ("reused", "fresh")], seeds=[0, 1, 2])
    teacher = {t: ts.make_teacher(t, D, np.random.default_rng(0)) for t in (*TARGETS, "he3")}
    single = {t: teacher[t] for t in ("odd", "he3", "he1")}
    S1 = ch.payoff_summary(rec1, by=["target", "alpha1"])
    S2 = ch.psi_summary(rec2, rec1, *REF)
    etas = (ts.step_size(0.5, REF[0], D), ts.step_size(0.5, REF[1], D))
    drawn = {t: teacher[t] for t in ch.PLOTTED}
    pen = ch.payoff_summary([ch.at_alpha2(r) for r in rec_pen], by=["N"])
    return dict(rec1=rec1, rec2=rec2, rec_cfg=rec_cfg, rec_pen=rec_pen, ref_run=ref_run, u2=u2,
                teacher=teacher, single=single, S1=S1, S2=S2, etas=etas, drawn=drawn, pen=pen,
                u2_summary=Summary(u2, by=["batch", "n"], values=["overlaps"]))


def _data(fig, **where):
    """The rows attached to ``fig`` that match ``where``."""
    rows = getattr(fig, figures.DATA_ATTR)
    assert rows and all(list(r) == list(rows[0]) for r in rows)
    return [r for r in rows if all(r[k] == v for k, v in where.items())]


# -- sweeps and summaries ----------------------------------------------------------------

def test_payoff_runs_are_the_sweep_of_payoff_experiment_in_the_grids_order(runs):
    # the costliest tasks start first, yet the records keep the grid's order and values
    grid = [dict(BASE, target="he1", n=n, alpha1=0.4, alpha2s=(0.25,)) for n in (D // 2, D)]
    got = ch.payoff_runs(grid, [0])
    want = ts.sweep(ts.payoff_experiment, grid, seeds=[0])
    assert [r["n"] for r in got] == [D // 2, D]
    for a, b in zip(got, want):
        assert set(a) == set(b)
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_payoff_summary_averages_over_seeds_and_adds_paired_differences(runs):
    S1, rec1 = runs["S1"], runs["rec1"]
    assert set(S1.groups) == {(t, a1) for t in TARGETS for a1 in A1S}
    e = S1.entry(target="he1", alpha1=0.4)
    rows = [r for r in rec1 if r["target"] == "he1" and r["alpha1"] == 0.4]
    assert e["count"] == len(SEEDS) == len(rows)
    np.testing.assert_allclose(e["err_W2_reused"], np.mean([r["err_W2_reused"] for r in rows], axis=0))
    d = [r["err_W2_reused"] - r["err_W1_total"] for r in rows]
    np.testing.assert_allclose(e["d_reused_total"], np.mean(d, axis=0))
    np.testing.assert_allclose(e["d_reused_total_sem"], np.std(d, axis=0, ddof=1) / np.sqrt(2))
    assert e["d_total_W1"].shape == (len(A2S),) and np.ndim(e["err_W1"]) == 0
    # Raw-feature errors only where the records hold them: all of a group's records or none.
    trimmed = [r if (r["target"], r["alpha1"]) == ("he1", 0.4)
               else {k: v for k, v in r.items() if not k.endswith("_raw")} for r in rec1]
    S = ch.payoff_summary(trimmed, by=["target", "alpha1"])
    for key in S1.groups:
        assert ("err_W2_reused_raw" in S.groups[key]) == (key == ("he1", 0.4))
        np.testing.assert_array_equal(S.groups[key]["err_W2_reused"], S1.groups[key]["err_W2_reused"])
    partial = [dict(r) for r in trimmed]
    next(r for r in partial if (r["target"], r["alpha1"]) == ("he1", 0.4)).pop("err_W0_raw")
    with pytest.raises(ValueError, match="raw-feature errors for 1 of its 2 records"):
        ch.payoff_summary(partial, by=["target", "alpha1"])


def test_at_alpha2_and_psi_summary_share_the_n_equals_d_runs(runs):
    r = runs["rec1"][0]
    one = ch.at_alpha2(r, 1)
    assert one["err_W2_fresh"] == r["err_W2_fresh"][1] and np.ndim(one["max_row_W1_total"]) == 0
    assert one["err_W1"] == r["err_W1"] and one["overlap_u_reused"] is r["overlap_u_reused"]
    S2 = runs["S2"]
    assert set(S2.groups) == {(t, int(p * D)) for t in TARGETS for p in PSIS}
    assert S2.at("err_W2_reused", target="he1", n=D) == pytest.approx(
        runs["S1"].at("err_W2_reused", A2S.index(REF[1]), target="he1", alpha1=REF[0]), rel=1e-12)


def test_the_shared_reference_runs_are_the_reference_configuration_bit_for_bit(runs):
    # The chapter takes its reference configuration's runs from the alpha2 sweep
    # (shared_reference): the same draws, so every summarised number is the one the
    # configuration's own runs give, exactly.
    rec_cfg, ref_run = runs["rec_cfg"], runs["ref_run"]
    own, points = ch.config_summary(rec_cfg, CONFIGS, ref_run)
    others = [r for r in rec_cfg if (r["activation"], r["c"], r["n_train"]) != ("poly4", 0.5, D)]
    shared, _ = ch.config_summary(ch.shared_reference(runs["rec1"], ref_run) + others, CONFIGS,
                                  ref_run)
    assert own.by == shared.by == ("activation", "c", "n_train")
    assert points["tanh"] == {"activation": "tanh", "c": 0.5, "n_train": D}
    assert set(own.groups) == set(shared.groups)
    for key, group in own.groups.items():
        for name, value in group.items():
            np.testing.assert_array_equal(shared.groups[key][name], value, err_msg=name)
    with pytest.raises(ValueError, match="no run of the configuration"):
        ch.shared_reference(runs["rec1"], dict(ref_run, c=0.3))


def test_u2_records_are_the_runs_of_each_batch(runs):
    # u2_records takes both schemes from one task per size and seed: the records of the
    # separate runs (the fixture's sweep over batch), bit for bit.
    got = ch.u2_records((D, 2 * D), [0, 1, 2])
    key = lambda r: (r["batch"], r["n"], r["seed"])  # noqa: E731
    want = {key(r): r for r in runs["u2"]}
    assert sorted(map(key, got)) == sorted(want)
    for r in got:
        np.testing.assert_array_equal(r["overlaps"], want[key(r)]["overlaps"])


# -- figures: what they draw is what they carry -------------------------------------------

def test_plot_ideal_draws_the_measured_u2_on_the_odd_links_curve(runs, fits_the_column):
    u2, single = runs["u2_summary"], runs["single"]
    odd = single["odd"]
    fig = ch.plot_ideal(u2, single)
    for b in ("reused", "fresh"):
        n, mean, sem = u2.series("overlaps", (0, 0), batch=b)
        assert list(n) == [D, 2 * D]
        direct = np.mean([r["overlaps"][0, 0] for r in runs["u2"] if (r["n"], r["batch"]) == (D, b)])
        assert mean[0] == pytest.approx(direct)
        for m, x, s in zip(n, mean, sem):
            (row,) = _data(fig, series=f"u2 {b}, n = {m}")
            assert (row["x"], row["x_sem"]) == (x, s)
            assert row["y"] == pytest.approx(explained_fraction(odd, x))
    (chance,) = _data(fig, series=f"chance, d = {2 * D}")
    assert chance["x"] == pytest.approx(1 / np.sqrt(2 * D))
    # every measured point inside both axes
    ax = fig.axes[0]
    for row in _data(fig):
        if row["series"].startswith("u2"):
            assert ax.get_xlim()[0] < row["x"] - row["x_sem"] and row["x"] < ax.get_xlim()[1]
            assert ax.get_ylim()[0] < row["y"] < ax.get_ylim()[1]
    # the leading powers the legend names: rho^2 for He_1, rho^6 for He_3 / sqrt(6)
    for t, power in (("he1", 2), ("he3", 6)):
        rows = _data(fig, series=t)
        assert len(rows) == 200
        assert [r["y"] for r in rows] == pytest.approx([r["x"] ** power for r in rows])
    fits_the_column(fig)


def test_plot_alpha_carries_every_mean_sem_and_ideal_it_draws(runs, fits_the_column):
    S1 = runs["S1"]
    fig = ch.plot_alpha(S1, A1S, A2S, L)
    for t in ch.PLOTTED:
        for a1 in A1S:
            panel = f"{t}, alpha1 = {a1}"
            for s in ex.SECOND_STEP_SCHEMES:
                rows = _data(fig, panel=panel, series=s)
                assert [r["x"] for r in rows] == A2S
                np.testing.assert_array_equal([r["y"] for r in rows], S1.at(f"err_{s}", target=t, alpha1=a1))
                np.testing.assert_array_equal([r["sem"] for r in rows],
                                              S1.at(f"err_{s}", sem=True, target=t, alpha1=a1))
                np.testing.assert_array_equal([r["theory"] for r in rows],
                                              S1.at(f"ideal_{s}", target=t, alpha1=a1))
            (one,) = _data(fig, panel=panel, series="W1")
            assert one["theory"] == S1.at("ideal_W1", target=t, alpha1=a1)
    # the odd target is not drawn
    assert not _data(fig, panel=f"odd, alpha1 = {A1S[0]}")
    fits_the_column(fig)


def test_plot_paired_carries_the_paired_differences_problem_by_problem(runs, fits_the_column):
    S1, rec1 = runs["S1"], runs["rec1"]
    fig = ch.plot_paired(S1, A1S, A2S)
    rows = _data(fig, panel=f"he1, alpha1 = {A1S[0]}", series="d_reused_total")
    assert [r["x"] for r in rows] == A2S
    d = np.array([r["err_W2_reused"] - r["err_W1_total"] for r in rec1
                  if r["target"] == "he1" and r["alpha1"] == A1S[0]])
    for j, row in enumerate(rows):
        mean, sem = mean_sem(d[:, j])
        assert row["y"] == pytest.approx(mean) and row["sem"] == pytest.approx(sem)
    assert len(_data(fig)) == len(ch.PLOTTED) * len(A1S) * len(ch.PAIRED_DIFFERENCES) * len(A2S)
    fits_the_column(fig)


def test_scatter_points_and_plot(runs, fits_the_column):
    points = ch.scatter_points(runs["S1"], runs["S2"], D)
    # per (target, alpha1): W1 and 3 schemes x len(A2S); per (target, n != d): 1 + 3.
    assert len(points) == len(TARGETS) * (len(A1S) * (1 + 3 * len(A2S)) + (len(PSIS) - 1) * 4)
    t, s, x, y, sem = points[0]
    assert (t, s) == ("he1", "W1") and y == runs["S1"].at("err_W1", target="he1", alpha1=A1S[0])
    assert x == runs["S1"].at("ideal_W1", target="he1", alpha1=A1S[0])
    fig = ch.plot_scatter(points)
    assert [(r["target"], r["series"], r["ideal"], r["measured"], r["sem"]) for r in _data(fig)] \
        == [tuple(p) for p in points]
    fits_the_column(fig)


def test_plot_psi_carries_the_theory_at_each_psi(runs, fits_the_column):
    drawn, etas = runs["drawn"], runs["etas"]
    fig = ch.plot_psi(runs["S2"], drawn, D, etas)
    one = _data(fig, panel="he1", series="W1")
    np.testing.assert_allclose([r["theory"] for r in one], 1 / (1 + np.array(PSIS)), rtol=1e-12)
    fresh = _data(fig, panel="he1", series="W2_fresh")
    assert [r["theory"] for r in fresh] == pytest.approx(
        [asymptotic_ideal(drawn["he1"], p, etas) for p in PSIS])
    half = [r["err_W1"] for r in runs["rec2"] if r["target"] == "he1" and r["n"] == D // 2]
    assert one[0]["y"] == pytest.approx(np.mean(half))
    assert all(np.isnan(r["theory"]) for r in _data(fig, panel="he1", series="W2_reused"))
    fits_the_column(fig)


def test_memorisation_data_and_plot_why(runs, fits_the_column):
    mem = ch.memorisation_data(D, D, D, "poly4", "he1", 0.5, *REF, seed=0)
    # The same draws as the chapter's first problem.
    sch = ts.train_schemes(ts.rng_for(0), N=D, target="he1", c=0.5, alpha1=REF[0],
                           alpha2s=(REF[1],))
    move = sch.W2_reused[0] - sch.W1
    np.testing.assert_allclose(mem.move["reused"], np.linalg.norm(move, axis=1))
    np.testing.assert_allclose(mem.memo["reused"], ts.neuron_memorisation(move, sch.X1))
    assert mem.scale["fresh"].shape == (D,) and mem.unrelated == pytest.approx(np.sqrt(2 * np.log(D) / D))
    fig = ch.plot_why(mem, runs["S2"], D, runs["S1"], REF[0], A2S)
    assert [r["x"] for r in _data(fig, panel="per neuron", series="reused")] == list(mem.move["reused"])
    rows = _data(fig, panel="row norms against psi", series="W2_reused")
    half = [r["max_row_W2_reused"][0] for r in runs["rec2"] if r["target"] == "he1" and r["n"] == D // 2]
    assert rows[0]["y"] == pytest.approx(np.mean(half))
    raw = _data(fig, panel="raw against standardised", series="W2_reused_raw")
    np.testing.assert_array_equal([r["y"] for r in raw],
                                  runs["S1"].at("err_W2_reused_raw", target="he1", alpha1=REF[0]))
    fits_the_column(fig)


def test_plot_penalty(runs, fits_the_column):
    pen, rec = runs["pen"], runs["rec_pen"]
    assert pen.axis() == [D, 2 * D] and [pen.count(N=N) for N in pen.axis()] == [len(SEEDS)] * 2
    d = [r["err_W2_reused"][0] - r["err_W1_total"][0] for r in rec if r["N"] == 2 * D]
    fig = ch.plot_penalty(pen)
    (row,) = _data(fig, series="d_reused_total", x=2 * D)
    mean, sem = mean_sem(d)
    assert row["y"] == pytest.approx(mean) and row["sem"] == pytest.approx(sem)
    fits_the_column(fig)


# -- the two pages ------------------------------------------------------------------------

def _parameter_cell(page: str) -> str:
    text = (ROOT / "book" / page).read_text(encoding="utf8")
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, re.S | re.M)
    found = [c for c in cells if "# The chapter's parameters and sweeps" in c]
    assert len(found) == 1, page
    return re.sub(r"^:tags:.*\n", "", found[0], flags=re.M)


def test_the_story_and_its_appendix_run_the_same_parameters():
    # The appendix reads the story's sweeps through twostep.pages.memo.study, keyed by their
    # arguments: one cell, the same on both pages, so that a build runs each sweep once.
    assert _parameter_cell("readout.md") == _parameter_cell("readout_evidence.md")
