"""The page functions of the count sections of *Two steps* (twostep.pages.count), on small
draws: the map over the plane, and the count test read from a results document."""

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from twostep.analysis.sweep import rng_for
from twostep.analysis.verdicts import count_verdict
from twostep.pages import count as cnt
from twostep.pages.report import VERDICT_SYMBOLS
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
    scaling = SimpleNamespace(records=recs, L=4, c=0.2, Ns=[60, 120, 240], seeds=[0, 1])
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
    assert "tab-plane" in cnt.plane_table(plane).data
    assert "tab-plane-exponents" in cnt.exponent_table(plane).data


def test_the_count_is_judged_by_the_rule(counted):
    out = cnt.count_numbers(counted)
    per = cnt.count_verdicts(counted)
    for batch in ("fresh", "reused"):
        t = counted["tests"][batch]
        for lam in (0, 1, 2, 3):
            sel = t.lam == lam
            hits, total = int(t.hits[sel].sum()), int(t.total[sel].sum())
            assert (out[f"count_{batch}_{lam}_hits"], out[f"count_{batch}_{lam}_total"]) == (hits, total)
            assert out[f"count_{batch}_{lam}"] == count_verdict(hits, total, seeds=3).label
        assert out[f"count_{batch}"] == per[batch]["all"]
    for batch in ("fresh", "reused"):
        t = counted["tests"][batch]
        hits, total = int(t.spike_hits.sum()), int(t.spike_total.sum())
        assert (out[f"spikes_{batch}_hits"], out[f"spikes_{batch}_total"]) == (hits, total)
        assert out[f"spikes_{batch}"] == count_verdict(hits, total, seeds=3).label
    widths = cnt.width_numbers(counted)
    assert all(v in set(VERDICT_SYMBOLS.values()) | {"—"} for k, v in widths.items()
               if k.startswith("vw_"))
    assert widths["several_fresh"] in VERDICT_SYMBOLS
    several = cnt.several_by_width(counted)["fresh"][320]
    t = counted["tests"]["fresh"]
    assert several[0] == int(np.sum(t.count[320][:, t.lam >= 1] >= 2)) and several[1] == 3 * 3


def test_the_count_pages(counted):
    assert isinstance(cnt.plot_count(counted), Figure)
    for batch in ("fresh", "reused"):
        text = cnt.count_table(counted, batch).data
        assert f"tab-count-{batch}" in text and "(0.49, 0.49)" in text
    judged = cnt.judged_table(counted).data
    assert "tab-count-judged" in judged and judged.count("| fresh |") == len(SETTINGS)
    kappa = cnt.kappa_table(counted).data
    # the extra kappa at the two widths up to 160 only
    assert "| fresh | 0.5 |" in kappa and "$N = 160$" in kappa and "$N = 320$" not in kappa
