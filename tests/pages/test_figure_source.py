"""Each figure's code on its page: every ``{glue:figure}`` of a chapter is followed by a
dropdown that shows the source of the function drawing it.

A chapter's figure cell calls one drawing function, ``<alias>.plot_<name>(...)``, of a page
module it imports (``from twostep.pages import two_steps as ch``), and glues its result.
Right under the figure's caption, a ``{dropdown}`` holds ``{literalinclude}`` of that
module with ``:pyobject:`` naming that function: a renamed or moved function then fails the
strict build (Sphinx warns that the object is not found), and a figure cell that starts to
call another function fails here. No figure cell is ``remove-cell``: the code that makes a
figure can be opened on its page. These checks read the chapters' sources; no build needed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import bookcache

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = bookcache.chapters(ROOT)

_IMPORT = re.compile(r"^from twostep\.pages import (.+)$", re.MULTILINE)
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
_FIGURE = re.compile(r"^```\{glue:figure\}[ \t]+(\S+)[^\n]*\n(.*?)^```[ \t]*\n",
                     re.DOTALL | re.MULTILINE)
_SOURCE = re.compile(r"\s*:::\{dropdown\}[^\n]*\n```\{literalinclude\}[ \t]+(\S+)[ \t]*\n"
                     r"((?:[ \t]*:[\w-]+:.*\n)*)```\n:::\n")


def _aliases(text: str) -> dict[str, str]:
    """{name a chapter uses: page module} from its ``from twostep.pages import`` lines."""
    found = {}
    for line in _IMPORT.findall(text):
        for part in line.split(","):
            words = part.split()
            found[words[-1]] = words[0]
    return found


def _figure_cells(text: str) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """{glued figure key: (its code cell, [(page module, drawing function), ...])}."""
    aliases = _aliases(text)
    cells = {}
    for cell in _CELL.findall(text):
        calls = [(aliases[a], f) for a, f in re.findall(r"\b(\w+)\.(plot_\w+)\(", cell)
                 if a in aliases]
        for key in re.findall(r'glue\(\s*"(fig_\w+)"', cell):
            cells[key] = (cell, calls)
    return cells


def _functions(module: str) -> set[str]:
    path = ROOT / "twostep" / "pages" / f"{module}.py"
    tree = ast.parse(path.read_text(encoding="utf8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


@pytest.mark.parametrize("docname", CHAPTERS)
def test_every_figure_shows_the_function_that_draws_it(docname):
    text = bookcache.source_of(ROOT, docname).read_text(encoding="utf8")
    cells = _figure_cells(text)
    problems = []
    for match in _FIGURE.finditer(text):
        key = match.group(1)
        if key not in cells:
            problems.append(f"{key}: no code cell glues it")
            continue
        cell, calls = cells[key]
        if "remove-cell" in cell.split("\n", 2)[0] or re.search(r":tags:.*remove-cell", cell):
            problems.append(f"{key}: its figure cell is remove-cell")
        if len(calls) != 1:
            problems.append(f"{key}: its cell calls {len(calls)} drawing functions, not one")
            continue
        module, function = calls[0]
        source = _SOURCE.match(text, match.end())
        if source is None:
            problems.append(f"{key}: no source dropdown right under the figure")
            continue
        options = dict(re.findall(r":([\w-]+):[ \t]*(\S*)", source.group(2)))
        if source.group(1) != f"/twostep/pages/{module}.py":
            problems.append(f"{key}: the dropdown includes {source.group(1)}, "
                            f"not /twostep/pages/{module}.py")
        if options.get("pyobject") != function:
            problems.append(f"{key}: the dropdown shows {options.get('pyobject')}, "
                            f"not {function}, which draws it")
        if function not in _functions(module):
            problems.append(f"{key}: {module}.py defines no top-level {function}")
    assert not problems, f"{docname}:\n" + "\n".join(problems)


def test_the_check_finds_a_missing_or_wrong_dropdown():
    text = ('from twostep.pages import spikes as ch\n\n'
            '```{code-cell} ipython3\nglue("fig_x", ch.plot_terms(s), display=False)\n```\n\n'
            '```{glue:figure} fig_x\n:name: fig-x\n\nCaption.\n```\n')
    cells = _figure_cells(text)
    assert cells["fig_x"][1] == [("spikes", "plot_terms")]
    match = next(_FIGURE.finditer(text))
    assert _SOURCE.match(text, match.end()) is None
    good = text + ("\n:::{dropdown} Code\n```{literalinclude} /twostep/pages/spikes.py\n"
                   ":pyobject: plot_terms\n:lineno-match:\n```\n:::\n")
    source = _SOURCE.match(good, next(_FIGURE.finditer(good)).end())
    assert source is not None and source.group(1) == "/twostep/pages/spikes.py"
    assert "plot_terms" in _functions("spikes")
