"""The functions of the appendix *At scale* (``twostep.pages.at_scale``) on small synthetic
results documents: shapes, the numbers they give, and bad input named in the error."""

from __future__ import annotations

import copy
import math

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from twostep.analysis.plane import extrapolated_width
from twostep.analysis.theory import n_spikes
from twostep.analysis.verdicts import mean_sem
from twostep.pages import at_scale as ch, report, spikes as sp

ALPHAS = (0.05, 0.14, 0.23, 0.32, 0.41)
GRID = [[a1, a2] for a1 in ALPHAS for a2 in ALPHAS]
NS = (100, 200, 400)
L = 4


def _spike_doc(seeds=2):
    rng = np.random.default_rng(0)
    records = []
    for N in NS:
        for seed in range(seeds):
            for batch in ("fresh", "reused"):
                scale = np.array([0.2 * N ** 0.25 * (0.2 * N ** 0.4) ** k for k in range(L)])
                signal = scale * N ** (-0.5 * np.arange(L)) * (1 + 0.05 * rng.random(L))
                records.append(dict(
                    N=N, batch=batch, seed=seed, wall_s=1.0 + seed, scale=scale, signal=signal,
                    top=1.1 * signal, residual=signal * 0.3 * N ** -0.5,
                    left=1 - 0.1 * rng.random(L) / N ** 0.5, right=1 - 0.1 * rng.random(L) / N ** 0.5,
                    beta=np.array([0.7, 0.02, 0.5, 0.02]),
                    grid_count=rng.integers(0, 4, size=len(GRID))))
    return {"experiment": "spike", "params": {"c1": 0.2, "alpha1": 0.4, "c2": 0.2, "alpha2": 0.25,
                                              "activation": "poly4", "target": "he1", "grid": GRID,
                                              "dtype": "float32"},
            "records": records, "command": "python tools/at_scale.py --backend numpy",
            "backend": "numpy", "environment": {"device": "cpu", "numpy": "2.x"},
            "host": {"cpu_count": 2, "OPENBLAS_NUM_THREADS": "2"}, "dtype": "float32",
            "created": "2026-12-01T10:00:00+00:00", "elapsed": 120.0, "version": "0.1.0",
            "seeds_per_width": {str(N): list(range(seeds)) for N in NS}}


def _reuse_doc(seeds=3):
    rng, rng_proj = np.random.default_rng(1), np.random.default_rng(2)
    records = []
    for N in NS:
        for seed in range(seeds):
            for batch, level in (("reused", 0.2), ("fresh", 0.05)):
                records.append(dict(
                    N=N, batch=batch, seed=seed, wall_s=0.5,
                    term_overlap=np.array([level + 0.01 * rng.standard_normal()]),
                    signal_reuse=np.array([0.3]), term_memorisation=0.5,
                    term_input_overlap=np.array([2 / np.sqrt(N)]),
                    projected_overlap=np.array([level + 0.05 + 0.01 * rng_proj.standard_normal()]),
                    projected_random_sign=np.array([0.05]),
                    projected_memorised_null=np.array([3 / np.sqrt(N)]),
                    projected_without_memorised=np.array([level]),
                    projected_participation=N / 30, projected_memorisation=0.3))
    return {"experiment": "reuse", "params": {"c1": 0.5, "alpha1": 0.4, "c2": 0.5, "alpha2": 0.25,
                                              "activation": "poly4", "target": "odd", "term": 2,
                                              "top": 4, "dtype": "float32"},
            "records": records, "command": "python tools/at_scale.py --backend numpy",
            "backend": "numpy", "environment": {"device": "cpu"}, "elapsed": 60.0}


@pytest.fixture(scope="module")
def data():
    return ch.at_scale_data(_spike_doc(), _reuse_doc())


def _text(table):
    """A page table (header, rows) as the chapter shows it."""
    return report.markdown_table("Caption.", "tab-x", *table).data


def test_results_path_and_folder():
    assert sp.results_path("spike").name == "spike.json"
    assert sp.results_path("reuse", "/x").as_posix() == "/x/reuse.json"
    assert sp.results_folder().parts[-2:] == ("results", "at_scale")


def test_at_scale_data_summarises_the_documents():
    d = ch.at_scale_data(_spike_doc(), _reuse_doc())
    assert d.runs["spike"].axis() == list(NS) and d.L == L and len(d.grid) == 25
    assert d.runs["reuse"].axis() == list(NS) and "reuse_he2" not in d.runs
    assert len(d.runs["spike"].runs(batch="fresh", N=200)) == 2
    assert list(d.lam) == [n_spikes(a1, a2, L) for a1, a2 in d.grid]
    assert np.allclose(d.predicted, [0.25 - k * 0.1 for k in range(L)])


def test_provenance_says_how_a_file_was_made_in_the_command_lines_form(data):
    p = ch.provenance(data.docs["spike"], data.runs["spike"].axis())
    assert (p["backend"], p["device"], p["dtype"], p["date"]) == ("numpy", "cpu", "float32",
                                                                  "2026-12-01")
    assert p["minutes"] == 2.0 and p["cores"] == 2 and p["nice"] == "?"
    assert p["status"] == "ran to completion"
    # the flags after the recorded program, for "python -m twostep at-scale --..."
    assert p["commands"] == ["backend numpy"]
    stopped = _spike_doc()
    stopped.update(complete=False, widths_planned=[100, 200, 400, 800],
                   commands=["python tools/at_scale.py --only spike --widths 800"])
    p = ch.provenance(stopped, list(NS))
    assert p["status"] == "was stopped after N = 400 (planned: N = 100, 200, 400, 800)"
    assert p["commands"] == ["only spike --widths 800"]


def test_paired_seeds_are_the_seeds_both_batches_ran():
    one = _spike_doc()
    one["records"] = [r for r in one["records"]
                      if not (r["N"] == 400 and r["seed"] == 1 and r["batch"] == "fresh")]
    d = ch.at_scale_data(one, _reuse_doc())
    assert ch.paired_seeds(d, "spike", 400) == [0] and ch.paired_seeds(d, "spike", 200) == [0, 1]
    assert ch.paired_seeds(d, "reuse", 100) == [0, 1, 2]


def test_beta_figure_keeps_every_mean_on_its_log_axis(data, fits_the_column):
    lim = ch.beta_limits(data)
    assert lim["fresh"].shape == (L,) and math.isclose(lim["fresh"][0], 1 / math.sqrt(2))
    doc = _spike_doc()
    for r in doc["records"]:          # a series far below the old fixed limit 3e-3
        r["beta"] = np.array([0.7, 1e-3, 0.5, 0.02])
    d = ch.at_scale_data(doc, _reuse_doc())
    fig = ch.plot_beta(d, lim)
    rows = fig.twostep_data
    assert len(rows) == 2 * L * len(NS)
    low = fig.axes[0].get_ylim()[0]
    assert all(r["mean"] > low for r in rows)
    s = d.runs["spike"]
    row = next(r for r in rows if r["batch"] == "reused" and r["k"] == 2 and r["N"] == 200)
    assert row["mean"] == pytest.approx(s.at("beta", 2, batch="reused", N=200))
    fits_the_column(fig)


def test_counts_at_the_ceiling_are_censored_not_drawn_as_data(data, fits_the_column):
    assert data.grid[7] == (0.14, 0.23) and ch.grid_counts(data, "fresh", 400).shape == (2, 25)
    assert int((data.lam == 0).sum()) == 15 and int((data.lam >= 1).sum()) == 10
    doc = _spike_doc()
    lam = np.array([n_spikes(a1, a2, L) for a1, a2 in GRID])
    for r in doc["records"]:           # the reused batch saturates at Lambda = 3
        if r["batch"] == "reused":
            r["grid_count"] = np.where(lam == 3, ch.CEILING, 1)
    d = ch.at_scale_data(doc, _reuse_doc())
    means = ch.count_means(d, "reused", 3)
    assert [m[0] for m in means] == list(NS) and all(m[3] for m in means)
    assert not any(m[3] for m in ch.count_means(d, "fresh", 3))
    counts = ch.grid_counts(d, "fresh", 200)[:, d.lam == 1]
    N, mean, sem, censored = ch.count_means(d, "fresh", 1)[1]
    assert mean == pytest.approx(counts.mean()) and sem == pytest.approx(
        mean_sem(counts.mean(axis=1))[1])
    fig = ch.plot_counts(d)
    rows = fig.twostep_data
    cut = [r for r in rows if r["censored"]]
    assert cut and all(r["batch"] == "reused" and r["Lambda"] == 3 for r in cut)
    # no ordinary (error-bar) series passes through a censored point
    reused = fig.axes[1]
    for line in reused.get_lines():
        if line.get_marker() not in ("^", "None", None, ""):
            xy = set(zip(np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)))
            assert not any((float(r["N"]), float(r["mean"])) in xy for r in cut)
    fits_the_column(fig)


def _count_doc(seeds=2):
    """A count document whose spike-sum cores are orthonormal (identity ``core_left``,
    ``core_right``), so that s_{j+1}(Sigma) is the (j+1)-th largest |theta_j f_j| in closed form."""
    rng = np.random.default_rng(3)
    records = [dict(N=N, batch=batch, seed=seed, core_left=np.eye(L + 1), core_right=np.eye(L + 1),
                    core_free=np.array([4.0, 2.0, 1.0, 0.5, 0.25]) * (1 + 0.05 * rng.random(L + 1)))
               for N in NS for seed in range(seeds) for batch in ("fresh", "reused")]
    return {"experiment": "count", "params": {"c": 0.2, "activation": "poly4"}, "records": records}


def test_extrapolation():
    doc = _count_doc()
    rows = ch.extrapolation(doc, chapter_Ns=(100, 200))
    assert [(r["a1"], r["a2"], r["k"]) for r in rows] == [
        (0.3, 0.3, 1), (0.4, 0.25, 1), (0.4, 0.25, 2), (0.45, 0.3, 1), (0.45, 0.3, 2), (0.45, 0.3, 3)]
    r = rows[2]                                            # (0.4, 0.25), k = 2
    assert math.isclose(r["e"], 0.05) and math.isclose(r["theta_star"], 1.3701562, rel_tol=1e-6)
    # the strength: the (k+1)-th largest of |theta_j f_j|, f = (eta1, eta2, eta2 eta1, ...)
    fresh = [x for x in doc["records"] if x["batch"] == "fresh"]
    N = np.array([x["N"] for x in fresh], float)
    e1, e2 = 0.2 * N ** 0.4, 0.2 * N ** 0.25
    f = np.stack([e1, e2, e2 * e1, e2 * e1 ** 2, e2 * e1 ** 3], axis=1)
    x = -np.sort(-np.abs(np.array([q["core_free"] for q in fresh]) * f), axis=1)[:, 2]
    expected = extrapolated_width(N, x, r["e"], r["theta_star"])
    assert all(math.isclose(r[key], expected[key], rel_tol=1e-9) for key in expected)
    assert math.isclose(r["strength_max"], x[N == 400].mean(), rel_tol=1e-12)
    assert r["N_max"] == 400 and r["N_chapter"] == 200 and np.isfinite(r["n_star_chapter"])
    assert math.isclose(r["n_star_chapter"], extrapolated_width(N[N <= 200], x[N <= 200], r["e"],
                                                                r["theta_star"])["n_star"])
    assert r["N_max"] == 400 and r["N_chapter"] == 200 and np.isfinite(r["n_star_chapter"])


def test_files_read_as_the_reuse_chapters_paired_runs():
    from twostep.analysis.population import population_limits
    from twostep.pages import paired as reuse_ch

    control = copy.deepcopy(_reuse_doc())
    control["experiment"] = "reuse_he2"
    control["params"]["target"] = "he2"
    d = ch.at_scale_data(_spike_doc(), _reuse_doc(), control)
    paired = ch.paired_from_files(d)
    assert paired.Ns("reuse") == list(NS) and paired.Ns("reuse_he2") == list(NS)
    assert paired.configs["reuse_he2"].target == "he2" and paired.n_spikes == (2,)
    by = {(r["N"], r["batch"], r["seed"]): r for r in d.docs["reuse"]["records"]}
    diff = paired.values("reuse", 200, "projected_overlap", "diff")
    assert diff[1] == pytest.approx(by[200, "reused", 1]["projected_overlap"][0]
                                    - by[200, "fresh", 1]["projected_overlap"][0])
    limits = population_limits(["odd", "he2"], 1.0, [2], "poly4")
    assert isinstance(reuse_ch.plot_term_evidence(paired, limits, "reuse", "reuse_he2"), Figure)
    # the memorised null was made to fall like 1/sqrt(N)
    null = next(row for row in ch.trends(d, paired) if row["key"] == "null")
    assert null["slope"] < 0
    # without the control file, only the main configuration
    assert list(ch.paired_from_files(ch.at_scale_data(_spike_doc(), _reuse_doc())).configs) == ["reuse"]


def test_paired_runs_pair_by_seed():
    doc = _reuse_doc()
    doc["records"] = [r for r in doc["records"] if not (r["batch"] == "fresh" and r["seed"] == 2)]
    paired = ch.paired_from_files(ch.at_scale_data(_spike_doc(), doc))
    assert sorted(r["seed"] for r in paired.records if r["N"] == 400) == [0, 1]
    by = {(r["batch"], r["seed"]): r for r in doc["records"] if r["N"] == 400}
    np.testing.assert_allclose(paired.values("reuse", 400, "term_overlap", "diff"), [
        by["reused", s]["term_overlap"][0] - by["fresh", s]["term_overlap"][0] for s in (0, 1)])


def test_trends_fit_every_seed(data):
    rows = ch.trends(data, ch.paired_from_files(data))
    by = {r["quantity"]: r for r in rows}
    # the synthetic remainder is 0.3 N^(-1/2) of the spike: an exponent of -1/2, fitted exactly
    rem = by[r"$\|T_1-S_1\|/\|S_1\|$, fresh"]
    assert rem["slope"] == pytest.approx(-0.5, abs=1e-6) and rem["se"] < 1e-6
    assert rem["points"] == 2 * len(NS) and (rem["N_lo"], rem["N_hi"]) == (NS[0], NS[-1])
    null = by["memorised inputs alone"]
    x = np.repeat(np.log10(NS), 3)
    slope = np.polyfit(x, 3 / np.sqrt(10 ** x), 1)[0]
    assert null["slope"] == pytest.approx(slope, rel=1e-9)
    assert (rem["N_prev"], rem["prev"]) == (200, pytest.approx(0.3 / np.sqrt(200)))
    raw = next(r for r in rows if r["key"] == "raw")
    assert raw["points"] == 9 and raw["lo"] == pytest.approx(0.15, abs=0.05)
