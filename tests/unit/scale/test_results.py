"""Results files: arrays, floats and metadata round-trip exactly."""

import json
import stat

import numpy as np
import pytest

import twostep as ts
from twostep.scale.results import read_results, write_results



def default_sigint():
    # A run started in the background (nohup, `&` without job control, some CI runners)
    # inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler: give the
    # child the default disposition, as a terminal would, so that the signal is delivered.
    signal.signal(signal.SIGINT, signal.SIG_DFL)

def test_round_trip_is_exact(tmp_path):
    rng = np.random.default_rng(0)
    records = [{"N": 10, "seed": 0, "x": float(rng.standard_normal()),
                "v": rng.standard_normal((2, 3)), "k": np.arange(3), "f32": np.float32(0.1),
                "inf": float("inf"), "nan": np.nan, "name": "he1"}]
    path = write_results(tmp_path / "sub" / "r.json", "two_steps", records,
                         params={"c1": 0.2}, grid={"N": [10]}, seeds=[0], elapsed=1.5)
    doc = read_results(path)
    assert doc["version"] == ts.__version__ and doc["experiment"] == "two_steps"
    assert doc["params"] == {"c1": 0.2} and doc["grid"] == {"N": [10]} and doc["seeds"] == [0]
    r = doc["records"][0]
    assert r["x"] == records[0]["x"]
    np.testing.assert_array_equal(r["v"], records[0]["v"])
    assert r["v"].dtype == np.float64 and r["k"].dtype == records[0]["k"].dtype
    assert r["inf"] == float("inf") and np.isnan(r["nan"]) and r["name"] == "he1"


def test_bad_input_and_foreign_files(tmp_path):
    with pytest.raises(ValueError, match="experiment"):
        write_results(tmp_path / "r.json", "", [])
    with pytest.raises(TypeError, match="records"):
        write_results(tmp_path / "r.json", "x", {"a": 1})
    with pytest.raises(TypeError, match="cannot store"):
        write_results(tmp_path / "r.json", "x", [{"a": object()}])
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"a": 1}))
    with pytest.raises(ValueError, match="not a twostep results file"):
        read_results(other)
    other.write_text("{not json")
    with pytest.raises(ValueError, match="not a twostep results file"):
        read_results(other)


def test_float32_scalars_and_integer_keys_round_trip(tmp_path):
    records = [{"N": 10, "seed": 0, "f32": np.float32(0.1), "i32": np.int32(7),
                "by_width": {1000: [0, 1], 2000: [0]}, "b": np.bool_(True)}]
    doc = read_results(write_results(tmp_path / "r.json", "x", records))
    r = doc["records"][0]
    assert type(r["f32"]) is np.float32 and r["f32"] == np.float32(0.1)
    assert type(r["i32"]) is np.int32 and r["i32"] == 7
    assert r["by_width"] == {1000: [0, 1], 2000: [0]} and r["b"] is True
    assert doc["schema"] == 1 and "blas_threads" in doc["environment"]


def test_the_committed_files_still_read(tmp_path):
    # Every committed file reads, whichever writer made it; one written before the schema field
    # (twostep 0.1.0's first writer) reads as schema 1.
    from pathlib import Path
    folder = Path(__file__).resolve().parents[3] / "results" / "at_scale"
    for path in sorted(folder.glob("*.json")):
        doc = read_results(path)
        assert doc["experiment"] == path.stem and doc["records"]
    old = json.loads((folder / "reuse.json").read_text())
    old.pop("schema", None)
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert read_results(tmp_path / "old.json")["records"]


def _good():
    return {"format": "twostep-results", "version": ts.__version__, "experiment": "x",
            "params": {}, "grid": {"N": [10]}, "seeds": [0],
            "records": [{"N": 10, "seed": 0, "v": {"__ndarray__": [1.0, 2.0], "dtype": "float64",
                                                   "shape": [2]}}]}


@pytest.mark.parametrize("edit, field", [
    (lambda d: d.__setitem__("version", "99.0"), "field 'version' is '99.0', newer than"),
    (lambda d: d.pop("version"), "lacks the required field 'version'"),
    (lambda d: d.__setitem__("version", "latest"), "field 'version' must be a twostep version"),
    (lambda d: d.__setitem__("schema", 2), "field 'schema' is 2"),
    (lambda d: d.pop("records"), "lacks the required field 'records'"),
    (lambda d: d.__setitem__("records", {"a": 1}), "field 'records' must be a list, got dict"),
    (lambda d: d.__setitem__("records", [3]), "field records[0] must be an object"),
    (lambda d: d["records"][0].__setitem__("N", "40"), "records[0].N must be an integer >= 1, got '40'"),
    (lambda d: d["records"][0].__setitem__("seed", -1), "records[0].seed must be an integer >= 0"),
    (lambda d: d["records"][0].pop("seed"), "records[0] lacks 'seed'"),
    (lambda d: d["records"][0].pop("N"), "records[0] lacks the swept parameter(s) ['N']"),
    (lambda d: d["records"][0]["v"].__setitem__("dtype", "object"), "records[0].v has dtype 'object'"),
    (lambda d: d["records"][0]["v"].__setitem__("dtype", "blob"), "records[0].v has an unknown dtype"),
    (lambda d: d["records"][0]["v"].__setitem__("shape", [3]), "records[0].v holds 2 value(s)"),
    (lambda d: d["records"][0]["v"].__setitem__("shape", "2"), "records[0].v has shape '2'"),
    (lambda d: d["records"][0]["v"].__setitem__("__ndarray__", [[1.0], 2.0]), "records[0].v holds data"),
    (lambda d: d["records"][0].__setitem__("w", {"__float__": "big"}), "records[0].w is a non-finite"),
    (lambda d: d.__setitem__("params", []), "field 'params' must be an object"),
    (lambda d: d.__setitem__("grid", {"N": 10}), "field grid.N must be a non-empty list"),
    (lambda d: d.__setitem__("seeds", [0, "1"]), "field seeds[1] must be an integer >= 0"),
    (lambda d: d.__setitem__("experiment", ""), "field 'experiment' must be a non-empty string"),
    (lambda d: d.__setitem__("elapsed", "1 s"), "field 'elapsed' must be a number"),
    (lambda d: d.__setitem__("format", "other"), "field 'format' must be 'twostep-results'"),
])
def test_every_schema_error_names_the_file_and_the_field(tmp_path, edit, field):
    path = tmp_path / "bad.json"
    doc = _good()
    path.write_text(json.dumps(doc))
    read_results(path)   # the unedited document is fine
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError) as err:
        read_results(path)
    assert str(path) in str(err.value) and field in str(err.value), str(err.value)


@pytest.mark.parametrize("text, why", [
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ("[1, 2]", "got a JSON list"),
    ("", "invalid JSON"),
])
def test_damaged_files_name_the_file(tmp_path, text, why):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=why) as err:
        read_results(path)
    assert str(path) in str(err.value)


def test_a_write_is_atomic_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = write_results(tmp_path / "r.json", "x", [{"seed": 0}])
    before = open(path, "rb").read()
    import twostep.scale.results as results
    # a write stopped between its temporary file and the rename
    monkeypatch.setattr(results.os, "replace", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        write_results(path, "x", [{"seed": 1}])
    assert open(path, "rb").read() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


# --- tools/at_scale.py: the same writer --------------------------------------------------

import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
TOOL = [sys.executable, str(ROOT / "tools" / "at_scale.py"), "--backend", "numpy"]
SMALL = ["--widths", "40", "80", "120", "160", "200", "--seeds", "spike=40:2", "--seeds", "reuse=40:2",
         "--only", "spike", "--only", "reuse"]
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def _tool(args, **kw):
    return subprocess.run(TOOL + args, env=ENV, capture_output=True, text=True, timeout=300,
                          cwd=ROOT, **kw)


def _count(path):
    try:
        return len(json.loads(Path(path).read_text())["records"])
    except (OSError, ValueError, KeyError):
        return 0


def _same(a, b):
    ra, rb = read_results(a)["records"], read_results(b)["records"]
    assert len(ra) == len(rb)
    for x, y in zip(ra, rb):
        assert x.keys() == y.keys()
        for k in x:
            if k not in ("wall_s", "peak_rss_gb"):
                np.testing.assert_array_equal(x[k], y[k], err_msg=k)


def test_at_scale_killed_then_resumed_equals_an_uninterrupted_run(tmp_path):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    res = _tool(SMALL + ["--out", str(whole)])
    assert res.returncode == 0, res.stderr
    proc = subprocess.Popen(TOOL + SMALL + ["--out", str(cut)], env=ENV, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # spike runs first at each width; kill once the reuse file has its first checkpoints
    while _count(cut / "reuse.json") < 3:
        assert proc.poll() is None, "the run ended before it could be killed"
        time.sleep(0.002)
    proc.kill()
    proc.wait(timeout=60)
    kept = _count(cut / "reuse.json")
    assert 3 <= kept < 20 and not read_results(cut / "reuse.json")["complete"]
    res = _tool(SMALL + ["--out", str(cut)])
    assert res.returncode == 2 and "exists; --resume continues it" in res.stderr
    res = _tool(SMALL + ["--out", str(cut), "--resume"])
    assert res.returncode == 0, res.stderr
    for name in ("spike", "reuse"):
        _same(cut / f"{name}.json", whole / f"{name}.json")
        doc = read_results(cut / f"{name}.json")
        assert doc["complete"] and len(doc["commands"]) == 2


def test_at_scale_resume_keeps_records_it_was_not_asked_for(tmp_path):
    out = tmp_path / "out"
    assert _tool(["--widths", "40", "80", "--seeds", "spike=40:2", "--only", "spike",
                  "--out", str(out)]).returncode == 0
    assert _count(out / "spike.json") == 8
    # fewer widths, fewer seeds: nothing is dropped, nothing recomputed
    res = _tool(["--widths", "80", "--seeds", "spike=40:1", "--only", "spike", "--out", str(out),
                 "--resume"])
    assert res.returncode == 0 and res.stdout == "", res.stdout + res.stderr
    doc = read_results(out / "spike.json")
    assert len(doc["records"]) == 8 and doc["seeds_per_width"] == {"40": [0, 1], "80": [0, 1]}


@pytest.mark.parametrize("edit, named", [
    (lambda d: d["params"].__setitem__("c1", 0.3), "params.c1 is 0.3 in the file, 0.2 here"),
    (lambda d: d.__setitem__("version", "0.0.1"), 'version is "0.0.1" in the file'),
    (lambda d: d.__setitem__("backend", "cupy"), 'backend is "cupy" in the file, "numpy" here'),
    (lambda d: d.__setitem__("experiment", "reuse"), 'experiment is "reuse" in the file'),
])
def test_at_scale_resume_refuses_a_foreign_or_edited_file(tmp_path, edit, named):
    out = tmp_path / "out"
    assert _tool(["--widths", "40", "--seeds", "spike=40:1", "--only", "spike",
                  "--out", str(out)]).returncode == 0
    path = out / "spike.json"
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    before = path.read_bytes()
    res = _tool(["--widths", "40", "80", "--seeds", "spike=40:1", "--only", "spike",
                 "--out", str(out), "--resume"])
    assert res.returncode == 2 and "cannot resume" in res.stderr and named in res.stderr, res.stderr
    assert path.read_bytes() == before


def test_at_scale_refuses_a_cli_file_and_defaults_to_scratch(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    write_results(out / "spike.json", "spike", [{"N": 40, "seed": 0, "batch": "fresh"}],
                  params={"N": 40}, grid={"N": [40], "batch": ["fresh"]}, seeds=[0],
                  backend="loky")
    res = _tool(["--widths", "40", "--seeds", "spike=40:1", "--only", "spike", "--out", str(out),
                 "--resume"])
    assert res.returncode == 2 and "params.N is 40 in the file, absent here" in res.stderr
    spec = __import__("importlib.util").util.spec_from_file_location("at_scale_tool",
                                                                      ROOT / "tools" / "at_scale.py")
    tool = __import__("importlib.util").util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.OUT == ROOT / "artifacts" / "at_scale"
    assert "artifacts/" in (ROOT / ".gitignore").read_text()


def test_at_scale_sigint_saves_and_says_so_in_one_line(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(TOOL + SMALL + ["--out", str(out)], env=ENV, cwd=ROOT, text=True,
                            preexec_fn=default_sigint,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while _count(out / "spike.json") < 2:
        assert proc.poll() is None
        time.sleep(0.002)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=60)[1].strip().splitlines()
    assert proc.returncode == 130 and len(err) == 1 and "interrupted:" in err[0], err
    assert "--resume" in err[0] and _count(out / "spike.json") >= 2


# --- crash safety: what the writer may leave, modes, output paths ------------------------

def test_a_file_with_no_record_may_have_empty_grid_lists(tmp_path):
    # 00239c0's tools/at_scale.py wrote such a file before its first task; it must read (and
    # so resume), while a file with records must list what it swept.
    path = tmp_path / "empty.json"
    doc = {**_good(), "grid": {"N": [], "batch": ["fresh"]}, "seeds": [], "records": []}
    path.write_text(json.dumps(doc))
    assert read_results(path)["grid"] == {"N": [], "batch": ["fresh"]}
    doc["records"] = _good()["records"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"field grid.N must be a non-empty list \(the file "
                                         r"has records\), got \[\]"):
        read_results(path)


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_mode_of_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        path = write_results(tmp_path / "r.json", "x", [{"seed": 0}])
        assert stat.S_IMODE(os.stat(path).st_mode) == mode
        write_results(path, "x", [{"seed": 1}])   # a rewrite: the same mode
        assert stat.S_IMODE(os.stat(path).st_mode) == mode
        assert os.umask(umask) == umask   # the writer left the umask as it was
    finally:
        os.umask(old)


def test_a_rewrite_keeps_the_mode_the_user_gave(tmp_path):
    path = write_results(tmp_path / "r.json", "x", [{"seed": 0}])
    os.chmod(path, 0o640)
    write_results(path, "x", [{"seed": 1}])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_an_output_folder_that_cannot_hold_a_file_is_named():
    from twostep.scale.results import ResultsWriter, check_output_path
    # /proc exists and os.access calls it writable for root, but no file can be created there
    with pytest.raises(ValueError, match="output folder /proc cannot hold a new file"):
        check_output_path("/proc/twostep.json")
    with pytest.raises(ValueError, match="output folder /proc cannot hold a new file"):
        ResultsWriter("/proc/twostep.json", "x", {}, key=["seed"])
    with pytest.raises(TypeError, match="path must be a str or path-like, got int"):
        check_output_path(3)


def test_the_output_check_leaves_nothing_behind(tmp_path):
    from twostep.scale.results import check_output_path
    assert check_output_path(tmp_path / "r.json") == str(tmp_path / "r.json")
    assert list(tmp_path.iterdir()) == []


def test_a_writer_that_takes_a_file_over_removes_its_stale_temporaries(tmp_path):
    from twostep.scale.results import ResultsWriter
    path = write_results(tmp_path / "r.json", "x", [{"seed": 0}])
    stale = tmp_path / "r.json.k2j_9x0a.tmp"          # as a run killed before a rename leaves
    others = [tmp_path / "s.json.k2j_9x0a.tmp", tmp_path / "r.json.notes.tmp"]
    for p in [stale] + others:
        p.write_text("{}")
    with pytest.raises(FileExistsError):   # refused: touches nothing
        ResultsWriter(path, "x", {}, key=["seed"])
    assert stale.exists()
    ResultsWriter(path, "x", {}, key=["seed"], resume=True)
    assert not stale.exists() and all(p.exists() for p in others)


def test_at_scale_output_errors_are_one_line(tmp_path):
    base = ["--widths", "40", "--seeds", "spike=40:1", "--only", "spike"]
    (tmp_path / "file").write_text("")
    cases = [(str(tmp_path / "file"), "is a file; give a folder")]
    if os.path.isdir("/proc/self"):
        cases += [("/proc", "output folder /proc cannot hold a new file"),
                  ("/proc/twostep", "cannot create the output folder /proc/twostep")]
    for out, message in cases:
        res = _tool(base + ["--out", out])
        err = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(err) == 1 and message in err[0], res.stderr
