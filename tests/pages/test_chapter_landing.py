"""The landing page's module: one small network, its outlier counts and the figure."""

import numpy as np
import pytest

import twostep as ts

from twostep.analysis.spectra import singular_values
from twostep.pages import landing


@pytest.fixture(scope="module")
def summary():
    return landing.summary_data(N=80, seed=1)


def test_summary_counts_match_the_spectra(summary):
    assert summary["s_W2"].shape == summary["s_W2r"].shape == (80,)
    threshold = summary["edge"] * (1 + summary["margin"])
    assert summary["count"]["W2"] == int(np.sum(summary["s_W2"] > threshold))
    assert summary["count"]["W2r"] == int(np.sum(summary["s_W2r"] > threshold))
    assert summary["n_spikes"] == 2 and len(summary["exponents"]) == 2  # (0.4, 0.25), L = 4
    assert np.all((summary["memo"] > 0) & (summary["memo"] <= 1 + 1e-12))
    assert summary["memo_null"] == pytest.approx(np.sqrt(2 * np.log(80) / 80))


def test_summary_is_reproducible_and_uses_the_whole_spectrum(summary):
    again = landing.summary_data(N=80, seed=1)
    np.testing.assert_array_equal(again["s_W2"], summary["s_W2"])
    assert np.all(np.diff(summary["s_W2"]) <= 0) and summary["s_W2"][-1] >= 0
    assert singular_values(np.eye(3)).tolist() == [1.0, 1.0, 1.0]


def test_plot_has_labelled_axes(summary):
    fig = landing.plot_summary(summary, landing.terms_data(N=80, seeds=[0]))
    axes = fig.axes
    assert axes[0].get_xlabel() == r"$\alpha_1$" and axes[0].get_ylabel() == r"$\alpha_2$"
    assert any(ax.get_xlabel() == "singular value" for ax in axes)


def test_terms_data_measures_each_exact_term_against_its_spike():
    from twostep.analysis.spikes import term_diagnostics
    terms = landing.terms_data(N=60, seeds=[0, 1])
    ratio = terms.seed_values("ratio", N=60)
    assert ratio.shape == terms.seed_values("left", N=60).shape == (2, 4)
    run = ts.run_two_steps(60, 60, 60, ts.get_activation("poly4"), ts.hermite_link(1),
                           ((0.2, 0.4), (0.2, 0.25)), "fresh", np.random.default_rng(1))
    diag = term_diagnostics(run, corrected=True)
    np.testing.assert_allclose(ratio[1], diag["top"] / diag["signal_corrected"], rtol=1e-12)
    mean, sem = terms.at("left", N=60), terms.at("left", sem=True, N=60)
    assert mean.shape == sem.shape == (4,) and np.all(sem >= 0) and terms.count(N=60) == 2
    fig = landing.plot_summary(landing.summary_data(N=40), terms)
    assert len(fig.axes) == 5          # phase, its colour bar, terms, two spectra


def test_rules_table_states_every_verdict():
    from twostep.analysis.verdicts import RULES

    header, rows = landing.rules_table()
    assert header == ["verdict", "when"]
    for label, text in RULES.items():
        assert [label, text] in rows


def test_spectra_table_reads_the_summary(summary):
    header, cells = landing.spectra_table(summary)
    assert len(header) == 5 and len(cells) == 3
    assert [c[1] for c in cells] == [str(summary["count"][k]) for k in ("W1", "W2", "W2r")]
    assert [c[4] for c in cells] == ["1", str(1 + summary["n_spikes"]), str(1 + summary["n_spikes"])]
    assert cells[1][2] == f"{summary['s_W2'][0]:.2f}"

