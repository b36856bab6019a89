"""Crash safety of the results writer: a death right before and right after every write.

``TWOSTEP_FAULT_AT="K:before"`` (or ``"K:after"``), the test hook of
:mod:`twostep.scale.results`, kills the writing process with SIGKILL right before the rename
of its K-th write, or right after it. For every K of a small run of ``python -m twostep at-scale``
(two files, two widths) and of ``python -m twostep`` (serial and ``-j 2``), and both points,
the killed run must have left only files that :func:`read_results` accepts, holding every
task saved before the death and no other; ``--resume`` must then finish, compute only the
missing tasks, and leave records equal (wall times and memory aside) to those of an
uninterrupted run. The random-time SIGKILL tests are in tests/unit/scale/test_cli.py and
tests/unit/scale/test_results.py.

The uninterrupted run is the one with the hook set one past the last write: it completes, so
a run writes at most ``Run.writes`` times, and at least as many since the fault at the last of
them kills it. Every process runs on one BLAS thread, so records compare exactly. The faults
are tried two at a time (each is two short processes, mostly their start-up).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

from twostep.scale.results import FAULT_ENV, read_results

from cli_processes import ROOT, child_env, tagged  # this folder's helper
PY = sys.executable
#: Record entries that differ between two runs of the same task.
TIMING = {"wall_s", "peak_rss_gb"}


class Run:
    """A command, its output argument, and what each of its writes saves."""

    def __init__(self, argv, out_flag, target, tasks, writes, saved, new):
        self.argv, self.out_flag, self.target = argv, out_flag, target
        self.tasks, self.writes = tasks, writes
        self.saved = saved   # write count -> records on disk once these writes are done
        self.new = new       # (stdout, stderr) of a resume -> tasks it computed

    def cmd(self, folder: Path, resume=False):
        return self.argv + [self.out_flag, str(folder / self.target if self.target else folder)] \
            + (["--resume"] if resume else [])


def _printed_tasks(out, err):
    return sum(" N=" in line for line in out.splitlines())


def _wrote(out, err):
    line = [s for s in err.splitlines() if s.startswith("wrote ")]
    assert line, err
    return int(line[-1].split()[1])


# python -m twostep at-scale: spike then reuse at N = 40, then both at N = 60; one seed, two
# batches: 8 tasks, a write after each, then one final write per file (10). A file is first
# written with its first record.
AT_SCALE = Run([PY, "-m", "twostep", "at-scale", "--backend", "numpy", "--widths", "40",
                "60", "--seeds", "spike=40:1", "--seeds", "reuse=40:1", "--only", "spike",
                "--only", "reuse"], "--out", None, tasks=8, writes=10,
               saved=lambda w: min(w, 8), new=_printed_tasks)
# python -m twostep: a write after each of the 2 tasks (the two batches), the final write (3);
# as at scale, no file before the first record. With -j 2 both tasks run at once.
CLI = [PY, "-m", "twostep", "two_steps", "-N", "20", "-g", "batch=reused,fresh", "-p", "top=2",
       "--no-progress"]


def _cli(jobs):
    return Run(CLI + ["-j", str(jobs)], "-o", "two.json", tasks=2, writes=3,
               saved=lambda w: min(w, 2), new=_wrote)


RUNS = {"at_scale": AT_SCALE, "cli": _cli(1), "cli -j 2": _cli(2)}


def _run(cmd, fault=None, tag=None):
    # Output to files, not pipes: a worker that outlived its killed run would hold a pipe
    # open and hang the test instead of failing it (the check of tagged() below).
    with open(os.devnull, "rb") as stdin, \
            tempfile.TemporaryFile("w+") as out, \
            tempfile.TemporaryFile("w+") as err:
        proc = subprocess.run(cmd, env=child_env(tag, **{FAULT_ENV: fault}), stdin=stdin,
                              stdout=out, stderr=err, timeout=300, cwd=ROOT)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(cmd, proc.returncode, out.read(), err.read())


def _no_survivor(tag, where):
    # Workers get SIGKILL from the kernel when their parent dies (PR_SET_PDEATHSIG): give it
    # a moment, then none may be left.
    for _ in range(100):
        if not tagged(tag):
            return
        time.sleep(0.05)
    raise AssertionError(f"{where}: processes of the killed run still alive: {tagged(tag)}")


def _docs(folder: Path) -> dict:
    """Every results file in ``folder``, read (and so checked) by read_results."""
    return {p.name: read_results(p) for p in sorted(folder.glob("*.json"))}


def _assert_same(doc, ref, where):
    assert doc["complete"] is True, where
    for key in ("grid", "seeds", "params", "seeds_per_width"):
        assert doc.get(key) == ref.get(key), f"{where}: {key}"
    assert len(doc["records"]) == len(ref["records"]), where
    for a, b in zip(doc["records"], ref["records"]):
        assert a.keys() == b.keys(), where
        for k in a.keys() - TIMING:
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{where}: {k}")


def _die_and_resume(name, run, ref, folder: Path, k: int, when: str) -> None:
    where = f"{name}, death {when} write {k}"
    folder.mkdir()
    tag = uuid.uuid4().hex
    res = _run(run.cmd(folder), fault=f"{k}:{when}", tag=tag)
    assert res.returncode == -signal.SIGKILL, f"{where}: did not die ({res.returncode}) {res.stderr}"
    if sys.platform.startswith("linux"):
        _no_survivor(tag, where)
    # What a death leaves: files that read, with every task saved before it and no other,
    # and (between the temporary file and its rename) the temporary file.
    docs = _docs(folder)
    saved = run.saved(k - (when == "before"))
    assert sum(len(d["records"]) for d in docs.values()) == saved, where
    assert set(docs) <= set(ref), where
    temporaries = [p.name for p in folder.iterdir() if p.suffix == ".tmp"]
    assert len(temporaries) == (when == "before"), f"{where}: {temporaries}"
    res = _run(run.cmd(folder, resume=True))
    assert res.returncode == 0, f"{where}: --resume failed: {res.stderr}"
    assert run.new(res.stdout, res.stderr) == run.tasks - saved, f"{where}: {res.stdout}{res.stderr}"
    docs = _docs(folder)
    assert set(docs) == set(ref), where
    for file in ref:
        _assert_same(docs[file], ref[file], f"{where}, {file}")
    assert not [p for p in folder.iterdir() if p.suffix == ".tmp"], where


#: Faults tried at once.
PARALLEL = min(2, os.cpu_count() or 1)


@pytest.mark.parametrize("name", list(RUNS))
def test_a_death_at_every_write_resumes_to_the_uninterrupted_records(name, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    run = RUNS[name]
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    res = _run(run.cmd(ref_dir), fault=f"{run.writes + 1}:before")
    assert res.returncode == 0, f"the run writes more than {run.writes} times: {res.stderr}"
    ref = _docs(ref_dir)
    assert sum(len(d["records"]) for d in ref.values()) == run.tasks
    assert all(d["complete"] for d in ref.values())
    faults = [(k, when) for k in range(1, run.writes + 1) for when in ("before", "after")]
    with ThreadPoolExecutor(PARALLEL) as pool:
        futures = [pool.submit(_die_and_resume, name, run, ref, tmp_path / f"{when}{k}", k, when)
                   for k, when in faults]
    errors = [f.exception() for f in futures if f.exception() is not None]
    if errors:
        raise errors[0]
    assert len(futures) == 2 * run.writes
    print(f"{name}: {len(faults)} injected faults, {len(faults) - len(errors)} resumed to "
          f"identical records")


def test_an_empty_file_of_the_old_at_scale_writer_resumes(tmp_path):
    # 00239c0's tools/at_scale.py wrote each file before its first task, with no record and
    # grid.N = []; a run killed then could never be resumed (read_results refused the file).
    ref_dir, cut = tmp_path / "ref", tmp_path / "cut"
    ref_dir.mkdir()
    cut.mkdir()
    assert _run(AT_SCALE.cmd(ref_dir)).returncode == 0
    ref = _docs(ref_dir)
    spike = json.loads((ref_dir / "spike.json").read_text())
    spike["records"] = [r for r in spike["records"] if r["N"] == 40]
    spike.update(complete=False, grid={"N": [40], "batch": spike["grid"]["batch"]}, seeds=[0],
                 seeds_per_width={"40": [0]})
    (cut / "spike.json").write_text(json.dumps(spike))
    empty = json.loads((ref_dir / "reuse.json").read_text())
    empty.update(records=[], complete=False, grid={"N": [], "batch": empty["grid"]["batch"]},
                 seeds=[], seeds_per_width={})
    (cut / "reuse.json").write_text(json.dumps(empty))
    assert read_results(cut / "reuse.json")["records"] == []
    res = _run(AT_SCALE.cmd(cut, resume=True))
    assert res.returncode == 0, res.stderr
    assert _printed_tasks(res.stdout, "") == 6
    docs = _docs(cut)
    for file in ref:
        _assert_same(docs[file], ref[file], file)


def test_a_malformed_fault_hook_is_an_error_not_a_survived_fault(tmp_path, monkeypatch):
    from twostep.scale.results import write_results
    for bad in ("x:before", "0:after", "3:during", "3"):
        monkeypatch.setenv(FAULT_ENV, bad)
        with pytest.raises(ValueError, match=f"{FAULT_ENV} must be K:before or K:after"):
            write_results(tmp_path / "r.json", "x", [])
    assert not list(tmp_path.iterdir())
