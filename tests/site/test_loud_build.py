"""Loud builds: a line a cell writes to stderr fails the strict build.

A stand-in book of one page, built with the book's own ``execute:`` settings (read from
``_config.yml``: ``stderr_output: error``) and its strict flags (``tools/strictbuild.py``):
with a cell that writes one line to stderr the build fails and says so; with the same cell
writing to stdout it passes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import strictbuild

ROOT = Path(__file__).resolve().parents[2]

_PAGE = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A page

```{{code-cell}} ipython3
import sys
print("a line from the cell", file=sys.{stream})
```
"""


def _build(folder: Path, stream: str) -> tuple[int, str]:
    folder.mkdir()
    execute = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))["execute"]
    config = {"title": "Stand-in", "only_build_toc_files": True, "execute": execute}
    (folder / "_config.yml").write_text(yaml.safe_dump(config))
    (folder / "_toc.yml").write_text("format: jb-book\nroot: page\n")
    (folder / "page.md").write_text(_PAGE.format(stream=stream))
    jupyter_book = str(Path(sys.executable).with_name("jupyter-book"))
    proc = subprocess.run([jupyter_book, *strictbuild.BUILD_ARGS[:1], str(folder),
                           *strictbuild.BUILD_ARGS[2:]], capture_output=True, text=True,
                          timeout=600, cwd=folder)
    return proc.returncode, proc.stdout + proc.stderr


def test_the_book_fails_on_stderr():
    execute = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))["execute"]
    assert execute["stderr_output"] in ("error", "severe")


def test_a_line_on_stderr_fails_the_strict_build(tmp_path):
    pytest.importorskip("jupyter_book")
    code, log = _build(tmp_path / "loud", "stderr")
    assert code != 0, log[-3000:]
    assert "stderr was found in the cell outputs" in log, log[-3000:]
    code, log = _build(tmp_path / "quiet", "stdout")
    assert code == 0, log[-3000:]
