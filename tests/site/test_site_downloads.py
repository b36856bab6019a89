"""What the built site offers beyond its pages: the numbers behind every figure, and the
citation from CITATION.cff; and what every figure of the executed chapters must survive: no
colliding tick labels, no hidden series, no series off its axis, no censored value drawn as
data (``tools/figure_checks.py``, run in the build's kernels by ``tools/kernel_checks.py``).

After the strict build (the ``built_site`` fixture, tests/conftest.py): every ``{glue:figure}``
of every chapter has its CSV in ``_build/html/_downloads/data/``, linked under the figure; the CSV is the one the executed notebook glued beside the
figure's image (``text/csv``: the table ``twostep.pages.figures.attach_data`` gave the
figure), a table with a header and rows as long. The landing page's "How to cite" shows
CITATION.cff's entries. The unit tests at the bottom check ``tools/figure_downloads.py`` and
the book's mime settings without a build; tests/site/test_figure_build.py builds a stand-in.
"""

from __future__ import annotations

import csv
import html
import io
import re
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
import yaml

import bookcache
import figure_checks as fc
import figure_downloads
from twostep.pages import landing

ROOT = Path(__file__).resolve().parents[2]


def _glued_figures() -> list[tuple[str, str, str]]:
    """(docname, glue key, figure label) of every {glue:figure} of the book's chapters."""
    return [(docname, key, label) for docname in bookcache.chapters(ROOT)
            for key, label in figure_downloads.glued_figures(
                bookcache.source_of(ROOT, docname).read_text(encoding="utf8"))]


@pytest.mark.book
def test_every_glued_figure_has_its_data_on_the_site(built_site, book_summary):
    figures = _glued_figures()
    assert len(figures) >= 30, f"only {len(figures)} glued figures found in the chapters"
    problems, rows = [], 0
    notebooks: dict[str, nbformat.NotebookNode] = {}
    for docname, key, label in figures:
        csv_path = built_site / figure_downloads.DATA_DOWNLOADS / f"{label}.csv"
        if not csv_path.is_file():
            problems.append(f"{docname}: no {csv_path.relative_to(built_site)}")
            continue
        page = (built_site / f"{docname}.html").read_text(encoding="utf8")
        href = figure_downloads.data_uri(docname, label)
        if '<p class="twostep-figure-data">' not in page or f'href="{href}"' not in page:
            problems.append(f"{docname}: no link to {href} under the figure")
        text = csv_path.read_text(encoding="utf8")
        if docname not in notebooks:
            notebooks[docname] = nbformat.read(built_site / "_sources" / f"{docname}.ipynb", 4)
        if figure_downloads.csv_of_glue(notebooks[docname], key) != text:
            problems.append(f"{docname}: {label}.csv is not the CSV glued with the figure {key}")
        table = list(csv.reader(io.StringIO(text)))
        rows += len(table) - 1
        if len(table) < 2 or any(len(row) != len(table[0]) for row in table):
            problems.append(f"{docname}: {label}.csv is not a table with a header and rows "
                            "as long")
    assert not problems, "\n".join(problems)
    book_summary.append(f"figure data: {len(figures)} figures, {rows} rows of CSV on the site")


@pytest.mark.book
def test_the_sites_csvs_are_the_glued_figures(built_site):
    folder = built_site / figure_downloads.DATA_DOWNLOADS
    files = sorted(folder.glob("*.csv"))
    assert files, f"no CSV in {folder}"
    wanted = {f"{label}.csv" for _, _, label in _glued_figures()}
    assert {p.name for p in files} == wanted, "the site's CSVs are not the book's glued figures"


def _figure_outputs(notebook) -> list[tuple[str, dict]]:
    """(glue key or cell number, output data) of every output of ``notebook`` that shows a
    matplotlib figure (an image), glued or displayed."""
    found = []
    for number, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = output.get("data", {})
            prefix = output.get("metadata", {}).get("scrapbook", {}).get("mime_prefix", "")
            if any(prefix + kind in data for kind in ("image/png", "image/svg+xml")):
                name = output.get("metadata", {}).get("scrapbook", {}).get("name")
                found.append((name or f"cell {number}", {k.removeprefix(prefix): v
                                                          for k, v in data.items()}))
    return found


@pytest.mark.book
def test_no_figure_of_the_book_has_a_defect(built_site, book_summary):
    problems, checked = [], 0
    for docname in bookcache.chapters(ROOT):
        offered = nbformat.read(built_site / "_sources" / f"{docname}.ipynb", 4)
        if any(fc.MIME in data for _, data in _figure_outputs(offered)):
            problems.append(f"{docname}: the notebook the site offers carries the figure checks")
        # The checks as the build's kernel made them: the execution cache's record.
        notebook = bookcache.merged_outputs(bookcache.cache_dir(ROOT),
                                            bookcache.read_chapter(ROOT, docname))
        if notebook is None:
            problems.append(f"{docname}: no executed notebook in the cache")
            continue
        for name, data in _figure_outputs(notebook):
            checked += 1
            if fc.MIME not in data:
                problems.append(f"{docname} {name}: the figure was not checked (no {fc.MIME}; "
                                "the build's kernels check every figure: tools/kernel_checks.py)")
                continue
            problems += [f"{docname} {name}: {defect}" for defect in data[fc.MIME]["defects"]]
    assert checked >= 30, f"only {checked} figures found in the executed chapters"
    assert not problems, "\n".join(problems)
    book_summary.append(f"figure checks: {checked} figures, 0 defects (ticks, hidden series, "
                        "off the axis, censored values)")


@pytest.mark.book
def test_the_landing_page_cites_from_citation_cff(built_site):
    page = (built_site / "book" / "index.html").read_text(encoding="utf8")
    start = page.index('id="how-to-cite"')
    section = page[start:page.index("<section", start + 1) if "<section" in page[start + 1:] else None]
    shown = [html.unescape(re.sub(r"<[^>]+>", "", block)) for block in re.findall(
        r'<div class="highlight-bibtex[^"]*"><div class="highlight"><pre>(.*?)</pre>', section,
        re.DOTALL)]
    book, papers = landing.bibtex_entries(
        yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf8")))
    assert [s.strip() for s in shown] == papers + [book]


# --- tools/figure_downloads.py without a build --------------------------------------------

_PAGE = """# A page

```{code-cell} ipython3
glue("fig_a", fig, display=False)
```

```{glue:figure} fig_a
:name: fig-a
:alt: something

The caption.
```

:::{glue:figure} fig_b
A caption without a name.
:::
"""


def test_figure_outputs_are_found_glued_or_shown():
    nb = nbformat.v4.new_notebook()
    prefix = "application/papermill.record/"
    glued = nbformat.v4.new_code_cell("glue(...)")
    glued.outputs = [nbformat.v4.new_output(
        "display_data", {prefix + "image/svg+xml": "<svg/>",
                         prefix + fc.MIME: {"defects": [], "series": []}},
        metadata={"scrapbook": {"name": "fig_a", "mime_prefix": prefix}})]
    shown = nbformat.v4.new_code_cell("fig")
    shown.outputs = [nbformat.v4.new_output("display_data", {"image/png": "AAAA"})]
    text = nbformat.v4.new_code_cell("x")
    text.outputs = [nbformat.v4.new_output("display_data", {"text/plain": "1"})]
    nb.cells = [glued, shown, text]
    nb = nbformat.reads(nbformat.writes(nb), 4)
    found = _figure_outputs(nb)
    assert [name for name, _ in found] == ["fig_a", "cell 1"]
    assert found[0][1][fc.MIME]["defects"] == [] and fc.MIME not in found[1][1]


def test_glued_figures_are_read_from_the_source():
    assert figure_downloads.glued_figures(_PAGE) == [("fig_a", "fig-a"), ("fig_b", "fig_b")]
    assert figure_downloads.glued_figures("```{glue:text} x\n```\n") == []


def test_the_csv_of_a_glued_figure_is_found_in_the_notebook():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("glue(...)")
    prefix = "application/papermill.record/"
    cell.outputs = [nbformat.v4.new_output(
        "display_data", {prefix + "image/png": "AAAA", prefix + "text/csv": "a,b\n1,2\n"},
        metadata={"scrapbook": {"name": "fig_a", "mime_prefix": prefix}})]
    nb.cells = [nbformat.v4.new_markdown_cell("text"), cell]
    # Written and read back, as the cache and the site hold it.
    nb = nbformat.reads(nbformat.writes(nb), 4)
    assert figure_downloads.csv_of_glue(nb, "fig_a") == "a,b\n1,2\n"
    assert figure_downloads.csv_of_glue(nb, "fig_b") is None
    assert figure_downloads.data_uri("book/setting", "fig-a") == "../_downloads/data/fig-a.csv"
    assert figure_downloads.data_uri("index", "fig-a") == "_downloads/data/fig-a.csv"


def test_the_notebooks_the_site_offers_carry_no_checks(tmp_path):
    prefix = "application/papermill.record/"
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("glue(...)")
    cell.outputs = [
        nbformat.v4.new_output("display_data", {prefix + "image/png": "AAAA",
                                                prefix + "text/csv": "a\n1\n",
                                                prefix + fc.MIME: {"defects": [], "series": []}},
                               metadata={"scrapbook": {"name": "fig_a", "mime_prefix": prefix}}),
        nbformat.v4.new_output("display_data", {"image/png": "AAAA", fc.MIME: {"defects": []}})]
    nb.cells = [cell]
    (tmp_path / "_sources" / "book").mkdir(parents=True)
    path = tmp_path / "_sources" / "book" / "a.ipynb"
    nbformat.write(nb, path)
    plain = tmp_path / "_sources" / "book" / "b.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), plain)
    assert figure_downloads.strip_checks(tmp_path) == [path]
    outputs = nbformat.read(path, 4).cells[0].outputs
    assert sorted(outputs[0]["data"]) == [prefix + "image/png", prefix + "text/csv"]
    assert sorted(outputs[1]["data"]) == ["image/png"]
    assert figure_downloads.strip_checks(tmp_path) == []


def test_the_data_files_are_written_from_the_environment(tmp_path):
    stale = tmp_path / figure_downloads.DATA_DOWNLOADS / "gone.csv"
    stale.parent.mkdir(parents=True)
    stale.write_text("old")
    env = SimpleNamespace(twostep_figure_data={"book/a": [("fig-a", "x\n")],
                                               "book/b": [("fig-b", "y\n"), ("fig-c", "z\n")]})
    written = figure_downloads.write_figure_data(env, tmp_path)
    assert sorted(p.name for p in written) == ["fig-a.csv", "fig-b.csv", "fig-c.csv"]
    assert (tmp_path / figure_downloads.DATA_DOWNLOADS / "fig-c.csv").read_text() == "z\n"
    assert not stale.exists()     # a figure that is gone leaves no file behind
    assert figure_downloads.figure_data(env, "book/b") == [("fig-b", "y\n"), ("fig-c", "z\n")]
    assert figure_downloads.figure_data(env, "book/none") == []


def test_the_page_shows_neither_a_figures_csv_nor_its_checks():
    # myst-nb's documented nb_mime_priority_overrides: a priority of None drops a MIME type
    # for every builder ("*"); the built pages are checked for CSV text by the site tests.
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))["sphinx"]["config"]
    overrides = [tuple(o) for o in config["nb_mime_priority_overrides"]]
    assert ("*", figure_downloads.CSV, None) in overrides and ("*", fc.MIME, None) in overrides
    assert not any(o[1].startswith("image/") for o in overrides)   # figures stay shown
    # myst-nb renders every mime type of an output before it picks one; its notice that it has
    # no renderer for these two is the one warning the book lets pass.
    assert config["suppress_warnings"] == ["mystnb.unknown_mime_type"]


def test_the_readers_package_holds_no_book_tooling():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "myst_nb.mime_renderers" not in project.get("entry-points", {})
    package = ROOT / "twostep"
    assert not (package / "pages" / "figure_data.py").exists()
    assert not (package / "pages" / "figure_checks.py").exists()
    text = "\n".join(p.read_text(encoding="utf8") for p in package.rglob("*.py"))
    for name in ("figure_checks", "figure_defects", "register_figure_mime", "figure_rows"):
        assert name not in text, f"{name} in twostep/: book tooling belongs in tools/"
