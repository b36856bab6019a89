"""The strict HTML build: ``jupyter-book build . -n -W --keep-going``, its log and its reports.

Used by ``tools/dev.py book`` and by the build test (``tests/conftest.py``, after nbmake has
executed the chapters into the cache). Stdlib only: ``tools/dev.py`` imports it before the
virtual environment exists.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

# -n: unresolved references are warnings; -W: warnings fail the build;
# --keep-going: report every warning, not only the first.
BUILD_ARGS = ["build", ".", "-n", "-W", "--keep-going"]
BUILD_LOG = Path("_build") / "build.log"
FAILED_MARKER = Path("_build") / ".last-build-failed"
# Where myst-nb writes the traceback of a chapter that failed to execute (<docname>.err.log).
REPORTS = Path("_build") / "html" / "reports"
# jupyter-book colours its output even when it goes to a pipe.
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strict_build(root: Path, jupyter_book: str, *, force_all=False, echo=False):
    """Run the strict HTML build; return (exit code, full log text).

    Sphinx re-emits a page's warnings only when it re-reads that page, so after
    a failed build the next one re-reads everything (``--all``); otherwise a
    second run over an unchanged, broken page would pass.
    """
    root = Path(root)
    # myst-nb writes a report per failing chapter but never removes old ones.
    shutil.rmtree(root / REPORTS, ignore_errors=True)
    marker = root / FAILED_MARKER
    args = [jupyter_book, *BUILD_ARGS]
    if force_all or marker.exists():
        args.append("--all")
    proc = subprocess.Popen(
        args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if echo:
            print(line, end="", flush=True)
    code = proc.wait()
    log = ANSI.sub("", "".join(lines))
    (root / BUILD_LOG).parent.mkdir(parents=True, exist_ok=True)
    (root / BUILD_LOG).write_text(" ".join(args) + "\n" + log)
    if code:
        marker.touch()
    else:
        marker.unlink(missing_ok=True)
    return code, log
