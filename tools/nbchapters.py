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
* before the first chapter runs, ``bookbuild.ensure_fresh_cache`` applies the
  stale-cache rule (a change in ``twostep/`` or ``requirements.txt`` empties the
  cache);
* after a chapter passed, its executed notebook is stored in the book's
  execution cache with jupyter-cache's public API (``cache_notebook_file``), under
  the hash myst-nb computes when the build reads the ``.md``: the code cells and
  their metadata exactly as jupytext converted them (nbmake adds timing metadata
  to the cells it runs, so only the outputs of its notebook are taken). The
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

import bookbuild

PLUGIN_NAME = "twostep-chapters"
CONVERTED = Path("artifacts") / "notebooks"


# --- the book's chapters and settings, from its own configuration files ----------


def toc_docnames(root: Path) -> list[str]:
    """The pages of ``_toc.yml``, root first, in reading order."""
    from sphinx_external_toc.parsing import parse_toc_yaml

    site_map = parse_toc_yaml(Path(root) / "_toc.yml")
    order: list[str] = []

    def walk(docname: str) -> None:
        order.append(docname)
        for child in site_map[docname].child_files():
            walk(child)

    walk(site_map.root.docname)
    return order


def source_of(root: Path, docname: str) -> Path:
    for suffix in (".md", ".ipynb"):
        path = Path(root) / (docname + suffix)
        if path.is_file():
            return path
    raise FileNotFoundError(f"_toc.yml lists {docname!r}, which has no .md/.ipynb")


def _front_matter(text: str) -> dict:
    import yaml

    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end < 0:
        return {}
    try:
        data = yaml.safe_load(text[3:end])
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def is_notebook(path: Path) -> bool:
    """Whether myst-nb executes this page: an .ipynb, or a .md whose front matter
    declares jupytext's MyST format (the rule in myst-nb's documentation)."""
    path = Path(path)
    if path.suffix == ".ipynb":
        return True
    meta = _front_matter(path.read_text(encoding="utf8"))
    fmt = ((meta.get("jupytext") or {}).get("text_representation") or {}).get("format_name")
    return fmt == "myst" or meta.get("file_format") == "mystnb"


def chapters(root: Path) -> list[str]:
    """Docnames of the pages of _toc.yml that are executed (plain pages are not)."""
    return [d for d in toc_docnames(root) if is_notebook(source_of(root, d))]


def execute_settings(root: Path) -> dict:
    """The ``execute:`` section of _config.yml (Jupyter Book's documented keys)."""
    import yaml

    config = yaml.safe_load((Path(root) / "_config.yml").read_text(encoding="utf8")) or {}
    return config.get("execute") or {}


def cache_dir(root: Path) -> Path:
    """The execution cache the build reads: ``execute: cache:`` in _config.yml, or
    Jupyter Book's default, ``_build/.jupyter_cache``."""
    configured = execute_settings(root).get("cache")
    if configured:
        path = Path(configured)
        return (path if path.is_absolute() else Path(root) / path).resolve()
    return bookbuild.default_cache_dir(root).resolve()


def read_chapter(root: Path, docname: str):
    """The chapter as the notebook jupytext reads (same code cells and cell
    metadata as myst-nb reads, hence the same cache key), with the execution
    settings of _config.yml in the notebook metadata nbmake reads them from."""
    import jupytext

    source = source_of(root, docname)
    nb = jupytext.read(source)
    settings = execute_settings(root)
    own = nb.metadata.get("mystnb") or {}  # a chapter's own front-matter settings
    execution = {}
    timeout = own.get("execution_timeout", settings.get("timeout"))
    if timeout is not None:
        execution["timeout"] = int(timeout)
    allow = own.get("execution_allow_errors", settings.get("allow_errors"))
    if allow is not None:
        execution["allow_errors"] = bool(allow)
    # Notebook metadata other than the kernelspec is not part of the cache key.
    nb.metadata["execution"] = execution
    return nb


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

    # -- execution

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        docname = self.docname_of(item)
        if not docname:
            yield
            return
        if not self._fresh:
            # The stale-cache rule, before anything is executed into the cache.
            bookbuild.ensure_fresh_cache(self.root, cache_dir(self.root))
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
        """Put nbmake's executed notebook into the book's cache; return its record."""
        import nbformat
        from jupyter_cache import get_cache

        executed = nbformat.read(executed_path, as_version=4)
        nb = read_chapter(self.root, docname)
        code = [c for c in nb.cells if c.cell_type == "code"]
        ran = [c for c in executed.cells if c.cell_type == "code"]
        if len(code) != len(ran):
            raise RuntimeError(f"{executed_path}: {len(ran)} code cells, expected {len(code)}")
        for cell, done in zip(code, ran):
            cell.outputs = done.outputs
            cell.execution_count = done.execution_count
        for key in ("language_info", "widgets"):
            if key in executed.metadata:
                nb.metadata[key] = executed.metadata[key]
        nbformat.write(nb, executed_path)
        cache = get_cache(str(cache_dir(self.root)))
        record = cache.cache_notebook_file(
            str(executed_path),
            uri=str(source_of(self.root, docname)),
            # The machine's cores: each page states how long it took, and on what.
            data={"execution_seconds": seconds, "executed_by": "nbmake",
                  "cpu_count": os.cpu_count()},
            check_validity=False,
            overwrite=True,
        )
        return record.pk

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        docname = self.docname_of(item)
        if not docname or call.when != "call":
            return
        report = outcome.get_result()
        log = self.root / bookbuild.REPORTS / (docname + ".err.log")
        if report.passed:
            log.unlink(missing_ok=True)
            self.summary.append(f"{docname}: executed by nbmake in {call.duration:.1f} s, "
                                "stored in the cache")
        elif report.failed:
            # Where myst-nb puts the report of a chapter that fails in the build.
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(bookbuild.ANSI.sub("", report.longreprtext), encoding="utf8")
            self.summary.append(f"{docname}: FAILED, see {log.relative_to(self.root)}")

    def failed(self) -> list[str]:
        return [d for d, run in self.runs.items() if run.outcome == "failed"]

    def executed(self) -> list[str]:
        return [d for d, run in self.runs.items() if run.outcome == "passed"]


def cache_records(root: Path) -> dict[int, tuple[str, str]]:
    """{record pk: (source uri, creation time)} of the book's execution cache."""
    directory = cache_dir(root)
    if not directory.is_dir():
        return {}
    from jupyter_cache import get_cache

    return {r.pk: (r.uri, str(r.created)) for r in get_cache(str(directory)).list_cache_records()}
