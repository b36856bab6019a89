"""Putting computed numbers and tables into a chapter's text.

Every number the book states is computed by the chapter and inserted with
myst-nb's ``glue``; tables are MyST ``{table}`` directives built from computed
rows. Both live here so the chapters do not each carry a copy, with the typography of
numbers: a true minus sign (U+2212) for negative numbers and no negative zero
(``num``, ``sci``, ``minus_sign``, and every cell of ``markdown_table``). Numbers
glued as numbers and formatted in the prose (``{glue:text}`key:.2f```) get the
same treatment at build time (``tools/upstream_internals.py`` calls ``minus_sign``).
"""

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
    """``text`` with every negative number's hyphen-minus replaced by a true minus sign
    (U+2212), and the sign of a number rounded to zero dropped: ``"-0.00"`` becomes
    ``"0.00"``, ``"(-0.3, 2)"`` becomes ``"(−0.3, 2)"``. Math (``$...$``) is left as
    it is, and so are hyphens that are not signs (``"2026-12-01"``, ``"x-1"``, ``"1e-05"``).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    parts = _MATH.split(text)
    for i in range(0, len(parts), 2):   # the odd parts are math
        parts[i] = _SIGN.sub(MINUS, _NEGATIVE_ZERO.sub("", parts[i]))
    return "".join(parts)


def num(x, spec: str = ".2f") -> str:
    """``format(x, spec)`` for prose and tables, with a true minus sign and no negative
    zero: ``num(-0.004) == "0.00"``, ``num(-1.5, ".1f") == "−1.5"``."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"x must be a real number, got {type(x).__name__}")
    return minus_sign(format(x.item() if isinstance(x, np.generic) else x, spec))


def glue_numbers(**values) -> None:
    """Glue each ``name=value`` for ``{glue:text}`name:fmt``` in the prose.

    numpy scalars are passed on as plain Python numbers, whose text myst-nb can
    format (numpy 2 prints ``np.float64(...)``); nothing is displayed in place.
    """
    from myst_nb import glue

    for name, value in values.items():
        glue(name, value.item() if isinstance(value, np.generic) else value, display=False)


def quoted(values: dict, *names: str, prefix: str = "") -> dict:
    """The entries ``names`` of ``values`` that a page quotes, each renamed ``prefix + name``:
    a page glues what its prose inserts, not every number a function computes
    (tests/site/test_glue_used.py fails on a glued value no page references)."""
    if not isinstance(values, dict):
        raise TypeError(f"values must be a dict, got {type(values).__name__}")
    missing = [name for name in names if name not in values]
    if missing:
        raise KeyError(f"names not among the values: {', '.join(missing)}")
    return {prefix + name: values[name] for name in names}


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def sig(x: float) -> str:
    """A spread for a caption, ``x >= 0`` rounded to one significant digit, two where the
    first is a 1: ``sig(0.0034) == "0.003"``, ``sig(0.0123) == "0.012"``, ``sig(0) == "0"``."""
    if x == 0:
        return "0"
    digits = 2 if f"{x:.0e}"[0] == "1" else 1
    r = float(f"{x:.{digits - 1}e}")
    return f"{r:.{max(0, digits - 1 - math.floor(math.log10(r)))}f}"


def pm(mean: float, sem: float, decimals: int = 2, *, signed: bool = False,
       adaptive: bool = True) -> str:
    """``0.46 ± 0.03``: a mean and its standard error over seeds, with ``decimals`` decimals,
    one more where a nonzero standard error would round to zero (unless ``adaptive=False``).
    A spread below the printed precision is written as a bound, never as ``± 0.00``:
    ``pm(1.0, 0.0, 3) == "1.000 ± < 0.0005"``. ``signed`` puts "+" before a mean that is not
    negative (a paired difference: ``pm(0.012, 0.004, 3, signed=True) == "+0.012 ± 0.004"``).
    """
    half = 0.5 * 10.0 ** -decimals
    if adaptive and half / 10 <= sem < half:
        decimals, half = decimals + 1, half / 10
    spread = f"< {half:.{decimals + 1}f}" if sem < half else f"{sem:.{decimals}f}"
    text = minus_sign(f"{mean:.{decimals}f}") + " ± " + spread
    return "+" + text if signed and not text.startswith(MINUS) else text


def cell(summary, value: str, index=(), decimals: int = 3, *, signed: bool = False,
         **point) -> str:
    """The table cell :func:`pm` of ``value[index]`` at one point of a
    :class:`~twostep.analysis.summary.Summary`: its mean and standard error over seeds."""
    return pm(summary.at(value, index, **point), summary.at(value, index, sem=True, **point),
              decimals, signed=signed)


def sci(x, digits: int = 1) -> str:
    """``x`` as text in scientific notation for prose: ``sci(2.4e28) == "2.4 × 10²⁸"``.

    ``digits`` significant digits in the mantissa (1 to 6); with one digit a mantissa of
    1 is dropped (``sci(1e7) == "10⁷"``). A number that rounds to between 0.01 and 1000
    is written plainly with ``digits`` significant digits (``sci(800, 2) == "800"``,
    ``sci(0.0123, 2) == "0.012"``, ``sci(0.5, 2) == "0.50"``); from 1000 on, powers of
    ten (``sci(999.7, 2) == "1.0 × 10³"``). Negative numbers get a true minus sign, and
    zero is ``"0"``. Glue the string and insert it with ``{glue:text}`name```: Python's
    ``e`` format (``2e+28``) is not how a paper writes numbers.
    """
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
    """A MyST ``{table}`` directive with ``caption`` and ``:name: label`` around a pipe table.

    ``header`` is a sequence of column titles and ``rows`` a sequence of rows of
    cell strings, each as long as ``header``. Returns an ``IPython.display.Markdown``
    object, rendered as MyST by a chapter with ``render_markdown_format: myst``.
    """
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
    """Several :func:`markdown_table` outputs as one cell output: tables that each fit the
    column and together hold every column of a wider table they replace."""
    from IPython.display import Markdown

    return Markdown("\n\n".join(t.data for t in shown))


#: The widths of the landing page's table of verdicts at each width (the chapters' and the
#: results files' widths together).
VERDICT_WIDTHS = (500, 1000, 2000, 4000, 8000, 16000, 24000)


#: How the table of verdicts at each width writes each label (its caption gives the key).
VERDICT_SYMBOLS = SYMBOLS


def width_verdicts(prefix: str, labels: dict) -> dict:
    """Glue values ``<prefix>_<N>`` for every width ``N`` of :data:`VERDICT_WIDTHS`: the
    verdict ``labels[N]`` at that width as its :data:`VERDICT_SYMBOLS` symbol, or "—" where
    the row has no measurement there (widths of ``labels`` outside the table are not shown)."""
    if not isinstance(prefix, str) or not prefix.isidentifier():
        raise ValueError(f"prefix must be a glue-name prefix such as 'vw_reuse', got {prefix!r}")
    bad = sorted({str(v) for v in labels.values()} - set(VERDICT_SYMBOLS))
    if bad:
        raise ValueError(f"labels must be verdict labels {sorted(VERDICT_SYMBOLS)}, got {bad}")
    return {f"{prefix}_{N}": VERDICT_SYMBOLS[str(labels[N])] if N in labels else "—"
            for N in VERDICT_WIDTHS}


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
    """One sentence of the landing page's plain verdict, worded by the verdict's label:
    ``plain("One step learns one direction", v, "slope −0.47 ± 0.02, 6 seeds")`` gives
    "One step learns one direction: confirmed at these widths (slope −0.47 ± 0.02, 6 seeds)."
    ``expected`` (e.g. "N ≈ 8 × 10⁴") is said where the claim is not reached."""
    label = str(verdict)
    if label not in PLAIN:
        raise ValueError(f"verdict must be a verdict label {sorted(PLAIN)}, got {label!r}")
    for name, text in (("claim", claim), ("evidence", evidence)):
        if not isinstance(text, str) or not text.strip():
            raise TypeError(f"{name} must be a non-empty string, got {text!r}")
    tail = (f"; the book's theory expects it from {expected}"
            if expected and label == "not reached at these widths" else "")
    return minus_sign(f"{claim}: {PLAIN[label]} ({evidence}){tail}.")
