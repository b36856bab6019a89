"""Shared pytest set-up.

* tools/ on the path (bookcache.py and strictbuild.py are shared with the Sphinx build
  and tools/dev.py);
* the chapter plugin (tools/nbchapters.py): with ``--nbmake``, every chapter of
  _toc.yml becomes one nbmake item, executed into the book's cache;
* the order of a run: unit tests, then the chapters (in _toc.yml order), then the
  strict build (tests/site/test_book.py), then the browser tests (tests/site/test_browser.py),
  the reader's install test (tests/site/test_site_install.py), the site's figure data and
  citation (tests/site/test_site_downloads.py) and the launch environment (tests/site/test_launch_env.py);
* the page tests' shared assertions: ``fits_the_column`` (a figure drawn for the text
  column, every panel labelled) and ``page_table`` (a page's (header, rows) whole, as the
  chapter shows it);
* the ``book_build`` fixture: the strict build, run at most once per session, that
  the build test, the browser tests and the install test share (no test reads
  another's state); ``built_site``: the site they open.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import bookcache  # noqa: E402  (needs the path above)
import kernel_checks  # noqa: E402
import nbchapters  # noqa: E402
import strictbuild  # noqa: E402

_SUMMARY: list[str] = []
#: The environment variable naming the file that tells tools/dev.py the chapters are done.
CHAPTERS_DONE = "TWOSTEP_CHAPTERS_DONE"


def pytest_configure(config):
    # The kernels nbmake starts check every figure they draw, as the build's do
    # (tools/kernel_checks.py; tools/dev.py sets the same).
    kernel_checks.use(ROOT)
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


def _chapters_done() -> None:
    # tools/dev.py test runs the unit tests beside this session once the chapters are done
    # (they then share the two cores with the build and the browser, not with a chapter):
    # it waits for the file named here.
    marker = os.environ.get(CHAPTERS_DONE)
    if marker:
        Path(marker).touch()


def pytest_runtest_setup(item):
    if _rank(item, _chapter_plugin(item.config)) > 1:
        _chapters_done()


def pytest_sessionfinish(session, exitstatus):
    _chapters_done()


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
    (the browser tests and the reader's install test, tests/site/test_site_install.py)."""
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


# --- the page tests' shared assertions ------------------------------------------------

def _labelled(ax, axes, which: str) -> bool:
    # A panel's axis is labelled, or shared with a panel whose axis is, or (a grid of panels)
    # labelled once for its row (y, on the left) or its column (x, at the bottom).
    get = lambda a: getattr(a, f"get_{which}label")()   # noqa: E731
    if get(ax) or any(get(o) and getattr(ax, f"get_shared_{which}_axes")().joined(ax, o)
                      for o in axes):
        return True
    spec = ax.get_subplotspec()
    if spec is None:
        return False
    span = spec.rowspan if which == "y" else spec.colspan
    return any(get(o) and o.get_subplotspec() is not None
               and (o.get_subplotspec().rowspan if which == "y" else o.get_subplotspec().colspan)
               == span for o in axes)


@pytest.fixture
def fits_the_column():
    """``check(fig)``: ``fig`` is a Figure drawn for the text column (at most
    ``figures.MAX_WIDTH_IN`` wide, which the pages show at its drawn size), and each of its
    drawn panels (not a cell that only holds a key or a colour bar) has an x and a y label, or
    shares that axis with a panel that has one. Closes the figure; returns the drawn panels."""
    from matplotlib.figure import Figure
    from twostep.pages import figures

    def check(fig):
        import matplotlib.pyplot as plt

        assert isinstance(fig, Figure), type(fig)
        assert fig.get_figwidth() <= figures.MAX_WIDTH_IN + 1e-9, fig.get_size_inches()
        axes = [ax for ax in fig.get_axes() if ax.get_visible() and ax.axison
                and ax.get_label() != "<colorbar>"]
        assert axes, "no drawn panel"
        for ax in axes:
            assert _labelled(ax, axes, "x") and _labelled(ax, axes, "y"), \
                f"a panel without axis labels: {ax.get_title()!r}"
        plt.close(fig)
        return axes
    return check


@pytest.fixture
def page_table():
    """``check((header, rows), rows=None, label="tab-x")``: a page module's table as the chapter
    shows it: every row as long as the header, every cell text, and ``rows`` rows if given;
    returns the ``{table}`` directive that ``report.markdown_table`` makes of it."""
    from twostep.pages import report

    def check(table, rows: int | None = None, label: str = "tab-x") -> str:
        header, body = table
        assert header and body and all(len(r) == len(header) for r in body), (header, body)
        assert all(isinstance(c, str) for r in body for c in r)
        if rows is not None:
            assert len(body) == rows, (len(body), rows)
        text = report.markdown_table("Caption.", label, header, body).data
        assert text.startswith("```{table}") and f":name: {label}" in text
        return text
    return check
