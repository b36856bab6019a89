"""The built book as its readers get it: every page opened in headless Chromium.

The built site comes from the session fixture ``book_build`` (tests/conftest.py):
the strict build of this run when ``tests/site/test_book.py`` ran it, otherwise a new
strict build when ``_build/html`` is missing or older than its sources. The
pages in ``_build/html`` are served on 127.0.0.1 by a stdlib HTTP server, and
Debian's Chromium, driven by Playwright, opens each of them with every request
to another host blocked. For each page:

* no console error, no uncaught exception, no failed request, and no request
  to anything but the local server (a blocked request fails the page);
* every page is opened at two window widths, 1280 px (a laptop) and 390 px (a
  phone), and checked at each;
* every image has loaded (``naturalWidth > 0``) and has plain-text alt text
  (no ``\\`` or ``$``: ``tools/alt_text.py`` derives it from the caption), and
  no figure is read with text below 8 pt (``tools/legibility.py``): at 1280 and 1024 px
  its smallest text as shown is 8 pt or more (its SVG's font sizes times its shown / drawn
  width); at 390 px every figure is whole in the column and scaled to its width, and one
  shown below 8 pt has a button and opens at its drawn size on a tap (then closes with
  Escape); a figure's box does not cover the page's contents list;
* axe-core (vendored, ``tests/vendor/axe-core``) finds no violation of its
  alt-text, title and language rules;
* at 1280 and 1024 px every figure, every table and every line of a code cell fits the
  text column (none scrolls in its box), at every width no table caption and no inline formula
  is cut off, a table or display equation that scrolls sideways (on a phone) says so in
  words beside it, an inline formula that scrolls shows the scroll shadows, and at 390 px
  the landing page's verdict column is in view;
* no page scrolls sideways (at 1280, 1024 and 390 px); a display equation wider
  than the column scrolls in its own box with its number in view; a table
  cell holding a value is on one line; there is exactly one search entry;
* math is typeset by the MathJax copy served with the site: every math element
  holds MathJax output, none holds a TeX error, and no ``$$``, ``\\[`` or ``\\(``
  is left in the text outside code;
* every internal link resolves to a file of the site, and every ``#fragment``
  to an element with that id;
* the sidebar links to every page of ``_toc.yml``, and every page of
  ``_toc.yml`` offers its source (.md) and, if executed, its notebook (.ipynb).

A full-page screenshot of each page at 1280 px, and of the landing page and the
setting chapter at 390 px too, is kept in ``artifacts/screenshots/``.
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

import bookcache
import code_downloads
import legibility

# The book style's smallest font (twostep.pages.figures), for PNG figures.
SMALLEST_FONT_PT = 9.0

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[2]
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
# The window widths every page is checked at: a laptop and a phone.
WIDTHS = {"1280": 1280, "390": 390}
# A third width, at which no page may scroll sideways (a laptop with the sidebar shown).
NARROW = 1024
# Figure text shown smaller than this fails (points, as drawn size x shown / drawn width).
MIN_TEXT_PT = legibility.MIN_READABLE_PT
# Pages also screenshotted at the phone's width (full page).
PHONE_SHOTS = ("book/index", "book/setting")


def appendix(page: str) -> bool:
    """Whether a built page (``book/<name>.html``) is an evidence appendix."""
    name = page.removeprefix("book/").removesuffix(".html")
    return name.endswith("_evidence") or name == "at_scale"
AXE = Path(__file__).resolve().parents[1] / "vendor" / "axe-core" / "axe.min.js"
AXE_SHA256 = "b511cd9dec01c76f4b2ad1723b66b6db37d4c2eb4ed199076e1829d9ee7b75e3"
# axe-core's rules for text alternatives, the page's title and its language.
AXE_RULES = ["image-alt", "role-img-alt", "svg-img-alt", "input-image-alt", "area-alt",
             "object-alt", "document-title", "html-has-lang", "html-lang-valid"]
# Folders of the site that hold assets and downloads, not pages.
NOT_PAGES = ("_static", "_sources", "_images", "reports")


def _toc_pages() -> list[str]:
    return bookcache.toc_docnames(ROOT)


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
def axe_source() -> str:
    import hashlib

    data = AXE.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert digest == AXE_SHA256, f"{AXE} is not the vendored axe-core 4.10.2 (sha256 {digest})"
    return data.decode("utf8")


@pytest.fixture(scope="session")
def contexts(browser, site):
    """One browser context per window width, each blocking every other host."""
    host = urlsplit(site).netloc
    made = {}

    def new_context(width):
        blocked: list[str] = []

        def only_local(route):
            if urlsplit(route.request.url).netloc == host:
                route.continue_()
            else:
                blocked.append(route.request.url)
                route.abort("blockedbyclient")

        # A phone: small viewport, touch, the device pixel ratio of a phone.
        phone = width < 600
        context = browser.new_context(viewport={"width": width, "height": 844 if phone else 900},
                                      device_scale_factor=3 if phone else 1, has_touch=phone,
                                      is_mobile=phone, service_workers="block")
        context.set_default_timeout(TIMEOUT_MS)
        context.route("**/*", only_local)
        context.blocked = blocked
        context.width = width
        return context

    def get(width):
        if width not in made:
            made[width] = new_context(width)
        return made[width]

    try:
        yield get
    finally:
        for context in made.values():
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
  const toc = document.querySelector('.bd-sidebar-secondary');
  const tocBox = toc && toc.getBoundingClientRect();
  const tocShown = tocBox && tocBox.width > 0 && tocBox.left < innerWidth &&
      getComputedStyle(toc).visibility !== 'hidden' && getComputedStyle(toc).display !== 'none';
  return [...document.images].map(img => {
    const box = (img.closest('figure') || img.closest('.cell_output') || img).getBoundingClientRect();
    const covers = !!(tocShown && box.width > 0 && box.right > tocBox.left + 1 &&
        box.left < tocBox.right && box.bottom > tocBox.top && box.top < tocBox.bottom &&
        img.closest('article'));
    return {src: img.getAttribute('src'), url: img.src, alt: (img.getAttribute('alt') || '').trim(),
            width: img.naturalWidth, shown: img.getBoundingClientRect().width,
            figure: !!img.closest('article figure, article .cell_output'), covers_toc: covers};
  });
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
  // A display equation wider than its box must scroll in it, with a cue in words beside it
  // (_static/twostep.css), and keep its number in view inside the window.
  const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  const said = e => e.classList.contains('twostep-scrolls') &&
      /scrolls/.test(getComputedStyle(e, '::after').content);
  const wide = [];
  for (const c of document.querySelectorAll('mjx-container[display="true"]')) {
    const name = ((c.closest('.math') || c).id || '?') + ': ' + c.textContent.trim().slice(0, 50);
    const box = c.getBoundingClientRect();
    if (box.right > innerWidth + 1 || box.left < -1) {
      wide.push(name + ' (its box runs out of the window)');
    } else if (c.scrollWidth > c.clientWidth + 1) {
      if (!scrolls(c)) wide.push(name + ' (overflows without scrolling)');
      else if (!said(c.parentElement)) wide.push(name + ' (scrolls with no cue saying so)');
    }
    const eqno = c.parentElement && c.parentElement.querySelector(':scope > .eqno');
    if (eqno) {
      const n = eqno.getBoundingClientRect();
      if (n.width === 0 || n.right > innerWidth + 1 || n.left < 0 || n.top > box.bottom || n.bottom < box.top)
        wide.push(name + ' (its number ' + eqno.textContent.trim() + ' is out of view)');
    }
  }
  return {count: maths.length, containers: document.querySelectorAll('mjx-container').length,
          untypeset, errors, raw, wide};
}"""

# A body cell that holds one value (short, with a digit) must be on one line (a column's
# title may wrap); a table
# wider than its box must be in a box that scrolls.
_TABLES = """() => {
  const problems = [];
  // Lines of text in an element: its text's boxes, grouped where they overlap
  // vertically (a subscript overlaps its line; the next line does not).
  const lines = el => {
    const range = document.createRange();
    range.selectNodeContents(el);
    const boxes = [...range.getClientRects()].filter(r => r.width >= 1 && r.height >= 1)
                                             .sort((a, b) => a.top - b.top);
    let count = 0, bottom = -Infinity;
    for (const r of boxes) {
      if (r.top >= bottom - 2) { count += 1; bottom = r.bottom; }
      else bottom = Math.max(bottom, r.bottom);
    }
    return count;
  };
  document.querySelectorAll('article table').forEach((table, i) => {
    const label = (table.closest('[id]') || table).id || ('table ' + (i + 1));
    for (const cell of table.querySelectorAll('tbody td')) {
      const text = cell.textContent.replace(/\\s+/g, ' ').trim();
      if (text.length > 0 && text.length <= 32 && /\\d/.test(text) && lines(cell) > 1)
        problems.push(label + ': the value "' + text + '" breaks over ' + lines(cell) + ' lines');
    }
    const box = table.parentElement;
    if (table.getBoundingClientRect().width > box.getBoundingClientRect().width + 1 &&
        !['auto', 'scroll'].includes(getComputedStyle(box).overflowX))
      problems.push(label + ': wider than the column and not in a box that scrolls');
  });
  return problems;
}"""

# Figures, tables and inline maths against the text column. ``strict`` (1280 and 1024 px):
# no figure or table wider than its column or scrolling in its box. Narrower (a phone): every
# figure whole in the column, not scrolling, and scaled to its width (as wide as its box, or
# its drawn width if that is less). At every width: no table caption cut off, no inline formula
# cut off (one too wide for its line scrolls in its own box, _static/twostep.js), a table that
# scrolls sideways says so in words ("twostep-scrolls", _static/twostep.css), and an inline
# formula that scrolls shows the scroll shadows.
_LAYOUT = """(strict) => {
  const problems = [];
  const art = document.querySelector('article.bd-article') || document.querySelector('article');
  if (!art) return problems;
  const cs = getComputedStyle(art);
  const a = art.getBoundingClientRect();
  const colLeft = a.left + parseFloat(cs.paddingLeft), colRight = a.right - parseFloat(cs.paddingRight);
  const shown = e => e.getClientRects().length > 0 && e.getBoundingClientRect().width > 0;
  const scrolls = e => e.scrollWidth > e.clientWidth + 1;
  const scrollsIn = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX) && scrolls(e);
  const cue = e => getComputedStyle(e).backgroundImage !== 'none';
  const inner = e => e.clientWidth - parseFloat(getComputedStyle(e).paddingLeft) -
      parseFloat(getComputedStyle(e).paddingRight);
  const said = (e, where) => e.classList.contains('twostep-scrolls') &&
      getComputedStyle(e, where).display !== 'none' && /scrolls/.test(getComputedStyle(e, where).content);
  const name = (e, i, kind) => (e.id || (e.closest('[id]') || {}).id || (kind + ' ' + (i + 1)));
  [...art.querySelectorAll('figure img, .cell_output img')].filter(shown).forEach((img, i) => {
    const box = img.closest('figure') || img.closest('.cell_output');
    const label = name(img.closest('figure') || box, i, 'figure') + ' (' + img.getAttribute('src') + ')';
    const b = img.getBoundingClientRect();
    if (scrollsIn(box) || b.right > colRight + 1 || b.left < colLeft - 1)
      problems.push('figure ' + label + ' is not whole in the ' + Math.round(colRight - colLeft) +
                    ' px column: drawn ' + img.naturalWidth + ' px, shown ' + Math.round(b.width) + ' px, ' +
                    Math.round(100 * Math.max(0, 1 - (colRight - colLeft) / b.width)) + '% of it out of the column');
    else if (!strict && b.width < Math.min(img.naturalWidth, inner(box)) - 2)
      problems.push('figure ' + label + ' is shown ' + Math.round(b.width) + ' px wide, not scaled to its ' +
                    Math.round(inner(box)) + ' px box (drawn ' + img.naturalWidth + ' px)');
  });
  [...art.querySelectorAll('table')].filter(shown).forEach((t, i) => {
    const label = name(t, i, 'table');
    const box = t.parentElement;
    const tb = t.getBoundingClientRect(), bb = box.getBoundingClientRect();
    if (strict && (scrolls(box) || tb.right > colRight + 1))
      problems.push('table ' + label + ' is wider than the ' + Math.round(colRight - colLeft) + ' px column (' +
                    Math.round(tb.width) + ' px)');
    else if (scrolls(box) && !said(box, '::before'))
      problems.push('table ' + label + ' scrolls with no cue saying so');
    const cap = t.querySelector(':scope > caption');
    if (cap) {
      const c = cap.getBoundingClientRect();
      if (c.right > Math.min(bb.right, innerWidth) + 1 || c.left < Math.max(bb.left, 0) - 1)
        problems.push('table ' + label + ': its caption is cut off ("' + cap.textContent.trim().slice(0, 40) + '...")');
    }
  });
  for (const m of art.querySelectorAll('mjx-container:not([display="true"])')) {
    if (m.closest('table') || !shown(m)) continue;  // a table's cells scroll with the table
    let block = m.parentElement;
    while (block && getComputedStyle(block).display.startsWith('inline')) block = block.parentElement;
    const bb = block.getBoundingClientRect();
    const right = Math.min(bb.right - parseFloat(getComputedStyle(block).paddingRight), innerWidth);
    const b = m.getBoundingClientRect();
    const own = ['auto', 'scroll'].includes(getComputedStyle(m).overflowX) && scrolls(m);
    if (b.right > right + 1)
      problems.push('inline maths cut off by ' + Math.round(b.right - right) + ' px: "' +
                    m.textContent.trim().slice(0, 40) + '"' + (own ? '' : ' (and it does not scroll)'));
    else if (own && !cue(m))
      problems.push('inline maths "' + m.textContent.trim().slice(0, 40) + '" scrolls with no cue');
  }
  return problems;
}"""

# The landing page's verdict table: at a phone's width every verdict cell is in view without
# scrolling (the table stacks its rows there, _static/twostep.css).
# A code cell's lines fit its box at the laptop widths (1280 and 1024 px): a reader does
# not scroll sideways to read the code beside a figure. Cells whose input is folded
# (hide-input) are unfolded to be measured, then folded again. The figure-source dropdowns
# show the package's files as they are (100 columns) and may scroll in their box.
_CODE_LINES = """() => {
  const folded = [...document.querySelectorAll('article details')]
      .filter(d => !d.open && d.querySelector('.cell_input'));
  folded.forEach(d => d.open = true);
  const wide = [];
  for (const pre of document.querySelectorAll('article .cell_input pre')) {
    if (pre.scrollWidth > pre.clientWidth + 1) {
      const longest = pre.textContent.split('\\n').reduce((a, b) => b.length > a.length ? b : a, '');
      wide.push('a code line of ' + longest.length + ' characters scrolls in its cell: "' +
                longest.trim().slice(0, 50) + '..."');
    }
  }
  folded.forEach(d => d.open = false);
  return wide;
}"""

_VERDICTS_IN_VIEW = """() => {
  const table = document.getElementById('tab-verdicts');
  if (!table) return ['no table #tab-verdicts on the landing page'];
  const problems = [];
  [...table.querySelectorAll('tbody tr')].forEach((row, i) => {
    const cell = row.cells[row.cells.length - 1];
    const b = cell.getBoundingClientRect();
    if (b.width === 0 || b.left < -1 || b.right > innerWidth + 1)
      problems.push('the verdict of row ' + (i + 1) + ' is out of view (' + Math.round(b.left) + ' to ' +
                    Math.round(b.right) + ' px in a ' + innerWidth + ' px window)');
  });
  return problems;
}"""

# Search entries a reader can see: exactly one at any width.
# (The search page's own form is the search itself, not another entry.)
_SEARCH = """() => [...document.querySelectorAll('.search-button-field, .search-button')]
  .filter(e => { const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0 &&
                 b.right > 0 && b.left < innerWidth && getComputedStyle(e).visibility !== 'hidden'; })
  .map(e => e.className)"""

_AXE = """async (rules) => {
  const result = await axe.run(document, {runOnly: {type: 'rule', values: rules},
                                          resultTypes: ['violations']});
  return result.violations.map(v => v.id + ': ' + v.help + ' (' + v.nodes.length + ' element(s), e.g. ' +
      v.nodes.slice(0, 2).map(n => n.target.join(' ')).join('; ') + ')');
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


def _image_file(url: str, site: str) -> Path | None:
    target = _local_file(urldefrag(url).url, site)
    return target if target is not None and target.is_file() else None


_FIGURE_FACTS = """img => {
  const box = img.closest('figure') || img.closest('.cell_output');
  const button = box && box.querySelector(':scope > .twostep-zoom-button');
  const r = button && button.getBoundingClientRect();
  return {src: img.getAttribute('src'), shown: img.getBoundingClientRect().width,
          natural: img.naturalWidth,
          button: !!(r && r.width > 0 && r.left >= 0 && r.right <= innerWidth &&
                     button.getAttribute('aria-label'))};
}"""


def tap_figures(tab) -> tuple[dict[str, float], list[str]]:
    """On a phone: tap every figure shown narrower than it is drawn. Returns ({src: its width
    in the full-size view}, problems): a scaled figure without its button, one that a tap does
    not open in a dialog, one whose view does not close with Escape."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    opened, problems = {}, []
    images = tab.locator("article figure img, article .cell_output img")
    view = tab.locator(".twostep-zoom")
    for i in range(images.count()):
        img = images.nth(i)
        facts = img.evaluate(_FIGURE_FACTS)
        if facts["natural"] == 0 or facts["shown"] >= facts["natural"] - 1:
            continue
        src = facts["src"]
        if not facts["button"]:
            problems.append(f"figure {src}: scaled to the column with no button to open it")
        img.tap()
        try:
            view.wait_for(state="visible", timeout=5000)
        except PlaywrightTimeout:
            problems.append(f"figure {src}: a tap does not open it at its drawn size")
            continue
        if view.get_attribute("role") != "dialog" or not view.get_attribute("aria-label"):
            problems.append(f"figure {src}: its full-size view is not a labelled dialog")
        opened[src] = view.locator("img").evaluate("i => i.getBoundingClientRect().width")
        tab.keyboard.press("Escape")
        try:
            view.wait_for(state="detached", timeout=5000)
        except PlaywrightTimeout:
            problems.append(f"figure {src}: its full-size view does not close with Escape")
            break
    return opened, problems


def check_page(context, site: str, page: str, axe: str | None = None,
               shot: bool = True) -> tuple[list[str], dict]:
    """Open one page at the context's width; return (problems, facts), and save its
    screenshot if ``shot``."""
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
        tables = tab.evaluate(_TABLES)
        search = tab.evaluate(_SEARCH)
        violations = []
        if axe:
            tab.add_script_tag(content=axe)  # inline: no request
            violations = tab.evaluate(_AXE, AXE_RULES)
        overflow = {context.width: tab.evaluate(
            "() => document.documentElement.scrollWidth - innerWidth")}
        # The story's tables fit the desktop column; an appendix's per-width tables may
        # scroll there too, with the cue that says so (the phone rule).
        story = not appendix(page)
        layout = {context.width: tab.evaluate(_LAYOUT, story and context.width >= NARROW)}
        if context.width >= NARROW:
            layout[context.width] += tab.evaluate(_CODE_LINES)
        if page == "book/index.html" and context.width < NARROW:
            layout[context.width] += tab.evaluate(_VERDICTS_IN_VIEW)
        opened: dict[str, float] = {}
        if context.width < NARROW:
            opened, tapped = tap_figures(tab)
            layout[context.width] += tapped
        if context.width == 1280:
            # A narrower window (a laptop with the sidebar shown) must not scroll sideways,
            # and its column must hold every figure and table too.
            tab.set_viewport_size({"width": NARROW, "height": 900})
            tab.wait_for_timeout(300)  # _static/twostep.js re-marks wide formulas on resize
            overflow[NARROW] = tab.evaluate("() => document.documentElement.scrollWidth - innerWidth")
            layout[NARROW] = tab.evaluate(_LAYOUT, story) + tab.evaluate(_CODE_LINES)
            tab.set_viewport_size({"width": 1280, "height": 900})
        if shot:
            SHOTS.mkdir(parents=True, exist_ok=True)
            name = page.removesuffix(".html").replace("/", "__")
            suffix = "" if context.width == 1280 else f"@{context.width}"
            tab.screenshot(path=str(SHOTS / f"{name}{suffix}.png"), full_page=True, scale="css")
        final_url = tab.url
    finally:
        tab.close()

    for width, px in overflow.items():
        if px > 1:
            problems.append(f"the page scrolls sideways by {px} px in a {width} px window")
    for width, found in layout.items():
        problems += [f"at {width} px: {p}" for p in found]
    if len(search) != 1:
        problems.append(f"{len(search)} search entries shown, not one: {search}")
    problems += [f"table: {t}" for t in tables]
    problems += [f"axe-core: {v}" for v in violations]
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
        elif "\\" in img["alt"] or "$" in img["alt"]:
            problems.append(f"alt text with LaTeX in it: {img['src']}: {img['alt'][:80]!r}")
        if img["covers_toc"]:
            problems.append(f"figure {img['src']} covers the page's contents list")

        # The smallest text of the figure as shown: its size in the drawn figure (from
        # the SVG; the book style's smallest for a PNG) times shown / drawn width.
        path = _image_file(img["url"], site)
        facts = legibility.image_facts(path) if path else None
        if img["figure"] and img["width"] > 0 and facts:
            smallest = facts[1] if facts[1] is not None else SMALLEST_FONT_PT
            shown_pt = smallest * img["shown"] / img["width"]
            # On a phone a figure scaled to the column may be smaller: it is read in its
            # full-size view, which a tap opens (tools/legibility.py).
            full = opened.get(img["src"])
            if full is not None:
                if full < legibility.min_shown_width(img["width"], smallest) - 0.5:
                    problems.append(f"figure {img['src']}: its full-size view shows it "
                                    f"{full:.0f} px wide, its text below {MIN_TEXT_PT:g} pt")
            elif shown_pt < MIN_TEXT_PT - 0.05:
                problems.append(
                    f"figure {img['src']}: its smallest text is shown at {shown_pt:.1f} pt "
                    f"({smallest:g} pt drawn, shown at {img['shown'] / img['width']:.0%} of "
                    f"{img['width']} px); draw it at {MIN_TEXT_PT:g} pt or more")

    if math["count"] and math["containers"] == 0:
        problems.append(f"{math['count']} math elements but no MathJax output")
    problems += [f"math not typeset: {t!r}" for t in math["untypeset"]]
    problems += [f"MathJax error: {t!r}" for t in math["errors"]]
    problems += [f"raw TeX delimiter left in the text: {t}" for t in math["raw"]]
    problems += [f"display equation: {t}" for t in math["wide"]]

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


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("docname", _toc_pages())
def test_book_page(docname, width, contexts, site, axe_source, book_summary):
    start = time.perf_counter()
    page = docname + ".html"
    context = contexts(WIDTHS[width])
    shot = context.width == 1280 or docname in PHONE_SHOTS
    problems, facts = check_page(context, site, page, axe_source, shot=shot)
    _timings[f"{page}@{width}"] = time.perf_counter() - start

    missing = [d for d in _toc_pages() if d not in facts["nav"]]
    if missing:
        problems.append(f"the sidebar does not reach {missing}")

    source = bookcache.source_of(ROOT, docname)
    downloads = [f"_sources/{docname}{source.suffix}"]
    if bookcache.is_notebook(source):
        # Every executed page says, under its title, how long re-executing it takes.
        if 'class="twostep-runtime"' not in (HTML / page).read_text(encoding="utf8"):
            problems.append("no line saying how long the page takes to execute (p.twostep-runtime)")
        downloads.append(f"_sources/{docname}.ipynb")
        notebook = HTML / downloads[-1]
        if notebook.is_file():
            cells = json.loads(notebook.read_text(encoding="utf8"))["cells"]
            if not any(c.get("outputs") for c in cells if c["cell_type"] == "code"):
                problems.append(f"{downloads[-1]} has no outputs: not the executed notebook")
    # The package and the pins a reader needs, linked where the landing page says how to
    # install them.
    if docname == code_downloads.HOW_TO_RUN[0]:
        for name in (code_downloads.wheel_name(ROOT), "requirements.txt"):
            downloads.append(f"{code_downloads.CODE_DOWNLOADS.as_posix()}/{name}")
    for rel in downloads:
        if site + rel not in facts["hrefs"]:
            problems.append(f"no download link to {rel}")
        elif not (HTML / rel).is_file():
            problems.append(f"the download {rel} is not in the site")

    assert not problems, _report(f"{page} at {width} px", problems)


@pytest.mark.parametrize("width", list(WIDTHS))
def test_other_pages(width, contexts, site, axe_source, book_summary):
    """The pages Sphinx adds (search, the redirect) pass the same checks."""
    toc = {d + ".html" for d in _toc_pages()}
    others = [p for p in _site_pages() if p not in toc]
    assert others, "expected Sphinx's own pages (search) in _build/html"
    assert "genindex.html" not in others, "the empty general index is back (html_use_index)"
    context = contexts(WIDTHS[width])
    failures = []
    for page in others:
        start = time.perf_counter()
        problems, facts = check_page(context, site, page, axe_source, shot=context.width == 1280)
        _timings[f"{page}@{width}"] = time.perf_counter() - start
        if problems:
            failures.append(_report(f"{page} at {width} px", problems))
    if width == list(WIDTHS)[-1]:
        total = sum(_timings.values())
        book_summary.append(
            f"browser: {len(_timings)} page views ({', '.join(WIDTHS)} px) in {total:.1f} s, "
            f"screenshots in {SHOTS.relative_to(ROOT)}/"
        )
    assert not failures, "\n".join(failures)


def test_no_index_of_raw_labels(built_site):
    """No domain index (html_domain_indices): sphinx-proof's lists raw labels (claim-count)."""
    for name in ("prf-prf.html", "prf-results.html", "genindex.html"):
        assert not (built_site / name).exists(), f"{name} is published"


# Page weight: a page's HTML plus the images it shows (the theme's CSS, scripts and
# MathJax are shared by every page and cached, so not counted). README, "The book in a
# browser", states the budget and the measured weights.
PAGE_BUDGET = 2_000_000
# 6 MB until each figure's source was shown on its page (36 dropdowns, 0.64 MB of HTML).
# 7 MB until the four evidence appendices were added (7.35 MB measured on 2026-12-08).
SITE_BUDGET = 7_500_000


def page_weight(page: Path) -> tuple[int, int]:
    """(bytes of the HTML, bytes of the images it shows) of one built page."""
    text = page.read_text(encoding="utf8")
    images = {(page.parent / unquote(src)).resolve()
              for src in re.findall(r'<img[^>]+src="([^"]+)"', text) if "://" not in src}
    return page.stat().st_size, sum(p.stat().st_size for p in images if p.is_file())


def test_pages_keep_to_the_weight_budget(built_site, book_summary):
    weights = {p: page_weight(built_site / p) for p in _site_pages()}
    heavy = {p: sum(w) for p, w in weights.items() if sum(w) > PAGE_BUDGET}
    total = sum(sum(w) for w in weights.values())
    book_summary.append("page weight (HTML + images): " + ", ".join(
        f"{p.removesuffix('.html')} {sum(w) / 1e6:.2f} MB" for p, w in weights.items()
        if p.startswith("book/")) + f"; all pages {total / 1e6:.2f} MB")
    assert not heavy, f"pages over {PAGE_BUDGET / 1e6:.1f} MB: {heavy}"
    assert total <= SITE_BUDGET, f"the pages weigh {total / 1e6:.2f} MB, over {SITE_BUDGET / 1e6:.1f} MB"
