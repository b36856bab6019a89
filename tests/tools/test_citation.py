"""CITATION.cff: valid Citation File Format, describing this book, and the one source of the
landing page's "How to cite" (``twostep.pages.landing.citation``).

``cffconvert --validate`` runs in a virtual environment of its own, made here from
``tests/data/cffconvert-requirements.txt``: cffconvert 2.0.0 needs jsonschema < 4, which the
book's environment cannot have. The built page's citation is checked against the file in
``tests/site/test_site_downloads.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
import yaml

import twostep
from twostep.pages import landing

ROOT = Path(__file__).resolve().parents[2]
CFF = ROOT / "CITATION.cff"
PINS = ROOT / "tests" / "data" / "cffconvert-requirements.txt"


@pytest.fixture(scope="module")
def cff() -> dict:
    return yaml.safe_load(CFF.read_text(encoding="utf8"))


@pytest.fixture(scope="module")
def cffconvert(tmp_path_factory) -> Path:
    """The ``cffconvert`` program of a fresh venv holding the pinned cffconvert 2.0.0."""
    env_dir = tmp_path_factory.mktemp("cffconvert") / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--quiet", "--no-compile", "--disable-pip-version-check", "-r", str(PINS)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, f"installing cffconvert failed:\n{proc.stdout}\n{proc.stderr}"
    return env_dir / "bin" / "cffconvert"


def _validate(cffconvert: Path, path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(cffconvert), "--validate", "-i", str(path)], capture_output=True,
                          text=True, timeout=120)


def test_cffconvert_validates_the_citation_file(cffconvert, tmp_path):
    proc = _validate(cffconvert, CFF)
    assert proc.returncode == 0, f"CITATION.cff is not valid CFF:\n{proc.stdout}\n{proc.stderr}"
    assert "valid according to schema version 1.2.0" in proc.stdout
    # The same validator rejects a file without authors: the check above can fail.
    broken = tmp_path / "CITATION.cff"
    broken.write_text("\n".join(line for line in CFF.read_text().splitlines()
                                if not line.startswith("  - name:") and line != "authors:"))
    assert _validate(cffconvert, broken).returncode != 0


def test_the_citation_file_describes_this_book(cff):
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert cff["type"] == "software"
    assert cff["title"] == config["title"]
    assert cff["version"] == twostep.__version__ == project["version"]
    # The code's licence (the package's, LICENSE) and the text's (LICENSE-text), as SPDX ids.
    assert cff["license"] == [project["license"]["text"], "CC-BY-4.0"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "CC BY 4.0" in (ROOT / "LICENSE-text").read_text()
    # The version's release date: an ISO date, not after today.
    import datetime
    released = datetime.date.fromisoformat(str(cff["date-released"]))
    assert released <= datetime.date.today()
    # One address: the repository's, as _config.yml gives it (empty until it is public).
    assert cff.get("repository-code", "") == (config["repository"]["url"] or "")
    (paper,) = cff["references"]
    assert [a["family-names"] for a in paper["authors"]] == ["Moniri", "Hassani"]
    assert paper["year"] == 2026 and "Two vs. One Step of Gradient Descent" in paper["title"]
    assert {"type": "other", "value": "arXiv:2605.17767"}.items() <= paper["identifiers"][0].items()


def test_citation_renders_the_file(cff):
    text = landing.citation(CFF).data
    book, (paper,) = landing.bibtex_entries(cff)
    assert f"```bibtex\n{paper}\n```" in text and f"```bibtex\n{book}\n```" in text
    assert paper.startswith("@misc{moniri2026feature,") and "eprint        = {2605.17767}" in paper
    assert "author        = {Moniri, Behrad and Hassani, Hamed}" in paper
    assert "author  = {{the twostep project}}" in book and f"{{{twostep.__version__}}}" in book
    assert r"Moniri \& Hassani (2026)" in book          # "&" escaped for BibTeX
    assert text.startswith(" ".join(cff["message"].split()))


def test_citation_of_another_file_and_bad_input(tmp_path):
    path = tmp_path / "CITATION.cff"
    path.write_text("cff-version: 1.2.0\nmessage: Cite it.\ntitle: A book\nauthors:\n"
                    "  - family-names: Doe\n    given-names: Jo\n"
                    "repository-code: https://example.org/x\nreferences:\n"
                    "  - type: article\n    title: On things\n    authors:\n      - name: A Group\n"
                    "    year: 2020\n    journal: J. Things\n")
    book, (ref,) = landing.bibtex_entries(yaml.safe_load(path.read_text()))
    assert book == ("@software{twostep,\n  title  = {A book},\n  author = {Doe, Jo},\n"
                    "  url    = {https://example.org/x},\n}")
    assert ref.startswith("@article{agroup2020things,") and "journal = {J. Things}" in ref
    assert "The paper:" in landing.citation(str(path)).data
    with pytest.raises(FileNotFoundError, match="no CITATION.cff"):
        landing.citation(tmp_path / "missing.cff")
    with pytest.raises(TypeError, match="path must be"):
        landing.citation(3)
    with pytest.raises(TypeError, match="cff must be a dict"):
        landing.bibtex_entries(["title"])
    with pytest.raises(ValueError, match="no 'authors'"):
        landing.bibtex_entries({"title": "x"})
    with pytest.raises(ValueError, match=r"authors\[0\] has neither"):
        landing.bibtex_entries({"title": "x", "authors": [{"email": "a@b"}]})
