"""Overlaps with target directions and the memorisation diagnostic."""

import numpy as np
import pytest

import twostep as ts
from twostep.analysis.alignment import overlap, overlaps, subspace_overlap


def test_overlap_basic():
    e = np.eye(4)
    assert overlap(e[0], e[0]) == 1.0
    assert overlap(-3 * e[0], e[0]) == 1.0
    assert overlap(e[0] + e[1], e[0]) == pytest.approx(1 / np.sqrt(2))
    np.testing.assert_allclose(overlaps(e[:2], e[1:3]), [[0, 0], [1, 0]])


def test_subspace_overlap():
    e = np.eye(5)
    V = np.array([e[0] + e[1], e[0] - e[1]])
    np.testing.assert_allclose(subspace_overlap(V, e[:3]), [1, 1, 0], atol=1e-12)


def test_chance_level_of_random_directions():
    # |<u, beta>| for a random unit u has mean sqrt(2/(pi d)); chance_overlap is the rms 1/sqrt(d).
    rng = np.random.default_rng(0)
    d = 400
    beta = rng.standard_normal(d)
    vals = [overlap(rng.standard_normal(d), beta) for _ in range(2000)]
    # rms / chance - 1 over seeds 0-29: mean 0.002, sd 0.013, extremes -0.031 and 0.031
    # (seed 0: 0.003); rel=0.05 is about 3.8 sd. |<u, beta>|'s mean would be 20% low.
    assert np.sqrt(np.mean(np.square(vals))) == pytest.approx(ts.chance_overlap(d), rel=0.05)


def test_memorisation_finds_the_copied_input():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((100, 300))
    # over seeds 0-199: the copy's cosine mean 0.9949 (1/sqrt(1.01)), sd 0.0006, min 0.9932;
    # an unrelated vector's ~ sqrt(2 log 100 / 300) = 0.17: mean 0.158, sd 0.023, max 0.228
    value, j = ts.memorisation(X[37] + 0.1 * rng.standard_normal(300), X)
    assert j == 37 and value > 0.99
    value, _ = ts.memorisation(rng.standard_normal(300), X)
    assert value < 0.3


def test_chance_maximum_is_the_typical_largest_entry_of_a_random_unit_vector():
    # Measured over 3 seeds x 100 vectors at d = 200, 1000, 4000: the mean largest |entry| is
    # 0.91-0.95 of sqrt(2 log d / d) (the formula is the leading order; the maximum of d
    # Gaussians falls short of sqrt(2 log d) by a log log d term). The band 0.85-1.0 holds
    # every measured ratio with room for the seed-to-seed spread (about 0.01).
    rng = np.random.default_rng(7)
    for d in (300, 3000):
        U = rng.standard_normal((100, d))
        U /= np.linalg.norm(U, axis=1, keepdims=True)
        ratio = np.abs(U).max(axis=1).mean() / ts.chance_maximum(d, d)
        assert 0.85 < ratio < 1.0, (d, ratio)
    grid = np.array([10, 100])
    assert np.allclose(ts.chance_maximum(grid, grid), np.sqrt(2 * np.log(grid) / grid))
    assert ts.chance_maximum(100, 400) == pytest.approx(np.sqrt(2 * np.log(100) / 400))
    with pytest.raises(ValueError, match="count must be"):
        ts.chance_maximum(1, 10)
    with pytest.raises(ValueError, match="d must be"):
        ts.chance_maximum(10, 0)


def test_memorisations_and_nested_overlaps_agree_with_the_single_calls():
    from twostep.analysis.alignment import memorisations, nested_unmemorised_overlaps

    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 30))
    V = np.linalg.qr(rng.standard_normal((30, 5)))[0].T
    V[1] = X[7] / np.linalg.norm(X[7])          # a memorised input
    B = rng.standard_normal((2, 30))
    values, J = memorisations(V, X)
    for k, v in enumerate(V):
        assert (values[k], J[k]) == pytest.approx(ts.memorisation(v, X), rel=1e-12)
    assert J[1] == 7 and values[1] == pytest.approx(1.0)
    nested = nested_unmemorised_overlaps(V, B, X)
    assert nested.shape == (5, 2)
    for K in range(1, 6):
        np.testing.assert_allclose(nested[K - 1], ts.unmemorised_overlap(V[:K], B, X), rtol=1e-12)
    with pytest.raises(ValueError, match="X"):
        memorisations(V, X[:, :3])
    with pytest.raises(ValueError, match="columns"):
        nested_unmemorised_overlaps(V, B[:, :3], X)
