"""How the book is built, and how its executed outputs are kept honest.

The jupyter cache (``_build/.jupyter_cache``, myst-nb's ``cache`` execution
mode) keys each chapter on its own code cells only. A chapter that calls into
``twostep`` would keep showing outputs of an older ``twostep`` after the package
changes, so the package sources and ``requirements.txt`` are fingerprinted and
the cache is thrown away when the fingerprint moves.

It also finishes the pages for their readers (see ``setup``): each executed
chapter in its page's download menu, alt text for every captioned figure, launch
buttons only when the repository's URL is set, no script that would load from a
third-party server, glued numpy scalars formatted as numbers, a ``prf:claim``
directive and a ``{chapter}`` role. What of this needs internals of myst-nb or
sphinx-book-theme (the download menu, Colab's button, glued numpy scalars) is in
``tools/upstream_internals.py``, the one module allowed to use them.

One module, three users, so each rule is written once:

* Sphinx loads it as an extension (``sphinx: local_extensions`` in
  ``_config.yml``), so even a bare ``jupyter-book build`` honours the rule;
* the test run: nbmake's chapter items (``tools/nbchapters.py``) call
  ``ensure_fresh_cache`` before executing chapters into the same cache, and the
  build test (``tests/test_book.py``) calls ``strict_build`` after;
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


def cache_dir_of(app) -> Path:
    # myst-nb's documented setting (Jupyter Book's ``execute: cache:``); empty
    # means Jupyter Book's default, ``_build/.jupyter_cache``.
    configured = app.config["nb_execution_cache_path"]
    if configured:
        return Path(configured).resolve()
    return Path(app.outdir).parent.joinpath(CACHE_DIRNAME).resolve()


def _on_builder_inited(app) -> None:
    from sphinx.util import logging

    root = Path(app.srcdir)
    cache_dir = cache_dir_of(app)
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


def _figure_alt_text():
    """A post-transform giving every captioned figure's image its caption as alt text.

    Chapter figures are cell outputs (``mystnb: figure: caption``) or
    ``{glue:figure}``; neither sets ``alt``. Runs after myst-nb has turned
    outputs into images (priority 4) and filled in glued values (priority 5),
    so the alt text carries the caption's numbers. An image outside a captioned
    figure keeps whatever alt it has; the browser tests flag it if it has none.
    """
    from docutils import nodes
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class FigureAltText(SphinxPostTransform):
        default_priority = 300

        def run(self, **kwargs):
            for figure in self.document.findall(nodes.figure):
                captions = [c for c in figure.children if isinstance(c, nodes.caption)]
                if not captions:
                    continue
                text = " ".join(captions[0].astext().split())
                for image in figure.findall(nodes.image):
                    if not image.get("alt", "").strip():
                        image["alt"] = text

    return FigureAltText


def _launch_buttons_need_a_repository(app, config):
    # Jupyter Book's defaults point the launch buttons at its own repository
    # unless _config.yml names one; with no URL set, show no launch buttons.
    options = config.html_theme_options
    if str(options.get("repository_url") or "").strip():
        return
    launch = dict(options.get("launch_buttons") or {})
    for key in ("binderhub_url", "jupyterhub_url", "colab_url", "deepnote_url",
                "jupyterlite_url"):
        launch[key] = ""
    launch["thebe"] = False
    options["launch_buttons"] = launch


_THEBE_ASSETS = ("sphinx-thebe.js", "sphinx-thebe.css")


def _drop_unused_thebe(app, pagename, templatename, context, doctree):
    # sphinx-thebe is always loaded by Jupyter Book; with thebe off its script
    # only carries the address of a CDN copy of thebe. Ship neither.
    if (app.config.html_theme_options.get("launch_buttons") or {}).get("thebe"):
        return

    def is_thebe(asset):
        if str(getattr(asset, "filename", asset) or "").endswith(_THEBE_ASSETS):
            return True
        return "THEBE_JS_URL" in str((getattr(asset, "attributes", None) or {}).get("body", ""))

    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not is_thebe(asset)]


def _chapter_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{chapter}`Title <book/name>```: a link to a chapter of _toc.yml (like ``{doc}``).

    A name that is not a chapter of the table of contents is a warning, so a typo
    fails the strict build.
    """
    from docutils import nodes
    from sphinx.addnodes import pending_xref

    env = inliner.document.settings.env
    match = re.fullmatch(r"\s*(.*?)\s*<\s*([^<>]+?)\s*>\s*", text, re.DOTALL)
    title, target = (match.group(1), match.group(2)) if match else (None, text.strip())
    docname = target.lstrip("/")
    root = Path(env.srcdir)
    # Re-read this page when chapters enter or leave the table of contents.
    env.note_dependency(str(root / "_toc.yml"))
    if docname in env.found_docs:
        node = pending_xref(rawtext, refdomain="std", reftype="doc", reftarget="/" + docname,
                            refexplicit=bool(title), refdoc=env.docname, refwarn=True)
        node += nodes.inline(rawtext, title or "", classes=["xref", "std", "std-doc"])
        return [node], []
    message = inliner.reporter.warning(
        f"chapter {docname!r} is not a chapter of _toc.yml", line=lineno)
    return [inliner.problematic(rawtext, rawtext, message)], [message]


def setup(app):
    app.add_config_value("twostep_colab_branch", "", "html", types=[str])
    # What needs internals of myst-nb and sphinx-book-theme, in one module:
    # glued numpy scalars, the executed notebook in the download menu, Colab's
    # button (tools/upstream_internals.py, checked by tests/test_book.py).
    app.setup_extension("upstream_internals")
    # prf:claim, for the paper's results (tools/prf_claim.py).
    app.setup_extension("prf_claim")
    app.add_role("chapter", _chapter_role)
    app.connect("config-inited", _launch_buttons_need_a_repository)
    app.connect("builder-inited", _on_builder_inited)
    app.connect("env-get-outdated", _on_env_get_outdated)
    app.add_post_transform(_figure_alt_text())
    app.connect("html-page-context", _drop_unused_thebe, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
