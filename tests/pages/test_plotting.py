"""Shared figure helpers draw what they claim."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import warnings  # noqa: E402

import twostep as ts  # noqa: E402
from twostep.pages import figures as plotting  # noqa: E402


#: The rcParams before any test here changed them.
_BEFORE = matplotlib.rcParams.copy()


@pytest.fixture(autouse=True)
def restore_rcparams():
    """use_book_style() sets global rcParams (layout, fonts, svg hash salt); without this a
    later test (e.g. the reuse chapter) runs with them and warns "The figure layout has
    changed to tight"."""
    saved = matplotlib.rcParams.copy()
    yield
    plt.close("all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # deprecated keys, re-set from the copy, warn
        matplotlib.rcParams.update(saved)


def test_plot_spectrum_counts_and_draws_outliers():
    W0, _ = ts.initialise(300, 300, np.random.default_rng(0))
    s = np.r_[5.0, 3.0, ts.singular_values(W0)]
    fig, ax = plt.subplots()
    n_out = plotting.plot_spectrum(ax, s, 1.0)
    assert n_out == 2
    labels = [t.get_text() for t in ax.legend().get_texts()]
    assert any("Marchenko" in t for t in labels) and any("2 beyond" in t for t in labels)
    plt.close(fig)


def test_plot_spectrum_outlier_color():
    s = np.r_[5.0, np.linspace(0.1, 1.9, 50)]
    fig, ax = plt.subplots()
    plotting.plot_spectrum(ax, s, 1.0, outlier_color="#1e8449")
    drawn = [line for line in ax.lines if line.get_color() == "#1e8449"]
    assert len(drawn) == 2   # the tick at 5 and its legend handle
    assert not any(line.get_color() == plotting.COLORS["reused"] for line in ax.lines)
    plt.close(fig)


def test_book_style_draws_text_at_9_pt_or_more_in_reproducible_svg():
    import io
    import re

    plotting.use_book_style()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, -1], label="a line")
    ax.legend()
    ax.set_xlabel("x")
    ax.set_title("title")
    svgs = []
    for _ in range(2):
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        svgs.append(buf.getvalue().decode())
    plt.close(fig)
    assert svgs[0] == svgs[1]   # svg.hashsalt: the same figure gives the same file
    # With svg.fonttype "path", each run of text is a group scaled by its size / 100.
    sizes = [100 * float(s) for s in re.findall(r"scale\(([\d.]+) -\1\)", svgs[0])]
    assert sizes and min(sizes) >= plotting.SMALLEST_FONT_PT >= plotting.MIN_READABLE_PT


def test_a_figure_too_heavy_for_svg_falls_back_to_png():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    svg = plotting.svg_or_none(fig)
    assert svg is not None and svg.lstrip().startswith("<?xml")
    assert plotting.svg_or_none(fig, max_bytes=1000) is None
    plt.close(fig)


def test_book_style_does_not_leak():
    # Runs after the style test above: the fixture put every rcParam back.
    changed = [k for k in _BEFORE if matplotlib.rcParams[k] != _BEFORE[k]]
    assert not changed, changed


def test_every_chapter_figure_is_drawn_for_the_column():
    """Every figure size a chapter module asks for is at most the column's width
    (``MAX_WIDTH_IN``); the browser tests check the drawn result on the pages."""
    import re
    from pathlib import Path

    from twostep.pages import figures

    wide = []
    for path in sorted((Path(figures.__file__).parent).glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1):
            for width in re.findall(r"figsize=\(\s*([\d.]+)\s*(?:if[^,]*)?,", line):
                if float(width) > figures.MAX_WIDTH_IN:
                    wide.append(f"{path.name}:{number}: {line.strip()}")
    assert not wide, (f"figures wider than {figures.MAX_WIDTH_IN} in (the text column):\n  "
                      + "\n  ".join(wide))


def test_legend_below_gathers_one_panels_labels_under_the_figure():
    fig, axes = plt.subplots(1, 2, layout="constrained")
    axes[0].plot([0, 1], [0, 1], label="a")
    axes[0].plot([0, 1], [1, 0], label="b")
    axes[1].plot([0, 1], [0, 0], label="c")
    legend = plotting.legend_below(fig, axes[0], ncol=2)
    assert [t.get_text() for t in legend.get_texts()] == ["a", "b"]
    assert legend in fig.legends
    fig.canvas.draw()
    # below every panel: its top edge under the lowest panel's bottom edge
    box = legend.get_window_extent()
    assert box.y1 <= min(ax.get_window_extent().y0 for ax in axes)
    with pytest.raises(ValueError, match="ncol"):
        plotting.legend_below(fig, axes[0], ncol=0)
    plt.close(fig)
