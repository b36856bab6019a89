"""Stale-cache protection (tools/bookbuild.py), exercised on a copy of the tree."""

import shutil
from types import SimpleNamespace

import pytest

import bookbuild


@pytest.fixture
def tree(tmp_path, root):
    shutil.copytree(
        root / "twostep", tmp_path / "twostep", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(root / "requirements.txt", tmp_path / "requirements.txt")
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


@pytest.mark.parametrize(
    "change",
    [
        lambda t: (t / "twostep" / "__init__.py").write_text(
            (t / "twostep" / "__init__.py").read_text() + "\n# edited\n"
        ),
        lambda t: (t / "twostep" / "new_module.py").write_text("X = 1\n"),
        lambda t: (t / "twostep" / "sub").mkdir() or (t / "twostep" / "sub" / "m.py").write_text(""),
        lambda t: (t / "requirements.txt").write_text("numpy==0.0\n"),
    ],
    ids=["edit", "add-module", "add-subpackage-module", "requirements"],
)
def test_source_changes_clear_the_cache(tree, change):
    bookbuild.ensure_fresh_cache(tree)
    cache = fill_cache(tree)
    change(tree)
    assert bookbuild.ensure_fresh_cache(tree)
    assert not cache.exists()
    # ... and only once: the new stamp matches the new sources.
    fill_cache(tree)
    assert not bookbuild.ensure_fresh_cache(tree)


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
