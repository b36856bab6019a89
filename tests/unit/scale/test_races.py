"""Two writers, one file: exactly one runs, the other is refused at once naming it, no record
is lost (issue 53).

Each race starts two identical commands at once on one output, for both tools (``python -m
twostep`` and ``python -m twostep at-scale``), on an empty folder, with ``--resume`` on a file
cut to its first record, and with ``--force`` on a complete file. The writers are processes
forked from this one (the package already imported, so a race costs its work, not two
interpreters' start-up), each running the tool's ``main``. The test hook ``TWOSTEP_HOLD_LOCK``
(:mod:`twostep.scale.results`) makes the writer that took the lock wait until the test has
seen the other one end, so the outcome cannot depend on which process is faster: the loser
met the lock, not a finished file. The records left are compared with those of an
uninterrupted run (wall times and memory aside).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from twostep.scale.cli import main
from twostep.scale.results import (HOLD_ENV, ResultsLockedError, ResultsWriter, lock_results,
                                   read_results, unlock_results)

from cli_processes import ROOT, child_env  # this folder's helper

PY = sys.executable
TIMING = {"wall_s", "peak_rss_gb"}
#: tool -> (arguments without the output, output option, output (file or folder), files, tasks)
TOOLS = {
    "cli": (["two_steps", "-N", "40", "-g", "batch=reused,fresh", "-s", "0:2", "-p", "top=2",
             "--no-progress"], "-o", "r.json", ["r.json"], 4),
    "at-scale": (["at-scale", "--backend", "numpy", "--widths", "40", "--seeds", "spike=40:1",
                  "--seeds", "reuse=40:1", "--only", "spike", "--only", "reuse"], "--out", ".",
                 ["spike.json", "reuse.json"], 4),
}
#: 20 races per tool: identical commands on an empty folder, --resume, --force.
MODES = ["identical"] * 7 + ["resume"] * 7 + ["force"] * 6
RACES_AT_ONCE = 4


def _argv(tool, folder: Path, mode):
    argv, flag, out, _, _ = TOOLS[tool]
    return argv + [flag, str(folder / out)] + {"identical": [], "resume": ["--resume"],
                                                "force": ["--force"]}[mode]


def _fork(argv, err: Path, hold: Path) -> int:
    """A child process running ``main(argv)``, its stderr in ``err``; returns its pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.environ[HOLD_ENV] = str(hold)
        sys.stdout, sys.stderr = open(os.devnull, "w"), open(err, "w")
        code = main(argv)
    except SystemExit as exit:
        code = exit.code
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 1)


def _records(doc):
    return {(doc["experiment"], r.get("N"), r["batch"], r["seed"]):
            {k: v for k, v in r.items() if k not in TIMING} for r in doc["records"]}


def _start(tool, mode, folder: Path, reference: Path) -> dict:
    files = TOOLS[tool][3]
    folder.mkdir()
    if mode != "identical":
        for name in files:
            shutil.copy(reference / name, folder / name)
    if mode == "resume":   # a run that stopped after its first record
        for name in files:
            doc = json.loads((folder / name).read_text())
            doc.update(records=doc["records"][:1], complete=False)
            (folder / name).write_text(json.dumps(doc))
    race = {"tool": tool, "mode": mode, "folder": folder, "codes": {}, "released": False}
    race["pids"] = [_fork(_argv(tool, folder, mode), folder / f"err{i}", folder / "go")
                    for i in range(2)]
    return race


def _wait(races) -> None:
    """Reap every writer; once one writer of a race has ended, let the other go on."""
    deadline = time.monotonic() + 600
    while any(len(r["codes"]) < 2 for r in races):
        assert time.monotonic() < deadline, "writers still running"
        for r in races:
            for pid in r["pids"]:
                if pid not in r["codes"]:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        r["codes"][pid] = os.waitstatus_to_exitcode(status)
            if r["codes"] and not r["released"]:
                (r["folder"] / "go").touch()
                r["released"] = True
        time.sleep(0.01)


def _judge(race, reference: Path) -> dict:
    tool, mode, folder = race["tool"], race["mode"], race["folder"]
    files, tasks = TOOLS[tool][3], TOOLS[tool][4]
    codes = [race["codes"][pid] for pid in race["pids"]]
    errs = [(folder / f"err{i}").read_text() for i in range(2)]
    out = {"codes": codes, "named": False, "stderr": errs}
    if sorted(codes) == [0, 2]:
        winner, loser = (0, 1) if codes[0] == 0 else (1, 0)
        err = errs[loser].strip().splitlines()
        out["named"] = (len(err) == 1 and "is being written by another process" in err[0]
                        and f"(pid {race['pids'][winner]}: python -m twostep" in err[0])
    got = {k: v for name in files if (folder / name).exists()
           for k, v in _records(read_results(folder / name)).items()}
    want = {k: v for name in files for k, v in _records(read_results(reference / name)).items()}
    assert len(want) == tasks
    out["lost"] = len(set(want) - set(got))
    for key in set(want) & set(got):
        for name, value in want[key].items():
            np.testing.assert_array_equal(got[key][name], value, err_msg=f"{tool} {mode} {key}")
    assert not list(folder.glob("*.lock")), f"{tool} {mode}: a lock file outlived its writer"
    return out


@pytest.mark.parametrize("tool", list(TOOLS))
def test_two_writers_one_file_exactly_one_runs_and_no_record_is_lost(tool, tmp_path,
                                                                      monkeypatch):
    for name, value in child_env().items():
        if name.endswith("_NUM_THREADS"):
            monkeypatch.setenv(name, value)
    reference = tmp_path / "reference"
    reference.mkdir()
    assert main(_argv(tool, reference, "identical")) == 0
    results = []
    for start in range(0, len(MODES), RACES_AT_ONCE):
        races = [_start(tool, mode, tmp_path / f"{mode}{start + i}", reference)
                 for i, mode in enumerate(MODES[start:start + RACES_AT_ONCE])]
        _wait(races)
        results += [_judge(r, reference) for r in races]
    for mode, r in zip(MODES, results):
        assert sorted(r["codes"]) == [0, 2], f"{tool} {mode}: exit codes {r['codes']} {r['stderr']}"
        assert r["named"], f"{tool} {mode}: the refusal does not name the writer: {r['stderr']}"
        assert r["lost"] == 0, f"{tool} {mode}: {r['lost']} record(s) lost"
    print(f"{tool}: {len(results)} races, {sum(r['lost'] for r in results)} records lost, "
          f"{sum(r['named'] for r in results)} second writers refused naming the first")


def test_a_second_writer_in_the_same_process_is_refused_then_admitted(tmp_path):
    path = tmp_path / "r.json"
    first = ResultsWriter(path, "x", {}, key=["seed"], command="first run")
    with pytest.raises(ResultsLockedError, match=rf"r.json is being written by another process "
                                                 rf"\(pid {os.getpid()}: first run\)"):
        ResultsWriter(path, "x", {}, key=["seed"])
    first.close()
    assert not (tmp_path / "r.json.lock").exists()
    ResultsWriter(path, "x", {}, key=["seed"]).close()


def test_a_stale_lock_is_taken_over(tmp_path):
    path = tmp_path / "r.json"
    # A lock file a dead process left (no one holds it): its content is not a live writer.
    (tmp_path / "r.json.lock").write_text("999999999 python -m twostep two_steps\n")
    w = ResultsWriter(path, "x", {}, key=["seed"], command="me")
    assert (tmp_path / "r.json.lock").read_text() == f"{os.getpid()} me\n"
    w.close()
    # A writer killed while it held the lock: the kernel released it.
    code = ("import os, signal; from twostep.scale.results import lock_results; "
            f"lock_results({str(path)!r}, 'doomed'); os.kill(os.getpid(), signal.SIGKILL)")
    proc = subprocess.run([PY, "-c", code], env=child_env(), cwd=ROOT)
    assert proc.returncode == -9 and "doomed" in (tmp_path / "r.json.lock").read_text()
    fd = lock_results(path, "next")
    unlock_results(path, fd)
