"""``python -m twostep``: argument parsing, bad input, a run end to end, and the Dask path."""

import subprocess
import sys

import numpy as np
import pytest

from twostep import __version__, sweep
from twostep._validation import parse_size
from twostep.scale.cli import build_parser, main, parse_grid, parse_params, parse_seeds
from twostep.scale.results import read_results



def default_sigint():
    # A run started in the background (nohup, `&` without job control, some CI runners)
    # inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler: give the
    # child the default disposition, as a terminal would, so that the signal is delivered.
    signal.signal(signal.SIGINT, signal.SIG_DFL)

def test_parsers():
    assert parse_params(["c1=0.3", "batch=fresh", "alphas=[0, 0.4]"]) == {
        "c1": 0.3, "batch": "fresh", "alphas": [0, 0.4]}
    assert parse_grid(["batch=reused,fresh", "alpha2=[0.1, 0.2]"]) == {
        "batch": ["reused", "fresh"], "alpha2": [0.1, 0.2]}
    assert parse_seeds(["0:3", "7"]) == [0, 1, 2, 7] and parse_seeds(None) == [0]
    assert parse_size("16G", "--max-memory") == 16 * 2 ** 30
    assert parse_size("800MiB", "--max-memory") == 800 * 2 ** 20
    for bad, func in (("c1", parse_params), ("=1", parse_grid)):
        with pytest.raises(ValueError, match="KEY=VALUE"):
            func([bad])
    with pytest.raises(ValueError, match="--seeds"):
        parse_seeds(["a:b"])
    with pytest.raises(ValueError, match="--max-memory"):
        parse_size("lots", "--max-memory")


def test_help_lists_experiments(capsys):
    with pytest.raises(SystemExit) as exit:
        build_parser().parse_args(["--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    for name in ("two_steps", "first_step", "spike", "reuse", "payoff", "dask", "--scheduler"):
        assert name in out


@pytest.mark.parametrize("argv, message", [
    (["three_steps"], "experiment must be one of"),
    (["two_steps", "-N", "300000"], "needs about"),
    (["two_steps", "-N", "2000", "--max-memory", "10M"], "max_memory is 10.0 MiB"),
    (["two_steps", "-p", "N=10", "-N", "10"], "both by --param and --grid"),
    (["two_steps", "--backend", "dask"], "needs --scheduler"),
    (["two_steps", "-N", "10", "-p", "batch=twice"], "batch must be one of"),
    (["two_steps", "-N", "10", "-g", "nonsense=1,2"],
     "has no parameter 'nonsense'; it accepts N, activation, alpha1, alpha2, batch, c1, c2"),
    (["spike", "-N", "10", "-p", "link=he1"], "has no parameter 'link'"),
])
def test_bad_input_is_a_clear_error(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("TWOSTEP_DASK_SCHEDULER", raising=False)
    with pytest.raises(SystemExit) as exit:
        main(argv + ["-o", str(tmp_path / "r.json"), "--no-progress"])
    assert exit.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_help_lists_every_parameter_with_its_default(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    out = capsys.readouterr().out
    for text in ('batch="reused"', 'activation="poly4"', 'target="he1"', "c1=0.2", "alpha2=0.25",
                 'dtype="float64"', "n_top=6", "alpha2s=[0.25]"):
        assert text in out


def test_output_in_a_missing_folder_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["two_steps", "-N", "10", "-o", str(tmp_path / "no" / "such" / "r.json"),
              "--no-progress"])
    assert exit.value.code == 2 and "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()


def test_results_record_every_effective_parameter_and_the_command(tmp_path):
    out = tmp_path / "two.json"
    argv = ["two_steps", "-N", "20", "-g", "batch=fresh", "-p", "top=2", "-o", str(out),
            "--no-progress"]
    assert main(argv) == 0
    doc = read_results(out)
    assert doc["params"]["top"] == 2 and doc["params"]["c2"] == 0.2
    assert doc["params"]["activation"] == "poly4" and doc["params"]["alpha1"] == 0.4
    assert doc["grid"] == {"N": [20], "batch": ["fresh"]}
    assert doc["command"] == "python -m twostep " + " ".join(argv)


def test_end_to_end_writes_a_readable_file(tmp_path):
    out = tmp_path / "two.json"
    assert main(["two_steps", "-N", "30", "40", "-g", "batch=reused,fresh", "-s", "0:2",
                 "-p", "top=2", "-o", str(out), "--no-progress"]) == 0
    doc = read_results(out)
    assert doc["version"] == __version__ and doc["experiment"] == "two_steps"
    assert doc["grid"] == {"N": [30, 40], "batch": ["reused", "fresh"]}
    assert doc["params"]["top"] == 2 and doc["seeds"] == [0, 1]
    # top is the parameter (2); the values found are top_values (registry renames)
    assert len(doc["records"]) == 8 and doc["records"][0]["top"] == 2
    assert doc["records"][0]["top_values"].shape == (2,)
    assert doc["environment"]["blas_threads"] is not None and doc["complete"] is True
    assert doc["estimated_bytes"] > 0 and doc["backend"] == "loky"


def test_module_entry_point():
    res = subprocess.run([sys.executable, "-m", "twostep", "--list"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0 and "two_steps" in res.stdout


def _where(rng):
    # Which process/worker ran the task, next to a number drawn from its generator.
    from distributed import get_worker
    try:
        worker = get_worker().name
    except ValueError:
        worker = None
    return {"worker": worker, "x": rng.standard_normal()}


def test_dask_cluster_gives_the_serial_results(tmp_path):
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install 'dask[distributed]')")
    import joblib

    from twostep.scale.registry import run_task
    from functools import partial

    grid = {"N": [20, 30], "batch": ["reused", "fresh"]}
    func = partial(run_task, "two_steps", top=2)
    serial = sweep(func, grid, seeds=[0, 1], progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  protocol="tcp", host="127.0.0.1",
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        with joblib.parallel_config(backend="dask"):
            on_dask = sweep(func, grid, seeds=[0, 1], n_jobs=2, progress=False)
            workers = sweep(_where, None, seeds=range(4), n_jobs=2, progress=False)
        # the command line's path: --backend dask --scheduler ADDRESS
        out = tmp_path / "dask.json"
        assert main(["two_steps", "-N", "20", "30", "-g", "batch=reused,fresh", "-s", "0", "1",
                     "-p", "top=2", "--backend", "dask", "--scheduler", cluster.scheduler_address,
                     "-o", str(out), "--no-progress"]) == 0
        assert client.status == "running"
    assert all(w["worker"] is not None for w in workers)  # the tasks really ran on Dask workers
    from_cli = read_results(out)["records"]
    assert len(serial) == len(on_dask) == len(from_cli) == 8
    for a, b, c in zip(serial, on_dask, from_cli):
        assert (a["N"], a["batch"], a["seed"]) == (b["N"], b["batch"], b["seed"]) == (
            c["N"], c["batch"], c["seed"])
        np.testing.assert_array_equal(a["top_values"], b["top_values"])
        np.testing.assert_array_equal(a["top_values"], c["top_values"])
        np.testing.assert_array_equal(a["overlap"], c["overlap"])


# --- the results file: no silent overwrite, checkpoints, resume, interrupts ----------------

import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402

from cli_processes import ROOT, child_env, tagged  # noqa: E402  (this folder's helper)


def _count(path) -> int:
    try:
        return len(json.loads(Path(path).read_text())["records"])
    except (OSError, ValueError, KeyError):
        return 0


def _kill_after(cmd, path, records, tag, sig=signal.SIGKILL, timeout=120):
    """Start ``cmd``, wait until ``path`` holds ``records`` records, send ``sig``; return the
    process (waited for) and the count the file held just before the signal."""
    proc = subprocess.Popen(cmd, env=child_env(tag), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, preexec_fn=default_sigint)
    deadline = time.monotonic() + timeout
    while _count(path) < records:
        assert proc.poll() is None, f"the run ended before it could be stopped: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.005)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    return proc


SWEEP = ["two_steps", "-N", "40", "80", "120", "160", "-g", "batch=reused,fresh", "-s", "0:4",
         "-p", "top=2", "--no-progress"]


def _records(path):
    # wall-clock entries aside, everything a record stores must be equal
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in read_results(path)["records"]]


def _assert_same_records(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.keys() == y.keys()
        for k in x:
            np.testing.assert_array_equal(x[k], y[k], err_msg=k)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_killed_sweep_resumes_to_the_uninterrupted_records(tmp_path, jobs):
    whole, cut = tmp_path / "whole.json", tmp_path / "cut.json"
    cmd = [sys.executable, "-m", "twostep"] + SWEEP + ["-j", str(jobs)]
    subprocess.run(cmd + ["-o", str(whole)], env=child_env(), check=True, capture_output=True,
                   timeout=300, cwd=ROOT)
    tag = uuid.uuid4().hex
    proc = _kill_after(cmd + ["-o", str(cut)], cut, 3, tag)
    assert proc.returncode == -signal.SIGKILL
    kept = _count(cut)
    assert 3 <= kept < 32, "killed mid-way: some tasks saved, not all"
    # no worker outlives its killed parent (PR_SET_PDEATHSIG); give the kernel a moment
    for _ in range(100):
        if not tagged(tag):
            break
        time.sleep(0.05)
    assert not tagged(tag), f"processes of the killed run still alive: {tagged(tag)}"
    assert not read_results(cut)["complete"]
    res = subprocess.run(cmd + ["-o", str(cut), "--resume"], env=child_env(), capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert f"wrote {32 - kept} new record(s), 32 in all" in res.stderr
    doc = read_results(cut)
    assert doc["complete"] and len(doc["commands"]) == 2
    _assert_same_records(_records(cut), _records(whole))


#: A sweep long enough (200 tasks at N = 600, seconds in all) that a signal sent after its
#: second checkpoint always lands mid-way, however fast the machine: SWEEP's 32 small tasks
#: can all finish in the milliseconds a signal takes to arrive.
SLOW_SWEEP = ["two_steps", "-N", "600", "-g", "batch=reused,fresh", "-s", "0:100", "-p", "top=2",
              "--no-progress"]


def test_ctrl_c_saves_the_finished_tasks_with_one_line(tmp_path):
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "twostep"] + SLOW_SWEEP + ["-j", "2", "-o", str(out)]
    tag = uuid.uuid4().hex
    proc = _kill_after(cmd, out, 2, tag, sig=signal.SIGINT)
    err = proc.stderr.read().strip().splitlines()
    assert proc.returncode == 130 and len(err) == 1, err
    assert "interrupted:" in err[0] and "--resume" in err[0] and str(out) in err[0]
    assert 2 <= len(read_results(out)["records"]) < 200
    for _ in range(100):
        if not tagged(tag):
            break
        time.sleep(0.05)
    assert not tagged(tag)


def test_existing_output_needs_force_or_resume(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["two_steps", "-N", "20", "-p", "top=2", "-o", str(out), "--no-progress"]
    assert main(argv) == 0
    before = out.read_bytes()
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    assert "exists; --resume continues it, --force overwrites it" in capsys.readouterr().err
    assert out.read_bytes() == before
    assert main(argv + ["--force"]) == 0
    assert main(argv + ["--resume"]) == 0 and "wrote 0 new record(s), 1 in all" in capsys.readouterr().err


def test_resume_never_drops_records_and_extends_seeds(tmp_path, capsys):
    out = tmp_path / "r.json"
    base = ["two_steps", "-N", "20", "-p", "top=2", "-o", str(out), "--no-progress"]
    assert main(base + ["-s", "0:3"]) == 0
    assert main(base + ["-s", "3:5", "--resume"]) == 0   # more seeds: 5 records
    assert main(base + ["-s", "0", "--resume"]) == 0     # fewer: none dropped
    doc = read_results(out)
    assert [r["seed"] for r in doc["records"]] == [0, 1, 2, 3, 4] and doc["seeds"] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("edit, named", [
    (lambda d: d["params"].__setitem__("c1", 0.3), "params.c1 is 0.3 in the file, 0.2 here"),
    (lambda d: d.__setitem__("version", "0.0.9"), "version is \"0.0.9\" in the file"),
    (lambda d: d.__setitem__("experiment", "first_step"), "experiment is \"first_step\""),
    (lambda d: d.__setitem__("backend", "dask"), "backend is \"dask\" in the file, \"loky\" here"),
    (lambda d: d.__setitem__("grid", {"N": [20], "batch": ["fresh"]}), "swept parameters"),
])
def test_resume_refuses_an_edited_or_foreign_file(tmp_path, capsys, edit, named):
    out = tmp_path / "r.json"
    argv = ["two_steps", "-N", "20", "-p", "top=2", "-o", str(out), "--no-progress"]
    assert main(argv) == 0
    doc = json.loads(out.read_text())
    edit(doc)
    for r in doc["records"]:
        r.setdefault("batch", "fresh")
    out.write_text(json.dumps(doc))
    before = out.read_bytes()
    with pytest.raises(SystemExit) as exit:
        main(argv + ["--resume"])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "cannot resume" in err and named in err, err
    assert out.read_bytes() == before


def test_resume_refuses_an_at_scale_file(tmp_path, capsys):
    out = tmp_path / "spike.json"
    out.write_bytes((ROOT / "results" / "at_scale" / "reuse.json").read_bytes())
    with pytest.raises(SystemExit):
        main(["spike", "-N", "20", "-o", str(out), "--resume", "--no-progress"])
    err = capsys.readouterr().err
    assert "cannot resume" in err and 'experiment is "reuse" in the file, "spike" here' in err


@pytest.mark.parametrize("target, message", [
    ("folder", "is a folder"), ("readonly/r.json", "cannot hold a new file")])
def test_bad_output_is_refused_before_work(tmp_path, capsys, monkeypatch, target, message):
    (tmp_path / "folder").mkdir()
    (tmp_path / "readonly").mkdir()
    os.chmod(tmp_path / "readonly", 0o500)
    try:
        if os.access(tmp_path / "readonly", os.W_OK) and message == "cannot hold a new file":
            pytest.skip("running as a user who can write anywhere (root)")
        calls = _count_tasks(monkeypatch)
        with pytest.raises(SystemExit) as exit:
            main(["two_steps", "-N", "2000", "-s", "0:50", "-o", str(tmp_path / target),
                  "--no-progress"])
        assert exit.value.code == 2 and message in capsys.readouterr().err
        assert calls == []   # refused before the 50 tasks at N = 2000
    finally:
        os.chmod(tmp_path / "readonly", 0o700)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_an_output_folder_that_cannot_hold_a_file_is_refused_before_work(capsys, monkeypatch):
    # /proc exists, and os.access says root may write there, but no file can be created in it:
    # a one-line error before any task, not the temporary file's FileNotFoundError.
    calls = _count_tasks(monkeypatch)
    with pytest.raises(SystemExit) as exit:
        main(["two_steps", "-N", "2000", "-s", "0:50", "-o", "/proc/twostep.json",
              "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == 2 and len(err) == 1, err
    assert "output folder /proc cannot hold a new file" in err[0]
    assert calls == []


def test_the_task_counter_sees_the_tasks_that_run(tmp_path, monkeypatch):
    calls = _count_tasks(monkeypatch)
    main(["two_steps", "-N", "20", "-s", "0:2", "-o", str(tmp_path / "t.json"), "--no-progress"])
    assert len(calls) == 2 and all(c["N"] == 20 for c in calls)


def _count_tasks(monkeypatch) -> list:
    # A stand-in for the two_steps experiment that records each call (the CLI runs tasks in
    # this process with its default --jobs 1) and then runs the experiment.
    import dataclasses
    import functools

    from twostep.scale import registry

    calls, original = [], registry.EXPERIMENTS["two_steps"]

    @functools.wraps(original.func)
    def counting(*args, **kwargs):
        calls.append(kwargs)
        return original.func(*args, **kwargs)

    monkeypatch.setitem(registry.EXPERIMENTS, "two_steps",
                        dataclasses.replace(original, func=counting))
    return calls


@pytest.mark.parametrize("argv, message", [
    (["-s", "-3:2"], "--seeds must lie in [0, 2**63), got '-3:2'"),
    (["--max-memory", "-5G"], "--max-memory must be a positive finite size"),
    (["-s", "0:1000000000"], "gives 1000000000 seeds; at most 1000000"),
    (["-s", "5:2"], "needs STOP > START"),
    (["-s", "0:3", "2"], "lists a seed twice"),
    (["-N", "20", "-g", "N=24"], "N is given by both -N and --grid"),
    (["-N", "20", "-g", "seed=1,2"], "seed is not a parameter"),
    (["-N", "-20"], "N must be an integer >= 1, got -20"),
    (["-N", "20", "-g", "top=2,40"], "top must be in [1, min(N, d) - 1] = [1, 19], got 40"),
    (["-N", "20", "-g", "c1=0.2,-1"], "c1 must be in (0.0, inf]"),
    (["-N", "20", "-g", "alpha2=0.25,0.6"], "alpha2 must be in [0.0, 0.5)"),
    (["-N", "20", "-p", "target=he9"], "got 'he9'"),
    (["-N", "20", "-p", "dtype=foo"], "dtype must be one of"),
    (["-N", "20", "-g", "batch=fresh,fresh"], "lists a value twice"),
])
def test_bad_values_are_named_before_any_task(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["two_steps"] + argv + ["-o", str(tmp_path / "r.json"), "--no-progress"])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert not (tmp_path / "r.json").exists()


def test_spike_grid_values_are_checked_before_the_first_task(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["spike", "-N", "40", "-g", "n_top=3,400", "-s", "0:40", "-o",
              str(tmp_path / "r.json"), "--no-progress"])
    assert "n_top must be in [1, N - 2] = [1, 38], got 400" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
    with pytest.raises(SystemExit):
        main(["spike", "-N", "40", "-p", "activation=tanh", "-o", str(tmp_path / "r.json")])
    assert "polynomial activation" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["two_steps", "first_step"])
def test_a_swept_parameter_is_never_overwritten_by_a_result(name, tmp_path):
    out = tmp_path / "r.json"
    grid = "top=1,2"
    assert main([name, "-N", "30", "-g", grid, "-o", str(out), "--no-progress"]) == 0
    recs = read_results(out)["records"]
    assert [r["top"] for r in recs] == [1, 2]
    assert all(isinstance(r["top_values"], (np.ndarray, float)) for r in recs)


def test_every_registered_rename_is_free_and_results_never_take_a_parameter_name():
    from twostep.scale.registry import EXPERIMENTS, Experiment
    with pytest.raises(ValueError, match="would take a parameter's name"):
        Experiment("bad", EXPERIMENTS["two_steps"].func, renames={"top": "N"})
    for exp in EXPERIMENTS.values():
        assert not set(exp.renames.values()) & set(exp.parameters())


def test_serial_and_parallel_runs_agree(tmp_path):
    # N = 300: large enough that OpenBLAS splits products into blocks. On one BLAS thread in
    # every process (as joblib's workers run on this 2-core machine) serial and -j 2 are
    # identical; with the serial run on 2 threads they differ at rounding level (measured
    # 2026-12-01: at most 1.8e-15 relative, singular values and overlaps), hence rtol 1e-12.
    from threadpoolctl import threadpool_limits
    argv = ["two_steps", "-N", "300", "-g", "batch=reused,fresh", "-s", "0:2", "-p", "top=2",
            "--no-progress"]
    assert main(argv + ["-j", "2", "-o", str(tmp_path / "par.json")]) == 0
    par = read_results(tmp_path / "par.json")
    with threadpool_limits(1):
        assert main(argv + ["-o", str(tmp_path / "one.json")]) == 0
    assert main(argv + ["-o", str(tmp_path / "ser.json")]) == 0
    _assert_same_records(_records(tmp_path / "one.json"), _records(tmp_path / "par.json"))
    ser = _records(tmp_path / "ser.json")
    for a, b in zip(ser, _records(tmp_path / "par.json")):
        np.testing.assert_allclose(a["top_values"], b["top_values"], rtol=1e-12)
        np.testing.assert_allclose(a["overlap"], b["overlap"], rtol=1e-12, atol=1e-15)
    workers = par["environment"]["worker_blas_threads"]
    assert all(n == max(os.cpu_count() // 2, 1) for n in workers.values())


def test_the_subcommands_dispatch(capsys):
    for sub, prog in (("at-scale", "python -m twostep at-scale"), ("verify", "twostep verify")):
        with pytest.raises(SystemExit) as exit:
            main([sub, "--help"])
        assert exit.value.code == 0 and capsys.readouterr().out.startswith(f"usage: {prog}")
