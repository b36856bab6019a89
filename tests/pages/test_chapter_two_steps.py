"""The page modules of *Two steps, several spikes* and its appendix (twostep.pages.two_steps,
twostep.pages.spikes): the scaling study and the figures, at tiny N. The tables are the
chapter cells' own; the tests here check what the figures draw and the data they carry."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import twostep as ts
from twostep.analysis import verdicts
from twostep.analysis.confirmatory import REACH
from twostep.analysis.spikes import outlier_strength, width_to_reach
from twostep.pages import spikes as sp, two_steps as ch
from twostep.pages.figures import DATA_ATTR

C, REF = 0.2, (0.4, 0.25)
SETTINGS = [(0.2, 0.2), (0.3, 0.3), (0.4, 0.25), (0.45, 0.3)]
ALPHAS = [0.05, 0.23, 0.41]
NS, SEEDS = [20, 28, 36], [0, 1]
LABELS = {"poly2": "s2", "poly3": "s3", "poly4": "s4", "tanh": "tanh"}
RUN = dict(activation="poly4", target="he1", c1=C, alpha1=REF[0], c2=C, alpha2=REF[1])


@pytest.fixture(scope="module")
def scaling():
    return ch.scaling_study(NS, SEEDS, "poly4", "he1", C, REF, settings=SETTINGS, alphas=ALPHAS,
                            n_grid=28, n_top=4)


@pytest.fixture(scope="module")
def mem():
    return ch.draw("one_draw", 0, N=40, batch="reused", settings=SETTINGS[:1], **RUN)


@pytest.fixture(scope="module")
def spectra():
    return ch.draw("one_draw", 0, N=40, settings=SETTINGS, **RUN)


def _data(fig):
    """The rows attach_data gave a figure."""
    rows = getattr(fig, DATA_ATTR)
    assert rows and all(list(r) == list(rows[0]) for r in rows)
    return rows


def _seeds(scaling, batch, N):
    return [r for r in scaling.summary.records if r["batch"] == batch and r["N"] == N]


def test_scaling_study_shapes_and_fits(scaling):
    records = scaling.summary.records
    assert len(records) == 2 * len(NS) * len(SEEDS)
    r = records[0]
    assert r["batch"] == "fresh" and r["N"] == NS[0] and r["seed"] == 0
    assert np.allclose(r["rel"], r["residual"] / r["signal"])
    assert np.allclose(r["size_corr"], r["top"] / r["signal_corrected"])
    assert r["settings_top"].shape == (len(SETTINGS), 4)
    assert all(len(r["grid_count"]) == len(ALPHAS) ** 2 for r in records if r["N"] == 28)
    assert all(len(r["grid_count"]) == 0 for r in records if r["N"] != 28)
    N, y = scaling.summary.pooled("top", 2, batch="reused")
    assert N.shape == y.shape == (len(NS) * len(SEEDS),)
    assert scaling.slope("reused", "top", 2) == pytest.approx(ts.loglog_slope(N, y))
    assert scaling.predicted == [ts.spike_exponent(k, *REF) for k in range(4)]


def test_draw_runs_the_named_single_draw_of_a_seed():
    from twostep.experiments.spikes import power_components

    a = ch.draw("power_components", 3, N=24, powers=4)
    b = power_components(ts.rng_for(3), N=24, powers=4)
    np.testing.assert_array_equal(a["measured"], b["measured"])
    with pytest.raises(ValueError, match="experiment must be"):
        ch.draw("spike_experiment", 0, N=24)


def test_terms_figure_carries_what_it_draws(scaling, fits_the_column):
    fig = sp.plot_terms(scaling.summary, scaling.predicted)
    rows = _data(fig)
    fits_the_column(fig)
    # every plotted mean is the summary's, with its standard error over seeds
    x, mean, sem = scaling.summary.series("top", 2, batch="reused")
    got = [r for r in rows if r["panel"] == "top" and r["batch"] == "reused"
           and r["series"] == "s1(T_2)"]
    assert [r["N"] for r in got] == NS
    np.testing.assert_allclose([r["value"] for r in got], mean)
    np.testing.assert_allclose([r["sem"] for r in got], sem)
    # the theory line has slope e_k
    t = [r["theory"] for r in got]
    assert math.log(t[-1] / t[0]) / math.log(NS[-1] / NS[0]) == pytest.approx(scaling.predicted[2])
    chance = [r["theory"] for r in rows if r["panel"] == "bottom"]
    assert all(0 < c < 1 for c in chance)


def test_correction_figure_and_limits(scaling, fits_the_column):
    limits = ch.correction_limits(scaling)
    np.testing.assert_allclose(limits["fresh"], [1.0, 1.2551, 1.3994], atol=1e-3)
    fig = ch.plot_correction(scaling, limits)
    rows = _data(fig)
    fits_the_column(fig)
    # order 1: the two predictions coincide
    one = {(r["prediction"], r["N"]): r["mean"] for r in rows if r["panel"] == "a" and r["k"] == 1}
    assert all(one["S_k", N] == pytest.approx(one["S_k^corr", N]) for N in NS)
    got = [r["mean"] for r in rows if r["panel"] == "a" and r["k"] == 3
           and r["prediction"] == "S_k^corr"]
    np.testing.assert_allclose(got, scaling.summary.series("size_corr", 3, batch="fresh")[1])


def test_spectra_left_and_one_step_figures(spectra, mem, scaling, fits_the_column):
    fig = ch.plot_spectra(spectra)
    rows = _data(fig)
    fits_the_column(fig)
    last = spectra["spec"][-1]
    strengths = [r["value"] for r in rows if r["setting"] == f"({last['a1']}, {last['a2']})"
                 and r["series"] == "predicted strength"]
    np.testing.assert_allclose(strengths, last["strengths"])
    assert all(r["theta_star"] == outlier_strength(1.0) for r in rows)
    fig = ch.plot_left(spectra)
    assert len(_data(fig)) == 4 * 40
    fits_the_column(fig)
    fig = ch.plot_one_step(scaling, mem, SETTINGS[:2])
    rows = _data(fig)
    fits_the_column(fig)
    b = [r for r in rows if r["panel"] == "b" and r["batch"] == "fresh"
         and r["setting"] == str(SETTINGS[1])]
    np.testing.assert_allclose([r["value"] for r in b],
                               scaling.summary.series("settings_higher", 1, batch="fresh")[1])
    t = [r["theory"] for r in b]   # the line of slope e_1 = 0.1
    assert math.log(t[-1] / t[0]) / math.log(NS[-1] / NS[0]) == pytest.approx(0.1)


def test_cap_figure_marks_diamonds_below_its_axis(fits_the_column):
    data = {name: ch.draw("power_components", 0, N=24, activation=name, target="he1", c1=C,
                          alpha1=0.45, c2=C, alpha2=0.3, powers=6) for name in LABELS}
    fig = ch.plot_cap(data, LABELS)
    rows = _data(fig)
    fits_the_column(fig)
    assert len(rows) == 4 * 6
    tanh = [r for r in rows if r["activation"] == "tanh"]
    np.testing.assert_allclose([r["measured"] for r in tanh], data["tanh"]["measured"])
    assert all(r["predicted_below_axis"] == (r["predicted"] < 1e-3) for r in rows)


def test_nstar_text_writes_an_extrapolation_beyond_reach_in_words():
    assert sp.nstar_text(3.2e4, REACH) == sp.nstar_text(3.2e4) == "3.2 × 10⁴"
    assert sp.nstar_text(REACH, REACH) == "1.0 × 10⁶"
    assert sp.nstar_text(1.1e11, REACH) == sp.nstar_text(math.inf, REACH) == "beyond reach (> 10⁶)"
    assert sp.nstar_text(math.inf) == "never" and sp.nstar_text(1.1e11) == "1.1 × 10¹¹"


def test_terms_verdict_follows_the_size_rule(scaling):
    s = scaling.summary
    N = NS[-1]
    for key in ("size", "size_corr"):
        labels = [verdicts.size(s.seed_values(key, k, batch="fresh", N=N), 1.0).label
                  for k in (2, 3)]
        assert sp.terms_verdict(s, N, size_key=key) == verdicts.worst(labels)


def test_nstar_range_and_extrapolation(scaling):
    r = ch.nstar_range(scaling, 2, 2)
    assert r["growth"] == pytest.approx(2 ** 0.05) and r["lo"] <= r["hi"]
    wide = ch.nstar_range(scaling, 2, 2, margins=(0.01, 0.2))
    assert wide["lo"] <= r["lo"] and wide["hi"] >= r["hi"]
    fresh = [x for x in scaling.summary.records if x["batch"] == "fresh"]
    consts = [math.exp(np.mean([math.log(x["settings_spikes_corrected"][2][2])
                                - 0.05 * math.log(x["N"]) for x in fresh if x["seed"] == s]))
              for s in SEEDS]
    assert r["lo"] == pytest.approx(width_to_reach(outlier_strength(1.0, 0.02), max(consts), 0.05))
    rows = ch.extrapolation(scaling, 1.37)
    assert len(rows) == sum(ts.n_spikes(a1, a2, 4) for a1, a2 in SETTINGS)
