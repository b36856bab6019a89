"""The chapter module of *Two steps, several spikes*: compute, table and plot functions at tiny N."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import twostep as ts
from twostep.analysis import plane
from twostep.analysis.spikes import outlier_strength, width_to_reach
from twostep.pages import count as cnt, report, spikes as sp, two_steps as ch
from twostep.experiments import spikes as ex
from twostep.pages.report import VERDICT_SYMBOLS, VERDICT_WIDTHS

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
    return ex.one_draw(ts.rng_for(0), N=40, batch="reused", settings=SETTINGS[:1], **RUN)


@pytest.fixture(scope="module")
def spectra():
    return ex.one_draw(ts.rng_for(0), N=40, settings=SETTINGS, **RUN)


@pytest.fixture(scope="module")
def phase(scaling):
    return ch.phase_data(scaling, 2)








def _sem(x):
    """Standard error over seeds of the per-seed values ``x`` (along the first axis)."""
    x = np.asarray(x, float)
    return x.std(axis=0, ddof=1) / np.sqrt(len(x))


def _seeds(scaling, batch, N):
    return [r for r in scaling.summary.records if r["batch"] == batch and r["N"] == N]


# ----------------------------------------------------------------- parameters and checks

def test_parameter_numbers():
    v = ch.parameter_numbers(C, REF, SETTINGS, 4, NS, SEEDS, 28)
    assert v["ref"] == "(0.4, 0.25)" and v["ref_lambda"] == ts.n_spikes(*REF, 4) == 2
    assert (v["N_min"], v["N_max"], v["n_seeds"], v["N_grid"]) == (20, 36, 2, 28)
    assert v["s3"] == "(0.45, 0.3)" and v["s3e1"] == pytest.approx(0.3 - 0.05)


def test_check_table(page_table):
    out = ex.decomposition_check(ts.rng_for(0), N=24, **RUN)
    text = page_table(ch.check_table(out), label="tab-checks", rows=4)
    assert f"| $W_2$ rebuilt from other step sizes | {report.sci(out['w2_error'])} |" in text


# ----------------------------------------------------------------- the scaling study

def test_scaling_study_shapes_and_fits(scaling):
    records = scaling.summary.records
    assert len(records) == 2 * len(NS) * len(SEEDS)
    r = records[0]
    assert r["batch"] == "fresh" and r["N"] == NS[0] and r["seed"] == 0
    assert np.allclose(r["rel"], r["residual"] / r["signal"])
    assert np.allclose(r["size_corr"], r["top"] / r["signal_corrected"])
    assert r["settings_top"].shape == (len(SETTINGS), 4)
    grid_rows = [r for r in records if r["N"] == 28]
    assert all(len(r["grid_count"]) == len(ALPHAS) ** 2 for r in grid_rows)
    assert all(len(r["grid_count"]) == 0 for r in records if r["N"] != 28)
    assert scaling.summary.axis(batch="fresh") == NS
    N, y = scaling.summary.pooled("top", 2, batch="reused")
    assert N.shape == y.shape == (len(NS) * len(SEEDS),)
    assert scaling.slope("reused", "top", 2) == pytest.approx(ts.loglog_slope(N, y))
    mean = np.mean([r["left"] for r in records if r["batch"] == "fresh" and r["N"] == 36], axis=0)
    assert np.allclose(scaling.summary.at("left", batch="fresh", N=36), mean)
    assert scaling.predicted == [ts.spike_exponent(k, *REF) for k in range(4)]


def test_terms_figure_tables_and_numbers(scaling, fits_the_column, page_table):
    fig = sp.plot_terms(scaling.summary, scaling.predicted)
    fits_the_column(fig)
    assert len(fig.get_axes()) == 6
    page_table(ch.slopes_table(scaling), label="tab-slopes", rows=8)
    text = page_table(ch.terms_table(scaling), label="tab-terms", rows=8)
    # the caption's spread: the largest standard error of a cosine and of any other entry
    cosines = others = 0.0
    for b in ("fresh", "reused"):
        last = _seeds(scaling, b, NS[-1])
        for k in range(4):
            cosines = max(cosines, *(_sem([r[key][k] for r in last]) for key in ("left", "right")))
            peak = max(NS, key=lambda N: np.mean([r["rel"][k] for r in _seeds(scaling, b, N)]))
            others = max(others, _sem([r["top"][k] / r["signal"][k] for r in last]),
                         *(_sem([r["rel"][k] for r in _seeds(scaling, b, N)])
                           for N in (NS[0], peak, NS[-1])))
    assert cosines > 0 and others > 0
    assert ch.terms_table_spread(scaling) == (f"largest standard error: {report.sig(cosines)} "
                                              f"for a cosine, {report.sig(others)} otherwise")
    text = page_table(ch.localisation_table(scaling), label="tab-localisation", rows=8)
    last = _seeds(scaling, "reused", NS[-1])
    cells = [report.pm(np.mean([r[key][3] for r in last]), _sem([r[key][3] for r in last]))
             for key in ("localisation", "localisation_signal", "memorisation")]
    assert f"| reused | 3 | {' | '.join(cells)} |" in text
    assert all(" ± " in cell for cell in cells)
    v = ch.terms_numbers(scaling)
    at = scaling.summary.at
    assert v["fr_left_min"] == pytest.approx(min(at("left", batch="fresh", N=36)))
    assert v["ref_e2"] == pytest.approx(scaling.predicted[2])
    assert v["re_ratio3"] == pytest.approx(at("top", 3, batch="reused", N=36)
                                           / at("signal", 3, batch="reused", N=36))


# ----------------------------------------------------------------- one memorised pair

def test_memorised_table(mem, page_table):
    text = page_table(ch.memorised_table(mem, 40), label="tab-memorised", rows=5)
    # every row has its three cells: no "|" inside a cell splits it
    assert all(line.count("|") == 4 for line in text.splitlines() if line.startswith("|"))
    assert f"{ts.chance_maximum(40, 40):.3f}" in text


# ----------------------------------------------------------------- spectra and left vectors

def test_spectra_tables_and_figures(spectra, fits_the_column, page_table):
    v = ch.spectra_numbers(spectra)
    assert v["spec_sv2"] == pytest.approx(spectra["spec"][-1]["sv2"][1]) and v["edge_margin"] == 2.1
    assert v["N_spec"] == 40 and v["theta_star"] == outlier_strength(1.0)
    assert 0 <= v["spec_cos_a2"] <= 1 + 1e-9
    page_table(ch.spectra_table(spectra), label="tab-spectra", rows=4)
    page_table(ch.spectra_spikes_table(spectra), label="tab-spectra-spikes", rows=8)
    page_table(ch.powers_table(spectra), label="tab-powers", rows=6)
    fits_the_column(ch.plot_spectra(spectra))
    fig = ch.plot_left(spectra)
    fits_the_column(fig)
    assert len(fig.get_axes()) == 4


# ----------------------------------------------------------------- two steps as one

def test_one_step(scaling, mem, fits_the_column, page_table):
    eq = SETTINGS[:2]
    rows = [r for r in scaling.summary.records if r["batch"] == "reused"]
    direct = ts.loglog_slope([r["N"] for r in rows], [r["settings_higher"][1] for r in rows])
    assert scaling.slope("reused", "settings_higher", 1) == pytest.approx(direct)
    fits_the_column(ch.plot_one_step(scaling, mem, eq))
    v = ch.one_step_numbers(mem)
    two, one = mem["spec"][0]["sv2"], mem["spec"][0]["sv_lin"]
    assert v["eq_top_two"] == pytest.approx(two[0])
    assert v["eq_ks"] == pytest.approx(np.max(np.abs(np.sort(two) - np.sort(one))))
    text = page_table(ch.one_step_table(scaling, eq), label="tab-one-step", rows=4)
    slope = report.minus_sign(report.pm(*direct, 2, signed=True))
    assert f"| (0.3, 0.3) | reused | +0.1 | {slope} |" in text     # e_1 = 0.3 + 0.3 - 1/2


# ----------------------------------------------------------------- the cap

def test_cap_tables_and_figure(fits_the_column, page_table):
    data = {name: ex.power_components(ts.rng_for(0), N=24, activation=name, target="he1",
                                      c1=C, alpha1=0.45, c2=C, alpha2=0.3, powers=6)
            for name in LABELS}
    v = ch.cap_numbers(data, (0.45, 0.3), 24)
    assert v["cap"] == "(0.45, 0.3)" and v["cap_floor"] == ts.n_spikes(0.45, 0.3)
    assert v["N_cap"] == 24 and v["cap_p3_m2"] == pytest.approx(data["poly3"]["ratio"][2])
    page_table(ch.cap_table(data, LABELS), label="tab-cap", rows=4)
    page_table(ch.cap_ratio_table(data, LABELS), label="tab-cap-ratio", rows=4)
    fig = ch.plot_cap(data, LABELS)
    fits_the_column(fig)


# ----------------------------------------------------------------- the phase diagram

def test_phase_data(scaling, phase, fits_the_column, page_table):
    n = len(ALPHAS)
    A1, A2 = np.meshgrid(ALPHAS, ALPHAS, indexing="ij")
    assert np.array_equal(phase["theory"], plane.theory_count(A1, A2, 4))
    for b in ("fresh", "reused"):
        assert phase["emp_grid"][b].shape == phase["raw"][b].shape == (n, n)
        assert phase["emp"][b]["e_hat"][2] == pytest.approx(scaling.slope(b, "top_free", 2)[0])
    raw = np.mean([r["grid_count"] for r in scaling.summary.records
                   if r["batch"] == "fresh" and r["N"] == 28], axis=0)
    assert np.allclose(phase["raw"]["fresh"].ravel(), raw)
    v = ch.phase_numbers(phase)
    assert v["n_grid"] == n * n and v["n_lam0"] + v["n_lam_pos"] == n * n and v["n_se"] == 2
    assert v["raw_low_fresh"] == int(np.sum(phase["raw"]["fresh"] < 1 + phase["theory"]))
    fits_the_column(ch.plot_phase(phase, resolution=40))
    page_table(ch.phase_table(phase), label="tab-phase", rows=6)
    text = page_table(ch.counts_table(phase), label="tab-counts", rows=6)
    agree = [int(np.sum((phase["raw"]["fresh"] == 1 + phase["theory"]) & mask))
             for mask in (phase["theory"] == 0, phase["theory"] > 0, phase["theory"] >= 0)]
    assert f"| raw outliers of $W_2$, fresh | $1+\\Lambda$ | {agree[0]} | {agree[1]} | {agree[2]} |" in text
    page_table(ch.margin_table(phase), label="tab-margin", rows=3)
    m = ch.margin_numbers(phase)
    assert m["se_min"] == pytest.approx(min(phase["emp"]["fresh"]["e_se"][1:]))


# ----------------------------------------------------------------- extrapolation

def test_extrapolation_and_first_spike(scaling, page_table):
    theta = 1.37
    rows = ch.extrapolation(scaling, theta)
    assert len(rows) == sum(ts.n_spikes(a1, a2, 4) for a1, a2 in SETTINGS)
    r = rows[0]
    fresh = [x for x in scaling.summary.records if x["batch"] == "fresh"]
    strength = np.array([x["settings_spikes"][r["i"]][r["k"]] for x in fresh])
    N = np.array([x["N"] for x in fresh], float)
    Ck = math.exp(np.mean(np.log(strength) - r["e"] * np.log(N)))
    assert r["n_star"] == pytest.approx(width_to_reach(theta, Ck, r["e"]))
    page_table(ch.extrapolation_table(rows), label="tab-extrapolation", rows=len(rows))
    rows_corr = ch.extrapolation(scaling, theta, key="settings_spikes_corrected")
    page_table(ch.nstar_table(rows, rows_corr), label="tab-nstar-corr", rows=len(rows))
    link = ts.get_link("he1")
    v = ch.extrapolation_numbers(rows, scaling)
    count = {N: np.mean([r["settings_count_W1"][0] for r in _seeds(scaling, "fresh", N)]) for N in NS}
    assert v["first_count_4000"] == pytest.approx(count[36])
    assert v["first_count_2000"] == pytest.approx(count[28])
    assert "nstar_31" in v and "nstar_second" in v
    text = page_table(ch.first_spike_table(scaling), label="tab-first", rows=len(NS))
    for N in NS:
        counts = [r["settings_count_W1"][0] for r in _seeds(scaling, "fresh", N)]
        theta = ts.spike_strength(C * N ** SETTINGS[0][0], 1.0, link.coefficients[1],
                                  link.second_moment, 1.0)
        assert f"| {N} | {theta:.2f} | {report.pm(np.mean(counts), _sem(counts))} |" in text


def test_correction_compares_both_predictions(scaling, fits_the_column, page_table):
    limits = ch.correction_limits(scaling)
    s = scaling.summary
    # order 1: the two predictions coincide
    np.testing.assert_allclose(s.series("size", 1, batch="fresh")[1],
                               s.series("size_corr", 1, batch="fresh")[1], rtol=1e-12)
    r = _seeds(scaling, "fresh", NS[-1])
    assert s.at("size_corr", 2, batch="fresh", N=NS[-1]) == pytest.approx(
        np.mean([x["top"][2] / x["signal_corrected"][2] for x in r]))
    np.testing.assert_allclose(limits["fresh"], [1.0, 1.2551, 1.3994], atol=1e-3)
    fits_the_column(ch.plot_correction(scaling, limits))
    text = page_table(ch.correction_table(scaling, limits), label="tab-correction",
                      rows=2 * len(ch.CORRECTION_ORDERS))
    ratio = [x["top"][3] / x["signal"][3] for x in r]
    assert f"| fresh | 3 | {report.pm(np.mean(ratio), _sem(ratio), 3)} |" in text
    page_table(ch.correction_fit_table(scaling), label="tab-correction-fit",
               rows=2 * len(ch.CORRECTION_ORDERS))
    nums = ch.correction_numbers(scaling, limits)
    assert nums["corr_N"] == NS[-1] and nums["corr_limit3"] == pytest.approx(1.3994, abs=1e-3)


def test_own_edge_counts(scaling, page_table):
    page_table(ch.own_edge_table(scaling), label="tab-own-edge", rows=2 * len(SETTINGS))
    # the caption's spread: the largest range over seeds of one entry's count, either count
    spread = max(int(np.ptp([r[key][i] for r in _seeds(scaling, b, N)]))
                 for b in ("fresh", "reused") for N in NS for i in range(len(SETTINGS))
                 for key in ("settings_count", "settings_count_own"))
    assert ch.own_edge_spread(scaling) == ("every seed gives the same counts" if spread == 0
                                           else f"the counts of the seeds differ by at most {spread}")
    # seed 0's records twice over: every seed gives the same counts
    twice = [{**r, "seed": s} for r in scaling.summary.records if r["seed"] == 0 for s in (0, 1)]
    same = ch.Scaling(**{**scaling.__dict__, "summary": sp.terms_summary(twice, ch.SUMMARY_VALUES)})
    assert ch.own_edge_spread(same) == "every seed gives the same counts"
    text = page_table(ch.own_edge_level_table(scaling), label="tab-own-edge-level", rows=2 * len(SETTINGS))
    edges = [r["settings_edge_own"][0] for r in _seeds(scaling, "fresh", NS[0])]
    a1, a2 = SETTINGS[0]
    assert f"| fresh | ({a1:g}, {a2:g}) | {np.mean(edges):.2f} |" in text
    # the caption: each batch's largest standard error over (setting, width), from the seeds
    largest = {b: max(_sem([r["settings_edge_own"][i] for r in _seeds(scaling, b, N)])
                      for i in range(len(SETTINGS)) for N in NS) for b in ("fresh", "reused")}
    assert largest["fresh"] > 0
    assert ch.own_edge_level_spread(scaling) == (f"{report.sig(largest['fresh'])} (fresh) and "
                                                 f"{report.sig(largest['reused'])} (reused)")
    nums = ch.own_edge_numbers(scaling)
    assert 0 <= nums["own_fresh_hits"] <= nums["own_fresh_total"]
    for r in scaling.summary.records:
        s, edge = r["settings_top"], r["settings_edge_own"]
        assert np.all(r["settings_count_own"] == [np.sum(row > e * 1.05) for row, e in zip(s, edge)])


def test_mean_and_spread_formats():
    assert report.pm(0.456, 0.031) == "0.46 ± 0.03"
    assert report.pm(2.0031, 0.0012) == "2.003 ± 0.001"   # a standard error that rounds to 0.00
    assert report.pm(1, 0.0) == "1.00 ± 0.00"             # every seed the same
    assert [report.sig(x) for x in (0.0034, 0.0123, 0.26, 7.3, 12.3, 0.0)] == [
        "0.003", "0.012", "0.3", "7", "12", "0"]


def test_order_count_data_and_plot(fits_the_column):
    data = cnt.order_count_data(L=5, alpha2=0.3, Ns=(40, 80), seeds=2, alpha1=np.linspace(0, 0.45, 10))
    assert data["e_hat"].shape == data["spike"].shape == (5,) and data["spike"].dtype == bool
    np.testing.assert_array_equal(data["theory"], [ts.n_spikes(a, 0.3, 5) for a in data["alpha1"]])
    assert np.all(data["measured"] <= data["theory"].max())
    assert np.all(np.diff(data["measured"]) >= 0)
    fits_the_column(cnt.plot_order_count(data))


# --------------------------------------------------------------------------- verdicts

def test_spike_verdicts_follow_the_rule_on_the_records(scaling):
    from twostep.analysis.verdicts import LABELS, size

    out = ch.spike_verdicts(scaling)
    recs = _seeds(scaling, "fresh", NS[-1])
    labels = {"corr": [], "plain": []}
    for k in (2, 3):
        for tag, sig in (("corr", "signal_corrected"), ("plain", "signal")):
            ratio = np.array([r["top"][k] / r[sig][k] for r in recs])
            labels[tag].append(size(ratio, 1.0).label)
        plain = np.array([r["top"][k] / r["signal"][k] for r in recs])
        assert out[f"plain_miss_{k}"] == pytest.approx(plain.mean() - 1)
    for tag in ("corr", "plain"):   # the worst over the orders
        assert out[f"verdict_spikes_{tag}"] == max(labels[tag], key=LABELS.index)
    # at every width, the same rule
    widths = ch.spike_width_numbers(scaling)    # the test's widths are not the table's
    assert set(widths.values()) == {"—"} and len(widths) == 2 * len(VERDICT_WIDTHS)
    assert ch.spike_verdicts(scaling, N=NS[0])["verdict_spikes_corr"] in VERDICT_SYMBOLS


def test_nstar_range(scaling):
    r = ch.nstar_range(scaling, 2, 2)
    assert r["growth"] == pytest.approx(2 ** 0.05) and r["e"] == pytest.approx(0.05)
    assert r["lo"] <= r["hi"] and r["decades"] == pytest.approx(math.log10(r["hi"] / r["lo"]))
    # a larger margin needs a stronger spike: the range only widens
    wide = ch.nstar_range(scaling, 2, 2, margins=(0.01, 0.2))
    assert wide["lo"] <= r["lo"] and wide["hi"] >= r["hi"]
    # the constants of each seed's own fit, at the theory's exponent
    fresh = [x for x in scaling.summary.records if x["batch"] == "fresh"]
    C = [math.exp(np.mean([math.log(x["settings_spikes_corrected"][2][2]) - 0.05 * math.log(x["N"])
                           for x in fresh if x["seed"] == s])) for s in SEEDS]
    assert r["lo"] == pytest.approx(width_to_reach(outlier_strength(1.0, 0.02),
                                                   max(C), 0.05))


def test_order_count_verdict():
    from twostep.analysis.verdicts import share

    data = cnt.order_count_data(L=5, alpha2=0.3, Ns=(40, 80), seeds=3, alpha1=np.linspace(0, 0.45, 10))
    out = cnt.order_count_verdict(data)
    assert data["measured_seeds"].shape == (3, 10)
    # one alpha1 inside each interval of constant Lambda (boundaries 0.2, 0.35, 0.4, 0.425)
    cols = [int(np.argmin(np.abs(data["alpha1"] - float(x)))) for x in out["c6_points"].split(", ")]
    assert len(set(data["theory"][cols])) == len(cols) == 5
    per_seed = np.all(data["measured_seeds"][:, cols] == data["theory"][cols], axis=1)
    assert (out["c6_hits"], out["c6_pairs"]) == (int(per_seed.sum()), 3)    # seeds are the draws
    assert out["verdict_c6"] == share(list(per_seed)).label

def test_spike_experiment_checks_margin_and_takes_numpy_dtypes():
    with pytest.raises(ValueError, match="margin must be in"):
        ex.spike_experiment(ts.rng_for(0), N=12, n_top=3, margin=-1)
    with pytest.raises(ValueError, match="dtype must be one of"):
        ex.spike_experiment(ts.rng_for(0), N=12, n_top=3, dtype="foo")
    a = ex.spike_experiment(ts.rng_for(0), N=12, n_top=3, dtype=np.float32)
    b = ex.spike_experiment(ts.rng_for(0), N=12, n_top=3, dtype="float32")
    np.testing.assert_array_equal(a["top"], b["top"])
