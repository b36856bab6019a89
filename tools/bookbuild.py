"""How the book is built, and how its executed outputs are kept honest.

The jupyter cache (``_build/.jupyter_cache``, myst-nb's ``cache`` execution
mode) keys each chapter on its own code cells only. A chapter that calls into
``twostep`` would keep showing outputs of an older ``twostep`` after the package
changes, so the package sources and ``requirements.txt`` are fingerprinted and
the cache is thrown away when the fingerprint moves.

It also puts each executed chapter in its page's download menu.

One module, three users, so each rule is written once:

* Sphinx loads it as an extension (``sphinx: local_extensions`` in
  ``_config.yml``), so even a bare ``jupyter-book build`` honours the rule;
* the pytest chapter items (``tests/test_book.py``) call ``ensure_fresh_cache``
  before executing chapters into the same cache, and ``strict_build`` after;
* ``tools/dev.py book`` calls ``strict_build``.

Stdlib only at import time: ``tools/dev.py`` imports it before the venv exists.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

CACHE_DIRNAME = ".jupyter_cache"
STAMP_SUFFIX = ".source-hash"
# -n: unresolved references are warnings; -W: warnings fail the build;
# --keep-going: report every warning, not only the first.
BUILD_ARGS = ["build", ".", "-n", "-W", "--keep-going"]
BUILD_LOG = Path("_build") / "build.log"
FAILED_MARKER = Path("_build") / ".last-build-failed"
REPORTS = Path("_build") / "html" / "reports"
# jupyter-book colours its output even when it goes to a pipe.
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def source_hash(root: Path) -> str:
    """Fingerprint of everything outside a chapter that its outputs depend on."""
    root = Path(root)
    digest = hashlib.sha256()
    files = sorted((root / "twostep").rglob("*.py")) + [root / "requirements.txt"]
    for path in files:
        if not path.is_file():
            continue
        # The path goes in too, so renaming or moving a module counts as a change.
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def default_cache_dir(root: Path) -> Path:
    return Path(root) / "_build" / CACHE_DIRNAME


def stamp_path(cache_dir: Path) -> Path:
    # Beside the cache, not inside it: clearing the cache must not lose the stamp.
    cache_dir = Path(cache_dir)
    return cache_dir.with_name(cache_dir.name + STAMP_SUFFIX)


def ensure_fresh_cache(root: Path, cache_dir: Path | None = None) -> bool:
    """Delete ``cache_dir`` unless it was filled with the current sources.

    Returns True when the cache was cleared (or had no stamp yet).
    """
    cache_dir = Path(cache_dir) if cache_dir else default_cache_dir(root)
    stamp = stamp_path(cache_dir)
    current = source_hash(root)
    previous = stamp.read_text().strip() if stamp.is_file() else None
    if previous == current:
        return False
    if cache_dir.exists():
        shutil.rmtree(cache_dir)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(current + "\n")
    return True


def strict_build(root: Path, jupyter_book: str, *, force_all=False, echo=False):
    """Run the strict HTML build; return (exit code, full log text).

    Sphinx re-emits a page's warnings only when it re-reads that page, so after
    a failed build the next one re-reads everything (``--all``); otherwise a
    second run over an unchanged, broken page would pass.
    """
    root = Path(root)
    # myst-nb writes a report per failing chapter but never removes old ones.
    shutil.rmtree(root / REPORTS, ignore_errors=True)
    marker = root / FAILED_MARKER
    args = [jupyter_book, *BUILD_ARGS]
    if force_all or marker.exists():
        args.append("--all")
    proc = subprocess.Popen(
        args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if echo:
            print(line, end="", flush=True)
    code = proc.wait()
    log = ANSI.sub("", "".join(lines))
    (root / BUILD_LOG).parent.mkdir(parents=True, exist_ok=True)
    (root / BUILD_LOG).write_text(" ".join(args) + "\n" + log)
    if code:
        marker.touch()
    else:
        marker.unlink(missing_ok=True)
    return code, log


# --- Sphinx extension -------------------------------------------------------

_ENV_ATTR = "twostep_source_hash"


def _cache_dir_of(app) -> Path:
    # Same resolution as myst-nb's own builder-inited handler.
    configured = app.config["nb_execution_cache_path"]
    if configured:
        return Path(configured).resolve()
    return Path(app.outdir).parent.joinpath(CACHE_DIRNAME).resolve()


def _on_builder_inited(app) -> None:
    from sphinx.util import logging

    root = Path(app.srcdir)
    cache_dir = _cache_dir_of(app)
    if ensure_fresh_cache(root, cache_dir):
        logging.getLogger(__name__).info(
            f"[bookbuild] new or changed twostep sources: emptied {cache_dir}"
        )
    app.twostep_source_hash = source_hash(root)


def _on_env_get_outdated(app, env, added, changed, removed):
    # Emptying the cache is not enough: Sphinx keeps the doctrees of unchanged
    # pages, outputs included, and would not execute them again. Re-read every
    # page when the doctrees were made from other sources.
    if getattr(env, _ENV_ATTR, None) == app.twostep_source_hash:
        return []
    setattr(env, _ENV_ATTR, app.twostep_source_hash)
    return sorted(env.found_docs - added - changed - removed)


def _offer_executed_notebook(app, pagename, templatename, context, doctree):
    # sphinx-book-theme adds an ".ipynb" entry (with outputs) to a page's
    # download menu when "ipynb_source" is set; myst-nb 1.x no longer sets it.
    executed = Path(app.env.mystnb_config.output_folder) / (pagename + ".ipynb")
    if not executed.is_file():
        return
    target = Path(app.outdir) / "_sources" / (pagename + ".ipynb")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(executed, target)
    context["ipynb_source"] = pagename + ".ipynb"


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    app.connect("env-get-outdated", _on_env_get_outdated)
    # Before the theme builds its header buttons (priority 501).
    app.connect("html-page-context", _offer_executed_notebook, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
