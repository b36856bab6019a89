"""The two checks a figure of the book must pass (twostep.pages.figure_checks): no two
tick labels of an axis collide, and no series is hidden under another. Each check is shown
to fire on the defect it names (the faults found in the book's own figures, rebuilt small)
and to stay quiet on the repaired figure."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from twostep.pages import figure_checks as fc  # noqa: E402
from twostep.pages.figures import use_book_style  # noqa: E402


@pytest.fixture(autouse=True)
def _style():
    """The book's style for each test, and every rcParam put back after it (a later test
    module compares rcParams with their values at its import)."""
    saved = matplotlib.rcParams.copy()
    use_book_style()
    yield
    plt.close("all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # deprecated keys, re-set from the copy, warn
        matplotlib.rcParams.update(saved)


def _log_axis(ticks):
    fig, ax = plt.subplots(figsize=(3.0, 2.0))
    ax.errorbar(ticks, np.arange(len(ticks)), yerr=0.1, marker="o", label="data")
    ax.set_xscale("log")
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    return fig


def test_colliding_tick_labels_are_found():
    # Fig. 34's fault: 16000 and 24000 a factor 1.5 apart on a log axis, labelled in full.
    found = fc.tick_collisions(_log_axis([1000, 2000, 4000, 8000, 16000, 24000]))
    assert found and "'16000' and '24000'" in found[0] and found[0].startswith("panel 1: x")


def test_spaced_tick_labels_pass():
    assert fc.tick_collisions(_log_axis([1000, 4000, 16000])) == []


def test_hidden_ticks_outside_the_view_are_not_checked():
    fig, ax = plt.subplots(figsize=(3.0, 2.0))
    ax.plot([0, 1], [0, 1], label="line")
    ax.set_xticks([0, 0.5, 1, 1.001], ["0", "0.5", "1", "1.001"])
    ax.set_xlim(0, 1)   # 1.001 is out of view: not drawn, not a collision
    assert fc.tick_collisions(fig) == []


def test_a_series_under_filled_markers_is_hidden():
    # Fig. 33's fault: reused Lambda = 2 under Lambda = 3, both at the ceiling.
    fig, ax = plt.subplots()
    x = [1000, 2000, 4000]
    ax.plot(x, [6, 6, 6], "o", ms=5, label=r"$\Lambda=2$")
    ax.plot(x, [6, 6, 6], "s", ms=6, label=r"$\Lambda=3$")
    assert fc.hidden_series(fig) == [r"panel 1: '$\Lambda=2$' is hidden under '$\Lambda=3$'"]


def test_open_markers_of_other_shapes_show_both_series():
    fig, ax = plt.subplots()
    x = [1000, 2000, 4000]
    ax.plot(x, [6, 6, 6], "o", ms=5, mfc="none", label=r"$\Lambda=2$")
    ax.plot(x, [6, 6, 6], "s", ms=8, mfc="none", label=r"$\Lambda=3$")
    assert fc.hidden_series(fig) == []


def test_a_smaller_marker_on_top_shows():
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 1], "o", ms=8, label="big")
    ax.plot([1, 2], [1, 1], "o", ms=4, label="small")
    assert fc.hidden_series(fig) == []


def test_a_series_hidden_at_only_some_points_shows():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [1, 1, 1], "o", label="a")
    ax.plot([1, 2, 3], [1, 1, 2], "o", label="b")   # a's third point shows
    assert fc.hidden_series(fig) == []


def test_a_limit_line_under_the_theory_line_is_hidden():
    # Figs. 24 and 34: the limit 0.309 drawn as a line right under the theory that tends to it.
    fig, ax = plt.subplots()
    ax.axhline(0.309, color="0.4", lw=1, label="its limit")
    ax.plot([500, 4000], [0.309, 0.309], color="k", lw=1.5, ls="--", label="theory")
    ax.set_xlim(500, 4000)
    assert fc.hidden_series(fig) == ["panel 1: 'its limit' is hidden under 'theory'"]
    fig2, ax2 = plt.subplots()
    ax2.axhline(0.309, color="0.4", lw=1, label="its limit")
    ax2.plot([500, 4000], [0.25, 0.30], color="k", lw=1.5, ls="--", label="theory")
    assert fc.hidden_series(fig2) == []


def test_errorbar_series_are_named_by_their_label():
    fig, ax = plt.subplots()
    ax.errorbar([1, 2], [0.5, 0.6], yerr=0.05, marker="o", ms=4, label="fresh")
    ax.errorbar([1, 2], [0.5, 0.6], yerr=0.05, marker="o", ms=4, label="fresh, raw")
    assert fc.hidden_series(fig) == ["panel 1: 'fresh' is hidden under 'fresh, raw'"]


def test_unlabelled_marker_lines_are_series_too():
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2], "^", color="#2471a3")
    ax.plot([1, 2], [1, 2], "o", ms=8, color="#c0392b", label="later")
    found = fc.hidden_series(fig)
    assert found == ["panel 1: 'unlabelled markers #2471a3 ^ filled' is hidden under 'later'"]


def test_a_scatter_drawn_point_by_point_is_one_series_per_style():
    # Fig. 29's scatter: one errorbar per point; a colour shows if any of its points does.
    fig, ax = plt.subplots()
    for x in (0.2, 0.5, 1.0):
        ax.errorbar([x], [x], yerr=0.01, color="#c0392b", marker="o", ls="none")
    ax.errorbar([1.0], [1.0], yerr=0.01, color="#2471a3", marker="o", ls="none")
    assert fc.hidden_series(fig) == []
    for x in (0.2, 0.5):   # now every red point is under a blue one
        ax.errorbar([x], [x], yerr=0.01, color="#2471a3", marker="o", ls="none")
    assert fc.hidden_series(fig) == [
        "panel 1: 'unlabelled markers #c0392b o filled' is hidden under "
        "'unlabelled markers #2471a3 o filled'"]


def test_identical_rings_hide_each_other_and_concentric_rings_do_not():
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 1], "o", mfc="none", ms=5, label="a")
    ax.plot([1, 2], [1, 1], "o", mfc="none", ms=5, label="b")
    assert fc.hidden_series(fig) == ["panel 1: 'a' is hidden under 'b'"]
    fig2, ax2 = plt.subplots()
    ax2.plot([1, 2], [1, 1], "o", mfc="none", ms=5, label="a")
    ax2.plot([1, 2], [1, 1], "o", mfc="none", ms=7, label="b")
    assert fc.hidden_series(fig2) == []


def test_a_series_covered_by_two_later_ones_together_is_hidden():
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2], "o", label="a")
    ax.plot([1], [1], "o", ms=7, label="b")
    ax.plot([2], [2], "s", ms=7, label="c")
    assert fc.hidden_series(fig) == ["panel 1: 'a' is hidden under 'b', 'c'"]


def test_figure_defects_keeps_the_figures_canvas_and_checks_both():
    fig = _log_axis([1000, 2000, 4000, 8000, 16000, 24000])
    canvas = fig.canvas
    assert len(fc.figure_defects(fig)) == 1
    assert fig.canvas is canvas


def test_register_gives_every_figure_its_defects():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    fc.register(shell)
    data, _ = shell.display_formatter.format(_log_axis([1000, 4000, 16000]))
    assert data[fc.MIME] == {"defects": []}
    data, _ = shell.display_formatter.format(_log_axis([1000, 2000, 16000, 24000]))
    assert len(data[fc.MIME]["defects"]) == 1
