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


def test_the_figure_carries_the_data_it_draws(summary):
    from twostep.pages.figures import data_csv

    terms = landing.terms_data(N=80, seeds=[0, 1])
    fig = landing.plot_summary(summary, terms)
    rows = getattr(fig, "twostep_data")
    ratio = [r for r in rows if r["panel"] == "b" and r["series"] == "ratio"]
    np.testing.assert_allclose([r["y"] for r in ratio], terms.at("ratio", N=80))
    assert all(r["prediction"] == 1.0 for r in ratio)
    # every counted outlier of the fresh W2 is a row of panel (c1)
    marked = [r["x"] for r in rows if r["panel"] == "c1" and r["series"] == "counted outlier"]
    threshold = summary["edge"] * (1 + summary["margin"])
    expected = summary["s_W2"][summary["s_W2"] > threshold][:summary["n_marked"]]
    np.testing.assert_allclose(marked, expected)
    assert data_csv(fig).splitlines()[0] == "panel,series,x,y,sem,prediction"


def test_the_registered_run_names_its_registry(tmp_path):
    import json
    import shutil

    from twostep.analysis import confirmatory

    root = landing.registered_run.__globals__["Path"](__file__).resolve().parents[2]
    folder = tmp_path / "at_scale"
    folder.mkdir()
    shutil.copy(root / confirmatory.REGISTRY_PATH, tmp_path / "registry.json")
    header = {"created": "2026-12-07T20:00:00+00:00", "commit": "abc",
              "registry_sha256": confirmatory.file_sha256(tmp_path / "registry.json")}
    (folder / "count_confirm.json").write_text(json.dumps({**header, "records": []}))
    registry, run = landing.registered_run(folder)
    assert run == header and registry["format"] == confirmatory.FORMAT
    # a file of another registry is refused
    (folder / "count_confirm.json").write_text(json.dumps({**header, "registry_sha256": "x"}))
    with pytest.raises(ValueError, match="not this registered run"):
        landing.registered_run(folder)
