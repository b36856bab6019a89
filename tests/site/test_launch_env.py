"""The launch buttons' environment (``binder/``): the runtime only, and a chapter runs in it.

``binder/requirements.txt`` is what Binder (repo2docker) installs before ``binder/postBuild``.
The unit tests check its pins against ``requirements.txt`` and that it names no test or build
package; the slow test builds the environment as Binder would, in a fresh virtual environment
(no system site-packages, a copy of the repository's files it needs), runs ``postBuild`` there,
and executes the setting chapter (``book/setting.md``, converted with the environment's own
jupytext) with nbclient, as JupyterLab would run it, from ``book/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import tomllib
import venv
from pathlib import Path

import pytest

import code_downloads

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder" / "requirements.txt"
CHAPTER = "book/setting.md"
#: What a reader needs to run a chapter (the issue's list; twostep's own dependencies among them).
RUNTIME = {"numpy", "scipy", "matplotlib", "joblib", "tqdm", "array-api-compat", "ipykernel",
           "jupytext", "jupyterlab", "myst-nb"}
#: Test and build packages of requirements.txt, none of which a reader needs.
NOT_RUNTIME = {"pytest", "pytest-xdist", "playwright", "nbmake", "array-api-strict", "jupyter-book",
               "sphinx", "sphinx-book-theme", "sphinx-external-toc", "sphinx-proof",
               "sphinxcontrib-bibtex", "sphinx-mathjax-offline", "myst-parser", "jupyter-cache",
               "dask", "distributed"}
INSTALL_TIMEOUT = 900
EXECUTE_TIMEOUT = 600


def _binder_lines() -> list[str]:
    return [ln.split("#")[0].strip() for ln in BINDER.read_text().splitlines()
            if ln.split("#")[0].strip()]


def test_binder_pins_the_runtime_as_requirements_does():
    lines = _binder_lines()
    pinned = dict(ln.split("==") for ln in lines if "==" in ln)
    pinned = {name.strip().lower(): pin.strip() for name, pin in pinned.items()}
    wanted = code_downloads.pins(ROOT)
    assert RUNTIME <= set(pinned), f"binder/requirements.txt lacks {sorted(RUNTIME - set(pinned))}"
    differ = {n: (p, wanted.get(n)) for n, p in pinned.items() if wanted.get(n) != p}
    assert not differ, f"pins that differ from requirements.txt (binder, root): {differ}"
    named = set(pinned) & NOT_RUNTIME
    assert not named, f"binder/requirements.txt names test or build packages: {sorted(named)}"
    # No other file is pulled in whole; the constraints line only pins what is pulled in.
    others = [ln for ln in lines if "==" not in ln]
    assert others == ["-c ../requirements.txt"], others
    # postBuild installs twostep with --no-deps: its own dependencies must be here.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed = {d.split(">")[0].split("=")[0].split("<")[0].strip().lower()
              for d in project["dependencies"]}
    assert needed <= set(pinned), f"twostep needs {sorted(needed - set(pinned))}, not in binder/"
    assert "--no-deps -e ." in (ROOT / "binder" / "postBuild").read_text()


_EXECUTE = """
import sys, nbformat
from importlib.metadata import PackageNotFoundError, version
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
nb.cells.insert(0, nbformat.v4.new_code_cell("import twostep; print('twostep from', twostep.__file__)"))
NotebookClient(nb, timeout=int(sys.argv[2]), kernel_name="python3").execute()
errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
          if o.get("output_type") == "error"]
assert not errors, errors
print(nb.cells[0].outputs[0]["text"].strip())
absent = []
for name in sys.argv[3].split(","):
    try:
        version(name)
    except PackageNotFoundError:
        absent.append(name)
print("absent:", ",".join(absent))
print("executed", sum(c.cell_type == "code" for c in nb.cells), "code cells")
"""


def _run(args, timeout, **kwargs):
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, **kwargs)
    assert proc.returncode == 0, (f"{' '.join(map(str, args))} failed ({proc.returncode}):\n"
                                  f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


@pytest.mark.book
def test_a_chapter_runs_in_the_launch_environment(tmp_path, book_summary):
    # What Binder has: the repository (the files postBuild and the chapter need).
    repo = tmp_path / "repo"
    for rel in ("binder", "twostep", "book", "tools/jupyterlab-overrides.json", "requirements.txt",
                "pyproject.toml", "README.md", "CITATION.cff"):
        src, dst = ROOT / rel, repo / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.ipynb"))
        else:
            shutil.copy2(src, dst)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "JUPYTER_PATH")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    start = time.perf_counter()
    prefix = tmp_path / "env"
    # With pip of its own: postBuild runs `pip`, which must install into this environment.
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(prefix)
    env["PATH"] = f"{prefix / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    _run([prefix / "bin" / "pip", "install", "--quiet", "--no-compile", "-r",
          "binder/requirements.txt"], INSTALL_TIMEOUT, cwd=repo, env=env)
    _run(["bash", "binder/postBuild"], 300, cwd=repo, env=env)
    installed = time.perf_counter() - start
    python = prefix / "bin" / "python"
    _run([python, "-m", "jupytext", "--to", "ipynb", CHAPTER], 120, cwd=repo, env=env)
    notebook = (repo / CHAPTER).with_suffix(".ipynb")
    out = _run([python, "-c", _EXECUTE, notebook.name, EXECUTE_TIMEOUT,
                "pytest,playwright,nbmake,jupyter-book,sphinx-book-theme"],
               EXECUTE_TIMEOUT + 60, cwd=notebook.parent, env=env)
    executed = time.perf_counter() - start - installed
    assert f"twostep from {repo / 'twostep' / '__init__.py'}" in out, out
    assert "absent: pytest,playwright,nbmake,jupyter-book,sphinx-book-theme" in out, out
    settings = prefix / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert settings.read_text() == (ROOT / "tools" / "jupyterlab-overrides.json").read_text()
    book_summary.append(f"launch environment (binder/): fresh venv + install + postBuild in "
                        f"{installed:.0f} s, {CHAPTER} executed in {executed:.0f} s")
