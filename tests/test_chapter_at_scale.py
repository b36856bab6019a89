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
from twostep.analysis.verdicts import mean_sem
from twostep.pages import at_scale as ch, report

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


def test_results_path_and_folder():
    assert ch.results_path("spike").name == "spike.json"
    assert ch.results_path("reuse", "/x").as_posix() == "/x/reuse.json"
    assert ch.results_folder().parts[-2:] == ("results", "at_scale")
    with pytest.raises(ValueError, match="name"):
        ch.results_path("spikes")


def test_at_scale_data_checks_the_documents():
    d = ch.at_scale_data(_spike_doc(), _reuse_doc())
    assert d.Ns("spike") == list(NS) and d.L == L and len(d.grid) == 25
    assert len(d.records("spike", "fresh", 200)) == 2
    with pytest.raises(TypeError, match="spike"):
        ch.at_scale_data([], _reuse_doc())
    with pytest.raises(ValueError, match="reuse"):
        ch.at_scale_data(_spike_doc(), _spike_doc())
    bad = _spike_doc()
    del bad["records"][3]["left"]
    with pytest.raises(ValueError, match="record 3 lacks"):
        ch.at_scale_data(bad, _reuse_doc())
    bad = _spike_doc()
    bad["records"][0]["grid_count"] = np.zeros(3)
    with pytest.raises(ValueError, match="grid counts"):
        ch.at_scale_data(bad, _reuse_doc())
    bad = _reuse_doc()
    bad["records"] = []
    with pytest.raises(ValueError, match="no records"):
        ch.at_scale_data(_spike_doc(), bad)
    with pytest.raises(TypeError, match="data"):
        ch.terms_table("not data")


def test_width_stats():
    recs = [dict(N=1, x=1.0), dict(N=1, x=3.0), dict(N=2, x=5.0)]
    st = ch.width_stats(recs, lambda r: r["x"])
    assert st[1][0] == 2.0 and math.isclose(st[1][1], math.sqrt(2)) and st[1][2] == 2
    assert st[2][1] == 0.0 and st[2][2] == 1
    with pytest.raises(TypeError, match="value"):
        ch.width_stats(recs, "x")


def test_provenance_and_wall(data):
    p = ch.provenance(data)
    assert p["spike_backend"] == "numpy" and p["spike_dtype"] == "float32"
    assert p["spike_device"] == "cpu" and p["spike_date"] == _spike_doc()["created"][:10]
    assert p["spike_minutes"] == 2.0 and p["spike_cores"] == 2 and p["spike_N_max"] == 400
    assert p["spike_nice"] == "?"   # the test document records no nice level
    assert p["spike_seeds"] == "2 at 100, 2 at 200, 2 at 400"
    assert p["spike_status"] == "ran to completion"
    stopped = _spike_doc()
    stopped.update(complete=False, widths_planned=[100, 200, 400, 800])
    assert ch.provenance(ch.at_scale_data(stopped, _reuse_doc()))["spike_status"] == \
        "was stopped after N = 400 (planned: N = 100, 200, 400, 800)"
    assert p["reuse_seeds"] == "3 at 100, 3 at 200, 3 at 400"   # from the records
    assert p["label"] == ("computed on a 2-core CPU in float32; no GPU run has been made (one "
                          "would reach N = 32000–45000 with the same command)")
    assert ch.provenance_numbers(data) == {k: p[k] for k in (
        "spike_widths", "spike_seeds", "reuse_widths", "reuse_seeds", "label")}
    gpu = _spike_doc()
    gpu.update(backend="cupy", environment={"device": "NVIDIA H200"})
    assert ch.where_label(ch.at_scale_data(gpu, _reuse_doc())) == "computed on NVIDIA H200 (cupy) in float32"
    cmd = ch.commands_text(data).splitlines()
    day = _spike_doc()["created"][:10]
    assert cmd[0].startswith(f"# results/at_scale/spike.json (numpy backend, device cpu, {day})")
    assert cmd[1] == "python tools/at_scale.py --backend numpy" and len(cmd) == 4
    text = ch.wall_table(data).data
    assert ":name: tab-at-scale-wall" in text and text.count("\n| spike") == 3
    assert "| spike | 400 | 4 | 1.5 | 0.6 | – |" in text     # no peak memory recorded
    mem = _spike_doc()
    for r in mem["records"]:
        r["peak_rss_gb"] = r["N"] / 100 + r["seed"]      # the width's largest is shown
    assert "| spike | 400 | 4 | 1.5 | 0.6 | 5.0 |" in ch.wall_table(
        ch.at_scale_data(mem, _reuse_doc())).data


def test_terms_table_numbers_and_figures(data):
    text = ch.terms_table(data).data
    assert ":name: tab-at-scale-terms" in text and text.count("\n| fresh") == len(NS)
    n = ch.terms_numbers(data)
    assert n["N_terms"] == 400 and 0.9 < n["fresh_left_min"] <= 1
    reused = [r for r in data.records("spike", "reused") if r["N"] == 400]
    assert math.isclose(n[f"reused_rel_{L - 1}"], float(np.mean(
        [r["residual"][L - 1] / r["signal"][L - 1] for r in reused])), rel_tol=1e-9)
    assert set(n) == {"N_terms", "fresh_left_min", "fresh_right_min", f"reused_rel_{L - 1}"}
    with pytest.raises(ValueError, match="orders"):
        ch.terms_table(data, orders=(1, 4))
    # The caption's spread: the largest standard error over seeds of an entry, from the records
    # (remainders that differ from seed to seed: the synthetic ones are all 0.3 / sqrt(N)).
    doc = _spike_doc(seeds=3)
    rng = np.random.default_rng(5)
    for r in doc["records"]:
        r["residual"] = r["residual"] * (1 + 0.5 * rng.random(L))
    spread = ch.at_scale_data(doc, _reuse_doc())
    text = ch.terms_table(spread).data
    sp = ch._terms_spread(spread, (1, 2, 3))
    assert sp["seeds"] == {N: 3 for N in NS}
    assert "means over 3 seeds per width:" in text and "one draw" not in text
    for batch in ch.BATCHES:
        recs = spread.records("spike", batch)
        rem = max(mean_sem([r["residual"][k] / r["signal"][k] for r in recs if r["N"] == N])[1]
                  for N in NS for k in (1, 2, 3))
        cos = max(mean_sem([r[side][k] for r in recs if r["N"] == N])[1]
                  for N in NS for side in ("left", "right")
                  for k in [min((1, 2, 3), key=lambda k: np.mean(
                      [r[side][k] for r in recs if r["N"] == N]))])
        assert sp[f"{batch}_remainder"] == pytest.approx(rem, rel=1e-9, abs=0) and rem > 1e-6
        assert sp[f"{batch}_cosine"] == pytest.approx(cos, rel=1e-9, abs=0) and cos > 1e-6
    assert (f"Largest standard error, fresh and reused: {report.sig(sp['fresh_remainder'])} and "
            f"{report.sig(sp['reused_remainder'])} for a remainder" in text)
    assert report.sig(0.0034) == "0.003" and report.sig(0.0123) == "0.012" and report.sig(0) == "0"
    assert report.sig(4.46) == "4" and report.sig(0.14) == "0.14"
    # One seed at every width: one draw, no spread to give.
    one = ch.at_scale_data(_spike_doc(seeds=1), _reuse_doc())
    text_one = ch.terms_table(one).data
    assert "one draw per width" in text_one and "standard error" not in text_one
    assert (ch._seeds_text({100: 3, 200: 1})
            == "means over 1 to 3 seeds per width (one draw at $N = 200$)")
    assert isinstance(ch.plot_terms(data), Figure)
    lim = ch.beta_limits(data)
    assert lim["fresh"].shape == (L,) and math.isclose(lim["fresh"][0], 1 / math.sqrt(2))
    assert isinstance(ch.plot_beta(data, lim), Figure)
    beta = ch.beta_numbers(data, lim)
    assert set(beta) == {"fresh_beta_0", "fresh_beta_2", "fresh_beta_lim_0", "fresh_beta_lim_2"}
    assert beta["fresh_beta_lim_0"] == lim["fresh"][0]
    with pytest.raises(TypeError, match="limits"):
        ch.plot_beta(data, [0.1])
    with pytest.raises(ValueError, match="psi"):
        ch.beta_limits(data, psi=0)


def test_counts(data):
    c = ch.count_data(data)
    assert c.lam.shape == (25,) and c.counts["fresh"][400].shape == (2, 25)
    assert int((c.lam == 0).sum()) == 15 and int((c.lam >= 1).sum()) == 10
    assert list(c.target) == list(1 + c.lam)
    hits, total = c.hits("fresh", 400, 0, 0)
    assert total == 15 and 0 <= hits <= 15
    exact, runs = c.exact("reused", 100, 1)
    assert runs == 2 * 10 and 0 <= exact <= runs
    n = ch.counts_numbers(c)
    assert n["N_count"] == 400 and n["fresh_total1"] == 10
    table = ch.counts_table(c).data
    assert ":name: tab-at-scale-counts" in table
    # The caption's spread: the largest standard error over seeds of a mean count (per seed,
    # the mean over the points of one Lambda), from the records.
    sp = ch._counts_spread(c)
    for batch in ch.BATCHES:
        want = max(mean_sem([np.mean(np.asarray(r["grid_count"])[c.lam == lam])
                             for r in data.records("spike", batch, N)])[1]
                   for N in NS for lam in set(c.lam.tolist()))
        assert sp[batch] == pytest.approx(want, rel=1e-9, abs=0) and want > 0.01
    assert (f"Means over 2 seeds per width; the largest standard error of a mean count is "
            f"{report.sig(sp['fresh'])} (fresh) and {report.sig(sp['reused'])} (reused)." in table)
    assert isinstance(ch.plot_counts(c), Figure)
    for f in (ch.plot_counts, ch.counts_table, ch.counts_numbers):
        with pytest.raises(TypeError, match="counts"):
            f(data)


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
    text = ch.extrapolation_table(rows).data
    assert ":name: tab-at-scale-extrapolation" in text and text.count("\n| (") == 6
    assert "to 200" in text and "to 400" in text
    n = ch.extrapolation_numbers(rows)
    smallest = min(row["n_star"] for row in rows)
    first = next(row for row in rows if row["n_star"] == smallest)
    tag = f"{round(100 * first['a1'])}_{round(100 * first['a2'])}_{first['k']}"
    assert {k for k in n if k.startswith("nstar_") and k[-1].isdigit()} == {
        f"nstar_{tag}", f"nstar_ch_{tag}"}   # the first spike only
    assert n["theta_star"] == r["theta_star"] and n[f"nstar_{tag}"] == ch._sci(smallest)
    assert n["nstar_second_gpu"] in ("beyond", "within") and n["nstar_second"] != n[f"nstar_{tag}"]
    assert n["nstar_min_reach"] == ("lies beyond" if smallest <= 400 else "falls short of")
    assert n["nstar_orders"] == 6 and n["nstar_steeper"] == sum(
        row["e_fit"] - row["e"] > 2 * row["e_fit_se"] for row in rows)
    with pytest.raises(ValueError, match="settings"):
        ch.extrapolation(doc, settings=[(0.6, 0.2)])
    with pytest.raises(ValueError, match="count"):
        ch.extrapolation(_spike_doc())
    with pytest.raises(TypeError, match="rows"):
        ch.extrapolation_table({"n_star": 1})
    with pytest.raises(TypeError, match="rows"):
        ch.extrapolation_numbers([])


def test_reuse(data):
    r = ch.reuse_data(data)
    assert r.Ns == list(NS) and r.seeds[100] == [0, 1, 2]
    assert r.diff[200].shape == (3,)
    np.testing.assert_allclose(r.diff[200], r.overlap["reused"][200] - r.overlap["fresh"][200])
    # Quadrature, not draws: the reuse chapter's population value (0.3093) and the fresh mean
    # at n = 400 (0.045).
    assert r.limit == pytest.approx(0.3093, abs=1e-4)
    assert r.expected["fresh"][400] < 0.1
    st = r.stats("diff")
    # The synthetic document sets reused - fresh to 0.15 plus noise of sd 0.01*sqrt(2) per seed.
    assert st[100][2] == 3 and st[100][0] == pytest.approx(0.15, abs=0.05)
    slope, se = r.trend()
    # No trend was put in: the slope is noise, its se about 0.01 per decade.
    assert abs(slope) < 5 * se + 0.01 and se > 0
    assert ch.reuse_numbers(r) == {"reuse_limit": r.limit}
    with pytest.raises(ValueError, match="key"):
        r.stats("overlaps", "fresh")
    with pytest.raises(ValueError, match="batch"):
        r.stats("overlap", "both")


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
    by = {(r["N"], r["batch"], r["seed"]): r for r in d.reuse["records"]}
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
    with pytest.raises(ValueError, match="no 'reuse_he2' results file"):
        ch.at_scale_data(_spike_doc(), _reuse_doc()).doc("reuse_he2")


def test_reuse_data_pairs_by_seed_and_rejects_unpaired():
    doc = _reuse_doc()
    doc["records"] = [r for r in doc["records"] if not (r["batch"] == "fresh" and r["seed"] == 2)]
    r = ch.reuse_data(ch.at_scale_data(_spike_doc(), doc))
    assert r.seeds[400] == [0, 1]
    only = copy.deepcopy(_reuse_doc())
    only["records"] = [r for r in only["records"] if r["batch"] == "reused" or r["N"] != 200]
    with pytest.raises(ValueError, match="N = 200"):
        ch.reuse_data(ch.at_scale_data(_spike_doc(), only))
    other = _reuse_doc()
    other["params"]["term"] = 3
    with pytest.raises(ValueError, match="term"):
        ch.reuse_data(ch.at_scale_data(_spike_doc(), other))


def test_verdict_numbers(data):
    counts, reuse = ch.count_data(data), ch.reuse_data(data)
    v = ch.verdict_numbers(data, counts, reuse)
    from twostep.analysis.verdicts import count_verdict

    assert v["beyond_text"].startswith("stop at N = 400, the chapters' own largest width")
    hits, pairs = counts.exact("fresh", counts.Ns[-1], 1)
    assert v["count_hits_text"] == f"{hits} of {pairs}"
    seeds = len(data.records("spike", "fresh", counts.Ns[-1]))
    assert v["count_verdict"] == count_verdict(hits, pairs, seeds=seeds).label
    # the slope's 95 % interval, with Student t at points - 2 degrees of freedom
    from scipy import stats

    slope, se = reuse.trend("diff")
    points = sum(len(x) for x in reuse.diff.values())
    inside = abs(slope) <= stats.t.ppf(0.975, points - 2) * se
    assert v["trend_text"] == ("a slope whose 95 % interval contains zero" if inside else
                               f"a slope whose 95 % interval lies {'above' if slope > 0 else 'below'} zero")
    with pytest.raises(TypeError, match="counts"):
        ch.verdict_numbers(data, reuse, reuse)
    with pytest.raises(TypeError, match="reuse"):
        ch.verdict_numbers(data, counts, counts)


def test_count_rises(data):
    counts = ch.count_data(data)
    out = ch.count_rises(counts)
    lo, hi = counts.Ns[-2], counts.Ns[-1]
    a, b = counts.counts["fresh"][lo], counts.counts["fresh"][hi]
    k = min(len(a), len(b))
    rising = [i for i in range(len(counts.grid))
              if counts.lam[i] >= 1 and np.all(b[:k, i] > a[:k, i])]
    assert out["rises_n"] == len(rising) and (out["rises_from"], out["rises_to"]) == (lo, hi)
    assert (out["rises_text"] == "none") == (not rising)
    with pytest.raises(TypeError, match="counts"):
        ch.count_rises(data)


def test_glued_names_do_not_clash(data):
    counts, reuse = ch.count_data(data), ch.reuse_data(data)
    groups = [ch.provenance_numbers(data), ch.verdict_numbers(data, counts, reuse),
              ch.terms_numbers(data), ch.beta_numbers(data, ch.beta_limits(data)),
              ch.counts_numbers(counts), ch.reuse_numbers(reuse),
              ch.extrapolation_numbers(ch.extrapolation(_count_doc()))]
    paired = ch.paired_from_files(data)
    groups += [ch.widest_projection(paired), ch.top_vector_split(paired),
               ch.trend_numbers(ch.trends(data, paired))]
    names = [k for g in groups for k in g]
    assert len(names) == len(set(names)), sorted({k for k in names if names.count(k) > 1})


def test_provenance_and_seeds_tables(data):
    prov = ch.provenance_table(data).data
    assert ":name: tab-at-scale-provenance" in prov and "|  | spike.json | reuse.json |" in prov
    assert "| backend, device, dtype | numpy, cpu, float32 |" in prov
    assert "| wall time (min) | 2 | 1 |" in prov
    one = _spike_doc()
    one["records"] = [r for r in one["records"] if not (r["N"] == 400 and r["seed"] == 1)]
    seeds = ch.seeds_table(ch.at_scale_data(one, _reuse_doc())).data
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
    # The page states raw_slope (from these rows) and trend_text (from Reuse.trend) in one
    # sentence: the paired runs and the reuse data must give the same fit.
    assert (numbers["raw_slope"], numbers["raw_slope_se"]) == pytest.approx(
        ch.reuse_data(data).trend("diff"), rel=1e-12)
    assert (rem["N_prev"], rem["prev"]) == (200, pytest.approx(0.3 / np.sqrt(200)))
    table = ch.trends_table(rows).data
    assert table.count("\n| ") == 1 + len(rows) and "−0.500 ± 0.000" in table
    assert "| 100, 200, 400 | 0.030, 0.021 → 0.015 |" in table
    with pytest.raises(TypeError, match="rows must be the non-empty list returned by trends"):
        ch.trends_table([])


def test_widest_step_says_what_the_largest_width_adds(data):
    rows = ch.trends(data, ch.paired_from_files(data))
    text = ch.widest_step_text(rows)
    # the synthetic remainders fall with N at every order, in both batches
    assert text.startswith("From N = 200 to N = 400, the fresh-batch remainders fall at 3 of 3 "
                           "orders; the reused-batch remainders fall at 3 of 3 orders;")
    null = next(r for r in rows if r["key"] == "null")
    assert f"the memorised inputs' own span goes from {null['prev']:.3f} to {null['hi']:.3f}." in text
    with pytest.raises(TypeError, match="rows must be the non-empty list returned by trends"):
        ch.widest_step_text([])


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
    with pytest.raises(TypeError, match="paired must be a PairedData"):
        ch.top_vector_split({"reuse": []})
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match=r"threshold must be in \(0.0, 1.0\]"):
            ch.top_vector_split(paired, threshold=bad)
