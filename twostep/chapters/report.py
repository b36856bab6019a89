"""Putting computed numbers and tables into a chapter's text.

Every number the book states is computed by the chapter and inserted with
myst-nb's ``glue``; tables are MyST ``{table}`` directives built from computed
rows. Both live here so the chapters do not each carry a copy.
"""

from __future__ import annotations

import numpy as np


def glue_numbers(**values) -> None:
    """Glue each ``name=value`` for ``{glue:text}`name:fmt``` in the prose.

    numpy scalars are passed on as plain Python numbers, whose text myst-nb can
    format (numpy 2 prints ``np.float64(...)``); nothing is displayed in place.
    """
    from myst_nb import glue

    for name, value in values.items():
        glue(name, value.item() if isinstance(value, np.generic) else value, display=False)


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def sci(x, digits: int = 1) -> str:
    """``x`` as text in scientific notation for prose: ``sci(2.4e28) == "2.4 × 10²⁸"``.

    ``digits`` significant digits in the mantissa (1 to 6); with one digit a mantissa of
    1 is dropped (``sci(1e7) == "10⁷"``) and numbers between 0.01 and 1000 are written plainly with
    ``digits`` significant digits. Glue the string and insert it with ``{glue:text}`name```:
    Python's ``e`` format (``2e+28``) is not how a paper writes numbers.
    """
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"x must be a real number, got {type(x).__name__}")
    if not isinstance(digits, (int, np.integer)) or isinstance(digits, bool) or not 1 <= digits <= 6:
        raise ValueError(f"digits must be an integer in [1, 6], got {digits!r}")
    x = float(x)
    if not np.isfinite(x):
        raise ValueError(f"x must be finite, got {x}")
    if x == 0 or 0.01 <= abs(x) < 1000:
        return f"{x:.{digits}g}"
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    power = "10" + str(int(exponent)).translate(_SUPERSCRIPT)
    if digits == 1 and float(mantissa) in (1.0, -1.0):
        return power if float(mantissa) > 0 else "\u2212" + power
    return f"{mantissa.replace('-', chr(0x2212))} \u00d7 {power}"


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
    header = [str(h) for h in header]
    rows = [[str(c) for c in row] for row in rows]
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"rows[{i}] has {len(row)} cells, the header has {len(header)}")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return Markdown(f"```{{table}} {caption}\n:name: {label}\n\n" + "\n".join(lines) + "\n```")
