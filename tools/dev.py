#!/usr/bin/env python3
"""Build the book or run the test suite, in the project's own virtual environment.

    python3 tools/dev.py book          execute every chapter, build _build/html strictly, then
                                       the PDF from the same cache (tools/pdfbook.py)
    python3 tools/dev.py test [ARGS]   every chapter (nbmake), then the strict build, the PDF
                                       and the browser tests with the unit tests (printed
                                       first) beside them (two pytest sessions); with ARGS one
                                       session:
                                       pytest --nbmake [ARGS]
    python3 tools/dev.py bench [ARGS]  speed and memory benchmark (benchmarks/bench_two_steps.py;
                                       installs the optional PyTorch CPU build for comparison)
    python3 tools/dev.py fingerprint   print the execution cache's fingerprint (its last line):
                                       the key under which CI keeps the cache
                                       (.github/workflows/book.yml)
    python3 tools/dev.py release       the release bundle of the current version in dist/X.Y.Z/:
                                       the book and its PDF, the snapshot releases/X.Y.Z.json,
                                       CHANGELOG.md's numbers, wheel, sdist, site, results
                                       (tools/release.py; `release.py bump X.Y.Z` first)

Both create .venv on first use and reinstall it only when requirements.txt or
pyproject.toml change. Stdlib only: this runs before .venv exists.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
# Inside .venv, so deleting the venv also forgets that it was complete.
STAMP = VENV / ".twostep-install-hash"
INSTALL_INPUTS = ("requirements.txt", "pyproject.toml")
#: nbchapters.DONE_ENV, spelled here because this script runs before .venv (and pytest, which
#: nbchapters imports) exists; tests/tools/test_dev.py checks that the two agree.
CHAPTERS_DONE_ENV = "TWOSTEP_CHAPTERS_DONE"

sys.path.insert(0, str(ROOT / "tools"))
import kernel_checks  # noqa: E402  (needs the path above)
import pdfbook  # noqa: E402
import strictbuild  # noqa: E402


def say(message: str) -> None:
    print(f"[dev] {message}", flush=True)


def run(args: list, **kwargs) -> None:
    say("$ " + " ".join(str(a) for a in args))
    subprocess.run([str(a) for a in args], check=True, **kwargs)


def install_hash() -> str:
    digest = hashlib.sha256()
    for name in INSTALL_INPUTS:
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes() + b"\0")
    return digest.hexdigest()


def ensure_venv() -> Path:
    """Return .venv's python, creating or updating the environment if needed."""
    if sys.version_info < (3, 11):
        sys.exit(f"Python >= 3.11 is required, this is {sys.version.split()[0]}")
    python = BIN / "python"
    if not python.exists():
        if VENV.exists():
            # Left over from an interrupted creation; pip cannot repair it.
            shutil.rmtree(VENV)
        run([sys.executable, "-m", "venv", VENV])
    wanted = install_hash()
    if STAMP.is_file() and STAMP.read_text().strip() == wanted:
        say("reusing .venv (requirements.txt and pyproject.toml unchanged)")
        return python
    # Removed first, so an install that fails half-way is retried next time.
    STAMP.unlink(missing_ok=True)
    run(
        [python, "-m", "pip", "install", "--disable-pip-version-check",
         "-r", "requirements.txt", "-e", "."],
        cwd=ROOT,
    )
    STAMP.write_text(wanted + "\n")
    return python


CHROMIUM = Path("/usr/bin/chromium")


def ensure_chromium() -> None:
    """Install Debian's Chromium for tests/site/test_browser.py if it is missing and we can.

    Only as root with apt-get (a Debian machine, as CI is); elsewhere the browser
    tests skip and say why. Playwright never downloads a browser of its own.
    """
    if CHROMIUM.exists():
        return
    if not shutil.which("apt-get") or not hasattr(os, "geteuid") or os.geteuid() != 0:
        say(f"no {CHROMIUM}, and apt-get as root is not available to install it: "
            "the browser tests will be skipped (install Debian's `chromium` to run them)")
        return
    say(f"no {CHROMIUM}: installing Debian's chromium for the browser tests")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        run(["apt-get", "update"], env=env)
        run(["apt-get", "install", "-y", "chromium"], env=env)
    except subprocess.CalledProcessError as error:
        say(f"installing chromium failed (exit {error.returncode}): "
            "the browser tests will be skipped")


def ensure_latex() -> bool:
    """Install Debian's TeX Live packages for the PDF (tools/pdfbook.py) if they are missing
    and we can; return whether the PDF can be built.

    With apt-get as root (a Debian machine, as CI is), or through sudo where it asks for no
    password (a hosted CI runner); elsewhere the PDF is not built and its test skips, saying why.
    """
    if not pdfbook.missing_programs():
        return True
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    sudo = [] if root else ["sudo", "-n"]
    if not shutil.which("apt-get") or not (root or (
            shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"],
                                                    capture_output=True).returncode == 0)):
        say(f"no {', '.join(pdfbook.missing_programs())}, and apt-get as root is not available "
            f"to install them: no PDF (install Debian's {' '.join(pdfbook.DEBIAN_PACKAGES)})")
        return False
    say("installing Debian's TeX Live and poppler for the PDF")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        run([*sudo, "apt-get", "update"], env=env)
        run([*sudo, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y",
             "--no-install-recommends", *pdfbook.DEBIAN_PACKAGES], env=env)
    except subprocess.CalledProcessError as error:
        say(f"installing TeX Live failed (exit {error.returncode}): no PDF")
    return not pdfbook.missing_programs()


def build_the_pdf() -> int:
    """The PDF from the execution cache the HTML build filled, checked and put into the site
    (every page's footer links it); 0 without TeX (the footer then has no link)."""
    if not ensure_latex():
        return 0
    built = pdfbook.build_pdf(ROOT, str(BIN / "jupyter-book"))
    if built.code:
        say(f"the PDF build failed (exit {built.code}); its log: {pdfbook.PDF_LOG}")
        return built.code
    say(f"PDF built in {built.seconds:.0f} s, {built.pdf.relative_to(ROOT)}")
    # The check reads the table of contents with the book's own parser, which only the
    # environment has (this script runs on the system's Python): it checks and publishes there.
    return subprocess.run([str(BIN / "python"), "tools/pdfbook.py", "--check-only"],
                          cwd=ROOT).returncode


def make_release(python: Path) -> int:
    """``dev.py release``: the book (HTML and PDF), the version's snapshot and its changelog
    block, and the bundle in dist/<version>/ (tools/release.py)."""
    import release

    version = release.current_version(ROOT)
    code, _ = strictbuild.strict_build(ROOT, str(BIN / "jupyter-book"), echo=True)
    if code:
        return code
    if not ensure_latex():
        say("a release needs its PDF: install TeX Live (see above)")
        return 1
    code = build_the_pdf()
    if code:
        return code
    snapshot = ROOT / release.RELEASES / f"{version}.json"
    if snapshot.exists():
        # A published snapshot is never rewritten: bump the version for new numbers.
        say(f"{snapshot.relative_to(ROOT)} exists (published): kept as it is")
    else:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        run([python, "tools/glue_snapshot.py", "record", snapshot, "--version", version,
             "--commit", commit], cwd=ROOT)
    previous = release.previous_version(version, ROOT)
    if previous:
        block = subprocess.run([str(python), "tools/glue_snapshot.py", "changelog",
                                str(ROOT / release.RELEASES / f"{previous}.json"),
                                str(snapshot)], cwd=ROOT, check=True, capture_output=True,
                               text=True).stdout
        release.write_changelog_block(ROOT, version, block)
        say(f"CHANGELOG.md: the numbers of {version} against {previous}")
    names = release.make_bundle(ROOT, version, ROOT / "_build" / "html",
                                pdfbook.pdf_path(ROOT), snapshot, python=str(python))
    total = sum(p.stat().st_size for p in names.values())
    for kind, path in names.items():
        say(f"  {kind:8} {path.relative_to(ROOT)} ({path.stat().st_size / 1e6:.1f} MB)")
    say(f"release {version}: {len(names)} files, {total / 1e6:.1f} MB in "
        f"{(ROOT / release.DIST / version).relative_to(ROOT)}")
    return 0


def ensure_torch(python: Path) -> None:
    """The benchmark compares against PyTorch autograd; it is an optional extra
    (pyproject's ``bench``), installed on first use only, never for the book."""
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True)
    if probe.returncode == 0:
        return
    try:
        run([python, "-m", "pip", "install", "--disable-pip-version-check", "-e", ".[bench]"],
            cwd=ROOT)
    except subprocess.CalledProcessError:
        say("could not install PyTorch; the benchmark will skip the comparison")


def open_chapters_as_notebooks() -> None:
    """Make JupyterLab in .venv open MyST-Markdown chapters as notebooks (jupytext).

    The same settings file binder/postBuild installs on Binder. Any file of the
    same name already there is left alone.
    """
    settings = VENV / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    if not settings.exists():
        settings.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / "tools" / "jupyterlab-overrides.json", settings)


def use_venv_environment() -> None:
    os.environ["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ["VIRTUAL_ENV"] = str(VENV)
    os.environ.pop("PYTHONHOME", None)
    # Silence two warnings that every kernel start would print: jupyter_core's
    # platformdirs migration notice and debugpy's frozen-modules notice.
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    # A study that a story chapter and its appendix both show runs once per build
    # (twostep.pages.memo); the key holds the package's source, so no stale result is read.
    os.environ.setdefault("TWOSTEP_STUDY_CACHE", str(ROOT / "_build" / "studies"))
    # Every kernel started from here (nbmake's, jupyter-book's) checks each figure it draws:
    # IPYTHONDIR names a folder under _build whose startup file loads tools/figure_checks.py.
    kernel_checks.use(ROOT)


def root_page() -> Path:
    """HTML of the _toc.yml root, the first page a reader sees."""
    toc = (ROOT / "_toc.yml").read_text()
    match = re.search(r"^root:\s*(\S+)", toc, re.MULTILINE)
    docname = re.sub(r"\.(md|ipynb)$", "", match.group(1)) if match else "index"
    return Path("_build/html") / (docname + ".html")


def print_outputs() -> None:
    say("outputs:")
    for label, rel in [
        ("book", Path("_build/html/index.html")),
        ("first page", root_page()),
        ("build log", strictbuild.BUILD_LOG),
    ]:
        if (ROOT / rel).exists():
            say(f"  {label:11} {ROOT / rel}")
    reports = sorted((ROOT / strictbuild.REPORTS).rglob("*.err.log"))
    for report in reports:
        say(f"  {'failed':11} {report}")


def fingerprint(python) -> str:
    """``bookcache.source_hash`` as ``python`` (the venv's) computes it: the fingerprint
    covers the installed distributions, so it must be computed by the interpreter that
    executes the chapters."""
    code = ("import sys; sys.path.insert(0, 'tools'); import bookcache; "
            "print(bookcache.source_hash(sys.argv[1]))")
    out = subprocess.run([str(python), "-c", code, str(ROOT)], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    return out.strip()


def run_tests(python: Path, extra: list[str]) -> int:
    """``pytest --nbmake [ARGS]`` as one session; without ARGS, two sessions, one after the other
    has executed the chapters.

    The book session (every chapter as an nbmake item, tools/nbchapters.py, then the strict
    build, the browser and the install tests) starts first and has both cores to itself while
    it executes the chapters: the times it records are what the runtimes page tells a reader
    to expect, and a reader runs a chapter alone. Once the last chapter has run
    (:data:`CHAPTERS_DONE_ENV`), the unit tests (``-m "not book"``) start beside the rest of
    it, at nice 10. The unit tests print as they run, so their summary comes first; the book
    session's output is kept in ``artifacts/book-tests.log`` and printed when it ends. The
    exit code is the first non-zero of the two."""
    pytest = [str(python), "-m", "pytest"]
    if extra:
        return subprocess.call([*pytest, "--nbmake", *extra], cwd=ROOT)
    artifacts = ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    log = artifacts / "book-tests.log"
    done = artifacts / "chapters-done"
    done.unlink(missing_ok=True)
    say(f"the chapters run first, then the build and the browser tests beside the unit tests "
        f"(output in {log.relative_to(ROOT)}, shown when they end)")
    with open(log, "w", encoding="utf8") as out:
        book = subprocess.Popen([*pytest, "--nbmake", "-m", "book"], cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT,
                                env={**os.environ, CHAPTERS_DONE_ENV: str(done)})
        started = time.perf_counter()
        while not done.exists() and book.poll() is None:
            time.sleep(1)
        what = done.read_text(encoding="utf8").strip() if done.exists() else "book session ended"
        say(f"chapters done after {time.perf_counter() - started:.0f} s ({what}); "
            "the unit tests start")
        # At a lower priority (nice 10): the build and the browser keep the cores they need.
        unit = subprocess.Popen([*pytest, "-m", "not book"], cwd=ROOT,
                                preexec_fn=lambda: os.nice(10))
        unit_code = unit.wait()
        say(f"unit tests: exit code {unit_code}" + ("; the book session goes on"
                                                    if book.poll() is None else ""))
        book_code = book.wait()
    print(log.read_text(encoding="utf8"), end="", flush=True)
    say(f"book session: exit code {book_code}; unit tests: exit code {unit_code}")
    return book_code or unit_code


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("book", "test", "bench", "fingerprint", "release"):
        print(__doc__, file=sys.stderr)
        return 2
    command, extra = argv[0], argv[1:]
    os.chdir(ROOT)
    started = time.perf_counter()
    try:
        python = ensure_venv()
    except subprocess.CalledProcessError as error:
        say(f"setting up .venv failed (exit {error.returncode}); see the output above")
        return error.returncode or 1
    open_chapters_as_notebooks()
    use_venv_environment()
    ready = time.perf_counter()
    say(f"environment ready in {ready - started:.1f} s")

    if command == "fingerprint":
        # Alone on the last line of stdout, for the workflow's cache key.
        print(fingerprint(python), flush=True)
        return 0
    if command == "book":
        if extra:
            print("'book' takes no arguments", file=sys.stderr)
            return 2
        code, _ = strictbuild.strict_build(ROOT, str(BIN / "jupyter-book"), echo=True)
        code = code or build_the_pdf()
    elif command == "release":
        code = make_release(python)
    elif command == "bench":
        ensure_torch(python)
        code = subprocess.call([str(python), "benchmarks/bench_two_steps.py", *extra], cwd=ROOT)
    else:
        ensure_chromium()
        ensure_latex()
        code = run_tests(python, extra)

    say(f"{command} finished with exit code {code} in {time.perf_counter() - ready:.1f} s")
    print_outputs()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
