"""Phase diagram: theory regions and the empirical count from the exact terms."""

import numpy as np
import pytest

import twostep as ts
from twostep.analysis import phases

A = np.array([0.05, 0.14, 0.23, 0.32, 0.41])


def test_theory_count_matches_n_spikes():
    a1, a2 = np.meshgrid(A, A, indexing="ij")
    got = phases.theory_count(a1, a2, 4)
    assert got.shape == (5, 5) and got.dtype.kind == "i"
    for i in range(5):
        for j in range(5):
            assert got[i, j] == ts.n_spikes(A[i], A[j], 4)
    with pytest.raises(ValueError, match="alpha1"):
        phases.theory_count(0.5, 0.1)


def test_empirical_count_with_theoretical_exponents_is_lambda():
    a1, a2 = np.meshgrid(A, A, indexing="ij")
    e = -np.arange(6) / 2.0
    spike = np.ones(6, dtype=bool)
    np.testing.assert_array_equal(phases.empirical_count(a1, a2, e, spike, L=4),
                                  phases.theory_count(a1, a2, 4))
    np.testing.assert_array_equal(phases.empirical_count(a1, a2, e, spike),
                                  phases.theory_count(a1, a2, 6))
    spike[2] = False  # a term that is not a spike never counts
    got = phases.empirical_count(0.41, 0.41, e, spike, L=4)
    assert got == 2 and ts.n_spikes(0.41, 0.41, 4) == 3
    # steeper measured decay moves the boundary up: fewer spikes
    assert phases.empirical_count(0.32, 0.23, e - 0.1, np.ones(6, bool), L=4) == 0
    with pytest.raises(ValueError, match="spike"):
        phases.empirical_count(0.1, 0.1, e, [1, 1, 1, 1, 1, 1])


def test_boundaries_and_is_spike():
    np.testing.assert_allclose(phases.empirical_boundary(A, 2, -1.0), ts.phase_boundaries(A, 2))
    got = phases.is_spike([0.9, 0.9, 0.5, 0.99], [0.99, 0.8, 0.9, 0.99], [0.1, 0.2, 0.3, -0.01])
    np.testing.assert_array_equal(got, [True, True, False, False])
    assert phases.ALIGNED == pytest.approx(2 ** -0.5)
    with pytest.raises(ValueError, match="threshold"):
        phases.is_spike([1.0], [1.0], [1.0], threshold=0.0)
    with pytest.raises(ValueError, match="right"):
        phases.is_spike([1.0], [1.0, 1.0], [1.0])


def test_count_margins_by_hand_and_as_the_window_of_the_count():
    out = phases.count_margins([0.1, 0.3], [0.0, -0.5], 2)
    # e_1 = alpha2 - (1/2 - alpha1) on the grid: -0.3, -0.1, -0.1, +0.1
    assert out["down"] == [pytest.approx(0.1)] and out["up"] == [pytest.approx(0.1)]
    assert out["dev"] == [pytest.approx(0.0)]
    a1, a2 = np.meshgrid(A, A, indexing="ij")
    theory = phases.theory_count(a1, a2, 4)
    for shift in (-0.03, 0.0, 0.03):
        e_hat = np.array([0.0] + [-k / 2 + shift for k in (1, 2, 3)])
        m = phases.count_margins(A, e_hat, 4)
        inside = all(-d <= x < u for d, x, u in zip(m["down"], m["dev"], m["up"]))
        same = np.array_equal(phases.empirical_count(a1, a2, e_hat, np.ones(4, bool), 4), theory)
        assert inside == same
    with pytest.raises(ValueError, match="exponents"):
        phases.count_margins(A, [0.0, 1.0], 4)
    with pytest.raises(ValueError, match="alphas"):
        phases.count_margins([0.7], [0.0, 0.0], 2)
