"""The sweeps and figures of the chapter *The setting* (twostep/pages/setting.py), at tiny
sizes: agreement with a direct computation, and figures whose attached numbers are the ones
drawn."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from twostep.analysis.spectra import (bulk_edge, marchenko_pastur_density,  # noqa: E402
                                      singular_values, top_singular)
from twostep.model.activations import get_activation  # noqa: E402
from twostep.model.network import gaussian_inputs, initialise  # noqa: E402
from twostep.model.steps import one_step, step_size  # noqa: E402
from twostep.model.targets import Teacher, hermite_link  # noqa: E402
from twostep.pages import setting as ch  # noqa: E402

POLY4 = get_activation("poly4")


def test_kink_margin_is_the_direct_minimum_and_maximum():
    rng = np.random.default_rng(0)
    W, _ = initialise(5, 4, rng)
    X = gaussian_inputs(7, 4, rng)
    pre, shift = ch.kink_margin(W, X, 1e-5)
    assert pre == pytest.approx(np.min(np.abs(W @ X.T)))
    assert shift == pytest.approx(1e-5 * np.max(np.abs(X)))


def test_displacement_matches_a_direct_step():
    row, op = ch.displacement(20, 1, 1.0, 0.25, POLY4)
    rng = np.random.default_rng([20, 1])
    teacher = Teacher(hermite_link(1), 20, rng)
    W0, a = initialise(20, 20, rng)
    X = gaussian_inputs(20, 20, rng)
    D = one_step(W0, a, X, teacher.labels(X, rng), POLY4, step_size(1.0, 0.25, 20)) - W0
    assert row == pytest.approx(np.median(np.linalg.norm(D, axis=1)))
    assert op == pytest.approx(top_singular(D, 1)[0][0])


def test_step_scaling_figure_carries_every_seed_and_the_means(fits_the_column):
    data = ch.step_scaling_data([16, 32], 2, 1.0, 0.25, POLY4)
    moves = [ch.displacement(32, s, 1.0, 0.25, POLY4) for s in range(2)]
    assert data.seed_values("op", N=32) == pytest.approx([m[1] for m in moves])
    assert data.seed_values("row", N=32) == pytest.approx([m[0] for m in moves])
    assert data.at("eta", N=32) == pytest.approx(step_size(1.0, 0.25, 32))
    fig = ch.plot_step_scaling(data, 0.25)
    rows = fig.twostep_data
    seeds = [r for r in rows if r["series"] == "median neuron move"]
    assert sorted(r["y"] for r in seeds if r["x"] == 32) == pytest.approx(
        sorted(m[0] for m in moves))
    means = [r for r in rows if r["series"] == "median neuron move (mean)"]
    assert [r["y"] for r in means] == pytest.approx([data.at("row", N=N) for N in (16, 32)])
    # the predicted slope N^(alpha - 1/2) through the first mean
    assert means[1]["theory"] == pytest.approx(means[0]["y"] * 2 ** (0.25 - 0.5))
    fits_the_column(fig)


def test_w0_spectrum_figure_is_the_histogram_against_the_law(fits_the_column):
    data = ch.w0_spectrum_data([(40, 80), (80, 40)])
    s = singular_values(initialise(40, 80, np.random.default_rng(120))[0])
    np.testing.assert_allclose(data[40, 80], s)
    assert list(data) == [(40, 80), (80, 40)] and data[80, 40].shape == (40,)
    fig = ch.plot_w0_spectrum(data, bins=10)
    rows = [r for r in fig.twostep_data if r["panel"] == 1]
    density, edges = np.histogram(s, bins=10, density=True)
    assert [r["density"] for r in rows] == pytest.approx(density)
    centres = 0.5 * (edges[1:] + edges[:-1])
    assert [r["theory"] for r in rows] == pytest.approx(marchenko_pastur_density(centres, 0.5))
    # the bulk edge is drawn where the law puts it
    assert any(line.get_xdata()[0] == pytest.approx(bulk_edge(0.5))
               for line in fig.axes[0].get_lines())
    fits_the_column(fig)
