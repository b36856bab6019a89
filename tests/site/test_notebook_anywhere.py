"""A downloaded page runs anywhere: its first cell installs what it needs.

The way a Colab or Binder user meets a page: a fresh virtual environment with a Jupyter
kernel and nothing else (no twostep, no numpy), a fresh empty folder, and the page's executed
notebook downloaded from the site (``_sources/book/setting.ipynb``, the fastest page) over
HTTP, from the built site served on loopback. Its set-up cell (``tools/notebook_setup.py``)
installs the wheel of the book's version from the site, with the site's pins, and fetches the
results files into the folder; then the page runs to the end. Nothing else is copied: the
site's address is all the notebook is told (``TWOSTEP_SITE``, as the published site's address
is baked in through ``html_baseurl``). pip's cache is used as it is.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
import venv
from pathlib import Path

import pytest

import notebook_setup

pytestmark = pytest.mark.book

PAGE = "book/setting"
# A Jupyter kernel and what runs a notebook, as Colab and Binder have them.
JUPYTER = ["ipykernel", "nbclient", "nbformat"]
TIMEOUT = 900

_EXECUTE = """
import json, sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=int(sys.argv[2]), kernel_name="python3",
               resources={"metadata": {"path": "."}}).execute()
first = "".join(o.get("text", "") for o in nb.cells[0].get("outputs", []))
print(json.dumps({"first": first, "cells": sum(c.cell_type == "code" for c in nb.cells)}))
"""


@pytest.fixture
def served_site(built_site):
    """The built site on a loopback HTTP server: its address."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


def _run(args, timeout, **kwargs):
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, **kwargs)
    assert proc.returncode == 0, (f"{' '.join(map(str, args))} failed ({proc.returncode}):\n"
                                  f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc.stdout


def test_every_downloadable_notebook_starts_with_the_setup_cell(built_site):
    notebooks = sorted((built_site / "_sources").rglob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        cells = json.loads(path.read_text(encoding="utf8"))["cells"]
        assert notebook_setup.TAG in cells[0]["metadata"]["tags"], path
        assert sum(notebook_setup.TAG in c.get("metadata", {}).get("tags", [])
                   for c in cells) == 1, path


def test_a_downloaded_page_runs_in_a_fresh_environment(served_site, tmp_path, book_summary):
    reader = tmp_path / "reader"
    reader.mkdir()
    with urllib.request.urlopen(f"{served_site}/_sources/{PAGE}.ipynb", timeout=60) as response:
        (reader / "setting.ipynb").write_bytes(response.read())
    assert [p.name for p in reader.iterdir()] == ["setting.ipynb"]
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "JUPYTER_PATH")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", TWOSTEP_SITE=served_site)
    start = time.perf_counter()
    # A kernel's environment has pip, as Colab's and Binder's do.
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(tmp_path / "venv")
    python = tmp_path / "venv" / "bin" / "python"
    _run([python, "-m", "pip", "install", "--quiet", "--no-compile", *JUPYTER], 600, env=env)
    probe = subprocess.run([python, "-c", "import twostep"], capture_output=True)
    assert probe.returncode != 0, "the fresh environment already has twostep"
    ready = time.perf_counter()
    out = _run([python, "-c", _EXECUTE, "setting.ipynb", TIMEOUT], TIMEOUT + 300,
               cwd=reader, env=env)
    result = json.loads(out.strip().splitlines()[-1])
    assert f"from {tmp_path / 'venv'}" in result["first"], result["first"]
    # The results files are in the folder the pages read them from (the notebook's).
    wanted = [p.name for p in notebook_setup.results_files(Path(__file__).resolve().parents[2])]
    assert wanted and all((reader / name).is_file() for name in wanted), sorted(
        p.name for p in reader.iterdir())
    book_summary.append(f"downloaded {PAGE}.ipynb in a fresh environment: kernel installed in "
                        f"{ready - start:.0f} s, set-up cell and page in "
                        f"{time.perf_counter() - ready:.0f} s")
