"""Putting computed numbers and tables into a chapter's text."""

from __future__ import annotations

import math
import re

import numpy as np

from ..analysis.verdicts import SYMBOLS

MINUS = "\u2212"
# A hyphen-minus used as a sign: at the start or after a space, bracket, comma,
# operator or slash, and before a digit (or ".5"); not "1e-05", "2026-12", "x-1".
_SIGN = re.compile(r"(?<![\w.)\]}%'\u2032-])-(?=\.?\d)")
# A signed zero such as "-0", "-0.00", "-0.0%": formatting rounded a tiny negative to zero.
_NEGATIVE_ZERO = re.compile(r"(?<![\w.)\]}%'\u2032-])[-\u2212](?=0+(?:\.0+)?(?:e[-+]?\d+)?(?![\d.]))")
# Inline and display math: MathJax typesets its own minus signs.
_MATH = re.compile(r"(\$\$.*?\$\$|\$[^$]*\$)", re.DOTALL)

def minus_sign(text: str) -> str:
    """``text`` with true minus signs (U+2212) and no sign on a number rounded to zero."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    parts = _MATH.split(text)
    for i in range(0, len(parts), 2):   # the odd parts are math
        parts[i] = _SIGN.sub(MINUS, _NEGATIVE_ZERO.sub("", parts[i]))
    return "".join(parts)

def num(x, spec: str = ".2f") -> str:
    """``format(x, spec)`` with a true minus sign and no negative zero."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"x must be a real number, got {type(x).__name__}")
    return minus_sign(format(x.item() if isinstance(x, np.generic) else x, spec))

def glue_numbers(**values) -> None:
    """Glue each ``name=value`` for ``{glue:text}`name:fmt``` in the prose."""
    from myst_nb import glue

    for name, value in values.items():
        glue(name, value.item() if isinstance(value, np.generic) else value, display=False)

_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")

def sig(x: float) -> str:
    """A spread for a caption, rounded to one significant digit (two where the first is a 1)."""
    if x == 0:
        return "0"
    digits = 2 if f"{x:.0e}"[0] == "1" else 1
    r = float(f"{x:.{digits - 1}e}")
    return f"{r:.{max(0, digits - 1 - math.floor(math.log10(r)))}f}"

def pm(mean: float, sem: float, decimals: int = 2, *, signed: bool = False,
       adaptive: bool = True) -> str:
    """``0.46 ± 0.03``: a mean and its standard error, a spread below the precision as a bound."""
    half = 0.5 * 10.0 ** -decimals
    if adaptive and half / 10 <= sem < half:
        decimals, half = decimals + 1, half / 10
    spread = f"< {half:.{decimals + 1}f}" if sem < half else f"{sem:.{decimals}f}"
    text = minus_sign(f"{mean:.{decimals}f}") + " ± " + spread
    return "+" + text if signed and not text.startswith(MINUS) else text

def cell(summary, value: str, index=(), decimals: int = 3, *, signed: bool = False,
         **point) -> str:
    """The table cell :func:`pm` of ``value[index]`` at one point of a ``Summary``."""
    return pm(summary.at(value, index, **point), summary.at(value, index, sem=True, **point),
              decimals, signed=signed)

def sci(x, digits: int = 1) -> str:
    """``x`` as text in scientific notation for prose: ``sci(2.4e28) == "2.4 × 10²⁸"``."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"x must be a real number, got {type(x).__name__}")
    if not isinstance(digits, (int, np.integer)) or isinstance(digits, bool) or not 1 <= digits <= 6:
        raise ValueError(f"digits must be an integer in [1, 6], got {digits!r}")
    x = float(x)
    if not np.isfinite(x):
        raise ValueError(f"x must be finite, got {x}")
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    exponent = int(exponent)
    if -2 <= exponent <= 2:
        # Rounded to `digits` significant digits first, so 999.7 does not print as "1000".
        decimals = max(0, digits - 1 - exponent)
        return minus_sign(f"{float(mantissa + 'e' + str(exponent)):.{decimals}f}")
    power = "10" + str(exponent).translate(_SUPERSCRIPT)
    if digits == 1 and float(mantissa) in (1.0, -1.0):
        return power if float(mantissa) > 0 else MINUS + power
    return f"{mantissa.replace('-', MINUS)} \u00d7 {power}"

def _cell(text: str) -> str:
    """A pipe-table cell's text with every "|" that would end the cell escaped."""
    parts = _MATH.split(text)
    for i, part in enumerate(parts):
        if i % 2:
            # The table reads "\|" as an escaped "|", so neither may reach MathJax as is.
            parts[i] = re.sub(r"\\?\|", lambda m: r"\Vert " if m.group(0) == r"\|" else r"\vert ", part)
        else:
            parts[i] = re.sub(r"(?<!\\)\|", r"\\|", part)
    return "".join(parts)

def markdown_table(caption: str, label: str, header, rows):
    """A MyST ``{table}`` directive with ``caption`` and ``:name: label`` around a pipe table."""
    from IPython.display import Markdown

    if not isinstance(caption, str) or not isinstance(label, str):
        raise TypeError("caption and label must be strings")
    if "`" in caption:
        # A backtick fence's info string may not contain backticks: the table would render as text.
        raise ValueError(f"caption must not contain backticks (use plain text or $math$), got {caption!r}")
    # Negative numbers in cells get a true minus sign; nothing prints as "-0.00". A "|"
    # would end the cell, even inside $...$: escaped in text, \vert in maths.
    header = [_cell(str(h)) for h in header]
    rows = [[_cell(minus_sign(str(c))) for c in row] for row in rows]
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"rows[{i}] has {len(row)} cells, the header has {len(header)}")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return Markdown(f"```{{table}} {caption}\n:name: {label}\n\n" + "\n".join(lines) + "\n```")

def tables(*shown):
    """Several :func:`markdown_table` outputs as one cell output."""
    from IPython.display import Markdown

    return Markdown("\n\n".join(t.data for t in shown))

#: The widths of the landing page's table of verdicts at each width (the chapters' and the
#: results files' widths together).
VERDICT_WIDTHS = (500, 1000, 2000, 4000, 8000, 16000, 24000)

#: How the table of verdicts at each width writes each label (its caption gives the key).
VERDICT_SYMBOLS = SYMBOLS

def width_verdicts(names, labels: dict) -> dict:
    """The glue values of one row of the landing page's table of verdicts at each width.

    ``names`` spells the row's glue names, one per width of :data:`VERDICT_WIDTHS` in its
    order, each ``<prefix>_<N>`` with one prefix (so a chapter writes every name it glues);
    ``labels`` maps a width ``N`` to the verdict label there. Returns ``{name: symbol}``: the
    label's :data:`VERDICT_SYMBOLS` symbol, or "—" where the row has no measurement at that
    width (widths of ``labels`` outside the table are not shown)."""
    if not isinstance(names, (tuple, list)) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"names must be a tuple of glue names, got {names!r}")
    prefix = names[0].rsplit("_", 1)[0] if names else ""
    expected = [f"{prefix}_{N}" for N in VERDICT_WIDTHS]
    if not prefix.isidentifier() or list(names) != expected:
        raise ValueError(f"names must be <prefix>_<N> for N in {VERDICT_WIDTHS}, in that "
                         f"order (e.g. {tuple(expected) if prefix.isidentifier() else ()}), "
                         f"got {tuple(names)}")
    if not isinstance(labels, dict):
        raise TypeError(f"labels must be a dict {{width: verdict label}}, got "
                        f"{type(labels).__name__}")
    bad = sorted({str(v) for v in labels.values()} - set(VERDICT_SYMBOLS))
    if bad:
        raise ValueError(f"labels must be verdict labels {sorted(VERDICT_SYMBOLS)}, got {bad}")
    return {name: VERDICT_SYMBOLS[str(labels[N])] if N in labels else "—"
            for name, N in zip(names, VERDICT_WIDTHS)}

#: How a plain-verdict sentence says each label (twostep.analysis.verdicts.LABELS).
PLAIN = {
    "confirmed": "confirmed at these widths",
    "consistent, not resolved": "consistent with the measurements, not resolved",
    "not reached at these widths": "not reached at these widths",
    "not judged": "not judged (too few independent draws)",
    "differs from the prediction": "measured, but different from the book's prediction",
    "contradicted": "contradicted by the measurements",
}

def plain(claim: str, verdict, evidence: str, expected: str | None = None) -> str:
    """One sentence of the landing page's plain verdict, worded by the verdict's label."""
    label = str(verdict)
    if label not in PLAIN:
        raise ValueError(f"verdict must be a verdict label {sorted(PLAIN)}, got {label!r}")
    for name, text in (("claim", claim), ("evidence", evidence)):
        if not isinstance(text, str) or not text.strip():
            raise TypeError(f"{name} must be a non-empty string, got {text!r}")
    tail = (f"; the book's theory expects it from {expected}"
            if expected and label == "not reached at these widths" else "")
    return minus_sign(f"{claim}: {PLAIN[label]} ({evidence}){tail}.")
