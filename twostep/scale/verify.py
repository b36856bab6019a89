"""``python -m twostep verify PAGE``: check a rerun of a page against the published numbers.

The rerun must match the release's snapshot of the page's glued values and tables: a
seed-dependent value (glued with ``X_sem``, or holding ``±``) within :data:`SEM_FACTOR`
standard errors, other numbers to :data:`RTOL` or their last printed digit, words exactly.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from importlib import resources
from pathlib import Path

from .._version import __version__

#: Relative tolerance of a deterministic number; standard errors a seed-dependent one may move.
RTOL = 1e-4
SEM_FACTOR = 3.0
FORMAT, SCHEMA = "twostep-glue-snapshot", 1
FIGURE = "<figure>"

_SUPERSCRIPT = str.maketrans("⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹", "-+0123456789")
# A number: optional sign (- or U+2212), digits, e-exponent and "× 10ⁿ", or a bare "10ⁿ".
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-+\u2212])?"
    r"(?:10(?P<bare>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
    r"|(?P<mant>\d+(?:\.\d*)?|\.\d+)(?:[eE](?P<exp>[-+]?\d+))?"
    r"(?:\s*×\s*10(?P<pow>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?)")

def unquote(text: str) -> str:
    """A glued string's text: ``text/plain`` holds the repr of a ``str`` (``"'0.246'"``)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text
        if isinstance(value, str):
            return value
    return text

def _unit(mantissa: str, scaled: bool) -> float:
    # One unit of the last printed digit: "0.246" -> 0.001; a plain integer (a count) is exact.
    if "." not in mantissa:
        return 1.0 if scaled else 0.0
    return 10.0 ** -len(mantissa.split(".")[1])

def parse_numbers(text: str) -> list[dict]:
    """The numbers in ``text``, each ``{"value", "unit", "bound", "pm"}``: value, one unit of its
    last printed digit, whether ``<`` or ``>`` precedes it, whether it follows a ``±``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    found = []
    for m in _NUMBER.finditer(text):
        sign = -1.0 if m.group("sign") in ("-", "\u2212") else 1.0
        if m.group("bare"):
            power = int(m.group("bare").translate(_SUPERSCRIPT))
            value, unit = 10.0 ** power, 10.0 ** power
        else:
            mant = m.group("mant")
            scale = 10.0 ** int(m.group("exp") or 0)
            if m.group("pow"):
                scale *= 10.0 ** int(m.group("pow").translate(_SUPERSCRIPT))
            value = float(mant) * scale
            unit = _unit(mant, bool(m.group("exp") or m.group("pow"))) * scale
        before = text[:m.start()].rstrip()
        found.append({"value": sign * value, "unit": unit,
                      "bound": before.endswith(("<", ">", "≤", "≥")),
                      "pm": bool(re.search(r"±\s*<?\s*$", before))})
    return found

def words(text: str) -> str:
    """``text`` with every number replaced by ``#``: what must not change at all."""
    return re.sub(r"\s+", " ", _NUMBER.sub("#", text)).strip()

_TABLE_LABEL = re.compile(r"^:name:\s*(\S+)", re.MULTILINE)

def _output_text(output: dict) -> str:
    # In a notebook glue's MIME types carry scrapbook's prefix (not in myst-nb's .glue.json).
    prefix = output.get("metadata", {}).get("scrapbook", {}).get("mime_prefix", "")
    data = {k[len(prefix):] if prefix and k.startswith(prefix) else k: v
            for k, v in output.get("data", {}).items()}
    if any(k.startswith("image/") for k in data):
        return FIGURE
    text = data.get("text/markdown", data.get("text/plain", ""))
    return unquote("".join(text) if isinstance(text, list) else text)

def notebook_values(notebook: dict) -> tuple[dict, dict]:
    """``(values, tables)`` of an executed notebook (a dict): glued texts by name, ``{table}``
    outputs by label."""
    values, tables = {}, {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                values[name] = _output_text(output)
                continue
            text = output.get("data", {}).get("text/markdown", "")
            text = "".join(text) if isinstance(text, list) else text
            if "{table}" in text:
                for label in _TABLE_LABEL.findall(text):
                    tables[label] = text
    return values, tables

def glue_file_values(glue: dict) -> dict:
    """Each value's text of a myst-nb ``<page>.glue.json`` (its outputs by name)."""
    return {name: _output_text(output) for name, output in glue.items()}

def classify(values: dict) -> dict:
    """Snapshot entries of a page's glued ``values``: text, numbers, and kind (``figure``,
    ``table``, ``seed`` (with ``sem``: the name of its ``<name>_sem``) or ``deterministic``)."""
    out = {}
    for name, text in sorted(values.items()):
        entry = {"text": text, "numbers": [n["value"] for n in parse_numbers(text)]}
        if text == FIGURE:
            entry["kind"] = "figure"
        elif "{table}" in text:
            entry["kind"] = "table"
        elif f"{name}_sem" in values:
            entry.update(kind="seed", sem=f"{name}_sem")
        elif "±" in text:
            entry["kind"] = "seed"
        else:
            entry["kind"] = "deterministic"
        out[name] = entry
    return out

def page_snapshot(values: dict, tables: dict) -> dict:
    """One page of a snapshot: its classified values and its tables."""
    return {"values": classify(values), "tables": dict(sorted(tables.items()))}

def snapshot_document(pages: dict, version: str, commit: str = "") -> dict:
    """A snapshot of ``pages`` (name to :func:`page_snapshot`)."""
    return {"format": FORMAT, "schema": SCHEMA, "version": version, "commit": commit,
            "pages": dict(sorted(pages.items()))}

def read_snapshot(source) -> dict:
    """A snapshot from a path or an ``http(s)://`` URL."""
    text = _read_text(source)
    doc = json.loads(text)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("schema") != SCHEMA:
        raise ValueError(f"{source}: not a twostep snapshot of schema {SCHEMA}")
    return doc

def _read_text(source) -> str:
    source = str(source)
    if source.startswith(("http://", "https://")):
        from urllib.request import urlopen

        with urlopen(source, timeout=60) as response:
            return response.read().decode("utf8")
    return Path(source).read_text(encoding="utf8")

def published_snapshot(version: str = __version__) -> Path | None:
    """The snapshot of ``version`` shipped with the package, else the checkout's, else None."""
    shipped = resources.files("twostep.scale").joinpath("snapshots", f"{version}.json")
    if shipped.is_file():
        return Path(str(shipped))
    checkout = Path(__file__).resolve().parents[2] / "releases" / f"{version}.json"
    return checkout if checkout.is_file() else None

def sem_of(entry: dict, values: dict) -> list[float] | None:
    """``[standard error]`` of a seed-dependent ``entry`` (``values``: its page's entries): of its
    ``<name>_sem``, or after its own ``±``; None without."""
    if entry.get("sem") and entry["sem"] in values:
        nums = parse_numbers(values[entry["sem"]]["text"])
        return [abs(nums[0]["value"])] if nums else None
    nums = parse_numbers(entry["text"])
    sems = [abs(n["value"]) for n in nums if n["pm"]]
    return sems or None

def _row(name, kind, published, rerun, status="match") -> dict:
    return {"name": name, "kind": kind, "published": published, "rerun": rerun,
            "status": status, "z": None, "rel": None}

def compare_value(name: str, ref: dict, ref_values: dict, text: str) -> dict:
    """One row comparing the published ``ref`` with the rerun's ``text``: ``status`` (``match``,
    ``moved``, ``mismatch``, ``figure``), the largest move in standard errors ``z`` and ``rel``."""
    row = _row(name, ref["kind"], ref["text"], text)
    if ref["kind"] == "figure":
        row["status"] = "figure" if text == FIGURE else "mismatch"
        return row
    if ref["kind"] == "table":
        return {**compare_table(name, ref["text"], text), "name": name,
                "published": ref["text"], "rerun": text}
    if words(ref["text"]) != words(text):
        row["status"] = "mismatch"
        row["why"] = "the words differ"
        return row
    old, new = parse_numbers(ref["text"]), parse_numbers(text)
    sem = sem_of(ref, ref_values) if ref["kind"] == "seed" else None
    worst_rel, worst_z = 0.0, 0.0
    for a, b in zip(old, new):
        diff = abs(a["value"] - b["value"])
        scale = max(abs(a["value"]), abs(b["value"]))
        worst_rel = max(worst_rel, diff / scale if scale else 0.0)
        if a["bound"] or (a["pm"] and ref["kind"] == "seed"):
            continue        # a bound, or a standard error (judged with its mean)
        if sem:
            s = max(sem[0], a["unit"] / 2)
            worst_z = max(worst_z, diff / s)
            if diff > SEM_FACTOR * s:
                row["status"] = "mismatch"
            elif diff > max(RTOL * scale, a["unit"]):
                row["status"] = "moved" if row["status"] == "match" else row["status"]
        elif diff > max(RTOL * scale, a["unit"]) + 1e-12 * scale:
            row["status"] = "mismatch"
    row["rel"] = worst_rel
    row["z"] = worst_z if sem else None
    return row

def compare_table(label: str, published: str, text: str) -> dict:
    """A table compared cell by cell (a cell with ``±`` as seed-dependent)."""
    row = _row(f"table:{label}", "table", label, label)
    old_cells = [c.strip() for c in re.split(r"(?<!\\)\||\n", published)]
    new_cells = [c.strip() for c in re.split(r"(?<!\\)\||\n", text)]
    if len(old_cells) != len(new_cells):
        return {**row, "status": "mismatch", "why": "the table's shape differs"}
    worst = None
    for a, b in zip(old_cells, new_cells):
        kind = "seed" if "±" in a else "deterministic"
        cell = compare_value("", {"kind": kind, "text": a}, {}, b)
        if cell["status"] == "mismatch":
            return {**row, "status": "mismatch", "why": f"{a!r} -> {b!r}"}
        if cell["status"] == "moved":
            row["status"] = "moved"
        if cell["z"] is not None:
            worst = max(worst or 0.0, cell["z"])
    row["z"] = worst
    return row

def compare_page(published: dict, values: dict, tables: dict) -> list[dict]:
    """Rows comparing a page's snapshot with a rerun's ``values`` and ``tables`` (``missing``
    where the rerun lacks one), then the rerun's values the snapshot lacks (``new``)."""
    ref = published["values"]
    rows = []
    for name, entry in ref.items():
        if name not in values:
            rows.append(_row(name, entry["kind"], entry["text"], "", "missing"))
        else:
            rows.append(compare_value(name, entry, ref, values[name]))
    for label, text in published.get("tables", {}).items():
        if label not in tables:
            rows.append(_row(f"table:{label}", "table", label, "", "missing"))
        else:
            rows.append(compare_table(label, text, tables[label]))
    for name in sorted(set(values) - set(ref)):
        rows.append(_row(name, "?", "", values[name], "new"))
    return rows

FAILING = ("mismatch", "missing")

def report(rows: list[dict], out=None) -> None:
    """Print the comparison as a table and a one-line summary."""
    out = out or sys.stdout
    def short(text: str) -> str:
        text = " ".join(str(text).split())
        return text if len(text) <= 28 else text[:27] + "…"

    print(f"{'value':34} {'kind':13} {'published':29} {'rerun':29} {'status':9} moved", file=out)
    for r in rows:
        moved = (f"{r['z']:.1f} SE" if r.get("z") is not None
                 else f"{r['rel']:.1e} rel" if r.get("rel") else "")
        print(f"{short(r['name']):34} {r['kind']:13} {short(r['published']):29} "
              f"{short(r['rerun']):29} {r['status']:9} {moved}", file=out)
        if r.get("why"):
            print(f"{'':34} {r['why']}", file=out)
    counts = {s: sum(r["status"] == s for r in rows) for s in
              ("match", "moved", "figure", "mismatch", "missing", "new")}
    print(", ".join(f"{n} {s}" for s, n in counts.items() if n) or "nothing to compare", file=out)

def _missing_runtime() -> list[str]:
    import importlib.util

    return [name for name in ("jupytext", "nbclient", "nbformat", "ipykernel")
            if importlib.util.find_spec(name) is None]

INSTALL_HINT = ("re-executing a page needs jupytext, nbclient and a kernel: "
                "pip install jupytext nbclient ipykernel (or give an executed notebook with "
                "--notebook)")

def execute(source: Path, timeout: int = 1800) -> dict:
    """``source`` (a MyST page or a notebook) executed in a fresh kernel in its folder."""
    missing = _missing_runtime()
    if missing:
        raise RuntimeError(f"{INSTALL_HINT}; missing: {', '.join(missing)}")
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    notebook = jupytext.read(source) if source.suffix == ".md" else nbformat.read(source, 4)
    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(source.parent)}}).execute()
    return json.loads(nbformat.writes(notebook))

def _executed(notebook: dict) -> bool:
    return any(cell.get("outputs") for cell in notebook.get("cells", [])
               if cell.get("cell_type") == "code")

def find_page(page: str, book: Path | None = None) -> Path:
    """The source of ``page``: a path as given, or ``<book>/<page>.md`` (default ``book``: the
    current folder's, then the package's checkout's)."""
    given = Path(page)
    if given.suffix in (".md", ".ipynb") and given.is_file():
        return given
    name = given.stem
    folders = [Path(book)] if book else [Path.cwd() / "book",
                                         Path(__file__).resolve().parents[2] / "book"]
    for folder in folders:
        if (folder / f"{name}.md").is_file():
            return folder / f"{name}.md"
    raise FileNotFoundError(f"no page {page!r} in {', '.join(map(str, folders))}: give the "
                            "page's notebook with --notebook, or run this in a checkout")

def main(argv=None) -> int:
    """``verify PAGE [options]``."""
    parser = argparse.ArgumentParser(prog="twostep verify", description=__doc__.split("\n\n")[0])
    parser.add_argument("page", help="the page: its name (setting), or a path to its .md")
    parser.add_argument("--notebook", type=Path,
                        help="a notebook of the page: read as it is if executed, else executed")
    parser.add_argument("--snapshot", help="the published snapshot (a path or a URL); default: "
                        f"the one of version {__version__} shipped with the package")
    parser.add_argument("--book", type=Path, help="the folder of the pages (a checkout's book/)")
    parser.add_argument("--timeout", type=int, default=1800,
                        help="seconds a cell may run when re-executing (default 1800)")
    return _run(parser.parse_args(argv))

def _run(args) -> int:
    try:
        snapshot_path = args.snapshot or published_snapshot()
        if snapshot_path is None:
            print(f"no snapshot of version {__version__} ships with this package: give one "
                  "with --snapshot (the release's twostep-X.Y.Z-snapshot.json)", file=sys.stderr)
            return 2
        snapshot = read_snapshot(snapshot_path)
        name = Path(args.page).stem
        if name not in snapshot["pages"]:
            print(f"the snapshot has no page {name!r}; it has {', '.join(snapshot['pages'])}",
                  file=sys.stderr)
            return 2
        if args.notebook is not None:
            notebook = json.loads(Path(args.notebook).read_text(encoding="utf8"))
            if not _executed(notebook):
                notebook = execute(Path(args.notebook), args.timeout)
        else:
            notebook = execute(find_page(args.page, args.book), args.timeout)
    except (OSError, RuntimeError, ValueError) as error:
        print(f"verify: {error}", file=sys.stderr)
        return 2
    values, tables = notebook_values(notebook)
    rows = compare_page(snapshot["pages"][name], values, tables)
    print(f"page {name}: the rerun against the snapshot of version {snapshot['version']} "
          f"(deterministic: relative {RTOL:g} or the last printed digit; seed-dependent: "
          f"within {SEM_FACTOR:g} standard errors)")
    report(rows)
    return 1 if any(r["status"] in FAILING for r in rows) else 0

if __name__ == "__main__":
    sys.exit(main())
