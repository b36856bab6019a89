"""The chapters' prose, read from their sources (no build needed).

* Numbers belong in tables: no paragraph of a chapter holds more than
  ``MAX_GLUED`` glued numbers (``{glue:text}`` or ``{glue}`` references). A
  paragraph is a block of lines between blank lines outside code cells and
  other fenced blocks, so a list written on consecutive lines counts as one;
  what would be a longer run of numbers goes in a table the paragraph points to.
* Numbers are written as a paper writes them: no glued number is formatted
  with Python's exponent notation (``:.1e`` prints ``4.2e+09``; ``report.sci``
  writes ``4.2 × 10⁹``), and no table or caption spells out "Lambda".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("*.md"))
MAX_GLUED = 6

_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.S | re.M)
_CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}.*?^\1\s*$", re.S | re.M)
_GLUE = re.compile(r"\{glue(?::text)?\}`")
_EXPONENT_FORMAT = re.compile(r"\{glue(?::text)?\}`[^`]*:[^`]*\d?[eE]`")


def paragraphs(text: str) -> list[str]:
    """The prose blocks of a MyST chapter: fenced blocks (code cells, tables, figures)
    removed, the rest split at blank lines."""
    return [p for p in re.split(r"\n\s*\n", _FENCE.sub("", text)) if p.strip()]


def test_paragraphs_are_split_at_blank_lines_outside_fences():
    text = "a {glue:text}`x`\nb {glue}`y`\n\n```{code-cell}\n{glue:text}`z`\n\n```\n\nc"
    assert [len(_GLUE.findall(p)) for p in paragraphs(text)] == [2, 0]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_no_paragraph_is_a_wall_of_numbers(chapter):
    dense = []
    for para in paragraphs(chapter.read_text(encoding="utf8")):
        count = len(_GLUE.findall(para))
        if count > MAX_GLUED:
            dense.append(f"{count} glued numbers: {' '.join(para.split())[:90]}...")
    assert not dense, (f"{chapter.name}: paragraphs with more than {MAX_GLUED} glued numbers "
                       "(put them in a table the text points to):\n  " + "\n  ".join(dense))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.name)
def test_numbers_are_not_in_exponent_notation(chapter):
    text = _CODE_CELL.sub("", chapter.read_text(encoding="utf8"))  # the text a reader sees
    found = _EXPONENT_FORMAT.findall(text)
    assert not found, f"{chapter.name}: glued with an exponent format (use report.sci): {found}"
    words = re.sub(r"\{[\w:-]+\}`[^`]*`|\\Lambda", "", text)  # roles' targets are names, not text
    assert "Lambda" not in words, f"{chapter.name}: write $\\Lambda$, not Lambda"


def test_readme_is_one_screen_and_names_what_ci_runs():
    """The README a newcomer reads: at most 120 lines, its test command the one `.ci/run`
    runs, and every link to the developer notes pointing at a section that exists."""
    readme = (ROOT / "README.md").read_text(encoding="utf8")
    assert len(readme.splitlines()) <= 120, f"README.md has {len(readme.splitlines())} lines"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf8").strip().splitlines()[-1].strip()
    assert ci == "python3 tools/dev.py test" and f"{ci}   #" in readme
    notes = (ROOT / "docs" / "DEVELOPING.md").read_text(encoding="utf8")
    anchors = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-")
               for h in re.findall(r"^#+ (.+)$", notes, re.M)}
    for anchor in re.findall(r"docs/DEVELOPING\.md#([\w-]+)", readme):
        assert anchor in anchors, f"README links to docs/DEVELOPING.md#{anchor}, which has no such section"
