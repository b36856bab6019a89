"""``tools/dev.py test``: with no arguments, the book session and the unit tests side by side.

The real sessions take a quarter of an hour; here a stand-in interpreter plays pytest: the
book session (``--nbmake -m book``) signals the end of its chapters through the file named
by ``TWOSTEP_CHAPTERS_DONE`` (as tests/conftest.py does), then runs on; the unit session
records when it started.
"""

from __future__ import annotations

import os
import stat
import sys
import textwrap

import pytest

FAKE_PYTEST = textwrap.dedent("""\
    #!{python}
    import os, sys, time
    from pathlib import Path
    log = Path({log!r})
    args = sys.argv[1:]
    if "--nbmake" in args:
        with log.open("a") as f:
            f.write("book " + " ".join(args) + "\\n")
        time.sleep(0.5)                      # the chapters
        with log.open("a") as f:
            f.write("chapters done\\n")
        if os.environ.get("TWOSTEP_CHAPTERS_DONE"):
            Path(os.environ["TWOSTEP_CHAPTERS_DONE"]).touch()
            # the build and the browser tests, long enough for the unit session to run
            # (however slowly a loaded machine starts it)
            waited = 0.0
            while "niceness" not in log.read_text() and waited < 60:
                time.sleep(0.05)
                waited += 0.05
        with log.open("a") as f:
            f.write("book ends\\n")
        sys.exit({book_code})
    with log.open("a") as f:
        f.write("unit " + " ".join(args) + "\\n")
        f.write(f"niceness {{os.nice(0)}}\\n")
    print("unit session output")
    sys.exit({unit_code})
    """)


def fake_python(tmp_path, book_code=0, unit_code=0):
    log = tmp_path / "calls.log"
    path = tmp_path / "python"
    path.write_text(FAKE_PYTEST.format(python=sys.executable, log=str(log), book_code=book_code,
                                       unit_code=unit_code))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path, log


@pytest.fixture
def dev(monkeypatch, tmp_path):
    import dev
    monkeypatch.setattr(dev, "ROOT", tmp_path)
    return dev


@pytest.mark.parametrize("book_code, unit_code, expected", [(0, 0, 0), (0, 1, 1), (2, 1, 2)])
def test_the_unit_tests_run_beside_the_book_once_its_chapters_are_done(
        dev, tmp_path, capfd, book_code, unit_code, expected):
    python, log = fake_python(tmp_path, book_code, unit_code)
    assert dev.run_tests(python, []) == expected
    calls = log.read_text().splitlines()
    # The unit session starts after the chapters and before the book session ends: beside
    # the build, not after it, and not beside a chapter.
    assert calls[0] == "book -m pytest --nbmake -m book"
    assert calls[1] == "chapters done"
    assert calls[2] == "unit -m pytest -m not book"
    # at a lower priority than the book session: the build and the browser come first
    assert calls[3] == f"niceness {min(19, os.nice(0) + 10)}"
    assert calls[4] == "book ends"
    out = capfd.readouterr().out
    assert "unit session output" in out
    assert f"unit tests: exit code {unit_code}" in out


def test_arguments_give_one_session_as_before(dev, tmp_path):
    python, log = fake_python(tmp_path)
    assert dev.run_tests(python, ["-k", "one_step"]) == 0
    assert log.read_text().splitlines() == ["book -m pytest --nbmake -k one_step",
                                            "chapters done", "book ends"]
