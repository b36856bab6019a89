"""A caption's colour words against the colours a figure draws (checked by the build).

The rule, checkable on every glued figure: **a colour word in a caption names the colour of
what it describes**. The figure's kernel reports each drawn artist's label and colours as
seen on white (``figure_checks.drawn_series``, in the figure's ``figure_checks.MIME``
output); ``tools/figure_downloads.py`` reads them beside the caption and warns on every
mismatch, so the strict build fails on it. A colour word binds to the series its clause
names:

* the caption is cut into clauses at ``; : , ( )``, a full stop and a spaced dash;
* the series a clause names are the artists whose label (read as plain text, like alt
  text) appears in it as words of their own;
* a clause of nothing but colour and style words ("Grey:", "(grey)", "dotted grey line")
  names what the clause after its colon, or before its parenthesis, names;
* every artist so named must be drawn in that colour; where a colour word names no series,
  something in the figure (a line, a bar, a text) must be drawn in it.

So "Grey: leading powers ρ² and ρ⁶" fails when the lines labelled ρ² and ρ⁶ are drawn black.
A colour word matches a colour by its family (:func:`colour_families`): lightness for black,
grey and white, hue for the others, with overlapping ranges where names overlap (the
Dark2 palette's #7570b3 is both blue and purple).
"""

from __future__ import annotations

import colorsys
import re

#: Each colour word of a caption, as the family it names.
COLOUR_WORDS = {
    "black": "black", "grey": "grey", "gray": "grey", "white": "white", "red": "red",
    "orange": "orange", "ochre": "ochre", "yellow": "yellow", "brown": "brown",
    "green": "green", "teal": "teal", "blue": "blue", "purple": "purple", "violet": "purple",
    "pink": "pink", "magenta": "pink",
}
# Hue ranges (degrees, inclusive) of the chromatic families; red wraps around 0.
_HUES = {"red": (340, 20), "orange": (15, 45), "ochre": (28, 50), "yellow": (45, 70),
         "brown": (0, 45), "green": (70, 170), "teal": (150, 200), "blue": (185, 255),
         "purple": (240, 320), "pink": (295, 345)}
#: Words that only say how something is drawn: a clause of these and colour words names
#: nothing itself.
STYLE_WORDS = frozenset("""
    a an the and or in line lines curve curves marker markers point points dot dots tick ticks
    dotted dashed solid dash-dotted dash dashes thin thick faint light dark bold open filled
    shaded shading histogram histograms bar bars outline outlines area band bands symbol
    symbols circle circles square squares triangle triangles cross crosses
""".split())
_WORD = re.compile(r"\b(" + "|".join(COLOUR_WORDS) + r")(?:ish)?\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[;:,()]|\.(?=\s|$)|\s[—–-]\s")


def colour_families(colour: str) -> set[str]:
    """The colour words' families a ``#rrggbb`` colour belongs to: black (lightness below
    0.3), grey (0.25 to 0.92, or any weakly coloured one), white (above 0.92) for colours of
    chroma below 0.1; otherwise by hue (:data:`_HUES`; brown only when dark)."""
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    hue, lightness, _ = colorsys.rgb_to_hls(r, g, b)
    chroma = max(r, g, b) - min(r, g, b)
    if chroma < 0.1:
        found = set()
        if lightness < 0.3:
            found.add("black")
        if 0.25 <= lightness <= 0.92:
            found.add("grey")
        if lightness > 0.92:
            found.add("white")
        return found
    found = {"grey"} if chroma < 0.2 else set()
    degrees = hue * 360
    for family, (low, high) in _HUES.items():
        inside = low <= degrees <= high if low <= high else (degrees >= low or degrees <= high)
        if inside and (family != "brown" or lightness < 0.35):
            found.add(family)
    return found


def clauses(text: str) -> list[tuple[str, str, str]]:
    """(separator before, clause, separator after) of a caption's text, in order."""
    out, start, before = [], 0, ""
    for match in _CLAUSE_END.finditer(text):
        out.append((before, text[start:match.start()], match.group(0).strip()))
        start, before = match.end(), match.group(0).strip()
    out.append((before, text[start:], ""))
    return out


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _names_in(clause: str, labels: list[str]) -> list[str]:
    """The labels that appear in ``clause`` as words of their own (both read plainly)."""
    text = _norm(clause)
    found = []
    for label in labels:
        plain = _norm(label)
        if len(plain) < 2 and plain.isascii():
            continue
        if re.search(r"(?<!\w)" + re.escape(plain) + r"(?!\w)", text):
            found.append(label)
    return found


def _bare(clause: str) -> bool:
    words = re.findall(r"[\w-]+", clause.casefold())
    return bool(words) and all(w in STYLE_WORDS or w in COLOUR_WORDS
                               or w.removesuffix("ish") in COLOUR_WORDS for w in words)


def caption_colour_problems(caption: str, series: list[dict], plain=lambda s: s) -> list[str]:
    """Where the caption's colour words and the drawn colours disagree, one line each.

    ``caption`` is the caption as plain text; ``series`` the figure's drawn artists
    (``figure_checks.drawn_series``: dicts with ``label``, ``kind`` and ``colors``);
    ``plain`` reads a label as plain text (TeX to Unicode, as the caption's maths is read)."""
    artists = [dict(s, plain=plain(s["label"])) for s in series]
    labels = sorted({a["plain"] for a in artists if a["plain"] and a["kind"] != "text"},
                    key=len, reverse=True)
    parts = clauses(caption)
    problems = []
    for i, (before, clause, after) in enumerate(parts):
        for match in _WORD.finditer(clause):
            family = COLOUR_WORDS[match.group(1).lower()]
            names = _names_in(clause, labels)
            if not names and _bare(clause):
                if after == ":" and i + 1 < len(parts):
                    names = _names_in(parts[i + 1][1], labels)
                elif before == "(" and i > 0:
                    names = _names_in(parts[i - 1][1], labels)
            if names:
                for artist in artists:
                    if artist["plain"] in names and not any(
                            family in colour_families(c) for c in artist["colors"]):
                        drawn = ", ".join(artist["colors"])
                        problems.append(f"the caption calls '{artist['plain']}' {match.group(1)}, "
                                        f"but it is drawn {drawn} (panel {artist['panel']})")
            elif not any(family in colour_families(c) for a in artists for c in a["colors"]):
                problems.append(f"the caption says {match.group(1)!r} ({clause.strip()!r}), but "
                                f"nothing in the figure is drawn {family}")
    return list(dict.fromkeys(problems))
