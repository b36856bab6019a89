"""How long each executed page took, as myst-nb recorded it (a Sphinx extension).

myst-nb keeps, for every page it executes or takes from the cache, its execution data:
when the outputs were made, how long executing the page took, whether it succeeded (read
through ``upstream_internals.page_execution``). From it:

* under an executed page's title, a line saying how long re-executing the page took when
  this site was built, and on how many CPU cores: those of the machine nbmake ran it on (the
  cache record myst-nb took the page from says), or this build's when myst-nb ran it;
* the table of myst-nb's ``{nb-exec-table}`` directive (the page "How long each chapter
  takes") names each page by its title rather than its docname.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.transforms.post_transforms import SphinxPostTransform


def runtime_text(seconds: float, cores: int | None) -> str:
    """The line under an executed page's title."""
    took = f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
    return (f"Re-executing this page took {took} when this site was built"
            + (f", on {cores} CPU cores." if cores else "."))


def cores_of_run(record: dict | None) -> int | None:
    """The cores a page was executed on: those nbmake recorded with the page's cache record,
    else this machine's. myst-nb records none; its runs are taken to be this build's machine
    (the cache lives in the checkout's ``_build/``, and CI restores it on runners of one
    kind)."""
    return (record or {}).get("cpu_count") or os.cpu_count()


def _runtime_line(app, doctree) -> None:
    import bookcache
    import upstream_internals

    docname = app.env.docname
    run = upstream_internals.page_execution(app.env, docname)
    if not run or not run.get("succeeded") or run.get("runtime") is None:
        return
    section = doctree.next_node(nodes.section)
    if section is None or not isinstance(section[0], nodes.title):
        return
    record = bookcache.record_data(Path(app.srcdir), docname, bookcache.cache_dir_of(app),
                                   run["mtime"])
    text = runtime_text(run["runtime"], cores_of_run(record))
    section.insert(1, nodes.paragraph(text, text, classes=["twostep-runtime"]))


def names_itself(node: pending_xref) -> bool:
    """Whether a link to a page shows the page's docname as its text (as the rows of
    ``{nb-exec-table}`` do)."""
    if node.get("reftype") != "doc" or not node.get("refdoc"):
        return False
    target = posixpath.normpath(posixpath.join(posixpath.dirname(node["refdoc"]),
                                               node["reftarget"]))
    return node.astext() == target


class PageTitlesInLinks(SphinxPostTransform):
    """A link whose text is the docname of the page it points to shows the page's title:
    Sphinx writes the title into a ``{doc}`` link without an explicit text. Runs after
    myst-nb has made its execution table (priority 8), before references are resolved (10)."""

    default_priority = 9

    def run(self, **kwargs):
        for node in self.document.findall(pending_xref):
            if node.get("refexplicit") and names_itself(node):
                node["refexplicit"] = False


def setup(app):
    app.connect("doctree-read", _runtime_line)
    app.add_post_transform(PageTitlesInLinks)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
