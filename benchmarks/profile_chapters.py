"""Profile: where each chapter's execution time goes, cell by cell, at the chapter's own sizes.

Each chapter (``book/<name>.md``) is read with jupytext and executed as the build executes
it (a fresh kernel, nbclient, ``record_timing``), and the wall time of every code cell is
taken from the kernel's own timestamps (``shell.execute_reply`` minus
``iopub.execute_input``). A chapter's cells are its experiment calls (one compute call per
figure), so the table names what to make faster. It prints, per chapter, the total, the
kernel's start-up, and the ``--top`` slowest cells with their first line of code:

    one_step      116.2 s   (kernel start 1.9 s)
        48.1 s   41%  cell 12  residual = ch.residual_data(WIDTHS, SEEDS, rng)
        ...

Run:  .venv/bin/python benchmarks/profile_chapters.py [one_step two_steps ...] [--top 3]
      [--json profile.json]   (all chapters of _toc.yml when none is named; minutes on two
      cores). The numbers change with the machine's load: run it on an idle machine, and
      compare a change against a profile taken on the same machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import bookcache  # noqa: E402


def _seconds(cell) -> float | None:
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return None
    parse = lambda t: datetime.fromisoformat(t.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def _first_line(source: str) -> str:
    lines = [l.strip() for l in source.splitlines()
             if l.strip() and not l.lstrip().startswith(("#", "%"))]
    return (lines[0] if lines else "(empty)")[:90]


def profile(docname: str) -> dict:
    """Execute one chapter; return its total, kernel start-up and per-cell seconds."""
    import jupytext
    from nbclient import NotebookClient

    source = bookcache.source_of(ROOT, docname)
    notebook = jupytext.read(source)
    client = NotebookClient(notebook, timeout=3600, kernel_name="python3",
                            record_timing=True, resources={"metadata": {"path": str(source.parent)}})
    start = time.perf_counter()
    client.execute()
    total = time.perf_counter() - start
    cells = []
    for index, cell in enumerate(c for c in notebook.cells if c.cell_type == "code"):
        seconds = _seconds(cell)
        if seconds is not None:
            cells.append({"cell": index, "seconds": seconds, "code": _first_line(cell.source)})
    return {"chapter": docname, "total_s": total,
            "kernel_start_s": total - sum(c["seconds"] for c in cells), "cells": cells}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter names (default: every chapter)")
    parser.add_argument("--top", type=int, default=3, help="slowest cells shown per chapter")
    parser.add_argument("--json", type=Path, help="also write the full profile here")
    args = parser.parse_args(argv)
    if args.top < 1:
        parser.error(f"--top must be at least 1, got {args.top}")
    known = bookcache.chapters(ROOT)
    wanted = [d for d in known if not args.chapters or Path(d).name in args.chapters]
    unknown = set(args.chapters) - {Path(d).name for d in known}
    if unknown:
        parser.error(f"no such chapter: {', '.join(sorted(unknown))} "
                     f"(chapters: {', '.join(Path(d).name for d in known)})")
    results = []
    for docname in wanted:
        result = profile(docname)
        results.append(result)
        print(f"{Path(docname).name:<12} {result['total_s']:7.1f} s   "
              f"(kernel start and glue outside cells {result['kernel_start_s']:.1f} s)")
        for c in sorted(result["cells"], key=lambda c: -c["seconds"])[:args.top]:
            share = c["seconds"] / result["total_s"]
            print(f"    {c['seconds']:7.1f} s  {share:4.0%}  cell {c['cell']:<3d} {c['code']}")
        sys.stdout.flush()
    print(f"{'all':<12} {sum(r['total_s'] for r in results):7.1f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
