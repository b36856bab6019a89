"""Shared pytest set-up: book items run last, after the fast unit tests."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# tools/ holds bookbuild.py, shared with the Sphinx build (see _config.yml).
sys.path.insert(0, str(ROOT / "tools"))


def pytest_collection_modifyitems(session, config, items):
    # Chapters take minutes; a broken unit test should be reported first. The
    # sort is stable, so chapters keep their _toc.yml order and the build stays
    # after them.
    items.sort(key=lambda item: item.get_closest_marker("book") is not None)


@pytest.fixture(scope="session")
def root():
    return ROOT


_BOOK_SUMMARY: list[str] = []


@pytest.fixture(scope="session")
def book_summary():
    """Lines the book items want shown at the end of the run, failures or not."""
    return _BOOK_SUMMARY


def pytest_terminal_summary(terminalreporter):
    if _BOOK_SUMMARY:
        terminalreporter.section("book")
        for line in _BOOK_SUMMARY:
            terminalreporter.write_line(line)
