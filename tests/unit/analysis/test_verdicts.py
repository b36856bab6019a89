"""The verdict rule (twostep.analysis.verdicts): a truth table of cases, each with the label it
must get, the holes of the rule it replaced among them (issue 51), and the meaning of each label
the same for every kind of claim."""

import inspect

import numpy as np
import pytest
from scipy import stats

from twostep.analysis import verdicts as V
from twostep.analysis.verdicts import (CONFIDENCE, CONFIRMED, CONSISTENT, CONTRADICTED, DIFFERS,
                                       LABELS, MARGIN, MIN_DRAWS, NOT_JUDGED, NOT_REACHED, RULES,
                                       binomial_interval, draws_to_confirm, effect, no_effect,
                                       rule_rows, share, size, summary, t_interval, worst)


# --- the calls of issue 51, each with the label it must now get ---------------------------

def test_an_overshoot_differs():
    # was "seen in part": ten times the predicted size is not a partial agreement
    assert size([10.0, 10.1, 9.9], 1.0, 0.0).label == DIFFERS


def test_rounding_noise_is_no_spread():
    # was "seen": a spread of 1e-12 made an interval of width 1e-12
    assert size([1, 1, 1 + 1e-12], 1, 0).label == NOT_JUDGED
    assert effect([1, 1, 1 + 1e-12], 0).label == NOT_JUDGED


def test_degrees_of_freedom_come_from_the_draws():
    # judge(1.0, 0.04, 1, 0, seeds=3, df=1000) was "seen": a caller's df is not taken
    three = summary(1.0, 0.04, 3)
    assert size(three, 1.0, 0.0).label == CONSISTENT          # t_2 = 4.30: +-0.17 > 0.1
    for judge in (size, effect, no_effect):
        assert "df" not in inspect.signature(judge).parameters
        with pytest.raises(TypeError):
            judge(three, 1.0, df=1000)


def test_the_no_effect_margin_is_the_books_constant():
    # verdict(..., predicts_null=True, alternative=100) was "seen": a margin of 10
    assert no_effect([0.5, 0.6, 0.55], 0.0).label == CONTRADICTED
    assert "alternative" not in inspect.signature(no_effect).parameters
    with pytest.raises(TypeError):
        no_effect([0.5, 0.6, 0.55], 0.0, alternative=100)
    assert no_effect([0.5, 0.6, 0.55], 0.0).margin == MARGIN


def test_items_of_one_draw_count_once():
    # count_verdict(36, 36, seeds=3) was "seen": 36 items from 3 draws are 3 outcomes
    v = share([True] * 36, draws=[0] * 12 + [1] * 12 + [2] * 12)
    assert (v.label, v.draws, v.passed) == (CONSISTENT, 3, 3)
    # one failing item fails its draw
    v = share([True] * 35 + [False], draws=[0] * 12 + [1] * 12 + [2] * 12)
    assert (v.draws, v.passed) == (3, 2)


def test_one_of_two_is_not_judged():
    # count_verdict(1, 2, seeds=3) was "seen in part"
    assert share([True, False], draws=[0, 1]).label == NOT_JUDGED


# --- the truth table --------------------------------------------------------------------------

def values(mean, sem, n=10):
    return summary(mean, sem, n)


# (case, measured mean, sem, draws, null, sign, label)
EFFECTS = [
    ("far above the null", 0.30, 0.01, 10, 0.02, 1, CONFIRMED),
    ("far below the null, claimed below", -0.49, 0.01, 6, 0.0, -1, CONFIRMED),
    ("the other sign", 0.5, 0.02, 6, 0.0, -1, CONTRADICTED),
    ("within noise of the null", 0.04, 0.12, 10, 0.0, 1, CONSISTENT),
    ("two draws", 0.30, 0.005, 2, 0.02, 1, NOT_JUDGED),
    ("no spread", 0.30, 0.0, 10, 0.02, 1, NOT_JUDGED),
]


@pytest.mark.parametrize("case, m, se, n, z, sign, label", EFFECTS, ids=[c[0] for c in EFFECTS])
def test_effect_claims(case, m, se, n, z, sign, label):
    assert effect(values(m, se, n), z, sign=sign).label == label, case


# (case, mean, sem, draws, prediction, null, label)
SIZES = [
    ("at its size", 0.30, 0.005, 10, 0.31, 0.02, CONFIRMED),
    ("too wide to tell", 0.30, 0.04, 10, 0.31, 0.02, CONSISTENT),
    ("beyond the prediction", 1.27, 0.01, 10, 1.0, 0.2, DIFFERS),
    ("short of the prediction (the reuse row of issue 51)", 0.246, 0.012, 10, 0.309, 0.043,
     DIFFERS),
    ("a wide interval around the prediction", 0.31, 0.2, 10, 0.31, 0.0, CONSISTENT),
    ("negative prediction", -0.49, 0.005, 12, -0.5, 0.0, CONFIRMED),
    ("one draw", 0.30, 0.0, 1, 0.31, 0.02, NOT_JUDGED),
]


@pytest.mark.parametrize("case, m, se, n, p, z, label", SIZES, ids=[c[0] for c in SIZES])
def test_size_predictions(case, m, se, n, p, z, label):
    assert size(values(m, se, n), p, z).label == label, case


# (case, mean, sem, draws, null, label): the two no-effect rows of issue 51 among them
NULLS = [
    ("the even link: 0.012 +- 0.003 at a level of 0.025", 0.012, 0.003, 10, 0.025, CONFIRMED),
    ("the fresh batch: 0.061 +- 0.013 at a level of 0.066", 0.061, 0.013, 10, 0.066, CONFIRMED),
    ("far above the level", 0.30, 0.01, 10, 0.025, CONTRADICTED),
    ("far below the level", 0.0, 0.001, 10, 0.3, DIFFERS),
    ("too wide to tell", 0.10, 0.05, 10, 0.025, CONSISTENT),
    ("two draws", 0.011, 0.003, 2, 0.025, NOT_JUDGED),
]


@pytest.mark.parametrize("case, m, se, n, z, label", NULLS, ids=[c[0] for c in NULLS])
def test_no_effect_claims(case, m, se, n, z, label):
    assert no_effect(values(m, se, n), z).label == label, case


# (case, passing draws, draws, failure label, label)
SHARES = [
    ("every draw of many", 40, 40, DIFFERS, CONFIRMED),
    ("every draw of 24: the interval reaches below 90 %", 24, 24, DIFFERS, CONSISTENT),
    ("none of three", 0, 3, DIFFERS, DIFFERS),
    ("half of 24, a bound", 12, 24, CONTRADICTED, CONTRADICTED),
    ("no draw where the claim applies", 0, 0, DIFFERS, NOT_REACHED),
    ("two draws", 2, 2, DIFFERS, NOT_JUDGED),
]


@pytest.mark.parametrize("case, k, n, fails, label", SHARES, ids=[c[0] for c in SHARES])
def test_shares_of_draws(case, k, n, fails, label):
    assert share([True] * k + [False] * (n - k), fails=fails).label == label, case


def test_every_label_has_a_rule_and_is_reached():
    reached = ({c[-1] for c in EFFECTS} | {c[-1] for c in SIZES} | {c[-1] for c in NULLS}
               | {c[-1] for c in SHARES})
    assert reached == set(RULES) == set(LABELS)
    rows = rule_rows()
    assert [r[0] for r in rows[:len(LABELS)]] == list(LABELS)
    assert "4.30" in rows[-1][1] and f"{draws_to_confirm()} draws" in rows[-1][1]


def test_no_label_depends_on_the_kind_of_claim():
    # "contradicted" is the wrong side of the claim, "differs" a missed quantitative
    # prediction, for every kind: the kinds that can give each
    can = {CONTRADICTED: {"effect", "no effect", "share"}, DIFFERS: {"no effect", "size", "share"}}
    seen = {}
    for case in EFFECTS:
        seen.setdefault(effect(values(*case[1:4]), case[4], sign=case[5]).label, set()).add("effect")
    for case in SIZES:
        seen.setdefault(size(values(*case[1:4]), case[4], case[5]).label, set()).add("size")
    for case in NULLS:
        seen.setdefault(no_effect(values(*case[1:4]), case[4]).label, set()).add("no effect")
    for case in SHARES:
        seen.setdefault(share([True] * case[1] + [False] * (case[2] - case[1]),
                              fails=case[3]).label, set()).add("share")
    assert seen[CONTRADICTED] <= can[CONTRADICTED] and seen[DIFFERS] <= can[DIFFERS]


def test_the_interval_is_student_t_over_the_draws():
    low, high = t_interval(1.0, 0.1, 3)
    assert high - 1.0 == pytest.approx(0.1 * stats.t.ppf(0.975, 2))    # 4.30, not 1.96
    assert CONFIDENCE == 0.95 and MIN_DRAWS == 3 and MARGIN == 0.10
    v = size(values(-0.49, 0.01, 3), -0.5)
    assert v.high - v.mean == pytest.approx(0.01 * stats.t.ppf(0.975, 2))


def test_the_clopper_pearson_interval():
    low, high = binomial_interval(24, 24)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 24))
    v = share([True] * 24)
    assert (v.low, v.high) == (low, high) and v.mean == 1.0
    n = draws_to_confirm()
    assert binomial_interval(n, n)[0] >= 1 - MARGIN > binomial_interval(n - 1, n - 1)[0]


def test_a_paired_null_is_judged_on_the_paired_difference():
    base = values(0.2, 0.05)
    # unpaired, 0.21 vs 0.20 is 0.2 se apart
    assert effect(base + 0.01, 0.2).label == CONSISTENT
    v = effect(base + 0.01 + values(0, 1e-4), base)
    assert v.label == CONFIRMED and v.t_null > 99 and v.null == pytest.approx(0.2)


def test_the_size_margin_is_a_tenth_of_the_predicted_effect():
    assert size(values(0.30, 0.001), 0.31, 0.01).margin == pytest.approx(0.03)
    assert size(values(0.285, 1e-5), 0.31, 0.01).label == CONFIRMED
    assert size(values(0.275, 1e-5), 0.31, 0.01).label == DIFFERS
    assert size(values(0.345, 1e-5), 0.31, 0.01).label == DIFFERS     # an overshoot


@pytest.mark.parametrize("call, error, match", [
    (lambda: size([], 0.3), ValueError, "measured must be a non-empty"),
    (lambda: size([0.1, np.nan], 0.3), ValueError, "measured must be"),
    (lambda: effect([0.1, 0.2, 0.3], [0.1, 0.2, 0.3, 0.4]), ValueError,
     "a paired null must have one value per draw"),
    (lambda: size([0.1, 0.2, 0.3], "x"), TypeError, "prediction"),
    (lambda: size([0.1, 0.2, 0.3], 0.0, 0.0), ValueError, "prediction must differ from null"),
    (lambda: effect([0.1, 0.2, 0.3], 0.0, sign=2), ValueError, "sign must be 1 or -1"),
    (lambda: share([1, 0, 1]), TypeError, "passed must be a sequence of booleans"),
    (lambda: share([True, True], draws=[0]), ValueError, "draws must give one draw per item"),
    (lambda: share([True], fails="seen"), ValueError, "fails must be one of"),
    (lambda: summary(0.1, -1.0, 3), ValueError, "sem must be in"),
    (lambda: summary(0.1, 0.1, 0), ValueError, "draws must be"),
    (lambda: V.multiplicity(0), ValueError, "labels must be"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_worst_of_several():
    assert worst([CONFIRMED, CONSISTENT]) == CONSISTENT
    assert worst([CONFIRMED, NOT_JUDGED]) == NOT_JUDGED
    assert worst([NOT_JUDGED, CONTRADICTED]) == CONTRADICTED
    with pytest.raises(ValueError, match="verdicts must be"):
        worst(["seen"])


def test_multiplicity_says_what_many_intervals_mean():
    text = V.multiplicity(14)
    assert "14 labels" in text and "one interval in 20" in text and "0.7 of 14" in text
