"""Glue that is used: every value a chapter glues is referenced by a page of the book.

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
left out where a page glues them (``report.quoted``), and no list of exceptions remains.
The parser is tested at the bottom without a build.
"""

from __future__ import annotations

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
                          "or leave them out with report.quoted):\n" + "\n".join(problems))
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
