"""The book's strict build, after nbmake has executed every chapter into the cache.

The chapters themselves are nbmake items (``pytest --nbmake``; tools/nbchapters.py
converts ``book/*.md`` and stores each executed notebook in the book's execution
cache). The build test below runs ``jupyter-book build . -n -W --keep-going`` and
proves from the cache's own records (jupyter-cache's ``list_cache_records``) that
the build executed nothing nbmake had executed in the same run: a chapter executed
twice fails the test.

Collecting this module needs neither Sphinx nor a kernel: ``pytest -m "not book"``
runs the unit tests at the bottom and nothing else.
"""

from __future__ import annotations

import pytest

import bookbuild
import nbchapters


@pytest.mark.book
def test_book_builds_strictly(book_build, chapter_runs, root):
    failed = chapter_runs.failed()
    if failed:
        # Building would execute the broken chapters a second time, only to
        # fail on the same error.
        pytest.fail(
            f"book not built: chapter(s) {', '.join(failed)} failed to execute "
            f"(tracebacks above and in {bookbuild.REPORTS})",
            pytrace=False,
        )
    result = book_build.build()
    if result.code:
        warnings = [ln for ln in result.log.splitlines() if "WARNING" in ln or "ERROR" in ln]
        pytest.fail(
            f"jupyter-book build failed (exit {result.code}); full log: {bookbuild.BUILD_LOG}\n"
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
    records = nbchapters.cache_records(root)
    missing = [d for d in executed_here if chapter_runs.runs[d].record_pk not in records]
    assert not missing, f"cache records of {missing} are gone after the build"
    if set(executed_here) == set(nbchapters.chapters(root)):
        # The whole book went through nbmake: the build must have executed nothing.
        assert result.executed == [] and result.records_after == result.records_before, (
            f"the build added cache records for {result.executed}"
        )


# --- unit tests (no Sphinx build, no kernel) ------------------------------------------


def test_upstream_internals_match_the_pins():
    """tools/upstream_internals.py is the only user of myst-nb's and
    sphinx-book-theme's internals; it must be revisited when they change."""
    pytest.importorskip("myst_nb")
    pytest.importorskip("sphinx_book_theme")
    import upstream_internals

    problems = upstream_internals.check_pins()
    assert not problems, "\n".join(problems)


def test_pins_agree_with_requirements(root):
    import upstream_internals

    pins = {}
    for line in (root / "requirements.txt").read_text().splitlines():
        name, sep, pin = line.split("#")[0].strip().partition("==")
        if sep:
            pins[name.lower()] = pin
    for dist, wanted in upstream_internals.PINNED.items():
        assert pins.get(dist) == wanted, (
            f"requirements.txt pins {dist}=={pins.get(dist)}, tools/upstream_internals.py "
            f"was written for {wanted}"
        )


def test_no_internals_outside_the_one_module(root):
    """No private name or internal module of jupyter-book, myst-nb or
    sphinx-book-theme in tools/ or tests/, except tools/upstream_internals.py."""
    import re

    pattern = re.compile(
        r"(jupyter_book|myst_nb|sphinx_book_theme)(\.[A-Za-z_]\w*)*\._\w+"
        r"|from (jupyter_book|myst_nb|sphinx_book_theme)\.[\w.]+ import"
        r"|import (jupyter_book|myst_nb|sphinx_book_theme)\.\w+"
        r"|mystnb_config|header_buttons|ipynb_source|get_final_config|NotebookClientCache"
        r"|create_nb_reader"
    )
    allowed = {root / "tools" / "upstream_internals.py", root / "tests" / "test_book.py"}
    found = []
    for path in sorted((root / "tools").glob("*.py")) + sorted((root / "tests").glob("*.py")):
        if path in allowed:
            continue
        for number, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert not found, "internals outside tools/upstream_internals.py:\n" + "\n".join(found)


def test_myst_notebooks_are_recognised(tmp_path):
    myst = tmp_path / "a.md"
    myst.write_text("---\njupytext:\n  text_representation:\n    format_name: myst\n---\n# A\n")
    plain = tmp_path / "b.md"
    plain.write_text("# B\n\nNo front matter.\n")
    assert nbchapters.is_notebook(myst)
    assert not nbchapters.is_notebook(plain)
    assert nbchapters.is_notebook(tmp_path / "c.ipynb")


def test_cache_dir_follows_config(tmp_path):
    (tmp_path / "_config.yml").write_text("execute:\n  execute_notebooks: cache\n")
    assert nbchapters.cache_dir(tmp_path) == (tmp_path / "_build" / ".jupyter_cache").resolve()
    (tmp_path / "_config.yml").write_text("execute:\n  cache: elsewhere/cache\n")
    assert nbchapters.cache_dir(tmp_path) == (tmp_path / "elsewhere" / "cache").resolve()


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
    nb = nbchapters.read_chapter(tmp_path, "book/toy")
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
    cache = get_cache(str(nbchapters.cache_dir(tmp_path)))
    as_read = jupytext.read(tmp_path / "book" / "toy.md")
    assert cache.match_cache_notebook(as_read).pk == pk
    _, merged = cache.merge_match_into_notebook(as_read)
    outputs = [c.outputs for c in merged.cells if c.cell_type == "code"]
    assert [o[0]["data"]["text/plain"] for o in outputs] == ["2", "3"]
    records = nbchapters.cache_records(tmp_path)
    assert nbchapters.docname_of_uri(tmp_path, records[pk][0]) == "book/toy"
