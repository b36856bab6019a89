"""Bad input gets a ValueError or TypeError that names the argument and the accepted range."""

import numpy as np
import pytest

import twostep as ts
from twostep.analysis.alignment import overlap
from twostep.model.activations import PolynomialActivation
from twostep.model.hermite import gauss_nodes, hermite_coefficients

RNG = np.random.default_rng(0)
POLY = ts.get_activation("poly4")
STEPS = ((0.2, 0.4), (0.2, 0.25))


def good_run(**kw):
    args = dict(N=20, n=20, d=10, activation=POLY, target=ts.hermite_link(1), steps=STEPS,
                batch="fresh", rng=np.random.default_rng(0))
    args.update(kw)
    return ts.run_two_steps(**args)


@pytest.mark.parametrize("kw, error, match", [
    (dict(N=0), ValueError, "N must be an integer >= 1"),
    (dict(N=10.5), TypeError, "N must be an integer"),
    (dict(n=True), TypeError, "n must be an integer"),
    (dict(d=-3), ValueError, "d must be an integer >= 1"),
    (dict(batch="stale"), ValueError, r"batch must be one of \['fresh', 'reused'\]"),
    (dict(batch=1), TypeError, "batch must be one of"),
    (dict(rng=0), TypeError, "rng must be a numpy.random.Generator"),
    (dict(activation="poly4"), TypeError, "activation must be a twostep Activation"),
    (dict(steps=((0.2, 0.5), (0.2, 0.25))), ValueError, r"alpha1 must be in \[0.0, 0.5\)"),
    (dict(steps=((0.2, 0.1), (0.2, -0.1))), ValueError, r"alpha2 must be in \[0.0, 0.5\)"),
    (dict(steps=((0.0, 0.1), (0.2, 0.1))), ValueError, r"c1 must be in \(0.0, inf\]"),
    (dict(steps=((0.2, 0.1), (float("nan"), 0.1))), ValueError, "c2 must be finite"),
    (dict(steps=(0.2, 0.1)), TypeError, r"steps must be \(\(c1, alpha1\), \(c2, alpha2\)\)"),
    (dict(target=3), TypeError, "target must be a Link, a sequence of Link, a Teacher, or a link name"),
    (dict(target=ts.Teacher(ts.hermite_link(1), 11, RNG)), ValueError, "has d=11, but d=10"),
    (dict(noise=-1.0), ValueError, r"noise must be in \[0.0, inf\]"),
    (dict(dtype=np.int32), ValueError, "dtype must be float64 or float32"),
])
def test_run_two_steps_rejects(kw, error, match):
    with pytest.raises(error, match=match):
        good_run(**kw)


def test_network_functions_reject_bad_arrays():
    W, a = ts.initialise(5, 4, RNG)
    X = ts.gaussian_inputs(6, 4, RNG)
    y = np.ones(6)
    with pytest.raises(ValueError, match=r"a must have shape \(5\)"):
        ts.gradient(W, a[:3], X, y, POLY)
    with pytest.raises(ValueError, match=r"X must have shape \(\*, 4\)"):
        ts.gradient(W, a, X[:, :3], y, POLY)
    with pytest.raises(ValueError, match=r"y must have shape \(6\)"):
        ts.gradient(W, a, X, y[:2], POLY)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="X must contain only finite values"):
        ts.gradient(W, a, bad, y, POLY)
    with pytest.raises(ValueError, match="W must be a 2-d array"):
        ts.gradient(W[0], a, X, y, POLY)
    with pytest.raises(TypeError, match="W must hold real numbers"):
        ts.gradient(W.astype(complex), a, X, y, POLY)
    with pytest.raises(TypeError, match="W must hold real numbers"):
        ts.gradient("W", a, X, y, POLY)
    with pytest.raises(ValueError, match=r"eta must be in \[0.0, inf\]"):
        ts.one_step(W, a, X, y, POLY, -1.0)


def test_other_validation_paths():
    with pytest.raises(ValueError, match=r"alpha must be in \[0.0, 0.5\)"):
        ts.step_size(1.0, 0.5, 10)
    with pytest.raises(ValueError, match=r"alpha1 must be in \[0.0, 0.5\)"):
        ts.n_spikes(-0.1, 0.2)
    with pytest.raises(ValueError, match="L must be an integer >= 1"):
        ts.n_spikes(0.1, 0.2, L=0)
    with pytest.raises(ValueError, match=r"psi must be in \(0.0, inf\]"):
        ts.one_step_overlap(1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="k must be in"):
        ts.top_singular(np.ones((3, 4)), 4)
    with pytest.raises(ValueError, match=r"ratio must be in \(0.0, inf\]"):
        ts.bulk_edge(-1.0)
    with pytest.raises(ValueError, match="mu's last entry"):
        PolynomialActivation([0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="mu must hold at least"):
        PolynomialActivation([1.0])
    with pytest.raises(ValueError, match=r"points must be in \[2, 300\]"):
        gauss_nodes(1000)
    with pytest.raises(TypeError, match="f must be callable"):
        hermite_coefficients(3.0, 4)
    with pytest.raises(ValueError, match=r"name must be one of"):
        ts.get_link("he9")
    with pytest.raises(ValueError, match="frequency must be in"):
        ts.odd_bounded_link(0.0)
    with pytest.raises(ValueError, match="number of links"):
        ts.Teacher([ts.hermite_link(1)] * 3, 2, RNG)
    with pytest.raises(ValueError, match="u and beta must be non-zero"):
        overlap(np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match=r"beta must have shape \(3\)"):
        overlap(np.ones(3), np.ones(4))
    with pytest.raises(TypeError, match="run must be a TwoStepRun"):
        ts.second_step_terms(None)
    with pytest.raises(ValueError, match=r"kind must be one of"):
        ts.signal_part(good_run(), 1, kind="exact")
    with pytest.raises(ValueError, match="order must be an integer >= 0"):
        POLY.derivative(np.zeros(3), -1)
    with pytest.raises(ValueError, match="margin must be in"):
        ts.count_outliers(np.ones(3), 1.0, margin=-0.1)


def test_check_pairs():
    from twostep._validation import check_pairs
    assert check_pairs([(1, 2), [3, 4]], "steps", "a (c, alpha) pair") == [(1, 2), (3, 4)]
    assert check_pairs(np.array([[0.1, 0.2]]), "grid", "a pair") == [(0.1, 0.2)]
    assert check_pairs((), "steps", "a pair") == []
    with pytest.raises(TypeError, match=r"steps must be a sequence, a \(c, alpha\) pair each"):
        check_pairs("ab", "steps", "a (c, alpha) pair")
    with pytest.raises(TypeError, match=r"grid must be a sequence"):
        check_pairs(5, "grid", "a pair")
    with pytest.raises(TypeError, match=r"grid\[1\] must be an \(alpha1, alpha2\) pair, got 0.3"):
        check_pairs([(0.1, 0.2), 0.3], "grid", "an (alpha1, alpha2) pair")


def test_issue_24_api_probes_are_named_errors(monkeypatch):
    from scipy.sparse.linalg import aslinearoperator
    with pytest.raises(ValueError, match=r"target must be a link name .* got 'he9' \('he9' is unknown\)"):
        good_run(target="he9")
    with pytest.raises(ValueError, match="dtype must be float64 or float32, got 'foo'"):
        good_run(dtype="foo")
    W, a = ts.initialise(5, 4, RNG)
    with pytest.raises(ValueError, match=r"X must hold at least one sample"):
        ts.one_step(W, a, np.zeros((0, 4)), np.zeros(0), POLY, 1.0)
    with pytest.raises(TypeError, match=r"grid\['N'\] must be a list of values to sweep, got 5"):
        ts.sweep(lambda rng, N: {}, grid={"N": 5})
    with pytest.raises(ValueError, match="grid key 'seed' is reserved"):
        ts.sweep(lambda rng, seed: {}, grid={"seed": [1]})
    with pytest.raises(ValueError, match=r"result key\(s\) \['top'\] would overwrite"):
        ts.sweep(lambda rng, top: {"top": 1.0}, grid={"top": [2]})
    teacher = ts.Teacher(ts.hermite_link(1), 10, RNG)
    with pytest.raises(ValueError, match="noise=0.5 cannot be applied to a given Teacher"):
        ts.make_teacher(teacher, 10, RNG, noise=0.5)
    assert ts.make_teacher(teacher, 10, RNG) is teacher
    M = np.random.default_rng(0).standard_normal((6, 5))
    s_op = ts.top_singular(aslinearoperator(M), k=min(M.shape) - 1)[0]
    np.testing.assert_allclose(s_op, ts.top_singular(M, k=4)[0], rtol=1e-12)


def test_sizes_are_checked_against_memory_before_allocating(monkeypatch):
    import tracemalloc
    tracemalloc.start()
    try:
        with pytest.raises(MemoryError, match=r"N=60000, n=60000, d=60000 \(float64\) needs "
                                              r"about 160.9 GiB, but .* is"):
            good_run(N=60000, n=60000, d=60000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Nothing of the run allocated (numpy reports its arrays to tracemalloc): one row of W0
    # alone would be 480 kB.
    assert peak < 400_000, peak
    monkeypatch.setenv("TWOSTEP_MAX_MEMORY", "1M")
    with pytest.raises(MemoryError, match=r"needs about 1.8 MiB, but \$TWOSTEP_MAX_MEMORY is 1.0 MiB"):
        good_run(N=200, n=200, d=200, dtype=np.float64)
    monkeypatch.setenv("TWOSTEP_MAX_MEMORY", "-5G")
    with pytest.raises(ValueError, match=r"\$TWOSTEP_MAX_MEMORY must be a positive finite size"):
        good_run()


def test_experiments_validate_once_where_they_enter():
    # The experiments check their arguments on entry; the model and analysis calls inside
    # trust them: no array goes through check_array (poly4's coefficients, made from its
    # name, are the one), and the generator is checked once.
    import sys
    from twostep.experiments.first_step import first_step_diagnostics
    from twostep.experiments.spikes import spike_experiment
    calls = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.endswith("_validation.py"):
            calls.append(frame.f_code.co_name)

    for run in (lambda: spike_experiment(np.random.default_rng(0), N=16, settings=[(0.4, 0.25)],
                                         grid=[(0.1, 0.1)]),
                lambda: first_step_diagnostics(np.random.default_rng(0), N=16,
                                               steps=[(0.2, 0.25)])):
        calls.clear()
        sys.setprofile(profile)
        try:
            run()
        finally:
            sys.setprofile(None)
        assert calls.count("check_array") == 1 and calls.count("check_rng") == 1, calls


# --- the memory limit: available memory, ulimit -v and the memory cgroup ---------------------

def _fake_proc(tmp_path, cgroup_lines, vmsize_kib=1000):
    proc = tmp_path / "proc" / "self"
    proc.mkdir(parents=True)
    (proc / "cgroup").write_text("\n".join(cgroup_lines) + "\n")
    (proc / "status").write_text(f"Name:\tpython\nVmSize:\t{vmsize_kib} kB\n")
    return str(tmp_path / "proc")


def _files(folder, **files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name.replace("_", ".", 1)).write_text(text)


def test_the_memory_cgroup_limits_the_budget(tmp_path, monkeypatch):
    import resource

    from twostep._validation import hard_memory_limits, memory_limit
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY,) * 2)
    cg = tmp_path / "cg"
    # v2: the process's cgroup has room 1 GiB - 0.75 GiB + 0.25 GiB reclaimable; its parent is
    # tighter (0.25 GiB left), the root has no limit ("max").
    proc = _fake_proc(tmp_path, ["0::/a/b"])
    _files(cg, memory_max="max", memory_current="5")
    _files(cg / "a", memory_max=str(2 << 30), memory_current=str(1792 << 20))
    _files(cg / "a" / "b", memory_max=str(1 << 30), memory_current=str(768 << 20),
           memory_stat="anon 1\ninactive_file 268435456\n")
    assert hard_memory_limits(proc, str(cg)) == [
        (256 << 20, "the room left under the memory cgroup's limit")]
    # v1: memory.limit_in_bytes, its "no limit" value ignored
    proc = _fake_proc(tmp_path / "v1", ["4:memory:/job", "3:cpu:/job"])
    _files(cg / "memory", memory_limit_in_bytes="9223372036854771712", memory_usage_in_bytes="1")
    _files(cg / "memory" / "job", memory_limit_in_bytes=str(3 << 30),
           memory_usage_in_bytes=str(1 << 30))
    assert hard_memory_limits(proc, str(cg)) == [
        (2 << 30, "the room left under the memory cgroup's limit")]
    assert hard_memory_limits(_fake_proc(tmp_path / "none", ["0::/"]), str(tmp_path / "no")) == []
    # the least of the memory available and the hard limits
    monkeypatch.setattr("twostep._validation.hard_memory_limits", lambda: [(5, "the cgroup")])
    assert memory_limit() == (5, "the cgroup")
    with pytest.raises(MemoryError, match="needs about 8 B, but the cgroup is 5 B"):
        ts.gaussian_inputs(1, 1, RNG)


def test_ulimit_v_limits_the_budget(tmp_path, monkeypatch):
    import resource

    from twostep._validation import hard_memory_limits
    proc = _fake_proc(tmp_path, ["0::/"], vmsize_kib=1000)
    monkeypatch.setattr(resource, "getrlimit",
                        lambda which: (1000 * 1024 + (1 << 30), resource.RLIM_INFINITY))
    assert hard_memory_limits(proc, str(tmp_path / "no")) == [
        (1 << 30, "the address space left under RLIMIT_AS (ulimit -v)")]
