"""Spectra: top-k triplets, full spectra, and the Marchenko-Pastur law of W_0."""

import numpy as np
import pytest
from scipy.integrate import quad

import twostep as ts
from twostep.analysis.alignment import overlap
from twostep.analysis.bbp import spiked_overlaps
from twostep.analysis.spectra import bulk_edges


def test_top_singular_matches_full_svd():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((120, 80))
    s, U, Vt = ts.top_singular(M, 5)
    U_, s_, Vt_ = np.linalg.svd(M)
    np.testing.assert_allclose(s, s_[:5], rtol=1e-10)
    np.testing.assert_allclose(np.abs(np.sum(U * U_[:, :5], axis=0)), 1, atol=1e-8)
    np.testing.assert_allclose(np.abs(np.sum(Vt * Vt_[:5], axis=1)), 1, atol=1e-8)
    # fixed starting vector: identical on repeat
    s2, U2, _ = ts.top_singular(M, 5)
    np.testing.assert_array_equal(U, U2)
    # k close to min(shape) takes the dense route
    np.testing.assert_allclose(ts.top_singular(M, 80)[0], s_, rtol=1e-12)


def test_singular_values_via_gram():
    rng = np.random.default_rng(1)
    for shape in [(50, 80), (80, 50)]:
        M = rng.standard_normal(shape)
        np.testing.assert_allclose(ts.singular_values(M), np.linalg.svd(M, compute_uv=False),
                                   rtol=1e-10)


@pytest.mark.parametrize("ratio", [0.25, 0.5, 1.0, 2.0, 4.0])
def test_marchenko_pastur_density_is_normalised(ratio):
    lo, hi = bulk_edges(ratio)
    total, _ = quad(lambda s: ts.marchenko_pastur_density(np.array([s]), ratio)[0], lo, hi,
                    limit=200)
    assert total == pytest.approx(1.0, abs=1e-6)
    # second moment of the non-zero singular values = mean eigenvalue of the smaller Gram
    m2, _ = quad(lambda s: s * s * ts.marchenko_pastur_density(np.array([s]), ratio)[0], lo, hi,
                 limit=200)
    assert m2 == pytest.approx(max(ratio, 1.0), abs=1e-6)


def test_w0_singular_values_follow_marchenko_pastur():
    # At N = d = 1000 over seeds 0-11: KS distance mean 0.0033, sd 0.0004, max 0.0043;
    # tolerance 0.01 is 2.3x the largest. The wrong law (ratio 0.8): mean 0.082, min 0.081.
    # s_1 - 2: mean -0.011, sd 0.007, extremes -0.024 and 0.003 (seed 0: -0.002); the
    # ratio-0.8 edge is 0.11 lower, so abs=0.04 (about 4 sd).
    W0, _ = ts.initialise(1000, 1000, np.random.default_rng(0))
    s = ts.singular_values(W0)
    assert ts.ks_distance(s, 1.0) < 0.01
    assert ts.ks_distance(s, 0.8) > 0.03
    assert s[0] == pytest.approx(ts.bulk_edge(1.0), abs=0.04)


def test_outlier_count():
    assert ts.count_outliers(np.array([3.0, 2.2, 2.05, 1.0]), 2.0, margin=0.05) == 2
    assert ts.bulk_edge(1.0) == 2.0
    assert bulk_edges(4.0) == (1.0, 3.0)


def test_rank_one_spike_detected_above_bulk():
    rng = np.random.default_rng(2)
    W0, _ = ts.initialise(400, 400, rng)
    u, v = rng.standard_normal(400), rng.standard_normal(400)
    spiked = W0 + 4 * np.outer(u / np.linalg.norm(u), v / np.linalg.norm(v))
    s, _, Vt = ts.top_singular(spiked, 3)
    # over seeds 0-39: one outlier every time (seed 2: 4.32, then 1.98); the right overlap
    # has mean 0.968, sd 0.0024, range 0.962-0.973, and the BBP value is 0.968.
    assert ts.count_outliers(s, ts.bulk_edge(1.0)) == 1
    assert overlap(Vt[0], v) == pytest.approx(spiked_overlaps(4.0, 1.0)[1], abs=0.01)
