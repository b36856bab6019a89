"""Shared figure helpers draw what they claim."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import twostep as ts  # noqa: E402
from twostep.chapters import figures as plotting  # noqa: E402


def test_plot_spectrum_counts_and_draws_outliers():
    W0, _ = ts.initialise(300, 300, np.random.default_rng(0))
    s = np.r_[5.0, 3.0, ts.singular_values(W0)]
    fig, ax = plt.subplots()
    n_out = plotting.plot_spectrum(ax, s, 1.0)
    assert n_out == 2
    labels = [t.get_text() for t in ax.legend().get_texts()]
    assert any("Marchenko" in t for t in labels) and any("2 beyond" in t for t in labels)
    plt.close(fig)


def test_plot_spectrum_outlier_color():
    s = np.r_[5.0, np.linspace(0.1, 1.9, 50)]
    fig, ax = plt.subplots()
    plotting.plot_spectrum(ax, s, 1.0, outlier_color="#1e8449")
    drawn = [line for line in ax.lines if line.get_color() == "#1e8449"]
    assert len(drawn) == 2   # the tick at 5 and its legend handle
    assert not any(line.get_color() == plotting.COLORS["reused"] for line in ax.lines)
    plt.close(fig)


def test_theory_power_law_passes_through_anchor():
    fig, ax = plt.subplots()
    (line,) = plotting.theory_power_law(ax, [500, 1000, 2000], -0.5, 1000, 2.0)
    np.testing.assert_allclose(line.get_ydata(), [2 * np.sqrt(2), 2.0, 2 / np.sqrt(2)])
    plt.close(fig)
