"""The one module that relies on internals of myst-nb and sphinx-book-theme.

Everything else in tools/ and tests/ uses documented interfaces only (Sphinx's events and
config values, myst-nb's ``nb_*`` settings, jupyter-cache's cache API, nbmake's command
line); ``tests/site/test_book.py`` scans them for the names of other projects' internals.
Two features of the book have no public way in the pinned versions. Each is here with the
upstream issue whose resolution would retire it, and
``tests/site/test_book.py::test_upstream_internals_match_the_pins`` fails, saying which, as
soon as an upgrade changes a version or removes a name used here:

1. The executed notebook in a page's download menu. sphinx-book-theme offers it when the
   template context has ``ipynb_source``, which only its launch-button handler sets, and
   myst-nb 1.x writes executed notebooks to ``<outdir>/../jupyter_execute``, a fixed folder
   that neither documents. On a cache hit myst-nb also writes the notebook without outputs;
   the outputs are merged back from the cache (jupyter-cache's public API). Must run before
   the theme's header-button handler (its priority 501). Retired by
   https://github.com/executablebooks/MyST-NB/issues/124 (an executed ``.ipynb`` download
   for MyST-markdown notebooks, offered by myst-nb itself).
2. A page's execution data (when its outputs were made, how long executing it took, whether
   it succeeded): myst-nb's documentation says it keeps them on the Sphinx environment "in
   ``env.metadata[docname]``" for extensions to read (its ``{nb-exec-table}`` does); 1.4
   keeps them in ``env.nb_metadata[docname]["exec_data"]``, behind
   ``NbMetadataCollector.get_exec_data`` (``runtime.py`` reads them here). Retired by
   https://github.com/executablebooks/MyST-NB/issues/237 (the execution statistics as a
   documented output for sites and extensions).
"""

from __future__ import annotations

import shutil
from importlib.metadata import version
from pathlib import Path

# The versions this module was written against (requirements.txt pins them).
PINNED = {"myst-nb": "1.4.0", "sphinx-book-theme": "1.3.0", "sphinx-proof": "0.4.0"}
# sphinx-book-theme connects its header buttons at this html-page-context priority.
THEME_HEADER_BUTTONS_PRIORITY = 501
# myst-nb 1.x: executed notebooks go to this folder beside the HTML output.
MYST_NB_OUTPUT_FOLDER = "jupyter_execute"


def check_pins() -> list[str]:
    """What no longer matches the versions and names this module relies on."""
    problems = []
    for dist, wanted in PINNED.items():
        have = version(dist)
        if have != wanted:
            problems.append(
                f"{dist} is {have}, tools/upstream_internals.py was written for {wanted}: "
                "check its two features and tools/prf_claim.py against the new version, "
                "then update PINNED"
            )
    from myst_nb.sphinx_ import NbMetadataCollector

    if not callable(getattr(NbMetadataCollector, "get_exec_data", None)):
        problems.append("myst_nb.sphinx_.NbMetadataCollector.get_exec_data is gone: the pages' "
                        "run times (feature 2) need a new look")
    import sphinx_book_theme

    source = Path(sphinx_book_theme.__file__).parent / "header_buttons" / "launch.py"
    text = source.read_text(encoding="utf8") if source.is_file() else ""
    for needle in ('context["ipynb_source"]', f'joinpath("{MYST_NB_OUTPUT_FOLDER}")'):
        if needle not in text:
            problems.append(f"sphinx-book-theme's {source.name} no longer has {needle}: "
                            "the executed notebook in the download menu (feature 1) needs a "
                            "new look")
    return problems


# --- 1. the executed notebook in the download menu -------------------------------------


def _restore_cached_outputs(app, notebook: Path) -> None:
    """On a cache hit myst-nb 1.4 renders the cached outputs but writes the
    notebook it read, without them; after executing a page itself it writes it without
    the glued outputs (``display=False``). Merge the cached outputs in, in both cases."""
    import nbformat

    import bookcache

    merged = bookcache.merged_outputs(bookcache.cache_dir_of(app),
                                      nbformat.read(notebook, as_version=4))
    if merged is not None:  # not in the cache: nothing to restore
        nbformat.write(merged, notebook)


def offer_executed_notebook(app, pagename, templatename, context, doctree):
    executed = Path(app.outdir).parent / MYST_NB_OUTPUT_FOLDER / (pagename + ".ipynb")
    if not executed.is_file():
        return
    # In place, before the theme's launch buttons copy the same file.
    _restore_cached_outputs(app, executed)
    target = Path(app.outdir) / "_sources" / (pagename + ".ipynb")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(executed, target)
    context["ipynb_source"] = pagename + ".ipynb"


# --- 2. a page's execution data ---------------------------------------------------------


def page_execution(env, docname: str) -> dict | None:
    """myst-nb's execution data of a page (``mtime``, ``runtime`` in seconds, ``method``,
    ``succeeded``, ``error``), or None for a page it did not execute or take from the cache."""
    from myst_nb.sphinx_ import NbMetadataCollector

    return NbMetadataCollector.get_exec_data(env, docname)


def setup(app):
    app.connect("html-page-context", offer_executed_notebook,
                priority=THEME_HEADER_BUTTONS_PRIORITY - 101)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
