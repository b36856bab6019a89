"""``tools/dev.py test``: with no arguments, the chapters first, then the unit tests beside
the rest of the book session.

The real sessions take a quarter of an hour; here a stand-in interpreter plays pytest: the
book session (``--nbmake -m book``) "executes the chapters", writes the file that
``TWOSTEP_CHAPTERS_DONE`` names (as tools/nbchapters.py does), then runs until the unit
session has finished (however slowly a loaded machine runs it), so the test sees both at
once; each records what it was given and at which priority it ran, and prints a line.
"""

from __future__ import annotations

import os
import stat
import sys
import textwrap

import pytest

from nbchapters import DONE_ENV as CHAPTERS_DONE_ENV

FAKE_PYTEST = textwrap.dedent("""\
    #!{python}
    import os, sys, time
    from pathlib import Path
    log = Path({log!r})
    args = sys.argv[1:]
    if "--nbmake" in args:
        with log.open("a") as f:
            f.write("book " + " ".join(args) + "\\n")
        if args[-2:] == ["-m", "book"]:
            time.sleep(0.3)  # the chapters: nothing else may run yet
            with log.open("a") as f:
                f.write("chapters done\\n")
            if {signal}:
                Path(os.environ[{env!r}]).write_text("11 chapters executed")
            else:
                sys.exit({book_code})  # a session that died before the flag
            # the build and the browser tests: still running when the unit session ends
            waited = 0.0
            while "unit ends" not in log.read_text() and waited < 60:
                time.sleep(0.05)
                waited += 0.05
        with log.open("a") as f:
            f.write("book ends\\n")
        print("book session output")
        sys.exit({book_code})
    with log.open("a") as f:
        f.write("unit " + " ".join(args) + "\\n")
        f.write(f"niceness {{os.nice(0)}}\\n")
    print("unit session output", flush=True)
    with log.open("a") as f:
        f.write("unit ends\\n")
    sys.exit({unit_code})
    """)


def fake_python(tmp_path, book_code=0, unit_code=0, signal=True):
    log = tmp_path / "calls.log"
    path = tmp_path / "python"
    path.write_text(FAKE_PYTEST.format(python=sys.executable, log=str(log), book_code=book_code,
                                       unit_code=unit_code, signal=signal,
                                       env=CHAPTERS_DONE_ENV))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path, log


@pytest.fixture
def dev(monkeypatch, tmp_path):
    import dev
    monkeypatch.setattr(dev, "ROOT", tmp_path)
    return dev


@pytest.mark.parametrize("book_code, unit_code, expected", [(0, 0, 0), (0, 1, 1), (2, 1, 2)])
def test_the_unit_tests_start_after_the_chapters_beside_the_build_and_print_first(
        dev, tmp_path, capfd, book_code, unit_code, expected):
    python, log = fake_python(tmp_path, book_code, unit_code)
    assert dev.run_tests(python, []) == expected
    calls = log.read_text().splitlines()
    # Both sessions ran; the unit session started once the chapters were done (they had the
    # cores alone) and ended while the book session was still running; the book session
    # ended last.
    assert "book -m pytest --nbmake -m book" in calls
    assert calls.index("chapters done") < calls.index("unit -m pytest -m not book")
    assert calls.index("unit ends") < calls.index("book ends") == len(calls) - 1
    # at a lower priority than the book session: the chapters keep both cores
    assert f"niceness {min(19, os.nice(0) + 10)}" in calls
    out = capfd.readouterr().out
    # The unit tests' output and exit code come before anything of the book session's.
    assert out.index("unit session output") < out.index(f"unit tests: exit code {unit_code}") \
        < out.index("book session output")
    assert (tmp_path / "artifacts" / "book-tests.log").read_text() == "book session output\n"


def test_arguments_give_one_session_as_before(dev, tmp_path):
    python, log = fake_python(tmp_path)
    assert dev.run_tests(python, ["-k", "one_step"]) == 0
    assert log.read_text().splitlines() == ["book -m pytest --nbmake -k one_step", "book ends"]


def test_a_book_session_that_dies_before_the_chapters_are_done_still_lets_the_units_run(
        dev, tmp_path, capfd):
    python, log = fake_python(tmp_path, book_code=3, signal=False)
    assert dev.run_tests(python, []) == 3
    calls = log.read_text().splitlines()
    assert "unit -m pytest -m not book" in calls and "unit ends" in calls
    assert "book session ended" in capfd.readouterr().out


def test_dev_and_the_chapter_plugin_name_the_same_flag(dev):
    assert dev.CHAPTERS_DONE_ENV == CHAPTERS_DONE_ENV
