"""The book as one PDF (``tools/pdfbook.py``), built from the execution cache the strict HTML
build used: nothing is executed again (the cache's records are the same before and after).

The PDF must hold every page of ``_toc.yml`` (its title in the text), at least as many images
as the HTML pages show figures, no unresolved reference ("??" in the text, "undefined" in
LaTeX's log) and the bibliography (every entry of ``book/references.bib`` that the HTML pages
list). The checks are shown to fail on a page the PDF lacks. The PDF is then put into the site
(``_downloads/twostep.pdf``), which every page's footer links, before the browser tests follow
the links (this file sorts before ``test_browser.py``).

TeX Live comes from Debian's packages, which ``tools/dev.py test`` installs as root where they
are missing; without them this skips and says why.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import bookcache
import pdfbook

pytestmark = pytest.mark.book


def test_the_pdf_holds_the_whole_book(built_site, root, book_summary, tmp_path):
    missing = pdfbook.missing_programs()
    if missing:
        pytest.skip(f"no {missing}: install Debian's {' '.join(pdfbook.DEBIAN_PACKAGES)} "
                    "(tools/dev.py test does, as root)")
    before = bookcache.cache_records(root)
    built = pdfbook.build_pdf(root, str(Path(sys.executable).with_name("jupyter-book")))
    assert built.code == 0, f"the PDF build failed; its log: {pdfbook.PDF_LOG}\n" + \
        "\n".join(built.log.splitlines()[-40:])
    assert bookcache.cache_records(root) == before, "the PDF build executed a page again"
    pages, problems = pdfbook.check_pdf(root, built.pdf, built_site)
    assert not problems, "\n".join(problems)
    docnames = bookcache.toc_docnames(root)
    figures = pdfbook.html_figures(built_site, docnames)
    assert figures > 0 and len(pdfbook.html_titles(built_site, docnames)) == len(docnames)
    # The same checks fail on a page the PDF does not have.
    html = tmp_path / "html"
    for docname in docnames:
        (html / f"{docname}.html").parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built_site / f"{docname}.html", html / f"{docname}.html")
    first = html / f"{docnames[1]}.html"
    first.write_text(first.read_text(encoding="utf8").replace(
        "<title>", "<title>A chapter nobody wrote ", 1), encoding="utf8")
    _, made_up = pdfbook.check_pdf(root, built.pdf, html)
    assert any("A chapter nobody wrote" in p for p in made_up), made_up
    published = pdfbook.publish_pdf(root)
    assert published == built_site / pdfbook.SITE_PDF and published.stat().st_size > 0
    index = (built_site / "book" / "index.html").read_text(encoding="utf8")
    assert f'href="../{pdfbook.SITE_PDF.as_posix()}"' in index, "the landing page does not link it"
    book_summary.append(f"PDF: {pages} pages, {built.pdf.stat().st_size / 1e6:.1f} MB, built in "
                        f"{built.seconds:.0f} s from the cache; {figures} figures")
