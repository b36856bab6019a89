"""The book's Sphinx extensions, set up in one place (``sphinx: local_extensions`` in
_config.yml names this module).

Each concern is a small extension of its own with its own ``setup``; they are set up in the
order below. No extension imports this module, and none imports another that imports it
back (``tests/tools/test_tools_imports.py``).
"""

from __future__ import annotations


def setup(app):
    # The execution cache: a chapter's stale records removed when its fingerprint moved,
    # every page re-read when an input of the build moved.
    app.setup_extension("bookcache")
    # The package (a wheel), the reader's pins and the results files on the site; the
    # {site-download} role.
    app.setup_extension("code_downloads")
    # Every glued figure's data as CSV, linked under it.
    app.setup_extension("figure_downloads")
    # What needs internals of myst-nb and sphinx-book-theme: glued numpy scalars, the
    # download menu, Colab's button, the claims index, a page's execution data.
    app.setup_extension("upstream_internals")
    # prf:claim, for the paper's results.
    app.setup_extension("prf_claim")
    # Plain-text alt text for every figure.
    app.setup_extension("alt_text")
    # Values in table cells kept whole; figures never shown with text below 8 pt.
    app.setup_extension("legibility")
    # The {chapter} role, launch buttons only with a repository, no thebe, citations
    # without back-links.
    app.setup_extension("links")
    # Under each executed page's title, how long re-executing it took (myst-nb's data).
    app.setup_extension("runtime")
    # The PDF: the landing page's claims labelled, the footer's link to the PDF.
    app.setup_extension("pdfbook")
    # A set-up cell first in every downloadable notebook: it installs the package.
    app.setup_extension("notebook_setup")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
