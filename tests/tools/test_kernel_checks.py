"""The build's kernels check every figure; a reader's kernel does not (tools/kernel_checks.py).

A kernel started with ``IPYTHONDIR`` at the folder :func:`kernel_checks.prepare` writes runs
its startup file, and every figure it shows carries ``figure_checks.MIME``; the same notebook
in a kernel without it (a reader's) carries no such output. What the kernels load is part of
every chapter's fingerprint, so editing a check re-executes the chapters.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest

import bookcache
import figure_checks
import kernel_checks

ROOT = Path(__file__).resolve().parents[2]


def test_the_startup_file_is_written_once_and_names_the_checks(tmp_path):
    folder = kernel_checks.prepare(tmp_path)
    startup = folder / "profile_default" / "startup" / kernel_checks.STARTUP_FILE
    assert folder == (tmp_path / "_build" / "ipython").resolve()
    text = startup.read_text(encoding="utf8")
    assert repr(str(ROOT / "tools" / "figure_checks.py")) in text
    compile(text, str(startup), "exec")
    written = startup.stat().st_mtime_ns
    kernel_checks.prepare(tmp_path)
    assert startup.stat().st_mtime_ns == written      # unchanged text, file left alone
    environ = {}
    assert kernel_checks.use(tmp_path, environ) == folder and environ == {"IPYTHONDIR": str(folder)}


def _figure_outputs(environ_ipythondir: str | None) -> list[dict]:
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import matplotlib.pyplot as plt\n"
        "from matplotlib_inline.backend_inline import set_matplotlib_formats\n"
        "set_matplotlib_formats('svg')\n"
        "fig, ax = plt.subplots()\n"
        "ax.plot([1, 2], [1, 2], 'o', label='a')\n"
        "ax.set_ylim(0, 1.5)\n"
        "display(fig)\n"
        "plt.close(fig)\n"
        "print(sorted(n for n in globals() if 'check' in n))\n")]
    saved = os.environ.get("IPYTHONDIR")
    try:
        if environ_ipythondir is None:
            os.environ.pop("IPYTHONDIR", None)
        else:
            os.environ["IPYTHONDIR"] = environ_ipythondir
        NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    finally:
        if saved is None:
            os.environ.pop("IPYTHONDIR", None)
        else:
            os.environ["IPYTHONDIR"] = saved
    return nb.cells[0].outputs


def test_the_books_kernel_checks_each_figure_and_a_readers_does_not(tmp_path):
    checked = _figure_outputs(str(kernel_checks.prepare(tmp_path)))
    figure = next(o for o in checked if "image/svg+xml" in o.get("data", {}))
    assert figure["data"][figure_checks.MIME]["defects"] == [
        "panel 1: 'a': 1 of 2 points outside the axis limits (y from 0 to 1.5)"]
    assert any(o.get("text", "").strip() == "[]" for o in checked)   # no name left behind
    plain = tmp_path / "reader"
    plain.mkdir()
    unchecked = _figure_outputs(str(plain))
    figure = next(o for o in unchecked if "image/svg+xml" in o.get("data", {}))
    assert figure_checks.MIME not in figure["data"]


@pytest.fixture
def tree(tmp_path):
    for name in bookcache.ROOT_INPUTS:
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/a\nchapters:\n"
                                       "  - file: book/b\n")
    (tmp_path / "book").mkdir()
    front = ("---\njupytext:\n  text_representation:\n    format_name: myst\n"
             "kernelspec:\n  name: python3\n  display_name: Python 3\n---\n")
    for name in ("a", "b"):
        (tmp_path / "book" / f"{name}.md").write_text(front + "# A page\n")
    (tmp_path / "tools").mkdir()
    for name in bookcache.KERNEL_TOOLS:
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "twostep").mkdir()
    return tmp_path


@pytest.mark.parametrize("tool", bookcache.KERNEL_TOOLS)
def test_editing_what_the_kernels_load_re_executes_every_chapter(tree, tool):
    before = bookcache.chapter_fingerprints(tree)
    with (tree / tool).open("a") as f:
        f.write("\n# an edit\n")
    after = bookcache.chapter_fingerprints(tree)
    assert sorted(before) == ["book/a", "book/b"]
    assert all(after[d] != before[d] for d in before)


def test_the_kernel_tools_are_files_of_the_book():
    assert {"tools/kernel_checks.py", "tools/figure_checks.py"} == set(bookcache.KERNEL_TOOLS)
    assert all((ROOT / name).is_file() for name in bookcache.KERNEL_TOOLS)
    assert kernel_checks.CHECKS == ROOT / "tools" / "figure_checks.py"
