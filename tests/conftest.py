"""Shared pytest set-up.

* tools/ on the path (bookcache.py and strictbuild.py are shared with the Sphinx build
  and tools/dev.py);
* the chapter plugin (tools/nbchapters.py): with ``--nbmake``, every chapter of
  _toc.yml becomes one nbmake item, executed into the book's cache;
* the order of a run: unit tests, then the chapters (in _toc.yml order), then the
  strict build (tests/test_book.py), then the browser tests (tests/test_browser.py),
  the reader's install test (tests/test_site_install.py), the site's figure data and
  citation (tests/test_site_downloads.py) and the launch environment (tests/test_launch_env.py);
* the ``book_build`` fixture: the strict build, run at most once per session, that
  the build test, the browser tests and the install test share (no test reads
  another's state); ``built_site``: the site they open.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import bookcache  # noqa: E402  (needs the path above)
import nbchapters  # noqa: E402
import strictbuild  # noqa: E402

_SUMMARY: list[str] = []


def pytest_configure(config):
    if not config.pluginmanager.has_plugin(nbchapters.PLUGIN_NAME):
        config.pluginmanager.register(nbchapters.ChapterPlugin(ROOT), nbchapters.PLUGIN_NAME)


def _chapter_plugin(config) -> nbchapters.ChapterPlugin:
    return config.pluginmanager.get_plugin(nbchapters.PLUGIN_NAME)


def _rank(item, plugin) -> int:
    if plugin.docname_of(item):
        return 1
    name = item.path.name if getattr(item, "path", None) else ""
    if name == "test_book.py" and item.get_closest_marker("book"):
        return 2
    if name in ("test_browser.py", "test_site_install.py", "test_site_downloads.py",
                "test_launch_env.py") or item.get_closest_marker("book"):
        # Any test of the built site (test_glue_used, test_reading, ...) runs after the
        # build: run earlier, its built_site fixture would build, and execute, the book.
        return 3
    return 0


def pytest_collection_modifyitems(session, config, items):
    # Chapters take minutes; a broken unit test should be reported first. The
    # sort is stable, so chapters keep their _toc.yml order.
    plugin = _chapter_plugin(config)
    items.sort(key=lambda item: _rank(item, plugin))
    if hasattr(config, "workerinput") and any(_rank(item, plugin) == 1 for item in items):
        # pytest-xdist (-n): chapters run on several workers, and nothing makes the
        # build on one worker wait for the chapters on the others.
        skip = pytest.mark.skip(reason="with -n (pytest-xdist) the strict build and the "
                                "browser tests cannot follow the chapters; run them without -n")
        for item in items:
            if _rank(item, plugin) > 1:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def book_summary():
    """Lines the book items want shown at the end of the run, failures or not."""
    return _SUMMARY


@pytest.fixture(scope="session")
def chapter_runs(pytestconfig) -> nbchapters.ChapterPlugin:
    """The chapters nbmake executed in this session, with their outcomes."""
    return _chapter_plugin(pytestconfig)


# --- the strict build, shared --------------------------------------------------------

# Files whose change makes a built site out of date.
_INPUTS = ("_config.yml", "_toc.yml", "requirements.txt", "pyproject.toml")
# results/: the appendix reads results/at_scale; a rewritten file makes the site stale.
_INPUT_DIRS = ("book", "_static", "tools", "twostep", "results")


@dataclass
class BuildResult:
    code: int
    log: str
    seconds: float
    # Cache records the build added: the chapters it had to execute itself.
    executed: list[str] = field(default_factory=list)
    records_before: int = 0
    records_after: int = 0


class BookBuilder:
    """Runs ``jupyter-book build . -n -W --keep-going`` (strictbuild.strict_build) at
    most once per session and tells what it executed, from the cache's records."""

    def __init__(self, root: Path, summary: list[str]):
        self.root = root
        self.summary = summary
        self.result: BuildResult | None = None

    def build(self) -> BuildResult:
        if self.result is not None:
            return self.result
        jupyter_book = str(Path(sys.executable).with_name("jupyter-book"))
        before = bookcache.cache_records(self.root)
        start = time.perf_counter()
        # --all: re-read every page, so warnings of unchanged pages count too; with
        # every chapter in the cache that costs rendering time only.
        code, log = strictbuild.strict_build(self.root, jupyter_book, force_all=True)
        seconds = time.perf_counter() - start
        after = bookcache.cache_records(self.root)
        added = sorted(bookcache.docname_of_uri(self.root, uri)
                       for pk, (uri, created) in after.items() if before.get(pk) != (uri, created))
        self.result = BuildResult(code, log, seconds, added, len(before), len(after))
        self.summary.append(
            f"strict build: exit {code} in {seconds:.1f} s, log in {strictbuild.BUILD_LOG}; "
            f"cache records {len(before)} before, {len(after)} after; notebooks executed "
            f"by the build: {added or 'none (all cache hits)'}"
        )
        return self.result

    def is_stale(self) -> bool:
        """Whether _build/html is missing, failed last time, or older than its inputs."""
        log = self.root / strictbuild.BUILD_LOG
        if not (self.root / "_build" / "html" / "index.html").is_file() or not log.is_file():
            return True
        if (self.root / strictbuild.FAILED_MARKER).exists():
            return True
        built = log.stat().st_mtime
        paths = [self.root / name for name in _INPUTS]
        for directory in _INPUT_DIRS:
            paths += [p for p in (self.root / directory).rglob("*")
                      if p.is_file() and "__pycache__" not in p.parts]
        return any(p.is_file() and p.stat().st_mtime > built for p in paths)


@pytest.fixture(scope="session")
def book_build() -> BookBuilder:
    return BookBuilder(ROOT, _SUMMARY)


@pytest.fixture(scope="session")
def built_site(book_build, chapter_runs):
    """_build/html, built by this session's strict build or up to date with its sources
    (the browser tests and the reader's install test, tests/test_site_install.py)."""
    html = ROOT / "_build" / "html"
    if book_build.result is None:
        if chapter_runs.failed():
            pytest.skip(f"chapter(s) {', '.join(chapter_runs.failed())} failed to execute "
                        "in this run: no book to open")
        if chapter_runs.runs:
            # -k one_step: a build now could execute every other chapter.
            pytest.skip("chapters were executed in this run without the strict build, "
                        "so _build/html may be stale; run the whole test command")
        if book_build.is_stale():
            book_build.build()
    if book_build.result is not None and book_build.result.code:
        pytest.skip(f"the strict build failed (exit {book_build.result.code}, log in "
                    f"{strictbuild.BUILD_LOG}): no book to open")
    assert (html / "index.html").is_file(), "the strict build left no _build/html/index.html"
    return html


def pytest_terminal_summary(terminalreporter, config):
    plugin = _chapter_plugin(config)
    lines = (plugin.summary if plugin else []) + _SUMMARY
    if lines:
        terminalreporter.section("book")
        for line in lines:
            terminalreporter.write_line(line)
