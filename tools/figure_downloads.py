"""The numbers behind every figure, offered by the site, and every figure's checks (a Sphinx
extension).

Every figure a chapter glues carries its data as CSV (``text/csv``: the table the chapter
gave it with ``twostep.pages.figures.attach_data``, written by the formatter
``figures.use_book_style`` registers) and, drawn in the build's kernels, its checks
(``figure_checks.MIME``: ``tools/kernel_checks.py`` loads ``tools/figure_checks.py`` there).
For each ``{glue:figure}`` of a page, at ``doctree-read``, this reads the glued output from
the book's execution cache (jupyter-cache's public API: the page's executed notebook), keeps
the CSV in the build environment, and puts a link to it right under the figure's caption; at
``build-finished`` it writes every figure's CSV to
``_build/html/_downloads/data/<figure label>.csv``. ``upstream_internals.offer_figure_data``
adds the same files to the page's download menu. Each of these is a warning, so the strict
build fails on it:

* a glued figure whose output has no CSV (no ``attach_data``);
* a glued figure that was not checked (its output has no ``figure_checks.MIME``);
* a caption whose colour words disagree with the colours drawn (``figure_captions``).

The page shows neither the CSV nor the checks: ``_config.yml`` gives both mime types no
priority (myst-nb's ``nb_mime_priority_overrides``); and the executed notebooks the site
offers (``_sources/*.ipynb``) carry no checks (:func:`strip_checks`, at ``build-finished``).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import figure_captions
from figure_checks import MIME as CHECKS

#: Where the site offers the figures' data, one file per figure label.
DATA_DOWNLOADS = Path("_downloads") / "data"
# The mime type of the figure's data in a glued output (myst-nb prefixes it when display=False).
CSV = "text/csv"
_ENV_ATTR = "twostep_figure_data"
# ```{glue:figure} key  (or :::{glue:figure} key), then its :option: lines.
_DIRECTIVE = re.compile(r"^(?:`{3,}|:{3,})\{glue:figure\}[ \t]+(\S+)[ \t]*\n((?:[ \t]*:[\w-]+:.*\n)*)",
                        re.MULTILINE)


def glued_figures(text: str) -> list[tuple[str, str]]:
    """(glue key, figure label) of every ``{glue:figure}`` in a page's source, in order; the
    label is the ``:name:`` option, or the key where there is none."""
    found = []
    for match in _DIRECTIVE.finditer(text):
        name = re.search(r"^[ \t]*:name:[ \t]*(\S+)", match.group(2), re.MULTILINE)
        found.append((match.group(1), name.group(1) if name else match.group(1)))
    return found


def glued_data(notebook, key: str) -> dict | None:
    """The output data (mime type: content, without myst-nb's prefix) glued as ``key`` in an
    executed notebook (nbformat), or None."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            glue = output.get("metadata", {}).get("scrapbook", {})
            if glue.get("name") == key:
                prefix = glue.get("mime_prefix", "")
                return {k.removeprefix(prefix): v for k, v in output.get("data", {}).items()}
    return None


def csv_of_glue(notebook, key: str) -> str | None:
    """The CSV of the figure glued as ``key`` in an executed notebook (nbformat), or None."""
    text = (glued_data(notebook, key) or {}).get(CSV)
    return "".join(text) if isinstance(text, list) else text


def caption_problems(figure, checks: dict) -> list[str]:
    """Where the caption of ``figure`` (a docutils figure node) and the colours its kernel
    reported drawing (``checks["series"]``) disagree (``figure_captions``)."""
    import alt_text
    from docutils import nodes

    captions = [c for c in figure.children if isinstance(c, nodes.caption)]
    if not captions:
        return []
    text = alt_text.plain_text_of(captions[0])
    return figure_captions.caption_colour_problems(text, checks.get("series", []),
                                                   plain=alt_text.latex_to_plain)


def data_uri(docname: str, label: str) -> str:
    """The page-relative address of a figure's CSV."""
    return "../" * docname.count("/") + (DATA_DOWNLOADS / f"{label}.csv").as_posix()


def _on_doctree_read(app, doctree) -> None:
    import bookcache
    from docutils import nodes
    from sphinx.util import logging

    env = app.env
    docname = env.docname
    store = getattr(env, _ENV_ATTR, None)
    if store is None:
        store = {}
        setattr(env, _ENV_ATTR, store)
    store.pop(docname, None)
    source = Path(env.doc2path(docname))
    if not bookcache.is_notebook(source):
        return
    figures = glued_figures(source.read_text(encoding="utf8"))
    if not figures:
        return
    # The page's executed notebook; None when it is not in the cache (execution off, or failed).
    notebook = bookcache.merged_outputs(bookcache.cache_dir_of(app),
                                        bookcache.read_chapter(Path(app.srcdir), docname))
    if notebook is None:
        return
    logger = logging.getLogger(__name__)
    by_name = {name: node for node in doctree.findall(nodes.figure) for name in node["names"]}
    kept = []
    for key, label in figures:
        data = glued_data(notebook, key) or {}
        text = csv_of_glue(notebook, key)
        figure = by_name.get(label.lower()) or by_name.get(label)
        checks = data.get(CHECKS)
        if checks is None:
            logger.warning(f"glued figure {key!r} was not checked (no {CHECKS}): the build's "
                           "kernels check every figure (tools/kernel_checks.py)",
                           location=figure or docname)
        elif figure is not None:
            for problem in caption_problems(figure, checks):
                logger.warning(f"glued figure {key!r}: {problem}", location=figure)
        if text is None:
            logger.warning(f"glued figure {key!r} has no data ({CSV}): give it the numbers it "
                           "is drawn from with twostep.pages.figures.attach_data(fig, rows), "
                           "after use_book_style()", location=figure or docname)
            continue
        kept.append((label, text))
        if figure is None:
            continue
        # Right under the caption, outside it (alt text and caption length stay as they are).
        link = nodes.reference("", "", nodes.literal(f"{label}.csv", f"{label}.csv"),
                               refuri=data_uri(docname, label), classes=["twostep-figure-data"])
        para = nodes.paragraph("", "", nodes.Text("The numbers behind this figure: "), link,
                               nodes.Text(" (CSV, one row per plotted point)."),
                               classes=["twostep-figure-data"])
        figure.parent.insert(figure.parent.index(figure) + 1, para)
    if kept:
        store[docname] = kept


def figure_data(env, docname: str) -> list[tuple[str, str]]:
    """(label, CSV text) of each figure of a page that has its data."""
    return list(getattr(env, _ENV_ATTR, {}).get(docname, []))


def _on_purge(app, env, docname) -> None:
    getattr(env, _ENV_ATTR, {}).pop(docname, None)


def _on_merge(app, env, docnames, other) -> None:
    store = getattr(env, _ENV_ATTR, None)
    if store is None:
        store = {}
        setattr(env, _ENV_ATTR, store)
    for docname in docnames:
        if docname in getattr(other, _ENV_ATTR, {}):
            store[docname] = getattr(other, _ENV_ATTR)[docname]


def write_figure_data(env, outdir: Path) -> list[Path]:
    """Write every page's figure CSVs to ``outdir/_downloads/data`` (emptied first); return
    the files."""
    target = Path(outdir) / DATA_DOWNLOADS
    shutil.rmtree(target, ignore_errors=True)
    written = []
    for docname in sorted(getattr(env, _ENV_ATTR, {})):
        for label, text in figure_data(env, docname):
            target.mkdir(parents=True, exist_ok=True)
            path = target / f"{label}.csv"
            path.write_text(text, encoding="utf8")
            written.append(path)
    return written


def strip_checks(outdir: Path) -> list[Path]:
    """Remove the figure checks (``figure_checks.MIME``, glued or shown) from every notebook the
    site offers under ``outdir/_sources``: a reader's notebook carries the figures and their
    data, not the build's checks (the execution cache keeps them for the book's tests).
    Returns the notebooks changed."""
    import nbformat

    changed = []
    for path in sorted((Path(outdir) / "_sources").rglob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        found = False
        for cell in notebook.cells:
            for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
                data = output.get("data", {})
                for key in [k for k in data if k.endswith(CHECKS)]:
                    del data[key]
                    found = True
        if found:
            nbformat.write(notebook, path)
            changed.append(path)
    return changed


def _on_build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from sphinx.util import logging

    files = write_figure_data(app.env, Path(app.outdir))
    stripped = strip_checks(Path(app.outdir))
    logging.getLogger(__name__).info(
        f"[figure_downloads] {len(files)} figures' data in {DATA_DOWNLOADS.as_posix()}/; "
        f"figure checks left out of {len(stripped)} notebooks offered for download")


def setup(app):
    # The kernels that execute the pages check every figure they draw.
    app.setup_extension("kernel_checks")
    app.connect("doctree-read", _on_doctree_read)
    app.connect("env-purge-doc", _on_purge)
    app.connect("env-merge-info", _on_merge)
    app.connect("build-finished", _on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
