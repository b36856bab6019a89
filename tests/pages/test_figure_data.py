"""The numbers behind a figure come from the data it is drawn from: ``figures.attach_data``
gives a figure its table, ``figures.data_csv`` writes it, and a notebook figure carries it as
``text/csv`` (the formatter ``figures.use_book_style`` registers); a figure without a table
carries no CSV (the book's build fails on a glued one, tools/figure_downloads.py). That the
site offers each ``{glue:figure}``'s CSV is checked in tests/site/test_site_downloads.py."""

from __future__ import annotations

import csv
import io
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from twostep.pages import figures  # noqa: E402


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_csv_is_the_table_the_figure_is_drawn_from():
    N, mean, sem = np.array([1000, 2000]), np.array([0.25, 1 / 3]), np.array([0.01, np.nan])
    fig, ax = plt.subplots()
    ax.errorbar(N, mean, sem, label="fresh")
    returned = figures.attach_data(fig, {"series": ["fresh"] * 2, "N": N, "mean": mean,
                                         "sem": sem})
    assert returned is fig
    rows = _rows(figures.data_csv(fig))
    assert [list(r) for r in rows] == [["series", "N", "mean", "sem"]] * 2
    # As drawn: the widths whole, floats to 6 significant digits, a missing value empty.
    assert rows == [{"series": "fresh", "N": "1000", "mean": "0.25", "sem": "0.01"},
                    {"series": "fresh", "N": "2000", "mean": "0.333333", "sem": ""}]
    plt.close(fig)


def test_rows_as_dicts_keep_their_order_and_must_agree():
    fig = plt.figure()
    figures.attach_data(fig, [{"b": 1, "a": None}, {"b": 2, "a": 3.5}])
    assert figures.data_csv(fig) == "b,a\n1,\n2,3.5\n"
    with pytest.raises(ValueError, match="keys"):
        figures.attach_data(fig, [{"a": 1, "b": 2}, {"b": 2, "a": 1}])
    with pytest.raises(ValueError, match="one length"):
        figures.attach_data(fig, {"a": [1, 2], "b": [1]})
    with pytest.raises(TypeError, match="rows"):
        figures.attach_data(fig, [])
    plt.close(fig)


def test_censored_is_true_false_or_a_column_of_its_row():
    fig = plt.figure()
    figures.attach_data(fig, {"N": [1000, 2000], "count": [6, 4], "censored": ["count", ""]})
    assert _rows(figures.data_csv(fig))[0]["censored"] == "count"
    figures.attach_data(fig, {"N": [1000, 2000], "mean": [6, 4],
                              "censored": np.array([True, False])})
    assert [r["censored"] for r in _rows(figures.data_csv(fig))] == ["True", "False"]
    with pytest.raises(ValueError, match="censored must be True, False or the name"):
        figures.attach_data(fig, {"N": [1000], "count": [6], "censored": ["counts"]})
    with pytest.raises(ValueError, match="censored must be True, False or the name"):
        figures.attach_data(fig, {"N": [1000], "censored": ["censored"]})
    plt.close(fig)


def test_a_figure_without_a_table_has_no_csv():
    fig = plt.figure()
    assert figures.data_csv(fig) is None
    plt.close(fig)


_IN_A_SHELL = """
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.formatters import format_display_data
import matplotlib.pyplot as plt
shell = InteractiveShell.instance()
from twostep.pages import figures
figures.use_book_style()
fig, ax = plt.subplots()
ax.plot([1, 2], [3, 4], label="a")
assert "text/csv" not in format_display_data(fig)[0]
figures.attach_data(fig, {"series": ["a", "a"], "x": [1, 2], "y": [3, 4]})
bundle, _ = format_display_data(fig)
assert bundle["text/csv"] == figures.data_csv(fig) == "series,x,y\\na,1,3\\na,2,4\\n"
print(sorted(bundle))
"""


def test_a_notebook_figure_carries_its_table_and_nothing_else_of_the_books():
    proc = subprocess.run([sys.executable, "-c", _IN_A_SHELL], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    # SVG and PNG and the CSV: no figure checks in a reader's kernel (only the build's run them).
    assert proc.stdout.strip() == "['image/png', 'image/svg+xml', 'text/csv', 'text/plain']"
