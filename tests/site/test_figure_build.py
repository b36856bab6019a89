"""The figure tooling in a build, on a stand-in book of one page (Jupyter Book, executed):

* the build's kernel checks every figure it draws (IPython's startup files,
  tools/kernel_checks.py, set up by tools/figure_downloads.py), and leaves no name of its own
  in the page's namespace;
* a glued figure given its data (``figures.attach_data``) is offered as CSV under it, and the
  page shows neither the CSV nor the checks (``nb_mime_priority_overrides`` and
  ``suppress_warnings`` of the book's own _config.yml);
* a glued figure without data, and a caption whose colour words disagree with the drawn
  colours, are warnings, which fail the strict build;
* a figure's defects (here a point off its axis) are in its checks, for the book's tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

import bookcache
import figure_checks
import figure_downloads

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[2]

_PAGE = textwrap.dedent('''\
    ---
    jupytext:
      text_representation:
        extension: .md
        format_name: myst
        format_version: 0.13
    kernelspec:
      display_name: Python 3
      language: python
      name: python3
    ---
    # A stand-in page

    ```{code-cell} ipython3
    import matplotlib.pyplot as plt
    from myst_nb import glue
    from twostep.pages import figures

    figures.use_book_style()
    # The kernel's checks leave nothing in the page's namespace.
    assert not [n for n in globals() if "figure_checks" in n], sorted(globals())


    def line(colour, label, y=(1.0, 2.0, 3.0), ylim=None):
        fig, ax = plt.subplots(figsize=(3.0, 2.0))
        ax.plot([1, 2, 3], y, "o-", color=colour, label=label)
        ax.set(xlabel="x", ylabel="y", ylim=ylim)
        rows = {"series": [label] * 3, "x": [1, 2, 3], "y": list(y)}
        return figures.finished(figures.attach_data(fig, rows))


    glue("fig_good", line("0.5", "measured"), display=False)
    glue("fig_black", line("0.15", "theory"), display=False)
    glue("fig_off", line("0.5", "runs", ylim=(0.0, 2.5)), display=False)
    fig, ax = plt.subplots(figsize=(3.0, 2.0))
    ax.plot([1, 2], [1, 2], label="no table")
    glue("fig_nodata", figures.finished(fig), display=False)
    ```

    ```{glue:figure} fig_good
    :name: fig-good

    The measured values (grey).
    ```

    ```{glue:figure} fig_black
    :name: fig-black

    Grey: the theory.
    ```

    ```{glue:figure} fig_off
    :name: fig-off

    Runs, the third of them above the axis.
    ```

    ```{glue:figure} fig_nodata
    :name: fig-nodata

    A figure without its table.
    ```
    ''')


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory):
    """(exit code, build log, the book's folder) of the stand-in book's strict build."""
    book = tmp_path_factory.mktemp("standin")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))
    own = config["sphinx"]["config"]
    (book / "_config.yml").write_text(yaml.safe_dump({
        "title": "A stand-in book",
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "cache", "timeout": 300},
        "sphinx": {
            "local_extensions": {"figure_downloads": str(ROOT / "tools")},
            "config": {key: own[key] for key in ("nb_mime_priority_overrides",
                                                 "suppress_warnings")},
        },
    }), encoding="utf8")
    (book / "_toc.yml").write_text("format: jb-book\nroot: page\n", encoding="utf8")
    (book / "page.md").write_text(_PAGE, encoding="utf8")
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jupyter_book), "build", str(book), "-n", "-W", "--keep-going"],
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr, book


def _warnings(log: str) -> list[str]:
    return [line for line in log.splitlines() if ": WARNING: " in line]


def test_a_figure_without_data_and_a_wrong_colour_word_fail_the_strict_build(stand_in):
    code, log, _ = stand_in
    warnings = _warnings(log)
    assert code != 0, log[-3000:]
    assert len(warnings) == 2, "\n".join(warnings) or log[-3000:]
    assert any("'fig_nodata' has no data (text/csv)" in w for w in warnings), warnings
    assert any("'fig_black': the caption calls 'theory' Grey, but it is drawn #262626" in w
               for w in warnings), warnings


def test_a_figure_with_its_data_is_offered_as_csv_and_the_page_shows_no_table(stand_in):
    _, _, book = stand_in
    html = book / "_build" / "html"
    data = html / figure_downloads.DATA_DOWNLOADS
    assert (data / "fig-good.csv").read_text() == "series,x,y\nmeasured,1,1\nmeasured,2,2\n" \
                                                   "measured,3,3\n"
    assert not (data / "fig-nodata.csv").exists()
    page = (html / "page.html").read_text(encoding="utf8")
    assert 'href="_downloads/data/fig-good.csv"' in page
    assert "measured,1,1" not in page and "figure-checks" not in page and "defects" not in page
    assert page.count("<img") == 4


def test_the_kernel_checked_every_figure_and_found_the_point_off_its_axis(stand_in):
    _, _, book = stand_in
    # The executed page as the build read it (the execution cache's record).
    notebook = bookcache.merged_outputs(bookcache.cache_dir(book),
                                        bookcache.read_chapter(book, "page"))
    checks = {key: figure_downloads.glued_data(notebook, key)[figure_checks.MIME]
              for key in ("fig_good", "fig_black", "fig_off", "fig_nodata")}
    assert checks["fig_good"]["defects"] == [] and checks["fig_nodata"]["defects"] == []
    assert checks["fig_off"]["defects"] == [
        "panel 1: 'runs': 1 of 3 points outside the axis limits (y from 0 to 2.5)"]
    assert checks["fig_black"]["series"] == [
        {"panel": 1, "label": "theory", "kind": "markers", "colors": ["#262626"]}]
    json.dumps(checks)
