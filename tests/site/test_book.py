"""The book's strict build, after nbmake has executed every chapter into the cache.

The chapters themselves are nbmake items (``pytest --nbmake``; tools/nbchapters.py
converts ``book/*.md`` and stores each executed notebook in the book's execution
cache, tools/bookcache.py). The build test below runs ``jupyter-book build . -n -W --keep-going`` and
proves from the cache's own records (jupyter-cache's ``list_cache_records``) that
the build executed nothing nbmake had executed in the same run: a chapter executed
twice fails the test.

Collecting this module builds nothing and starts no kernel: ``pytest -m "not book"``
runs the unit tests at the bottom and nothing else.
"""

from __future__ import annotations

import pytest

import alt_text
import bookcache
import code_downloads
import legibility
import nbchapters
import runtime
import strictbuild


@pytest.mark.book
def test_book_builds_strictly(book_build, chapter_runs, root):
    failed = chapter_runs.failed()
    if failed:
        # Building would execute the broken chapters a second time, only to
        # fail on the same error.
        pytest.fail(
            f"book not built: chapter(s) {', '.join(failed)} failed to execute "
            f"(tracebacks above and in {strictbuild.REPORTS})",
            pytrace=False,
        )
    result = book_build.build()
    if result.code:
        warnings = [ln for ln in result.log.splitlines() if "WARNING" in ln or "ERROR" in ln]
        pytest.fail(
            f"jupyter-book build failed (exit {result.code}); full log: {strictbuild.BUILD_LOG}\n"
            + "\n".join(warnings or result.log.splitlines()[-40:]),
            pytrace=False,
        )
    executed_here = chapter_runs.executed()
    twice = sorted(set(result.executed) & set(executed_here))
    assert not twice, (
        f"the build executed {twice} again although nbmake had just executed them "
        "into the cache: the converted notebooks (tools/nbchapters.py) and myst-nb "
        "no longer hash notebooks alike"
    )
    # Every chapter nbmake ran in this session is in the cache, as it stored it.
    records = bookcache.cache_records(root)
    missing = [d for d in executed_here if chapter_runs.runs[d].record_pk not in records]
    assert not missing, f"cache records of {missing} are gone after the build"
    if set(executed_here) == set(bookcache.chapters(root)):
        # The whole book went through nbmake: the build must have executed nothing.
        assert result.executed == [] and result.records_after == result.records_before, (
            f"the build added cache records for {result.executed}"
        )


@pytest.mark.book
def test_the_runtimes_page_lists_every_chapter_by_title(book_build, built_site, root):
    """The page "How long each chapter takes" (myst-nb's execution table) has a row per
    executed page, named by its title, whose run time is the one stated under that page's
    title: both come from myst-nb's execution data of the build."""
    import posixpath
    import re

    html = (built_site / "book" / "runtimes.html").read_text(encoding="utf8")
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.S)
    text = lambda cell: re.sub(r"<[^>]+>", "", cell).strip()   # noqa: E731
    table = {}
    for row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        link = re.search(r'href="([^"#]+)\.html"', cells[0]) if cells else None
        if link:
            table[link.group(1)] = [text(c) for c in cells]
    for docname in bookcache.chapters(root):
        href = posixpath.relpath(docname, "book")   # from book/runtimes.html
        assert href in table, f"no row for {docname} in book/runtimes.html: {sorted(table)}"
        title = re.search(r"^# (.+)$", bookcache.source_of(root, docname).read_text("utf8"),
                          re.M).group(1).strip()
        name, _modified, _method, seconds, status = table[href]
        assert name == title and status == "✅", table[href]
        page = (built_site / f"{docname}.html").read_text(encoding="utf8")
        line = re.search(r'class="twostep-runtime">([^<]+)<', page).group(1)
        stated = re.search(r"took ([\d.]+) (s|min)", line)
        value = float(stated.group(1)) * (60 if stated.group(2) == "min" else 1)
        assert abs(value - float(seconds)) <= (0.5 if stated.group(2) == "s" else 3), (line, seconds)


# --- unit tests (no Sphinx build, no kernel) ------------------------------------------


def test_myst_notebooks_are_recognised(tmp_path):
    myst = tmp_path / "a.md"
    myst.write_text("---\njupytext:\n  text_representation:\n    format_name: myst\n---\n# A\n")
    plain = tmp_path / "b.md"
    plain.write_text("# B\n\nNo front matter.\n")
    assert bookcache.is_notebook(myst)
    assert not bookcache.is_notebook(plain)
    assert bookcache.is_notebook(tmp_path / "c.ipynb")


def test_cache_dir_follows_config(tmp_path):
    (tmp_path / "_config.yml").write_text("execute:\n  execute_notebooks: cache\n")
    assert bookcache.cache_dir(tmp_path) == (tmp_path / "_build" / ".jupyter_cache").resolve()
    # In Sphinx: myst-nb's setting (empty: the default) and the build folder.
    assert bookcache.cache_dir(tmp_path, "", tmp_path / "out") == (
        tmp_path / "out" / ".jupyter_cache").resolve()
    (tmp_path / "_config.yml").write_text("execute:\n  cache: elsewhere/cache\n")
    assert bookcache.cache_dir(tmp_path) == (tmp_path / "elsewhere" / "cache").resolve()


_TOY_CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
mystnb:
  execution_timeout: 60
---

# A chapter

```{code-cell} ipython3
:tags: [hide-input]

x = 1
```

Text.

```{code-cell} ipython3
x + 1
```
"""


def test_executed_notebook_is_cached_under_the_chapters_own_key(tmp_path):
    """nbmake adds timing metadata to every cell it runs; the cache must still be
    keyed on the chapter as read from its .md, or the build would execute it again."""
    pytest.importorskip("jupytext")
    import jupytext
    import nbformat
    from jupyter_cache import get_cache

    (tmp_path / "_config.yml").write_text("execute:\n  timeout: 900\n  allow_errors: false\n")
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "toy.md").write_text(_TOY_CHAPTER)
    nb = bookcache.read_chapter(tmp_path, "book/toy")
    # The chapter's own front matter wins over _config.yml; nbmake reads these.
    assert nb.metadata["execution"] == {"timeout": 60, "allow_errors": False}
    executed_path = nbchapters.converted_path(tmp_path, "book/toy")
    executed_path.parent.mkdir(parents=True)
    for n, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        cell.execution_count = n + 1
        cell.metadata["execution"] = {"iopub.execute_input": f"2026-01-01T00:00:0{n}Z"}
        cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": str(n + 2)},
                                               execution_count=n + 1)]
    nbformat.write(nb, executed_path)

    plugin = nbchapters.ChapterPlugin(tmp_path)
    pk = plugin.store("book/toy", executed_path, 1.0)
    cache = get_cache(str(bookcache.cache_dir(tmp_path)))
    as_read = jupytext.read(tmp_path / "book" / "toy.md")
    assert cache.match_cache_notebook(as_read).pk == pk
    _, merged = cache.merge_match_into_notebook(as_read)
    outputs = [c.outputs for c in merged.cells if c.cell_type == "code"]
    assert [o[0]["data"]["text/plain"] for o in outputs] == ["2", "3"]
    records = bookcache.cache_records(tmp_path)
    assert bookcache.docname_of_uri(tmp_path, records[pk][0]) == "book/toy"
    # The record carries the run's time and cores; it is found by its creation time, as
    # myst-nb reports the record it took a page from.
    (record,) = cache.list_cache_records()
    data = bookcache.record_data(tmp_path, "book/toy", bookcache.cache_dir(tmp_path),
                                 record.created.timestamp())
    assert data["execution_seconds"] == 1.0 and data["executed_by"] == "nbmake"
    assert runtime.cores_of_run(data) == data["cpu_count"] > 0
    assert bookcache.record_data(tmp_path, "book/toy", bookcache.cache_dir(tmp_path), 0.0) is None


# --- what the build's extensions do to the pages (unit tests, no build) ----------------


@pytest.mark.parametrize("tex, plain", [
    (r"\mu_1 a v^\top", "μ₁ a vᵀ"),
    (r"\mathbb E[g(z)\,z] = 0", "E[g(z) z] = 0"),
    (r"\frac{\alpha_2}{1/2-\alpha_1}", "α₂/(1/2−α₁)"),
    (r"\Lambda(\alpha_1, \alpha_2) = \min\!\left(L - 1,\ \left\lfloor x \right\rfloor\right)",
     "Λ(α₁, α₂) = min(L − 1, ⌊ x ⌋)"),
    (r"\|T_k - S_k\|_{op}", "‖Tₖ − Sₖ‖ₒₚ"),
    (r"\beta^\star", "β⋆"), (r"x \in \mathbb{R}^d", "x ∈ ℝᵈ"), (r"1/\sqrt{d}", "1/√d"),
    (r"\mathrm{He}_3", "He₃"), (r"\cos\angle(u, v)", "cos ∠(u, v)"), (r"\unknown{x}", "unknown x"),
])
def test_latex_to_plain(tex, plain):
    assert alt_text.latex_to_plain(tex) == plain


def test_plain_alt_text_is_the_first_sentence_without_tex():
    caption = ("Singular values of W₂, e.g. at N = 2000, for a fresh batch. Fig. 3 shows "
               r"more. The theory predicts three \alpha $x$.")
    assert alt_text.plain_alt_text(caption) == (
        "Singular values of W₂, e.g. at N = 2000, for a fresh batch.")
    short = alt_text.plain_alt_text("Left. The spectrum of W₀ against the law. More.")
    assert short == "Left. The spectrum of W₀ against the law."
    long = alt_text.plain_alt_text("word " * 100 + r"\alpha$")
    assert len(long) <= alt_text.ALT_MAX + 1 and long.endswith("…")
    assert "\\" not in long and "$" not in long


def test_reader_requirements_are_the_repository_pins(root):
    text = code_downloads.reader_requirements(root)
    pins = code_downloads.pins(root)
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert lines == [f"{name}=={pins[name]}" for name in code_downloads.READER_PACKAGES]
    assert code_downloads.wheel_name(root).startswith("twostep-") and code_downloads.wheel_name(
        root).endswith("-py3-none-any.whl")


def test_image_facts_and_min_width(tmp_path):
    svg = tmp_path / "f.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="504pt" height="259pt">'
                   '<g transform="translate(1 2) scale(0.09 -0.09)"/>'
                   '<g transform="translate(1 2) scale(0.1 -0.1)"/></svg>')
    width, smallest = legibility.image_facts(svg)
    assert width == pytest.approx(672) and smallest == pytest.approx(9)
    assert legibility.min_shown_width(width, smallest) == 598   # 672 * 8 / 9, rounded up
    assert legibility.min_shown_width(width, 7.5) == 672        # never larger than drawn
    png = tmp_path / "f.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + (770).to_bytes(4, "big") + b"\0" * 8)
    assert legibility.image_facts(png) == (770.0, None)
    assert legibility.image_facts(tmp_path / "missing.svg") is None


@pytest.mark.parametrize("text, kept", [
    ("6.6 × 10⁹ and more", "6.6\u00a0×\u00a010⁹ and more"), ("(0.3, 0.3) here", "(0.3,\u00a00.3) here"),
    ("( 0.4, 0.25 )", "(0.4,\u00a00.25)"), ("0.2 ± 0.1", "0.2\u00a0±\u00a00.1"),
    ("1, 2, 3 items", "1, 2, 3 items"), ("(see Fig. 2, left)", "(see Fig. 2, left)"),
])
def test_values_in_table_cells_are_kept_whole(text, kept):
    assert legibility.keep_whole(text) == kept


def test_the_runtime_line():
    assert runtime.runtime_text(71.6, 2) == (
        "Re-executing this page took 72 s when this site was built, on 2 CPU cores.")
    assert runtime.runtime_text(143.4, None) == (
        "Re-executing this page took 2.4 min when this site was built.")
    # myst-nb's own runs (no record at that time, or a record without cores): this machine.
    import os

    assert runtime.cores_of_run(None) == os.cpu_count()
    assert runtime.cores_of_run({"execution_seconds": 3.0}) == os.cpu_count()
    assert runtime.cores_of_run({"execution_seconds": 3.0, "cpu_count": 64}) == 64


def test_execution_table_rows_are_named_by_title():
    from sphinx.addnodes import pending_xref
    from docutils import nodes

    def link(text, target, refdoc="book/runtimes", reftype="doc"):
        node = pending_xref(refdoc=refdoc, reftarget=target, reftype=reftype, refdomain="std",
                            refexplicit=True)
        node += nodes.inline(text=text)
        return node

    assert runtime.names_itself(link("book/one_step", "one_step"))      # as nb-exec-table
    assert runtime.names_itself(link("index", "../index"))
    assert not runtime.names_itself(link("One step", "one_step"))
    assert not runtime.names_itself(link("book/one_step", "one_step", reftype="ref"))
