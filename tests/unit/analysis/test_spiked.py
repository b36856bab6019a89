"""The rank-one spiked rectangular Gaussian matrix: outlier location and vector overlaps."""

import numpy as np
import pytest

import twostep as ts
from twostep.analysis.bbp import bbp_threshold, critical_step, spiked_outlier, spiked_overlaps


@pytest.mark.parametrize("ratio", [0.5, 1.0, 2.0])
def test_continuous_at_threshold_and_large_theta(ratio):
    tc = bbp_threshold(ratio)
    assert tc == pytest.approx(ratio ** 0.25)
    edge = ts.bulk_edge(ratio)
    assert spiked_outlier(tc * (1 + 1e-9), ratio) == pytest.approx(edge, rel=1e-6)
    assert spiked_outlier(0.5 * tc, ratio) == edge
    left, right = spiked_overlaps(tc * (1 + 1e-9), ratio)
    assert left < 1e-3 and right < 1e-3
    assert spiked_overlaps(0.3 * tc, ratio) == (0.0, 0.0)
    # far above the threshold the outlier is the spike itself
    assert spiked_outlier(1e4, ratio) == pytest.approx(1e4, rel=1e-6)
    assert all(x == pytest.approx(1.0, abs=1e-6) for x in spiked_overlaps(1e4, ratio))


def test_critical_step_reaches_the_threshold():
    eta = critical_step(1.0, 1.0, 1.0, 1.0, 1.0)
    assert eta == pytest.approx(1 / np.sqrt(2))
    assert ts.spike_strength(eta, 1.0, 1.0, 1.0, 1.0) == pytest.approx(bbp_threshold(1.0))
    assert critical_step(2.0, 0.0, 1.0, 2.0, 0.5) == pytest.approx(0.5 ** 0.25 / (2 * np.sqrt(0.5)))


def test_vectorised_and_increasing():
    t = np.linspace(0, 5, 51)
    s = spiked_outlier(t, 2.0)
    left, right = spiked_overlaps(t, 2.0)
    assert s.shape == left.shape == right.shape == t.shape
    assert np.all(np.diff(s) >= -1e-12) and np.all(np.diff(right) >= -1e-12)


def test_transpose_symmetry():
    # W0^T = sqrt(gamma) * (d x N matrix with variance 1/N): same formulas with roles swapped
    for g in (0.3, 1.7):
        for t in (1.5, 3.0):
            s = spiked_outlier(t, g)
            s_t = np.sqrt(g) * spiked_outlier(t / np.sqrt(g), 1 / g)
            assert s == pytest.approx(s_t)
            left, right = spiked_overlaps(t, g)
            left_t, right_t = spiked_overlaps(t / np.sqrt(g), 1 / g)
            assert left == pytest.approx(right_t) and right == pytest.approx(left_t)


@pytest.mark.parametrize("N, d", [(400, 800), (800, 400)])
def test_against_simulation(N, d):
    # Over seeds 0-23 (8 blocks of 3), N x d = 400 x 800 (800 x 400): the outlier per seed
    # sd 1.2% (1.3%), the mean of 3 within 1.4% (1.1%), sd 0.8% (0.7%); the overlaps per seed
    # sd 0.004-0.009, the mean of 3 within 0.004 (0.010), sd <= 0.005. Seeds 0-2: -0.8%
    # (+1.1%), overlaps within 0.006. rel=0.025 and abs=0.02 are 3 sd or more.
    g, theta = N / d, 2.5
    out = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        W0 = rng.standard_normal((N, d)) / np.sqrt(d)
        u = rng.standard_normal(N)
        u /= np.linalg.norm(u)
        w = rng.standard_normal(d)
        w /= np.linalg.norm(w)
        s, U, Vt = ts.top_singular(W0 + theta * np.outer(u, w), 1)
        out.append([s[0], abs(U[:, 0] @ u), abs(Vt[0] @ w)])
    s, left, right = np.mean(out, axis=0)
    left_th, right_th = spiked_overlaps(theta, g)
    assert s == pytest.approx(spiked_outlier(theta, g), rel=0.025)
    assert left == pytest.approx(left_th, abs=0.02)
    assert right == pytest.approx(right_th, abs=0.02)


@pytest.mark.parametrize("theta, ratio, error, match", [
    (-1.0, 1.0, ValueError, r"theta must be finite and in \[0, inf\)"),
    ([1.0, np.nan], 1.0, ValueError, "theta must be finite"),
    ("1", 1.0, TypeError, "theta must be a real number"),
    (1.0, 0.0, ValueError, r"ratio must be in \(0.0, inf\]"),
    (1.0, "x", TypeError, "ratio must be a real number"),
])
def test_rejects_bad_input(theta, ratio, error, match):
    with pytest.raises(error, match=match):
        spiked_outlier(theta, ratio)
    with pytest.raises(error, match=match):
        spiked_overlaps(theta, ratio)
