/* The book's own script (loaded on every page; tests/test_browser.py checks its effect).
   An inline formula wider than its line cannot wrap, and the column would clip it: once
   MathJax has typeset the page, and again when the window changes size, every such formula
   is marked "twostep-wide-math" and scrolls in its own box, with the scroll cue
   (_static/twostep.css). */
(function () {
  "use strict";
  function block(el) {
    let b = el.parentElement;
    while (b && getComputedStyle(b).display.startsWith("inline")) b = b.parentElement;
    return b;
  }
  function mark() {
    for (const m of document.querySelectorAll("article mjx-container:not([display='true'])")) {
      m.classList.remove("twostep-wide-math");
      const b = block(m);
      if (!b) continue;
      const style = getComputedStyle(b);
      const room = b.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      if (m.getBoundingClientRect().width > room + 1) m.classList.add("twostep-wide-math");
    }
  }
  function start() {
    const mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) {
      mj.startup.promise.then(mark);
      let timer = null;
      window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(mark, 100); });
    } else if (document.readyState !== "complete" || !start.tried) {
      start.tried = document.readyState === "complete";
      setTimeout(start, 50);
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
