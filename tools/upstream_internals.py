"""The one module that relies on internals of myst-nb and sphinx-book-theme.

Everything else in tools/ and tests/ uses documented interfaces only (Sphinx's
events and config values, myst-nb's ``nb_*`` settings, jupyter-cache's cache
API, nbmake's command line). Five features of the book have no public way in
the pinned versions, so they are here, each with the reason, and
``tests/site/test_book.py::test_upstream_internals_match_the_pins`` fails, saying
which, as soon as an upgrade changes a version or removes a name used here:

1. ``{glue:text}`` of a numpy scalar. myst-nb formats a glued value from its
   ``text/plain`` repr, which numpy 2 writes as ``np.float64(0.5)``: a format
   spec (``key:.2f``) then fails ("could not convert string to float", a warning
   that fails the strict build) and a bare key shows the wrapper. myst-nb has no
   setting or hook for this; the formatter is a module function imported by name
   into its glue roles and cross-references, so it is wrapped in all three
   modules. (Changing the repr in the kernel instead would need a configuration
   in every environment that builds the book, and would change chapter outputs.)
   The same wrapper gives every glued text a true minus sign and no negative
   zero (``twostep.pages.report.minus_sign``): ``{glue:text}`x:.2f``` of
   -0.001 reads "0.00", of -0.25 "−0.25".
2. The executed notebook in a page's download menu. sphinx-book-theme offers it
   when the template context has ``ipynb_source``, which only its launch-button
   handler sets, and myst-nb 1.x writes executed notebooks to
   ``<outdir>/../jupyter_execute``, a fixed folder that neither documents. On a
   cache hit myst-nb also writes the notebook without outputs; the outputs are
   merged back from the cache (jupyter-cache's public API). Must run before the
   theme's header-button handler (its priority 501).
3. Colab's launch button, and the package in the download menu. The theme points it at the page's source, a ``.md``
   that Colab cannot open; it is redirected to the executed notebook of the
   published site by editing the theme's ``header_buttons`` context after that
   handler has filled it (hence priority 502); the package's wheel, the reader's
   requirements.txt and a link to the landing page's instructions are added to the
   download menu the same way (503), and so is each figure's data (CSV; 504).
4. A readable index of the book's claims, definitions and remarks. sphinx-proof's
   own index ("Proof Index", ``prf-prf``) lists raw labels (``claim-count``); its
   entries live only in ``env.proof_list``, which sphinx-proof documents nowhere.
   This index (``prf-results``, Sphinx's public ``Index`` API) lists "Claim 2 (How
   many)" with its chapter, grouped by kind, and replaces it (``html_domain_indices``).
5. A page's execution data (when its outputs were made, how long executing it took, whether
   it succeeded): myst-nb's documentation says it keeps them on the Sphinx environment "in
   ``env.metadata[docname]``" for extensions to read (its ``{nb-exec-table}`` does); 1.4
   keeps them in ``env.nb_metadata[docname]["exec_data"]``, behind
   ``NbMetadataCollector.get_exec_data`` (``runtime.py`` reads them here).
"""

from __future__ import annotations

import re
import shutil
from importlib.metadata import version
from pathlib import Path

# The versions this module was written against (requirements.txt pins them).
PINNED = {"myst-nb": "1.4.0", "sphinx-book-theme": "1.3.0", "sphinx-proof": "0.4.0"}
# sphinx-book-theme connects its header buttons at this html-page-context priority.
THEME_HEADER_BUTTONS_PRIORITY = 501
# myst-nb 1.x: executed notebooks go to this folder beside the HTML output.
MYST_NB_OUTPUT_FOLDER = "jupyter_execute"
# myst-nb 1.x: (module, attribute) pairs that hold the plain-text glue formatter.
MYST_NB_FORMATTERS = (
    ("myst_nb.core.variables", "format_plain_text"),
    ("myst_nb.ext.glue.crossref", "format_plain_text"),
    ("myst_nb.ext.glue.roles", "format_plain_text"),
)


def check_pins() -> list[str]:
    """What no longer matches the versions and names this module relies on."""
    import importlib

    problems = []
    for dist, wanted in PINNED.items():
        have = version(dist)
        if have != wanted:
            problems.append(
                f"{dist} is {have}, tools/upstream_internals.py was written for {wanted}: "
                "check each of its five workarounds against the new version, then update PINNED"
            )
    for module, name in MYST_NB_FORMATTERS:
        if not callable(getattr(importlib.import_module(module), name, None)):
            problems.append(f"{module}.{name} is gone: glued numpy scalars are no longer "
                            "formatted as numbers (workaround 1)")
    from myst_nb.sphinx_ import NbMetadataCollector

    if not callable(getattr(NbMetadataCollector, "get_exec_data", None)):
        problems.append("myst_nb.sphinx_.NbMetadataCollector.get_exec_data is gone: the pages' "
                        "run times (workaround 5) need a new look")
    import sphinx_book_theme

    source = Path(sphinx_book_theme.__file__).parent / "header_buttons" / "launch.py"
    text = source.read_text(encoding="utf8") if source.is_file() else ""
    for needle in ('context["ipynb_source"]', f'joinpath("{MYST_NB_OUTPUT_FOLDER}")',
                   'context["header_buttons"]'):
        if needle not in text:
            problems.append(f"sphinx-book-theme's {source.name} no longer has {needle}: "
                            "workarounds 2 and 3 need a new look")
    import sphinx_proof.directive

    text = Path(sphinx_proof.directive.__file__).read_text(encoding="utf8")
    for needle in ("env.proof_list[label] = {", '"docname": env.docname', '"realtype": realtyp',
                   '"countertype": countertyp', 'node["title"] = title_text'):
        if needle not in text:
            problems.append(f"sphinx-proof's directive.py no longer has {needle}: the readable "
                            "proof index (workaround 4) needs a new look")
    return problems


# --- 1. glued numpy scalars ----------------------------------------------------------

# numpy >= 2 prints a scalar as np.float64(0.5); the inside is what glue should see.
_NUMPY_SCALAR = re.compile(r"np\.[a-z_]+\d*\((.*)\)", re.DOTALL)


def glue_reads_numpy_scalars() -> None:
    import importlib

    modules = [importlib.import_module(m) for m, _ in MYST_NB_FORMATTERS]
    original = modules[0].format_plain_text
    if getattr(original, "unwraps_numpy_scalars", False):
        return

    from twostep.pages.report import minus_sign

    def format_plain_text(text: str, fmt_spec: str) -> str:
        text = {"np.True_": "True", "np.False_": "False"}.get(text.strip(), text)
        match = _NUMPY_SCALAR.fullmatch(text.strip())
        return minus_sign(original(match.group(1) if match else text, fmt_spec))

    format_plain_text.unwraps_numpy_scalars = True
    for module in modules:
        if getattr(module, "format_plain_text", None) is original:
            module.format_plain_text = format_plain_text


# --- 2. the executed notebook in the download menu -------------------------------------


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


# --- 3. Colab opens the executed notebook ----------------------------------------------


def colab_opens_the_executed_notebook(app, pagename, templatename, context, doctree):
    # On the branch _config.yml names (twostep_colab_branch); no branch, no button.
    branch = app.config.twostep_colab_branch
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        kept = []
        for button in group.get("buttons", []):
            if button.get("text") == "Colab" and not button["url"].endswith(".ipynb"):
                if not branch:
                    continue
                prefix = button["url"].split("/blob/")[0]
                button["url"] = f"{prefix}/blob/{branch}/_sources/{pagename}.ipynb"
            kept.append(button)
        group["buttons"] = kept


# --- 3b. the package in every page's download menu ------------------------------------


def offer_the_package(app, pagename, templatename, context, doctree):
    """Add the package (wheel), the reader's requirements.txt and the landing page's
    instructions to the theme's download menu (its ``header_buttons`` group)."""
    import code_downloads

    pathto = context.get("pathto")
    if pathto is None:
        return
    wheel = code_downloads.wheel_name(Path(app.srcdir))
    code = code_downloads.CODE_DOWNLOADS.as_posix()
    page, section = code_downloads.HOW_TO_RUN
    extra = [
        {"type": "link", "url": pathto(f"{code}/{wheel}", 1), "text": "twostep (.whl)",
         "tooltip": "The twostep package: pip install -r requirements.txt " + wheel,
         "icon": "fas fa-box", "label": "download-package-button"},
        {"type": "link", "url": pathto(f"{code}/requirements.txt", 1),
         "text": "requirements.txt", "icon": "fas fa-list",
         "tooltip": "The pinned packages the notebooks need",
         "label": "download-requirements-button"},
        {"type": "link", "url": pathto(page).rstrip("#") + "#" + section,
         "text": "How to run it", "icon": "fas fa-terminal",
         "tooltip": "Install the package and run a downloaded notebook",
         "label": "download-howto-button"},
    ]
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"] = list(group.get("buttons", [])) + extra


def offer_figure_data(app, pagename, templatename, context, doctree):
    """Add each figure's data (``figure_downloads``: one CSV per glued figure) to the page's
    download menu, named by the figure's number."""
    import figure_downloads

    pathto = context.get("pathto")
    figures = figure_downloads.figure_data(app.env, pagename)
    if pathto is None or not figures:
        return
    numbers = app.env.toc_fignumbers.get(pagename, {}).get("figure", {})
    extra = []
    for label, _ in figures:
        number = numbers.get(label)
        name = f"Fig. {'.'.join(map(str, number))}" if number else label
        extra.append({"type": "link", "text": f"{name} data (.csv)", "icon": "fas fa-table",
                      "url": pathto((figure_downloads.DATA_DOWNLOADS / f"{label}.csv").as_posix(), 1),
                      "tooltip": f"The numbers behind {name}: one row per plotted point",
                      "label": f"download-data-{label}-button"})
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"] = list(group.get("buttons", [])) + extra


# --- 4. a readable index of claims, definitions and remarks --------------------------

RESULTS_INDEX = "results"   # Sphinx names its page prf-results.html


def _plural(kind: str) -> str:
    return {"proof": "Proofs", "property": "Properties"}.get(kind, kind.title() + "s")


def readable_proof_index():
    from collections import defaultdict

    from docutils import nodes
    from sphinx.domains import Index

    class ResultsIndex(Index):
        name = RESULTS_INDEX
        localname = "Claims, definitions and remarks"
        shortname = "claims"

        def generate(self, docnames=None):
            env = self.domain.env
            proofs = getattr(env, "proof_list", {})
            titles: dict[str, dict[str, str]] = {}
            groups = defaultdict(list)
            for label, info in proofs.items():
                docname = info["docname"]
                if docnames and docname not in docnames:
                    continue
                if docname not in titles:
                    titles[docname] = {}
                    for node in env.get_doctree(docname).findall(nodes.Element):
                        for node_id in node.get("ids", []):
                            if node.get("realtype"):
                                titles[docname][node_id] = node.get("title", "")
                kind = info["realtype"]
                number = env.toc_fignumbers.get(docname, {}).get(info["countertype"], {}).get(
                    info["ids"][0])
                name = kind.title() + (" " + ".".join(map(str, number)) if number else "")
                title = titles[docname].get(info["ids"][0], "").strip()
                page = env.titles[docname].astext() if docname in env.titles else docname
                groups[_plural(kind)].append(
                    (number or (), [name + (" " + title if title else ""), 0, docname,
                                    info["ids"][0], page, "", ""]))
            content = [(kind, [entry for _, entry in sorted(entries, key=lambda e: e[0])])
                       for kind, entries in sorted(groups.items())]
            return content, True

    return ResultsIndex


# --- 5. a page's execution data ---------------------------------------------------------


def page_execution(env, docname: str) -> dict | None:
    """myst-nb's execution data of a page (``mtime``, ``runtime`` in seconds, ``method``,
    ``succeeded``, ``error``), or None for a page it did not execute or take from the cache."""
    from myst_nb.sphinx_ import NbMetadataCollector

    return NbMetadataCollector.get_exec_data(env, docname)


def setup(app):
    # Colab's button opens the executed notebook on this branch (workaround 3).
    app.add_config_value("twostep_colab_branch", "", "html", types=[str])
    glue_reads_numpy_scalars()
    app.setup_extension("sphinx_proof")
    app.add_index_to_domain("prf", readable_proof_index())
    app.connect("html-page-context", offer_executed_notebook,
                priority=THEME_HEADER_BUTTONS_PRIORITY - 101)
    app.connect("html-page-context", colab_opens_the_executed_notebook,
                priority=THEME_HEADER_BUTTONS_PRIORITY + 1)
    app.connect("html-page-context", offer_the_package,
                priority=THEME_HEADER_BUTTONS_PRIORITY + 2)
    app.connect("html-page-context", offer_figure_data,
                priority=THEME_HEADER_BUTTONS_PRIORITY + 3)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
