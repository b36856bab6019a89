"""The book as tests: one item per chapter, in ``_toc.yml`` order, then the build.

Each chapter is executed exactly once per run. The chapter items execute it
with myst-nb's own cache client (the code path ``jupyter-book build`` takes in
``execute_notebooks: cache`` mode) into ``_build/.jupyter_cache``; the strict
build then finds every chapter in that cache and only renders it. The build
item reads the build log to prove it: a chapter executed a second time fails
the test.
"""

from __future__ import annotations

import dataclasses as dc
import re
import sys
import time
from functools import lru_cache
from pathlib import Path

import pytest

import bookbuild

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ROOT / bookbuild.REPORTS

# docname -> True (executed or found in the cache) / False (failed), this run.
_chapter_ok: dict[str, bool] = {}
# "exit": the strict build's exit code, once it ran in this session; the
# browser tests (tests/test_browser.py) test its pages only if it is 0.
_build_result: dict[str, int] = {}


def _toc_docnames() -> list[str]:
    from sphinx_external_toc.parsing import parse_toc_yaml

    site_map = parse_toc_yaml(ROOT / "_toc.yml")
    order: list[str] = []

    def walk(docname: str) -> None:
        order.append(docname)
        for child in site_map[docname].child_files():
            walk(child)

    walk(site_map.root.docname)
    return order


def _source(docname: str) -> Path:
    for suffix in (".md", ".ipynb"):
        if (ROOT / (docname + suffix)).is_file():
            return ROOT / (docname + suffix)
    raise FileNotFoundError(f"_toc.yml lists {docname!r}, which has no .md/.ipynb")


def _is_notebook(path: Path) -> bool:
    from myst_nb.core.read import is_myst_markdown_notebook

    return path.suffix == ".ipynb" or is_myst_markdown_notebook(path.read_text())


def _chapters() -> list[str]:
    # Plain Markdown pages (no code cells) are not executed, so get no item.
    return [d for d in _toc_docnames() if _is_notebook(_source(d))]


@lru_cache(maxsize=1)
def _parser_configs():
    """myst and myst-nb settings exactly as jupyter-book derives them from _config.yml."""
    from jupyter_book.config import get_final_config
    from myst_nb.core.config import NbParserConfig
    from myst_parser.config.main import MdParserConfig

    sphinx_config, _ = get_final_config(
        user_yaml=ROOT / "_config.yml",
        cli_config={"latex_individualpages": False},
        sourcedir=ROOT,
    )

    def pick(cls, prefix):
        names = {f.name for f in dc.fields(cls)}
        return {
            key[len(prefix) :]: value
            for key, value in sphinx_config.items()
            if key.startswith(prefix) and key[len(prefix) :] in names
        }

    md_config = MdParserConfig(**pick(MdParserConfig, "myst_"))
    nb_config = NbParserConfig(**pick(NbParserConfig, "nb_"))
    cache_dir = nb_config.execution_cache_path or bookbuild.default_cache_dir(ROOT)
    nb_config = nb_config.copy(execution_cache_path=str(Path(cache_dir).resolve()))
    return md_config, nb_config


class _Log:
    """Collects myst-nb's messages (it calls logger.info(msg, subtype=...))."""

    def __init__(self):
        self.lines: list[str] = []

    def _add(self, level, msg, *args, **kwargs):
        self.lines.append(f"{level}: {msg % args if args else msg}")

    def debug(self, *a, **k):
        pass

    def info(self, *a, **k):
        self._add("info", *a, **k)

    def warning(self, *a, **k):
        self._add("warning", *a, **k)

    def error(self, *a, **k):
        self._add("error", *a, **k)


def execute_chapter(path: Path):
    """Execute (or fetch from the cache) one chapter as the book build would."""
    from myst_nb.core.execute import NotebookClientCache
    from myst_nb.core.read import create_nb_reader

    md_config, nb_config = _parser_configs()
    text = path.read_text(encoding="utf8")
    reader = create_nb_reader(str(path), md_config, nb_config, text)
    notebook = reader.read(text)
    # Same per-notebook overrides as myst_nb.sphinx_.Parser.parse (e.g. a
    # chapter's own execution_timeout in its front matter).
    if nb_config.metadata_key in notebook.metadata:
        overrides = dict(notebook.metadata[nb_config.metadata_key])
        overrides.pop("output_folder", None)
        nb_config = nb_config.copy(**overrides)
    log = _Log()
    client = NotebookClientCache(notebook, path, nb_config, log, read_fmt=reader.read_fmt)
    with client:
        return client.exec_metadata, log.lines


def _readable(traceback: str) -> str:
    text = bookbuild.ANSI.sub("", traceback)
    # nbclient's own stack frames are noise; the cell and its error follow this.
    start = text.find("An error occurred while executing the following cell")
    return text[start:] if start >= 0 else text


@pytest.fixture(scope="session")
def fresh_cache():
    _, nb_config = _parser_configs()
    bookbuild.ensure_fresh_cache(ROOT, Path(nb_config.execution_cache_path))


@pytest.mark.book
@pytest.mark.parametrize("docname", _chapters())
def test_chapter_executes(docname, fresh_cache, book_summary):
    path = _source(docname)
    report = REPORTS.joinpath(*(docname + ".err.log").split("/"))
    start = time.perf_counter()
    meta, log = execute_chapter(path)
    wall = time.perf_counter() - start
    cached = any("Using cached notebook" in line for line in log)
    _chapter_ok[docname] = meta["succeeded"]
    if meta["succeeded"]:
        report.unlink(missing_ok=True)
        how = "from cache" if cached else f"executed in {meta['runtime']:.1f} s"
        book_summary.append(f"{docname}: {how} ({wall:.1f} s)")
        return
    # Same place and content as myst-nb's own report, so the build and the
    # tests leave the traceback where the README says it is.
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(meta["traceback"], encoding="utf8")
    book_summary.append(f"{docname}: FAILED, see {report.relative_to(ROOT)}")
    pytest.fail(
        f"{path.relative_to(ROOT)} failed to execute ({meta['error']}); "
        f"report kept in {report.relative_to(ROOT)}\n\n{_readable(meta['traceback'])}",
        pytrace=False,
    )


@pytest.mark.book
def test_book_builds_strictly(book_summary):
    failed = [d for d, ok in _chapter_ok.items() if not ok]
    _build_result["exit"] = 1  # until the build below has passed
    if failed:
        # Building would execute the broken chapters a second time, only to
        # fail on the same error.
        pytest.fail(
            f"book not built: chapter(s) {', '.join(failed)} failed to execute "
            f"(tracebacks in {REPORTS.relative_to(ROOT)})",
            pytrace=False,
        )
    jupyter_book = str(Path(sys.executable).with_name("jupyter-book"))
    start = time.perf_counter()
    # --all: re-read every page, so warnings of unchanged pages count too; with
    # every chapter in the cache that costs rendering time only.
    code, log = bookbuild.strict_build(ROOT, jupyter_book, force_all=True)
    wall = time.perf_counter() - start
    executed = _executed_in_build(log)
    book_summary.append(
        f"strict build: exit {code} in {wall:.1f} s, log in {bookbuild.BUILD_LOG}; "
        f"notebooks executed by the build: {sorted(executed) or 'none (all cache hits)'}"
    )
    if code:
        warnings = [ln for ln in log.splitlines() if "WARNING" in ln or "ERROR" in ln]
        pytest.fail(
            f"jupyter-book build failed (exit {code}); full log: {bookbuild.BUILD_LOG}\n"
            + "\n".join(warnings or log.splitlines()[-40:]),
            pytrace=False,
        )
    twice = executed & set(_chapter_ok)
    assert not twice, (
        f"the build executed {sorted(twice)} again although the test items had just "
        "executed them: the pytest side and myst-nb no longer hash notebooks alike"
    )
    _build_result["exit"] = 0


def _executed_in_build(log: str) -> set[str]:
    # myst-nb logs "<source path>: Executing notebook using local CWD [mystnb]".
    executed = set()
    for line in log.splitlines():
        match = re.match(r"(.+?):\s*Executing notebook", line)
        if match:
            source = Path(match.group(1))
            if not source.is_absolute():
                source = ROOT / source
            executed.add(source.resolve().relative_to(ROOT).with_suffix("").as_posix())
    return executed
