"""The numbers behind a figure, as a tidy CSV: one row per plotted point, read from the
matplotlib ``Figure`` itself, so the table holds exactly what the figure draws.

:func:`figure_rows` walks every panel's artists (the :data:`KINDS`: lines, markers and steps,
error bars with their lengths, bars and histograms, scatter points, filled polygons,
reference lines and spans, colour mesh cells, numbers written at data positions). Empty
legend proxies, invisible artists, colour bars, axis decorations and annotations are left
out. Each row names its panel (number and title), the plotted quantities with their units
(an axis label's trailing ``(s)``, ``(GB)``, ...; ``(thousands)`` only where the data are in
thousands, not where it describes the tick labels), its series (the legend label) and
element (one drawn line, bar set, polygon, ...), and the width ``N`` and ``seed`` where the
x axis is ``N`` or the series label or panel title states them (``N = 2000``, ``seed 3``).

:func:`figure_csv` writes the rows; :func:`read_csv` reads them back and :func:`replot` draws
them again, so a reader can replot a figure from the site's CSV (``tests/pages/test_figure_data.py``
checks the points). :func:`register` gives every figure a notebook displays or glues its CSV
as ``text/csv`` beside its SVG and PNG (``figures.use_book_style``); the build writes those
to the site (``tools/figure_downloads.py``).
"""

from __future__ import annotations

import csv
import io
import math
import re

import numpy as np

from .figure_checks import MIME as _DEFECTS_MIME, register_figure_mime

#: The columns, in order. Rectangles (bars, spans, mesh cells) are ``x, y`` (lower left
#: corner), ``width``, ``height``; error lengths are below and above the point.
COLUMNS = ("panel", "title", "x_name", "x_unit", "y_name", "y_unit", "element", "series", "kind",
           "x", "y", "xerr_minus", "xerr_plus", "yerr_minus", "yerr_plus", "width", "height",
           "value", "text", "N", "seed")
NUMERIC = ("x", "y", "xerr_minus", "xerr_plus", "yerr_minus", "yerr_plus", "width", "height",
           "value")
TEXT = ("title", "x_name", "x_unit", "y_name", "y_unit", "series", "kind")
#: What an axis label's trailing parenthesis may name as a unit.
UNITS = ("thousands", "millions", "s", "ms", "min", "h", "GB", "GiB", "MB", "MiB", "%")
#: Units that scale the numbers: "(thousands)" may describe the tick labels only (ticks at
#: 1000, 2000 labelled 1, 2), and then the data are the quantity itself.
SCALES = {"thousands": 1e3, "millions": 1e6}
DIMENSIONLESS = "dimensionless"
#: A colour mesh finer than this many cells is written on a coarser grid of blocks (each
#: block shows the value of its first cell; the series says so): a theory field shaded at
#: 400 x 400 would be 160 000 rows, and every row is also in the executed notebook.
MESH_MAX_CELLS = 900
KINDS = ("line", "markers", "steps-pre", "steps-mid", "steps-post", "errorbar", "bar", "hline",
         "vline", "scatter", "polygon", "open polygon", "polyline", "rectangle", "xspan",
         "yspan", "mesh", "text")

_UNIT = re.compile(r"^(.*?)\s*\((" + "|".join(map(re.escape, UNITS)) + r")\)\s*$", re.DOTALL)
_N_AXIS = re.compile(r"^(width\s+)?N\b")
_N_IN = re.compile(r"(?<![\w])N\s*=\s*(?:[a-z]\s*=\s*)*(\d[\d,]*)")
_SEED_IN = re.compile(r"\bseed\s+(\d+)\b")


def split_label(label: str) -> tuple[str, str]:
    """(quantity, unit) of an axis label: ``"$N$ (thousands)"`` gives ``("$N$", "thousands")``,
    ``"overlap (r.m.s.)"`` gives ``("overlap (r.m.s.)", "dimensionless")``."""
    match = _UNIT.match(label)
    return (match.group(1), match.group(2)) if match else (label, DIMENSIONLESS)


def _plain(text: str) -> str:
    # Mathtext reduced to what the N and seed patterns read: "$N = 2000$" -> "N = 2000".
    return re.sub(r"\\[a-zA-Z]+|[${}\\]", " ", text)


def _ticks_are_scaled(axis, factor: float) -> bool:
    """Whether the axis' tick labels show its tick positions divided by ``factor``."""
    locs = [v for v in axis.get_majorticklocs() if np.isfinite(v)]
    if not locs:
        return False
    labels = axis.get_major_formatter().format_ticks(locs)
    try:
        shown = [float(str(s).replace("\u2212", "-").replace("$", "")) for s in labels]
    except ValueError:
        return False
    return np.allclose(shown, np.asarray(locs) / factor, rtol=1e-6)


def _name_unit(ax, which: str) -> tuple[str, str]:
    """(quantity, unit) of the panel's ``which`` ("x" or "y") axis, from its label or, for a
    shared axis labelled on one panel only, from a sibling's."""
    shared = getattr(ax, f"get_shared_{which}_axes")().get_siblings(ax)
    label = next(filter(None, (getattr(a, f"get_{which}label")() for a in [ax, *shared])), "")
    name, unit = split_label(label)
    # "(thousands)" of the tick labels, over data that are the quantity itself.
    if unit in SCALES and _ticks_are_scaled(getattr(ax, f"{which}axis"), SCALES[unit]):
        unit = DIMENSIONLESS
    return name, unit


def _panel_title(ax) -> str:
    return next((ax.get_title(loc) for loc in ("center", "left", "right") if ax.get_title(loc)), "")


def _series(artist) -> str:
    label = artist.get_label() or ""
    return "" if label.startswith("_") else label


def _num(x):
    if x is None or np.ma.is_masked(x):
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _marker_only(line) -> bool:
    return line.get_linestyle() in ("None", "none", "", " ") and line.get_marker() not in (
        None, "None", "none", "", " ")


def _polygon_vertices(path) -> np.ndarray:
    """A path's vertices without its CLOSEPOLY/STOP placeholders."""
    from matplotlib.path import Path

    vertices = np.asarray(path.vertices, dtype=float)
    if path.codes is None:
        return vertices
    return vertices[~np.isin(path.codes, (Path.CLOSEPOLY, Path.STOP))]


def _outline(xy, closed: bool) -> list[dict]:
    """An outline's vertices as points, without a closed one's repeated first vertex."""
    if closed and len(xy) > 1 and np.all(xy[0] == xy[-1]):
        xy = xy[:-1]
    return [{"x": x, "y": y} for x, y in xy]


def _mesh_blocks(mesh):
    """(x edges, y edges, values ``(ny, nx)``, stride, (ny, nx) of the mesh) of a rectilinear
    QuadMesh, on a grid of at most ``MESH_MAX_CELLS`` blocks; None if it is not rectilinear."""
    coords = np.asarray(mesh.get_coordinates(), dtype=float)         # (ny + 1, nx + 1, 2)
    values = np.ma.asarray(mesh.get_array()).reshape(coords.shape[0] - 1, coords.shape[1] - 1)
    xs, ys = coords[0, :, 0], coords[:, 0, 1]
    if not (np.all(coords[:, :, 0] == xs) and np.all(coords[:, :, 1] == ys[:, None])):
        return None
    ny, nx = values.shape
    stride = max(1, math.ceil(math.sqrt(ny * nx / MESH_MAX_CELLS)))

    def edges(n):
        idx = list(range(0, n + 1, stride))
        return idx if idx[-1] == n else idx + [n]

    iy, ix = edges(ny), edges(nx)
    return xs[ix], ys[iy], values[np.ix_(iy[:-1], ix[:-1])], stride, (ny, nx)


def figure_rows(fig, *, strict: bool = False) -> list[dict]:
    """The figure's plotted points as rows (dicts keyed by :data:`COLUMNS`; ``None`` where a
    column does not apply). ``strict``: raise ``ValueError`` naming any visible artist in a
    panel that is neither data of a known kind nor a decoration (an image, a curvilinear
    mesh, a patch or collection of another kind), instead of leaving it out."""
    from matplotlib.collections import LineCollection, PathCollection, PolyCollection, QuadMesh
    from matplotlib.container import BarContainer, ErrorbarContainer
    from matplotlib.patches import PathPatch, Polygon, Rectangle
    from matplotlib.path import Path as MplPath
    from matplotlib.text import Annotation

    rows: list[dict] = []
    skipped: list[str] = []
    element = 0
    panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    for index, ax in enumerate(panels):
        title, panel = _panel_title(ax), index + 1
        (x_name, x_unit), (y_name, y_unit) = _name_unit(ax, "x"), _name_unit(ax, "y")
        n_axis = bool(_N_AXIS.match(_plain(x_name).strip()))
        x_scale = SCALES.get(x_unit, 1.0)
        data, xaxis, yaxis = ax.transData, ax.get_xaxis_transform(), ax.get_yaxis_transform()
        consumed: set[int] = set()

        def add(series, kind, points):
            nonlocal element
            label_n = _N_IN.search(_plain(series)) or _N_IN.search(_plain(title))
            seed = _SEED_IN.search(_plain(series)) or _SEED_IN.search(_plain(title))
            for point in points:
                row = dict.fromkeys(COLUMNS)
                row.update(panel=panel, title=title, x_name=x_name, x_unit=x_unit, y_name=y_name,
                           y_unit=y_unit, element=element, series=series, kind=kind)
                row.update({k: (_num(v) if k in NUMERIC else v) for k, v in point.items()})
                if n_axis and row["x"] is not None:
                    n = row["x"] * x_scale
                    row["N"] = int(round(n)) if abs(n - round(n)) < 1e-6 * max(1.0, abs(n)) else n
                elif label_n:
                    row["N"] = int(label_n.group(1).replace(",", ""))
                if seed:
                    row["seed"] = int(seed.group(1))
                rows.append(row)
            element += 1

        for container in ax.containers:
            if isinstance(container, ErrorbarContainer):
                line, caps, bars = container.lines
                consumed.update(map(id, [line, *caps, *bars]))
                if line is None or not line.get_visible():
                    continue
                xy = np.asarray(line.get_xydata(), dtype=float)
                errors = {}
                bars = list(bars)
                for axis in ("x", "y"):
                    if not getattr(container, f"has_{axis}err"):
                        continue
                    segments = bars.pop(0).get_segments()
                    j = 0 if axis == "x" else 1
                    lows = [min(s[0][j], s[1][j]) for s in segments]
                    highs = [max(s[0][j], s[1][j]) for s in segments]
                    at = [s[0][1 - j] for s in segments]   # the coordinate the bar sits at
                    taken = set()
                    for i, point in enumerate(xy):
                        if len(segments) == len(xy):
                            k = i
                        else:
                            k = next((k for k in range(len(segments)) if k not in taken
                                      and at[k] == point[1 - j]
                                      and lows[k] <= point[j] <= highs[k]), None)
                        if k is None:
                            continue
                        taken.add(k)
                        errors.setdefault(i, {}).update({f"{axis}err_minus": point[j] - lows[k],
                                                         f"{axis}err_plus": highs[k] - point[j]})
                add(_series(container), "errorbar",
                    [{"x": x, "y": y, **errors.get(i, {})} for i, (x, y) in enumerate(xy)])
            elif isinstance(container, BarContainer):
                consumed.update(map(id, container.patches))
                # hist() labels the first bar, bar() the container.
                series = _series(container) or next(map(_series, container.patches[:1]), "")
                add(series, "bar",
                    [{"x": p.get_x(), "y": p.get_y(), "width": p.get_width(),
                      "height": p.get_height()} for p in container.patches if p.get_visible()])

        for line in ax.lines:
            if id(line) in consumed or not line.get_visible():
                continue
            xy = np.asarray(line.get_xydata(), dtype=float)
            if xy.size == 0:
                continue   # a legend proxy
            transform = line.get_transform()
            if transform == data:
                style = line.get_drawstyle() or "default"
                kind = style if style.startswith("steps-") else (
                    "markers" if _marker_only(line) else "line")
                add(_series(line), kind, [{"x": x, "y": y} for x, y in xy])
            elif transform == xaxis:
                add(_series(line), "vline", [{"x": xy[0, 0]}])
            elif transform == yaxis:
                add(_series(line), "hline", [{"y": xy[0, 1]}])
            else:
                skipped.append(f"panel {panel}: a line in other coordinates ({line.get_label()})")

        for coll in ax.collections:
            if id(coll) in consumed or not coll.get_visible():
                continue
            if isinstance(coll, QuadMesh):
                blocks = _mesh_blocks(coll)
                if blocks is None:
                    skipped.append(f"panel {panel}: a curvilinear mesh")
                    continue
                xs, ys, values, stride, (ny, nx) = blocks
                series = _series(coll)
                if stride > 1:
                    note = (f"colour mesh of {ny} x {nx} cells, in blocks of {stride} x {stride} "
                            "showing each block's first cell")
                    series = f"{series}; {note}" if series else note
                add(series, "mesh", [{"x": xs[j], "y": ys[i], "width": xs[j + 1] - xs[j],
                                      "height": ys[i + 1] - ys[i], "value": values[i, j]}
                                     for i in range(values.shape[0])
                                     for j in range(values.shape[1])])
            elif isinstance(coll, PathCollection):
                if coll.get_offset_transform() != data:
                    skipped.append(f"panel {panel}: a scatter in other coordinates")
                    continue
                offsets = np.ma.asarray(coll.get_offsets())
                if offsets.size == 0:
                    continue
                colour = coll.get_array()
                add(_series(coll), "scatter",
                    [{"x": x, "y": y, "value": None if colour is None or len(colour) != len(offsets)
                      else colour[i]} for i, (x, y) in enumerate(offsets)])
            elif isinstance(coll, (PolyCollection, LineCollection)) and coll.get_transform() == data:
                kind = "polyline" if isinstance(coll, LineCollection) else "polygon"
                for path in coll.get_paths():
                    points = _outline(_polygon_vertices(path), kind == "polygon")
                    if points:
                        add(_series(coll), kind, points)
            else:
                skipped.append(f"panel {panel}: a {type(coll).__name__}")

        for patch in ax.patches:
            if id(patch) in consumed or not patch.get_visible():
                continue
            transform = patch.get_data_transform()   # without the patch's own box
            if isinstance(patch, Rectangle):
                x, y, w, h = patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height()
                if transform == data:
                    add(_series(patch), "rectangle", [{"x": x, "y": y, "width": w, "height": h}])
                elif transform == xaxis:
                    add(_series(patch), "xspan", [{"x": x, "width": w}])
                elif transform == yaxis:
                    add(_series(patch), "yspan", [{"y": y, "height": h}])
                else:
                    skipped.append(f"panel {panel}: a rectangle in other coordinates")
            elif isinstance(patch, (Polygon, PathPatch)) and transform == data:
                # A filled or step histogram, a fill: its outline, vertex by vertex.
                if isinstance(patch, Polygon):
                    xy, closed = np.asarray(patch.get_xy(), dtype=float), patch.get_closed()
                else:
                    path = patch.get_path()
                    xy = _polygon_vertices(path)
                    closed = path.codes is not None and path.codes[-1] == MplPath.CLOSEPOLY
                points = _outline(xy, closed)
                if points:
                    add(_series(patch), "polygon" if closed else "open polygon", points)
            else:
                skipped.append(f"panel {panel}: a {type(patch).__name__}")

        for text in ax.texts:
            if isinstance(text, Annotation) or not text.get_visible() or not text.get_text():
                continue   # annotations point at things; labels in axes coordinates are not data
            if text.get_transform() == data:
                x, y = text.get_position()
                add("", "text", [{"x": x, "y": y, "text": text.get_text()}])
        if ax.images:
            skipped.append(f"panel {panel}: {len(ax.images)} image(s)")
    if strict and skipped:
        raise ValueError("figure_rows(strict=True): artists with no rows: " + "; ".join(skipped))
    return rows


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)   # the shortest text that reads back to the same float
    return str(value)


def figure_csv(fig) -> str:
    """The figure's rows (:func:`figure_rows`) as CSV text with a header line."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in figure_rows(fig):
        writer.writerow([_cell(row[c]) for c in COLUMNS])
    return out.getvalue()


def read_csv(text: str) -> list[dict]:
    """Rows of a CSV written by :func:`figure_csv`, numbers as floats (``N``, ``seed``,
    ``element`` as ints), empty cells as ``None``."""
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise ValueError(f"text must have the header {','.join(COLUMNS)}, got {reader.fieldnames}")
    rows = []
    for raw in reader:
        # Names and labels stay text ("" for none); other empty cells are None.
        row = {k: (v if v != "" or k in TEXT else None) for k, v in raw.items()}
        for key in NUMERIC:
            row[key] = None if row[key] is None else float(row[key])
        for key in ("panel", "element", "seed"):
            row[key] = None if row[key] is None else int(row[key])
        if row["N"] is not None:
            n = float(row["N"])
            row["N"] = int(n) if n.is_integer() else n
        if row["kind"] not in KINDS:
            raise ValueError(f"text has a row of unknown kind {row['kind']!r}")
        rows.append(row)
    return rows


def _label(name: str, unit: str) -> str:
    return name if unit == DIMENSIONLESS else f"{name} ({unit})"


def replot(rows):
    """Draw rows (from :func:`read_csv`, or CSV text) again, one panel per ``panel`` (in order), with
    the titles and axis labels they name. Returns a ``matplotlib.figure.Figure`` whose
    :func:`figure_rows` are the same points; styles (colours, line widths) are
    matplotlib's defaults."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Polygon, Rectangle

    rows = read_csv(rows) if isinstance(rows, str) else rows
    panels: dict[int, list[dict]] = {}
    for row in sorted(rows, key=lambda r: r["panel"]):   # stable: elements keep their order
        panels.setdefault(row["panel"], []).append(row)
    ncols = min(3, max(1, len(panels)))
    fig, axes = plt.subplots(math.ceil(len(panels) / ncols) if panels else 1, ncols,
                             squeeze=False, figsize=(3.0 * ncols, 2.6 * max(1, len(panels) // ncols)))
    for ax in axes.flat[len(panels):]:
        ax.remove()
    for ax, panel in zip(axes.flat, panels.values()):
        first = panel[0]
        ax.set(title=first["title"], xlabel=_label(first["x_name"] or "", first["x_unit"]),
               ylabel=_label(first["y_name"] or "", first["y_unit"]))
        elements: dict[int, list[dict]] = {}
        for row in panel:
            elements.setdefault(row["element"], []).append(row)
        for group in elements.values():
            kind, label = group[0]["kind"], group[0]["series"] or None
            x = np.array([r["x"] if r["x"] is not None else np.nan for r in group])
            y = np.array([r["y"] if r["y"] is not None else np.nan for r in group])

            def col(key):
                return np.array([r[key] if r[key] is not None else 0.0 for r in group])

            if kind in ("line", "markers") or kind.startswith("steps-"):
                style = {"ls": "none", "marker": "o"} if kind == "markers" else (
                    {"drawstyle": kind} if kind.startswith("steps-") else {})
                ax.plot(x, y, label=label, **style)
            elif kind == "errorbar":
                has = {a: any(r[f"{a}err_minus"] is not None for r in group) for a in "xy"}
                err = {f"{a}err": np.vstack([col(f"{a}err_minus"), col(f"{a}err_plus")])
                       for a in "xy" if has[a]}
                ax.errorbar(x, y, fmt="o", capsize=3, label=label, **err)
            elif kind == "bar":
                ax.bar(x, col("height"), col("width"), bottom=y, align="edge", label=label)
            elif kind == "hline":
                ax.axhline(y[0], label=label)
            elif kind == "vline":
                ax.axvline(x[0], label=label)
            elif kind == "xspan":
                ax.axvspan(x[0], x[0] + col("width")[0], alpha=0.2, label=label)
            elif kind == "yspan":
                ax.axhspan(y[0], y[0] + col("height")[0], alpha=0.2, label=label)
            elif kind == "rectangle":
                ax.add_patch(Rectangle((x[0], y[0]), col("width")[0], col("height")[0], label=label))
            elif kind in ("polygon", "open polygon"):
                ax.add_patch(Polygon(np.column_stack([x, y]), closed=kind == "polygon",
                                     alpha=0.3, label=label))
            elif kind == "polyline":
                ax.add_collection(LineCollection([np.column_stack([x, y])], label=label))
            elif kind == "scatter":
                values = [r["value"] for r in group]
                ax.scatter(x, y, s=6, label=label,
                           c=None if any(v is None for v in values) else values)
            elif kind == "mesh":
                xs = sorted(set(x.tolist()))
                ys = sorted(set(y.tolist()))
                last = group[-1]
                xs.append(xs[-1] + last["width"])       # the last cell's far edges
                ys.append(ys[-1] + last["height"])
                grid = np.full((len(ys) - 1, len(xs) - 1), np.nan)
                for r in group:
                    grid[ys.index(r["y"]), xs.index(r["x"])] = r["value"]
                ax.pcolormesh(np.array(xs), np.array(ys), grid, label=label)
            elif kind == "text":
                for r in group:
                    ax.text(r["x"], r["y"], r["text"])
            ax.autoscale_view()
    plt.close(fig)
    return fig


def register(shell) -> None:
    """Give every figure ``shell`` displays its :func:`figure_csv` as ``text/csv``
    (:func:`~twostep.pages.figure_checks.register_figure_mime`)."""
    register_figure_mime(shell, "text/csv", "_repr_csv_", figure_csv)


def same_points(rows_a, rows_b, rtol: float = 1e-12) -> list[str]:
    """Where two sets of rows (:func:`figure_rows`, :func:`read_csv`) differ, element by
    element (each one's panel, kind, series, text, N, seed and numbers, within ``rtol``);
    elements are compared in sorted order, not by their numbers, and panels by their order
    (a replot numbers only the panels that hold data). Empty when the same."""
    def elements(rows):
        grouped: dict = {}
        for row in rows:
            grouped.setdefault((row["panel"], row["element"]), []).append(row)
        rank = {p: i for i, p in enumerate(sorted({p for p, _ in grouped}))}
        out = []
        for (panel, _), group in grouped.items():
            first = group[0]
            head = (rank[panel], first["title"], first["kind"], first["series"], first["x_name"],
                    first["x_unit"], first["y_name"], first["y_unit"])
            rest = tuple((r["text"], r["N"], r["seed"]) for r in group)
            numbers = np.array([[np.nan if r[k] is None else r[k] for k in NUMERIC]
                                for r in group], dtype=float)
            out.append((head, rest, numbers))
        # NaN (an empty cell) sorts first; lists with NaN would not sort consistently.
        return sorted(out, key=lambda e: (e[0], str(e[1]),
                                          np.nan_to_num(e[2], nan=-np.inf).round(9).tolist()))

    a, b = elements(rows_a), elements(rows_b)
    if len(a) != len(b):
        return [f"{len(a)} elements against {len(b)}"]
    problems = []
    for (head_a, rest_a, num_a), (head_b, rest_b, num_b) in zip(a, b):
        if head_a != head_b or rest_a != rest_b or num_a.shape != num_b.shape or not np.allclose(
                num_a, num_b, rtol=rtol, atol=rtol, equal_nan=True):
            problems.append(f"panel {head_a[0] + 1} {head_a[1:4]} differs from {head_b[1:4]}")
    return problems


class CSVRenderPlugin:
    """myst-nb's mime render plugin (entry point ``myst_nb.mime_renderers``, pyproject.toml)
    for a figure's ``text/csv`` and its defects (``figure_checks.MIME``): the page shows the
    figure, not its table or its checks, so both render to nothing; without it myst-nb
    would warn "unknown output mime type" and fail the strict build. The build offers the CSV as a download instead (``tools/figure_downloads.py``)."""

    mime_priority_overrides = [("*", "text/csv", None), ("*", _DEFECTS_MIME, None)]

    @staticmethod
    def handle_mime(renderer, data, inline):
        return [] if data.mime_type in ("text/csv", _DEFECTS_MIME) else None
