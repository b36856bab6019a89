"""Sweeps over seeds and grids; summaries; log-log slopes."""

import os
import sys

import numpy as np
import pytest

import twostep as ts


def draw(rng, scale):
    return {"x": scale * rng.standard_normal(), "v": rng.standard_normal(3)}


def test_sweep_is_reproducible_and_independent_of_workers():
    serial = ts.sweep(draw, {"scale": [1.0, 2.0]}, seeds=range(3), n_jobs=1)
    parallel = ts.sweep(draw, {"scale": [1.0, 2.0]}, seeds=range(3), n_jobs=2)
    assert len(serial) == 6
    for a, b in zip(serial, parallel):
        assert a["scale"] == b["scale"] and a["seed"] == b["seed"]
        assert a["x"] == b["x"]
        np.testing.assert_array_equal(a["v"], b["v"])
    # seed s gives the same stream at every grid point (common random numbers)
    assert serial[3]["x"] == pytest.approx(2 * serial[0]["x"])


def _worker_pid(rng):
    return {"pid": os.getpid()}


def test_a_parallel_sweep_stops_the_executor_that_ran_it():
    # Stopping the workers through loky's get_reusable_executor() built a second executor
    # and left the first to the garbage collector, whose late release of a semaphore made
    # loky's resource tracker warn on an interrupted run's stderr (3 of 180 Ctrl-C'd runs;
    # 0 of 540 since).
    from joblib.externals.loky import reusable_executor
    seen = []
    records = ts.sweep(_worker_pid, None, seeds=range(4), n_jobs=2, progress=False,
                       on_record=lambda r: seen.append(reusable_executor._executor))
    executor = reusable_executor._executor
    assert len(seen) == 4 and all(e is executor for e in seen)
    assert executor._flags.shutdown and not executor._processes
    pids = {r["pid"] for r in records}
    assert os.getpid() not in pids
    if sys.platform.startswith("linux"):   # the workers are gone, not only forgotten
        assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)


def test_summarise_mean_and_sem():
    recs = [{"g": 1, "x": 1.0}, {"g": 1, "x": 3.0}, {"g": 2, "x": 5.0}]
    out = ts.summarise(recs, ["g"], ["x"])
    assert out[0]["x"] == 2.0 and out[0]["x_sem"] == pytest.approx(np.sqrt(2) / np.sqrt(2))
    assert out[1]["count"] == 1 and out[1]["x_sem"] == 0


def test_loglog_slope_recovers_power_law():
    x = np.array([500, 1000, 2000, 4000])
    slope, se = ts.loglog_slope(x, 3 * x ** -0.35)
    assert slope == pytest.approx(-0.35, abs=1e-12) and se < 1e-10
    with pytest.raises(ValueError, match="positive"):
        ts.loglog_slope([1, 2], [1, -1])


def test_linear_slope_matches_the_textbook_fit():
    rng = np.random.default_rng(0)
    x = np.repeat([3.0, 3.3, 3.6, 3.9], 5)
    y = 0.2 - 0.1 * x + 0.01 * rng.standard_normal(x.size)
    slope, se = ts.linear_slope(x, y)
    # scipy's linregress is the reference for both the slope and its standard error
    from scipy.stats import linregress
    ref = linregress(x, y)
    assert slope == pytest.approx(ref.slope, rel=1e-10) and se == pytest.approx(ref.stderr, rel=1e-10)
    assert np.isnan(ts.linear_slope([1, 2], [0, 1])[1])
    with pytest.raises(ValueError, match="distinct"):
        ts.linear_slope([1, 1, 1], [0, 1, 2])
    with pytest.raises(ValueError, match="same length"):
        ts.linear_slope([1, 2, 3], [0, 1])


def test_sweep_rejects_bad_input():
    with pytest.raises(TypeError, match="func must be callable"):
        ts.sweep(3)
    with pytest.raises(TypeError, match="func must return a dict"):
        ts.sweep(lambda rng: 1.0)
    with pytest.raises(ValueError, match="n_jobs must be an integer >= 1"):
        ts.sweep(draw, {"scale": [1.0]}, n_jobs=0)


def test_sweep_without_seeds_is_an_error_not_an_empty_result():
    for seeds in ([], (), iter([]), range(0)):
        with pytest.raises(ValueError, match="seeds must be a non-empty sequence of integers >= 0"):
            ts.sweep(draw, {"scale": [1.0]}, seeds=seeds)


def test_split_batches_gives_the_records_of_a_grid_over_batch():
    from twostep.analysis.sweep import split_batches
    records = [{"N": N, "batch": "both", "seed": s, "reused": {"x": N + s}, "fresh": {"x": -N - s}}
               for N in (10, 20) for s in (0, 1)]
    out = split_batches(records, ("fresh", "reused"))
    assert [(r["batch"], r["N"], r["seed"], r["x"]) for r in out] == (
        [("fresh", N, s, -N - s) for N in (10, 20) for s in (0, 1)]
        + [("reused", N, s, N + s) for N in (10, 20) for s in (0, 1)])
    assert all(set(r) == {"N", "batch", "seed", "x"} for r in out)
    with pytest.raises(ValueError, match="order"):
        split_batches(records, ("both",))
    with pytest.raises(ValueError, match="batch='both'"):
        split_batches([{"batch": "reused", "x": 1}], ("reused",))


def _sized(rng, N):
    return {"x": float(rng.standard_normal()), "pid": os.getpid()}


def test_a_cost_orders_the_start_not_the_records():
    # cost starts the largest tasks first (serially, the order on_record sees them) and leaves
    # the records, in the grid's order, the same as without it, in one process or two.
    grid = {"N": [1, 3, 2]}
    plain = ts.sweep(_sized, grid, seeds=[0, 1])
    started = []
    ordered = ts.sweep(_sized, grid, seeds=[0, 1], cost=lambda p: p["N"],
                       on_record=lambda r: started.append((r["N"], r["seed"])))
    assert started == [(3, 0), (3, 1), (2, 0), (2, 1), (1, 0), (1, 1)]
    parallel = ts.sweep(_sized, grid, seeds=[0, 1], cost=lambda p: p["N"], n_jobs=2)
    for got in (ordered, parallel):
        assert [(r["N"], r["seed"], r["x"]) for r in got] == \
            [(r["N"], r["seed"], r["x"]) for r in plain]
    with pytest.raises(TypeError, match="cost must be None or a callable"):
        ts.sweep(_sized, grid, cost=3)


def _kept_after_free(rng):
    # How much of a touched and freed 256 MB array stays resident (MB): 256 less what the free
    # gave back. Measured around the free, not from before the allocation: a worker that runs
    # both tasks (loky may give one worker both) reuses the first task's kept memory, and its
    # resident size does not grow at the allocation.
    def rss():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024
    a = np.ones(1 << 25)
    touched = rss()
    del a
    return {"kept": 256 - (touched - rss())}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc, /proc")
def test_sweep_workers_keep_freed_memory_for_their_next_arrays():
    # A worker of a parallel sweep takes keep_freed_memory as it starts: a freed 256 MB array
    # stays in the process for the next task's arrays (no page faults), where this process,
    # which never takes it, returns it to the system.
    here = ts.sweep(_kept_after_free, seeds=[0])[0]["kept"]
    there = ts.sweep(_kept_after_free, seeds=[0, 1], n_jobs=2)
    assert here < 64
    assert all(r["kept"] > 192 for r in there)


def test_split_cases_gives_one_record_per_case():
    # Tasks that ran several cases on one draw, as one record per case, in task order or in
    # a given order (stable: seeds stay ascending within it).
    done = [{"N": 2, "targets": ["a", "b"], "seed": s, "results": [{"x": 10 * s}, {"x": 10 * s + 1}]}
            for s in (0, 1)]
    got = ts.analysis.sweep.split_cases(done, "targets", "target")
    assert [(r["target"], r["seed"], r["x"]) for r in got] == [("a", 0, 0), ("b", 0, 1),
                                                               ("a", 1, 10), ("b", 1, 11)]
    assert all(set(r) == {"N", "seed", "target", "x"} for r in got)
    ordered = ts.analysis.sweep.split_cases(done, "targets", "target",
                                            order=lambda r: r["target"])
    assert [(r["target"], r["seed"]) for r in ordered] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
