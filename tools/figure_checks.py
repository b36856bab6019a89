"""What a glance at a figure must survive, checked in the kernel that draws it (book tooling:
not in the reader's package, and not in a reader's notebook).

The build's kernels load this module from IPython's startup files (``tools/kernel_checks.py``),
and :func:`register` gives every figure they display or glue one more output beside its
images, ``MIME``: ``{"defects": [...], "series": [...]}``. The book's tests require the
defects to be none for every figure of every page (tests/site/test_site_downloads.py); the
series (each drawn artist's label and colours, :func:`drawn_series`) let the build compare a
caption's colour words with what is drawn (``tools/figure_captions.py``).

Each check draws the figure once (on its own Agg canvas) and reads what is on the page:

* :func:`tick_collisions`: two visible, non-empty tick labels of one axis (major or minor,
  inside the view) whose rendered boxes overlap by more than a pixel each way, such as
  16000 and 24000 printed as "1600024000";
* :func:`hidden_series`: a series of which nothing shows, because every one of its markers
  lies under a filled marker at least as large drawn later, or, for a line without markers,
  every point of it lies within the width of a later line at least as wide (or of the same
  colour), such as a limit drawn exactly under the theory line that tends to it;
* :func:`off_axis`: a series off its axis: a point (a marker, an error bar's point, a scatter
  point) outside the axis limits, a line or reference line wholly outside them, or any value
  at or below zero on a log axis (matplotlib leaves it out without a word), such as a
  reused k = 1 series whose small overlaps drop below a log axis' lower limit;
* :func:`censored_drawn`: a value at a ceiling drawn as data: a value that the figure's table
  (``twostep.pages.figures.attach_data``) marks censored, drawn as an ordinary point instead
  of as a bound (a triangle marker, or an artist with ``gid="censored"``), such as counts at
  a counting ceiling drawn as circles among the measured ones.

A series is a labelled line, the data line of a labelled errorbar (named by its label), or
an unlabelled line with markers; scatter collections count for :func:`off_axis` and
:func:`censored_drawn`. Patches and images are not checked.
"""

from __future__ import annotations

import contextlib
import itertools
import sys

import numpy as np

#: The mime type of a figure's checks in a notebook output: a JSON object, ``{"defects": [str],
#: "series": [{"panel", "label", "kind", "colors"}]}`` (:func:`figure_report`).
MIME = "application/vnd.twostep.figure-checks+json"
#: The ``gid`` of an artist that draws censored values (at a ceiling or floor), not data.
CENSORED_GID = "censored"
#: Markers that draw a bound (a value at least, or at most, this): triangles and carets.
BOUND_MARKERS = ("^", "v", 6, 7, 10, 11)
#: Where a row marked ``censored=True`` holds its censored value.
VALUE_COLUMNS = ("y", "mean", "value", "count")
# A censored row matches a drawn point whose x is within this fraction of one of its values
# (series are drawn side by side, shifted by up to a tenth, to keep them apart).
_DODGE = 0.15
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


def _label(artist) -> str:
    label = artist.get_label() or ""
    return "" if label.startswith("_") else label


def _point_artists(ax):
    """(name, artist, xy ``(n, 2)`` in data coordinates, points) of every visible artist of
    ``ax`` drawn in data coordinates: ``points`` is True for markers, error bars' points and
    scatter points, False for a line without markers."""
    from matplotlib.collections import PathCollection
    from matplotlib.colors import to_hex
    from matplotlib.container import ErrorbarContainer

    found, consumed = [], set()
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            data, caps, bars = container.lines
            consumed.update(map(id, [data, *caps, *bars]))
            if data is not None and data.get_visible():
                name = _label(container) or f"unlabelled error bars {to_hex(data.get_color())}"
                found.append((name, data, np.asarray(data.get_xydata(), float), True))
    for line in ax.lines:
        if id(line) in consumed or not line.get_visible() or line.get_transform() != ax.transData:
            continue
        xy = np.asarray(line.get_xydata(), float)
        if xy.size:
            kind = "markers" if _has_markers(line) else "line"
            name = _label(line) or f"unlabelled {kind} {to_hex(line.get_color())}"
            found.append((name, line, xy, _has_markers(line)))
    for coll in ax.collections:
        if (isinstance(coll, PathCollection) and coll.get_visible()
                and coll.get_offset_transform() == ax.transData):
            xy = np.ma.filled(np.ma.asarray(coll.get_offsets(), float), np.nan)
            if xy.size:
                found.append((_label(coll) or "unlabelled scatter", coll, xy.reshape(-1, 2), True))
    return found


def _reference_lines(ax):
    """(name, axis, value) of every visible line across the panel: ``axhline`` (axis "y") and
    ``axvline`` (axis "x")."""
    found = []
    for line in ax.lines:
        if not line.get_visible() or not len(line.get_xydata()):
            continue
        transform = line.get_transform()
        if transform == ax.get_yaxis_transform():
            found.append((_label(line) or "a horizontal line", "y", float(line.get_ydata()[0])))
        elif transform == ax.get_xaxis_transform():
            found.append((_label(line) or "a vertical line", "x", float(line.get_xdata()[0])))
    return found


def _limits(ax, axis: str) -> tuple[float, float]:
    low, high = sorted(getattr(ax, f"get_{axis}lim")())
    return low, high


def _outside(values: np.ndarray, low: float, high: float, log: bool) -> np.ndarray:
    """Which of ``values`` lie outside ``[low, high]`` beyond rounding (in log space on a log
    axis, where ``values`` are positive)."""
    if log:
        values, low, high = np.log10(values), np.log10(low), np.log10(high)
    slack = 1e-9 * max(high - low, 1e-300)
    return (values < low - slack) | (values > high + slack)


def off_axis(fig, renderer=None) -> list[str]:
    """Series off their axis, as ``"panel 2: 'k = 1': 1 of 5 points outside the axis
    limits (y from 0.003 to 1.2)"``: points outside the view, lines and reference lines
    wholly outside it, values at or below zero on a log axis; empty when every series is in
    view."""
    found = []
    with _rendered(fig, renderer):
        for ax in fig.axes:
            where = _panel(fig, ax)
            log = {a: getattr(ax, f"get_{a}scale")() == "log" for a in "xy"}
            lim = {a: _limits(ax, a) for a in "xy"}
            for name, _, xy, points in _point_artists(ax):
                finite = np.isfinite(xy).all(axis=1)
                xy = xy[finite]
                if not len(xy):
                    continue
                nonpositive = np.zeros(len(xy), bool)
                for j, a in enumerate("xy"):
                    if log[a] and (xy[:, j] <= 0).any():
                        bad = xy[:, j] <= 0
                        found.append(f"{where}: '{name}': {int(bad.sum())} of {len(xy)} values "
                                     f"at or below zero on the log {a} axis (not drawn)")
                        nonpositive |= bad
                xy = xy[~nonpositive]
                if not len(xy):
                    continue
                out = {a: _outside(xy[:, j], *lim[a], log[a]) for j, a in enumerate("xy")}
                either = out["x"] | out["y"]
                span = ", ".join(f"{a} from {lim[a][0]:.3g} to {lim[a][1]:.3g}"
                                 for a in "xy" if out[a].any())
                if points and either.any():
                    found.append(f"{where}: '{name}': {int(either.sum())} of {len(xy)} points "
                                 f"outside the axis limits ({span})")
                elif not points and either.all():
                    # A line is off its axis when every vertex is beyond one and the same limit.
                    beyond = any((col < lim[a][0]).all() or (col > lim[a][1]).all()
                                 for a, col in zip("xy", (xy[:, 0], xy[:, 1])))
                    if beyond:
                        found.append(f"{where}: '{name}': the line lies wholly outside the axis "
                                     f"limits ({span})")
            for name, a, value in _reference_lines(ax):
                if log[a] and value <= 0:
                    found.append(f"{where}: '{name}' at {a} = {value:.3g}, at or below zero on "
                                 f"the log {a} axis (not drawn)")
                elif np.isfinite(value) and _outside(np.array([value]), *lim[a], log[a])[0]:
                    found.append(f"{where}: '{name}' at {a} = {value:.3g} is outside the axis "
                                 f"limits ({a} from {lim[a][0]:.3g} to {lim[a][1]:.3g})")
    return found


def _number(value) -> float | None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        return None
    return float(value) if np.isfinite(value) else None


def _bound_drawing(artist) -> bool:
    """Whether ``artist`` draws bounds, not measurements: ``gid="censored"``, or a triangle
    marker (the usual mark of a value at least, or at most, this)."""
    if artist.get_gid() == CENSORED_GID:
        return True
    marker = artist.get_marker() if hasattr(artist, "get_marker") else None
    return marker in BOUND_MARKERS


def _censored_rows(rows) -> list[tuple[str | None, float, list[float]]]:
    """(series, the censored value, the row's other numbers) of every censored row."""
    out = []
    for row in rows:
        mark = row.get("censored")
        if isinstance(mark, str) and mark:
            columns = [mark]
        elif isinstance(mark, (bool, np.bool_)) and mark:
            columns = [k for k in VALUE_COLUMNS if k in row] or [
                k for k in row if k not in ("censored", "panel")]
        else:
            continue
        series = row.get("series") if isinstance(row.get("series"), str) else None
        for column in columns:
            value = _number(row.get(column))
            others = [_number(v) for k, v in row.items()
                      if k not in (column, "censored", "panel")]
            if value is not None:
                out.append((series, value, [v for v in others if v is not None]))
    return out


def censored_drawn(fig, rows=None) -> list[str]:
    """Censored values drawn as ordinary points, as ``"panel 1: 'reused, Λ = 2' draws 3
    censored value(s) ... as ordinary points"``; empty when none is.

    ``rows`` (default: the table :func:`twostep.pages.figures.attach_data` gave ``fig``) are
    dicts; a row whose ``censored`` names one of its columns holds there a value that is only a
    bound (a count at the counting ceiling), and one whose ``censored`` is True holds it in
    its ``y``, ``mean``, ``value`` or ``count`` column. A drawn point shows the bound when its y
    is that value and its x is within 15 % of another number of the row (series are drawn side
    by side); a row naming its ``series`` matches only the artists of that label, where there
    are any. A bound is drawn as a bound by an artist with ``gid="censored"`` or a triangle
    marker (:data:`BOUND_MARKERS`); drawn by any other, it is drawn as data."""
    if rows is None:
        try:
            from twostep.pages.figures import DATA_ATTR
        except ImportError:   # a package without attach_data: no table, nothing censored
            DATA_ATTR = None
        rows = (getattr(fig, DATA_ATTR, None) if DATA_ATTR else None) or []
    marked = _censored_rows(rows)
    if not marked:
        return []
    labels = {_label(a) for ax in fig.axes for _, a, _, _ in _point_artists(ax)}
    found = []
    for ax in fig.axes:
        for name, artist, xy, points in _point_artists(ax):
            if not points or _bound_drawing(artist):
                continue
            mine = [(value, np.array(others)) for series, value, others in marked
                    if others and (series is None or series not in labels
                                   or series == _label(artist))]
            hits = 0
            for x, y in xy[np.isfinite(xy).all(axis=1)]:
                if any(abs(y - value) <= 1e-9 * max(1.0, abs(value))
                       and (np.abs(xs - x) <= _DODGE * np.abs(xs) + 1e-12).any()
                       for value, xs in mine):
                    hits += 1
            if hits:
                found.append(f"{_panel(fig, ax)}: '{name}' draws {hits} censored value(s) "
                             "(marked in the figure's data) as ordinary points: draw them as "
                             f"bounds (a triangle marker, or gid={CENSORED_GID!r}), or leave "
                             "them out")
    return found


def _colour_hex(rgba, alpha=None) -> str:
    """An RGBA colour as the hex colour a reader sees on white (its alpha blended in)."""
    from matplotlib.colors import to_hex, to_rgba

    r, g, b, a = to_rgba(rgba)
    a = a if alpha is None else a * alpha
    return to_hex([a * c + (1 - a) for c in (r, g, b)])


def _mapped_colours(artist, samples: int = 9) -> list[str]:
    low, high = artist.get_clim()
    if low is None or high is None or not np.isfinite([low, high]).all():
        return []
    values = np.linspace(low, high, samples)
    return sorted({_colour_hex(c, artist.get_alpha()) for c in artist.to_rgba(values)})


def _face_colours(artist, most: int = 8) -> list[str]:
    faces = np.asarray(artist.get_facecolor(), float).reshape(-1, 4)
    if not len(faces) or not faces[:, 3].any():
        faces = np.asarray(artist.get_edgecolor(), float).reshape(-1, 4)
    return sorted({_colour_hex(c, artist.get_alpha()) for c in faces[:most] if c[3] > 0})


def drawn_series(fig) -> list[dict]:
    """What each panel draws, for checking a caption's colour words: one dict per visible
    artist, ``{"panel": 1-based, "label": its legend label ("" without one; a text's own
    words), "kind": "line" | "markers" | "errorbar" | "bar" | "scatter" | "collection" |
    "patch" | "image" | "text", "colors": ["#rrggbb", ...]}``; colours as seen on white (alpha
    blended), a colour map's sampled at nine points."""
    from matplotlib.collections import Collection
    from matplotlib.container import BarContainer, ErrorbarContainer

    out = []
    for index, ax in enumerate(fig.axes):
        consumed = set()

        def add(label, kind, colors):
            if colors:
                out.append({"panel": index + 1, "label": label, "kind": kind,
                            "colors": list(dict.fromkeys(colors))})

        for container in ax.containers:
            if isinstance(container, ErrorbarContainer):
                data, caps, bars = container.lines
                consumed.update(map(id, [data, *caps, *bars]))
                drawn = data if data is not None else (bars[0] if bars else None)
                if drawn is not None and drawn.get_visible():
                    colour = (data.get_color() if data is not None
                              else np.asarray(drawn.get_color()).reshape(-1, 4)[0])
                    add(_label(container), "errorbar", [_colour_hex(colour, drawn.get_alpha())])
            elif isinstance(container, BarContainer):
                consumed.update(map(id, container.patches))
                shown = [p for p in container.patches if p.get_visible()]
                if shown:
                    label = _label(container) or _label(shown[0])
                    add(label, "bar", [_colour_hex(shown[0].get_facecolor())])
        for line in ax.lines:
            if id(line) in consumed or not line.get_visible() or not len(line.get_xydata()):
                continue
            colours = [] if line.get_linestyle() in ("None", "none", "", " ") and _has_markers(
                line) else [_colour_hex(line.get_color(), line.get_alpha())]
            if _has_markers(line):
                for face in (line.get_markerfacecolor(), line.get_markeredgecolor()):
                    if not (isinstance(face, str) and face.lower() == "none"):
                        colours.append(_colour_hex(face, line.get_alpha()))
            add(_label(line), "markers" if _has_markers(line) else "line", colours)
        for coll in ax.collections:
            if id(coll) in consumed or not coll.get_visible() or not isinstance(coll, Collection):
                continue
            mapped = coll.get_array() is not None
            kind = "scatter" if type(coll).__name__ == "PathCollection" else "collection"
            add(_label(coll), kind, _mapped_colours(coll) if mapped else _face_colours(coll))
        for patch in ax.patches:
            if id(patch) in consumed or not patch.get_visible():
                continue
            colour = patch.get_facecolor() if patch.get_fill() else patch.get_edgecolor()
            add(_label(patch), "patch", [_colour_hex(colour, patch.get_alpha())])
        for image in ax.images:
            if image.get_visible():
                add(_label(image), "image", _mapped_colours(image))
        for text in ax.texts:
            if text.get_visible() and text.get_text().strip():
                add(text.get_text().strip(), "text", [_colour_hex(text.get_color(),
                                                                  text.get_alpha())])
    return out


def _defects(fig, renderer) -> list[str]:
    return (tick_collisions(fig, renderer) + hidden_series(fig, renderer)
            + off_axis(fig, renderer) + censored_drawn(fig))


def figure_defects(fig) -> list[str]:
    """Every defect the checks find in ``fig`` (see the module's text); empty when none."""
    with _rendered(fig) as renderer:
        return _defects(fig, renderer)


def figure_report(fig) -> dict:
    """``{"defects": figure_defects(fig), "series": drawn_series(fig)}``, the figure's
    ``MIME`` output."""
    with _rendered(fig) as renderer:
        return {"defects": _defects(fig, renderer), "series": drawn_series(fig)}


def _report_if_figure(obj):
    """:func:`figure_report` of a matplotlib Figure (None for anything else); a check that
    raises is reported as a defect, so the book's tests see it."""
    figure = sys.modules.get("matplotlib.figure")
    if figure is None or not isinstance(obj, figure.Figure):
        return None
    try:
        return figure_report(obj)
    except Exception as error:  # noqa: BLE001  (any failure must reach the tests)
        return {"defects": [f"the figure checks failed: {error!r}"], "series": []}


def register(shell) -> None:
    """Have IPython's ``shell`` give every matplotlib Figure it displays (or myst-nb glues)
    its :func:`figure_report` as ``MIME``, beside its images.

    The formatter answers for figures itself rather than through its type registry:
    matplotlib's inline backend and ``set_matplotlib_formats`` remove ``Figure`` from every
    formatter's registry, and a chapter calls them after the kernel has started."""
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    class ChecksFormatter(BaseFormatter):
        format_type = Unicode(MIME)
        print_method = ObjectName("_repr_twostep_checks_")
        _return_type = (dict,)

        def __call__(self, obj):
            return _report_if_figure(obj) if self.enabled else None

    shell.display_formatter.formatters[MIME] = ChecksFormatter(parent=shell.display_formatter)
