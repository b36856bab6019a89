"""The numbers behind every figure, offered by the site (a Sphinx extension).

Every figure a chapter glues carries its data as CSV (``text/csv``, written in the kernel by
``twostep.pages.figure_data`` from the figure's own artists; ``figures.use_book_style``
registers it). For each ``{glue:figure}`` of a page, at ``doctree-read``, this reads the
glued output from the book's execution cache (jupyter-cache's public API: the page's
executed notebook), keeps the CSV in the build environment, and puts a link to it right
under the figure's caption; at ``build-finished`` it writes every figure's CSV to
``_build/html/_downloads/data/<figure label>.csv``. A glued figure whose output has no CSV
is a warning, so the strict build fails on it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

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


def csv_of_glue(notebook, key: str) -> str | None:
    """The CSV of the figure glued as ``key`` in an executed notebook (nbformat), or None."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            glue = output.get("metadata", {}).get("scrapbook", {})
            if glue.get("name") == key:
                text = output.get("data", {}).get(glue.get("mime_prefix", "") + CSV)
                return "".join(text) if isinstance(text, list) else text
    return None


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
        text = csv_of_glue(notebook, key)
        figure = by_name.get(label.lower()) or by_name.get(label)
        if text is None:
            logger.warning(f"glued figure {key!r} has no data ({CSV}): draw it after "
                           "twostep.pages.figures.use_book_style()", location=docname)
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


def _on_build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from sphinx.util import logging

    files = write_figure_data(app.env, Path(app.outdir))
    logging.getLogger(__name__).info(
        f"[figure_downloads] {len(files)} figures' data in {DATA_DOWNLOADS.as_posix()}/")


def setup(app):
    app.connect("doctree-read", _on_doctree_read)
    app.connect("env-purge-doc", _on_purge)
    app.connect("env-merge-info", _on_merge)
    app.connect("build-finished", _on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
