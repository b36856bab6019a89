"""The chapters as nbmake test items, executed once per run into the book's cache.

A pytest plugin, registered by ``tests/conftest.py``. The chapters stay MyST text
notebooks in ``book/``; nbmake executes ``.ipynb`` files. So, when pytest runs with
``--nbmake`` and without explicit paths (``python3 tools/dev.py test``, or
``pytest --nbmake`` from the repository root):

* every chapter of ``_toc.yml`` that is a MyST notebook is converted with jupytext
  to ``artifacts/notebooks/<docname>.ipynb`` (nbmake skips anything under
  ``_build/``) and that path is added to pytest's arguments, so nbmake's own
  collector makes one item of it, in ``_toc.yml`` order. A failing chapter is
  reported by nbmake: its cell and traceback;
* before the first chapter runs, ``bookcache.ensure_fresh_cache`` applies the
  stale-cache rule (the records of a chapter whose fingerprint moved are removed);
* after a chapter passed, its executed notebook is stored in the book's
  execution cache (``bookcache.store``), under the key myst-nb computes when the
  build reads the ``.md``, with the run's time and the machine's cores. The
  strict build that follows then finds every chapter in the cache.

The converted notebooks are plain nbmake input: ``pytest --nbmake
artifacts/notebooks/book/one_step.ipynb`` runs one as nbmake's documentation says
(without this plugin, so without the cache). Nothing here uses an internal of
jupyter-book, myst-nb or nbmake.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import bookcache
import strictbuild
# The book's executed pages, read here by tests and benchmarks too (they live in bookcache).
from bookcache import chapters, read_chapter

PLUGIN_NAME = "twostep-chapters"
#: A file to write once every chapter item of the session has run (``tools/dev.py test``
#: starts the unit tests only then, so each chapter's recorded time is its own).
DONE_ENV = "TWOSTEP_CHAPTERS_DONE"
CONVERTED = Path("artifacts") / "notebooks"


def converted_path(root: Path, docname: str) -> Path:
    return Path(root) / CONVERTED / (docname + ".ipynb")


def write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and path.read_text(encoding="utf8") == text:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf8")
    os.replace(tmp, path)


def convert_chapters(root: Path) -> dict[Path, str]:
    """Write every chapter as .ipynb for nbmake; return {notebook path: docname}."""
    import nbformat

    converted = {}
    for docname in chapters(root):
        target = converted_path(root, docname)
        write_if_changed(target, nbformat.writes(read_chapter(root, docname)))
        converted[target.resolve()] = docname
    return converted


# --- the plugin --------------------------------------------------------------------


@dataclass
class ChapterRun:
    docname: str
    outcome: str  # "passed", "failed", "skipped"
    seconds: float = 0.0
    record_pk: int | None = None


@dataclass(eq=False)  # pluggy keeps plugins in sets
class ChapterPlugin:
    root: Path
    converted: dict[Path, str] = field(default_factory=dict)
    runs: dict[str, ChapterRun] = field(default_factory=dict)
    summary: list[str] = field(default_factory=list)
    _fresh: bool = False
    _pending: set[str] = field(default_factory=set)
    _signalled: bool = False

    # -- collection

    def pytest_configure(self, config):
        if not getattr(config.option, "nbmake", False):  # no --nbmake, or no nbmake
            return
        self.converted = convert_chapters(self.root)
        if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
            return  # explicit paths: collect what was asked for, nothing more
        have = {str(Path(a).resolve()) for a in config.args}
        for path in self.converted:
            if str(path) not in have:
                config.args.append(str(path.relative_to(self.root)))

    def docname_of(self, item) -> str | None:
        path = getattr(item, "path", None)
        return self.converted.get(Path(path).resolve()) if path else None

    def pytest_itemcollected(self, item):
        if self.docname_of(item):
            item.add_marker(pytest.mark.book)

    def pytest_collection_finish(self, session):
        self._pending = {item.nodeid for item in session.items if self.docname_of(item)}
        if not self._pending:
            self.signal_done()

    def pytest_runtest_logfinish(self, nodeid, location):
        if nodeid in self._pending:
            self._pending.discard(nodeid)
            if not self._pending:
                self.signal_done()

    def pytest_sessionfinish(self, session):
        self.signal_done()  # a session stopped early (-x, a crash) must not leave anyone waiting

    def signal_done(self) -> None:
        flag = os.environ.get(DONE_ENV)
        if flag and not self._signalled:
            self._signalled = True
            Path(flag).write_text(f"{len(self.executed())} chapters executed\n", encoding="utf8")

    # -- execution

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        docname = self.docname_of(item)
        if not docname:
            yield
            return
        if not self._fresh:
            # The stale-cache rule, before anything is executed into the cache.
            bookcache.ensure_fresh_cache(self.root)
            self._fresh = True
        option = item.config.option
        # nbmake writes the executed notebook back only with --overwrite; here
        # "back" is our own converted copy, never a source.
        overwrite, option.overwrite = option.overwrite, True
        start = time.perf_counter()
        try:
            outcome = yield
        finally:
            option.overwrite = overwrite
        seconds = time.perf_counter() - start
        run = ChapterRun(docname, "failed" if outcome.excinfo else "passed", seconds)
        self.runs[docname] = run
        if outcome.excinfo is None:
            run.record_pk = self.store(docname, Path(item.path), seconds)

    def store(self, docname: str, executed_path: Path, seconds: float) -> int:
        """Put nbmake's executed notebook into the book's cache; return its record.
        The machine's cores go with it: each page states how long it took, and on what."""
        return bookcache.store(self.root, docname, executed_path, {
            "execution_seconds": seconds, "executed_by": "nbmake", "cpu_count": os.cpu_count()})

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        docname = self.docname_of(item)
        if not docname or call.when != "call":
            return
        report = outcome.get_result()
        log = self.root / strictbuild.REPORTS / (docname + ".err.log")
        if report.passed:
            log.unlink(missing_ok=True)
            self.summary.append(f"{docname}: executed by nbmake in {call.duration:.1f} s, "
                                "stored in the cache")
        elif report.failed:
            # Where myst-nb puts the report of a chapter that fails in the build.
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(strictbuild.ANSI.sub("", report.longreprtext), encoding="utf8")
            self.summary.append(f"{docname}: FAILED, see {log.relative_to(self.root)}")

    def failed(self) -> list[str]:
        return [d for d, run in self.runs.items() if run.outcome == "failed"]

    def executed(self) -> list[str]:
        return [d for d, run in self.runs.items() if run.outcome == "passed"]
