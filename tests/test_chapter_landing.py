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
    assert summary.s_W2.shape == summary.s_W2r.shape == (80,)
    threshold = summary.edge * (1 + summary.margin)
    assert summary.count["W2"] == int(np.sum(summary.s_W2 > threshold))
    assert summary.count["W2r"] == int(np.sum(summary.s_W2r > threshold))
    assert summary.n_spikes == 2 and len(summary.exponents) == 2  # (0.4, 0.25), L = 4
    assert np.all((summary.memo > 0) & (summary.memo <= 1 + 1e-12))
    assert summary.memo_null == pytest.approx(np.sqrt(2 * np.log(80) / 80))


def test_summary_is_reproducible_and_uses_the_whole_spectrum(summary):
    again = landing.summary_data(N=80, seed=1)
    np.testing.assert_array_equal(again.s_W2, summary.s_W2)
    assert np.all(np.diff(summary.s_W2) <= 0) and summary.s_W2[-1] >= 0
    assert singular_values(np.eye(3)).tolist() == [1.0, 1.0, 1.0]


def test_plot_has_labelled_axes(summary):
    fig = landing.plot_summary(summary)
    axes = fig.axes
    assert axes[0].get_xlabel() == r"$\alpha_1$" and axes[0].get_ylabel() == r"$\alpha_2$"
    assert any(ax.get_xlabel() == "singular value" for ax in axes)


@pytest.mark.parametrize("kw, match", [(dict(N=4), "N must be an integer >= 8"),
                                       (dict(alpha1=0.5), r"alpha1 must be in \[0.0, 0.5\)"),
                                       (dict(c=0.0), r"c must be in \(0.0, inf\]")])
def test_summary_rejects_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        landing.summary_data(**kw)


def test_terms_data_measures_each_exact_term_against_its_spike():
    from twostep.analysis.spikes import term_diagnostics
    terms = landing.terms_data(N=60, seeds=[0, 1])
    assert terms.ratio.shape == terms.left.shape == (2, 4)
    run = ts.run_two_steps(60, 60, 60, ts.get_activation("poly4"), ts.hermite_link(1),
                           ((0.2, 0.4), (0.2, 0.25)), "fresh", np.random.default_rng(1))
    diag = term_diagnostics(run, corrected=True)
    np.testing.assert_allclose(terms.ratio[1], diag["top"] / diag["signal_corrected"], rtol=1e-12)
    mean, sem = terms.mean_sem("left")
    assert mean.shape == sem.shape == (4,) and np.all(sem >= 0)
    fig = landing.plot_summary(landing.summary_data(N=40), terms)
    assert len(fig.axes) == 5          # phase, its colour bar, terms, two spectra
    with pytest.raises(ValueError, match="at least two seeds"):
        landing.terms_data(N=40, seeds=[0])
    with pytest.raises(TypeError, match="terms must be a Terms"):
        landing.plot_summary(landing.summary_data(N=40), "terms")


def test_rules_table_states_every_verdict():
    from twostep.analysis.verdicts import RULES

    table = landing.rules_table().data
    assert ":name: tab-verdict-rules" in table
    for label, text in RULES.items():
        assert f"| {label} | {text} |" in table


def test_spectra_table_reads_the_summary(summary):
    table = landing.spectra_table(summary).data
    rows = [line for line in table.splitlines() if line.startswith("| $W")]
    assert len(rows) == 3
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    assert [c[1] for c in cells] == [str(summary.count[k]) for k in ("W1", "W2", "W2r")]
    assert [c[4] for c in cells] == ["1", str(1 + summary.n_spikes), str(1 + summary.n_spikes)]
    assert cells[1][2] == f"{summary.s_W2[0]:.2f}"
    with pytest.raises(TypeError, match="data must be a Summary"):
        landing.spectra_table("summary")
