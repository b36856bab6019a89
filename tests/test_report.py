"""Glued numbers and computed tables."""

import numpy as np
import pytest

from twostep.chapters.report import glue_numbers, markdown_table


def test_glue_numbers_passes_plain_python_numbers(monkeypatch):
    import myst_nb

    seen = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: seen.update({name: (value, display)}))
    glue_numbers(x=np.float64(0.25), n=np.int64(3), s="text")
    assert seen == {"x": (0.25, False), "n": (3, False), "s": ("text", False)}
    assert type(seen["x"][0]) is float and type(seen["n"][0]) is int


def test_markdown_table_directive():
    md = markdown_table("Caption $x$.", "tab-x", ["a", "b"], [[1, "2"], ["3", 4.5]])
    assert md.data == ("```{table} Caption $x$.\n:name: tab-x\n\n"
                       "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4.5 |\n```")
    with pytest.raises(ValueError, match=r"rows\[0\] has 1 cells, the header has 2"):
        markdown_table("c", "l", ["a", "b"], [["only"]])


def test_sci():
    from twostep.chapters.report import sci
    assert sci(2.4e28, 2) == "2.4 \u00d7 10\u00b2\u2078"
    assert sci(5e3) == "5 \u00d7 10\u00b3"
    assert sci(1e7) == "10\u2077"
    assert sci(5e-7) == "5 \u00d7 10\u207b\u2077"
    assert sci(-3.2e-5, 2) == "\u22123.2 \u00d7 10\u207b\u2075"
    assert sci(0.5) == "0.5" and sci(12.34, 3) == "12.3" and sci(0) == "0"
    assert sci(np.float64(9.96e4), 2) == "1.0 \u00d7 10\u2075"
    with pytest.raises(TypeError, match="x must be a real number"):
        sci("1e3")
    with pytest.raises(ValueError, match=r"digits must be an integer in \[1, 6\]"):
        sci(1.0, 0)
    with pytest.raises(ValueError, match="x must be finite"):
        sci(float("inf"))
