"""The verdict rule (twostep.analysis.verdicts) on synthetic measurements."""

import numpy as np
import pytest

from twostep.analysis.verdicts import N_NULL, REL_TOL, RULES, verdict


def seeds(mean, sem, n=10):
    # n values with exactly this mean and standard error
    z = np.linspace(-1, 1, n)
    z = (z - z.mean()) / (z.std(ddof=1) / np.sqrt(n))
    return mean + sem * z


def test_an_effect_at_its_predicted_size_far_from_the_null_is_seen():
    v = verdict(seeds(0.30, 0.01), 0.31, 0.02)
    assert v.label == "seen" and v.agrees and v.distinct
    assert v.mean == pytest.approx(0.30) and v.sem == pytest.approx(0.01)
    assert v.z_null == pytest.approx(28.0)


def test_an_effect_off_its_prediction_is_seen_in_part():
    v = verdict(seeds(0.10, 0.01), 0.30, 0.0)            # 10 se from the null, 1/3 of p
    assert v.label == "seen in part" and v.distinct and not v.agrees


def test_within_five_standard_errors_of_the_null_is_not_seen():
    v = verdict(seeds(0.04, 0.01), 0.30, 0.0)            # 4 se from the null
    assert v.label == "not seen" and not v.distinct
    # exactly at the boundary: 5 se counts as distinct
    assert verdict(seeds(0.05, 0.01), 0.30, 0.0).distinct


def test_the_relative_tolerance_and_the_two_standard_errors():
    assert verdict(seeds(0.9, 1e-4), 1.0, 0.0).agrees                     # 10 %: tolerance
    assert not verdict(seeds(0.88, 1e-4), 1.0, 0.0).agrees
    assert verdict(seeds(0.5, 0.2), 0.85, 0.0, n_null=2).agrees           # 1.75 se
    assert REL_TOL == 0.10 and N_NULL == 5.0


def test_a_paired_null_is_judged_on_the_paired_difference():
    base = seeds(0.2, 0.05)
    # unpaired, 0.21 vs 0.20 is 0.2 se apart; paired with a constant offset the difference is exact
    assert verdict(base + 0.01, 0.3, 0.2).label == "not seen"
    v = verdict(base + 0.01, 0.3, base)
    assert v.distinct and v.z_null > 1e6 and v.null == pytest.approx(0.2)


def test_a_null_prediction_is_seen_or_contradicted():
    assert verdict(seeds(0.026, 0.003), 0.025, 0.025, predicts_null=True).label == "seen"
    assert verdict(seeds(0.10, 0.003), 0.025, 0.025, predicts_null=True).label == "contradicted"


def test_a_single_draw_has_no_standard_error():
    v = verdict([0.95], 1.0, 0.0)
    assert v.sem == 0 and v.label == "seen" and v.seeds == 1


def test_every_label_has_a_rule():
    labels = {verdict(seeds(m, 0.01), p, 0.0, predicts_null=pn).label
              for m, p, pn in [(0.3, 0.3, False), (0.1, 0.3, False), (0.0, 0.3, False),
                               (0.3, 0.0, True)]}
    assert labels == set(RULES)


@pytest.mark.parametrize("kw, error, match", [
    (dict(measured=[]), ValueError, "measured must be a non-empty"),
    (dict(measured=[0.1, np.nan]), ValueError, "measured must be"),
    (dict(null=[0.1, 0.2, 0.3]), ValueError, "a paired null must have one value per seed"),
    (dict(prediction="x"), TypeError, "prediction"),
    (dict(n_null=0), ValueError, "n_null"),
    (dict(predicts_null=1), TypeError, "predicts_null must be a bool"),
])
def test_bad_input(kw, error, match):
    args = dict(measured=[0.1, 0.2], prediction=0.3, null=0.0)
    args.update(kw)
    with pytest.raises(error, match=match):
        verdict(**args)


def test_judge_is_the_rule_on_summaries():
    from twostep.analysis.verdicts import judge

    x = seeds(0.30, 0.01)
    v, w = verdict(x, 0.31, 0.02), judge(0.30, 0.01, 0.31, 0.02, seeds=10)
    assert (v.label, v.z_null) == (w.label, pytest.approx(w.z_null))
    assert judge(0.10, 0.01, 0.025, 0.025, seeds=5, predicts_null=True).label == "contradicted"
    with pytest.raises(ValueError, match="sem must be in"):
        judge(0.1, -1.0, 0.2, 0.0, seeds=3)
    with pytest.raises(ValueError, match="seeds must be"):
        judge(0.1, 0.1, 0.2, 0.0, seeds=0)


def test_worst_of_several():
    from twostep.analysis.verdicts import worst

    assert worst(["seen", "seen in part"]) == "seen in part"
    assert worst([verdict([0.3], 0.3, 0.0), "not seen"]) == "not seen"
    with pytest.raises(ValueError, match="verdicts must be"):
        worst(["maybe"])
