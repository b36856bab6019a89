"""The built book as its readers get it: every page opened in headless Chromium.

The built site comes from the session fixture ``book_build`` (tests/conftest.py):
the strict build of this run when ``tests/test_book.py`` ran it, otherwise a new
strict build when ``_build/html`` is missing or older than its sources. The
pages in ``_build/html`` are served on 127.0.0.1 by a stdlib HTTP server, and
Debian's Chromium, driven by Playwright, opens each of them with every request
to another host blocked. For each page:

* no console error, no uncaught exception, no failed request, and no request
  to anything but the local server (a blocked request fails the page);
* every image has loaded (``naturalWidth > 0``) and has non-empty alt text
  (figures get their caption as alt text, ``tools/bookbuild.py``), and every
  figure is shown at 70 % of its drawn width or more, so its labels stay legible,
  and no page scrolls sideways in a 1024 px window;
* math is typeset by the MathJax copy served with the site: every math element
  holds MathJax output, none holds a TeX error, and no ``$$``, ``\\[`` or ``\\(``
  is left in the text outside code;
* every internal link resolves to a file of the site, and every ``#fragment``
  to an element with that id;
* the sidebar links to every page of ``_toc.yml``, and every page of
  ``_toc.yml`` offers its source (.md) and, if executed, its notebook (.ipynb).

A full-page screenshot of each page is kept in ``artifacts/screenshots/``.
The browser is never downloaded: ``tools/dev.py test`` installs Debian's
``chromium`` when it is missing and it can (as root, with apt-get); where it
cannot, these tests skip and say why.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import pytest

import bookbuild
import nbchapters

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = Path(os.environ.get("TWOSTEP_CHROMIUM", "/usr/bin/chromium"))
# The flags keep Chromium from calling home: this machine (and CI) has no
# network, and a browser that tries floods the log with refused connections.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
TIMEOUT_MS = 60_000
# Smallest ratio of a figure's shown width to its drawn width, at a 1280 px window.
MIN_SCALE = 0.7
# A second window width at which no page may scroll sideways.
NARROW = 1024
# Folders of the site that hold assets and downloads, not pages.
NOT_PAGES = ("_static", "_sources", "_images", "reports")


def _toc_pages() -> list[str]:
    return nbchapters.toc_docnames(ROOT)


def _site_pages() -> list[str]:
    """Every HTML page of the built site, as paths relative to _build/html."""
    pages = []
    for path in sorted(HTML.rglob("*.html")):
        rel = path.relative_to(HTML)
        if rel.parts[0] not in NOT_PAGES:
            pages.append(rel.as_posix())
    return pages


# --- serving the site --------------------------------------------------------


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # one line per request would drown pytest's output
        pass


@pytest.fixture(scope="session")
def built_site(book_build, chapter_runs):
    """_build/html, built by this session's strict build or up to date with its sources."""
    if book_build.result is None:
        if chapter_runs.failed():
            pytest.skip(f"chapter(s) {', '.join(chapter_runs.failed())} failed to execute "
                        "in this run: no book to open")
        if chapter_runs.runs:
            # -k one_step: a build now could execute every other chapter.
            pytest.skip("chapters were executed in this run without the strict build, "
                        "so _build/html may be stale; run the whole test command")
        if book_build.is_stale():
            book_build.build()
    if book_build.result is not None and book_build.result.code:
        pytest.skip(f"the strict build failed (exit {book_build.result.code}, log in "
                    f"{bookbuild.BUILD_LOG}): no book to open")
    assert (HTML / "index.html").is_file(), "the strict build left no _build/html/index.html"
    return HTML


@pytest.fixture(scope="session")
def site(built_site):
    """Base URL of _build/html served on 127.0.0.1 (a free port), for this session."""
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.is_file():
        pytest.skip(
            f"Chromium not found at {CHROMIUM}: the browser tests need Debian's `chromium` "
            "(`apt-get install -y chromium`; `python3 tools/dev.py test` installs it when "
            "run as root with apt-get available)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def context(browser, site):
    host = urlsplit(site).netloc
    blocked: list[str] = []

    def only_local(route):
        if urlsplit(route.request.url).netloc == host:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort("blockedbyclient")

    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  service_workers="block")
    context.set_default_timeout(TIMEOUT_MS)
    context.route("**/*", only_local)
    context.blocked = blocked
    try:
        yield context
    finally:
        context.close()


# --- one page ------------------------------------------------------------------

_WAIT_FOR_MATHJAX = """async () => {
  const start = Date.now();
  while (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) {
    if (Date.now() - start > 30000) return false;
    await new Promise(r => setTimeout(r, 50));
  }
  await MathJax.startup.promise;
  return true;
}"""

_WAIT_FOR_IMAGES = """async () => {
  await Promise.all([...document.images].map(img => img.complete ? null :
      new Promise(r => { img.addEventListener('load', r); img.addEventListener('error', r); })));
  return [...document.images].map(img => ({
      src: img.getAttribute('src'), alt: (img.getAttribute('alt') || '').trim(),
      width: img.naturalWidth, shown: img.getBoundingClientRect().width,
      figure: !!img.closest('article figure')}));
}"""

_MATH = """() => {
  const maths = [...document.querySelectorAll('.math')];
  const untypeset = maths.filter(m => !m.querySelector('mjx-container'))
                         .map(m => m.textContent.trim().slice(0, 80));
  const errors = [...document.querySelectorAll('mjx-merror')]
                         .map(e => e.textContent.trim().slice(0, 80));
  const clone = document.body.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, textarea, mjx-container, .highlight')
       .forEach(e => e.remove());
  const text = clone.textContent;
  const raw = ['$$', '\\\\[', '\\\\('].filter(d => text.includes(d)).map(d => {
      const i = text.indexOf(d);
      return d + ' in "' + text.slice(Math.max(0, i - 40), i + 40).replace(/\\s+/g, ' ') + '"';
  });
  // A display equation wider than the text column is clipped (or needs a scrollbar).
  const wide = [...document.querySelectorAll('mjx-container[display="true"]')]
      .filter(c => c.scrollWidth > c.clientWidth + 1)
      .map(c => ((c.closest('.math') || c).id || '?') + ': ' + c.textContent.trim().slice(0, 60));
  return {count: maths.length, containers: document.querySelectorAll('mjx-container').length,
          untypeset, errors, raw, wide};
}"""

_LINKS = """() => ({
  links: [...document.querySelectorAll('a[href]')].map(a => [a.getAttribute('href'), a.href]),
  nav: [...document.querySelectorAll('nav.bd-docs-nav a[href]')].map(a => a.href),
})"""


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)


@functools.lru_cache(maxsize=None)
def _ids_in(path: Path) -> frozenset:
    parser = _Ids()
    parser.feed(path.read_text(encoding="utf8"))
    return frozenset(parser.ids)


def _redirect_of(path: Path) -> str | None:
    """Target of a page that only redirects (Jupyter Book's top-level index.html)."""
    match = re.search(r'http-equiv="Refresh"\s+content="\d+;\s*url=([^"]+)"',
                      path.read_text(encoding="utf8"), re.IGNORECASE)
    return match.group(1) if match else None


def _local_file(url: str, site: str) -> Path | None:
    """The file of _build/html that a URL of the local server names (None if not local)."""
    if not url.startswith(site):
        return None
    path = unquote(urlsplit(url).path).lstrip("/")
    target = HTML / path
    if path == "" or path.endswith("/"):
        target = target / "index.html"
    return target


def _page_docname(url: str, site: str) -> str | None:
    target = _local_file(urldefrag(url).url, site)
    if target is None or target.suffix != ".html":
        return None
    return target.relative_to(HTML).with_suffix("").as_posix()


def check_page(context, site: str, page: str) -> tuple[list[str], dict]:
    """Open one page; return (problems, facts) and save its screenshot."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    problems: list[str] = []
    console, failed, bad = [], [], []
    blocked_before = len(context.blocked)
    tab = context.new_page()
    tab.on("console", lambda m: m.type == "error" and console.append(
        f"{m.text} (at {m.location.get('url', '?')})"))
    tab.on("pageerror", lambda e: console.append(f"uncaught: {e}"))
    tab.on("requestfailed", lambda r: failed.append(f"{r.url} ({r.failure})"))
    tab.on("response", lambda r: r.status >= 400 and bad.append(f"HTTP {r.status} {r.url}"))
    try:
        tab.goto(site + page, wait_until="load")
        redirect = _redirect_of(HTML / page)
        if redirect:
            tab.wait_for_url(urljoin(site + page, redirect), wait_until="load")
        has_math = tab.evaluate("() => document.querySelectorAll('.math').length") > 0
        if has_math and not tab.evaluate(_WAIT_FOR_MATHJAX):
            problems.append("MathJax did not start within 30 s")
        # Fonts MathJax asked for, late images: wait until the network is quiet. "Quiet" is a
        # heuristic (no request for 500 ms); a long page can keep MathJax fetching fonts past
        # the timeout on a loaded machine (seen once on two_steps, 60 s), so a timeout here is
        # not a failure: the checks below wait for every image and every math element.
        try:
            tab.wait_for_load_state("networkidle")
        except PlaywrightTimeout:
            pass
        images = tab.evaluate(_WAIT_FOR_IMAGES)
        math = tab.evaluate(_MATH)
        links = tab.evaluate(_LINKS)
        # A narrower window (a laptop with the sidebar shown) must not scroll sideways.
        tab.set_viewport_size({"width": NARROW, "height": 900})
        overflow = tab.evaluate("() => document.documentElement.scrollWidth - innerWidth")
        tab.set_viewport_size({"width": 1280, "height": 900})
        SHOTS.mkdir(parents=True, exist_ok=True)
        shot = SHOTS / (page.removesuffix(".html").replace("/", "__") + ".png")
        tab.screenshot(path=str(shot), full_page=True)
        final_url = tab.url
    finally:
        tab.close()

    if overflow > 1:
        problems.append(f"the page scrolls sideways by {overflow} px in a {NARROW} px window")
    blocked = context.blocked[blocked_before:]
    problems += [f"request to another host blocked: {u}" for u in blocked]
    problems += [f"console error: {m}" for m in console]
    problems += [f"failed request: {r}" for r in failed if not any(b in r for b in blocked)]
    problems += [f"bad response: {r}" for r in bad]

    for img in images:
        if img["width"] <= 0:
            problems.append(f"image did not load: {img['src']}")
        if not img["alt"]:
            problems.append(
                f"image without alt text: {img['src']} (give its figure a caption: "
                "`mystnb: figure: caption:` or {glue:figure} with a caption)")

        # Labels are drawn at 8 pt or more; shown below 70 % of the drawn size they fall
        # under ~8 px. A figure wider than the column gets `:figclass: wide` (_static).
        if img["figure"] and img["width"] > 0 and img["shown"] < MIN_SCALE * img["width"]:
            problems.append(
                f"figure shown at {img['shown'] / img['width']:.0%} of its drawn width "
                f"({img['shown']:.0f} of {img['width']} px): give it `:figclass: wide` "
                "or draw it narrower")

    if math["count"] and math["containers"] == 0:
        problems.append(f"{math['count']} math elements but no MathJax output")
    problems += [f"math not typeset: {t!r}" for t in math["untypeset"]]
    problems += [f"MathJax error: {t!r}" for t in math["errors"]]
    problems += [f"raw TeX delimiter left in the text: {t}" for t in math["raw"]]
    problems += [f"display equation wider than the text column (split it with aligned): {t}"
                 for t in math["wide"]]

    for raw, absolute in links["links"]:
        if urlsplit(absolute).scheme not in ("http", "https"):
            continue  # mailto:, javascript:
        url, fragment = urldefrag(absolute)
        target = _local_file(url, site)
        if target is None:
            continue  # a link to another site is fine; only requests are not
        if not target.is_file():
            problems.append(f"broken link {raw!r}: no {target.relative_to(HTML)}")
        elif fragment and target.suffix == ".html" and unquote(fragment) not in _ids_in(target):
            problems.append(f"broken anchor {raw!r}: no id {fragment!r} in "
                            f"{target.relative_to(HTML)}")

    facts = {
        "final_url": final_url,
        "nav": {d for d in (_page_docname(u, site) for u in links["nav"]) if d},
        "hrefs": {urldefrag(a).url for _, a in links["links"]},
        "math": math["containers"],
        "images": len(images),
    }
    return problems, facts


def _report(page: str, problems: list[str]) -> str:
    return f"{page}: {len(problems)} problem(s)\n  " + "\n  ".join(problems)


# --- the tests -------------------------------------------------------------------

_timings: dict[str, float] = {}


@pytest.mark.parametrize("docname", _toc_pages())
def test_book_page(docname, context, site, book_summary):
    start = time.perf_counter()
    page = docname + ".html"
    problems, facts = check_page(context, site, page)
    _timings[page] = time.perf_counter() - start

    missing = [d for d in _toc_pages() if d not in facts["nav"]]
    if missing:
        problems.append(f"the sidebar does not reach {missing}")

    source = nbchapters.source_of(ROOT, docname)
    downloads = [f"_sources/{docname}{source.suffix}"]
    if nbchapters.is_notebook(source):
        downloads.append(f"_sources/{docname}.ipynb")
        notebook = HTML / downloads[-1]
        if notebook.is_file():
            cells = json.loads(notebook.read_text(encoding="utf8"))["cells"]
            if not any(c.get("outputs") for c in cells if c["cell_type"] == "code"):
                problems.append(f"{downloads[-1]} has no outputs: not the executed notebook")
    for rel in downloads:
        if site + rel not in facts["hrefs"]:
            problems.append(f"no download link to {rel}")

    assert not problems, _report(page, problems)


def test_other_pages(context, site, book_summary):
    """The pages Sphinx adds (index, search, proofs list, redirect) pass the same checks."""
    toc = {d + ".html" for d in _toc_pages()}
    others = [p for p in _site_pages() if p not in toc]
    assert others, "expected Sphinx's own pages (search, genindex) in _build/html"
    failures = []
    for page in others:
        start = time.perf_counter()
        problems, facts = check_page(context, site, page)
        _timings[page] = time.perf_counter() - start
        if problems:
            failures.append(_report(page, problems))
    total = sum(_timings.values())
    book_summary.append(
        f"browser: {len(_timings)} pages in {total:.1f} s, screenshots in "
        f"{SHOTS.relative_to(ROOT)}/"
    )
    assert not failures, "\n".join(failures)
