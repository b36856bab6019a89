"""The book's execution cache: where it is, what each chapter's outputs depend on, its records.

The one module that knows the cache (``_build/.jupyter_cache``: myst-nb's ``cache`` execution
mode, read and written with jupyter-cache's public API). jupyter-cache keys a chapter on its
code cells only; a chapter that calls into ``twostep`` would keep showing outputs of an older
``twostep``. So each chapter also has a fingerprint of what its outputs depend on
(:func:`chapter_fingerprints`): the package files its code runs, followed through their
imports, ``requirements.txt``, ``pyproject.toml``, the files under ``results/``, the
``execute:`` settings of ``_config.yml``, the figure checks the kernels run
(:data:`KERNEL_TOOLS`), the interpreter and the installed versions. A
chapter's records are removed when its fingerprint moves (:func:`ensure_fresh_cache`). What
only changes the rendering (``_toc.yml``, the rest of ``_config.yml``, the build's tools, a
page's prose) is in no fingerprint: it re-executes nothing.

Its users:

* the nbmake plugin (``nbchapters.py``) applies the rule before the first chapter runs and
  stores each executed chapter (:func:`store`);
* the Sphinx build: this module is an extension (:func:`setup`, loaded by ``bookbuild.py``)
  that applies the rule when the builder starts and re-reads every page when any input of the
  build moved (:func:`source_hash`); the other extensions read records from it;
* ``tools/dev.py fingerprint`` prints :func:`source_hash`, the key under which CI keeps the
  cache.

Stdlib only at import time; what needs the environment (yaml, jupytext, jupyter-cache) is
imported where it is used.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

CACHE_DIRNAME = ".jupyter_cache"
STAMP_SUFFIX = ".source-hash"
#: Root files whose change changes what a chapter computes.
RESULT_INPUTS = ("requirements.txt", "pyproject.toml")
#: Root files the build reads: :data:`RESULT_INPUTS`, the book's configuration and contents.
ROOT_INPUTS = ("requirements.txt", "_config.yml", "_toc.yml", "pyproject.toml")
#: What the book's kernels run besides a chapter's own code: the figure checks their IPython
#: startup file loads (tools/kernel_checks.py). A check changes every figure's outputs.
KERNEL_TOOLS = ("tools/kernel_checks.py", "tools/figure_checks.py")


# --- the book's pages, from its own configuration files -----------------------------------


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

    end = text.find("\n---", 3) if text.startswith("---") else -1
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


# --- where the cache is ---------------------------------------------------------------------


def cache_dir(root: Path, configured: str | None = None, build_dir: Path | None = None) -> Path:
    """The execution cache: ``execute: cache:`` of _config.yml (in Sphinx, ``configured`` is
    myst-nb's ``nb_execution_cache_path``, which Jupyter Book sets from it), relative to the
    book's root; empty, ``<build dir>/.jupyter_cache``, Jupyter Book's and myst-nb's default
    (the build dir is ``_build``)."""
    root = Path(root)
    if configured is None:
        configured = execute_settings(root).get("cache") or ""
    if configured:
        path = Path(configured)
        return (path if path.is_absolute() else root / path).resolve()
    return (Path(build_dir) if build_dir else root / "_build").joinpath(CACHE_DIRNAME).resolve()


def stamp_path(cache: Path) -> Path:
    """The chapters' fingerprints the cache's records were made with. Beside the cache, not
    inside it: emptying the cache must not lose the stamp."""
    cache = Path(cache)
    return cache.with_name(cache.name + STAMP_SUFFIX)


# --- the notebook as the cache keys it -------------------------------------------------------


def read_chapter(root: Path, docname: str):
    """The chapter as the notebook jupytext reads (same code cells and cell metadata as
    myst-nb reads, hence the same cache key), with the execution settings of _config.yml in
    the notebook metadata nbmake reads them from."""
    import jupytext

    nb = jupytext.read(source_of(root, docname))
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


# --- what a chapter's outputs depend on ------------------------------------------------------


def environment_fingerprint() -> str:
    """The interpreter and every installed distribution with its version (the landing page
    prints them; an upgrade can change any output)."""
    from importlib import metadata

    dists = sorted({f"{(d.metadata['Name'] or '?').lower()}=={d.version}"
                    for d in metadata.distributions()})
    return "\n".join([sys.version, sys.platform] + dists)


def _results_files(root: Path) -> list[Path]:
    # A chapter that reads one (the appendix "At scale") must be executed again when a run
    # rewrites it; a run's temporaries do not count.
    return sorted(p for p in (Path(root) / "results").rglob("*") if p.is_file()
                  and not p.name.endswith(".tmp") and "__pycache__" not in p.parts)


def _module_imports(path: Path, name: list[str]) -> set[str]:
    # Dotted names of the twostep modules a module imports (functions' imports included).
    package = name if path.name == "__init__.py" else name[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "twostep":
                target = node.module.split(".")
            else:
                continue
            found.add(".".join(target))
            found.update(".".join(target + [alias.name]) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names
                         if alias.name.split(".")[0] == "twostep")
    return found


def package_graph(root: Path) -> dict[str, tuple[Path, set[str]]]:
    """``{"twostep.x.y": (file, imported twostep modules)}`` for every module of the package."""
    package = Path(root) / "twostep"
    graph = {}
    for path in sorted(package.rglob("*.py")):
        parts = ["twostep", *path.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        graph[".".join(parts)] = (path, _module_imports(path, parts))
    return graph


def code_cells(text: str) -> list[str]:
    """The code of a MyST notebook's ``{code-cell}`` blocks (cell options and magics left out)."""
    cells, current = [], None
    for line in text.splitlines():
        if current is None:
            if re.match(r"^`{3,}\{code-cell\}", line):
                current = []
        elif re.match(r"^`{3,}\s*$", line):
            cells.append("\n".join(current))
            current = None
        elif not re.match(r"^(:\w[\w-]*:|%|!)", line):
            current.append(line)
    return cells


def chapter_files(root: Path, docname: str, graph: dict | None = None) -> list[Path]:
    """The package files a chapter's code runs: every module its cells import, the modules
    those import, and so on, with the packages above each (importing ``twostep.a.b`` runs
    ``twostep/__init__.py`` and ``twostep/a/__init__.py``)."""
    graph = package_graph(root) if graph is None else graph
    wanted = set()
    for cell in code_cells(source_of(root, docname).read_text(encoding="utf8")):
        for node in ast.walk(ast.parse(cell)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "twostep":
                wanted.add(node.module)
                wanted.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                wanted.update(a.name for a in node.names if a.name.split(".")[0] == "twostep")
    seen, todo = set(), [w for w in wanted if w in graph]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        parents = [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += [m for m in graph[name][1] | set(parents) if m in graph and m not in seen]
    return sorted(graph[name][0] for name in seen)


def _digest_files(digest, root: Path, paths) -> None:
    for path in paths:
        if path.is_file():
            # The path goes in too, so renaming or moving a module counts as a change.
            digest.update(path.relative_to(root).as_posix().encode() + b"\0"
                          + path.read_bytes() + b"\0")


def chapter_fingerprints(root: Path) -> dict[str, str]:
    """``{docname: fingerprint}`` of every executed page (:func:`chapters`): the files its code
    runs (:func:`chapter_files`), :data:`RESULT_INPUTS`, :data:`KERNEL_TOOLS`, the files under
    ``results/``, the ``execute:`` settings and :func:`environment_fingerprint`. A page's
    prose, ``_toc.yml``, the rest of ``_config.yml`` and the build's other tools are in none;
    an edit to one page module moves the fingerprints of the chapters that import it, and
    only those."""
    root = Path(root)
    graph = package_graph(root)
    shared = hashlib.sha256()
    _digest_files(shared, root, [root / name for name in RESULT_INPUTS + KERNEL_TOOLS]
                  + _results_files(root))
    settings = json.dumps(execute_settings(root), sort_keys=True, default=str)
    shared.update(settings.encode() + b"\0" + environment_fingerprint().encode())
    out = {}
    for docname in chapters(root):
        digest = shared.copy()
        if source_of(root, docname).suffix == ".md":
            _digest_files(digest, root, chapter_files(root, docname, graph))
        out[docname] = digest.hexdigest()
    return out


# --- the build's own inputs: what makes Sphinx re-read every page ----------------------------


def tool_graph(tools: Path) -> dict[str, set[str]]:
    """``{module: the tools modules it imports}`` for every ``*.py`` of the folder ``tools``:
    ``import x`` and ``from x import y`` anywhere in the module (functions' imports too), and
    ``app.setup_extension("x")``, which imports ``x`` when the build runs."""
    tools = Path(tools)
    names = {path.stem for path in tools.glob("*.py")}
    graph = {}
    for path in sorted(tools.glob("*.py")):
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".")[0])
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "setup_extension" and node.args
                  and isinstance(node.args[0], ast.Constant)):
                found.add(str(node.args[0].value).split(".")[0])
        graph[path.stem] = found & names - {path.stem}
    return graph


def build_tools(root: Path) -> list[Path]:
    """The ``tools/`` modules the build runs: the extensions ``_config.yml`` names in
    ``sphinx: local_extensions`` and every tools module they import."""
    import yaml

    config = yaml.safe_load((Path(root) / "_config.yml").read_text(encoding="utf8")) or {}
    tools = Path(root) / "tools"
    graph = tool_graph(tools)
    todo = [n for n in (config.get("sphinx") or {}).get("local_extensions") or {} if n in graph]
    seen = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += graph[name]
    return sorted(tools / f"{name}.py" for name in seen)


def source_hash(root: Path) -> str:
    """Fingerprint of everything outside a page that the built site depends on: the package,
    :data:`ROOT_INPUTS`, :func:`build_tools`, the files under ``results/`` and
    :func:`environment_fingerprint`. Sphinx re-reads every page when it moves; CI keeps the
    cache under it."""
    root = Path(root)
    digest = hashlib.sha256()
    _digest_files(digest, root, sorted((root / "twostep").rglob("*.py"))
                  + [root / name for name in ROOT_INPUTS] + build_tools(root)
                  + _results_files(root))
    digest.update(environment_fingerprint().encode())
    return digest.hexdigest()


# --- records ------------------------------------------------------------------------------


def docname_of_uri(root: Path, uri: str) -> str:
    """The docname (``book/one_step``) of a cache record's source path."""
    path = Path(uri)
    if not path.is_absolute():
        path = Path(root) / path
    try:
        return path.resolve().relative_to(Path(root).resolve()).with_suffix("").as_posix()
    except ValueError:
        return uri


def _cache(directory: Path):
    from jupyter_cache import get_cache

    return get_cache(str(directory))


def cache_records(root: Path, directory: Path | None = None) -> dict[int, tuple[str, str]]:
    """{record pk: (source uri, creation time)} of the book's execution cache."""
    directory = Path(directory) if directory else cache_dir(root)
    if not directory.is_dir():
        return {}
    return {r.pk: (r.uri, str(r.created)) for r in _cache(directory).list_cache_records()}


def record_data(root: Path, docname: str, directory: Path, created: float) -> dict | None:
    """The data of the page's record made at ``created`` (a POSIX time, as myst-nb reports
    the record it took a page's outputs from): ``execution_seconds``, and ``executed_by``
    and ``cpu_count`` when nbmake executed it; None when there is no such record."""
    if not (Path(directory) / "global.db").is_file():
        return None
    for record in _cache(directory).list_cache_records():
        if (docname_of_uri(root, record.uri) == docname
                and record.created.timestamp() == created):
            return dict(record.data or {})
    return None


def merged_outputs(directory: Path, notebook):
    """The notebook with the outputs of its cache record merged in, or None when the cache
    holds none for it (execution off, or it failed)."""
    if not Path(directory).is_dir():
        return None
    try:
        return _cache(directory).merge_match_into_notebook(notebook)[1]
    except KeyError:
        return None


def store(root: Path, docname: str, executed: Path, data: dict) -> int:
    """Put a chapter executed outside the build (nbmake) into the cache under the key myst-nb
    computes when the build reads its source: the code cells and their metadata exactly as
    :func:`read_chapter` gives them, with the executed notebook's outputs (nbmake adds timing
    metadata to the cells it runs). ``executed`` is rewritten so; returns the record's pk."""
    import nbformat

    ran = nbformat.read(executed, as_version=4)
    nb = read_chapter(root, docname)
    code = [c for c in nb.cells if c.cell_type == "code"]
    done = [c for c in ran.cells if c.cell_type == "code"]
    if len(code) != len(done):
        raise RuntimeError(f"{executed}: {len(done)} code cells, expected {len(code)}")
    for cell, out in zip(code, done):
        cell.outputs = out.outputs
        cell.execution_count = out.execution_count
    for key in ("language_info", "widgets"):
        if key in ran.metadata:
            nb.metadata[key] = ran.metadata[key]
    nbformat.write(nb, executed)
    record = _cache(cache_dir(root)).cache_notebook_file(
        str(executed), uri=str(source_of(root, docname)), data=data,
        check_validity=False, overwrite=True)
    return record.pk


def forget(root: Path, directory: Path, docnames) -> int:
    """Remove the cache records of these chapters; return how many."""
    cache, removed = _cache(directory), 0
    for record in cache.list_cache_records():
        if docname_of_uri(root, record.uri) in docnames:
            cache.remove_cache(record.pk)
            removed += 1
    return removed


def ensure_fresh_cache(root: Path, directory: Path | None = None) -> bool:
    """Keep each chapter's cached outputs only while its fingerprint
    (:func:`chapter_fingerprints`) is the one they were made with.

    The stamp beside the cache holds the fingerprints. Without a readable stamp the whole cache
    is emptied; otherwise the records of the chapters whose fingerprint moved are removed.
    Returns True when anything was removed (or the cache had no stamp yet).
    """
    root = Path(root)
    directory = Path(directory) if directory else cache_dir(root)
    stamp = stamp_path(directory)
    current = chapter_fingerprints(root)
    try:
        previous = json.loads(stamp.read_text())
    except (OSError, ValueError):
        previous = None
    if previous == current:
        return False
    known = isinstance(previous, dict)
    stale = sorted(d for d in current if previous.get(d) != current[d]) if known else []
    if not known:
        shutil.rmtree(directory, ignore_errors=True)
    elif stale and (directory / "global.db").is_file():
        forget(root, directory, set(stale))
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    return not known or bool(stale)


# --- the Sphinx extension: the rule in every build -------------------------------------------

_ENV_ATTR = "twostep_source_hash"


def cache_dir_of(app) -> Path:
    """The cache the build uses (myst-nb's ``nb_execution_cache_path``, empty for the default
    beside the HTML output)."""
    return cache_dir(Path(app.srcdir), app.config["nb_execution_cache_path"] or "",
                     Path(app.outdir).parent)


def _on_builder_inited(app) -> None:
    from sphinx.util import logging

    directory = cache_dir_of(app)
    if ensure_fresh_cache(Path(app.srcdir), directory):
        logging.getLogger(__name__).info(
            f"[bookcache] new or changed inputs of chapters: stale records removed from {directory}")
    app.twostep_source_hash = source_hash(Path(app.srcdir))


def _on_env_get_outdated(app, env, added, changed, removed):
    # Removing records is not enough: Sphinx keeps the doctrees of unchanged pages, outputs
    # included, and would not read them again. Re-read every page when the doctrees were
    # made from other inputs (cache hits cost rendering time only).
    if getattr(env, _ENV_ATTR, None) == app.twostep_source_hash:
        return []
    setattr(env, _ENV_ATTR, app.twostep_source_hash)
    return sorted(env.found_docs - added - changed - removed)


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    app.connect("env-get-outdated", _on_env_get_outdated)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
