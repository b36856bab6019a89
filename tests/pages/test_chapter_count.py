"""The page functions of the count sections of *Two steps* (twostep.pages.count), on small
draws: the map over the plane, and the count test read from a results document."""

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from twostep.analysis.sweep import rng_for
from twostep.analysis.verdicts import share, worst
from twostep.pages import count as cnt
from twostep.pages.report import VERDICT_SYMBOLS, markdown_table
from twostep.pages.spikes import terms_summary
from twostep.experiments.spikes import spike_experiment
from twostep.scale.backend import get_backend
from twostep.scale.device import count_on

SETTINGS = [[0.2, 0.2], [0.3, 0.3], [0.35, 0.44], [0.49, 0.49]]   # Lambda = 0, 1, 2, 3


@pytest.fixture(scope="module")
def plane():
    recs = []
    for batch in ("fresh", "reused"):
        for N in (60, 120, 240):
            for seed in (0, 1):
                r = spike_experiment(rng_for(seed), N=N, batch=batch, corrected=True)
                r.update(N=N, seed=seed, batch=batch)
                recs.append(r)
    scaling = SimpleNamespace(summary=terms_summary(recs), L=4, c=0.2, Ns=[60, 120, 240],
                              seeds=[0, 1])
    return cnt.plane_data(scaling, step=0.1)


@pytest.fixture(scope="module")
def counted():
    bk = get_backend("numpy")
    recs = []
    for N in (80, 160, 320):
        for batch in ("fresh", "reused"):
            for seed in (0, 1, 2):
                r = count_on(bk, N=N, batch=batch, settings=SETTINGS, extra_kappas=[0.5],
                             extra_max_N=160, seed=seed)
                r.update(N=N, batch=batch, seed=seed)
                recs.append(r)
    doc = {"params": {"activation": "poly4", "settings": SETTINGS, "kappas": [0.2],
                      "extra_kappas": [0.5], "extra_max_N": 160}, "records": recs}
    return cnt.count_data(doc)


def _text(table):
    """A page table (header, rows) as the chapter shows it."""
    return markdown_table("Caption.", "tab-x", *table).data


def test_the_map_and_its_choice(plane):
    picks = cnt.chosen(plane)
    assert 4 <= len(picks) <= 4 * 3 and all(len(p) == 2 for p in picks)
    assert all(1 <= len(rows) <= 3 for rows in plane["rank"].values())
    assert isinstance(cnt.plot_plane(plane), Figure)
    numbers = cnt.plane_numbers(plane)
    assert numbers["plane_points"] == len(plane["points"]) and "plane_step" not in numbers
    for batch in ("fresh", "reused"):
        m = plane["maps"][batch]
        assert numbers[f"plane_{batch}_sum"] == pytest.approx(np.mean(m.count("sum") == m.lam))
    header, rows = cnt.plane_table(plane)
    assert len(rows) == 2 * 2 * 4 and all(len(r) == len(header) for r in rows)
    m = plane["maps"]["fresh"]
    sel = m.lam == 1
    assert rows[1] == ["fresh", cnt.METHODS["term"], "1", str(int(sel.sum())),
                       f"{np.mean(m.count('term')[sel] == 1):.0%}",
                       f"{np.mean(m.resolved('term')[sel]):.0%}"]
    assert "± " in _text(cnt.exponent_table(plane))


def test_the_count_is_judged_by_the_rule_on_draws(counted):
    out = cnt.count_numbers(counted)
    for batch in ("fresh", "reused"):
        t = counted["tests"][batch]
        labels = []
        for lam in (0, 1, 2, 3):
            sel = t.lam == lam
            # one outcome per draw (width, seed) at or beyond the setting's N* (high)
            draws = {(N, seed) for N in t.Ns for seed in t.seeds[N]
                     if np.any(N >= t.nstar[sel, lam, 2])}
            ok = {(N, seed) for N in t.Ns for i, seed in enumerate(t.seeds[N])
                  if (N, seed) in draws and all(t.count[N][i, s] == 1 + lam
                                                for s in np.flatnonzero(sel)
                                                if N >= t.nstar[s, lam, 2])}
            assert (out[f"count_{batch}_{lam}_hits"], out[f"count_{batch}_{lam}_total"]) == (
                len(ok), len(draws))
            labels.append(share([d in ok for d in sorted(draws)]).label)
            assert out[f"count_{batch}_{lam}"] == labels[-1]
        assert out[f"count_{batch}"] == worst(labels)
        assert out[f"spikes_{batch}_total"] <= len({(N, s) for N in t.Ns for s in t.seeds[N]})
    widths = cnt.width_numbers(counted)
    assert all(v in set(VERDICT_SYMBOLS.values()) | {"—"} for k, v in widths.items()
               if k.startswith("vw_"))
    assert widths["several_fresh"] in VERDICT_SYMBOLS
    by = cnt.width_verdicts_by_test(counted)["fresh"]
    t = counted["tests"]["fresh"]
    # at one width, every seed is one draw
    assert by["several"][320][:2] == (int(np.sum(np.all(t.count[320][:, t.lam >= 1] >= 2, axis=1))), 3)
    assert widths["several_fresh_hits"] == by["several"][320][0]


def test_the_count_pages(counted):
    assert isinstance(cnt.plot_count(counted), Figure)
    for batch in ("fresh", "reused"):
        assert "(0.49, 0.49)" in _text(cnt.count_table(counted, batch))
    judged = _text(cnt.judged_table(counted))
    assert judged.count("| fresh |") == len(SETTINGS)
    kappa = _text(cnt.kappa_table(counted))
    # the extra kappa at the two widths up to 160 only
    assert "| fresh | 0.5 |" in kappa and "$N = 160$" in kappa and "$N = 320$" not in kappa
