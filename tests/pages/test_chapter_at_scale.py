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


def test_provenance_and_wall(data):
    p = ch.provenance_numbers(data)
    assert p["spike_seeds"] == "2 at 100, 2 at 200, 2 at 400" and p["spike_widths"] == "100, 200, 400"
    assert p["reuse_seeds"] == "3 at 100, 3 at 200, 3 at 400"   # from the records
    assert p["label"] == ("computed on a 2-core CPU in float32; no GPU run has been made (one "
                          "would reach N = 32000–45000 with the same command)")
    assert set(p) == {"spike_widths", "spike_seeds", "reuse_widths", "reuse_seeds", "label"}
    table = _text(ch.provenance_table(data))
    assert "| day (UTC) | 2026-12-01 |" in table and "| the run | ran to completion |" in table
    assert "| cores / BLAS threads / nice | 2 / 2 / ? |" in table   # no nice level recorded
    stopped = _spike_doc()
    stopped.update(complete=False, widths_planned=[100, 200, 400, 800])
    assert ("| the run | was stopped after N = 400 (planned: N = 100, 200, 400, 800) |" in
            _text(ch.provenance_table(ch.at_scale_data(stopped, _reuse_doc()))))
    gpu = _spike_doc()
    gpu.update(backend="cupy", environment={"device": "NVIDIA H200"})
    assert ch.where_label(ch.at_scale_data(gpu, _reuse_doc())) == "computed on NVIDIA H200 (cupy) in float32"
    cmd = ch.commands_text(data).splitlines()
    day = _spike_doc()["created"][:10]
    assert cmd[0].startswith(f"# results/at_scale/spike.json (numpy backend, device cpu, {day})")
    assert cmd[1] == "python tools/at_scale.py --backend numpy" and len(cmd) == 4
    text = _text(ch.wall_table(data))
    assert text.count("\n| spike") == 3
    assert "| spike | 400 | 4 | 1.5 | 0.6 | – |" in text     # no peak memory recorded
    mem = _spike_doc()
    for r in mem["records"]:
        r["peak_rss_gb"] = r["N"] / 100 + r["seed"]      # the width's largest is shown
    assert "| spike | 400 | 4 | 1.5 | 0.6 | 5.0 |" in _text(ch.wall_table(
        ch.at_scale_data(mem, _reuse_doc())))


def test_terms_table_numbers_and_figures(data):
    text = _text(ch.terms_table(data))
    assert text.count("\n| fresh") == len(NS)
    n = ch.terms_numbers(data)
    assert n["N_terms"] == 400 and 0.9 < n["fresh_left_min"] <= 1
    reused = data.runs["spike"].runs(batch="reused", N=400)
    assert math.isclose(n[f"reused_rel_{L - 1}"], float(np.mean(
        [r["residual"][L - 1] / r["signal"][L - 1] for r in reused])), rel_tol=1e-9)
    assert set(n) == {"N_terms", "fresh_left_min", "fresh_right_min", f"reused_rel_{L - 1}"}
    # The caption's spread: the largest standard error over seeds of an entry, from the records
    # (remainders that differ from seed to seed: the synthetic ones are all 0.3 / sqrt(N)).
    doc = _spike_doc(seeds=3)
    rng = np.random.default_rng(5)
    for r in doc["records"]:
        r["residual"] = r["residual"] * (1 + 0.5 * rng.random(L))
    spread = ch.at_scale_data(doc, _reuse_doc())
    assert ch.seeds_text(spread) == "means over 3 seeds per width"
    found = {}
    for batch in ch.BATCH_ORDER:
        recs = doc["records"]
        recs = [r for r in recs if r["batch"] == batch]
        rem = max(mean_sem([r["residual"][k] / r["signal"][k] for r in recs if r["N"] == N])[1]
                  for N in NS for k in (1, 2, 3))
        cos = max(mean_sem([r[side][k] for r in recs if r["N"] == N])[1]
                  for N in NS for side in ("left", "right")
                  for k in [min((1, 2, 3), key=lambda k: np.mean(
                      [r[side][k] for r in recs if r["N"] == N]))])
        assert rem > 1e-6 and cos > 1e-6
        found[batch] = (rem, cos)
    assert ch.terms_spread(spread) == (
        f" Largest standard error, fresh and reused: {report.sig(found['fresh'][0])} and "
        f"{report.sig(found['reused'][0])} for a remainder, {report.sig(found['fresh'][1])} and "
        f"{report.sig(found['reused'][1])} for a cosine.")
    assert report.sig(0.0034) == "0.003" and report.sig(0.0123) == "0.012" and report.sig(0) == "0"
    assert report.sig(4.46) == "4" and report.sig(0.14) == "0.14"
    # One seed at every width: one draw, no spread to give.
    one = ch.at_scale_data(_spike_doc(seeds=1), _reuse_doc())
    assert ch.seeds_text(one) == "one draw per width" and ch.terms_spread(one) == ""
    mixed = _spike_doc(seeds=3)
    mixed["records"] = [r for r in mixed["records"] if r["N"] != 200 or r["seed"] == 0]
    assert (ch.seeds_text(ch.at_scale_data(mixed, _reuse_doc()))
            == "means over 1 to 3 seeds per width (one draw at $N = 200$)")
    assert isinstance(sp.plot_terms(data.runs["spike"], data.predicted), Figure)
    lim = ch.beta_limits(data)
    assert lim["fresh"].shape == (L,) and math.isclose(lim["fresh"][0], 1 / math.sqrt(2))
    assert isinstance(ch.plot_beta(data, lim), Figure)
    beta = ch.beta_numbers(data, lim)
    assert set(beta) == {"fresh_beta_0", "fresh_beta_2", "fresh_beta_lim_0", "fresh_beta_lim_2"}
    assert beta["fresh_beta_lim_0"] == lim["fresh"][0]


def test_counts(data):
    assert data.grid[7] == (0.14, 0.23) and ch.grid_counts(data, "fresh", 400).shape == (2, 25)
    assert int((data.lam == 0).sum()) == 15 and int((data.lam >= 1).sum()) == 10
    counts = np.array([r["grid_count"] for r in data.docs["spike"]["records"]
                       if r["batch"] == "fresh" and r["N"] == 400])
    hits, total = ch.count_hits(data, "fresh", 400, 0, 0)
    mask = data.lam == 0
    assert (hits, total) == (int(np.sum(np.rint(counts.mean(0))[mask] == 1)), 15)
    exact, runs = ch.count_hits(data, "reused", 100, 1, every_run=True)
    assert runs == 2 * 10 and 0 <= exact <= runs
    n = ch.counts_numbers(data)
    assert n["N_count"] == 400 and n["fresh_total1"] == 10
    table = _text(ch.counts_table(data))
    assert f"| fresh | 400 | {hits} / 15 |" in table
    # The caption's spread: the largest standard error over seeds of a mean count (per seed,
    # the mean over the points of one Lambda), from the records.
    want = {}
    for batch in ch.BATCH_ORDER:
        want[batch] = max(mean_sem([np.mean(np.asarray(r["grid_count"])[data.lam == lam])
                                    for r in data.docs["spike"]["records"]
                                    if r["batch"] == batch and r["N"] == N])[1]
                          for N in NS for lam in set(data.lam.tolist()))
        assert want[batch] > 0.01
    assert ch.counts_spread(data) == (
        f"Means over 2 seeds per width; the largest standard error of a mean count is "
        f"{report.sig(want['fresh'])} (fresh) and {report.sig(want['reused'])} (reused)")
    assert isinstance(ch.plot_counts(data), Figure)


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
    text = _text(ch.extrapolation_table(rows))
    assert text.count("\n| (") == 6 and "to 200" in text and "to 400" in text
    n = ch.extrapolation_numbers(rows)
    smallest = min(row["n_star"] for row in rows)
    first = next(row for row in rows if row["n_star"] == smallest)
    tag = f"{round(100 * first['a1'])}_{round(100 * first['a2'])}_{first['k']}"
    assert {k for k in n if k.startswith("nstar_") and k[-1].isdigit()} == {
        f"nstar_{tag}", f"nstar_ch_{tag}"}   # the first spike only
    assert n["theta_star"] == r["theta_star"] and n[f"nstar_{tag}"] == sp.nstar_text(smallest)
    assert n["nstar_second_gpu"] in ("beyond", "within") and n["nstar_second"] != n[f"nstar_{tag}"]
    assert n["nstar_min_reach"] == ("lies beyond" if smallest <= 400 else "falls short of")
    assert n["nstar_orders"] == 6 and n["nstar_steeper"] == sum(
        row["e_fit"] - row["e"] > 2 * row["e_fit_se"] for row in rows)


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
    table = reuse_ch.term_evidence_table(paired, limits, ["reuse"], label="tab-x").data
    assert ":name: tab-x" in table and table.count("\n| ") == 1 + len(NS)
    t = ch.trend_numbers(ch.trends(d, paired))
    # the memorised null was made to fall like 1/sqrt(N): -1/2 per unit of log10 N, times 3/sqrt(N)
    null = next(row for row in ch.trends(d, paired) if row["key"] == "null")
    assert null["slope"] < 0 and t["proj_slope_se"] > 0
    assert "null_slope" not in t   # the null's slope is the trends table's, not glued
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


def test_verdict_numbers(data):
    rows = ch.trends(data, ch.paired_from_files(data))
    v = ch.verdict_numbers(data, rows)
    from twostep.analysis.verdicts import share

    assert v["beyond_text"].startswith("stop at N = 400, the chapters' own largest width")
    counts = ch.grid_counts(data, "fresh", 400)[:, data.lam >= 1]
    hits, pairs = int(np.sum(counts == 1 + data.lam[data.lam >= 1])), counts.size
    assert v["count_hits_text"] == f"{hits} of {pairs}"
    # one outcome per draw: a run passes when every grid point it holds does
    assert v["count_verdict"] == share(list(np.all(counts == 1 + data.lam[data.lam >= 1],
                                                   axis=1))).label
    # the slope's 95 % interval of the paired difference, with Student t at points - 2
    # degrees of freedom: reused minus fresh, 0.15 plus noise, 3 seeds at 3 widths
    from scipy import stats

    raw = next(r for r in rows if r["key"] == "raw")
    assert raw["points"] == 9 and raw["lo"] == pytest.approx(0.15, abs=0.05)
    inside = abs(raw["slope"]) <= stats.t.ppf(0.975, 9 - 1) * raw["se"]
    assert v["trend_text"] == ("a slope whose 95 % interval contains zero" if inside else
                               f"a slope whose 95 % interval lies {'above' if raw['slope'] > 0 else 'below'} zero")


def test_count_rises(data):
    out = ch.count_rises(data)
    a, b = ch.grid_counts(data, "fresh", 200), ch.grid_counts(data, "fresh", 400)
    rising = [i for i in range(len(data.grid)) if data.lam[i] >= 1 and np.all(b[:, i] > a[:, i])]
    assert out["rises_n"] == len(rising) and (out["rises_from"], out["rises_to"]) == (200, 400)
    assert (out["rises_text"] == "none") == (not rising)


def test_glued_names_do_not_clash(data):
    paired = ch.paired_from_files(data)
    rows = ch.trends(data, paired)
    groups = [ch.provenance_numbers(data), ch.verdict_numbers(data, rows),
              ch.terms_numbers(data), ch.beta_numbers(data, ch.beta_limits(data)),
              ch.counts_numbers(data), ch.extrapolation_numbers(ch.extrapolation(_count_doc())),
              ch.widest_projection(paired), ch.top_vector_split(paired), ch.trend_numbers(rows),
              {"reuse_limit": 0.3}]
    names = [k for g in groups for k in g]
    assert len(names) == len(set(names)), sorted({k for k in names if names.count(k) > 1})


def test_provenance_and_seeds_tables(data):
    prov = _text(ch.provenance_table(data))
    assert "|  | spike.json | reuse.json |" in prov
    assert "| backend, device, dtype | numpy, cpu, float32 |" in prov
    assert "| wall time (min) | 2 | 1 |" in prov
    one = _spike_doc()
    one["records"] = [r for r in one["records"] if not (r["N"] == 400 and r["seed"] == 1)]
    seeds = _text(ch.seeds_table(ch.at_scale_data(one, _reuse_doc())))
    assert "| $N$ | spike.json | reuse.json |" in seeds
    # seed 1 dropped from the spike file at the largest width only
    assert "| 100 | 2 | 3 |" in seeds and "| 200 | 2 | 3 |" in seeds and "| 400 | 1 | 3 |" in seeds


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
    numbers = ch.trend_numbers(rows)
    assert numbers["rem_slope_fresh_1"] == rem["slope"] and "count_slope_se" in numbers
    assert (rem["N_prev"], rem["prev"]) == (200, pytest.approx(0.3 / np.sqrt(200)))
    table = _text(ch.trends_table(rows))
    # a standard error that rounds to 0.000: report.pm gives it a fourth decimal
    assert table.count("\n| ") == 1 + len(rows) and "−0.5000 ± 0.0000" in table
    assert "| 100, 200, 400 | 0.030, 0.021 → 0.015 |" in table


def test_widest_step_says_what_the_largest_width_adds(data):
    rows = ch.trends(data, ch.paired_from_files(data))
    text = ch.widest_step_text(rows)
    # the synthetic remainders fall with N at every order, in both batches
    assert text.startswith("From N = 200 to N = 400, the fresh-batch remainders fall at 3 of 3 "
                           "orders; the reused-batch remainders fall at 3 of 3 orders;")
    null = next(r for r in rows if r["key"] == "null")
    assert f"the memorised inputs' own span goes from {null['prev']:.3f} to {null['hi']:.3f}." in text


def test_top_vector_split_counts_the_runs_an_input_wins():
    doc = _reuse_doc()
    for r in doc["records"]:
        if r["batch"] == "reused":    # runs with seed 1 at N = 400: the spike wins
            lost = r["N"] == 400 and r["seed"] == 1
            r["term_memorisation"] = 0.2 if lost else 0.9
            r["term_overlap"] = np.array([0.3 if lost else 0.05])
    paired = ch.paired_from_files(ch.at_scale_data(_spike_doc(), doc))
    s = ch.top_vector_split(paired)
    assert (s["split_seeds"], s["split_memorised"]) == (9, 8)
    assert s["split_text"].startswith("In 1 of the 9 reused runs (0 of 3 at N = 100, 0 of 3 at "
                                      "N = 200, 1 of 3 at N = 400)")
    assert "at 0.300 on average, against 0.050 where" in s["split_text"]
    # with the threshold below every memorisation, an input wins everywhere
    every = ch.top_vector_split(paired, threshold=0.1)
    assert every["split_memorised"] == every["split_seeds"] == 9
    assert every["split_text"].startswith("In every one of the 9")
