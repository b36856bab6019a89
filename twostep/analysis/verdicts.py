r"""The book's verdict rule, computed, never typed: labels from the interval
:math:`m \pm t_{n-1}\,\mathrm{se}` over :math:`n` draws and one :data:`MARGIN`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._validation import check_choice, check_int, check_real

#: Confidence of every interval.
CONFIDENCE = 0.95
#: The book's one margin: a tenth of the predicted effect (sizes), a tenth of a cosine's
#: scale (no-effect claims), a share of draws of at least 1 - MARGIN (counts).
MARGIN = 0.10
#: Fewest independent draws for a verdict.
MIN_DRAWS = 3
#: A standard error below this fraction of the mean's magnitude is no spread (float rounding).
NO_SPREAD = 1e-9

CONFIRMED = "confirmed"
CONSISTENT = "consistent, not resolved"
NOT_REACHED = "not reached at these widths"
NOT_JUDGED = "not judged"
DIFFERS = "differs from the prediction"
CONTRADICTED = "contradicted"
#: The labels, most favourable first (:func:`worst` picks the last present).
LABELS = (CONFIRMED, CONSISTENT, NOT_REACHED, NOT_JUDGED, DIFFERS, CONTRADICTED)
#: One symbol per label, for tables of verdicts by width.
SYMBOLS = {CONFIRMED: "✓", CONSISTENT: "~", NOT_REACHED: "·", NOT_JUDGED: "n.j.",
           DIFFERS: "≠", CONTRADICTED: "✗"}
KINDS = ("effect", "no effect", "size", "share")

_PCT = f"{CONFIDENCE:.0%}"
#: What each label means, one line each, the same for every kind of claim.
RULES = {
    CONFIRMED: (f"the {_PCT} interval over independent draws lies where the claim says: beyond "
                f"the null on the claimed side (an effect), within ± {MARGIN:g} of the null "
                f"(no effect), within ± {MARGIN:.0%} of the predicted effect (a size), or above "
                f"{1 - MARGIN:.0%} of draws (a claim that holds draw by draw)"),
    CONSISTENT: "the interval holds both the claim and its failure: more draws or wider "
                "networks would decide",
    NOT_REACHED: "no draw is at a width where the claim applies (e.g. beyond the predicted "
                 "width N⋆ of an outlier)",
    NOT_JUDGED: f"fewer than {MIN_DRAWS} independent draws, or no spread over them: no "
                f"interval can be formed",
    DIFFERS: "a quantitative prediction is missed by more than the margin, on either side "
             "(the book's heuristic size, its predicted width or count; or a null level)",
    CONTRADICTED: "the interval lies on the wrong side of the claim: an effect of the other "
                  "sign, an effect where none is claimed, or more outliers than the claim "
                  "allows",
}

@dataclass(frozen=True)
class Verdict:
    """A judged measurement: ``label``, ``kind``, ``mean``, ``sem``, the interval ``(low, high)``,
    ``prediction``, ``null``, ``margin``, ``draws`` (``passed`` for a share) and ``t_null``."""

    label: str
    kind: str
    mean: float
    sem: float
    low: float
    high: float
    prediction: float
    null: float
    margin: float
    draws: int
    passed: int = -1
    t_null: float = float("nan")

    def __str__(self) -> str:
        return self.label

    @property
    def symbol(self) -> str:
        """The label's symbol in tables by width (:data:`SYMBOLS`)."""
        return SYMBOLS[self.label]

_NAN = float("nan")

def _values(x, name: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(x, dtype=float))
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be a non-empty 1-d sequence of finite numbers, got {x!r}")
    return arr

def mean_sem(x) -> tuple:
    """Mean and standard error (``ddof=1``; 0 for one value) of ``x``; ``nan`` propagates."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else 0.0

def t_interval(mean: float, sem: float, draws: int, confidence: float = CONFIDENCE) -> tuple:
    r"""``(low, high)`` :math:`= m \mp t_{n-1}\,\mathrm{se}` for ``draws`` :math:`= n \ge 2`."""
    n = check_int(draws, "draws", 2)
    t = float(stats.t.ppf(0.5 + confidence / 2, n - 1))
    return mean - t * sem, mean + t * sem

def binomial_interval(hits: int, total: int, confidence: float = CONFIDENCE) -> tuple:
    """Clopper--Pearson interval ``(low, high)`` of the share ``hits / total``."""
    result = stats.binomtest(hits, total).proportion_ci(confidence, method="exact")
    return float(result.low), float(result.high)

def _measure(measured, null):
    # (values, mean, sem, null value, gap mean, gap sem): a paired null is judged on the
    # per-draw differences.
    x = _values(measured, "measured")
    m, se = mean_sem(x)
    if np.ndim(null) == 0:
        z = check_real(null, "null")
        return x, m, se, z, m - z, se
    zs = _values(null, "null")
    if zs.size != x.size:
        raise ValueError(f"a paired null must have one value per draw ({x.size}), got {zs.size}")
    gap, gap_se = mean_sem(x - zs)
    return x, m, se, float(zs.mean()), gap, gap_se

def _unjudgeable(n, m, se, gap, gap_se) -> bool:
    # Too few draws, or a spread that is float rounding: no interval can be formed.
    scale = max(abs(m), abs(gap), np.finfo(float).tiny)
    return n < MIN_DRAWS or se <= NO_SPREAD * scale or gap_se <= NO_SPREAD * scale

def effect(measured, null, *, sign: int = 1) -> Verdict:
    """The paper's claim of an effect of ``sign`` (+1: above the null, -1: below) from ``measured`` (one
    value per draw) against ``null`` (a number, or paired values): **confirmed** when the interval of
    the gap excludes 0 on the claimed side, **contradicted** on the other, else **consistent**."""
    if isinstance(sign, bool) or sign not in (1, -1):
        raise ValueError(f"sign must be 1 or -1, got {sign!r}")
    x, m, se, z, gap, gap_se = _measure(measured, null)
    if _unjudgeable(x.size, m, se, gap, gap_se):
        return Verdict(NOT_JUDGED, "effect", m, se, _NAN, _NAN, _NAN, z, 0.0, x.size)
    low, high = t_interval(m, se, x.size)
    glow, ghigh = t_interval(gap, gap_se, x.size)
    toward, against = (glow > 0, ghigh < 0) if sign > 0 else (ghigh < 0, glow > 0)
    label = CONFIRMED if toward else CONTRADICTED if against else CONSISTENT
    return Verdict(label, "effect", m, se, low, high, _NAN, z, 0.0, x.size,
                   t_null=gap / gap_se if gap_se > 0 else _NAN)

def no_effect(measured, null) -> Verdict:
    r"""A claim of no effect on a cosine at its level ``null``: **confirmed** when :math:`I \subset z\pm`
    :data:`MARGIN`, **contradicted** above it, **differs** below it, else **consistent**."""
    x, m, se, z, gap, gap_se = _measure(measured, null)
    if _unjudgeable(x.size, m, se, gap, gap_se):
        return Verdict(NOT_JUDGED, "no effect", m, se, _NAN, _NAN, z, z, MARGIN, x.size)
    low, high = t_interval(m, se, x.size)
    glow, ghigh = t_interval(gap, gap_se, x.size)
    label = (CONFIRMED if -MARGIN <= glow and ghigh <= MARGIN else
             CONTRADICTED if glow > MARGIN else DIFFERS if ghigh < -MARGIN else CONSISTENT)
    return Verdict(label, "no effect", m, se, low, high, z, z, MARGIN, x.size,
                   t_null=gap / gap_se if gap_se > 0 else _NAN)

def size(measured, prediction: float, null: float = 0.0) -> Verdict:
    r"""The book's prediction :math:`p` of a size: **confirmed** when :math:`I \subset p \pm \delta`,
    **differs** when :math:`I` misses it, else **consistent**."""
    p, z = check_real(prediction, "prediction"), check_real(null, "null")
    if p == z:
        raise ValueError(f"prediction must differ from null (a size without an effect is a "
                         f"no-effect claim: use no_effect); got {p} for both")
    x, m, se, _, gap, gap_se = _measure(measured, z)
    delta = MARGIN * abs(p - z)
    if _unjudgeable(x.size, m, se, gap, gap_se):
        return Verdict(NOT_JUDGED, "size", m, se, _NAN, _NAN, p, z, delta, x.size)
    low, high = t_interval(m, se, x.size)
    label = (CONFIRMED if p - delta <= low and high <= p + delta else
             DIFFERS if high < p - delta or low > p + delta else CONSISTENT)
    return Verdict(label, "size", m, se, low, high, p, z, delta, x.size,
                   t_null=gap / gap_se if gap_se > 0 else _NAN)

def summary(mean: float, sem: float, draws: int) -> np.ndarray:
    """``draws`` values with exactly this ``mean`` and standard error ``sem`` (``draws - 1`` degrees of
    freedom)."""
    m, se = check_real(mean, "mean"), check_real(sem, "sem", low=0.0)
    n = check_int(draws, "draws", 1)
    if n == 1:
        return np.array([m])
    z = np.linspace(-1.0, 1.0, n)
    return m + se * (z - z.mean()) / (z.std(ddof=1) / np.sqrt(n))

def share(passed, draws=None, *, fails: str = DIFFERS) -> Verdict:
    r"""A claim that holds draw by draw: the Clopper--Pearson interval of the share of passing draws
    against :math:`1 -` :data:`MARGIN`."""
    ok = np.asarray(passed, dtype=object).ravel()
    if not all(isinstance(v, (bool, np.bool_)) for v in ok):
        raise TypeError(f"passed must be a sequence of booleans, got {passed!r}")
    fails = check_choice(fails, "fails", (DIFFERS, CONTRADICTED))
    ids = list(range(ok.size)) if draws is None else list(draws)
    if len(ids) != ok.size:
        raise ValueError(f"draws must give one draw per item ({ok.size}), got {len(ids)}")
    per_draw: dict = {}
    for d, v in zip(ids, ok):
        per_draw[d] = per_draw.get(d, True) and bool(v)
    n, k = len(per_draw), int(sum(per_draw.values()))
    if n == 0:
        return Verdict(NOT_REACHED, "share", _NAN, _NAN, _NAN, _NAN, 1.0, 0.0, MARGIN, 0, 0)
    if n < MIN_DRAWS:
        return Verdict(NOT_JUDGED, "share", k / n, _NAN, _NAN, _NAN, 1.0, 0.0, MARGIN, n, k)
    low, high = binomial_interval(k, n)
    label = CONFIRMED if low >= 1 - MARGIN else fails if high < 1 - MARGIN else CONSISTENT
    return Verdict(label, "share", k / n, _NAN, low, high, 1.0, 0.0, MARGIN, n, k)

def draws_to_confirm() -> int:
    """The fewest draws, all passing, whose share :func:`share` confirms."""
    n = MIN_DRAWS
    while binomial_interval(n, n)[0] < 1 - MARGIN:
        n += 1
    return n

def worst(verdicts) -> str:
    """The least favourable label among ``verdicts`` (in :data:`LABELS`' order)."""
    labels = [str(v) for v in verdicts]
    if not labels or any(label not in LABELS for label in labels):
        raise ValueError(f"verdicts must be a non-empty sequence of labels in {LABELS}, "
                         f"got {labels!r}")
    return max(labels, key=LABELS.index)

def multiplicity(labels: int) -> str:
    """One sentence on what ``labels`` intervals at :data:`CONFIDENCE` mean together."""
    k = check_int(labels, "labels", 1)
    miss = (1 - CONFIDENCE) * k
    return (f"Each of these {k} labels rests on its own {_PCT} interval, with no correction for "
            f"multiplicity: even if every claim held, about one interval in "
            f"{round(1 / (1 - CONFIDENCE))} would miss by chance, {miss:.1f} of {k} on average.")

def rule_rows() -> list:
    """The rule table's rows ``[label, meaning]``, and the interval's definition last."""
    return ([[label, RULES[label]] for label in LABELS]
            + [["the interval", f"mean ± t × standard error over independent draws, t the "
                                f"{(1 + CONFIDENCE) / 2:.3f} quantile of Student's t with draws "
                                f"− 1 degrees of freedom ({stats.t.ppf(0.975, 2):.2f} for 3 "
                                f"draws, {stats.t.ppf(0.975, 9):.2f} for 10); for a share of "
                                f"draws, Clopper–Pearson: {draws_to_confirm()} draws, all "
                                f"passing, are the fewest that confirm"]])
