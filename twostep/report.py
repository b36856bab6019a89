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


def markdown_table(caption: str, label: str, header, rows):
    """A MyST ``{table}`` directive with ``caption`` and ``:name: label`` around a pipe table.

    ``header`` is a sequence of column titles and ``rows`` a sequence of rows of
    cell strings, each as long as ``header``. Returns an ``IPython.display.Markdown``
    object, rendered as MyST by a chapter with ``render_markdown_format: myst``.
    """
    from IPython.display import Markdown

    if not isinstance(caption, str) or not isinstance(label, str):
        raise TypeError("caption and label must be strings")
    header = [str(h) for h in header]
    rows = [[str(c) for c in row] for row in rows]
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"rows[{i}] has {len(row)} cells, the header has {len(header)}")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return Markdown(f"```{{table}} {caption}\n:name: {label}\n\n" + "\n".join(lines) + "\n```")
