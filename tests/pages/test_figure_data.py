"""The numbers behind every figure (``twostep.pages.figure_data``): a tidy CSV read from the
figure's own artists, from which the figure replots with the same points.

Checked on a figure with every kind of artist the chapters draw, and on real page figures
(the setting chapter's, the landing page's, the at-scale appendix's from the committed
results files, the two-steps phase diagram), drawn at small sizes. That a notebook's figures
carry their CSV (``text/csv``, through ``figures.use_book_style``) is checked in an IPython
shell of its own; that the built site offers each ``{glue:figure}``'s CSV, in
``tests/site/test_site_downloads.py``.
"""

from __future__ import annotations

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from twostep.pages import figure_data as fd  # noqa: E402


def _every_kind():
    fig, axs = plt.subplots(2, 3, figsize=(7, 5))
    a = axs[0, 0]
    a.plot([500, 1000, 2000], [4, 5, 6], label="measured")
    a.plot([], [], color="k", label="a legend proxy")
    a.errorbar([500, 1000], [1, 2], yerr=[[0.1, 0.2], [0.3, 0.4]], label="mean ± s.e.")
    a.axhline(0.5, label="chance")
    a.axvline(1500, ymax=0.3)
    a.axvspan(600, 900, alpha=0.2)
    a.annotate("an arrow", (0.1, 0.1), xycoords="axes fraction")
    a.set(xlabel="width $N$ ($= n = d$)", ylabel="cosine", title="(a) seed 3, $N = 4000$")
    b = axs[0, 1]
    values = np.arange(10.0)
    b.hist(values, bins=3, label="bars")
    b.hist(values, bins=3, histtype="step")
    b.hist(values, bins=3, histtype="stepfilled", alpha=0.3)
    b.set(xlabel="$N$ (thousands)", ylabel="density")
    c = axs[0, 2]
    c.scatter([1, 2], [3, 4], label="points")
    c.scatter([1, 2], [1, 2], c=[0.5, 0.7])
    c.fill_between([0, 1, 2], [0, 1, 0], [1, 2, 1])
    c.step([0, 1, 2], [1, 2, 3], where="post")
    c.plot([1, 2], [1, 2], "D")
    c.set_title("(c) $N = 1000$")
    d = axs[1, 0]
    fine = d.pcolormesh(np.linspace(0, 1, 60), np.linspace(0, 1, 50),
                        np.random.default_rng(0).random((50, 60)), shading="auto")
    fig.colorbar(fine, ax=d)
    d.text(0.5, 0.5, "3")
    e = axs[1, 1]
    e.pcolormesh([0, 1, 3], [0, 2, 3], [[1, 2], [3, 4]])
    e.bar([1, 2], [3, 4], bottom=[0.5, 0.5], label="stacked")
    axs[1, 2].axis("off")
    plt.close(fig)
    return fig


def test_every_kind_of_artist_becomes_rows():
    fig = _every_kind()
    rows = fd.figure_rows(fig, strict=True)
    kinds = {r["kind"] for r in rows}
    assert kinds == set(fd.KINDS) - {"rectangle", "yspan", "polyline", "steps-pre", "steps-mid"}
    assert all(r["series"] != "a legend proxy" for r in rows)          # empty: not data
    assert not any(r["text"] == "an arrow" for r in rows)               # an annotation
    (line,) = [[(r["x"], r["y"], r["N"], r["seed"]) for r in rows if r["series"] == "measured"]]
    assert line == [(500, 4, 500, 3), (1000, 5, 1000, 3), (2000, 6, 2000, 3)]  # N from the x axis
    bars = [r for r in rows if r["series"] == "mean ± s.e."]
    np.testing.assert_allclose([(r["yerr_minus"], r["yerr_plus"]) for r in bars],
                               [(0.1, 0.3), (0.2, 0.4)], rtol=1e-12)
    hist = [r for r in rows if r["series"] == "bars"]
    np.testing.assert_allclose([(r["x"], r["width"], r["height"]) for r in hist],
                               [(0, 3, 3), (3, 3, 3), (6, 3, 4)], rtol=1e-12)
    assert {r["x_unit"] for r in hist} == {"thousands"} and hist[1]["N"] == 3000
    assert {r["N"] for r in rows if r["title"] == "(c) $N = 1000$"} == {1000}  # N from the title
    (span,) = [r for r in rows if r["kind"] == "xspan"]
    assert (span["x"], span["width"], span["y"]) == (600, 300, None)
    coarse = [r for r in rows if r["kind"] == "mesh" and r["panel"] == 4]
    assert len(coarse) == 30 * 25 <= fd.MESH_MAX_CELLS and "blocks of 2 x 2" in coarse[0]["series"]
    small = [r for r in rows if r["kind"] == "mesh" and r["panel"] == 5]
    assert [(r["x"], r["y"], r["width"], r["height"], r["value"]) for r in small] == [
        (0, 0, 1, 2, 1), (1, 0, 2, 2, 2), (0, 2, 1, 1, 3), (1, 2, 2, 1, 4)]
    assert [r["value"] for r in rows if r["kind"] == "scatter" and r["series"] == ""] == [0.5, 0.7]
    assert [r["text"] for r in rows if r["kind"] == "text"] == ["3"]
    # Panels by number (no colour bar, nothing from the empty key), with their titles.
    assert sorted({(r["panel"], r["title"]) for r in rows}) == [
        (1, "(a) seed 3, $N = 4000$"), (2, ""), (3, "(c) $N = 1000$"), (4, ""), (5, "")]


def test_the_csv_reads_back_and_replots_the_same_points():
    fig = _every_kind()
    rows = fd.figure_rows(fig)
    text = fd.figure_csv(fig)
    assert text.splitlines()[0] == ",".join(fd.COLUMNS)
    back = fd.read_csv(text)
    assert fd.same_points(rows, back) == [] and len(back) == len(rows)
    again = fd.replot(text)
    assert fd.same_points(rows, fd.figure_rows(again, strict=True)) == []
    # The comparison can fail: a point moved, or an element dropped.
    moved = [dict(r) for r in back]
    moved[0]["y"] += 1e-6
    assert fd.same_points(rows, moved) and fd.same_points(rows, back[:-1])


def test_labels_units_and_bad_input():
    assert fd.split_label("$N$ (thousands)") == ("$N$", "thousands")
    assert fd.split_label("overlap with $\\beta^\\star$ (r.m.s. over seeds)") == (
        "overlap with $\\beta^\\star$ (r.m.s. over seeds)", fd.DIMENSIONLESS)
    fig, ax = plt.subplots()
    ax.imshow(np.eye(3))
    with pytest.raises(ValueError, match="image"):
        fd.figure_rows(fig, strict=True)
    assert fd.figure_rows(fig) == []
    plt.close(fig)
    with pytest.raises(ValueError, match="text must have the header"):
        fd.read_csv("a,b\n1,2\n")
    bad = fd.figure_csv(_every_kind()).replace(",line,", ",curve,", 1)
    with pytest.raises(ValueError, match="unknown kind 'curve'"):
        fd.read_csv(bad)


def _page_figures():
    from twostep.pages import at_scale, count, landing, setting, spikes, two_steps
    from twostep.scale.results import read_results

    yield "setting", setting.plot_w0_spectrum(setting.w0_spectrum_data([(40, 80), (80, 40)]))
    yield "landing", landing.plot_summary(landing.summary_data(N=40),
                                          landing.terms_data(N=40, seeds=[0, 1]))
    data = at_scale.at_scale_data(*(read_results(spikes.results_path(n)) for n in at_scale.NAMES))
    yield "at_scale terms", spikes.plot_terms(data.runs["spike"], data.predicted)
    yield "at_scale beta", at_scale.plot_beta(data, at_scale.beta_limits(data))
    # The sizes of tests/pages/test_chapter_two_steps.py.
    scaling = two_steps.scaling_study([20, 28, 36], [0, 1], "poly4", "he1", 0.2, (0.4, 0.25),
                                      settings=[(0.2, 0.2), (0.3, 0.3), (0.4, 0.25), (0.45, 0.3)],
                                      alphas=[0.05, 0.23, 0.41], n_grid=28, n_top=4)
    yield "two_steps phase", count.plot_phase(count.phase_data(scaling, 2), resolution=30)


def test_page_figures_replot_from_their_csv():
    for name, fig in _page_figures():
        rows = fd.figure_rows(fig, strict=True)     # nothing drawn is left out
        assert rows, f"{name}: no rows"
        again = fd.figure_rows(fd.replot(fd.figure_csv(fig)), strict=True)
        assert fd.same_points(rows, again) == [], name
        if name == "setting":
            # One histogram per shape, with N from the panel's title.
            assert {(r["title"], r["N"]) for r in rows if r["kind"] == "bar"} == {
                ("N = 40, d = 80 (N/d = 0.5)", 40), ("N = 80, d = 40 (N/d = 2)", 80)}
        if name == "at_scale terms":
            # "$N$ (thousands)" names the tick labels; the data are N itself (the cosine
            # markers drawn within 3 % of their width, apart from each other).
            points = [r for r in rows if r["kind"] == "errorbar"]
            assert points and all(r["N"] == r["x"] and r["x"] >= 970 for r in points)
            assert {r["x_name"] for r in points} == {"$N$"} and {r["x_unit"] for r in points} == {
                fd.DIMENSIONLESS}
        if name == "landing":
            errorbars = [r for r in rows if r["kind"] == "errorbar"]
            assert errorbars and all(r["yerr_minus"] is not None for r in errorbars)
            # The 250 x 250 phase diagram, on a coarser grid that says so.
            mesh = [r for r in rows if r["kind"] == "mesh"]
            assert 0 < len(mesh) <= fd.MESH_MAX_CELLS and "250 x 250" in mesh[0]["series"]
        plt.close(fig)


_IN_A_SHELL = """
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.formatters import format_display_data
import matplotlib.pyplot as plt
shell = InteractiveShell.instance()
from twostep.pages import figure_data, figures
figures.use_book_style()
fig, ax = plt.subplots()
ax.plot([1, 2], [3, 4], label="a")
bundle, _ = format_display_data(fig)
assert bundle["text/csv"] == figure_data.figure_csv(fig), bundle.keys()
print(sorted(bundle))
"""


def test_a_notebook_figure_carries_its_csv():
    proc = subprocess.run([sys.executable, "-c", _IN_A_SHELL], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "'image/png', 'image/svg+xml', 'text/csv', 'text/plain'" in proc.stdout
