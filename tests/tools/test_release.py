"""The release bundle (``tools/release.py``, ``python3 tools/dev.py release``) and the version.

The bundle is made here from a stand-in for the book (a two-page site and a one-page PDF: the
real ones take minutes to build, and ``dev.py release`` builds them): the wheel and the sdist
are built for real from the committed files and checked for what a reader needs (the package,
its licence, the version's snapshot for ``verify``), then the site, the PDF, the snapshot, the
results files and the checksums. ``bump`` is run on a copy of the files it edits.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

import release

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[str, dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("bundle")
    html = tmp / "html"
    (html / "book").mkdir(parents=True)
    (html / "index.html").write_text("<html>the landing page</html>")
    (html / "book" / "setting.html").write_text("<html>a page</html>")
    pdf = tmp / "book.pdf"
    pdf.write_bytes(b"%PDF-1.5\n% a stand-in\n%%EOF\n")
    version = release.current_version(ROOT)
    snapshot = ROOT / "releases" / f"{version}.json"
    assert snapshot.is_file(), f"no snapshot of {version} in releases/"
    return version, release.make_bundle(ROOT, version, html, pdf, snapshot, out=tmp / "dist")


def test_the_bundle_holds_every_file(bundle):
    version, names = bundle
    assert set(names) == set(release.BUNDLE)
    folder = names["wheel"].parent
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [name.format(v=version) for name in release.BUNDLE.values()] + ["SHA256SUMS"])
    sums = dict(reversed(line.split("  ")) for line in
                (folder / "SHA256SUMS").read_text().splitlines())
    for path in names.values():
        assert sums[path.name] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_wheel_and_the_sdist(bundle):
    version, names = bundle
    with zipfile.ZipFile(names["wheel"]) as z:
        files = set(z.namelist())
        metadata = z.read(f"twostep-{version}.dist-info/METADATA").decode()
    assert {"twostep/__init__.py", "twostep/scale/verify.py", "twostep/scale/cli.py",
            f"twostep/scale/snapshots/{version}.json"} <= files
    assert any(f.endswith("licenses/LICENSE") or f.endswith("/LICENSE") for f in files), files
    assert f"Version: {version}" in metadata
    with tarfile.open(names["sdist"]) as t:
        members = {m.split("/", 1)[1] for m in t.getnames() if "/" in m}
    assert {"pyproject.toml", "LICENSE", "twostep/__init__.py"} <= members


def test_the_site_pdf_snapshot_and_results(bundle):
    version, names = bundle
    with zipfile.ZipFile(names["site"]) as z:
        assert f"twostep-{version}-site/index.html" in z.namelist()
    assert names["pdf"].read_bytes().startswith(b"%PDF")
    snapshot = json.loads(names["snapshot"].read_text())
    assert snapshot["version"] == version and snapshot["pages"]
    with zipfile.ZipFile(names["results"]) as z:
        inside = set(z.namelist())
    wanted = {p.relative_to(ROOT).as_posix() for p in release.results_files(ROOT)}
    assert "results/registry.json" in wanted and "results/at_scale/count.json" in wanted
    assert inside == wanted


def test_the_bundle_needs_its_parts(tmp_path):
    with pytest.raises(FileNotFoundError, match="no PDF"):
        release.make_bundle(ROOT, "0.1.0", tmp_path, tmp_path / "none.pdf", tmp_path,
                            out=tmp_path / "d")
    with pytest.raises(ValueError, match="version must be X.Y.Z"):
        release.make_bundle(ROOT, "1.0", tmp_path, tmp_path, tmp_path)


def test_bump_sets_the_version_everywhere(tmp_path):
    for name in ("pyproject.toml", "twostep/_version.py", "CITATION.cff", "CHANGELOG.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tmp_path / name)
    release.bump(tmp_path, "9.8.7", "2027-01-02")
    assert 'version = "9.8.7"' in (tmp_path / "pyproject.toml").read_text()
    assert '__version__ = "9.8.7"' in (tmp_path / "twostep" / "_version.py").read_text()
    cff = yaml.safe_load((tmp_path / "CITATION.cff").read_text())
    assert cff["version"] == "9.8.7" and str(cff["date-released"]) == "2027-01-02"
    log = (tmp_path / "CHANGELOG.md").read_text()
    assert log.index("## 9.8.7 (2027-01-02)") < log.index("## 0.1.0")
    release.write_changelog_block(tmp_path, "9.8.7", "Numbers against 0.1.0: none moved.")
    text = (tmp_path / "CHANGELOG.md").read_text()
    assert "Numbers against 0.1.0: none moved." in text
    release.bump(tmp_path, "9.8.7", "2027-01-02")      # a second bump adds no second section
    assert (tmp_path / "CHANGELOG.md").read_text().count("## 9.8.7") == 1
    with pytest.raises(ValueError, match="X.Y.Z"):
        release.bump(tmp_path, "v1")
    # The section prepared for the next release gets its date, and no second heading.
    prepared = [line for line in log.splitlines() if line.endswith("(unreleased)")]
    if prepared:
        next_version = prepared[0].split()[1]
        release.bump(tmp_path, next_version, "2027-02-03")
        text = (tmp_path / "CHANGELOG.md").read_text()
        assert f"## {next_version} (2027-02-03)" in text and "(unreleased)" not in text
