"""A reader with only the built site installs twostep from it and runs a chapter.

The site offers the package as a wheel and the pins the notebooks need
(``_downloads/code/``, built by ``tools/code_downloads.py``), and every chapter's executed
notebook (``_sources/book/<chapter>.ipynb``). This test does what the landing page
tells a reader to do, in a fresh virtual environment (no system site-packages, no
checkout on the path, run from an empty folder): install the wheel, constrained to
the site's pins, with what executing a notebook needs, then execute the setting
chapter's downloaded notebook (the cheapest chapter) with nbclient, and then the
at-scale appendix's, with the results files the site offers put next to it.

To keep it short it installs the notebooks' runtime only (the wheel, matplotlib, a
kernel, nbclient and myst-nb for the chapters' glue), not JupyterLab; pip's cache
is used as it is. It runs after the strict build, with the browser tests, on the
site they open (the ``built_site`` fixture, tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

import code_downloads

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = "book/setting"
# The appendix, which needs the results files the site offers beside it.
APPENDIX = "book/at_scale"
# What executing a downloaded notebook needs besides the wheel (its own dependencies).
RUNTIME = ["matplotlib", "ipykernel", "nbclient", "nbformat", "myst-nb"]
INSTALL_TIMEOUT = 600
EXECUTE_TIMEOUT = 600

_EXECUTE = """
import sys, nbformat
from nbclient import NotebookClient
import twostep
print("twostep from", twostep.__file__)
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=int(sys.argv[2]), kernel_name="python3",
               resources={"metadata": {"path": sys.argv[3]}}).execute()
errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
          if o.get("output_type") == "error"]
assert not errors, errors
print("executed", sum(c.cell_type == "code" for c in nb.cells), "code cells")
"""


def _run(args, timeout, **kwargs):
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n"
        f"{proc.stderr[-3000:]}")
    return proc.stdout


def test_a_reader_installs_twostep_from_the_site_and_runs_a_chapter(built_site, tmp_path,
                                                                      book_summary):
    code = built_site / code_downloads.CODE_DOWNLOADS
    wheel = code / code_downloads.wheel_name(ROOT)
    pins = code / "requirements.txt"
    notebook = built_site / "_sources" / f"{CHAPTER}.ipynb"
    for path in (wheel, pins, notebook):
        assert path.is_file(), f"the site offers no {path.relative_to(built_site)}"
    # What the reader has: the three downloads, in a folder of their own.
    reader = tmp_path / "reader"
    reader.mkdir()
    for path in (wheel, pins, notebook):
        (reader / path.name).write_bytes(path.read_bytes())

    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "JUPYTER_PATH")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    start = time.perf_counter()
    # The new environment gets no pip of its own (ensurepip takes seconds); this
    # environment's pip installs into it (--python), as the venv's pip would. No
    # bytecode compiling (--no-compile): Python compiles what it imports anyway.
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(reader / ".venv")
    python = reader / ".venv" / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
          "--no-compile", "-c", pins.name, wheel.name, *RUNTIME],
         INSTALL_TIMEOUT, cwd=reader, env=env)
    installed = time.perf_counter() - start
    out = _run([python, "-c", _EXECUTE, notebook.name, str(EXECUTE_TIMEOUT), str(reader)],
               EXECUTE_TIMEOUT + 60, cwd=reader, env=env)
    total = time.perf_counter() - start
    # The appendix reads results files: with the site's copies next to its downloaded
    # notebook (and no checkout anywhere), it runs too.
    appendix = built_site / "_sources" / f"{APPENDIX}.ipynb"
    results = [code / path.name for path in code_downloads.results_files(ROOT)]
    for path in (appendix, *results):
        assert path.is_file(), f"the site offers no {path.relative_to(built_site)}"
        (reader / path.name).write_bytes(path.read_bytes())
    _run([python, "-c", _EXECUTE, appendix.name, str(EXECUTE_TIMEOUT), str(reader)],
         EXECUTE_TIMEOUT + 60, cwd=reader, env=env)
    appendix_s = time.perf_counter() - start - total
    assert f"twostep from {reader / '.venv'}" in out, (
        f"the notebook did not import the installed wheel:\n{out}")
    # The pins were honoured: the versions in the new environment are the site's.
    versions = json.loads(_run([python, "-c", (
        "import json; from importlib.metadata import version as v; "
        f"print(json.dumps({{n: v(n) for n in {['twostep', 'numpy', 'scipy', 'matplotlib']!r}}}))")],
        60, cwd=reader, env=env))
    wanted = code_downloads.pins(ROOT)
    assert all(versions[n] == wanted[n] for n in ("numpy", "scipy", "matplotlib")), versions
    book_summary.append(
        f"reader's install: fresh venv + wheel + runtime in {installed:.0f} s, "
        f"{CHAPTER}.ipynb executed in {total - installed:.0f} s, {APPENDIX}.ipynb with the "
        f"site's results files in {appendix_s:.0f} s")
