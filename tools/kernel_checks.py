"""The build's kernels check every figure they draw; a reader's kernel does not.

IPython runs every file in ``<IPYTHONDIR>/profile_default/startup/`` when a kernel starts
(IPython's documented startup files; ipykernel honours ``IPYTHONDIR``). :func:`prepare`
writes one there, under ``_build/ipython``, that loads ``tools/figure_checks.py`` by its
path and registers its figure checks (``figure_checks.register``), leaving no name in the
notebook's namespace and nothing on ``sys.path``; :func:`use` points ``IPYTHONDIR`` at that
folder for the kernels this process starts. So the chapters and the package carry no
checks: a reader who runs a notebook gets none, and the book's kernels get them all.

Who calls :func:`use`: ``tools/dev.py`` (every command), ``tests/conftest.py`` (nbmake items
run by pytest directly) and, as a Sphinx extension (:func:`setup`, set up by
``figure_downloads``), the build itself, whoever starts it. What the kernels run is part of
every chapter's fingerprint (``bookcache.KERNEL_TOOLS``): editing a check re-executes them.

Stdlib only: tools/dev.py imports it before the environment exists.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The checks the startup file loads (beside this module).
CHECKS = Path(__file__).resolve().with_name("figure_checks.py")
#: The IPython folder of the build's kernels, relative to the book's root.
IPYTHON_DIR = Path("_build") / "ipython"
STARTUP_FILE = "50-twostep-figure-checks.py"

_SCRIPT = '''\
# Written by tools/kernel_checks.py: the book's kernels check every figure they draw
# (tools/figure_checks.py). Loaded by path, so neither sys.path nor the notebook's
# namespace keeps a trace of it.
def _twostep_figure_checks(path={path!r}):
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("twostep_figure_checks", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.register(get_ipython())


try:
    _twostep_figure_checks()
finally:
    del _twostep_figure_checks
'''


def startup_script() -> str:
    """The text of the startup file."""
    return _SCRIPT.format(path=str(CHECKS))


def prepare(root: Path) -> Path:
    """Write the startup file (when its text changed) and return the IPython folder."""
    folder = (Path(root) / IPYTHON_DIR).resolve()
    startup = folder / "profile_default" / "startup" / STARTUP_FILE
    text = startup_script()
    if not startup.is_file() or startup.read_text(encoding="utf8") != text:
        startup.parent.mkdir(parents=True, exist_ok=True)
        startup.write_text(text, encoding="utf8")
    return folder


def use(root: Path, environ=None) -> Path:
    """Point ``IPYTHONDIR`` of ``environ`` (default ``os.environ``, inherited by every kernel
    started from this process) at :func:`prepare`'s folder; return it."""
    folder = prepare(root)
    (os.environ if environ is None else environ)["IPYTHONDIR"] = str(folder)
    return folder


def setup(app):
    # Before any page is read: myst-nb executes pages while reading them.
    use(Path(app.srcdir))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
