"""What a glance at a figure must survive: tick labels that do not collide, and no series
hidden under another.

Both checks draw the figure once (on its own Agg canvas) and measure what is on the page in
display pixels:

* :func:`tick_collisions`: two visible, non-empty tick labels of one axis (major or minor,
  inside the view) whose rendered boxes overlap by more than a pixel each way, such as
  16000 and 24000 printed as "1600024000";
* :func:`hidden_series`: a series of which nothing shows, because every one of its markers
  lies under a filled marker at least as large drawn later, or, for a line without markers,
  every point of it lies within the width of a later line at least as wide (or of the same
  colour), such as a limit drawn exactly under the theory line that tends to it.

A series is a labelled line, the data line of a labelled errorbar (named by its label), or
an unlabelled line with markers. Scatter collections, patches and images are not checked.
:func:`register` makes every figure the notebook displays (or myst-nb glues) carry the list
of its defects as ``MIME`` beside its images; the book's tests require it to be empty for
every figure of every chapter (tests/site/test_site_downloads.py).
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np

#: The mime type of a figure's defects in a notebook output (a JSON object).
MIME = "application/vnd.twostep.figure-defects+json"
# Overlaps and distances of at most this many pixels are not a defect: anti-aliasing.
_SLACK_PX = 1.0


@contextlib.contextmanager
def _rendered(fig, renderer=None):
    """A renderer for ``fig``: the one given, or a fresh Agg canvas's after drawing the figure
    on it, with the figure's own canvas put back on exit."""
    if renderer is not None:
        yield renderer
        return
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    old = fig.canvas
    canvas = FigureCanvasAgg(fig)
    try:
        canvas.draw()
        yield canvas.get_renderer()
    finally:
        fig.set_canvas(old)


def _panel(fig, ax) -> str:
    number = fig.axes.index(ax) + 1
    title = ax.get_title() or ax.get_title(loc="left")
    return f"panel {number}" + (f" ({title})" if title else "")


def _tick_labels(axis):
    low, high = sorted(axis.get_view_interval())
    for tick in itertools.chain(axis.get_major_ticks(), axis.get_minor_ticks()):
        if not (low <= tick.get_loc() <= high) or not tick.get_visible():
            continue
        for label in (tick.label1, tick.label2):
            if label.get_visible() and label.get_text().strip():
                yield label


def tick_collisions(fig, renderer=None) -> list[str]:
    """Pairs of tick labels of one axis whose rendered boxes overlap, as
    ``"panel 2: x tick labels '16000' and '24000' overlap"``; empty when none do."""
    found = []
    with _rendered(fig, renderer) as renderer:
        for ax in fig.axes:
            for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
                labels = [(lab.get_text(), lab.get_window_extent(renderer))
                          for lab in _tick_labels(axis)]
                for (ta, a), (tb, b) in itertools.combinations(labels, 2):
                    wide = min(a.x1, b.x1) - max(a.x0, b.x0)
                    tall = min(a.y1, b.y1) - max(a.y0, b.y0)
                    if wide > _SLACK_PX and tall > _SLACK_PX:
                        found.append(f"{_panel(fig, ax)}: {name} tick labels "
                                     f"{ta!r} and {tb!r} overlap")
    return found


def _has_markers(line) -> bool:
    return line.get_marker() not in (None, "", " ", "None", "none")


def _series(ax):
    """(name, [lines]) of every series of ``ax``, in drawing order. Unlabelled lines with
    markers of one colour, shape and fill (a scatter drawn point by point) are one series."""
    from matplotlib.colors import to_hex
    from matplotlib.container import ErrorbarContainer

    named, skip = {}, set()
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            data, caps, _ = container.lines
            if data is not None:
                named[id(data)] = container.get_label()
            skip.update(id(c) for c in caps)
    series: dict[str, list] = {}
    for line in ax.lines:
        if id(line) in skip or not line.get_visible():
            continue
        label = named.get(id(line), line.get_label())
        if label and not label.startswith("_"):
            series.setdefault(label, []).append(line)
        elif _has_markers(line):
            fill = "open" if not _filled(line) else "filled"
            series.setdefault(f"unlabelled markers {to_hex(line.get_color())} "
                              f"{line.get_marker()} {fill}", []).append(line)
    return list(series.items())


def _points(line) -> np.ndarray:
    xy = np.asarray(line.get_xydata(), dtype=float)
    xy = xy[np.isfinite(xy).all(axis=1)] if xy.size else xy.reshape(0, 2)
    return line.get_transform().transform(xy) if len(xy) else xy


def _in_view(ax, pixels: np.ndarray) -> np.ndarray:
    box = ax.bbox
    return ((pixels[:, 0] >= box.x0 - _SLACK_PX) & (pixels[:, 0] <= box.x1 + _SLACK_PX)
            & (pixels[:, 1] >= box.y0 - _SLACK_PX) & (pixels[:, 1] <= box.y1 + _SLACK_PX))


def _filled(line) -> bool:
    face = line.get_markerfacecolor()
    return not (isinstance(face, str) and face.lower() == "none")


def _distance_to_polyline(points: np.ndarray, path: np.ndarray) -> np.ndarray:
    """Distance (pixels) from each point to the polyline through ``path``'s vertices."""
    if len(path) == 1:
        return np.linalg.norm(points - path[0], axis=1)
    a, b = path[:-1], path[1:]
    ab = b - a
    length2 = np.maximum((ab ** 2).sum(axis=1), 1e-12)
    t = np.clip(((points[:, None, :] - a[None]) * ab[None]).sum(axis=2) / length2, 0.0, 1.0)
    nearest = a[None] + t[..., None] * ab[None]
    return np.linalg.norm(points[:, None, :] - nearest, axis=2).min(axis=1)


def _line_samples(pixels: np.ndarray) -> np.ndarray:
    if len(pixels) < 2:
        return pixels
    return np.vstack([pixels, (pixels[1:] + pixels[:-1]) / 2])


def _samples(line) -> np.ndarray:
    """The points of ``line`` that are checked, in pixels: its markers in view, or for a line
    without markers its vertices and segment midpoints in view."""
    mine = _points(line)
    mine = mine[_in_view(line.axes, mine)]
    return mine if _has_markers(line) else _line_samples(mine)


def _covered(under, over, fig) -> np.ndarray:
    """Which of ``under``'s :func:`_samples` the later line ``over`` covers."""
    from matplotlib.colors import same_color

    px_per_pt = fig.dpi / 72.0
    mine, theirs = _samples(under), _points(over)
    none = np.zeros(len(mine), bool)
    if not len(mine) or not len(theirs):
        return none
    if _has_markers(under):
        if not _has_markers(over):
            return none
        # A filled marker at least as large covers; an open one covers only an open marker
        # of its own shape and size (the two rings are one).
        if _filled(over):
            if over.get_markersize() < under.get_markersize():
                return none
        elif (_filled(under) or over.get_marker() != under.get_marker()
              or abs(over.get_markersize() - under.get_markersize()) > 0.5):
            return none
        reach = max(0.25 * over.get_markersize() * px_per_pt, _SLACK_PX)
        gaps = np.linalg.norm(mine[:, None, :] - theirs[None], axis=2).min(axis=1)
        return gaps <= reach
    if over.get_linestyle() in ("None", "none", "", " "):
        return none
    if over.get_linewidth() < under.get_linewidth() and not same_color(
            over.get_color(), under.get_color()):
        return none
    reach = max(0.5 * over.get_linewidth() * px_per_pt, _SLACK_PX)
    return _distance_to_polyline(mine, theirs) <= reach


def hidden_series(fig, renderer=None) -> list[str]:
    """Series of which nothing shows, every point of it being under later lines, as
    ``"panel 1: 'fresh' is hidden under 'fresh, raw'"`` (a line is hidden when all of it
    that is in view is); empty when every series shows."""
    found = []
    with _rendered(fig, renderer) as renderer:
        for ax in fig.axes:
            series = _series(ax)
            owner = {id(line): name for name, lines in series for line in lines}
            # Drawn in z-order, ties in the order added (a stable sort).
            rank = {id(ln): i for i, ln in enumerate(sorted(ax.lines, key=lambda ln: ln.get_zorder()))}
            for name, lines in series:
                shown, seen, over_names = False, 0, []
                for line in lines:
                    later = [ln for ln in ax.lines if ln.get_visible()
                             and rank[id(ln)] > rank[id(line)] and owner.get(id(ln)) != name]
                    covered = np.zeros(len(_samples(line)), bool)
                    seen += covered.size
                    for other in later:
                        hit = _covered(line, other, fig)
                        if hit.any():
                            covered |= hit
                            over = owner.get(id(other), "a later line")
                            over_names += [] if over in over_names else [over]
                    if not covered.all():
                        shown = True
                        break
                if seen and not shown:
                    under = "', '".join(over_names)
                    found.append(f"{_panel(fig, ax)}: '{name}' is hidden under '{under}'")
    return found


def figure_defects(fig) -> list[str]:
    """Every tick-label collision and hidden series of ``fig`` (see the module's text)."""
    with _rendered(fig) as renderer:
        return tick_collisions(fig, renderer) + hidden_series(fig, renderer)


def register_figure_mime(shell, mime: str, method: str, func, returns=(str,)) -> None:
    """Have IPython's ``shell`` give every matplotlib Figure it displays (or myst-nb glues) a
    ``mime`` representation, ``func(fig)`` (of a type in ``returns``), beside its images;
    ``method`` names the formatter's print method."""
    from IPython.core.formatters import BaseFormatter
    from matplotlib.figure import Figure
    from traitlets import ObjectName, Unicode

    class Formatter(BaseFormatter):
        format_type = Unicode(mime)
        print_method = ObjectName(method)
        _return_type = returns

    formatters = shell.display_formatter.formatters
    if mime not in formatters:
        formatters[mime] = Formatter(parent=shell.display_formatter)
    formatters[mime].for_type(Figure, func)


def register(shell) -> None:
    """Give every figure ``shell`` displays its defects as ``MIME``,
    ``{"defects": figure_defects(fig)}`` (:func:`register_figure_mime`)."""
    register_figure_mime(shell, MIME, "_repr_twostep_defects_",
                         lambda fig: {"defects": figure_defects(fig)}, (dict,))
