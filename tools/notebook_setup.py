"""Notebooks that run anywhere: a set-up cell first in every executed notebook the site offers
(a Sphinx extension).

The site offers each page's executed notebook as ``_sources/<page>.ipynb``
(``upstream_internals``, workaround 2, copies it there as each page is written). At the end of
an HTML build this puts :func:`setup_cell` first in each of them: in a fresh kernel (Colab,
Binder, a reader's own Jupyter), it installs the package of the same version as the book, the
wheel the site offers (``_downloads/code/``, ``code_downloads``), with the pins of the site's
``requirements.txt`` as constraints and what the pages import besides (matplotlib, myst-nb),
and fetches the results files the pages read (``results/at_scale/*.json`` and
``results/registry.json``, which this copies beside the others) into the folder the notebook
runs in, where the pages look for them outside a checkout
(``twostep.pages.spikes.results_folder``).

Where it takes them from, first found: ``TWOSTEP_WHEEL`` (a path or URL of the wheel) and the
files beside it; a wheel in the notebook's own folder; the site at ``TWOSTEP_SITE`` (its
address); the site the book was built for (Sphinx's ``html_baseurl``, ``html: baseurl:`` in
``_config.yml``; empty until the site is published). Where twostep of that version is already
installed and the results files are there (a checkout, the book's own build), it does
nothing. The cell is replaced, never added twice, when a page is written again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

#: The tag of the set-up cell (and its id).
TAG = "twostep-setup"
# Where code_downloads puts the wheel, the pins and the results files (relative to the site).
CODE = "_downloads/code"

_TEMPLATE = '''\
# Set-up: installs twostep {version}, the package this notebook runs on, and fetches the
# results files the book's pages read. It does nothing where both are already here (a
# checkout of the book's repository, the book's own build). Elsewhere (Colab, Binder, your
# own Jupyter) it takes them from TWOSTEP_WHEEL (a path or URL of the wheel; the results
# files beside it), a wheel in this folder, the site at TWOSTEP_SITE, or the book's site.
import importlib, importlib.metadata, os, subprocess, sys, urllib.request
from pathlib import Path

TWOSTEP = "{version}"
WHEEL = "{wheel}"
RESULTS = {results!r}
SITE = os.environ.get("TWOSTEP_SITE") or "{site}"


def _source(name):
    given = os.environ.get("TWOSTEP_WHEEL", "")
    if given:
        return given if name == WHEEL else given.rsplit("/", 1)[0] + "/" + name
    if Path(name).is_file():
        return name
    if not SITE:
        raise RuntimeError("twostep {version} is not installed and this notebook does not "
                           "know where the book's site is: set TWOSTEP_SITE to its address "
                           "or TWOSTEP_WHEEL to the wheel's path, then run this cell again")
    return SITE.rstrip("/") + "/{code}/" + name


def _fetch(name, target=None):
    # The file, in this folder (or at target).
    source, target = _source(name), target or name
    if source.startswith(("http://", "https://")):
        with urllib.request.urlopen(source, timeout=120) as response:
            Path(target).write_bytes(response.read())
    elif Path(source).resolve() != Path(target).resolve():
        Path(target).write_bytes(Path(source).read_bytes())
    return target


try:
    _installed = importlib.metadata.version("twostep")
except importlib.metadata.PackageNotFoundError:
    _installed = None
if _installed != TWOSTEP:
    _pins = []
    try:
        import tempfile
        _pins = ["-c", _fetch("requirements.txt", tempfile.mkstemp(suffix=".txt")[1])]
    except (OSError, ValueError):
        pass    # no pins beside the wheel: pip picks the versions
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", *_pins, _fetch(WHEEL),
                           "matplotlib", "myst-nb"])
    importlib.invalidate_caches()
import twostep

# In a checkout the pages read results/ beside the package; anywhere else, this folder.
if not (Path(twostep.__file__).resolve().parents[1] / "results").is_dir():
    for _name in RESULTS:
        if not Path(_name).is_file():
            try:
                _fetch(_name)
            except (OSError, RuntimeError) as _error:
                print(f"{{_name}} not fetched ({{_error}}): a page that reads it needs it here")
print("twostep", twostep.__version__, "from", Path(twostep.__file__).parent)
'''


def setup_cell(version: str, wheel: str, results: list[str], site: str = "") -> dict:
    """The set-up cell (an nbformat 4 code cell) for twostep ``version``, its ``wheel``'s file
    name, the ``results`` files' names and the site's address (``""``: none known)."""
    source = _TEMPLATE.format(version=version, wheel=wheel, results=list(results),
                              site=site.rstrip("/"), code=CODE)
    return {"cell_type": "code", "execution_count": None, "id": TAG,
            "metadata": {"tags": [TAG]}, "outputs": [], "source": source}


def with_setup_cell(notebook: dict, cell: dict) -> dict:
    """``notebook`` with ``cell`` first, in place of any set-up cell it had."""
    cells = [c for c in notebook.get("cells", [])
             if TAG not in c.get("metadata", {}).get("tags", [])]
    return {**notebook, "cells": [cell, *cells]}


def add_setup_cells(html: Path, cell: dict) -> list[Path]:
    """Put ``cell`` first in every ``_sources/**/*.ipynb`` of the built site ``html``."""
    done = []
    for path in sorted((Path(html) / "_sources").rglob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf8"))
        path.write_text(json.dumps(with_setup_cell(notebook, cell), indent=1,
                                   ensure_ascii=False) + "\n", encoding="utf8")
        done.append(path)
    return done


def results_files(root: Path) -> list[Path]:
    """The results files a page may read: ``results/at_scale/*.json`` and the registry."""
    root = Path(root)
    return sorted((root / "results" / "at_scale").glob("*.json")) + [
        p for p in [root / "results" / "registry.json"] if p.is_file()]


def _build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    import code_downloads
    import tomllib

    root, html = Path(app.srcdir), Path(app.outdir)
    code = html / CODE
    code.mkdir(parents=True, exist_ok=True)
    # code_downloads offers results/at_scale/; the registry of the confirmatory run too.
    for path in results_files(root):
        if not (code / path.name).is_file():
            shutil.copy2(path, code / path.name)
    version = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    # The published numbers of this version, for `python -m twostep verify --snapshot URL`.
    snapshot = root / "releases" / f"{version}.json"
    if snapshot.is_file():
        shutil.copy2(snapshot, code / f"twostep-{version}-snapshot.json")
    cell = setup_cell(version, code_downloads.wheel_name(root),
                      [p.name for p in results_files(root)], app.config.html_baseurl or "")
    done = add_setup_cells(html, cell)
    from sphinx.util import logging

    logging.getLogger(__name__).info(
        f"[notebook_setup] a set-up cell first in {len(done)} downloadable notebooks")


def setup(app):
    app.connect("build-finished", _build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
