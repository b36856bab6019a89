"""Glued numbers and computed tables (no Sphinx or myst-nb needed)."""

import sys
import types

import numpy as np
import pytest

from twostep.pages import report
from twostep.pages.report import glue_numbers, markdown_table, minus_sign, num, sci

MINUS = "\u2212"


def test_glue_numbers_passes_plain_python_numbers(monkeypatch):
    seen = {}
    fake = types.SimpleNamespace(glue=lambda name, value, display: seen.update({name: (value, display)}))
    monkeypatch.setitem(sys.modules, "myst_nb", fake)
    glue_numbers(x=np.float64(0.25), n=np.int64(3), s="text")
    assert seen == {"x": (0.25, False), "n": (3, False), "s": ("text", False)}
    assert type(seen["x"][0]) is float and type(seen["n"][0]) is int


def test_markdown_table_directive():
    md = markdown_table("Caption $x$.", "tab-x", ["a", "b"], [[1, "2"], ["3", 4.5]])
    assert md.data == ("```{table} Caption $x$.\n:name: tab-x\n\n"
                       "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4.5 |\n```")
    with pytest.raises(ValueError, match=r"rows\[0\] has 1 cells, the header has 2"):
        markdown_table("c", "l", ["a", "b"], [["only"]])


def test_markdown_table_cells_get_true_minus_signs():
    md = markdown_table("c", "l", ["a", "b"], [["-0.25", "(-0.3, 0.4)"], ["-0.00", "$-1$ 2026-12-01"]])
    rows = md.data.splitlines()[-3:-1]
    assert rows == [f"| {MINUS}0.25 | ({MINUS}0.3, 0.4) |", "| 0.00 | $-1$ 2026-12-01 |"]


@pytest.mark.parametrize("text, expected", [
    ("-0.25", MINUS + "0.25"), ("(-0.3, -2)", f"({MINUS}0.3, {MINUS}2)"), ("x = -.5", f"x = {MINUS}.5"),
    ("-0.00", "0.00"), ("-0", "0"), ("[-0.000, 1]", "[0.000, 1]"), ("-0.0%", "0.0%"),
    (MINUS + "0.00", "0.00"), ("-0.001", MINUS + "0.001"), ("-0e-05", "0e-05"), ("-0.01", MINUS + "0.01"),
    ("x-1", "x-1"), ("2026-12-01", "2026-12-01"), ("1e-05", "1e-05"), ("He-3", "He-3"),
    ("a - b", "a - b"), ("$-0.2$ and -0.2", f"$-0.2$ and {MINUS}0.2"), ("$$x=-1$$ -1", f"$$x=-1$$ {MINUS}1"),
])
def test_minus_sign(text, expected):
    assert minus_sign(text) == expected


def test_num():
    assert num(-0.004) == "0.00" and num(-1.5, ".1f") == MINUS + "1.5"
    assert num(np.float64(-2.345), ".3g") == MINUS + "2.35" and num(3, "d") == "3"
    with pytest.raises(TypeError, match="x must be a real number"):
        num("1")


def test_sci():
    assert sci(2.4e28, 2) == "2.4 \u00d7 10\u00b2\u2078"
    assert sci(5e3) == "5 \u00d7 10\u00b3"
    assert sci(1e7) == "10\u2077"
    assert sci(5e-7) == "5 \u00d7 10\u207b\u2077"
    assert sci(-3.2e-5, 2) == "\u22123.2 \u00d7 10\u207b\u2075"
    assert sci(0.5) == "0.5" and sci(12.34, 3) == "12.3" and sci(0) == "0" and sci(-0.0) == "0"
    # Plain between 0.01 and 1000, after rounding to `digits` significant digits.
    assert sci(800, 2) == "800" and sci(-800, 2) == MINUS + "800" and sci(0.5, 2) == "0.50"
    assert sci(0.0123, 2) == "0.012" and sci(0.00999) == "0.01" and sci(999.4, 3) == "999"
    assert sci(999.7, 2) == "1.0 \u00d7 10\u00b3" and sci(1000, 2) == "1.0 \u00d7 10\u00b3"
    assert sci(-0.25, 2) == MINUS + "0.25"
    assert not any("e+" in sci(x, d) or "e-" in sci(x, d)
                   for x in (1e-3, 0.01, 0.5, 8, 80, 800, 999, 1e3, 5e5) for d in (1, 2, 3))
    assert sci(np.float64(9.96e4), 2) == "1.0 \u00d7 10\u2075"
    with pytest.raises(TypeError, match="x must be a real number"):
        sci("1e3")
    with pytest.raises(ValueError, match=r"digits must be an integer in \[1, 6\]"):
        sci(1.0, 0)
    with pytest.raises(ValueError, match="x must be finite"):
        sci(float("inf"))


def test_markdown_table_bars_do_not_split_cells():
    """A "|" in a cell, in text or in maths, stays in its cell; in maths "|" and "\\|" reach
    MathJax as \\vert and \\Vert (the table would read "\\|" as an escaped "|")."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = markdown_table("c", "l", ["x|y", "b"], [[r"exceeds $|\cdot|$ twice", r"$\|T_2\|$"]])
    body = md.data.split("\n\n", 1)[1].rsplit("```", 1)[0]
    html = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin).render(body)
    assert html.count("<td>") == 2 and html.count("<th>") == 2, html
    assert "<th>x|y</th>" in html
    assert r"\vert \cdot\vert" in html and r"\Vert T_2\Vert" in html


def test_spreads_and_mean_pm_sem_for_tables():
    assert [report.sig(x) for x in (0.0034, 0.0123, 0.0, 4.46, 0.14, 25.0)] == [
        "0.003", "0.012", "0", "4", "0.14", "20"]
    assert report.pm(0.4567, 0.031) == "0.46 ± 0.03"
    assert report.pm(2.0512, 0.0049) == "2.051 ± 0.005"   # the spread must not read 0.00
    # a spread below the printed precision is a bound, never "± 0.00" (issue 52)
    assert report.pm(1.0, 0.0) == "1.00 ± < 0.005"
    assert report.pm(1.0, 0.0, 3) == "1.000 ± < 0.0005"
    assert report.sig(0.096) == "0.096" and report.sig(1.06) == "1.1"


def test_pm_signs_a_difference_and_can_keep_its_decimals():
    assert report.pm(0.012, 0.004, 3, signed=True) == "+0.012 ± 0.004"
    assert report.pm(-0.012, 0.004, 3, signed=True) == "\u2212" + "0.012 ± 0.004"
    assert report.pm(0.1, 0.001, 2) == "0.100 ± 0.001"
    assert report.pm(0.1, 0.001, 2, adaptive=False) == "0.10 ± < 0.005"


def test_cell_formats_a_summary_point():
    from twostep.analysis.summary import Summary
    s = Summary([{"N": 10, "seed": i, "x": float(i)} for i in range(3)], ["N"], ["x"])
    assert report.cell(s, "x", decimals=2, N=10) == report.pm(1.0, 1 / 3 ** 0.5, 2)


def test_plain_sentences_follow_the_label():
    from twostep.analysis.verdicts import LABELS, share

    sentences = {label: report.plain("A claim", label, "x") for label in LABELS}
    assert len(set(sentences.values())) == len(LABELS)          # every label its own words
    assert report.plain("A claim", share([True] * 40), "40 of 40 draws").startswith(
        "A claim: confirmed")
    assert report.plain("A claim", "not reached at these widths", "none", "N ≈ 10⁵").endswith(
        "expects it from N ≈ 10⁵.")
    assert "expects" not in report.plain("A claim", "confirmed", "x", "N ≈ 10⁵")
    with pytest.raises(ValueError, match="verdict must be a verdict label"):
        report.plain("A claim", "seen", "x")
    with pytest.raises(TypeError, match="evidence must be a non-empty string"):
        report.plain("A claim", "confirmed", "")


ROW = ("vw_x_500", "vw_x_1000", "vw_x_2000", "vw_x_4000", "vw_x_8000", "vw_x_16000",
       "vw_x_24000")


def test_width_verdicts_gives_each_spelled_name_its_widths_symbol():
    row = report.width_verdicts(ROW, {1000: "confirmed", 4000: "contradicted",
                                      24000: "not judged", 3000: "confirmed"})
    assert row == {"vw_x_500": "—", "vw_x_1000": "✓", "vw_x_2000": "—", "vw_x_4000": "✗",
                   "vw_x_8000": "—", "vw_x_16000": "—", "vw_x_24000": "n.j."}


@pytest.mark.parametrize("names", [
    ROW[:-1],                                   # a width missing
    ROW[1:] + ROW[:1],                          # out of order
    ROW[:3] + ("vw_y_4000",) + ROW[4:],         # two prefixes
    ("500", *ROW[1:]),                          # no prefix
])
def test_width_verdicts_refuses_names_that_do_not_spell_the_widths(names):
    with pytest.raises(ValueError, match=r"names must be <prefix>_<N> for N in \(500, 1000"):
        report.width_verdicts(names, {})


def test_width_verdicts_refuses_bad_types_and_labels():
    with pytest.raises(TypeError, match="names must be a tuple of glue names"):
        report.width_verdicts("vw_x", {})
    with pytest.raises(TypeError, match="labels must be a dict"):
        report.width_verdicts(ROW, [("500", "confirmed")])
    with pytest.raises(ValueError, match=r"labels must be verdict labels .* got \['seen'\]"):
        report.width_verdicts(ROW, {500: "seen"})
