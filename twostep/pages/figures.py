"""Plotting helpers shared by the chapters (matplotlib)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .._validation import check_array, check_int, check_real
from ..analysis.spectra import bulk_edge, bulk_edges, marchenko_pastur_density

#: Colours for reused / fresh batches and for theory lines, used book-wide.
COLORS = {"reused": "#c0392b", "fresh": "#2471a3", "theory": "0.15", "chance": "0.55",
          "one-step": "#7d3c98"}
#: One colour per order :math:`k` (of a term :math:`T_k`, a spike, a direction :math:`u_k`).
K_COLORS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a")
#: The order in which every page draws and tabulates the two batch schemes.
BATCH_ORDER = ("fresh", "reused")
#: How every page names a target in figures and tables, keyed as the experiments' ``target=``
#: names it (:func:`twostep.get_link`'s names; "he1+odd" the two-index target), with
#: "he1_he3" for the one single-index sum the book draws, and an activation, keyed by
#: :func:`twostep.get_activation`'s names.
TARGET_LABELS = {"he1": r"$\mathrm{He}_1$", "he2": r"$\mathrm{He}_2/\sqrt{2}$",
                 "he3": r"$\mathrm{He}_3/\sqrt{6}$", "odd": "odd bounded",
                 "he1_he3": r"$\mathrm{He}_1+\mathrm{He}_3/\sqrt{6}$",
                 "he1+odd": r"$\mathrm{He}_1$ + odd bounded"}
ACTIVATION_LABELS = {"poly2": r"$\sigma_2$", "poly3": r"$\sigma_3$", "poly4": r"$\sigma_4$",
                     "tanh": r"$\tanh$", "relu": "centred ReLU"}
#: The label of a width axis.
WIDTH_LABEL = "$N$ ($= n = d$)"

#: The smallest font of the book style, in points at the drawn size; a figure shown at
#: less than ``MIN_READABLE_PT / SMALLEST_FONT_PT`` of its drawn width has text below
#: 8 pt (tests/site/test_browser.py checks every figure of the built pages).
SMALLEST_FONT_PT = 9.0
MIN_READABLE_PT = 8.0
#: The widest a figure is drawn, in inches: the text column of the pages is 688 px at a
#: 1280 px window (516 pt), and a figure shows at its drawn size, so every chapter's figure
#: is at most this wide and fits whole (tests/site/test_browser.py checks it at 1280 and 1024 px).
MAX_WIDTH_IN = 7.0
#: A figure whose SVG would be larger than this (a mesh of many thousand cells, or a
#: scatter of thousands of points, drawn as
#: vector shapes; ``rasterized=True`` on that artist keeps the rest vector) is shown
#: as its PNG instead.
SVG_MAX_BYTES = 1_000_000
_SVG_OPTIONS = {"bbox_inches": "tight", "metadata": {"Date": None}}

def svg_or_none(fig, max_bytes: int = SVG_MAX_BYTES):
    """The figure as SVG text, or None when that would exceed ``max_bytes``."""
    from IPython.core.pylabtools import print_figure

    svg = print_figure(fig, "svg", **_SVG_OPTIONS)
    return svg if svg is not None and len(svg.encode()) <= max_bytes else None

def use_book_style() -> None:
    """Set matplotlib defaults for the book's figures and have the notebook show them as SVG."""
    import matplotlib as mpl

    mpl.rcParams.update({
        "figure.figsize": (MAX_WIDTH_IN, 3.6), "figure.dpi": 110, "savefig.dpi": 220,
        "font.size": 10, "axes.titlesize": 10, "axes.labelsize": 10,
        "xtick.labelsize": SMALLEST_FONT_PT, "ytick.labelsize": SMALLEST_FONT_PT,
        "legend.fontsize": SMALLEST_FONT_PT, "legend.title_fontsize": SMALLEST_FONT_PT,
        "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False,
        "axes.spines.right": False, "figure.constrained_layout.use": True,
        "svg.fonttype": "path", "svg.hashsalt": "twostep",
    })
    try:
        from IPython import get_ipython
    except ImportError:
        return
    if get_ipython() is None:
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    # SVG for the pages (myst-nb prefers it, glued figures included), and a PNG beside
    # it in the notebook: JupyterLab shows no SVG output of a notebook it does not
    # trust (a downloaded one), and falls back to the PNG.
    set_matplotlib_formats("svg", "png", metadata={"Date": None})
    from matplotlib.figure import Figure

    get_ipython().display_formatter.formatters["image/svg+xml"].for_type(Figure, svg_or_none)
    # And the numbers it is drawn from, as CSV, which the book offers beside it: the table
    # attach_data gave it (a figure without one has no CSV, and the book's build fails on it).
    formatters = get_ipython().display_formatter.formatters
    if CSV_MIME not in formatters:
        formatters[CSV_MIME] = _csv_formatter()(parent=get_ipython().display_formatter)
    formatters[CSV_MIME].for_type(Figure, data_csv)

#: The mime type of a figure's data in a notebook output (:func:`use_book_style`).
CSV_MIME = "text/csv"

def _csv_formatter():
    """IPython's formatter class for ``text/csv`` (IPython has none of its own)."""
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    class CSVFormatter(BaseFormatter):
        format_type = Unicode(CSV_MIME)
        print_method = ObjectName("_repr_csv_")
        _return_type = (str,)

    return CSVFormatter

def plot_spectrum(ax, singular, ratio: float, bins: int = 60, label: str | None = None,
                  color: str = "0.6", n_outliers_max: int = 10, margin: float = 0.05,
                  outlier_color: str = COLORS["reused"]):
    r"""Histogram of singular values (density), the Marchenko--Pastur density for
    :math:`\gamma=N/d`, the bulk edge, and the values beyond the edge as ticks."""
    s = check_array(singular, "singular", ndim=1)
    ratio = check_real(ratio, "ratio", low=0.0, low_open=True)
    bins = check_int(bins, "bins", 2)
    lo, hi = bulk_edges(ratio)
    edge = bulk_edge(ratio)
    bulk = s[s <= edge * (1 + margin)]
    outliers = np.sort(s[s > edge * (1 + margin)])[::-1]
    ax.hist(bulk, bins=bins, density=True, color=color, alpha=0.8,
            label=label or "singular values", weights=np.full(bulk.size, bulk.size / s.size))
    t = np.linspace(lo, hi, 400)
    ax.plot(t, marchenko_pastur_density(t, ratio), color=COLORS["theory"], lw=1.3,
            label=f"Marchenko–Pastur, N/d = {ratio:g}")
    ax.axvline(edge, color=COLORS["theory"], ls=":", lw=1, label=f"bulk edge {edge:.2f}")
    for x in outliers[:n_outliers_max]:
        ax.axvline(x, color=outlier_color, lw=1.6, ymax=0.35)
    if outliers.size:
        ax.plot([], [], color=outlier_color, lw=1.6, label=f"{outliers.size} beyond the edge")
    ax.set_xlabel("singular value")
    ax.set_ylabel("density")
    return int(outliers.size)

def errorbars(ax, x, mean, sem, label: str | None = None, **kwargs):
    """Means with error bars (standard error over seeds) joined by a line."""
    kwargs.setdefault("marker", "o")
    kwargs.setdefault("capsize", 3)
    kwargs.setdefault("ms", 4)
    return ax.errorbar(np.asarray(x), np.asarray(mean), yerr=np.asarray(sem), label=label,
                       **kwargs)

def chance_line(ax, value: float, label: str = r"chance $1/\sqrt{d}$", **kwargs):
    """A horizontal line at the chance level of an overlap."""
    kwargs.setdefault("color", COLORS["chance"])
    kwargs.setdefault("ls", ":")
    kwargs.setdefault("lw", 1.2)
    return ax.axhline(value, label=label, **kwargs)

def legend_below(fig, ax, ncol: int):
    """One legend for the whole figure, from ``ax``'s labelled artists, below the panels."""
    ncol = check_int(ncol, "ncol")
    handles, labels = ax.get_legend_handles_labels()
    return fig.legend(handles, labels, loc="outside lower center", ncol=ncol)

def width_axis(ax, Ns, label: str | None = WIDTH_LABEL, thousands: bool | None = None) -> None:
    """A log-scaled width axis with one labelled tick per simulated width ``Ns``."""
    thousands = max(Ns) >= 10_000 if thousands is None else thousands
    ax.set_xscale("log")
    ax.set_xticks(list(Ns), [f"{N / 1000:g}" if thousands else str(N) for N in Ns])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    if label:
        ax.set_xlabel(label + (" (thousands)" if thousands else ""))

def width_grid(Ns, points: int = 60) -> np.ndarray:
    r"""``points`` geometric widths from :math:`0.8N_{min}` to :math:`1.25N_{max}` of ``Ns``."""
    return np.geomspace(0.8 * min(Ns), 1.25 * max(Ns), points)

def legend_from(where, entries, **kwargs):
    """A legend of ``where`` from ``(label, style)`` pairs (``patch=True``: filled patches)."""
    def handle(style):
        style = {"color": "0.3", **style}
        return Patch(**{k: v for k, v in style.items() if k != "patch"}) if style.get("patch") \
            else Line2D([], [], **style)

    return where.legend([handle(s) for _, s in entries], [label for label, _ in entries],
                        **kwargs)

def ticks_at(axis, values) -> None:
    r"""Ticks of ``axis`` (``ax.xaxis`` or ``ax.yaxis``) at ``values`` only, written plainly
    (``f"{v:g}"``), with no minor ticks: for a log axis of a few chosen values (the batch
    ratios :math:`\psi`, step sizes) that is not a width axis (:func:`width_axis`)."""
    axis.set_ticks(list(values), [f"{v:g}" for v in values])
    axis.set_minor_locator(plt.NullLocator())

#: The attribute of a Figure that holds the table it is drawn from (attach_data).
DATA_ATTR = "twostep_data"

def attach_data(fig, rows):
    """Give ``fig`` the numbers it is drawn from, and return it."""
    if isinstance(rows, dict):
        columns = {str(k): list(np.ravel(v)) for k, v in rows.items()}
        sizes = {len(v) for v in columns.values()}
        if len(sizes) != 1:
            raise ValueError(f"rows must have columns of one length, got {sorted(sizes)}")
        rows = [dict(zip(columns, values)) for values in zip(*columns.values())]
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        raise TypeError("rows must be a non-empty list of dicts or a dict of columns")
    keys = list(rows[0])
    if any(list(r) != keys for r in rows):
        raise ValueError(f"every row must have the keys {keys}, in that order")
    if "censored" in keys:
        named = {r["censored"] for r in rows if not isinstance(r["censored"], (bool, np.bool_))}
        if not named - {"", None} <= set(keys) - {"censored"}:
            raise ValueError("rows' censored must be True, False or the name of a column of "
                             f"the row, got {sorted(map(str, named - set(keys) - {'', None}))}")
    setattr(fig, DATA_ATTR, rows)
    return fig

def data_csv(fig) -> str | None:
    """The CSV of the table :func:`attach_data` gave ``fig`` (None without one)."""
    import csv
    import io

    rows = getattr(fig, DATA_ATTR, None)
    if not rows:
        return None

    def text(v):
        if v is None or (isinstance(v, (float, np.floating)) and not np.isfinite(v)):
            return ""
        if isinstance(v, (float, np.floating)):
            return f"{float(v):.6g}"
        return str(v.item() if isinstance(v, np.generic) else v)

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(rows[0]))
    writer.writerows([[text(v) for v in r.values()] for r in rows])
    return out.getvalue()

def finished(fig):
    """Close ``fig`` (so that a notebook shows it once, where it is glued) and return it."""
    plt.close(fig)
    return fig

def seeds_and_mean(ax, summary, value: str, where: dict, rows: list, series: str,
                   index=(), theory=None, panel: int = 1, **style):
    r"""Every seed's value of a ``Summary`` and their mean ± standard error against its last axis.
    """
    x, mean, sem = summary.series(value, index, **where)
    theory = [None] * len(x) if theory is None else list(theory)
    seeds = [dict(panel=panel, series=series, x=t, seed=r["seed"],
                  y=float(np.asarray(r[value])[index]), sem=None, theory=None)
             for t in x for r in summary.runs(**where, **{summary.by[-1]: t})]
    # one artist for all the seeds' points: light, under the means, no legend entry
    ax.plot([r["x"] for r in seeds], [r["y"] for r in seeds], "o", alpha=0.35, ms=2.5, mew=0,
            color=style.get("color", COLORS["theory"]))
    rows += seeds
    errorbars(ax, x, mean, sem, **style)
    rows += [dict(panel=panel, series=series + " (mean)", x=t, seed=None, y=m, sem=e,
                  theory=th) for t, m, e, th in zip(x, mean, sem, theory)]
    return x, mean, sem
