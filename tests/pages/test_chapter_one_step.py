"""The sweeps, the per-seed slopes and the figures of the chapter *One step* and its appendix
(twostep/pages/one_step.py), at tiny sizes: agreement with a direct computation, the
verdict rule on stand-in data, and figures whose attached numbers are the ones drawn."""

from __future__ import annotations

import pickle

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from twostep.analysis import verdicts  # noqa: E402
from twostep.analysis.bbp import spiked_outlier  # noqa: E402
from twostep.analysis.spectra import singular_values  # noqa: E402
from twostep.analysis.summary import Summary  # noqa: E402
from twostep.analysis.sweep import loglog_slope, rng_for  # noqa: E402
from twostep.analysis.theory import (finite_size_overlap, one_step_overlap,  # noqa: E402
                                     spike_strength)
from twostep.experiments import first_step as ex  # noqa: E402
from twostep.model.activations import get_activation  # noqa: E402
from twostep.model.network import gaussian_inputs, initialise  # noqa: E402
from twostep.model.steps import one_step  # noqa: E402
from twostep.model.targets import Teacher, hermite_link  # noqa: E402
from twostep.pages import memo, one_step as ch  # noqa: E402

POLY4 = get_activation("poly4")
HE1, HE2, HE3 = hermite_link(1), hermite_link(2), hermite_link(3)
STEPS = [[1.0, 0.0], [1.0, 0.2], [1.0, 0.4]]


def _mean_rows(fig, series):
    """The attached rows of a series' means, in drawing order."""
    return [r for r in fig.twostep_data if r["series"] == series + " (mean)"]


@pytest.fixture(scope="module")
def residual():
    return ch.residual_data(["poly4", "tanh"], "he1", ["he3", "odd"], [24, 32, 40], 3, [48], 2,
                            steps=STEPS)


def test_the_chapters_parameters_are_keys_of_a_shared_study():
    # both pages pass these to memo.study: every value must have a stable key
    keys = {memo.study_key(f, p) for f, p in ((ch.residual_data, ch.RESIDUAL),
                                             (ch.bbp_data, ch.BBP),
                                             (ch.overlap_data, ch.OVERLAP))}
    assert len(keys) == 3


def test_links_by_name():
    g = ch.link("he1_he3")
    assert g.coefficients[1] == pytest.approx(1.0) and g.coefficients[3] == pytest.approx(np.sqrt(6))
    assert ch.link("odd").information_exponent == 3 and ch.link("he2").information_exponent == 2


def test_residual_data_matches_a_direct_computation(residual):
    res = residual
    assert res["summary"].axis(act="poly4") == [24, 32, 40, 48]
    assert res["tail"].axis(target="he3") == [24, 32, 40]
    assert res["targets"] == ["he1", "he3", "odd"] and res["acts"] == ["poly4", "tanh"]
    direct = [ex.first_step_diagnostics(rng_for(s), N=24, activation=POLY4, target=HE1,
                                        steps=STEPS, top=2, dtype=np.float32) for s in range(3)]
    e = res["summary"].entry(act="poly4", N=24)
    assert e["residual"] == pytest.approx(np.mean([d["residual"] for d in direct]), rel=1e-6)
    assert e["top2"] == pytest.approx(np.mean([d["top"][:, 1] for d in direct], axis=0), rel=1e-6)
    rem = np.mean([d["eta"] * d["residual"] * d["update_norm"] for d in direct], axis=0)
    assert e["remainder"] == pytest.approx(rem, rel=1e-6)
    tail = [ex.first_step_diagnostics(rng_for(s), N=32, activation=POLY4, target=HE3,
                                      dtype=np.float32) for s in range(3)]
    assert res["tail"].at("max_label", target="he3", N=32) == pytest.approx(
        np.mean([t["max_label"] for t in tail]))
    # the main series at the small widths is the tail's he1
    assert (res["tail"].at("residual", target="he1", N=32)
            == res["summary"].at("residual", act="poly4", N=32))
    # names and numbers only: the result can be kept on disk by memo.study
    assert pickle.loads(pickle.dumps(res))["summary"].axis(act="tanh") == [24, 32, 40, 48]


def test_seed_slopes_fit_each_seed_over_its_own_widths():
    records = [{"act": "a", "N": N, "seed": s, "residual": (1 + s) * N ** (-0.5 + 0.1 * s)}
               for s in range(3) for N in (100, 200, 400, 800) if not (s == 2 and N == 800)]
    summary = Summary(records, ("act", "N"), ("residual",))
    assert ch.seed_slopes(summary, act="a") == pytest.approx([-0.5, -0.4, -0.3])
    # up to a width: only the seeds that reach it; from a width: three widths at least
    assert ch.seed_slopes(summary, up_to=800, act="a") == pytest.approx([-0.5, -0.4])
    assert ch.seed_slopes(summary, since=200, act="a") == pytest.approx([-0.5, -0.4])
    assert ch.seed_slopes(summary, up_to=200, act="a").size == 0


def test_the_verdicts_follow_the_rule_on_stand_in_slopes():
    # the paper's claim: a negative slope; the book's size: -1/2 within the margin
    falling = np.array([-0.49, -0.51, -0.50, -0.48, -0.52, -0.50])
    assert verdicts.effect(falling, 0.0, sign=-1).label == verdicts.CONFIRMED
    assert verdicts.size(falling, -0.5, 0.0).label == verdicts.CONFIRMED
    shallow = falling + 0.3
    assert verdicts.effect(shallow, 0.0, sign=-1).label == verdicts.CONFIRMED
    assert verdicts.size(shallow, -0.5, 0.0).label == verdicts.DIFFERS
    assert verdicts.effect(-falling, 0.0, sign=-1).label == verdicts.CONTRADICTED


def test_residual_figure_carries_every_seed_and_the_means(residual, fits_the_column):
    fig = ch.plot_residual(residual)
    s = residual["summary"]
    means = _mean_rows(fig, r"$\sigma_4$")
    x, m, se = s.series("residual", act="poly4")
    assert [r["x"] for r in means] == list(x)
    assert [r["y"] for r in means] == pytest.approx(m) and [r["sem"] for r in means] == pytest.approx(se)
    seeds = [r for r in fig.twostep_data if r["series"] == r"$\sigma_4$"]
    assert len(seeds) == sum(s.count(act="poly4", N=N) for N in x)
    # the legend gives each seed's slope, mean ± standard error
    slopes = ch.seed_slopes(s, act="poly4")
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert r"$\sigma_4$: slope " + ch.pm(*verdicts.mean_sem(slopes)) in texts
    fits_the_column(fig)


def test_growth_figure_and_curves(residual, fits_the_column):
    curves = ch.growth_curves(residual)
    assert [c["alpha"] for c in curves] == [0.0, 0.2, 0.4]
    theta = spike_strength(48 ** 0.4, 1.0, 1.0, 1.0, 1.0)
    assert curves[-1]["pred"][-1] == pytest.approx(spiked_outlier(theta, 1.0))
    fig = ch.plot_growth(residual)
    rows = _mean_rows(fig, r"s_1, $\alpha_1 = 0.4$")
    assert [r["y"] for r in rows] == pytest.approx(curves[-1]["top1"])
    assert [r["theory"] for r in rows] == pytest.approx(curves[-1]["pred"])
    fits_the_column(fig)


def test_w1_spectrum_matches_a_direct_draw(fits_the_column):
    spec = ch.w1_spectrum_data(40, [0.5, 2.0], 0.0, POLY4, HE1, np.random.default_rng(11))
    rng = np.random.default_rng(11)
    teacher = Teacher(HE1, 40, rng)
    W0, a = initialise(40, 40, rng)
    X = gaussian_inputs(40, 40, rng)
    G = one_step(W0, a, X, teacher.labels(X, rng), POLY4, 1.0) - W0
    for c, s in zip([0.5, 2.0], spec["singular"]):
        np.testing.assert_allclose(s, singular_values(W0 + c * G), rtol=1e-10)
    assert spec["pred"][1] == pytest.approx(spiked_outlier(spike_strength(2.0, 1.0, 1.0, 1.0, 1.0), 1.0))
    assert spec["eta_c"] == pytest.approx(1 / np.sqrt(2))
    fig = ch.plot_w1_spectrum(spec)
    outliers = [r["x"] for r in fig.twostep_data if r["series"] == "outlier"]
    big = spec["singular"][1]
    assert sorted(outliers) == pytest.approx(sorted(big[big > 2.0 * 1.05]))
    fits_the_column(fig)


def test_bbp_data_matches_a_direct_computation(fits_the_column):
    cs = [0.3, 1.0, 2.0, 2.5]
    bbp = ch.bbp_data(32, cs, ["he1", "he3"], 2, "poly4")
    e = bbp["summary"].entry(target="he1")
    direct = [ex.first_step_diagnostics(rng_for(s), N=32, activation=POLY4, target=HE1,
                                        steps=[(c, 0.0) for c in cs], dtype=np.float32)
              for s in range(2)]
    np.testing.assert_allclose(e["top1"], np.mean([d["top"][:, 0] for d in direct], axis=0),
                               rtol=1e-6)
    assert bbp["eta_c"]["he1"] == pytest.approx(1 / np.sqrt(2))
    assert bbp["eta_c"]["he3"] == pytest.approx(1.0)
    above = np.array(cs) > 1.2 / np.sqrt(2)
    limit = spiked_outlier(np.array(cs)[above] * np.sqrt(2), 1.0)
    assert bbp["gap"]["he1"][0] == pytest.approx(np.max(np.abs(e["top1"][above] / limit - 1)),
                                                 rel=1e-6)
    fig = ch.plot_bbp(bbp)
    rows = [r for r in fig.twostep_data if r["series"] == "he1 (mean)" and r["panel"] == 1]
    assert [r["y"] for r in rows] == pytest.approx(e["top1"])
    assert [r["theory"] for r in rows] == pytest.approx(
        spiked_outlier(np.array(cs) * np.sqrt(2), 1.0))
    fits_the_column(fig)


def test_overlap_data_keeps_every_seeds_cosine(fits_the_column):
    targets = ["he1", "he1_he3", "he2", "he3", "odd"]
    keys = ["he1", "he2", "he3", "odd"]
    ov = ch.overlap_data(30, 1.0, 0.25, [2.0, 1.0], 3, targets, "poly4", 2.0, [16, 24], 2, keys)
    assert list(ov["psis"]) == [1.0, 2.0]
    direct = [ex.first_step_diagnostics(rng_for(s), N=30, activation=POLY4, target=HE2,
                                        steps=[(1.0, 0.25)], dtype=np.float32)["v_overlap"]
              for s in range(3)]
    # every seed's |cos| for the verdict; their root mean square for the figure
    assert ov["summary"].seed_values("v", target="he2", psi=1.0) == pytest.approx(direct, rel=1e-6)
    assert ov["stats"]["he2"]["v"][0] == pytest.approx(np.sqrt(np.mean(np.square(direct))),
                                                       rel=1e-6)
    assert ov["stats"]["he1"]["pred"][1] == pytest.approx(one_step_overlap(1.0, 1.0, 2.0))
    assert ov["stats"]["he2"]["finite"][0] == pytest.approx(
        finite_size_overlap(0.0, 1.0, 5.0, 30, 30), rel=1e-6)
    fig = ch.plot_overlap(ov)
    rows = [r for r in fig.twostep_data
            if r["series"] == "he2, v (r.m.s.)" and r["panel"] == 1]
    assert [r["y"] for r in rows] == pytest.approx(ov["stats"]["he2"]["v"])
    assert [r["theory"] for r in rows] == pytest.approx(ov["stats"]["he2"]["finite"])
    assert len([r for r in fig.twostep_data if r["series"] == "he2, v"]) == 3 * 2
    fits_the_column(fig)


def test_cui_data_and_figure(fits_the_column):
    data = ch.cui_data(60, range(2), [0.2, 3.0], 40, range(2), [0.9, 3.0])
    assert data[0]["errors"].shape == (2, 2) and data[1]["errors"].shape == (2, 2)
    cmp = ch.peer_comparison(data[0])
    assert cmp["diff"] == pytest.approx(data[0]["errors"].mean(axis=0) - cmp["peer"])
    assert np.all(ch.peer_comparison(data[1])["peer_sd"] == 0)     # a theory has no spread
    fig = ch.plot_cui(data)
    ours = [r for r in fig.twostep_data
            if r["series"].startswith("twostep") and r["panel"] == 1]
    assert [r["y"] for r in ours] == pytest.approx(cmp["mean"])
    fits_the_column(fig)


def test_feature_spikes_mark_a_count_at_the_ceiling(fits_the_column):
    data = ch.feature_spike_data(60, [0.1, 0.3], range(2), POLY4, HE1)
    assert data["count"].shape == (2, 2) and list(data["predicted"]) == [1, 2]
    fig = ch.plot_feature_spikes(data)
    counted = [r for r in fig.twostep_data if r["series"] == "counted"]
    assert [r["y"] for r in counted] == list(data["count"].ravel())
    assert not any(r["censored"] for r in counted)
    full = dict(data, count=np.full_like(data["count"], data["top"].shape[-1]))
    assert all(r["censored"] for r in ch.plot_feature_spikes(full).twostep_data
               if r["series"] == "counted")
    fits_the_column(fig)
