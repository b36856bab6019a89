"""The device path on the CPU: draws, the steps and the measurement through the same code.

A GPU is not needed to test what runs on one. ``array_api_strict``, the array API
standard's reference library (numpy underneath, none of numpy's extras), stands in for
CuPy and PyTorch: the steps, the exact terms and the measurement of
:mod:`twostep.scale.device` run on its arrays and must agree with the numpy/scipy path
(:func:`twostep.analysis.spikes.term_diagnostics`, ARPACK) to float32 rounding. PyTorch on
the CPU, when installed (optional), also checks the device's own generator.
"""

import subprocess
import sys

import numpy as np
import pytest

import twostep as ts
from twostep.analysis.decomposition import signal_part
from twostep.analysis.spikes import term_diagnostics
from twostep.model.steps import Problem, draw_problem, two_steps
from twostep.scale import backend as B
from twostep.scale.device import (draw_problem_on, measure_on, run_two_steps_on,
                                  to_host, top_singular_on)
from twostep.analysis.lanczos import block_lanczos

ACT = ts.get_activation("poly4")
STEPS = ((0.2, 0.4), (0.2, 0.25))
GRID = [(0.4, 0.25), (0.2, 0.2), (0.45, 0.3)]


def strict(problem):
    xps = pytest.importorskip("array_api_strict")
    conv = xps.asarray
    X1, y1 = conv(problem.X1), conv(problem.y1)
    X2, y2 = (X1, y1) if problem.X2 is problem.X1 else (conv(problem.X2), conv(problem.y2))
    return Problem(problem.teacher, conv(problem.W0), conv(problem.a), X1, y1, X2, y2)


@pytest.fixture(scope="module", params=["fresh", "reused"])
def pair(request):
    p = draw_problem(160, 160, 160, "he1", request.param, np.random.default_rng(3),
                     dtype=np.float32)
    return two_steps(p, ACT, STEPS), two_steps(strict(p), ACT, STEPS)


def test_steps_on_the_array_api_are_the_numpy_steps(pair):
    host, dev = pair
    assert type(dev.W2) is not np.ndarray and dev.batch == host.batch
    np.testing.assert_allclose(np.asarray(dev.W2), host.W2, rtol=0, atol=1e-6 * np.abs(host.W2).max())


def test_measurement_agrees_with_the_numpy_path(pair):
    # Measured at N = 160 and 300: every entry within 2e-6 relative of term_diagnostics (ARPACK,
    # tol 1e-9) in float32 (eps = 1.2e-7); the subspace iteration stops at residual 30 eps
    # (top_singular_on's test). Tolerance 1e-4, with cosines compared in absolute terms. The
    # signal part is the corrected one (reuse-aware for the reused batch), as in term_diagnostics'
    # *_corrected keys; T_k's own top value and left cosine do not depend on it.
    host, dev = pair
    m, ref = measure_on(dev, grid=GRID), term_diagnostics(host, corrected=True)
    np.testing.assert_allclose(m["top"], ref["top"], rtol=1e-4)
    for key in ("signal", "residual"):
        np.testing.assert_allclose(m[key], ref[f"{key}_corrected"], rtol=1e-4)
    np.testing.assert_allclose(m["left"], ref["left"], atol=1e-4)
    np.testing.assert_allclose(m["right"], ref["right_corrected"], atol=1e-4)
    # Orders 0 and 1 have no correction; order 2 has (R^2 > 0), so the keys are not the old ones.
    np.testing.assert_allclose(m["signal"][:2], ref["signal"][:2], rtol=1e-4)
    assert abs(m["signal"][2] - ref["signal"][2]) > 1e-3 * ref["signal"][2]
    beta = host.teacher.directions[0]
    _, _, Vt = ts.top_singular(ts.second_step_terms(host)[1], 1)
    assert m["beta"][1] == pytest.approx(abs(Vt[0] @ beta) / np.linalg.norm(Vt[0]), abs=1e-4)
    # The grid count from the rescaling identity is the count of W2 trained at those steps.
    for (a1, a2), count in zip(GRID, m["grid_count"]):
        p = Problem(host.teacher, host.W0, host.a, host.X1, host.y1, host.X2, host.y2)
        W2 = two_steps(p, ACT, ((0.2, a1), (0.2, a2))).W2
        assert count == ts.count_outliers(ts.top_singular(W2, 6)[0], 2.0, 0.05)


def test_corrected_signal_part_on_the_array_api_is_the_numpy_one(pair):
    # The correction's R^2 (fluctuation_variance) in float64 on the device, in blocks of rows.
    host, dev = pair
    for k in range(ACT.degree):
        S, D = (signal_part(r, k, "auto", corrected=True) for r in (host, dev))
        assert D.value == pytest.approx(S.value, rel=1e-5)
        np.testing.assert_allclose(np.asarray(D.right), S.right, atol=1e-6)
        np.testing.assert_allclose(np.asarray(D.left), S.left, atol=1e-6)


def test_top_singular_on_stops_by_its_residual_test():
    # A rank-3 spike on noise: the top 3 converge in a few blocks, and the test stops there.
    # A warm start from the converged block needs fewer; tol = 0 runs them all. The blocks
    # added are the last entry of block_lanczos's answer.
    rng = np.random.default_rng(1)
    N, d = 300, 200
    M = rng.standard_normal((N, d)) / np.sqrt(d)
    M += (rng.standard_normal((N, 3)) * [3.0, 2.0, 1.5]) @ rng.standard_normal((3, d)) / 15
    dense = np.linalg.svd(M, compute_uv=False)
    s, U, V, Q, cold = block_lanczos(M, 3, tol=1e-10)
    np.testing.assert_allclose(s, dense[:3], rtol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum((M @ V) * U, axis=0)), dense[:3], rtol=1e-12)
    assert 2 < cold < 40
    s2, _, _, _, warm = block_lanczos(M, 3, tol=1e-10, start=Q.T, vectors=False)
    np.testing.assert_allclose(s2, dense[:3], rtol=1e-12)
    assert warm < cold
    assert block_lanczos(M, 3, tol=0.0, iterations=5)[-1] == 5
    # The count's test: values above the threshold are final at once, those below once their
    # residual interval is below it.
    t = 0.5 * (dense[2] + dense[3])
    s3, _, _, _, count = block_lanczos(M, 6, above=t, vectors=False)
    assert int(np.sum(s3 > t)) == 3 and count < cold
    with pytest.raises(ValueError, match="tol must be"):
        top_singular_on(M, 1, tol=-1.0)
    with pytest.raises(ValueError, match=r"start must have shape \(m, 200\)"):
        top_singular_on(M, 1, start=np.ones((2, 7)))


def test_top_singular_on_resolves_a_cluster_at_the_threshold():
    # Singular values of which the fourth sits 1e-3 above the count's threshold and the fifth
    # 1e-3 below, over a bulk whose edge is 0.01 below it: the count is that of the dense SVD.
    # The block subspace iteration this solver replaced counted 3 here, stopped at its cap of 40
    # iterations (as at two points of the at-scale grid, N = 4000); Lanczos took 23 blocks.
    # Not converging within `iterations` warns.
    rng = np.random.default_rng(5)
    N = d = 400
    U, _ = np.linalg.qr(rng.standard_normal((N, N)))
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    t = 2.2
    values = np.concatenate([[6.0, 4.0, 3.0, t + 1e-3, t - 1e-3],
                             np.sort(2 * np.sqrt(rng.uniform(0, 1, N - 5)))[::-1] + 0.19])
    M = (U * values) @ V.T
    dense = np.linalg.svd(M, compute_uv=False)
    assert int(np.sum(dense[:6] > t)) == 4 and dense[5] > t - 0.02
    s, _, _, _, blocks = block_lanczos(M, 6, oversample=2, vectors=False, above=t)
    assert int(np.sum(s > t)) == 4 and blocks < 40
    with pytest.warns(RuntimeWarning, match="not converged after 2 blocks"):
        block_lanczos(M, 6, iterations=2, vectors=False, tol=1e-12)


def test_grid_counts_of_the_at_scale_task_are_the_dense_counts():
    # The at-scale spike task's 25 grid counts at N = 1000 (seed 0, both batches), each from the
    # rescaling identity and block Lanczos, against ARPACK on W2 rebuilt term by term in float64.
    from scipy.sparse.linalg import svds

    from twostep.analysis.decomposition import second_step_terms
    from twostep.scale.at_scale import EXPERIMENTS
    from twostep.scale.device import spike_on

    _, _, extra = EXPERIMENTS["spike"]
    N, edge = 1000, 2.0 * 1.05
    for batch in ("fresh", "reused"):
        counts = spike_on("numpy", N=N, batch=batch, seed=0, **extra)["grid_count"]
        run = run_two_steps_on("numpy", N, N, N, extra["activation"], extra["target"],
                               ((extra["c1"], extra["alpha1"]), (extra["c2"], extra["alpha2"])),
                               batch, seed=0)
        terms = [T.astype(float) for T in second_step_terms(run)]
        for (a1, a2), count in zip(extra["grid"], counts):
            x = extra["c1"] * N ** a1 / run.eta1
            W2 = (run.W0 + x * (run.W1 - run.W0)).astype(float) + (
                extra["c2"] * N ** a2 / run.eta2) * sum(x ** k * T for k, T in enumerate(terms))
            s = svds(W2, k=7, tol=1e-10, return_singular_vectors=False)
            assert count == min(6, int(np.sum(s > edge))), (batch, a1, a2)


def test_top_singular_on_handles_a_rank_deficient_block():
    # Rank 2 < the block's 9 columns: the Gram orthonormalisation falls back to a QR.
    rng = np.random.default_rng(2)
    M = rng.standard_normal((50, 2)) @ rng.standard_normal((2, 40))
    s = top_singular_on(M, 3, vectors=False)
    np.testing.assert_allclose(s[:2], np.linalg.svd(M, compute_uv=False)[:2], rtol=1e-10)
    assert abs(s[2]) < 1e-10 * s[0]


def test_top_singular_on_with_a_shift_matches_the_dense_difference():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((60, 40)) + 5 * np.outer(rng.standard_normal(60), rng.standard_normal(40))
    lv, rv = rng.standard_normal(60), rng.standard_normal(40)
    s, U, Vt = top_singular_on(M, 2, minus=(0.3, lv, rv))
    dense = np.linalg.svd(M - 0.3 * np.outer(lv, rv), compute_uv=False)
    np.testing.assert_allclose(s, dense[:2], rtol=1e-10)
    assert U.shape == (60, 2) and Vt.shape == (2, 40)
    with pytest.raises(ValueError, match=r"k must be in \[1, min\(M.shape\)\] = \[1, 40\]"):
        top_singular_on(M, 41)


def test_numpy_backend_draws_are_draw_problem():
    p = draw_problem_on("numpy", 30, 20, 10, "he1", "fresh", seed=4)
    q = draw_problem(30, 20, 10, "he1", "fresh", np.random.default_rng(4), dtype=np.float32)
    for name in ("W0", "a", "X1", "y1", "X2", "y2"):
        np.testing.assert_array_equal(getattr(p, name), getattr(q, name))
    r = draw_problem_on("numpy", 30, 20, 10, "he1", "reused", seed=4)
    assert r.X2 is r.X1 and to_host(r, "numpy").X2 is to_host(r, "numpy").X1


def test_bad_input():
    with pytest.raises(TypeError, match="PolynomialActivation"):
        run_two_steps_on("numpy", 10, 10, 10, "tanh", "he1", STEPS, "reused")
    with pytest.raises(ValueError, match="batch must be one of"):
        draw_problem_on("numpy", 10, 10, 10, "he1", "twice", seed=0)
    with pytest.raises(ValueError, match="dtype must be one of"):
        draw_problem_on("numpy", 10, 10, 10, "he1", "reused", seed=0, dtype="float16")
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        draw_problem_on("numpy", 10, 10, 10, "he1", "reused", seed=-1)


def test_torch_cpu_draws_and_measures_like_the_host():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional)")
    bk = B.Backend("torch", torch, "cpu")
    p = draw_problem_on(bk, 120, 120, 120, "he1", "fresh", seed=2)
    assert isinstance(p.W0, torch.Tensor) and p.W0.dtype == torch.float32
    again = draw_problem_on(bk, 120, 120, 120, "he1", "fresh", seed=2)
    assert torch.equal(p.W0, again.W0) and torch.equal(p.y2, again.y2)
    dev, host = two_steps(p, ACT, STEPS), two_steps(to_host(p, bk), ACT, STEPS)
    np.testing.assert_allclose(bk.to_numpy(dev.W2), host.W2, atol=1e-5 * np.abs(host.W2).max())
    m, ref = measure_on(dev, grid=GRID[:1]), term_diagnostics(host)
    np.testing.assert_allclose(m["top"], ref["top"], rtol=1e-4)


def _device_check(root):
    import importlib.util
    spec = importlib.util.spec_from_file_location("device_check",
                                                  root / "benchmarks" / "device_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_device_check_runs_end_to_end_on_the_host(root):
    # The GPU script's whole flow on the numpy backend: the steps, the floor, top-k by
    # subspace iteration, the measurement, the agreement with the numpy path on the same
    # draw, and the memory skip (N = 200000 needs ~480 GB, skipped before any allocation).
    # The numpy path is the reference code itself, so W2 agrees exactly; the top-8 by 40
    # subspace iterations agreed with svds to below 1e-6 at N = 300 (float32): 1e-5 bound.
    lines = []
    recs = _device_check(root).check(B.get_backend("numpy"), [300, 200000], top=8,
                                     measure=True, out=lines.append)
    assert [r["N"] for r in recs] == [300, 200000]
    assert recs[0]["dW2"] == 0.0 and recs[0]["dtop"] < 1e-5
    assert recs[0]["steps_s"] > 0 and recs[0]["floor_s"] > 0 and recs[0]["ratio"] > 0
    assert recs[0]["measure_s"] > 0 and recs[0]["measure_ratio"] > 0
    assert recs[1]["steps_s"] is None
    assert "skipped" in lines[-1] and "needs about" in lines[-1] and ("free" in lines[-1] or "available" in lines[-1])


def test_device_check_exits_cleanly_without_gpu(root):
    res = subprocess.run([sys.executable, str(root / "benchmarks" / "device_check.py"),
                          "--sizes", "300"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0
    if "no NVIDIA GPU" not in res.stdout and "no GPU backend" not in res.stdout:
        assert "agreement" in res.stdout  # a GPU is present: the check ran


def test_reuse_on_matches_the_host_reuse_experiment():
    # Same draw (numpy backend: the host's generator and order), float64. The top-8 right
    # vectors of W2 by 40 subspace iterations against ARPACK: values within 1e-6 relative and
    # the overlaps of the leading vectors within 1e-6 at N = 120 (measured); the 8th vector
    # sits in the bulk, where both methods may pick a different vector, so only K <= 3 compared.
    from twostep.experiments.reuse import reuse_experiment
    from twostep.scale.device import reuse_on
    ref = reuse_experiment(np.random.default_rng(0), N=120, target="odd", batch="reused", term=2, top=8)
    dev = reuse_on("numpy", 120, "odd", "reused", term=2, top=8, seed=0, dtype="float64")
    np.testing.assert_allclose(dev["signal"], ref["signal"], rtol=1e-10)
    np.testing.assert_allclose(dev["signal_reuse"], ref["signal_reuse"], rtol=1e-10)
    assert dev["term_value"] == pytest.approx(ref["term_value"], rel=1e-8)
    np.testing.assert_allclose(dev["term_overlap"], ref["term_overlap"], atol=1e-6)
    np.testing.assert_allclose(dev["top_values"][:3], ref["top_values"][:3], rtol=1e-6)
    np.testing.assert_allclose(dev["subspace"][:3], ref["subspace"][:3], atol=1e-6)
    np.testing.assert_allclose(dev["subspace_unmemorised"][:3], ref["subspace_unmemorised"][:3],
                               atol=1e-6)
    np.testing.assert_allclose(dev["top_memorisation"][:3], ref["top_memorisation"][:3], atol=1e-6)
