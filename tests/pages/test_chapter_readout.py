"""The readout chapter's page module: summaries, tables and figures, at tiny sizes."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import twostep as ts  # noqa: E402
from twostep.analysis.readout import RELATIVE_LAMBDAS  # noqa: E402
from twostep.analysis.verdicts import mean_sem  # noqa: E402
from twostep.pages import readout as ch  # noqa: E402
from twostep.experiments import readout as ex  # noqa: E402

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
    rec1 = ts.sweep(ts.payoff_experiment, grid1, seeds=SEEDS)
    grid2 = [dict(target=t, n=int(p * D), alpha1=REF[0], alpha2s=(REF[1],), **BASE)
             for t in TARGETS for p in PSIS if p != 1.0]
    rec2 = ts.sweep(ts.payoff_experiment, grid2, seeds=SEEDS)
    ref_run = dict(BASE, target="he1", n=D, alpha1=REF[0], alpha2s=(REF[1],), measured_ideal=True)
    rec_cfg = ts.sweep(ts.payoff_experiment, [{**ref_run, **c} for c in CONFIGS.values()],
                       seeds=SEEDS)
    rec_pen = ts.sweep(ts.payoff_experiment,
                       [dict(ref_run, N=m, n=m, d=m, n_train=m, n_test=2 * m, dtype="float32")
                        for m in (D, 2 * D)], seeds=SEEDS)
    u2 = ts.sweep(ts.signal_overlap_experiment,
                  [dict(n=m, d=m, target="odd", batch=b, ks=(2,)) for m in (D, 2 * D)
                   for b in ("reused", "fresh")], seeds=[0, 1, 2])
    more = ts.sweep(ts.signal_overlap_experiment,
                    [dict(n=D, d=D, target="odd", batch="reused", ks=(2,))], seeds=[3, 4, 5])
    teacher = {t: ts.make_teacher(t, D, np.random.default_rng(0)) for t in (*TARGETS, "he3")}
    single = {t: teacher[t] for t in ("odd", "he3", "he1")}
    S1 = ch.payoff_summary(rec1, by=["target", "alpha1"])
    S2 = ch.psi_summary(rec2, rec1, *REF)
    ideal = ch.ideal_data(single, u2, D)
    etas = (ts.step_size(0.5, REF[0], D), ts.step_size(0.5, REF[1], D))
    psi = ch.psi_data(S2, {t: teacher[t] for t in TARGETS}, D, etas)
    configs = ch.config_data(rec_cfg, CONFIGS, ref_run)
    shared = ch.config_data(ch.shared_reference(rec1, ref_run)
                            + [r for r in rec_cfg if r["activation"] != "poly4"
                               or r["c"] != 0.5 or r["n_train"] != D], CONFIGS, ref_run)
    pen = ch.payoff_summary([ch.at_alpha2(r) for r in rec_pen], by=["N"])
    return dict(rec_cfg=rec_cfg, rec_pen=rec_pen, configs=configs, shared=shared, pen=pen,
                ref_run=ref_run,
                rec1=rec1, rec2=rec2, u2=u2, more=more, teacher=teacher, single=single, S1=S1,
                S2=S2, ideal=ideal, psi=psi, etas=etas)








def _assert_pm(cell, values):
    # A "mean ± sem" cell: both parts are those of the per-seed values, to the cell's digits.
    mean, sem = mean_sem(values)
    shown = cell.split(" ± ")
    assert len(shown) == 2, cell
    tol = 0.51 * 10.0 ** -len(shown[1].split(".")[1])
    assert abs(float(shown[0]) - mean) <= tol, (cell, mean)
    assert abs(float(shown[1]) - sem) <= tol, (cell, sem)


# -- summaries ---------------------------------------------------------------------------

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
    assert "err_W2_fresh_raw" in e
    # Raw-feature errors only where the records hold them (the chapter fits them at two of its
    # six points): the raw means are over the same records, the standardised ones unchanged.
    trimmed = [r if (r["target"], r["alpha1"]) == ("he1", 0.4)
               else {k: v for k, v in r.items() if not k.endswith("_raw")} for r in rec1]
    S = ch.payoff_summary(trimmed, by=["target", "alpha1"])
    for key in S1.groups:
        assert ("err_W2_reused_raw" in S.groups[key]) == (key == ("he1", 0.4))
        np.testing.assert_array_equal(S.groups[key]["err_W2_reused"], S1.groups[key]["err_W2_reused"])
    np.testing.assert_array_equal(S.at("err_W2_reused_raw", sem=True, target="he1", alpha1=0.4),
                                  e["err_W2_reused_raw_sem"])
    assert S.count(target="he1", alpha1=0.4) == len(SEEDS)
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


# -- fig-ro-ideal ------------------------------------------------------------------------

def test_ideal_data_table_numbers_and_plot(runs, fits_the_column, page_table):
    data, single, u2 = runs["ideal"], runs["single"], runs["u2"]
    assert data.sizes == (D, 2 * D) and data.rho.shape == data.explained["odd"].shape == (200,)
    direct = np.mean([r["overlaps"][0, 0] for r in u2 if (r["n"], r["batch"]) == (D, "reused")])
    assert data.u2.at("overlaps", (0, 0), batch="reused", n=D) == pytest.approx(direct)
    assert data.band[0] <= data.band[1] and data.u2.count(batch="fresh", n=D) == 3
    header, rows, nums = ch.u2_table(data, single, shared_seeds=range(2))
    page_table((header, rows))
    # one column per n = d, one row per quantity (transposed to fit the text column)
    assert header[1:] == [str(D), str(2 * D)] and len(rows) == 4 + len(single)
    # the theory's mean overlap under reuse at each n = d, from the population signal
    assert rows[3][1] == f"{ts.population_signal('odd', 1.0, 2).expected_overlaps(D)[0]:.3f}"
    assert nums["n_shared"] == 2 and nums["n_data_seeds"] == 3
    assert nums["rho_hi"] == data.band[1]
    assert 0 < nums["rho10_odd"] <= 1
    fits_the_column(ch.plot_ideal(data))


# -- fig-ro-alpha ------------------------------------------------------------------------

def test_alpha_plot_tables_and_numbers(runs, fits_the_column, page_table):
    S1, rec1 = runs["S1"], runs["rec1"]
    fits_the_column(ch.plot_alpha(S1, A1S, A2S, L))
    header, rows = ch.paired_table(S1, A1S, A2S, L, columns=list(ch.PAIRED_DIFFERENCES))
    page_table((header, rows))
    assert len(rows) == 2 * len(A1S) * len(A2S) and len(header) == 8
    h2, r2 = ch.paired_table(S1, A1S, A2S, L, columns=("d_reused_total", "d_reused_fresh"))
    page_table((h2, r2))
    assert h2[4:] == ["reused − $\\eta_1{+}\\eta_2$", "reused − fresh"]
    # each cell mean ± standard error over the seeds of the paired difference, signed
    first = [r["err_W1_total"][0] - r["err_W1"] for r in rec1
             if r["target"] == "he1" and r["alpha1"] == A1S[0]]
    assert rows[0][4].startswith(("+", "-"))
    _assert_pm(rows[0][4].lstrip("+"), first)
    g = ch.alpha_numbers(S1, A1S, A2S, REF, L)
    assert g["tw_n"] == 2 * len(A1S) * len(A2S)
    assert 0 <= g["tw_n_sig_worse"] + g["tw_n_sig_better"] <= g["tw_n"]
    odd = [r for r in rec1 if r["target"] == "odd"]
    assert g["odd_vs_zero"] == pytest.approx(
        max(np.max(np.abs(r[f"err_{s}"] - 1)) for r in odd for s in ex.SCHEMES))
    assert g["odd_spread"] == pytest.approx(
        max(np.max(np.abs(r[f"err_{a}"] - r[f"err_{b}"])) for r in odd
            for a, b, _ in ch.PAIRED_DIFFERENCES.values()))
    assert 0 <= g["odd_edges"] <= 1 and g["lam_ref_lo"] == ts.n_spikes(A1S[0], REF[1], L)
    header, rows, nums = ch.u2_consistency(S1, runs["ideal"], runs["more"],
                                           runs["single"]["odd"], REF[0], D)
    page_table((header, rows))
    assert nums["ov_u2_re_o"] == pytest.approx(
        np.mean([r["overlap_u_reused"][1, 0] for r in odd if r["alpha1"] == REF[0]]))
    assert 0 <= nums["u2_p_here"] <= 1


# -- fig-ro-scatter ----------------------------------------------------------------------

def test_scatter_points_residuals_and_plot(runs, fits_the_column, page_table):
    points = ch.scatter_points(runs["S1"], runs["S2"], D)
    # per (target, alpha1): W1 and 3 schemes x len(A2S); per (target, n != d): 1 + 3.
    assert len(points) == len(TARGETS) * (len(A1S) * (1 + 3 * len(A2S)) + (len(PSIS) - 1) * 4)
    t, s, x, y, sem = points[0]
    assert (t, s) == ("he1", "W1") and y == runs["S1"].at("err_W1", target="he1", alpha1=A1S[0])
    header, rows, nums = ch.residual_table(points)
    page_table((header, rows))
    fresh = np.array([y - x for t, s, x, y, _ in points if s == "W2_fresh" and t != "odd"])
    assert nums["res_fresh_maxabs"] == pytest.approx(np.abs(fresh).max())
    assert nums["n_points"] == len(points) and -1 <= nums["corr_fresh"] <= 1
    fits_the_column(ch.plot_scatter(points))


# -- fig-ro-psi --------------------------------------------------------------------------

def test_psi_data_table_and_plot(runs, fits_the_column, page_table):
    psi, teacher = runs["psi"], runs["teacher"]
    np.testing.assert_array_equal(psi.psis, PSIS)
    assert psi.ideal_v1["he1"].shape == (80,)
    np.testing.assert_allclose(psi.ideal_v1["he1"], 1 / (1 + psi.psi_fine), rtol=1e-12)
    header, rows, nums = ch.psi_table(psi, teacher)
    page_table((header, rows))
    # psi = 1/2: one step's error, the n/d sweep's own runs; the paired gap from them
    half = [r for r in runs["rec2"] if r["target"] == "he1" and r["n"] == D // 2]
    assert rows[0][1] == f"{np.mean([r['err_W1'] for r in half]):.3f}"
    _assert_pm(rows[0][5].lstrip("+"), [r["err_W2_reused"][0] - r["err_W1_total"][0] for r in half])
    assert nums["psi_fresh_excess_at"] in PSIS and "ψ =" in nums["psi_fresh_cmp"]
    fits_the_column(ch.plot_psi(psi))


# -- fig-ro-why --------------------------------------------------------------------------

def test_memorisation_data_tables_and_plot(runs, fits_the_column, page_table):
    mem = ch.memorisation_data(D, D, D, "poly4", "he1", 0.5, *REF, seed=0)
    # The same draws as the chapter's first problem.
    sch = ts.train_schemes(ts.rng_for(0), N=D, target="he1", c=0.5, alpha1=REF[0],
                           alpha2s=(REF[1],))
    move = sch.W2_reused[0] - sch.W1
    np.testing.assert_allclose(mem.move["reused"], np.linalg.norm(move, axis=1))
    np.testing.assert_allclose(mem.memo["reused"], ts.neuron_memorisation(move, sch.X1))
    assert mem.scale["fresh"].shape == (D,) and mem.unrelated == pytest.approx(np.sqrt(2 * np.log(D) / D))
    header, rows, nums = ch.memorisation_table(mem, runs["psi"])
    page_table((header, rows))
    assert len(rows) == 6 + len(PSIS)
    assert nums["feat_ratio_fr"] >= 1
    # The row norms across psi: mean ± standard error over the seeds (psi = 1/2: the n/d
    # sweep's own runs; psi = 1: the alpha2 sweep's at the reference).
    half = [r for r in runs["rec2"] if r["target"] == "he1" and r["n"] == D // 2]
    assert len(half) == len(SEEDS)
    _assert_pm(rows[6][1], [r["max_row_W2_reused"][0] for r in half])
    _assert_pm(rows[6][2], [r["max_row_W2_fresh"][0] for r in half])
    i = A2S.index(REF[1])
    one = [r for r in runs["rec1"] if r["target"] == "he1" and r["alpha1"] == REF[0]]
    _assert_pm(rows[7][1], [r["max_row_W2_reused"][i] for r in one])
    assert all(" ± " not in c for r in rows[:6] for c in r[1:])   # the one problem: one draw
    header, rows, raw = ch.raw_table(runs["S1"], REF[0], A2S, L)
    page_table((header, rows))
    # The caption's largest standard error: over every entry, from the per-seed errors.
    want = max(mean_sem([r[k][j] for r in runs["rec1"] if r["target"] == t
                         and r["alpha1"] == REF[0]])[1]
               for t, k in (("he1", "err_W2_reused_raw"), ("he1", "err_W2_reused"),
                            ("he1", "err_W2_fresh_raw"), ("he1", "err_W2_fresh"),
                            ("he1+odd", "err_W2_reused_raw"))
               for j in range(len(A2S)))
    assert raw["max_sem"] == pytest.approx(want, rel=1e-9) and want > 0
    assert float(raw["max_sem_txt"]) == pytest.approx(want, rel=0.3)
    fits_the_column(ch.plot_why(mem, runs["psi"], runs["S1"], REF[0], A2S))


def test_parameter_table(page_table):
    header, rows = ch.parameter_table(1000, 0.5, [0.3, 0.4], [0.05, 0.25], (0.4, 0.25),
                                      [0.5, 1.0], 4, 1000, 2000, 4, 8, RELATIVE_LAMBDAS)
    page_table((header, rows))
    assert any("0, 2" in r[1] for r in rows)   # Lambda at alpha1 = 0.4


# -- beyond one configuration ------------------------------------------------------------

def test_config_data_and_table(runs, page_table):
    data, rec = runs["configs"], runs["rec_cfg"]
    assert list(data.points) == list(CONFIGS)
    assert data.labels["reference"] == "reference" and data.labels["tanh"] == "tanh"
    assert data.labels["more_data"] == r"$n_{\mathrm{tr}} = 4N$"
    rows = [r for r in rec if r["activation"] == "tanh"]
    assert data.summary.count(**data.points["tanh"]) == len(SEEDS) == len(rows)
    pen = [r["err_W2_reused"][0] - r["err_W2_fresh"][0] for r in rows]
    np.testing.assert_allclose(data.summary.at("d_reused_fresh", **data.points["tanh"]),
                               np.mean(pen))
    header, rows, nums = ch.config_table(data)
    page_table((header, rows))
    assert len(rows) == len(CONFIGS)
    total = [r["err_W2_reused"][0] - r["err_W1_total"][0]
             for r in rec if r["activation"] == "tanh"]
    assert nums["tanh_rt"] == pytest.approx(np.mean(total))
    assert set(nums) == {f"{c}_{k}" for c in CONFIGS for k in ("rt", "rt_sem", "maxrow", "W0")}
    assert len(header) <= 8   # narrow enough for the text column; the rest in config_errors_table
    h_all, r_all = ch.config_errors_table(data)
    page_table((h_all, r_all))
    assert h_all[1:] == [r[0] for r in rows] and len(r_all) == len(ex.SCHEMES) + 2
    assert data.labels["small_c"] == r"$\kappa = 0.25$"
    # The reference configuration is the alpha2 sweep's problem at the same seed: same numbers.
    ref = [r for r in runs["rec1"] if r["target"] == "he1" and r["alpha1"] == REF[0]]
    i = A2S.index(REF[1])
    np.testing.assert_allclose(data.summary.at("err_W2_reused", **data.points["reference"]),
                               np.mean([r["err_W2_reused"][i] for r in ref]), rtol=1e-12)


def test_penalty_summary_table_and_plot(runs, fits_the_column, page_table):
    pen, rec = runs["pen"], runs["rec_pen"]
    assert pen.axis() == [D, 2 * D] and [pen.count(N=N) for N in pen.axis()] == [len(SEEDS)] * 2
    big = [r for r in rec if r["N"] == 2 * D]
    d = [r["err_W2_reused"][0] - r["err_W1_total"][0] for r in big]
    assert pen.at("d_reused_total", N=2 * D) == pytest.approx(np.mean(d))
    assert pen.at("d_reused_total", sem=True, N=2 * D) == pytest.approx(
        np.std(d, ddof=1) / np.sqrt(len(d)))
    header, rows, nums = ch.penalty_table(pen)
    page_table((header, rows))
    _assert_pm(rows[1][3].lstrip("+"), d)
    _, fresh, _ = pen.series("d_reused_fresh")
    assert nums["pen_change"] == pytest.approx(fresh[1] - fresh[0])
    assert nums["rt_hi_z"] == pytest.approx(np.mean(d) / (np.std(d, ddof=1) / np.sqrt(len(d))))
    h_all, r_all = ch.penalty_errors_table(pen)
    page_table((h_all, r_all))
    assert [r[0] for r in r_all] == [str(D), str(2 * D)]
    fits_the_column(ch.plot_penalty(pen))


def test_ideal_comparison_table(runs, page_table):
    header, rows, nums = ch.ideal_comparison_table(runs["configs"], runs["pen"])
    page_table((header, rows))
    # one row per setting (configurations, then widths) and first layer
    assert len(rows) == 3 * (len(CONFIGS) + 2) and nums["n_ideal_pairs"] == len(rows)
    assert 0 <= nums["n_below_svd"] <= nums["n_ideal_pairs"]
    cfg = runs["configs"]
    assert nums["ref_ideal_svd_re"] == pytest.approx(
        cfg.summary.at("ideal_svd_W2_reused", **cfg.points["reference"]))
    # Each cell is mean ± standard error over the seeds: the reference's rows, from its runs.
    ref = [r for r in runs["rec_cfg"] if r["activation"] == "poly4" and r["c"] == 0.5
           and r["n_train"] == D]
    assert len(ref) == len(SEEDS) and rows[0][:2] == ["reference", "1 step"]
    for j, k in enumerate(("err", "ideal", "ideal_svd")):
        _assert_pm(rows[0][2 + j], [r[f"{k}_W1"] for r in ref])
        _assert_pm(rows[1][2 + j], [r[f"{k}_W2_reused"][0] for r in ref])
    # ... and the widths' rows, from theirs.
    big = [r for r in runs["rec_pen"] if r["N"] == 2 * D]
    _assert_pm(rows[-1][4], [r["ideal_svd_W2_fresh"][0] for r in big])


def test_the_shared_reference_runs_are_the_reference_configuration_bit_for_bit(runs):
    # The chapter takes its reference configuration's runs from the alpha2 sweep
    # (shared_reference): the same draws, so every summarised number is the one the
    # configuration's own runs give, exactly.
    own, shared = runs["configs"].summary, runs["shared"].summary
    assert own.by == shared.by and set(own.groups) == set(shared.groups)
    for key, group in own.groups.items():
        assert set(group) <= set(shared.groups[key])
        for name, value in group.items():
            np.testing.assert_array_equal(shared.groups[key][name], value, err_msg=name)
    with pytest.raises(ValueError, match="no run of the configuration"):
        ch.shared_reference(runs["rec1"], dict(runs["ref_run"], c=0.3))


def test_u2_records_are_the_runs_of_each_batch(runs):
    # u2_records takes both schemes from one task per size and seed: the records of the
    # separate runs (the fixture's sweep over batch), bit for bit.
    got = ch.u2_records((D, 2 * D), [0, 1, 2])
    key = lambda r: (r["batch"], r["n"], r["seed"])  # noqa: E731
    want = {key(r): r for r in runs["u2"]}
    assert sorted(map(key, got)) == sorted(want)
    for r in got:
        np.testing.assert_array_equal(r["overlaps"], want[key(r)]["overlaps"])
        np.testing.assert_array_equal(r["norms"], want[key(r)]["norms"])
