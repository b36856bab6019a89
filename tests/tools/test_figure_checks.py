"""The checks every figure of the book must pass, in the kernel that draws it
(tools/figure_checks.py): no two tick labels of an axis collide, no series is hidden under
another, no series is off its axis, no censored value is drawn as data. Each check is shown
to fire on the defect it names (the faults found in the book's own figures, rebuilt small as
stand-ins) and to stay quiet on the repaired figure. The caption's colour words against the
drawn colours (tools/figure_captions.py) are checked at the bottom."""

from __future__ import annotations


import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import figure_captions  # noqa: E402
import figure_checks as fc  # noqa: E402
from alt_text import latex_to_plain  # noqa: E402
from twostep.pages.figures import attach_data, use_book_style  # noqa: E402


@pytest.fixture(autouse=True)
def _style():
    """The book's style for each test, and every rcParam put back after it (a later test
    module compares rcParams with their values at its import)."""
    # rc_context (public) puts every rcParam back on exit
    with matplotlib.rc_context():
        use_book_style()
        yield
        plt.close("all")


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


# --- a series off its axis ---------------------------------------------------------------

def _overlaps(reused_k1, ylim=(3e-3, 1.2)):
    """Fig. 34's panel, small: overlaps against N on a log axis, with a fixed lower limit."""
    fig, ax = plt.subplots(figsize=(3.0, 2.4))
    N = np.array([1000, 2000, 4000, 8000])
    ax.errorbar(N, [0.70, 0.70, 0.71, 0.70], yerr=0.01, marker="o", label="$k = 0$")
    ax.errorbar(N * 1.02, reused_k1, yerr=0.001, marker="s", label="$k = 1$")
    ax.plot(N, 1 / np.sqrt(N), ls=":", label="chance")
    ax.set(xscale="log", yscale="log", ylim=ylim)
    ax.xaxis.set_minor_locator(plt.NullLocator())
    return fig


def test_a_point_below_the_lower_limit_of_a_log_axis_is_off_its_axis():
    # Fig. 34's fault: the reused k = 1 series at 0.0019 under a lower limit of 0.003.
    found = fc.off_axis(_overlaps([0.09, 0.07, 0.0019, 0.0037]))
    assert found == ["panel 1: '$k = 1$': 1 of 4 points outside the axis limits "
                     "(y from 0.003 to 1.2)"]
    assert fc.off_axis(_overlaps([0.09, 0.07, 0.0039, 0.0037])) == []


def test_values_at_or_below_zero_on_a_log_axis_are_off_it():
    found = fc.off_axis(_overlaps([0.09, 0.0, -0.01, 0.0037], ylim=(1e-3, 1.2)))
    assert found == ["panel 1: '$k = 1$': 2 of 4 values at or below zero on the log y axis "
                     "(not drawn)"]
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [1, 2, 3], label="from zero")     # x = 0 on a log x axis
    ax.set_xscale("log")
    assert fc.off_axis(fig) == ["panel 1: 'from zero': 1 of 3 values at or below zero on the "
                                "log x axis (not drawn)"]


def test_a_line_partly_out_of_view_is_fine_and_one_wholly_out_is_not():
    fig, ax = plt.subplots()
    x = np.geomspace(1e-3, 1, 50)
    ax.plot(x, x ** 2, label="rho^2")
    ax.plot(x, x ** 6, label="rho^6")          # below 1e-9 for most of its range: clipped
    ax.set(xscale="log", yscale="log", ylim=(1e-9, 1.5))
    assert fc.off_axis(fig) == []
    ax.plot(x, 1e-12 * x, label="too small")   # every point under the lower limit
    assert fc.off_axis(fig) == ["panel 1: 'too small': the line lies wholly outside the axis "
                                "limits (y from 1e-09 to 1.5)"]


def test_a_reference_line_outside_the_limits_is_off_its_axis():
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2], "o", label="data")
    ax.axhline(0.0, label="zero")
    ax.set(ylim=(0.5, 2.5))
    assert fc.off_axis(fig) == ["panel 1: 'zero' at y = 0 is outside the axis limits "
                                "(y from 0.5 to 2.5)"]
    ax.set(ylim=(-0.5, 2.5))
    assert fc.off_axis(fig) == []
    ax.set_yscale("log")
    ax.set_ylim(0.1, 3)
    assert fc.off_axis(fig) == ["panel 1: 'zero' at y = 0, at or below zero on the log y axis "
                                "(not drawn)"]


def test_a_scatter_point_outside_the_view_is_off_its_axis():
    fig, ax = plt.subplots()
    ax.scatter([0.2, 0.5, 3.0], [0.2, 0.5, 0.4], label="runs")
    ax.set_xlim(0, 1)
    assert fc.off_axis(fig) == ["panel 1: 'runs': 1 of 3 points outside the axis limits "
                                "(x from 0 to 1)"]


# --- values at a ceiling drawn as data ----------------------------------------------------

def _counts(reused_drawn_as, censored="count"):
    """Fig. 35's panel, small: outlier counts against N for Lambda = 1, 2, where the reused
    Lambda = 2 counts sit at the counting ceiling of 6 (censored in the data: ``censored``
    names the column, or is True)."""
    N = [1000, 2000, 4000]
    mark = {"count": ("count", ""), True: (True, False)}[censored]
    rows = ([{"series": r"$\Lambda = 1$", "N": n, "count": c, "theory": 2, "censored": mark[1]}
             for n, c in zip(N, [2.0, 2.0, 2.0])]
            + [{"series": r"$\Lambda = 2$", "N": n, "count": 6.0, "theory": 3,
                "censored": mark[0]} for n in N])
    fig, ax = plt.subplots(figsize=(3.0, 2.4))
    ax.plot(N, [2.0, 2.0, 2.0], "o", label=r"$\Lambda = 1$")
    x = np.array(N) * 1.09                   # drawn beside Lambda = 1
    if reused_drawn_as == "data":
        ax.plot(x, [6.0] * 3, "s", label=r"$\Lambda = 2$")
    elif reused_drawn_as == "triangles":
        ax.plot(x, [6.0] * 3, "^", mfc="none", label=r"$\Lambda = 2$ (at the ceiling, $\geq 6$)")
    elif reused_drawn_as == "gid":
        ax.plot(x, [6.0] * 3, "_", ms=10, gid=fc.CENSORED_GID, label=r"$\Lambda = 2$")
    ax.set(xscale="log", ylim=(0, 7))
    return attach_data(fig, rows)


@pytest.mark.parametrize("censored", ["count", True])
def test_counts_at_the_ceiling_drawn_as_points_are_found(censored):
    assert fc.censored_drawn(_counts("data", censored)) == [
        r"panel 1: '$\Lambda = 2$' draws 3 censored value(s) (marked in the figure's data) "
        "as ordinary points: draw them as bounds (a triangle marker, or gid='censored'), or "
        "leave them out"]


@pytest.mark.parametrize("drawn_as", ["triangles", "gid", "nothing"])
def test_counts_at_the_ceiling_drawn_as_bounds_or_left_out_pass(drawn_as):
    assert fc.censored_drawn(_counts(drawn_as)) == []
    assert fc.censored_drawn(_counts(drawn_as, True)) == []


def test_a_count_of_the_same_value_elsewhere_is_not_censored():
    # Lambda = 1's count 2 at N = 1000 is data: a censored row of another width, or of
    # another series drawn in the figure, does not make it censored; one of its own series
    # and width does.
    fig = _counts("data")
    other_width = {"series": r"$\Lambda = 1$", "N": 8000, "count": 2.0, "censored": "count"}
    other_series = {"series": r"$\Lambda = 2$", "N": 1000, "count": 2.0, "censored": "count"}
    assert fc.censored_drawn(fig, [other_width, other_series]) == []
    own = dict(other_width, N=1000)
    assert len(fc.censored_drawn(fig, [own])) == 1
    # A row marked True is censored in its value column only, not in its theory.
    theory_only = {"series": "", "N": 1000, "mean": 5.0, "theory": 2.0, "censored": True}
    assert fc.censored_drawn(fig, [theory_only]) == []


def test_a_figure_without_censored_rows_has_nothing_to_check():
    fig, ax = plt.subplots()
    ax.plot([1, 2], [6, 6], "o")
    assert fc.censored_drawn(fig) == []
    assert fc.censored_drawn(attach_data(fig, {"N": [1, 2], "count": [6, 6]})) == []
    assert fc.censored_drawn(attach_data(fig, {"N": [1, 2], "count": [6, 6],
                                               "censored": [False, False]})) == []


# --- what is drawn, for the caption -------------------------------------------------------

def test_drawn_series_gives_labels_and_colours_as_seen_on_white():
    fig, (a, b) = plt.subplots(1, 2)
    a.plot([1, 2], [1, 2], color="0.15", label=r"$\rho^2$")
    a.errorbar([1, 2], [1, 2], yerr=0.1, color="#c0392b", label="reused")
    a.hist([1, 1, 2], color="0.6", alpha=0.8, label="singular values")
    a.text(1, 1, "6", color="#d68910")
    b.plot([1, 2], [1, 2], "o", mfc="none", color="#2471a3", label="fresh")
    b.axhline(0.5, color="k", alpha=0.5)
    series = fc.drawn_series(fig)
    by_label = {(s["panel"], s["label"]): s for s in series}
    assert by_label[(1, r"$\rho^2$")]["colors"] == ["#262626"]
    assert by_label[(1, "reused")] == {"panel": 1, "label": "reused", "kind": "errorbar",
                                       "colors": ["#c0392b"]}
    assert by_label[(1, "singular values")]["colors"] == ["#adadad"]   # 0.6 at 80 % on white: 0.68
    assert by_label[(1, "6")]["kind"] == "text"
    assert by_label[(2, "fresh")]["colors"] == ["#2471a3"]             # open markers: edges
    assert by_label[(2, "")]["colors"] == ["#808080"]                  # black at 50 %


# --- the checks in a kernel ------------------------------------------------------------------

def test_figure_defects_keeps_the_figures_canvas_and_checks_all_four():
    fig = _log_axis([1000, 2000, 4000, 8000, 16000, 24000])
    canvas = fig.canvas
    assert len(fc.figure_defects(fig)) == 1
    assert fig.canvas is canvas
    assert len(fc.figure_defects(_overlaps([0.09, 0.07, 0.0019, 0.0037]))) == 1
    assert len(fc.figure_defects(_counts("data"))) == 1
    assert fc.figure_defects(_counts("triangles")) == []


def test_register_gives_every_figure_its_checks_even_after_the_formats_change():
    from IPython.core.interactiveshell import InteractiveShell
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    shell = InteractiveShell.instance()
    fc.register(shell)
    # A chapter sets its figure formats after the kernel started: matplotlib-inline then
    # removes Figure from every formatter's registry, and the checks must survive it.
    set_matplotlib_formats("svg")
    data, _ = shell.display_formatter.format(_log_axis([1000, 4000, 16000]))
    assert data[fc.MIME]["defects"] == [] and data[fc.MIME]["series"][0]["label"] == "data"
    data, _ = shell.display_formatter.format(_log_axis([1000, 2000, 16000, 24000]))
    assert len(data[fc.MIME]["defects"]) == 1
    data, _ = shell.display_formatter.format("not a figure")
    assert fc.MIME not in data


# --- the caption's colour words (tools/figure_captions.py) ------------------------------

def _ideal(theory_colour):
    """Fig. 27, small: fraction explained against overlap, three links, and the leading powers
    rho^2 and rho^6 that the caption calls grey, with a grey chance line."""
    fig, ax = plt.subplots()
    rho = np.geomspace(1e-2, 1, 20)
    ax.plot(rho, rho, color="#7d3c98", label=r"$\mathrm{He}_1$ (IE 1)")
    ax.plot(rho, rho ** 2, color=theory_colour, ls="--", label=r"$\rho^2$")
    ax.plot(rho, rho ** 6, color=theory_colour, ls=":", label=r"$\rho^6$")
    ax.axvline(0.05, color="0.55", ls="-.", label=r"chance $1/\sqrt{d}$")
    ax.set(xscale="log", yscale="log")
    return fig


_IDEAL_CAPTION = ("Fraction of E[y²] explained by an ideal readout against its overlap ρ. "
                  "Grey: leading powers ρ² and ρ⁶. Dash-dotted: chance level 1/√d.")


def _caption(text, fig):
    return figure_captions.caption_colour_problems(text, fc.drawn_series(fig),
                                                   plain=latex_to_plain)


def test_grey_lines_drawn_black_are_found_though_something_else_is_grey():
    # Fig. 27's fault: the caption promises grey rho^2 and rho^6 lines, drawn in 0.15 (black).
    assert _caption(_IDEAL_CAPTION, _ideal("0.15")) == [
        "the caption calls 'ρ²' Grey, but it is drawn #262626 (panel 1)",
        "the caption calls 'ρ⁶' Grey, but it is drawn #262626 (panel 1)"]
    assert _caption(_IDEAL_CAPTION, _ideal("0.5")) == []


def test_a_colour_word_in_parentheses_names_what_comes_before_it():
    fig, ax = plt.subplots()
    ax.hist([1, 1, 2], color="0.6", label="singular values")
    ax.plot([1, 2], [0.5, 0.5], color="0.15", label="Marchenko–Pastur")
    text = "Singular values (grey histogram) against the Marchenko–Pastur density (black)."
    assert _caption(text, fig) == []
    text = "Singular values (black) against the Marchenko–Pastur density (grey)."
    assert _caption(text, fig) == [
        "the caption calls 'singular values' black, but it is drawn #999999 (panel 1)",
        "the caption calls 'Marchenko–Pastur' grey, but it is drawn #262626 (panel 1)"]


def test_a_colour_word_that_names_no_series_needs_something_of_its_colour():
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2], color="#c0392b", label="reused")
    ax.text(1, 1, "6", color="#d68910")
    assert _caption("Counts in bold ochre where they differ; the red line is the mean.",
                    fig) == []
    assert _caption("The blue line is the mean.", fig) == [
        "the caption says 'blue' ('The blue line is the mean'), but nothing in the figure "
        "is drawn blue"]


def test_colour_families_follow_the_books_palette():
    families = figure_captions.colour_families
    assert families("#262626") == {"black"} and families("#8c8c8c") == {"grey"}
    assert families("#ffffff") == {"white"}
    assert "red" in families("#c0392b") and "blue" in families("#2471a3")
    assert "purple" in families("#7d3c98") and {"blue", "purple"} <= families("#7570b3")
    assert {"orange", "ochre"} <= families("#d68910") and "green" in families("#1e8449")
    assert "grey" not in families("#c0392b")
