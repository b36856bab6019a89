"""``tools/glue_snapshot.py``: the snapshot of a version and the changelog's numerical block.

Two made-up versions of a page: a seed-dependent value that moved by five combined standard
errors and one that moved by less than one, a deterministic value that changed and one that
only differs below its printed precision, a verdict that flipped, a table that changed; the
block lists exactly the ones that moved. The refactor guard (``compare``) reads the snapshot
of 0.1.0 and the older flat format alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import glue_snapshot
from twostep.scale import verify

ROOT = Path(__file__).resolve().parents[2]
TABLE = "```{table} T.\n:name: tab-x\n\n| a | b |\n|---|---|\n| 1 | %s |\n```"


def _version(version: str, values: dict, table: str) -> dict:
    page = verify.page_snapshot(values, {"tab-x": TABLE % table})
    return verify.snapshot_document({"pg": page}, version)


def test_the_changelog_lists_what_moved():
    old = _version("1.0.0", {"gap": "0.500", "gap_sem": "0.010", "still": "0.30 ± 0.05",
                             "edge": "2.000", "exact": "0.12345", "verdict": "confirmed",
                             "gone": "1"}, "0.25")
    new = _version("1.1.0", {"gap": "0.570", "gap_sem": "0.010", "still": "0.32 ± 0.05",
                             "edge": "2.100", "exact": "0.12346", "verdict": "contradicted",
                             "added": "2"}, "0.35")
    block = glue_snapshot.changelog(old, new)
    rows = [line for line in block.splitlines() if line.startswith("| page |") is False
            and line.startswith("| ")]
    assert any("`gap`" in r and "| 4.9 |" in r for r in rows), block     # 0.07 / (0.01·√2)
    assert any("`edge`" in r for r in rows) and any("`verdict`" in r for r in rows), block
    assert not any("`still`" in r or "`exact`" in r or "`gap_sem`" in r for r in rows), block
    assert "Tables that changed: pg: `tab-x`." in block
    assert "1 values new, 1 no longer glued" in block
    assert block.startswith("Numbers against 1.0.0")


def test_the_refactor_guard_reads_both_formats():
    doc = json.loads((ROOT / "releases" / "0.1.0.json").read_text())
    flat = glue_snapshot.flat(doc)
    assert set(flat) == set(doc["pages"]) and "table:tab-gradient-check" in flat["setting"]
    assert glue_snapshot.flat({"setting": {"x": "1"}}) == {"setting": {"x": "1"}}
    assert glue_snapshot.agree("'0.246'", "0.246") == (True, 0.0)
    assert not glue_snapshot.agree("0.246", "0.247")[0]       # strict: a refactor changes nothing
    assert glue_snapshot.compare(flat, flat) == 0
