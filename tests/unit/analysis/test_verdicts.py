"""The verdict rule (twostep.analysis.verdicts): a truth table of cases, the loopholes of the
rule it replaced among them, each with the label it must get."""

import numpy as np
import pytest
from scipy import stats

from twostep.analysis.verdicts import (CONFIDENCE, MARGIN, MIN_SEEDS, RULES, SEVERITY,
                                       binomial_interval, count_verdict, judge, rule_rows,
                                       t_interval, verdict, worst)


def seeds(mean, sem, n=10):
    # n values with exactly this mean and standard error
    z = np.linspace(-1, 1, n)
    z = (z - z.mean()) / (z.std(ddof=1) / np.sqrt(n))
    return mean + sem * z


# (case, measured mean, sem, seeds, prediction, null, label)
EFFECTS = [
    ("at its predicted size, far from the null", 0.30, 0.005, 10, 0.31, 0.02, "seen"),
    ("distinct, but too wide to agree", 0.30, 0.04, 10, 0.31, 0.02, "seen in part"),
    ("distinct, beyond the prediction", 1.27, 0.01, 10, 1.0, 0.2, "seen in part"),
    ("within noise of the null, the prediction inside the interval", 0.04, 0.12, 10, 0.30, 0.0,
     "not seen"),
    ("at the null, the prediction excluded", 0.01, 0.02, 10, 0.30, 0.0, "contradicted"),
    # the old rule's loophole: abs(gap) made a wrong-sign effect 'seen in part'
    ("wrong sign (a remainder predicted to fall like N^-1/2 grows like N^+1/2)",
     0.5, 0.02, 6, -0.5, 0.0, "contradicted"),
    ("short of the prediction by more than the margin", 0.10, 0.01, 10, 0.30, 0.0, "contradicted"),
    # the old rule's loophole: a wide interval around the prediction 'agreed'
    ("a wide interval around the prediction", 0.31, 0.2, 10, 0.31, 0.0, "not seen"),
    # the old rule's loophole: 10 % of the prediction decided a row 2.5 se low (3 seeds)
    ("2.5 standard errors low, 3 seeds", 0.289, 0.008, 3, 0.309, 0.043, "seen in part"),
    # 'five standard errors' with 2 seeds: now no verdict at all
    ("two seeds", 0.30, 0.005, 2, 0.31, 0.02, "not judged"),
    ("one seed", 0.30, 0.0, 1, 0.31, 0.02, "not judged"),
    # the old rule's loophole: a zero standard error was infinitely significant
    ("no spread", 0.30, 0.0, 10, 0.31, 0.02, "not judged"),
    ("negative prediction, seen", -0.49, 0.005, 12, -0.5, 0.0, "seen"),
]


@pytest.mark.parametrize("case, m, se, n, p, z, label", EFFECTS, ids=[c[0] for c in EFFECTS])
def test_effect_claims(case, m, se, n, p, z, label):
    v = judge(m, se, p, z, seeds=n)
    assert v.label == label, case
    if n >= 2 and se > 0:   # the same from per-seed values
        assert verdict(seeds(m, se, n), p, z).label == label, case


# (case, mean, sem, seeds, null, alternative, label)
NULLS = [
    ("at the null, narrow", 0.026, 0.003, 10, 0.025, 0.309, "seen"),
    ("far from the null", 0.10, 0.003, 10, 0.025, 0.309, "contradicted"),
    ("too wide to tell", 0.03, 0.02, 10, 0.025, 0.309, "not seen"),
    ("three seeds, narrow", 0.011, 0.003, 3, 0.025, 0.309, "seen"),
    ("two seeds", 0.011, 0.003, 2, 0.025, 0.309, "not judged"),
]


@pytest.mark.parametrize("case, m, se, n, z, alt, label", NULLS, ids=[c[0] for c in NULLS])
def test_null_claims(case, m, se, n, z, alt, label):
    assert judge(m, se, z, z, seeds=n, predicts_null=True, alternative=alt).label == label, case


# (case, hits, total, seeds, label)
COUNTS = [
    ("every pair of many", 40, 40, 10, "seen"),
    ("every pair of 24: the interval reaches below 90 %", 24, 24, 3, "seen in part"),
    ("none of three (the old row's 0 of 3)", 0, 3, 3, "contradicted"),
    ("half", 12, 24, 3, "contradicted"),
    ("no pair where the claim applies", 0, 0, 3, "not judged"),
    ("two seeds", 10, 10, 2, "not judged"),
]


@pytest.mark.parametrize("case, hits, total, n, label", COUNTS, ids=[c[0] for c in COUNTS])
def test_count_claims(case, hits, total, n, label):
    assert count_verdict(hits, total, seeds=n).label == label, case


def test_the_interval_is_student_t_with_the_degrees_of_freedom():
    low, high = t_interval(1.0, 0.1, 2)
    assert high - 1.0 == pytest.approx(0.1 * stats.t.ppf(0.975, 2))    # 4.30, not 1.96
    assert CONFIDENCE == 0.95 and MIN_SEEDS == 3 and MARGIN == 0.10
    v = judge(-0.49, 0.01, -0.5, 0.0, seeds=3, df=10)     # a slope over 12 points
    assert v.df == 10 and v.high - v.mean == pytest.approx(0.01 * stats.t.ppf(0.975, 10))


def test_the_clopper_pearson_interval():
    low, high = binomial_interval(24, 24)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 24))
    v = count_verdict(24, 24, seeds=3)
    assert (v.low, v.high) == (low, high) and v.mean == 1.0


def test_a_paired_null_is_judged_on_the_paired_difference():
    base = seeds(0.2, 0.05)
    # unpaired, 0.21 vs 0.20 is 0.2 se apart: not seen
    assert verdict(base + 0.01, 0.21, 0.2).label == "not seen"
    # paired with an offset of 0.01 +- a little, the difference is resolved
    v = verdict(base + 0.01 + seeds(0, 1e-4), 0.21, base)
    assert v.distinct and v.t_null > 99 and v.null == pytest.approx(0.2)
    # the effect is there; its size (0.21 +- 0.05, margin 0.001) is not shown to agree
    assert v.label == "seen in part"


def test_the_margin_is_a_tenth_of_the_predicted_effect():
    v = judge(0.30, 0.001, 0.31, 0.01, seeds=10)
    assert v.margin == pytest.approx(0.03)
    # just inside and just outside the margin, with a tiny interval
    assert judge(0.285, 1e-5, 0.31, 0.01, seeds=10).label == "seen"
    assert judge(0.275, 1e-5, 0.31, 0.01, seeds=10).label == "contradicted"


def test_every_label_has_a_rule_and_every_rule_can_be_reached():
    reached = ({c[-1] for c in EFFECTS} | {c[-1] for c in NULLS} | {c[-1] for c in COUNTS})
    assert reached == set(RULES) == set(SEVERITY)
    rows = rule_rows()
    assert [r[0] for r in rows[:len(SEVERITY)]] == list(SEVERITY)
    assert "10%" in rows[len(SEVERITY)][1] and "4.30" in rows[-1][1]


@pytest.mark.parametrize("kw, error, match", [
    (dict(measured=[]), ValueError, "measured must be a non-empty"),
    (dict(measured=[0.1, np.nan]), ValueError, "measured must be"),
    (dict(null=[0.1, 0.2, 0.3, 0.4]), ValueError, "a paired null must have one value per seed"),
    (dict(prediction="x"), TypeError, "prediction"),
    (dict(prediction=0.0), ValueError, "prediction different from its null"),
    (dict(predicts_null=1), TypeError, "predicts_null must be a bool"),
    (dict(predicts_null=True), ValueError, "needs the alternative"),
])
def test_bad_input(kw, error, match):
    args = dict(measured=[0.1, 0.2, 0.3], prediction=0.3, null=0.0)
    args.update(kw)
    with pytest.raises(error, match=match):
        verdict(**args)


def test_bad_summaries_and_counts():
    with pytest.raises(ValueError, match="sem must be in"):
        judge(0.1, -1.0, 0.2, 0.0, seeds=3)
    with pytest.raises(ValueError, match="seeds must be"):
        judge(0.1, 0.1, 0.2, 0.0, seeds=0)
    with pytest.raises(ValueError, match="hits must be in"):
        count_verdict(5, 4, seeds=3)


def test_worst_of_several():
    assert worst(["seen", "seen in part"]) == "seen in part"
    assert worst(["seen", "not judged"]) == "not judged"
    assert worst(["not judged", "contradicted"]) == "contradicted"
    with pytest.raises(ValueError, match="verdicts must be"):
        worst(["maybe"])
