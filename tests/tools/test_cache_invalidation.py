"""Stale-cache protection (tools/bookcache.py), exercised on a copy of the tree.

Each chapter has its own fingerprint (``bookcache.chapter_fingerprints``): the package files
its code runs, the pins, the results files, the ``execute:`` settings and the installed
distributions. What only changes how pages are rendered (``_toc.yml``, the rest of
``_config.yml``, the build's tools, a page's prose) re-executes nothing; an edit to one page's
module re-executes the chapters that import it, and only those."""

import shutil
import sys
from types import SimpleNamespace

import pytest

import bookcache
import strictbuild


@pytest.fixture
def tree(tmp_path, root):
    shutil.copytree(
        root / "twostep", tmp_path / "twostep", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in bookcache.ROOT_INPUTS:
        shutil.copy(root / name, tmp_path / name)
    shutil.copytree(root / "tools", tmp_path / "tools",
                    ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    shutil.copytree(root / "book", tmp_path / "book")
    return tmp_path


def stale_after(tree, change, monkeypatch):
    """The chapters whose cached outputs ``change`` makes stale: those ensure_fresh_cache
    asks to forget (a real cache is not needed to see which)."""
    bookcache.ensure_fresh_cache(tree)
    forgotten = []
    monkeypatch.setattr(bookcache, "forget", lambda root, cache, docs: forgotten.extend(docs))
    fill_cache(tree)
    change(tree)
    bookcache.ensure_fresh_cache(tree)
    return sorted(forgotten)


def fill_cache(tree):
    cache = bookcache.cache_dir(tree)
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "global.db").write_text("executed outputs")
    return cache


def test_first_use_stamps_and_clears(tree):
    cache = fill_cache(tree)
    assert bookcache.ensure_fresh_cache(tree)
    assert not cache.exists()
    stamp = bookcache.stamp_path(cache)
    import json

    assert json.loads(stamp.read_text()) == bookcache.chapter_fingerprints(tree)
    assert sorted(json.loads(stamp.read_text())) == CHAPTERS


def test_unchanged_sources_keep_the_cache(tree):
    bookcache.ensure_fresh_cache(tree)
    cache = fill_cache(tree)
    assert not bookcache.ensure_fresh_cache(tree)
    assert (cache / "global.db").is_file()


def test_bytecode_and_non_python_files_do_not_count(tree):
    bookcache.ensure_fresh_cache(tree)
    cache = fill_cache(tree)
    (tree / "twostep" / "__pycache__").mkdir()
    (tree / "twostep" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (tree / "twostep" / "notes.txt").write_text("scratch")
    assert not bookcache.ensure_fresh_cache(tree)
    assert cache.exists()


def test_a_rewritten_results_file_counts(tree):
    folder = tree / "results" / "at_scale"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spike.json").write_text("{}")
    before = bookcache.source_hash(tree)
    (folder / "spike.json").write_text('{"records": []}')
    assert bookcache.source_hash(tree) != before


def test_renaming_a_module_counts(tree):
    before = bookcache.source_hash(tree)
    (tree / "twostep" / "__init__.py").rename(tree / "twostep" / "renamed.py")
    assert bookcache.source_hash(tree) != before


def test_sphinx_rereads_every_page_after_a_source_change():
    # The doctrees hold the old outputs; without re-reading, the emptied cache
    # would never be filled again for pages Sphinx considers unchanged.
    app = SimpleNamespace(twostep_source_hash="new")
    env = SimpleNamespace(found_docs={"book/index", "book/a", "book/b"}, twostep_source_hash="old")
    outdated = bookcache._on_env_get_outdated(app, env, {"book/b"}, set(), set())
    assert outdated == ["book/a", "book/index"]
    assert bookcache._on_env_get_outdated(app, env, set(), set(), set()) == []


def _append(path, text="\n# edited\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((path.read_text() if path.is_file() else "") + text)


CHAPTERS = ["book/at_scale", "book/index", "book/one_step", "book/one_step_evidence",
            "book/readout", "book/readout_evidence", "book/reuse", "book/reuse_evidence",
            "book/setting", "book/two_steps", "book/two_steps_evidence"]


@pytest.mark.parametrize("change", [
    lambda t: _append(t / "twostep" / "__init__.py"),
    lambda t: _append(t / "twostep" / "model" / "steps.py"),
    lambda t: _append(t / "twostep" / "pages" / "figures.py"),
    lambda t: (t / "requirements.txt").write_text("numpy==0.0\n"),
    lambda t: _append(t / "pyproject.toml"),
    lambda t: _append(t / "results" / "two_steps.json", "{}"),
    lambda t: _append(t / "results" / "at_scale" / "reuse_he2.json", "{}"),
    lambda t: (t / "_config.yml").write_text(
        (t / "_config.yml").read_text().replace("timeout: 900", "timeout: 901")),
], ids=["package-init", "model", "shared-page-helpers", "requirements", "pyproject",
        "results-file", "results-subfolder", "execute-settings"])
def test_what_every_chapter_runs_re_executes_every_chapter(tree, change, monkeypatch):
    assert stale_after(tree, change, monkeypatch) == CHAPTERS


@pytest.mark.parametrize("change", [
    lambda t: _append(t / "_toc.yml"),
    lambda t: _append(t / "_config.yml", "\n# a comment\n"),
    lambda t: (t / "_config.yml").write_text(
        (t / "_config.yml").read_text().replace("execute:", "launch_note: x\nexecute:", 1)),
    lambda t: (_append(t / "book" / "new_page.md", "# A new page\n\nIts prose.\n"),
               _append(t / "_toc.yml", "      - file: book/new_page\n")),   # the last part
    lambda t: _append(t / "tools" / "bookbuild.py"),
    lambda t: _append(t / "tools" / "bookcache.py"),
    lambda t: _append(t / "tools" / "upstream_internals.py"),
    lambda t: _append(t / "tools" / "runtime.py"),
    lambda t: _append(t / "tools" / "nbchapters.py"),
    lambda t: _append(t / "book" / "one_step.md", "\nA new closing sentence.\n"),
    lambda t: _append(t / "book" / "runtimes.md", "\nA new closing sentence.\n"),
    lambda t: (t / "twostep" / "unused_module.py").write_text("X = 1\n"),
], ids=["toc", "config-comment", "config-rendering-key", "toc-new-plain-page", "bookbuild",
        "bookcache", "upstream_internals", "runtime", "nbchapters", "prose",
        "prose-plain-page", "module-nothing-imports"])
def test_what_only_changes_rendering_re_executes_nothing(tree, change, monkeypatch):
    assert stale_after(tree, change, monkeypatch) == []


@pytest.mark.parametrize("page, chapters", [
    ("readout", ["book/readout", "book/readout_evidence"]),   # the story and its appendix
    ("one_step", ["book/one_step", "book/one_step_evidence"]),
    ("landing", ["book/index"]),
    ("reuse", ["book/reuse", "book/reuse_evidence"]),
    ("two_steps", ["book/two_steps", "book/two_steps_evidence"]),
    # the two-steps chapter's second module
    ("count", ["book/two_steps", "book/two_steps_evidence"]),
    ("at_scale", ["book/at_scale"]),
    # shared page modules: the chapters using them, directly or through another page module
    ("paired", ["book/at_scale", "book/reuse", "book/reuse_evidence"]),
    ("spikes", ["book/at_scale", "book/index", "book/two_steps", "book/two_steps_evidence"]),
])
def test_an_edit_to_one_page_module_re_executes_the_chapters_that_import_it(tree, page,
                                                                           chapters, monkeypatch):
    change = lambda t: _append(t / "twostep" / "pages" / f"{page}.py")   # noqa: E731
    assert stale_after(tree, change, monkeypatch) == chapters


def test_a_chapters_files_follow_its_imports(tree):
    graph = bookcache.package_graph(tree)
    files = {p.relative_to(tree).as_posix() for p in bookcache.chapter_files(tree, "book/readout", graph)}
    assert "twostep/pages/readout.py" in files and "twostep/experiments/readout.py" in files
    assert "twostep/__init__.py" in files and "twostep/pages/__init__.py" in files
    assert "twostep/pages/two_steps.py" not in files and "twostep/scale/cli.py" not in files
    assert bookcache.code_cells("```{code-cell} ipython3\n:tags: [hide-input]\nimport x\n```\n"
                                "text\n```{code-cell}\n%time y = 1\n```") == ["import x", ""]


def test_a_stamp_of_the_old_single_hash_empties_the_whole_cache(tree):
    cache = fill_cache(tree)
    bookcache.stamp_path(cache).write_text(bookcache.source_hash(tree) + "\n")
    assert bookcache.ensure_fresh_cache(tree) and not cache.exists()


def test_the_interpreter_and_installed_versions_count(tree, monkeypatch):
    before = bookcache.source_hash(tree)
    text = bookcache.environment_fingerprint()
    assert sys.version in text and "numpy==" in text
    monkeypatch.setattr(bookcache, "environment_fingerprint",
                        lambda: text.replace("numpy==", "numpy==0"))
    assert bookcache.source_hash(tree) != before


def test_tools_the_build_does_not_import_do_not_count(tree):
    before = bookcache.source_hash(tree)
    for name in ("at_scale.py", "nbchapters.py", "dev.py", "glue_snapshot.py"):
        _append(tree / "tools" / name)
    _append(tree / "results" / "at_scale" / "spike.json.1234.tmp", "{")   # a run's temporary
    assert bookcache.source_hash(tree) == before


def test_the_build_tools_are_the_extensions_and_what_they_import(tree):
    names = {p.stem for p in bookcache.build_tools(tree)}
    assert {"bookbuild", "bookcache", "code_downloads", "figure_downloads",
            "upstream_internals", "prf_claim", "alt_text", "legibility", "links",
            "runtime"} <= names
    assert not names & {"at_scale", "nbchapters", "dev", "glue_snapshot", "strictbuild"}
    # Editing one re-reads every page (rendering only: no chapter is re-executed).
    before = bookcache.source_hash(tree)
    _append(tree / "tools" / "runtime.py")
    assert bookcache.source_hash(tree) != before


def test_a_stale_site_is_seen_after_a_results_file_changes(tmp_path):
    import os
    import time

    from conftest import BookBuilder
    (tmp_path / "_build" / "html").mkdir(parents=True)
    (tmp_path / "_build" / "html" / "index.html").write_text("<html>")
    log = tmp_path / strictbuild.BUILD_LOG
    log.write_text("built")
    builder = BookBuilder(tmp_path, [])
    assert not builder.is_stale()
    for name in ("results/at_scale/spike.json", "pyproject.toml"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
        later = log.stat().st_mtime + 10
        os.utime(path, (later, later))
        assert builder.is_stale(), name
        os.utime(log, (later + 1, later + 1))
        assert not builder.is_stale()
    time.sleep(0)


def test_forgetting_a_chapter_removes_its_records_only(tmp_path):
    import nbformat
    from jupyter_cache import get_cache

    cache_dir = tmp_path / "_build" / ".jupyter_cache"
    cache = get_cache(str(cache_dir))
    for name in ("a", "b"):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"x = '{name}'")])
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(nb, path)
        cache.cache_notebook_file(str(path), uri=str(tmp_path / "book" / f"{name}.md"),
                                  check_validity=False)
    assert bookcache.forget(tmp_path, cache_dir, {"book/a"}) == 1
    left = [bookcache.docname_of_uri(tmp_path, r.uri) for r in cache.list_cache_records()]
    assert left == ["book/b"]
    (record,) = cache.list_cache_records()
    assert bookcache.record_data(tmp_path, "book/b", cache_dir, record.created.timestamp()) == {}
