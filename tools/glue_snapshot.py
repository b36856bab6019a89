#!/usr/bin/env python3
"""Record, compare and tell the changes of every glued value of the executed pages.

    python3 tools/glue_snapshot.py record [OUT.json] [--from FOLDER] [--version X.Y.Z]
        the snapshot of the executed pages (default: _build/jupyter_execute/book, written to
        tests/data/glue_snapshot.json); a release's is releases/X.Y.Z.json
    python3 tools/glue_snapshot.py compare [SNAP.json] [book/one_step.ipynb ...]
        every value in SNAP that the current build (or the executed notebooks given, e.g. from
        jupytext --execute) still glues must reproduce: the refactor guard
    python3 tools/glue_snapshot.py changelog OLD.json NEW.json
        the numerical block of CHANGELOG.md between two releases' snapshots (Markdown)

Run it with the project's environment (``.venv/bin/python``): it reads texts with the
package's own parser (:mod:`twostep.scale.verify`, which ``python -m twostep verify`` uses on
a reader's rerun).

A snapshot (:func:`twostep.scale.verify.snapshot_document`) holds, for each page, every glued
value's text, the numbers in it and its kind: *seed-dependent* when the page also glues
``<name>_sem`` (its standard error over seeds) or its text carries one (``"0.246 ± 0.012"``),
*deterministic* otherwise, or a figure; and every table a page shows (a ``{table}`` in a cell's
Markdown output), by its label. myst-nb writes each executed page's glued outputs to
``<page>.glue.json`` beside its executed notebook; the tables are read from the notebook.

``compare`` is strict: two texts agree when they are equal, or hold the same words and every
number within a relative ``1e-4`` (absolute ``1e-9``) of the other (the same draws through
reorganised code differ only by floating-point rounding: BLAS order, float32 norms). It exits
1 if any kept value disagrees and lists the values no longer glued. ``changelog`` tells a
reader what moved between two versions: seed-dependent values that moved beyond their
combined standard error, deterministic values that changed beyond their printed precision,
verdict labels that flipped, tables that changed, values added and dropped.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from twostep.scale import verify  # noqa: E402  (the package's parser; needs the path above)

EXECUTED = ROOT / "_build" / "jupyter_execute" / "book"
DEFAULT = ROOT / "tests" / "data" / "glue_snapshot.json"
RTOL, ATOL = 1e-4, 1e-9


def page_of(folder: Path, page: str) -> dict:
    """One executed page's snapshot (:func:`twostep.scale.verify.page_snapshot`) from its
    ``<page>.glue.json`` and, for its tables, its ``<page>.ipynb``."""
    values = verify.glue_file_values(json.loads((folder / f"{page}.glue.json").read_text()))
    notebook = folder / f"{page}.ipynb"
    tables = (verify.notebook_values(json.loads(notebook.read_text()))[1]
              if notebook.is_file() else {})
    return verify.page_snapshot(values, tables)


def snapshot(folder: Path = EXECUTED, version: str | None = None, commit: str = "") -> dict:
    """The snapshot of every executed page in ``folder`` (a ``jupyter_execute/book``)."""
    folder = Path(folder)
    pages = {path.name[: -len(".glue.json")]: page_of(folder, path.name[: -len(".glue.json")])
             for path in sorted(folder.glob("*.glue.json"))}
    if not pages:
        sys.exit(f"no *.glue.json in {folder}: build the book first (python3 tools/dev.py book)")
    if version is None:
        import tomllib
        version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return verify.snapshot_document(pages, version, commit)


def flat(doc: dict) -> dict:
    """``{page: {name: text, "table:<label>": text}}`` of a snapshot, or of the older
    tests/data/glue_snapshot.json, which is already that."""
    if doc.get("format") != verify.FORMAT:
        return doc
    return {page: {**{n: e["text"] for n, e in p["values"].items()},
                   **{f"table:{label}": t for label, t in p.get("tables", {}).items()}}
            for page, p in doc["pages"].items()}


def notebook_glue(path: Path) -> dict:
    """The glued values and the tables (``table:<label>``) of one executed notebook."""
    values, tables = verify.notebook_values(json.loads(Path(path).read_text()))
    return {**values, **{f"table:{label}": text for label, text in tables.items()}}


def agree(old: str, new: str) -> tuple[bool, float]:
    """Whether two glued texts agree, and the largest relative difference of their numbers."""
    old, new = verify.unquote(old), verify.unquote(new)
    if old == new:
        return True, 0.0
    if verify.words(old) != verify.words(new):
        return False, math.inf
    worst = 0.0
    for a, b in zip(verify.parse_numbers(old), verify.parse_numbers(new)):
        x, y = a["value"], b["value"]
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


# --- the changelog's numerical block ------------------------------------------------------


def verdict_labels() -> set[str]:
    """The verdict labels and their table symbols (twostep.analysis.verdicts)."""
    from twostep.analysis.verdicts import LABELS, SYMBOLS
    return set(LABELS) | {s for s in SYMBOLS.values() if s not in ("~",)}


def _cell(text: str) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= 40 else text[:39] + "…"


def changelog(old: dict, new: dict) -> str:
    """The Markdown block of CHANGELOG.md for ``new`` against ``old`` (two snapshots)."""
    labels = verdict_labels()
    moved, changed, flipped, tables = [], [], [], []
    dropped = added = same = 0
    for page in sorted(set(old["pages"]) | set(new["pages"])):
        a = old["pages"].get(page, {"values": {}, "tables": {}})
        b = new["pages"].get(page, {"values": {}, "tables": {}})
        va, vb = a["values"], b["values"]
        dropped += len(set(va) - set(vb))
        added += len(set(vb) - set(va))
        for name in sorted(set(va) & set(vb)):
            x, y = va[name], vb[name]
            if x["kind"] == "figure" or x["text"] == y["text"]:
                same += 1
                continue
            # A verdict: a label or its table symbol, today's vocabulary or an older one (a
            # value without a number on either side).
            if (x["text"].strip() in labels or y["text"].strip() in labels
                    or not (verify.parse_numbers(x["text"]) or verify.parse_numbers(y["text"]))):
                flipped.append(f"| {page} | `{name}` | {_cell(x['text'])} | {_cell(y['text'])} |")
                continue
            row = verify.compare_value(name, x, va, y["text"])
            if row["status"] == "match":
                same += 1
                continue
            sem_old = verify.sem_of(x, va) if x["kind"] == "seed" else None
            sem_new = verify.sem_of(y, vb) if y["kind"] == "seed" else None
            nums = list(zip(verify.parse_numbers(x["text"]), verify.parse_numbers(y["text"])))
            if sem_old and sem_new and nums and row.get("why") is None:
                se = math.hypot(sem_old[0], sem_new[0])
                z = abs(nums[0][1]["value"] - nums[0][0]["value"]) / se if se else math.inf
                if z > 1:
                    moved.append((z, f"| {page} | `{name}` | {_cell(x['text'])} | "
                                     f"{_cell(y['text'])} | {z:.1f} |"))
                else:
                    same += 1
            else:
                changed.append(f"| {page} | `{name}` | {_cell(x['text'])} | {_cell(y['text'])} |")
        for label in sorted(set(a.get("tables", {})) & set(b.get("tables", {}))):
            ok, _ = agree(a["tables"][label], b["tables"][label])
            if not ok:
                tables.append(f"{page}: `{label}`")
    lines = [f"Numbers against {old['version']} (`releases/{old['version']}.json` and "
             f"`releases/{new['version']}.json`, made by `tools/glue_snapshot.py changelog`): "
             f"{same} values unchanged, {len(moved)} moved beyond their standard error, "
             f"{len(changed)} deterministic values changed, {len(flipped)} verdict labels "
             f"flipped, {len(tables)} tables changed; {added} values new, {dropped} no longer "
             "glued.", ""]
    if moved:
        lines += ["Seed-dependent values that moved beyond their combined standard error:", "",
                  f"| page | value | {old['version']} | {new['version']} | moved (SE) |",
                  "|---|---|---|---|---|", *[r for _, r in sorted(moved, reverse=True)], ""]
    if changed:
        lines += ["Deterministic values that changed beyond their printed precision:", "",
                  f"| page | value | {old['version']} | {new['version']} |", "|---|---|---|---|",
                  *changed, ""]
    if flipped:
        lines += ["Verdict labels that flipped:", "",
                  f"| page | value | {old['version']} | {new['version']} |", "|---|---|---|---|",
                  *flipped, ""]
    if tables:
        lines += ["Tables that changed: " + ", ".join(tables) + ".", ""]
    return "\n".join(lines).rstrip() + "\n"


def _option(argv: list[str], name: str) -> str | None:
    if name in argv:
        i = argv.index(name)
        value = argv[i + 1]
        del argv[i:i + 2]
        return value
    return None


def main(argv: list[str]) -> int:
    argv = list(argv)
    if not argv or argv[0] not in ("record", "compare", "changelog"):
        print(__doc__)
        return 2
    if argv[0] == "record":
        folder = Path(_option(argv, "--from") or EXECUTED)
        version = _option(argv, "--version")
        commit = _option(argv, "--commit") or ""
        path = Path(argv[1]) if len(argv) > 1 else DEFAULT
        doc = snapshot(folder, version, commit)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {path}: {sum(len(p['values']) for p in doc['pages'].values())} values, "
              f"{sum(len(p['tables']) for p in doc['pages'].values())} tables, "
              f"{len(doc['pages'])} pages")
        return 0
    if argv[0] == "changelog":
        if len(argv) != 3:
            print(__doc__)
            return 2
        old, new = (json.loads(Path(p).read_text()) for p in argv[1:])
        print(changelog(old, new), end="")
        return 0
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT
    reference = flat(json.loads(path.read_text()))
    if len(argv) > 2:
        current = {Path(nb).name.split(".")[0]: notebook_glue(Path(nb)) for nb in argv[2:]}
        reference = {c: v for c, v in reference.items() if c in current}
        return compare(reference, current)
    return compare(reference, flat(snapshot()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
