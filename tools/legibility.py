"""Tables and figures a reader can read (a Sphinx extension, and the rule for figures).

Values in table cells stay whole (:class:`TableValues`).

**No figure is read with text below 8 pt.** Figures are drawn for the text column with
their smallest text at 9 pt (``twostep.pages.figures``), and the pages show them at their
drawn size wherever the column holds them (1280 and 1024 px). Where it does not (a phone,
390 px), a figure is scaled to the column, whole, so that the page never scrolls sideways
and the figure can be taken in at a glance; its text may then be smaller than 8 pt, and a tap
on it (or on its button) opens it at its drawn size, where its text is 9 pt
(``_static/twostep.js``). The browser tests check both: at the laptop widths every figure's
smallest text as shown (:func:`image_facts` of the image, times its shown / drawn width) is
8 pt or more; at 390 px every figure is whole in the column, and every one shown below 8 pt
opens on a tap at :func:`min_shown_width` or wider.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

# A cell short enough to read as one value ("6.6 × 10⁹", "(0.3, 0.3)", "0.25 ± 0.01").
VALUE_CELL_MAX = 32
_INSIDE_VALUE = (
    re.compile(r"(?<=[\d)⁰-⁹]) (?=[×±] )|(?<=[×±]) (?=[\d(−-])"),        # 6.6 × 10⁹, 0.2 ± 0.1
    re.compile(r"[(\[][ \d.,+−eE×⁰-⁹-]{1,40}[)\]]"),                      # (0.3, 0.3), [1, 2]
    re.compile(r"(?<=[(\[])[ ]+|[ ]+(?=[)\]])"),                          # ( 0.4, 0.25 )
)


def keep_whole(text: str) -> str:
    """``text`` with the spaces inside each value made no-break spaces (and none just inside
    brackets): "6.6 × 10⁹" and "(0.3, 0.3)" stay on one line."""
    text = _INSIDE_VALUE[2].sub("", text)
    for pattern in _INSIDE_VALUE[:2]:
        text = pattern.sub(lambda m: m.group(0).replace(" ", "\u00a0"), text)
    return text


class TableValues(SphinxPostTransform):
    """Values in table cells kept whole: a short body cell with a digit gets the class
    ``value`` (CSS: no wrapping), and in longer body cells the spaces inside a value become
    no-break spaces (:func:`keep_whole`). Column titles may wrap."""

    default_priority = 310

    def run(self, **kwargs):
        for entry in self.document.findall(nodes.entry):
            if isinstance(entry.parent.parent, nodes.thead):
                continue  # a column's title is words: it wraps where the column needs it
            text = " ".join(entry.astext().split())
            if len(text) <= VALUE_CELL_MAX and re.search(r"\d", text):
                entry["classes"].append("value")
            for node in list(entry.findall(nodes.Text)):
                if isinstance(node.parent, (nodes.math, nodes.literal)):
                    continue
                new = keep_whole(str(node))
                if new != str(node):
                    node.parent.replace(node, nodes.Text(new))


MIN_READABLE_PT = 8.0
# Text of an SVG drawn by matplotlib with svg.fonttype "path": one group per run of
# text, scaled by its font size / 100 (in points at the drawn size).
_SVG_TEXT_SCALE = re.compile(rb"scale\(([\d.]+) -\1\)")
_SVG_WIDTH = re.compile(rb'<svg[^>]*?\swidth="([\d.]+)(pt|px)?"')


def image_facts(path: Path) -> tuple[float, float | None] | None:
    """(natural width in CSS px, smallest font in pt at that width or None) of an SVG or
    PNG image; None for anything else."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if path.suffix == ".svg":
        match = _SVG_WIDTH.search(data[:4000])
        if not match:
            return None
        width = float(match.group(1)) * (4 / 3 if match.group(2) in (b"pt", None) else 1)
        sizes = [100 * float(s) for s in _SVG_TEXT_SCALE.findall(data)]
        return width, (min(sizes) if sizes else None)
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return float(int.from_bytes(data[16:20], "big")), None
    return None


def min_shown_width(width: float, smallest_pt: float | None) -> int:
    """The narrowest an image of natural ``width`` (CSS px) can be shown with its smallest
    text, ``smallest_pt`` at that width, still 8 pt (PNG, or an SVG without text: as if its
    smallest text were the book style's)."""
    if smallest_pt is None:
        from twostep.pages.figures import SMALLEST_FONT_PT

        smallest_pt = SMALLEST_FONT_PT
    return int(-(-width * min(1.0, MIN_READABLE_PT / smallest_pt) // 1))


def setup(app):
    app.add_post_transform(TableValues)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
