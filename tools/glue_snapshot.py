#!/usr/bin/env python3
"""Record or compare every glued value of the executed chapters.

    python3 tools/glue_snapshot.py record [OUT.json]   snapshot of _build/jupyter_execute
    python3 tools/glue_snapshot.py compare [SNAP.json] every value in SNAP that the current
                                                       build still glues must reproduce
    python3 tools/glue_snapshot.py compare SNAP.json book/one_step.ipynb ...
                                                       the same, for executed notebooks only
                                                       (e.g. from jupytext --execute)

myst-nb writes each executed chapter's glued outputs to
``_build/jupyter_execute/book/<chapter>.glue.json``; this reads those files (run it after
``python3 tools/dev.py book`` or ``test``). A value is its ``text/plain`` form; a figure is
recorded as ``<figure>``. Two values agree when they are equal as text, or when they hold
the same words and every number in one is within a relative ``1e-4`` (absolute ``1e-9``)
of the matching number in the other: the same draws through reorganised code differ only
by floating-point rounding (BLAS order, float32 norms), far below the 2-3 digits a chapter
prints. Every table a chapter shows (a ``{table}`` directive in a cell's Markdown output) is
recorded too, as ``table:<its label>``, caption and cells: a refactor that moves a caption
from a page module into the page must leave the table as it was. ``compare`` exits 1 if any
kept value disagrees and lists the names of values that are in the snapshot but no longer
glued (dropped on purpose, or renamed).
Stdlib only.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXECUTED = ROOT / "_build" / "jupyter_execute" / "book"
# Made by `record` before a refactor, read by `compare` after it; never committed.
DEFAULT = ROOT / "_build" / "glue_snapshot.json"
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
RTOL, ATOL = 1e-4, 1e-9


def _text(output: dict) -> str:
    # In a notebook glue's MIME types carry scrapbook's prefix; myst-nb's .glue.json strips it.
    prefix = output.get("metadata", {}).get("scrapbook", {}).get("mime_prefix", "")
    data = {k[len(prefix):] if prefix and k.startswith(prefix) else k: v
            for k, v in output.get("data", {}).items()}
    if any(k.startswith("image/") for k in data):
        return "<figure>"
    text = data.get("text/markdown", data.get("text/plain", ""))
    # nbformat stores a multi-line output as a list of lines (jupytext writes it so).
    return "".join(text) if isinstance(text, list) else text


TABLE_LABEL = re.compile(r"^:name:\s*(\S+)", re.MULTILINE)


def notebook_tables(path: Path) -> dict:
    """The tables one executed notebook shows, as ``table:<label>``: their Markdown text."""
    tables = {}
    for cell in json.loads(path.read_text()).get("cells", []):
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/markdown", "")
            if isinstance(text, list):
                text = "".join(text)
            if "{table}" in text and not output.get("metadata", {}).get("scrapbook"):
                for label in TABLE_LABEL.findall(text):
                    tables["table:" + label] = text
    return tables


def notebook_glue(path: Path) -> dict:
    """The glued values and the tables of one executed notebook, by name."""
    values = {}
    for cell in json.loads(path.read_text()).get("cells", []):
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                values[name] = _text(output)
    return {**values, **notebook_tables(path)}


def snapshot(folder: Path = EXECUTED) -> dict:
    out = {}
    for path in sorted(folder.glob("*.glue.json")):
        chapter = path.name[: -len(".glue.json")]
        out[chapter] = {name: _text(o) for name, o in json.loads(path.read_text()).items()}
        executed = folder / f"{chapter}.ipynb"
        if executed.is_file():
            out[chapter].update(notebook_tables(executed))
    if not out:
        sys.exit(f"no *.glue.json in {folder}: build the book first (python3 tools/dev.py book)")
    return out


def agree(old: str, new: str) -> tuple[bool, float]:
    """Whether two glued texts agree, and the largest relative difference of their numbers."""
    if old == new:
        return True, 0.0
    if NUMBER.sub("#", old) != NUMBER.sub("#", new):
        return False, math.inf
    worst = 0.0
    for a, b in zip(NUMBER.findall(old), NUMBER.findall(new)):
        x, y = float(a), float(b)
        diff = abs(x - y)
        rel = diff / max(abs(x), abs(y)) if diff else 0.0
        worst = max(worst, rel)
        if diff > ATOL + RTOL * max(abs(x), abs(y)):
            return False, worst
    return True, worst


def compare(reference: dict, current: dict) -> int:
    kept = dropped = 0
    worst = 0.0
    bad = []
    for chapter, values in reference.items():
        now = current.get(chapter, {})
        for name, old in values.items():
            if name not in now:
                dropped += 1
                continue
            kept += 1
            ok, rel = agree(old, now[name])
            if not ok:
                bad.append(f"  {chapter}:{name}: {old[:80]!r} -> {now[name][:80]!r}")
            elif rel != math.inf:
                worst = max(worst, rel)
    total = sum(len(v) for v in reference.values())
    new = sum(len(set(v) - set(reference.get(c, {}))) for c, v in current.items())
    print(f"snapshot: {total} values; kept {kept}, of which {kept - len(bad)} reproduce "
          f"(largest relative difference {worst:.1e}); {len(bad)} differ; {dropped} no longer "
          f"glued; {new} new")
    for line in bad:
        print(line)
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("record", "compare"):
        print(__doc__)
        return 2
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT
    if argv[0] == "record":
        path.write_text(json.dumps(snapshot(), indent=1, ensure_ascii=False, sort_keys=True) + "\n")
        print(f"wrote {path}")
        return 0
    reference = json.loads(path.read_text())
    if len(argv) > 2:
        current = {Path(nb).name.split(".")[0]: notebook_glue(Path(nb)) for nb in argv[2:]}
        reference = {c: v for c, v in reference.items() if c in current}
        return compare(reference, current)
    return compare(reference, snapshot())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
