"""The set-up cell of the downloadable notebooks (``tools/notebook_setup.py``), without a build:
it is valid Python naming the version, the wheel, the site and the results files; it replaces
an earlier set-up cell instead of adding a second; and run where twostep of that version is
installed (this environment) it installs nothing and fetches what is missing from the folder
``TWOSTEP_WHEEL`` points at. The whole path, from a built site into a fresh environment, is
``tests/site/test_notebook_anywhere.py``."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import notebook_setup
import twostep


def test_the_cell_names_what_it_installs():
    cell = notebook_setup.setup_cell("1.2.3", "twostep-1.2.3-py3-none-any.whl",
                                     ["count.json", "registry.json"], "https://example.org/book/")
    ast.parse(cell["source"])
    assert 'TWOSTEP = "1.2.3"' in cell["source"]
    assert 'or "https://example.org/book"' in cell["source"]
    assert "['count.json', 'registry.json']" in cell["source"]
    assert cell["metadata"]["tags"] == [notebook_setup.TAG]


def test_the_cell_replaces_an_earlier_one():
    old = notebook_setup.setup_cell("0.0.1", "w.whl", [])
    new = notebook_setup.setup_cell("0.0.2", "w.whl", [])
    page = {"cells": [{"cell_type": "code", "metadata": {}, "source": "import twostep"}]}
    once = notebook_setup.with_setup_cell(page, old)
    twice = notebook_setup.with_setup_cell(once, new)
    assert [c["source"] for c in twice["cells"]] == [new["source"], "import twostep"]


def test_where_twostep_is_installed_it_only_fetches_the_results(tmp_path):
    offered = tmp_path / "site"
    offered.mkdir()
    (offered / "spike.json").write_text("{}")
    here = tmp_path / "reader"
    here.mkdir()
    cell = notebook_setup.setup_cell(twostep.__version__, "twostep.whl", ["spike.json"])
    env = {k: v for k, v in os.environ.items() if k != "TWOSTEP_SITE"}
    env["TWOSTEP_WHEEL"] = str(offered / "twostep.whl")       # never installed: same version
    # Outside a checkout the pages read the folder they run in; here the package is the
    # checkout's, so the cell is run with the check of a checkout made to fail.
    source = cell["source"].replace('.parents[1] / "results"', '.parents[1] / "no-such-folder"')
    proc = subprocess.run([sys.executable, "-c", source], cwd=here, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"twostep {twostep.__version__} from" in proc.stdout
    assert json.loads((here / "spike.json").read_text()) == {}
