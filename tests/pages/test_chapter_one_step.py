"""The compute, plot and table functions of the chapter *One step* (twostep/pages/one_step.py),
at tiny sizes: shapes, agreement with a direct computation, labelled figures."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from twostep.analysis.bbp import spiked_outlier  # noqa: E402
from twostep.analysis.moments import derivative_spread, single_sample_norm  # noqa: E402
from twostep.analysis.spectra import singular_values  # noqa: E402
from twostep.analysis.sweep import loglog_slope, rng_for  # noqa: E402
from twostep.analysis.theory import finite_size_overlap, one_step_overlap, spike_strength  # noqa: E402
from twostep.analysis.verdicts import mean_sem, size, summary  # noqa: E402
from twostep.pages import one_step as ch, report  # noqa: E402
from twostep.experiments import first_step as ex  # noqa: E402
from twostep.model.activations import get_activation  # noqa: E402
from twostep.model.network import gaussian_inputs, initialise  # noqa: E402
from twostep.model.steps import one_step  # noqa: E402
from twostep.model.targets import Teacher, hermite_link, odd_bounded_link  # noqa: E402

POLY4 = get_activation("poly4")
TANH = get_activation("tanh")
HE1, HE2, HE3 = hermite_link(1), hermite_link(2), hermite_link(3)


def _pipe_free(header, rows):
    # a "|" inside a cell would end the cell of the markdown pipe table
    assert rows and all(len(r) == len(header) for r in rows)
    assert not any("|" in cell for cell in list(header) + [c for r in rows for c in r])





# --- the remainder and the growth -------------------------------------------------------

@pytest.fixture(scope="module")
def residual():
    return ch.residual_data({"poly4": POLY4, "tanh": TANH}, HE1, [24, 32], range(2), [40, 48], range(2),
                            {"he3": HE3, "odd": odd_bounded_link()},
                            steps=[(1.0, 0.0), (1.0, 0.2), (1.0, 0.4)], fit_from=32)


def test_residual_data_shapes_and_direct_computation(residual):
    res = residual
    assert list(res["sizes"]) == [24, 32, 40, 48] and list(res["sizes_small"]) == [24, 32]
    assert res["acts"] == ["poly4", "tanh"] and res["targets"] == ["he1", "he3", "odd"]
    assert [len(res["summary"].axis(act=a)) for a in res["acts"]] == [4, 4]
    assert res["summary"].at("top1", act="poly4", N=24).shape == (3,)
    # the first row is the mean over seeds of first_step_diagnostics with each seed's generator
    direct = [ex.first_step_diagnostics(rng_for(s), N=24, n=24, d=24, activation=POLY4, target=HE1,
                                        steps=res["steps"], top=2, dtype=np.float32) for s in range(2)]
    e = res["summary"].entry(act="poly4", N=24)
    assert e["residual"] == pytest.approx(np.mean([d["residual"] for d in direct]), rel=1e-6)
    assert e["top2"] == pytest.approx(np.mean([d["top"][:, 1] for d in direct], axis=0), rel=1e-6)
    rem = np.mean([d["eta"] * d["residual"] * d["update_norm"] for d in direct], axis=0)
    assert e["remainder"] == pytest.approx(rem, rel=1e-6)
    tail = [ex.first_step_diagnostics(rng_for(s), N=32, n=32, d=32, activation=POLY4, target=HE3,
                                      dtype=np.float32) for s in range(2)]
    assert res["tail"].at("max_label", target="he3", N=32) == pytest.approx(
        np.mean([t["max_label"] for t in tail]))
    # the main series at the small widths is the tail's he1
    assert res["tail"].at("residual", target="he1", N=32) == res["summary"].at("residual", act="poly4", N=32)
    res_poly = res["summary"].series("residual", act="poly4")[1]
    assert res["slopes"]["poly4"] == pytest.approx(loglog_slope(res["sizes"], res_poly))
    assert res["slopes"]["poly4_large"][0] == pytest.approx(loglog_slope(res["sizes"][1:], res_poly[1:])[0])
    assert res["mu1"] == pytest.approx(1.0) and res["spread"] == pytest.approx(derivative_spread(POLY4))


def test_residual_numbers_tables_and_figures(residual, fits_the_column):
    res = residual
    nums = ch.residual_numbers(res)
    assert nums["slope_poly"] == pytest.approx(res["slopes"]["poly4"][0])
    assert nums["slope_he3"] == pytest.approx(res["slopes"]["tail_he3"][0])
    assert nums["res_he3_max"] == pytest.approx(res["tail"].at("residual", target="he3", N=32))
    assert [k for k in nums if k.startswith(("top2_max_", "rem_max_"))] == ["top2_max_2", "rem_max_2"]
    assert all(isinstance(v, (int, float, str)) for v in nums.values())
    for table in (ch.residual_table, ch.slope_table, ch.tail_table, ch.growth_table):
        _pipe_free(*table(res))
    assert len(ch.growth_table(res)[1]) == 3 and len(ch.tail_table(res)[1]) == 3
    fits_the_column(ch.plot_residual(res))
    fits_the_column(ch.plot_growth(res))


def test_spread_text_has_one_or_two_significant_digits():
    assert [report.sig(x) for x in (0.0043, 0.0126, 0.05, 2.6, 14.0, 0.0)] == [
        "0.004", "0.013", "0.05", "3", "14", "0"]


def test_residual_tables_show_the_spread_of_the_seeds(residual):
    res = residual
    # every seed's diagnostics, drawn again: (activation, N) -> list over the seeds
    acts = {"poly4": POLY4, "tanh": TANH}
    direct = {(act, N): [ex.first_step_diagnostics(
        rng_for(s), N=int(N), activation=acts[act], target=HE1,
        steps=res["steps"] if act == "poly4" else (), top=2, dtype=np.float32) for s in range(2)]
        for act in acts for N in res["sizes"]}
    # tab-residual: the largest relative standard error of the ratio, over widths and activations
    rel = max(mean_sem(v)[1] / mean_sem(v)[0]
              for v in ([d["residual"] for d in runs] for runs in direct.values()))
    assert ch.residual_table_spread(res) == (
        "means over the seeds counted in the second column, with standard errors at most "
        f"{report.sig(100 * rel)}% of the entry")
    # tab-growth: s_1 and s_2 at the largest width, the remainder at the smallest and largest
    lo, hi = direct["poly4", 24], direct["poly4", 48]
    worst = lambda values: max(mean_sem(v)[1] / mean_sem(v)[0] for v in np.array(values).T)
    s1 = worst([d["top"][:, 0] for d in hi])
    s2 = worst([d["top"][:, 1] for d in hi])
    rem = max(worst([d["eta"] * d["residual"] * d["update_norm"] for d in runs])
              for runs in (lo, hi))
    text = ch.growth_table_spread(res)
    assert text.startswith("means over 2 seeds, with standard errors at most ")
    assert f"{report.sig(100 * s1)}% of the entry for $s_1$, {report.sig(100 * s2)}% for $s_2$" in text
    assert text.endswith(f"{report.sig(100 * rem)}% for $\\lVert\\Delta_1\\rVert_{{op}}$")
    # tab-remainder-tails: every measured cell "mean ± standard error", he3 at N = 32
    tail = [ex.first_step_diagnostics(rng_for(s), N=32, activation=POLY4, target=HE3,
                                      dtype=np.float32) for s in range(2)]
    header, rows = ch.tail_table(res)
    he3 = rows[[r[0] for r in rows].index(ch.TARGET_LABELS["he3"])]
    cell = lambda m, se: f"{m:.2f} ± {se:.2f}"
    assert he3[1] == cell(*mean_sem([t["remainder_sample_overlap"] for t in tail]))
    assert he3[2] == cell(*mean_sem([t["max_label"] for t in tail]))
    assert he3[3] == cell(*mean_sem([t["residual"] * t["update_norm"] for t in tail]))
    one = [single_sample_norm(t["max_label"], res["spread"], 32, 32) for t in tail]
    assert he3[4] == cell(*mean_sem(one))


# --- the spectrum of W_1 ------------------------------------------------------------------

def test_w1_spectrum_data_matches_a_direct_draw(fits_the_column):
    spec = ch.w1_spectrum_data(40, [0.5, 2.0], 0.0, POLY4, HE1, np.random.default_rng(11), margin=0.05)
    rng = np.random.default_rng(11)
    teacher = Teacher(HE1, 40, rng)
    W0, a = initialise(40, 40, rng)
    X = gaussian_inputs(40, 40, rng)
    G = one_step(W0, a, X, teacher.labels(X, rng), POLY4, 1.0) - W0
    for c, s in zip([0.5, 2.0], spec["singular"]):
        assert s.shape == (40,)
        np.testing.assert_allclose(s, singular_values(W0 + c * G), rtol=1e-10)
    assert spec["pred"][1] == pytest.approx(spiked_outlier(spike_strength(2.0, 1.0, 1.0, 1.0, 1.0), 1.0))
    assert spec["eta_c"] == pytest.approx(1 / np.sqrt(2))
    nums = ch.w1_spectrum_numbers(spec)
    assert nums["spec_out_high"] == int(np.sum(spec["singular"][1] > 2.0 * 1.05))
    assert nums["spec_top_high"] == pytest.approx(spec["singular"][1][0])
    fits_the_column(ch.plot_w1_spectrum(spec))


# --- the BBP transition -------------------------------------------------------------------

def test_bbp_data_shapes_direct_computation_and_figure(fits_the_column):
    cs = [0.3, 1.0, 2.0, 2.5]
    bbp = ch.bbp_data(32, cs, {"he1": HE1, "he3": HE3}, range(2), POLY4)
    e = bbp["summary"].entry(target="he1")
    assert e["top1"].shape == (4,) and e["right_v_overlap"].shape == (4,)
    direct = [ex.first_step_diagnostics(rng_for(s), N=32, n=32, d=32, activation=POLY4, target=HE1,
                                        steps=[(c, 0.0) for c in cs], dtype=np.float32) for s in range(2)]
    np.testing.assert_allclose(e["top1"], np.mean([d["top"][:, 0] for d in direct], axis=0), rtol=1e-6)
    assert bbp["eta_c"]["he1"] == pytest.approx(1 / np.sqrt(2)) and bbp["eta_c"]["he3"] == pytest.approx(1.0)
    above = np.array(cs) > 1.2 / np.sqrt(2)
    limit = spiked_outlier(np.array(cs)[above] * np.sqrt(2), 1.0)
    assert bbp["gap"]["he1"][0] == pytest.approx(np.max(np.abs(e["top1"][above] / limit - 1)), rel=1e-6)
    nums = ch.bbp_numbers(bbp)
    assert nums["eta_c_ratio"] == pytest.approx(np.sqrt(2))
    header, rows = ch.bbp_table(bbp)
    assert len(rows) == 2
    _pipe_free(header, rows)
    # the spread of tab-bbp: standard errors of the gaps at the steps of the largest gaps, of
    # the deviation of |mu_1| ||a|| ||v|| (limit sqrt 2) and of the remainder, over the seeds
    top = np.array([d["top"][:, 0] for d in direct])[:, above]
    pred = np.array([spiked_outlier(np.array(cs) * d["spike"], 1.0) for d in direct])[:, above]
    i = int(np.argmax(np.abs(top.mean(axis=0) / limit - 1)))
    j = int(np.argmax(np.abs(top.mean(axis=0) / pred.mean(axis=0) - 1)))
    assert bbp["gap_sem"]["he1"][0] == pytest.approx(mean_sem(top[:, i])[1] / limit[i], rel=1e-6)
    assert bbp["gap_sem"]["he1"][1] == pytest.approx(mean_sem(top[:, j] / pred[:, j] - 1)[1],
                                                   rel=1e-5)
    dev = [d["spike"] / np.sqrt(2) - 1 for d in direct]
    assert bbp["summary"].at("spike_dev", target="he1") == pytest.approx(np.mean(dev), rel=1e-6)
    assert bbp["summary"].at("spike_dev", target="he1", sem=True) == pytest.approx(mean_sem(dev)[1],
                                                                                 rel=1e-6)
    percent = max(max(*bbp["gap_sem"][k], bbp["summary"].at("spike_dev", target=k, sem=True))
                  for k in bbp["targets"])
    remainder = max(bbp["summary"].at("residual", target=k, sem=True) for k in bbp["targets"])
    assert mean_sem([d["residual"] for d in direct])[1] <= remainder
    assert ch.bbp_table_spread(bbp) == (
        f"means over 2 seeds, with standard errors at most {report.sig(100 * percent)}% for the "
        f"percentages and {report.sig(remainder)} for the remainder")
    fits_the_column(ch.plot_bbp(bbp))


# --- the learned direction ----------------------------------------------------------------

def test_overlap_data_shapes_direct_computation_and_figure(fits_the_column):
    targets = {"he1": HE1, "he1_he3": HE1 + HE3, "he2": HE2, "he3": HE3, "odd": odd_bounded_link()}
    keys = ["he1", "he2", "he3", "odd"]
    ov = ch.overlap_data(30, 1.0, 0.25, [2.0, 1.0], range(2), targets, POLY4, 2.0, [16, 24], range(2), keys)
    assert list(ov["psis"]) == [1.0, 2.0]
    st = ov["stats"]["he2"]
    assert st["v"].shape == (2,) and st["z"].shape == (2,)
    direct = [ex.first_step_diagnostics(rng_for(s), N=30, n=30, d=30, activation=POLY4, target=HE2,
                                        steps=[(1.0, 0.25)], dtype=np.float32)["v_overlap"] ** 2
              for s in range(2)]
    assert st["v"][0] == pytest.approx(np.sqrt(np.mean(direct)), rel=1e-6)
    assert ov["stats"]["he1"]["pred"][1] == pytest.approx(one_step_overlap(1.0, 1.0, 2.0))
    assert st["finite"][0] == pytest.approx(finite_size_overlap(0.0, 1.0, 5.0, 30, 30), rel=1e-6)
    dim = [ex.learned_direction_overlaps(32, 16, [targets[k] for k in keys], rng_for(s), dtype=np.float32)
           for s in range(2)]
    assert ov["dim_stats"]["he3"]["v"][0] == pytest.approx(np.sqrt(np.mean([o[2] ** 2 for o in dim])), rel=1e-6)
    nums = ch.overlap_numbers(ov)
    assert nums["m22_he2_root"] == pytest.approx(np.sqrt(5.0))
    assert nums["m22_he3_root"] == pytest.approx(np.sqrt(7.0))
    assert nums["high_max"] == pytest.approx(max(np.max(ov["stats"][k]["v"]) for k in ["he2", "he3", "odd"]))
    header, rows = ch.overlap_table(ov)
    assert len(rows) == 5
    # the table as shown: a true minus sign, and no negative zero
    shown = report.markdown_table("Caption.", "tab-x", header, rows).data
    assert not re.search("[-\u2212]0\\.00(?![0-9])", shown)
    _pipe_free(header, rows)
    fits_the_column(ch.plot_overlap(ov))


# --- the one-step literature, reproduced (Cui et al. 2024, Moniri et al. 2024) --------------

def test_cui_data_tables_figure_and_numbers(fits_the_column):
    data = ch.cui_data(60, range(2), [0.2, 3.0], 40, range(2), [0.9, 3.0])
    assert data[0]["errors"].shape == (2, 2) and data[1]["errors"].shape == (2, 2)
    assert np.all(data[0]["errors"] > 0)
    header, rows = ch.cui_table(data)
    _pipe_free(header, rows)
    assert len(rows) == 6 + 2 + 2
    nums = ch.cui_numbers(data)
    for key in ("peer_sim_max_diff", "peer_theory_max_diff", "peer_c_book1",
                "peer_c_cell1", "peer_formula_diff", "peer_sim_max_z", "peer_theory_max_z"):
        assert key in nums
    fits_the_column(ch.plot_cui(data))


def test_feature_spike_data_counts_table_and_figure(fits_the_column):
    data = runs = ch.feature_spike_data(60, [0.1, 0.3], range(2), POLY4, HE1)
    assert runs["count"].shape == (2, 2) and runs["proj_beta"].shape == (2, 2, 4)
    assert list(data["predicted"]) == [1, 2]
    assert np.all((runs["proj_beta"] >= 0) & (runs["proj_beta"] <= 1 + 1e-9))
    assert np.all(runs["edge"] > 0)
    header, rows = ch.feature_spike_table(data)
    _pipe_free(header, rows)
    nums = ch.feature_spike_numbers(data)
    assert nums["fs_max_pred"] == 2 and nums["fs_max_count"] == runs["count"].max()
    fits_the_column(ch.plot_feature_spikes(data))
    with pytest.raises(ValueError, match="alphas"):
        ex.feature_spikes(np.random.default_rng(0), 60, [0.5], POLY4, HE1)
    with pytest.raises(ValueError, match="top"):
        ex.feature_spikes(np.random.default_rng(0), 20, [0.1], POLY4, HE1, top=19)


def test_one_step_verdict_applies_the_rule_to_slope_and_overlaps():
    from types import SimpleNamespace


    from twostep.analysis.summary import Summary

    sizes = np.array([250, 500, 1000, 2000, 4000])
    records = [{"act": "poly", "N": N, "seed": k, "residual": N ** -0.5 * (1 + 0.01 * k)}
               for N in sizes for k in range(4)]
    residual = dict(main="poly", slopes={"poly": (-0.49, 0.01)}, n_seeds_small=4, sizes=sizes,
                    summary=Summary(records, ("act", "N"), ("residual",)))
    high, first = SimpleNamespace(information_exponent=3), SimpleNamespace(information_exponent=1)
    stats = {"he3": dict(v=np.array([0.05, 0.04]), v_sem=np.array([0.001, 0.001]),
                          finite=np.array([0.05, 0.04])),
             "he1": dict(pred=np.array([0.7, 0.8]))}
    overlap = dict(targets={"he3": high, "he1": first}, stats=stats, psis=np.array([1.0, 2.0]),
                   n_seeds=6, d=400)
    out = ch.one_step_verdict(residual, overlap)
    # the slope judged over its 4 seeds (3 degrees of freedom)
    assert out["verdict_rank_one"] == size(summary(-0.49, 0.01, 4), -0.5).label == "confirmed"
    # within the book's margin of its finite-size level
    assert out["verdict_high"] == "confirmed"
    assert out["high_chance"] == pytest.approx(0.05) and out["high_chance_d"] == 0.05
    # the landing page's verdicts at each width: from three widths on, the slope up to N
    assert "vw_one_step_500" in out and out["vw_one_step_1000"] == report.VERDICT_SYMBOLS[
        size(summary(*loglog_slope(sizes[:3], sizes[:3] ** -0.5 * 1.015), 4), -0.5).label]
    stats["he3"]["v"] = np.array([0.3, 0.04])          # far above its null: contradicted
    assert ch.one_step_verdict(residual, overlap)["verdict_high"] == "contradicted"
    residual["slopes"]["poly"] = (0.5, 0.02)               # a remainder that grows: far off
    assert ch.one_step_verdict(residual, overlap)["verdict_rank_one"] == "differs from the prediction"
