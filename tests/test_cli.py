"""``python -m twostep``: argument parsing, bad input, a run end to end, and the Dask path."""

import subprocess
import sys

import numpy as np
import pytest

from twostep import __version__, sweep
from twostep.scale.cli import build_parser, main, parse_bytes, parse_grid, parse_params, parse_seeds
from twostep.scale.results import read_results


def test_parsers():
    assert parse_params(["c1=0.3", "batch=fresh", "alphas=[0, 0.4]"]) == {
        "c1": 0.3, "batch": "fresh", "alphas": [0, 0.4]}
    assert parse_grid(["batch=reused,fresh", "alpha2=[0.1, 0.2]"]) == {
        "batch": ["reused", "fresh"], "alpha2": [0.1, 0.2]}
    assert parse_seeds(["0:3", "7"]) == [0, 1, 2, 7] and parse_seeds(None) == [0]
    assert parse_bytes("16G") == 16 * 2 ** 30 and parse_bytes("800MiB") == 800 * 2 ** 20
    for bad, func in (("c1", parse_params), ("=1", parse_grid)):
        with pytest.raises(ValueError, match="KEY=VALUE"):
            func([bad])
    with pytest.raises(ValueError, match="--seeds"):
        parse_seeds(["a:b"])
    with pytest.raises(ValueError, match="--max-memory"):
        parse_bytes("lots")


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
    assert len(doc["records"]) == 8 and doc["records"][0]["top"].shape == (2,)
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

    from twostep.scale.registry import run_experiment
    from functools import partial

    grid = {"N": [20, 30], "batch": ["reused", "fresh"]}
    func = partial(run_experiment, "two_steps", top=2)
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
        np.testing.assert_array_equal(a["top"], b["top"])
        np.testing.assert_array_equal(a["top"], c["top"])
        np.testing.assert_array_equal(a["overlap"], c["overlap"])


def test_device_backend_without_a_gpu_is_a_clear_error(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    with pytest.raises(SystemExit) as exit:
        main(["spike", "-N", "40", "--backend", "cupy", "-o", str(tmp_path / "r.json")])
    assert exit.value.code == 2 and "'cupy' is not installed" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["two_steps", "-N", "40", "--backend", "torch", "-o", str(tmp_path / "r.json")])
    assert "has no device path; --backend cupy|torch runs spike, reuse" in capsys.readouterr().err


@pytest.mark.parametrize("name, extra", [("spike", ["-p", "grid=[[0.4,0.25],[0.2,0.2]]"]),
                                         ("reuse", ["-p", "target=odd"])])
def test_device_backend_flow_on_the_host(name, extra, tmp_path, monkeypatch):
    # The --backend cupy|torch flow with the numpy backend standing in for the GPU: the task
    # loop, the device experiment, the results file with device and versions.
    from twostep.scale import backend
    monkeypatch.setattr(backend, "get_backend", lambda name: backend.Backend("numpy", np, "cpu"))
    out = tmp_path / f"{name}.json"
    assert main([name, "-N", "40", "-s", "0:2", "--backend", "torch", "-o", str(out)] + extra) == 0
    doc = read_results(out)
    assert doc["backend"] == "torch" and doc["environment"]["device"] == "cpu"
    assert doc["environment"]["numpy"] == np.__version__ and len(doc["records"]) == 2
    rec = doc["records"][0]
    assert rec["wall_s"] > 0 and rec["seed"] == 0
    if name == "spike":
        assert rec["grid_count"].shape == (2,) and rec["top"].shape == (4,)
    else:
        assert rec["subspace"].shape == (8, 1)
