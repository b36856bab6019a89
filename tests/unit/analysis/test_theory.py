"""The theory's predictions: Lambda, exponents, and the one-step overlap."""

import numpy as np
import pytest

import twostep as ts
from twostep.analysis.alignment import overlap


@pytest.mark.parametrize("alpha1, alpha2, L, expected", [
    (0.0, 0.0, 4, 0),
    (0.2, 0.2, 4, 0),       # alpha1 + alpha2 < 1/2
    (0.25, 0.25, 4, 1),     # on the boundary alpha1 + alpha2 = 1/2
    (0.3, 0.2, 4, 1),       # boundary, ratio exactly 1 in exact arithmetic
    (0.4, 0.1, 4, 1),       # 0.1 / (0.5 - 0.4) is 0.999.. in floating point
    (0.4, 0.2, 4, 2),       # integer ratio 2
    (0.4, 0.25, 4, 2),
    (0.4, 0.3, 4, 3),
    (0.45, 0.3, 4, 3),      # ratio 6, capped at L - 1
    (0.45, 0.3, 2, 1),
    (0.45, 0.3, None, 6),
    (0.1, 0.45, 4, 1),
    (0.45, 0.0, 4, 0),
])
def test_n_spikes_table(alpha1, alpha2, L, expected):
    assert ts.n_spikes(alpha1, alpha2, L) == expected


def test_spike_exponents_and_terms():
    assert ts.spike_exponent(0, 0.4, 0.25) == pytest.approx(0.25)
    assert ts.spike_exponent(2, 0.4, 0.25) == pytest.approx(0.05)
    assert ts.spike_exponent(3, 0.4, 0.25) == pytest.approx(-0.05)
    mu_tanh = ts.Tanh().hermite_coefficients(5)
    assert ts.spike_terms(0.45, 0.3, mu_tanh) == [2, 4]   # odd k need even mu_{k+1} = 0
    assert ts.spike_terms(0.4, 0.3, [0, 1, 1, 1, 1]) == [1, 2, 3]
    np.testing.assert_allclose(ts.phase_boundaries([0.0, 0.25], 1), [0.5, 0.25])


def test_one_step_overlap_formula_values():
    assert ts.one_step_overlap(1.0, 1.0, 1.0) == pytest.approx(1 / np.sqrt(2))
    assert ts.one_step_overlap(0.0, 1.0, 3.0) == 0.0
    assert ts.one_step_overlap(1.0, 1.0, 1e9) == pytest.approx(1.0)


def one_step_overlaps(link, d, psi, seeds):
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        teacher = ts.Teacher(link, d, rng)
        X = ts.gaussian_inputs(int(psi * d), d, rng)
        y = teacher.labels(X, rng)
        out.append(overlap(X.T @ y, teacher.directions[0]))
    return np.array(out), teacher


@pytest.mark.parametrize("psi", [0.5, 1.0, 2.0])
def test_one_step_overlap_he1_matches_formula(psi):
    # d = 1000, over seeds 0-39, the deviation from the formula per seed: sd 0.016, 0.010,
    # 0.007 (psi = 0.5, 1, 2), largest 0.035; the mean of 5 seeds, over the 8 blocks: sd
    # 0.007, 0.005, 0.002, largest 0.014 (seeds 0-4: 0.014, 0.011, 0.0004). abs=0.03 is
    # 4 sd or more of that mean.
    vals, teacher = one_step_overlaps(ts.hermite_link(1), 1000, psi, range(5))
    pred = ts.one_step_overlap(1.0, teacher.second_moment, psi)
    assert np.mean(vals) == pytest.approx(pred, abs=0.03)


@pytest.mark.parametrize("name", ["he2", "he3", "odd"])
def test_one_step_overlap_near_chance_without_linear_part(name):
    # sqrt(d) x the mean overlap of 10 seeds at d = n = 1000 (5000 random groups of seeds
    # 0-59): He2 mean 1.72, sd 0.33; He3 2.39, sd 0.49, 99.9% quantile 3.83; odd 1.43, sd
    # 0.29 (seeds 0-9: 1.67, 3.11, 1.50). He1 gives 22. Bound 4, over 3 sd for He3.
    vals, _ = one_step_overlaps(ts.get_link(name), 1000, 1.0, range(10))
    assert np.mean(vals) < 4 / np.sqrt(1000)
