"""``python -m twostep verify`` (``twostep.scale.verify``): a rerun of a page against its
published numbers.

The setting page is executed twice (its cheapest page): once to publish a snapshot of it,
once by ``verify`` itself, which must find every value again; then the published snapshot
is perturbed, a deterministic value by one unit of its last printed digit too many and a
seed-dependent one by more than three standard errors, and ``verify`` must name both and
exit 1. The parser and the tolerances are checked on the texts the pages write (a true minus
sign, "< 0.005" bounds, "1.1 × 10⁻¹⁰", "0.246 ± 0.012").
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

from twostep.scale import verify

ROOT = Path(__file__).resolve().parents[2]
PAGE = "setting"


def test_numbers_are_read_as_the_pages_write_them():
    read = lambda t: [(round(n["value"], 15), n["bound"], n["pm"])   # noqa: E731
                      for n in verify.parse_numbers(t)]
    assert read("\u22120.25") == [(-0.25, False, False)]
    assert read("0.246 ± 0.012") == [(0.246, False, False), (0.012, False, True)]
    assert read("1.000 ± < 0.0005") == [(1.0, False, False), (0.0005, True, True)]
    assert read("< 0.005") == [(0.005, True, False)]
    assert read("1.1 × 10⁻¹⁰") == [(1.1e-10, False, False)]
    assert read("10⁻⁵") == [(1e-05, False, False)]
    assert read("W2 has 3 outliers") == [(3.0, False, False)]
    assert verify.words("W2 has 3 outliers at N = 16000") == "W2 has # outliers at N = #"
    assert verify.unquote("'0.246'") == "0.246" and verify.unquote("0.5") == "0.5"
    with pytest.raises(TypeError, match="text must be a string"):
        verify.parse_numbers(0.5)


def _row(published: str, rerun: str, values=None, name="x"):
    values = values or {name: published}
    entry = verify.classify(values)[name]
    return verify.compare_value(name, entry, verify.classify(values), rerun)


def test_the_tolerances():
    # Deterministic: the last printed digit (a value on a rounding boundary) or 1e-4 relative.
    assert _row("0.246", "0.247")["status"] == "match"
    assert _row("0.246", "0.248")["status"] == "mismatch"
    assert _row("46.236157767309756", "46.2361577673")["status"] == "match"
    assert _row("12", "13")["status"] == "mismatch"               # a count is exact
    assert _row("\u22120.25", "0.25")["status"] == "mismatch"     # the sign counts
    assert _row("confirmed", "contradicted")["status"] == "mismatch"
    # Seed-dependent, with its own standard error: within 3 of them.
    assert _row("0.246 ± 0.012", "0.270 ± 0.012")["status"] == "moved"
    assert _row("0.246 ± 0.012", "0.270 ± 0.012")["z"] == pytest.approx(2.0)
    assert _row("0.246 ± 0.012", "0.300 ± 0.012")["status"] == "mismatch"
    # ... or with <name>_sem glued beside it.
    values = {"x": "0.500", "x_sem": "0.010"}
    assert _row("0.500", "0.520", values)["status"] == "moved"
    assert _row("0.500", "0.540", values)["status"] == "mismatch"
    assert verify.classify(values)["x"]["kind"] == "seed"
    assert verify.classify(values)["x_sem"]["kind"] == "deterministic"


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> tuple[Path, Path]:
    """(snapshot, executed notebook) of the setting page, executed here."""
    pytest.importorskip("jupytext")
    pytest.importorskip("nbclient")
    folder = tmp_path_factory.mktemp("published")
    notebook = verify.execute(ROOT / "book" / f"{PAGE}.md")
    executed = folder / f"{PAGE}.ipynb"
    executed.write_text(json.dumps(notebook))
    values, tables = verify.notebook_values(notebook)
    doc = verify.snapshot_document({PAGE: verify.page_snapshot(values, tables)}, "0.0.0")
    snapshot = folder / "snapshot.json"
    snapshot.write_text(json.dumps(doc))
    return snapshot, executed


def test_verify_passes_on_an_honest_rerun(published, capsys):
    snapshot, _ = published
    code = verify.main([PAGE, "--book", str(ROOT / "book"), "--snapshot", str(snapshot)])
    out = capsys.readouterr().out
    assert code == 0, out
    summary = out.strip().splitlines()[-1]
    assert "match" in summary and "mismatch" not in summary and "missing" not in summary, out


def test_verify_catches_a_perturbed_value(published, capsys, tmp_path):
    snapshot, executed = published
    doc = json.loads(snapshot.read_text())
    values = doc["pages"][PAGE]["values"]
    # One deterministic number, moved by three units of its last printed digit.
    name = next(n for n, e in values.items() if e["kind"] == "deterministic"
                and verify.parse_numbers(e["text"]) and "." in e["text"])
    first = verify.parse_numbers(values[name]["text"])[0]
    wrong = copy.deepcopy(doc)
    text = values[name]["text"]
    moved = first["value"] + 3 * max(first["unit"], abs(first["value"]) * 1e-3)
    wrong["pages"][PAGE]["values"][name]["text"] = text.replace(
        verify._NUMBER.search(text).group(0), repr(moved), 1)
    # One seed-dependent value, published with a standard error it is far outside of.
    wrong["pages"][PAGE]["values"]["made_up"] = {"text": "0.500 ± 0.001", "kind": "seed",
                                                 "numbers": [0.5, 0.001]}
    perturbed = tmp_path / "perturbed.json"
    perturbed.write_text(json.dumps(wrong))
    code = verify.main([PAGE, "--notebook", str(executed), "--snapshot", str(perturbed)])
    out = capsys.readouterr().out
    assert code == 1, out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:-1] if line.strip()}
    assert "mismatch" in rows[name[:28]], out
    assert "missing" in rows["made_up"], out
    # The same notebook against the honest snapshot passes without re-executing.
    assert verify.main([PAGE, "--notebook", str(executed), "--snapshot", str(snapshot)]) == 0


def test_verify_says_what_it_needs(tmp_path, capsys):
    assert verify.main([PAGE, "--snapshot", str(tmp_path / "none.json")]) == 2
    assert "none.json" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert verify.main([PAGE, "--snapshot", str(bad)]) == 2
    assert "not a twostep snapshot" in capsys.readouterr().err


def test_the_published_snapshot_of_0_1_0_reads():
    doc = verify.read_snapshot(ROOT / "releases" / "0.1.0.json")
    assert doc["version"] == "0.1.0" and PAGE in doc["pages"]
    kinds = {e["kind"] for p in doc["pages"].values() for e in p["values"].values()}
    assert kinds == {"deterministic", "seed", "figure", "table"}


def test_without_jupytext_it_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setattr(verify, "_missing_runtime", lambda: ["jupytext", "nbclient"])
    snapshot = ROOT / "releases" / "0.1.0.json"
    assert verify.main([PAGE, "--book", str(ROOT / "book"), "--snapshot", str(snapshot)]) == 2
    err = capsys.readouterr().err
    assert "pip install jupytext nbclient" in err and "--notebook" in err
