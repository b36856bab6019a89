#!/usr/bin/env python3
"""The book as one PDF, from the execution cache the HTML build uses (nothing re-executed).

    python3 tools/pdfbook.py [--check-only]   build _build/latex/twostep.pdf and check it

``jupyter-book build . --builder pdflatex -n -W --keep-going`` writes the LaTeX of every page
of ``_toc.yml`` from the cached outputs (``execute_notebooks: cache``) and runs ``make
all-pdf`` in ``_build/latex``, which runs latexmk with the engine ``_config.yml`` names
(``latex: latex_engine: xelatex``: the pages' ⋆, ≠, ✓, −, ± need a Unicode engine and fonts;
Debian's packages in :data:`DEBIAN_PACKAGES`, which ``tools/dev.py`` installs as root where
missing). Jupyter Book's own LaTeX class (sphinx-jupyterbook-latex) is off
(``use_jupyterbook_latex: false``): it needs ``bbm.sty``, which only Debian's 1.4 GB
``texlive-fonts-extra`` has; Sphinx's own LaTeX writer does the rest.

:func:`check_pdf` is what the test (``tests/site/test_pdf.py``) and the release command
(``tools/dev.py release``) ask of the PDF: every page of the table of contents, every figure
of the HTML build, no unresolved reference ("??" in the text, "undefined" in LaTeX's log) and
the bibliography. It reads the PDF with poppler's ``pdftotext`` and ``pdfimages`` (Debian's
``poppler-utils``).

This file is also a Sphinx extension (``_config.yml``'s ``local_extensions``): in a LaTeX build
it gives the landing page's top section its page name, so that sphinx-proof 0.4.0 labels the
claims and remarks on it (its LaTeX writer looks for the page name on the enclosing section,
which Sphinx sets for every page but the root; without it they become ``None:claim-count``
and every reference to them "??"). Stdlib only at import time.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# -n, -W, --keep-going: as strict as the HTML build (tools/strictbuild.py).
BUILD_ARGS = ["build", ".", "--builder", "pdflatex", "-n", "-W", "--keep-going"]
LATEX_DIR = Path("_build") / "latex"
PDF_LOG = Path("_build") / "pdf.log"
#: Debian's packages the PDF needs (TeX Live's XeLaTeX with the LaTeX packages Sphinx's writer
#: loads, the FreeFont fonts Sphinx sets for XeLaTeX, latexmk, and poppler for the checks).
DEBIAN_PACKAGES = ("texlive-xetex", "texlive-latex-recommended", "texlive-latex-extra",
                   "texlive-fonts-recommended", "texlive-plain-generic", "fonts-freefont-otf",
                   "lmodern", "latexmk", "poppler-utils")
#: The programs that tell whether those packages are there.
PROGRAMS = ("xelatex", "latexmk", "pdftotext", "pdfimages")


def missing_programs() -> list[str]:
    """The programs of :data:`PROGRAMS` that are not on PATH."""
    return [p for p in PROGRAMS if shutil.which(p) is None]


def target_name(root: Path = ROOT) -> str:
    """The PDF's file name: ``latex: latex_documents: targetname`` of ``_config.yml``, .pdf."""
    match = re.search(r"^\s*targetname:\s*[\"']?([\w.-]+?)\.tex", (Path(root) / "_config.yml")
                      .read_text(encoding="utf8"), re.MULTILINE)
    return (match.group(1) if match else "book") + ".pdf"


def pdf_path(root: Path = ROOT) -> Path:
    return Path(root) / LATEX_DIR / target_name(root)


@dataclass
class PdfBuild:
    code: int
    seconds: float
    log: str
    pdf: Path
    pages: int = 0
    problems: list[str] = field(default_factory=list)


def build_pdf(root: Path, jupyter_book: str, *, echo: bool = False) -> PdfBuild:
    """Run the PDF build in ``root``; its log goes to ``_build/pdf.log``."""
    root = Path(root)
    pdf = pdf_path(root)
    pdf.unlink(missing_ok=True)
    start = time.perf_counter()
    proc = subprocess.Popen([jupyter_book, *BUILD_ARGS], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if echo:
            print(line, end="", flush=True)
    code = proc.wait()
    seconds = time.perf_counter() - start
    log = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", "".join(lines))
    (root / PDF_LOG).parent.mkdir(parents=True, exist_ok=True)
    (root / PDF_LOG).write_text(" ".join(BUILD_ARGS) + "\n" + log, encoding="utf8")
    if code == 0 and not pdf.is_file():
        code = 1
    return PdfBuild(code, seconds, log, pdf)


# --- what the PDF must hold ----------------------------------------------------------------


def _run(args: list) -> str:
    return subprocess.run([str(a) for a in args], check=True, capture_output=True,
                          text=True).stdout


def page_count(pdf: Path) -> int:
    info = _run(["pdfinfo", pdf])
    return int(re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE).group(1))


def pdf_text(pdf: Path) -> str:
    return _run(["pdftotext", "-enc", "UTF-8", pdf, "-"])


def image_count(pdf: Path) -> int:
    """Images drawn in the PDF (``pdfimages -list``, less soft masks: a PNG's alpha channel)."""
    rows = _run(["pdfimages", "-list", pdf]).splitlines()[2:]
    return sum(1 for row in rows if row.split()[2:3] == ["image"])


def _squash(text: str) -> str:
    # pdftotext breaks lines and hyphenates; compare letters and digits only.
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def html_titles(html: Path, docnames: list[str]) -> dict[str, str]:
    """Each page's title, from the built HTML's ``<title>`` (the part before the book's)."""
    import html as htmllib

    titles = {}
    for docname in docnames:
        page = html / f"{docname}.html"
        if page.is_file():
            match = re.search(r"<title>(.*?)</title>", page.read_text(encoding="utf8"), re.S)
            if match:
                titles[docname] = htmllib.unescape(match.group(1)).split(" — ")[0].strip()
    return titles


def html_figures(html: Path, docnames: list[str]) -> int:
    """Figures of the HTML build: ``<figure>`` elements holding an image, on every page."""
    count = 0
    for docname in docnames:
        page = html / f"{docname}.html"
        if page.is_file():
            for figure in re.findall(r"<figure\b.*?</figure>", page.read_text(encoding="utf8"),
                                     re.S):
                count += bool(re.search(r"<img\b", figure))
    return count


def bibliography_titles(root: Path) -> list[str]:
    """The titles of the entries of ``book/references.bib`` (the ones a page cites are the
    bibliography's)."""
    text = (Path(root) / "book" / "references.bib").read_text(encoding="utf8")
    titles = re.findall(r"^\s*title\s*=\s*[{\"](.+?)[}\"]\s*,?\s*$", text, re.MULTILINE | re.I)
    return [re.sub(r"[{}\\]", "", t) for t in titles]


def check_pdf(root: Path, pdf: Path, html: Path | None = None) -> tuple[int, list[str]]:
    """(page count, problems) of the PDF built in ``root``: a page of ``_toc.yml`` whose title
    is not in it, fewer images than the HTML build's figures (``html``, default
    ``_build/html``), an unresolved reference, or no bibliography."""
    sys.path.insert(0, str(Path(root) / "tools"))
    import bookcache

    root = Path(root)
    html = Path(html) if html else root / "_build" / "html"
    problems = []
    text = pdf_text(pdf)
    flat = _squash(text)
    docnames = bookcache.toc_docnames(root)
    for docname, title in html_titles(html, docnames).items():
        if _squash(title) not in flat:
            problems.append(f"page {docname} ({title!r}) is not in the PDF")
    figures, images = html_figures(html, docnames), image_count(pdf)
    if images < figures:
        problems.append(f"the PDF draws {images} images, the HTML pages show {figures} figures")
    if "??" in text:
        where = [line.strip() for line in text.splitlines() if "??" in line]
        problems.append(f"unresolved references (??) in the PDF: {where[:5]}")
    latex_log = pdf.with_suffix(".log")
    if latex_log.is_file():
        undefined = sorted(set(re.findall(r"(?:Hyper r|R)eference `([^']+)' on page \d+ undefined",
                                          latex_log.read_text(encoding="utf8", errors="replace"))))
        if undefined:
            problems.append(f"LaTeX found undefined references: {undefined[:10]}")
    # The bibliography: every entry of book/references.bib that the HTML pages list.
    shown = _squash(" ".join(page.read_text(encoding="utf8") for page in
                             (html / f"{d}.html" for d in docnames) if page.is_file()))
    cited = [t for t in bibliography_titles(root) if _squash(t) in shown]
    absent = [t for t in cited if _squash(t) not in flat]
    if not cited or absent or "bibliography" not in flat:
        problems.append(f"the PDF's bibliography lacks {absent or 'every entry'}")
    return page_count(pdf), problems


# --- the Sphinx extension -----------------------------------------------------------------


def _root_section_named(app, doctree, docname) -> None:
    if app.builder.format != "latex" or docname != app.config.root_doc:
        return
    from docutils import nodes

    title = app.env.titles.get(docname)
    for section in doctree.children:
        if isinstance(section, nodes.section) and not section.get("docname"):
            section["docname"] = docname
            if title is not None and title.astext().lower() not in section["names"]:
                section["names"].append(title.astext().lower())
            break


#: Where the site offers the PDF, relative to its root (``publish_pdf`` copies it there).
SITE_PDF = Path("_downloads") / "twostep.pdf"
# The footer's link to the PDF (_config.yml, html: extra_footer): its element and its href.
_FOOTER_PDF = re.compile(r'<span class="twostep-pdf">(.*?)</span>', re.S)


def _footer_links_the_pdf(app, pagename, templatename, context, doctree):
    # The footer is the same text on every page: its link to the PDF is made relative to each
    # page here. Where this machine cannot build the PDF, the sentence is left out rather
    # than left pointing at nothing.
    footer = context.get("theme_extra_footer")
    if not footer or "pathto" not in context:
        return
    if missing_programs():
        context["theme_extra_footer"] = _FOOTER_PDF.sub("", footer)
        return
    href = context["pathto"](SITE_PDF.as_posix(), 1)
    context["theme_extra_footer"] = _FOOTER_PDF.sub(
        lambda m: m.group(0).replace('href="twostep.pdf"', f'href="{href}"'), footer)


def publish_pdf(root: Path = ROOT) -> Path:
    """Copy the built PDF into the built site (``_build/html``), where every page links it."""
    target = Path(root) / "_build" / "html" / SITE_PDF
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(pdf_path(root), target)
    return target


def setup(app):
    app.connect("doctree-resolved", _root_section_named)
    app.connect("html-page-context", _footer_links_the_pdf)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str]) -> int:
    if argv and argv != ["--check-only"]:
        print(__doc__, file=sys.stderr)
        return 2
    missing = missing_programs()
    if missing:
        print(f"missing {missing}: install Debian's {' '.join(DEBIAN_PACKAGES)}", file=sys.stderr)
        return 1
    pdf = pdf_path(ROOT)
    if not argv:
        built = build_pdf(ROOT, str(Path(sys.executable).with_name("jupyter-book")), echo=True)
        print(f"PDF build: exit {built.code} in {built.seconds:.0f} s (log {PDF_LOG})")
        if built.code:
            return built.code
    pages, problems = check_pdf(ROOT, pdf)
    print(f"{pdf.relative_to(ROOT)}: {pages} pages, {pdf.stat().st_size / 1e6:.1f} MB")
    for problem in problems:
        print("  " + problem)
    if problems:
        return 1
    if (ROOT / "_build" / "html").is_dir():
        print(f"offered by the site as {publish_pdf(ROOT).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
