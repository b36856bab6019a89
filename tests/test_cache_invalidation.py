"""Stale-cache protection (tools/bookbuild.py), exercised on a copy of the tree."""

import shutil
import sys
from types import SimpleNamespace

import pytest

import bookbuild


@pytest.fixture
def tree(tmp_path, root):
    shutil.copytree(
        root / "twostep", tmp_path / "twostep", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in bookbuild.ROOT_INPUTS:
        shutil.copy(root / name, tmp_path / name)
    (tmp_path / "tools").mkdir()
    for name in bookbuild.BUILD_TOOLS:
        shutil.copy(root / "tools" / name, tmp_path / "tools" / name)
    return tmp_path


def fill_cache(tree):
    cache = bookbuild.default_cache_dir(tree)
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "global.db").write_text("executed outputs")
    return cache


def test_first_use_stamps_and_clears(tree):
    cache = fill_cache(tree)
    assert bookbuild.ensure_fresh_cache(tree)
    assert not cache.exists()
    stamp = bookbuild.stamp_path(cache)
    assert stamp.read_text().strip() == bookbuild.source_hash(tree)


def test_unchanged_sources_keep_the_cache(tree):
    bookbuild.ensure_fresh_cache(tree)
    cache = fill_cache(tree)
    assert not bookbuild.ensure_fresh_cache(tree)
    assert (cache / "global.db").is_file()


def test_bytecode_and_non_python_files_do_not_count(tree):
    bookbuild.ensure_fresh_cache(tree)
    cache = fill_cache(tree)
    (tree / "twostep" / "__pycache__").mkdir()
    (tree / "twostep" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (tree / "twostep" / "notes.txt").write_text("scratch")
    assert not bookbuild.ensure_fresh_cache(tree)
    assert cache.exists()


def test_a_rewritten_results_file_counts(tree):
    folder = tree / "results" / "at_scale"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spike.json").write_text("{}")
    before = bookbuild.source_hash(tree)
    (folder / "spike.json").write_text('{"records": []}')
    assert bookbuild.source_hash(tree) != before


def test_renaming_a_module_counts(tree):
    before = bookbuild.source_hash(tree)
    (tree / "twostep" / "__init__.py").rename(tree / "twostep" / "renamed.py")
    assert bookbuild.source_hash(tree) != before


def test_sphinx_rereads_every_page_after_a_source_change():
    # The doctrees hold the old outputs; without re-reading, the emptied cache
    # would never be filled again for pages Sphinx considers unchanged.
    app = SimpleNamespace(twostep_source_hash="new")
    env = SimpleNamespace(found_docs={"book/index", "book/a", "book/b"}, twostep_source_hash="old")
    outdated = bookbuild._on_env_get_outdated(app, env, {"book/b"}, set(), set())
    assert outdated == ["book/a", "book/index"]
    assert bookbuild._on_env_get_outdated(app, env, set(), set(), set()) == []


def _append(path, text="\n# edited\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((path.read_text() if path.is_file() else "") + text)


@pytest.mark.parametrize("change", [
    lambda t: _append(t / "twostep" / "__init__.py"),
    lambda t: (t / "twostep" / "new_module.py").write_text("X = 1\n"),
    lambda t: _append(t / "twostep" / "sub" / "m.py", ""),
    lambda t: (t / "requirements.txt").write_text("numpy==0.0\n"),
    lambda t: _append(t / "_config.yml"),
    lambda t: _append(t / "_toc.yml"),
    lambda t: _append(t / "pyproject.toml"),
    lambda t: _append(t / "tools" / "bookbuild.py"),
    lambda t: _append(t / "tools" / "upstream_internals.py"),
    lambda t: _append(t / "tools" / "prf_claim.py"),
    lambda t: _append(t / "results" / "two_steps.json", "{}"),
    lambda t: _append(t / "results" / "at_scale" / "reuse_he2.json", "{}"),
], ids=["edit", "add-module", "add-subpackage-module", "requirements", "config", "toc",
        "pyproject", "bookbuild", "upstream_internals", "prf_claim", "results-file",
        "results-subfolder"])
def test_every_build_input_clears_the_cache(tree, change):
    # The fingerprint is the key of every chapter's cache entry (the whole cache is
    # emptied when it moves), so each input that changes it re-executes every chapter.
    bookbuild.ensure_fresh_cache(tree)
    cache = fill_cache(tree)
    change(tree)
    assert bookbuild.ensure_fresh_cache(tree)
    assert not cache.exists()
    # ... and only once: the new stamp matches the new sources.
    fill_cache(tree)
    assert not bookbuild.ensure_fresh_cache(tree)


def test_the_interpreter_and_installed_versions_count(tree, monkeypatch):
    before = bookbuild.source_hash(tree)
    text = bookbuild.environment_fingerprint()
    assert sys.version in text and "numpy==" in text
    monkeypatch.setattr(bookbuild, "environment_fingerprint",
                        lambda: text.replace("numpy==", "numpy==0"))
    assert bookbuild.source_hash(tree) != before


def test_tools_the_build_does_not_import_do_not_count(tree):
    before = bookbuild.source_hash(tree)
    _append(tree / "tools" / "at_scale.py")
    _append(tree / "results" / "at_scale" / "spike.json.1234.tmp", "{")   # a run's temporary
    assert bookbuild.source_hash(tree) == before


def test_a_stale_site_is_seen_after_a_results_file_changes(tmp_path):
    import os
    import time

    from conftest import BookBuilder
    (tmp_path / "_build" / "html").mkdir(parents=True)
    (tmp_path / "_build" / "html" / "index.html").write_text("<html>")
    log = tmp_path / bookbuild.BUILD_LOG
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
