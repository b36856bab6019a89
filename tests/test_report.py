"""Glued numbers and computed tables."""

import numpy as np
import pytest

from twostep.report import glue_numbers, markdown_table


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
