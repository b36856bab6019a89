"""The bad-input and crash probes of issue 53, as tables of cases with their expected outcome.

Every case must end in a named, one-line error (``ValueError``/``TypeError``/``MemoryError``
naming the argument from the API; exit status 2 and one line ``<prog>: error: ...`` from
``python -m twostep`` and ``python -m twostep at-scale``), before any work and before any file:
never a traceback, a file with no record, or a task run before the refusal. The file probes
(truncated, wrong schema, non-finite literals) must leave the file as it was; the OS probes (a
full disk, a folder that turns read-only, one that forbids writing, an interrupt during a save)
must name the file and the records it holds, and that count must be what is on disk.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import resource
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

import twostep as ts
from twostep._validation import step_growth_limit
from twostep.scale import at_scale, results
from twostep.scale.cli import main
from twostep.scale.registry import check_task, experiment_params, run_task
from twostep.scale.results import ResultsWriter, read_results, write_results

from cli_processes import ROOT, child_env  # this folder's helper

HUGE = 10 ** 6
#: id -> (code, exception, message): the API probes; ``P`` is the path of a file that must not
#: appear, ``rng`` a generator that must not have been drawn from.
API = {
    "write: seed NaN": ("write_results(P, 'x', [{'seed': float('nan')}])", ValueError,
                        r"records\[0\].seed must be an integer >= 0, got nan"),
    "write: seed -1": ("write_results(P, 'x', [{'seed': -1}])", ValueError, r"seed must be an integer >= 0"),
    "write: N = 0": ("write_results(P, 'x', [{'seed': 0, 'N': 0}])", ValueError, r"N must be an integer >= 1"),
    "write: no seed": ("write_results(P, 'x', [{'N': 3}])", ValueError, r"records\[0\] lacks 'seed'"),
    "write: float d": ("write_results(P, 'x', [{'seed': 0, 'd': 0.5}])", ValueError, r"d must be an integer"),
    "write: seeds [-1]": ("write_results(P, 'x', [], seeds=[-1])", ValueError, r"seeds\[0\] must be"),
    "write: elapsed NaN": ("write_results(P, 'x', [], elapsed=float('nan'))", ValueError,
                           "field 'elapsed' must be a number"),
    "write: elapsed -1": ("write_results(P, 'x', [], elapsed=-1.0)", ValueError, "seconds >= 0"),
    "write: grid N = 5": ("write_results(P, 'x', [], grid={'N': 5})", ValueError, "grid.N must be"),
    "write: int-keyed record": ("write_results(P, 'x', [{1: 2}])", ValueError, "string keys"),
    "write: format overridden": ("write_results(P, 'x', [], format='other')", ValueError, "format"),
    "write: complex array": ("write_results(P, 'x', [{'seed': 0, 'z': np.ones(2) * 1j}])", TypeError,
                             "bool, integer and float arrays only"),
    "gaussian_inputs: memory": (f"ts.gaussian_inputs({HUGE}, {HUGE}, rng)", MemoryError,
                                "gaussian_inputs of shape .* needs about"),
    "initialise: memory": (f"ts.initialise({HUGE}, {HUGE}, rng)", MemoryError, "initialise at N="),
    "signal_overlap_experiment: memory": (
        f"ts.signal_overlap_experiment(rng, {HUGE}, {HUGE}, 'he1', 'reused')", MemoryError,
        "signal overlaps at n="),
    "learned_direction_overlaps: memory": (
        f"ts.learned_direction_overlaps({HUGE}, {HUGE}, [ts.hermite_link(1)], rng)", MemoryError,
        "learned direction overlaps at n="),
    "unknown activation is named activation": (
        "ts.spike_experiment(rng, N=20, activation='nope')", ValueError, "^activation must be one of"),
    "term above the degree is named term, before the draw": (
        "ts.reuse_experiment(rng, N=20, term=10)", ValueError, r"^term must be in \[0, L-1\]"),
}


@pytest.mark.parametrize("case", list(API))
def test_api_probe(case, tmp_path):
    code, error, message = API[case]
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(error, match=message):
        exec(code, {"ts": ts, "np": np, "rng": rng, "write_results": write_results,
                    "P": tmp_path / "r.json"})
    assert not list(tmp_path.iterdir()), "a file was written before the refusal"
    assert rng.bit_generator.state == state, "drawn from before the refusal"


#: id -> (arguments, message): python -m twostep, each with ``-o`` in an empty folder.
CLI = {
    "target null": (["two_steps", "-p", "target=null"], "target must be a Link"),
    "target 5": (["two_steps", "-p", "target=5"], "got 5"),
    "target [he1]": (["two_steps", "-p", 'target=["he1"]'], r"got \['he1'\]"),
    "target {}": (["two_steps", "-p", "target={}"], "got {}"),
    "spike c1 = 1e10 (float32)": (["spike", "-p", "c1=1e10"], "too large for float32"),
    "spike c1 = 1e6 (float32)": (["spike", "-p", "c1=1e6"], "stay finite in float32"),
    "two_steps c1 = 1e300": (["two_steps", "-p", "c1=1e300"], "c1 = 1e.300 and c2 = 0.2 are too large"),
    "two_steps c2 = 1e50 in a grid": (["two_steps", "-g", "c2=0.2,1e50"], "too large for float64"),
    "first_step steps c = 1e30": (["first_step", "-p", "steps=[[1e30, 0.4]]"], "steps' c = 1e.30"),
    "payoff c = 1e30": (["payoff", "-p", "c=1e30"], r"c = 1e\+30 is too large"),
    "reuse term = 10": (["reuse", "-p", "term=10"], r"term must be in \[0, L-1\] = \[0, 3\]"),
    "payoff n_train huge": (["payoff", "-p", "n_train=10000000000"], "needs about"),
    "payoff n_test huge": (["payoff", "-p", "n_test=10000000000"], "needs about"),
    "payoff n_train 0": (["payoff", "-p", "n_train=0"], "n_train must be an integer >= 1"),
    "unknown activation": (["two_steps", "-p", "activation=nope"], "activation must be one of"),
    "spike tanh": (["spike", "-p", "activation=tanh"], "polynomial activation"),
    "negative width": (["two_steps", "-N", "-20"], "N must be an integer >= 1"),
}


def _one_line_exit_2(capsys, call) -> str:
    with pytest.raises(SystemExit) as exit:
        call()
    err = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == 2 and len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("case", list(CLI))
def test_cli_probe(case, tmp_path, capsys):
    argv, message = CLI[case]
    argv = argv + ([] if "-N" in argv else ["-N", "20"])
    err = _one_line_exit_2(capsys, lambda: main(argv + ["-o", str(tmp_path / "r.json"),
                                                        "--no-progress"]))
    assert err.startswith("python -m twostep: error: ") and re.search(message, err), err
    assert not list(tmp_path.iterdir()), "a file was made before the refusal"


#: id -> (arguments, message): python -m twostep at-scale, each with ``--out`` an empty folder.
AT = {
    "widths 200 100000 (memory at the largest)": (
        ["--widths", "200", "100000", "--seeds", "spike=200:1"], "N=100000, .* needs about"),
    "--seeds without a count": (["--seeds", "spike=40"], r"'40' is not N:COUNT"),
    "--seeds of an unknown file": (["--seeds", "nonsense=40:1"], "--seeds wants NAME=N:COUNT"),
    "--seeds count not an integer": (["--seeds", "spike=40:x"], "is not N:COUNT"),
    "--seeds negative width": (["--seeds", "spike=-40:1"], "width N >= 8"),
    "--seeds width twice": (["--seeds", "spike=40:1,40:2"], "not listed before"),
    "--seeds count above the cap": (["--seeds", "spike=40:100000000"], r"COUNT in \[1, 10000\]"),
    "--widths repeated": (["--widths", "40", "40"], "each once, got 40 40"),
    "--widths negative": (["--widths", "-40"], "integers >= 8"),
    "no seed count at a width": (["--widths", "40", "--seeds", "spike=80:1"], "no seed count for spike at N = 40"),
    "cupy not installed": (["--backend", "cupy"], "backend 'cupy'"),
    "torch not installed": (["--backend", "torch"], "backend 'torch'"),
    "--resume and --force": (["--resume", "--force"], "give one"),
    "count_confirm with --seeds": (["--only", "count_confirm", "--seeds", "count_confirm=40:1"],
                                   "registry, not from --seeds"),
}


@pytest.mark.parametrize("case", list(AT))
def test_at_scale_probe(case, tmp_path, capsys, monkeypatch):
    argv, message = AT[case]
    if case.endswith("installed"):
        name = argv[1]
        with contextlib.suppress(ImportError):
            __import__(name)
            pytest.skip(f"{name} is installed here")
    monkeypatch.setattr(at_scale, "measure", lambda *a, **k: pytest.fail("a task ran"))
    argv = (["--backend", "numpy", "--only", "spike"] + (["--widths", "40"] if "--widths" not in argv else [])
            + (["--seeds", "spike=40:1"] if "--seeds" not in argv else []) + argv)
    out = tmp_path / "out"
    err = _one_line_exit_2(capsys, lambda: main(["at-scale"] + argv + ["--out", str(out)]))
    assert err.startswith("python -m twostep at-scale: error: "), err
    assert re.search(message, err), err
    assert not out.exists() or not list(out.iterdir()), "a file was made before the refusal"


# --- files: what --resume is given --------------------------------------------------------

BASE = ["two_steps", "-N", "20", "-p", "top=2", "-g", "batch=reused,fresh", "--no-progress"]
AT_BASE = ["at-scale", "--backend", "numpy", "--widths", "40", "--seeds", "spike=40:1",
           "--only", "spike"]
#: id -> (edit of the JSON text, message)
FILES = {
    "truncated": (lambda t: t[: len(t) // 2], "invalid JSON"),
    "elapsed NaN": (lambda t: t.replace('"elapsed": ', '"elapsed": NaN, "x": '), "a bare NaN"),
    "elapsed Infinity": (lambda t: t.replace('"elapsed": ', '"elapsed": Infinity, "x": '), "a bare Infinity"),
    "elapsed 1e999": (lambda t: t.replace('"elapsed": ', '"elapsed": 1e999, "x": '), "1e999 overflows"),
    "schema 2": (lambda t: t.replace('"schema": 1', '"schema": 2'), "field 'schema' is 2"),
    "format": (lambda t: t.replace('"twostep-results"', '"other"'), "not a twostep results file"),
    "records not a list": (lambda t: t[: t.index('"records"')] + '"records": {}}', "'records' must be a list"),
    "newer version": (lambda t: t.replace('"version": "', '"version": "99.'), "newer than this twostep"),
}


def _made(tool, tmp_path) -> tuple:
    out = tmp_path / "r.json" if tool == "cli" else tmp_path
    argv = (BASE + ["-o", str(out)]) if tool == "cli" else (AT_BASE + ["--out", str(out)])
    assert main(argv) == 0
    return argv, (out if tool == "cli" else tmp_path / "spike.json")


@pytest.mark.parametrize("tool", ["cli", "at-scale"])
@pytest.mark.parametrize("case", list(FILES))
def test_resume_of_a_damaged_file_is_refused_and_leaves_it(case, tool, tmp_path, capsys):
    argv, path = _made(tool, tmp_path)
    edit, message = FILES[case]
    path.write_text(edit(path.read_text()))
    before = path.read_bytes()
    capsys.readouterr()
    err = _one_line_exit_2(capsys, lambda: main(argv + ["--resume"]))
    assert message in err and str(path) in err, err
    assert path.read_bytes() == before


@pytest.mark.parametrize("tool", ["cli", "at-scale"])
def test_resume_drops_a_duplicated_record_and_says_so(tool, tmp_path, capsys):
    argv, path = _made(tool, tmp_path)
    doc = json.loads(path.read_text())
    first = doc["records"][0]
    doc["records"].insert(1, {**first, "x": 1})   # a second record of the first task
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(argv + ["--resume"]) == 0
    assert "held 1 duplicate record(s)" in capsys.readouterr().err
    recs = read_results(path)["records"]
    assert len(recs) == 2 and "x" not in recs[0] and "x" not in recs[1]


# --- the operating system refuses a write mid-run -------------------------------------------

def _mount(tmp_path, size="1m") -> Path:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    folder = tmp_path / f"tmpfs-{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                         capture_output=True, text=True)
    if res.returncode:
        pytest.skip(f"cannot mount a tmpfs here ({res.stderr.strip()})")
    return folder


def _fill(folder: Path):
    with open(folder / "filler", "wb") as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 65536)
            fh.flush()


def _remount_ro(folder: Path):
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)


def _forbid(monkeypatch):
    def refuse(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")
    monkeypatch.setattr(results.os, "replace", refuse)


#: what happens after the first save -> (needs a tmpfs, message)
OS_ERRORS = {"disk full (ENOSPC)": (_fill, "No space left on device"),
             "read-only (EROFS)": (_remount_ro, "Read-only file system"),
             "forbidden (EACCES)": (None, "Permission denied")}


@pytest.mark.parametrize("tool", ["cli", "at-scale"])
@pytest.mark.parametrize("case", list(OS_ERRORS))
def test_an_os_error_mid_run_names_the_file_and_what_it_holds(case, tool, tmp_path, capsys,
                                                               monkeypatch):
    after, message = OS_ERRORS[case]
    folder = _mount(tmp_path) if after else tmp_path / "out"
    folder.mkdir(exist_ok=True)
    save = ResultsWriter.save

    def save_then_fail(self, **kw):
        path = save(self, **kw)
        if after:
            after(folder)
        else:
            _forbid(monkeypatch)
        return path

    monkeypatch.setattr(ResultsWriter, "save", save_then_fail)
    try:
        out = folder / "r.json" if tool == "cli" else folder
        argv = (BASE + ["-s", "0:3", "-o", str(out)] if tool == "cli"
                else AT_BASE[:-3] + ["spike=40:3", "--only", "spike", "--out", str(out)])
        err = _one_line_exit_2(capsys, lambda: main(argv))
        path = out if tool == "cli" else folder / "spike.json"
        assert f"cannot write {path} ({message}); it holds the 1 record(s) saved before" in err, err
        assert len(read_results(path)["records"]) == 1
    finally:
        if after:
            subprocess.run(["umount", "-l", str(folder)])


def test_a_full_disk_at_the_start_is_refused_before_work(tmp_path, capsys):
    folder = _mount(tmp_path, "64k")
    try:
        _fill(folder)
        err = _one_line_exit_2(capsys, lambda: main(BASE + ["-o", str(folder / "r.json")]))
        assert "cannot hold a new file (No space left on device)" in err
        err = _one_line_exit_2(capsys, lambda: main(AT_BASE + ["--out", str(folder)]))
        assert "cannot hold a new file (No space left on device)" in err
    finally:
        subprocess.run(["umount", "-l", str(folder)])


@pytest.mark.parametrize("tool", ["cli", "at-scale"])
def test_an_interrupt_during_a_save_counts_only_what_is_on_disk(tool, tmp_path, capsys,
                                                                monkeypatch):
    calls = []
    replace = results.os.replace

    def interrupted(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt   # Ctrl-C during the second save, before its rename
        return replace(src, dst)

    monkeypatch.setattr(results.os, "replace", interrupted)
    out = tmp_path / "r.json" if tool == "cli" else tmp_path
    argv = (BASE + ["-o", str(out)]) if tool == "cli" else (AT_BASE + ["--out", str(out)])
    with pytest.raises(SystemExit) if tool == "cli" else contextlib.nullcontext():
        assert main(argv) == 130
    err = capsys.readouterr().err.strip().splitlines()
    path = out if tool == "cli" else tmp_path / "spike.json"
    assert len(err) == 1 and f"interrupted: 1 record(s)" in err[0] and str(path) in err[0], err
    assert len(read_results(path)["records"]) == 1
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob("*.lock"))


# --- limits of the machine, and of the step sizes -------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["two_steps", "-N", "12000", "-p", "top=2", "--no-progress", "-o", "{out}/r.json"], "needs about"),
    (["at-scale", "--backend", "numpy", "--only", "spike", "--widths", "9000", "--seeds",
      "spike=9000:1", "--out", "{out}"], "needs about"),
])
def test_ulimit_v_is_the_memory_limit(argv, message, tmp_path):
    # An address space of 3 GiB: the tasks' estimates (6-8 GiB) fit the machine, not the limit.
    limit = 3 * 2 ** 30
    argv = [a.format(out=tmp_path) for a in argv]
    res = subprocess.run([sys.executable, "-m", "twostep"] + argv, env=child_env(), cwd=ROOT,
                         capture_output=True, text=True, timeout=300,
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    err = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(err) == 1, res.stderr
    assert message in err[0] and "RLIMIT_AS (ulimit -v)" in err[0], err
    assert not list(tmp_path.glob("*.json"))


#: name -> step constants at the bound g (check_step_growth: poly4's derivative has degree 3;
#: the payoff's features raise the growth to the 4th power)
STEP_CASES = {"two_steps": [lambda g: dict(c1=g ** (1 / 3), c2=1.0, top=2),
                            lambda g: dict(c1=1.0, c2=g, top=2)],
              "spike": [lambda g: dict(c1=g ** (1 / 3), c2=1.0), lambda g: dict(c1=1.0, c2=g)],
              "reuse": [lambda g: dict(c1=g ** (1 / 3), c2=1.0, top=2),
                        lambda g: dict(c1=1.0, c2=g, top=2)],
              "first_step": [lambda g: dict(steps=[[g ** (1 / 3), 0.4]], top=2)],
              "payoff": [lambda g: dict(c=g ** (1 / 16))]}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(STEP_CASES))
def test_the_step_size_bound_keeps_every_experiment_finite(name, dtype):
    # At the bound every value computed is finite and no intermediate overflows (numpy's
    # overflow warning is an error here); 1% above it, the task is refused.
    import warnings
    g = step_growth_limit(dtype)
    for case in STEP_CASES[name]:
        p = {"N": 40, "dtype": dtype, **case(g * 0.999)}
        check_task(name, experiment_params(name, p))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = run_task(name, np.random.default_rng(0), **p)
        for key, value in out.items():
            assert np.all(np.isfinite(np.asarray(value, float))), f"{name} {dtype}: {key}"
        with pytest.raises(ValueError, match=f"stay finite in {dtype}"):
            check_task(name, experiment_params(name, {"N": 40, "dtype": dtype, **case(g * 1.05)}))
