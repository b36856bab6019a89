"""No built page shows where it was built: no absolute path of the build machine (the checkout,
the virtual environment, the home folder) in any HTML page or downloadable notebook of the
site. A warning that reached a page used to carry one (the readout page's joblib warning, with
the path of the environment's joblib)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def machine_paths() -> list[str]:
    """The absolute paths of this machine that a page must not hold."""
    paths = {str(ROOT), sys.prefix, sys.base_prefix, os.path.expanduser("~")}
    return sorted(p for p in paths if p and p not in ("/", "/usr", "/usr/local"))


# An installed package's path on any machine (a warning's "file:line" names one).
INSTALLED = re.compile(r"/[\w.+-]+(?:/[\w.+-]+)*/(?:site|dist)-packages/[\w./-]+")


def pages_with_paths(site: Path, paths: list[str]) -> list[str]:
    """``"<file>: <path>"`` for each HTML page or notebook of ``site`` that holds one of
    ``paths``, or the path of an installed package on any machine."""
    found = []
    for page in sorted(site.rglob("*")):
        if page.suffix in (".html", ".ipynb") and page.is_file():
            text = page.read_text(encoding="utf8", errors="replace")
            found += [f"{page.relative_to(site)}: {p}" for p in paths if p in text]
            found += [f"{page.relative_to(site)}: {m}" for m in INSTALLED.findall(text)[:3]]
    return found


def test_the_check_finds_a_path(tmp_path):
    (tmp_path / "a.html").write_text(f"<p>{ROOT}/twostep/x.py:3: UserWarning</p>")
    (tmp_path / "b.html").write_text("<p>nothing here, not even site-packages</p>")
    # The readout page of 0.1.0 showed joblib's warning with the path of the machine's joblib.
    (tmp_path / "c.ipynb").write_text('"/work/base/.venv/lib/python3.11/site-packages/joblib/'
                                      'externals/loky/process_executor.py:787: UserWarning"')
    assert pages_with_paths(tmp_path, machine_paths()) == [
        f"a.html: {ROOT}", "c.ipynb: /work/base/.venv/lib/python3.11/site-packages/joblib/"
        "externals/loky/process_executor.py"]


@pytest.mark.book
def test_no_page_holds_a_path_of_the_build_machine(built_site):
    found = pages_with_paths(built_site, machine_paths())
    assert not found, "pages that show a path of the build machine:\n" + "\n".join(found[:20])
