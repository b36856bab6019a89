/* The book's own script (loaded on every page; tests/site/test_browser.py checks its effects
   at 1280, 1024 and 390 px). Three things a narrow column needs:

   * An inline formula wider than its line cannot wrap, and the column would clip it: every
     such formula is marked "twostep-wide-math" and scrolls in its own box, with the scroll
     shadows (_static/twostep.css).
   * A table or a display equation wider than the column scrolls in its box; the box is marked
     "twostep-scrolls", and the stylesheet writes a visible cue beside it ("scroll sideways").
   * A figure is scaled to the column where the column is narrower than the figure (a phone):
     it gets a button, and a tap on it or on the figure opens it at its drawn size, where its
     smallest text is 9 pt (tools/legibility.py states the rule), in a view that scrolls both
     ways and closes with its button or Escape.

   Marks are set once MathJax has typeset the page, and again when the window changes size. */
(function () {
  "use strict";

  function block(el) {
    let b = el.parentElement;
    while (b && getComputedStyle(b).display.startsWith("inline")) b = b.parentElement;
    return b;
  }

  function markWideMath() {
    for (const m of document.querySelectorAll("article mjx-container:not([display='true'])")) {
      m.classList.remove("twostep-wide-math");
      const b = block(m);
      if (!b) continue;
      const style = getComputedStyle(b);
      const room = b.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      if (m.getBoundingClientRect().width > room + 1) m.classList.add("twostep-wide-math");
    }
  }

  /* Boxes that scroll sideways when their content is wider than the column. */
  function markScrolling() {
    const boxes = [...document.querySelectorAll("article .pst-scrollable-table-container")];
    for (const b of boxes) b.classList.toggle("twostep-scrolls", b.scrollWidth > b.clientWidth + 1);
    for (const m of document.querySelectorAll("article div.math > mjx-container[display='true']")) {
      m.parentElement.classList.toggle("twostep-scrolls", m.scrollWidth > m.clientWidth + 1);
    }
  }

  // --- figures: scaled to the column, full size on a tap -----------------------------------

  const FIGURES = "article figure img, article .cell_output img";
  let opened = null;

  function scaled(img) {
    return img.naturalWidth > 0 && img.getBoundingClientRect().width < img.naturalWidth - 1;
  }

  function figureName(img) {
    const fig = img.closest("figure");
    const number = fig && fig.querySelector(".caption-number");
    return number ? number.textContent.trim() : "The figure";
  }

  function close() {
    if (!opened) return;
    const { view, from } = opened;
    opened = null;
    view.remove();
    document.documentElement.classList.remove("twostep-zoom-open");
    if (from && from.isConnected) from.focus({ preventScroll: true });
  }

  function open(img, from) {
    close();
    const view = document.createElement("div");
    view.className = "twostep-zoom";
    view.setAttribute("role", "dialog");
    view.setAttribute("aria-modal", "true");
    const name = figureName(img);
    view.setAttribute("aria-label", name + " at its drawn size");
    const bar = document.createElement("div");
    bar.className = "twostep-zoom-bar";
    const note = document.createElement("span");
    note.textContent = name + " at its drawn size: scroll to see all of it.";
    const shut = document.createElement("button");
    shut.type = "button";
    shut.className = "twostep-zoom-close";
    shut.setAttribute("aria-label", "Close the full-size figure");
    shut.textContent = "\u00d7";
    shut.addEventListener("click", close);
    bar.append(note, shut);
    const big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt;
    big.width = img.naturalWidth;
    big.style.width = img.naturalWidth + "px";
    const pane = document.createElement("div");
    pane.className = "twostep-zoom-pane";
    pane.append(big);
    view.append(bar, pane);
    document.body.append(view);
    document.documentElement.classList.add("twostep-zoom-open");
    opened = { view, from };
    shut.focus({ preventScroll: true });
  }

  function markFigures() {
    for (const img of document.querySelectorAll(FIGURES)) {
      const box = img.closest("figure") || img.closest(".cell_output");
      let button = box.querySelector(":scope > .twostep-zoom-button");
      const wanted = scaled(img);
      box.classList.toggle("twostep-zoomable", wanted);
      if (wanted && !button) {
        button = document.createElement("button");
        button.type = "button";
        button.className = "twostep-zoom-button";
        button.setAttribute("aria-label", "Open " + figureName(img).replace(/\.$/, "") +
                            " at its drawn size");
        button.textContent = "\u2922";   // the arrows of "enlarge"
        button.addEventListener("click", () => open(img, button));
        box.append(button);
      }
      if (!img.dataset.twostepZoom) {
        img.dataset.twostepZoom = "1";
        img.addEventListener("click", () => { if (scaled(img)) open(img, img); });
      }
    }
  }

  document.addEventListener("keydown", (e) => { if (e.key === "Escape") close(); });

  function markAll() {
    markWideMath();
    markScrolling();
    markFigures();
  }

  function start() {
    let timer = null;
    window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(markAll, 100); });
    // Images that load late are marked when they arrive.
    for (const img of document.querySelectorAll(FIGURES)) {
      if (!img.complete) img.addEventListener("load", markFigures, { once: true });
    }
    markAll();
    const mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) {
      mj.startup.promise.then(markAll);
    } else if (document.querySelector(".math") && !start.waited) {
      // MathJax not there yet: try again shortly, then once the page has loaded.
      start.waited = true;
      window.addEventListener("load", () => {
        const m = window.MathJax;
        if (m && m.startup && m.startup.promise) m.startup.promise.then(markAll);
        else markAll();
      });
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
