"""Glue that is used, and glue a reader can trace: every value a chapter glues is referenced
by a page of the book, and every glued name is spelled out in the chapter that glues it.

A chapter glues names (``glue("name", value)``, or ``glue_numbers(**values)``) and its prose,
tables and figures insert them (``{glue:text}`name:fmt```, ``{glue}`name```, ``{glue:md}``,
``{glue:figure} name``); the landing page also inserts other pages' values
(``{glue:text}`two_steps.md::name```). A glued name that no page inserts is dead weight: a
computation the reader never sees, which no one checks. After the strict build (the
``built_site`` fixture) this reads every name glued in the executed notebooks of the site
and every reference in the pages' sources, and fails on a name that is glued and not
referenced. A value glued with ``display=True`` (a table shown where it is computed) is on
the page and counts as used.

When this test was written, 543 of the 1192 values the chapters glued were referenced by
no page; they were deleted at their source (the page modules' ``*_numbers`` functions) or
left out where a page glues them, and no list of exceptions remains.
The parser is tested at the bottom without a build.

**Every glued name appears literally in its chapter's code** (issue 52): as a string
(``glue("slope", ...)``, ``glue_numbers({"slope": ...})``) or a keyword
(``glue_numbers(slope=...)``) in a code cell of the chapter that glues it, so a reader of the
``.md`` sees where each number comes from. A name glued through ``**ch.x_numbers(...)`` from a
page module, or made by an f-string, is in no cell and fails. Read from the chapters' sources
and the glued outputs of the executed notebooks.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path, PurePosixPath

import nbformat
import pytest

import bookcache

ROOT = Path(__file__).resolve().parents[2]

# {glue}`name`, {glue:text}`name:.2f`, {glue:md}`page.md::name` ...
_ROLE = re.compile(r"\{glue(?::\w+)?\}`([^`]+)`")
# ```{glue:figure} name  /  :::{glue:md} page.md::name
_DIRECTIVE = re.compile(r"^[ \t]*(?:`{3,}|:{3,})\{glue(?::\w+)?\}[ \t]+(\S+)", re.MULTILINE)


def references(docname: str, text: str) -> set[tuple[str, str]]:
    """(docname, name) of every glued value the page ``docname`` (source ``text``) inserts,
    its own or, through ``page.md::name``, another page's."""
    found = set()
    for content in _ROLE.findall(text) + _DIRECTIVE.findall(text):
        if "::" in content:
            page, name = content.split("::", 1)
            target = (PurePosixPath(docname).parent / page).with_suffix("").as_posix()
        else:
            target, name = docname, content
        found.add((target, name.split(":", 1)[0]))
    return found


def glued_names(notebook) -> list[str]:
    """Every name glued in an executed notebook (nbformat) and not shown where it was glued
    (``display=False``), in order."""
    names = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            glue = output.get("metadata", {}).get("scrapbook", {})
            if glue.get("name") and glue.get("mime_prefix"):
                names.append(glue["name"])
    return names


def dead_values(glued: dict[str, list[str]], referenced: set[tuple[str, str]]) -> list[str]:
    """Per page, the glued names that no page references (one line per page)."""
    problems = []
    for docname in sorted(glued):
        dead = sorted({name for name in glued[docname] if (docname, name) not in referenced})
        if dead:
            problems.append(f"{docname}: glued, referenced by no page: " + " ".join(dead))
    return problems


def code_literals(text: str) -> set[str]:
    """Every string constant and keyword-argument name in the code cells of a chapter's
    MyST source ``text`` (f-strings, whose text is made at run time, are not literal)."""
    found = set()
    for cell in bookcache.code_cells(text):
        tree = ast.parse(cell)
        formatted = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
                     for v in node.values}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in formatted):
                found.add(node.value)
            elif isinstance(node, ast.keyword) and node.arg:
                found.add(node.arg)
    return found


def untraced(glued: dict[str, list[str]], literals: dict[str, set[str]]) -> list[str]:
    """Per page, the glued names its code does not spell out (one line per page)."""
    problems = []
    for docname in sorted(glued):
        hidden = sorted({n for n in glued[docname] if n not in literals.get(docname, set())})
        if hidden:
            problems.append(f"{docname}: glued, not written in its code: " + " ".join(hidden))
    return problems


@pytest.mark.book
def test_every_glued_name_is_written_in_the_chapter_that_glues_it(built_site, book_summary):
    docnames = bookcache.chapters(ROOT)
    literals = {d: code_literals(bookcache.source_of(ROOT, d).read_text("utf8"))
                for d in docnames}
    glued = {d: glued_names(nbformat.read(built_site / "_sources" / f"{d}.ipynb", 4))
             for d in docnames}
    total = sum(map(len, glued.values()))
    assert total >= 100, f"only {total} glued values found in the executed chapters"
    problems = untraced(glued, literals)
    assert not problems, ("glued names that a reader of the chapter cannot find in its code "
                          "(spell each out in the cell that glues it):\n" + "\n".join(problems))
    book_summary.append(f"glue: {total} glued names, each written in its chapter's code")


@pytest.mark.book
def test_every_glued_value_is_referenced_by_a_page(built_site, book_summary):
    docnames = bookcache.chapters(ROOT)
    referenced = set()
    for docname in docnames:
        referenced |= references(docname, bookcache.source_of(ROOT, docname).read_text("utf8"))
    glued = {docname: glued_names(nbformat.read(built_site / "_sources" / f"{docname}.ipynb", 4))
             for docname in docnames}
    total = sum(map(len, glued.values()))
    assert total >= 100, f"only {total} glued values found in the executed chapters"
    problems = dead_values(glued, referenced)
    assert not problems, ("glued values that no page inserts (delete them at their source, "
                          "or leave them out where a page glues them):\n" + "\n".join(problems))
    book_summary.append(f"glue: {total} values glued, every one referenced by a page")


def test_references_are_read_from_roles_directives_and_other_pages():
    text = ("A {glue:text}`slope:.2f` and {glue}`count`, a table\n\n```{glue:md} tab_x\n"
            ":format: myst\n```\n\n:::{glue:figure} fig_y\n:name: fig-y\n:::\n"
            "and {glue:text}`two_steps.md::corr_N:s` from another page.\n")
    assert references("book/index", text) == {
        ("book/index", "slope"), ("book/index", "count"), ("book/index", "tab_x"),
        ("book/index", "fig_y"), ("book/two_steps", "corr_N")}


def test_glued_names_are_read_from_the_outputs():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("glue(...)")
    prefix = "application/papermill.record/"
    cell.outputs = [
        nbformat.v4.new_output("display_data", {prefix + "text/plain": "1"},
                               metadata={"scrapbook": {"name": "a", "mime_prefix": prefix}}),
        nbformat.v4.new_output("display_data", {"text/plain": "shown, not glued"})]
    nb.cells = [nbformat.v4.new_markdown_cell("{glue:text}`a`"), cell]
    assert glued_names(nbformat.reads(nbformat.writes(nb), 4)) == ["a"]


def test_dead_values_are_the_glued_names_no_page_references():
    glued = {"book/a": ["x", "y", "z"], "book/b": ["w"]}
    referenced = {("book/a", "x"), ("book/b", "w")}
    assert dead_values(glued, referenced) == ["book/a: glued, referenced by no page: y z"]
    assert dead_values(glued, referenced | {("book/a", "y"), ("book/a", "z")}) == []


_CHAPTER = """---
kernelspec: {name: python3}
---
# A chapter

```{code-cell} ipython3
:tags: [remove-cell]
from twostep.pages import two_steps as ch
glue("slope", 0.5, display=False)
glue_numbers(count=3, **{"ratio": 1.5})
glue_numbers(**ch.width_numbers(data))
for k in (1, 2):
    glue(f"s0e{k}", k, display=False)
```

The slope is {glue:text}`slope:.2f` and {glue:text}`nstar_45`.
"""


def test_glued_names_are_traced_to_strings_and_keywords_of_the_chapters_code():
    literals = code_literals(_CHAPTER)
    assert {"slope", "count", "ratio"} <= literals
    assert "s0e" not in literals and "s0e1" not in literals   # an f-string's pieces
    glued = {"book/x": ["slope", "count", "ratio", "nstar_45", "s0e1", "s0e2"]}
    assert untraced(glued, {"book/x": literals}) == [
        "book/x: glued, not written in its code: nstar_45 s0e1 s0e2"]
    assert untraced({"book/x": ["slope"]}, {"book/x": literals}) == []
