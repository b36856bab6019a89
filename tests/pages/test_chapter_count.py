"""The count of *Two steps, several spikes* (twostep.pages.count) on small draws: the phase
diagram, the map over the plane, the orders along alpha1, and a count file laid out draw by
draw against a registry built the package's way."""

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import twostep as ts
from twostep.analysis import confirmatory, plane as pl
from twostep.analysis.sweep import rng_for
from twostep.experiments.spikes import spike_experiment
from twostep.pages import count as cnt, two_steps as ch
from twostep.pages.figures import DATA_ATTR
from twostep.scale.backend import get_backend
from twostep.scale.device import count_on

WIDTHS, SEEDS = (80, 160, 320), (0, 1, 2)


def _data(fig):
    rows = getattr(fig, DATA_ATTR)
    assert rows and all(list(r) == list(rows[0]) for r in rows)
    return rows


@pytest.fixture(scope="module")
def scaling():
    return ch.scaling_study([20, 28, 36], [0, 1], "poly4", "he1", 0.2, (0.4, 0.25),
                            settings=[(0.2, 0.2)], alphas=[0.05, 0.23, 0.41], n_grid=28, n_top=3)


@pytest.fixture(scope="module")
def plane():
    recs = []
    for batch in ("fresh", "reused"):
        for N in (60, 120, 240):
            for seed in (0, 1):
                r = spike_experiment(rng_for(seed), N=N, batch=batch, corrected=True)
                recs.append({**r, "N": N, "seed": seed, "batch": batch})
    from twostep.pages.spikes import terms_summary
    stand_in = SimpleNamespace(summary=terms_summary(recs), L=4, c=0.2)
    return cnt.plane_data(stand_in, step=0.1)


@pytest.fixture(scope="module")
def registered():
    """A count file at the registry's twelve settings and a registry built from it as
    tools/at_scale.py --register builds the real one (the same draws here: a stand-in)."""
    bk = get_backend("numpy")
    recs = []
    for N in WIDTHS:
        for batch in ("fresh", "reused"):
            for seed in SEEDS:
                r = count_on(bk, N=N, batch=batch, settings=confirmatory.SETTINGS, n_top=8,
                             seed=seed)
                recs.append({**r, "N": N, "batch": batch, "seed": seed})
    registry = confirmatory.build_registry({"records": recs}, "0" * 64, "2026-01-01T00:00:00")
    return recs, registry


def test_phase_diagram_marks_the_counting_ceiling(scaling, fits_the_column):
    phase = cnt.phase_data(scaling, 2)
    A1, A2 = np.meshgrid(scaling.alphas, scaling.alphas, indexing="ij")
    assert np.array_equal(phase["theory"], pl.theory_count(A1, A2, 4))
    raw = np.mean([r["grid_count"] for r in scaling.summary.records
                   if r["batch"] == "fresh" and r["N"] == 28], axis=0)
    np.testing.assert_allclose(phase["raw"]["fresh"].ravel(), raw)
    fig = cnt.plot_phase(phase, resolution=40)
    rows = _data(fig)
    # every raw count at the ceiling n_top is marked censored and printed as "≥ n_top"
    assert all(r["censored"] == (r["panel"] != rows[0]["panel"] and r["count"] >= 3)
               for r in rows)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert texts.count("≥3") == sum(r["censored"] for r in rows)
    fits_the_column(fig)


def test_the_map_and_its_choice(plane):
    picks = cnt.chosen(plane)
    assert 4 <= len(picks) <= 12 and all(len(p) == 2 for p in picks)
    fig = cnt.plot_plane(plane)
    rows = _data(fig)
    m = plane["maps"]["fresh"]
    got = [r["measured"] for r in rows if r["measure"] == "sum" and r["batch"] == "fresh"]
    np.testing.assert_array_equal(got, m.count("sum"))


def test_order_count_and_its_figure(fits_the_column):
    data = cnt.order_count_data(L=5, alpha2=0.3, Ns=(40, 80), seeds=2,
                                alpha1=np.linspace(0, 0.45, 10))
    assert data["e_hat"].shape == data["spike"].shape == (5,)
    np.testing.assert_array_equal(data["theory"], [ts.n_spikes(a, 0.3, 5) for a in data["alpha1"]])
    assert data["measured_seeds"].shape == (2, 10)
    assert np.all(np.diff(data["measured"]) >= 0)
    fig = cnt.plot_order_count(data)
    rows = _data(fig)
    seed1 = [r["value"] for r in rows if r["series"] == "seed 1"]
    np.testing.assert_array_equal(seed1, data["measured_seeds"][1])
    fits_the_column(fig)


def test_draw_counts_agree_with_the_registered_tests(registered):
    recs, registry = registered
    d = cnt.draw_counts(recs, registry)
    assert d["N"].size == len(recs) * 12
    margin = registry["prediction"]["margin"]
    # the prediction is the package's, per draw and setting
    r = recs[5]
    i = [j for j, p in enumerate(np.asarray(r["points"])) if np.allclose(p, [0.2, 0.49, 0.49])][0]
    row = np.flatnonzero((d["N"] == r["N"]) & (d["seed"] == r["seed"])
                         & (d["batch"] == r["batch"]) & (d["setting"] == 9))[0]
    assert d["predicted"][row] == pl.predicted_count(r["spike_sum"][i], r["edge_own"][i], margin)
    # draw by draw, the same outcomes as the registered test finite_n
    for batch in ("fresh", "reused"):
        items = confirmatory.draw_items(recs, registry, batch)["finite_n"]
        for lam, (passed, draws, _) in items.items():
            sel = (d["batch"] == batch) & (d["lam"] == lam)
            assert list(d["count"][sel] == d["predicted"][sel]) == passed
            assert list(zip(d["N"][sel], d["seed"][sel])) == draws
    np.testing.assert_array_equal(d["nstar"][d["batch"] == "fresh"][9],
                                  confirmatory.nstar_array(registry, "fresh")[9, :, 2])


def test_count_figure_draws_a_count_at_the_ceiling_as_censored(registered, fits_the_column):
    recs, registry = registered
    d = cnt.draw_counts(recs, registry)
    fig = cnt.plot_count(d)
    rows = _data(fig)
    sel = (d["lam"] == 3) & (d["batch"] == "fresh") & (d["N"] == 160)
    row = [r for r in rows if (r["Lambda"], r["batch"], r["series"], r["N"]) == (3, "fresh",
                                                                                   "measured", 160)]
    assert row[0]["mean"] == pytest.approx(d["count"][sel].mean())
    assert row[0]["items"] == sel.sum() == 3 * len(SEEDS) and not row[0]["censored"]
    fits_the_column(fig)
    # one count at the ceiling: that mean is "at least", drawn apart from the ordinary points
    d["ceiling"][np.flatnonzero(sel)[0]] = True
    fig = cnt.plot_count(d)
    row = [r for r in _data(fig) if (r["Lambda"], r["batch"], r["series"], r["N"]) == (
        3, "fresh", "measured", 160)][0]
    assert row["censored"]
    ax = fig.axes[3]
    triangles = [ln for ln in ax.get_lines() if ln.get_marker() == "^" and len(ln.get_xdata())]
    assert len(triangles) == 1 and triangles[0].get_ydata()[0] == pytest.approx(row["mean"])
    ordinary = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    assert all(not np.any(np.isclose(ln.get_xdata(), triangles[0].get_xdata()[0]))
               for ln in ordinary if ln.get_color() == triangles[0].get_color())
