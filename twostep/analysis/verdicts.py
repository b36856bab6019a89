r"""The book's verdict rule: one function that turns a measurement into a label, so that no
verdict in the book is a typed word, and every label can come out either way.

A claim is tested by a quantity measured over seeds, against the value the claim predicts,
:math:`p`, and a *null* :math:`z`: what the quantity would be without the claimed effect
(chance, a control, no effect of reuse). With :math:`m`, :math:`\mathrm{se}` and
:math:`\nu` the mean, its standard error and its degrees of freedom (seeds minus one; for a
slope fitted over seeds, points minus two), the rule uses one interval,

.. math::
    I = m \pm t_{\nu}\,\mathrm{se}, \qquad t_\nu = \text{the } (1+\gamma)/2
    \text{ quantile of Student's } t_\nu,\ \gamma = \texttt{CONFIDENCE} = 0.95,

and one margin, :math:`\delta = \texttt{MARGIN}\cdot|p - z|` (a tenth of the predicted effect).

*An effect claim* (:math:`p \ne z`, predicted sign :math:`\operatorname{sign}(p - z)`):

* **seen**: :math:`I` excludes :math:`z` on the predicted side (the effect is there) and lies
  inside :math:`p \pm \delta` (its size agrees: an equivalence test, so a wide interval cannot
  agree);
* **seen in part**: the effect is there, but :math:`I` does not lie inside :math:`p \pm \delta`
  (too wide to tell, or beyond the prediction);
* **contradicted**: :math:`I` excludes :math:`z` on the wrong side (an effect of the opposite
  sign), or :math:`I` lies entirely on the null's side of :math:`p \mp \delta` (the effect is
  smaller than predicted by more than the margin);
* **not seen**: otherwise (the effect is not resolved from the null).

*A null claim* (the claim is that there is no effect, :math:`p = z`; the margin is a tenth of
the effect it denies, :math:`\delta = \texttt{MARGIN}\cdot|a - z|` for the alternative
:math:`a`, e.g. the reused value when the claim is that a fresh batch shows nothing):
**seen** when :math:`I` lies inside :math:`z \pm \delta`, **contradicted** when it lies
entirely outside it, **not seen** otherwise.

*A count claim* (an integer predicted exactly, e.g. :math:`1 + \Lambda` outliers) is judged on
the share of (setting, seed) pairs where the count is the predicted one, with its
Clopper--Pearson interval :math:`I` at the same confidence: **seen** when :math:`I` lies above
:math:`1 - \texttt{MARGIN}`, **contradicted** when it lies below, **seen in part** otherwise
(:func:`count_verdict`).

Fewer than :data:`MIN_SEEDS` seeds, or a quantity without spread (a standard error of 0),
gives **not judged**: no interval can be formed, so no claim is made. :data:`RULES` states all
this for the reader, from these constants.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._validation import check_bool, check_int, check_real

#: Confidence of every interval.
CONFIDENCE = 0.95
#: The margin of agreement, as a fraction of the predicted effect (one number for the book).
MARGIN = 0.10
#: Fewest seeds for a verdict.
MIN_SEEDS = 3

#: The labels, from best to worst (:func:`worst` combines several into the least favourable).
SEVERITY = ("seen", "seen in part", "not judged", "not seen", "contradicted")

_PCT = f"{CONFIDENCE:.0%}"
#: What each verdict means, in the words the landing page shows.
RULES = {
    "seen": (f"the {_PCT} interval of the mean over seeds (Student t) excludes the null on the "
             f"predicted side and lies within the prediction ± {MARGIN:.0%} of the predicted "
             f"effect; for a claim of no effect, it lies within the null ± {MARGIN:.0%} of the "
             f"effect denied; for a count, the {_PCT} interval of the share of (setting, seed) "
             f"pairs at the predicted count lies above {1 - MARGIN:.0%}"),
    "seen in part": (f"the effect is there (the {_PCT} interval excludes the null on the "
                     f"predicted side), but its size is not shown to agree: the interval is "
                     f"not within the prediction ± {MARGIN:.0%} of the effect; for a count, "
                     f"the share's interval straddles {1 - MARGIN:.0%}"),
    "not judged": (f"fewer than {MIN_SEEDS} seeds, or a quantity with no spread over seeds, or "
                   f"no measured width where the claim applies: no interval, no verdict"),
    "not seen": f"the {_PCT} interval includes the null: the effect is not resolved",
    "contradicted": (f"the {_PCT} interval excludes the null on the wrong side, or lies short of "
                     f"the prediction by more than the margin; for a claim of no effect, it lies "
                     f"outside the null ± the margin; for a count, the share's interval lies "
                     f"below {1 - MARGIN:.0%}"),
}
#: Why the margin is what it is (the rule table shows it).
MARGIN_REASON = (
    f"{MARGIN:.0%} of the predicted effect, the same for every row, fixed with the rule on "
    f"2026-12-03: the asymptotic predictions neglect corrections that at the book's widths are "
    f"of a few percent (N^-1/2 is 1.6-3 % for N = 1000-4000), and a claim about an effect's "
    f"size is read to one significant figure")


@dataclass(frozen=True)
class Verdict:
    r"""A measurement judged by :func:`verdict`, :func:`judge` or :func:`count_verdict`: its
    ``label`` (one of :data:`SEVERITY`), the estimate ``mean`` with its standard error ``sem``
    (``nan`` for a count), the interval ``(low, high)``, the ``prediction``, the ``null``, the
    ``margin`` :math:`\delta`, the degrees of freedom ``df``, the number of ``seeds``, the
    ``kind`` (``"effect"``, ``"null"`` or ``"count"``) and ``distinct`` (the interval excludes
    the null on the predicted side), and ``t_null``, the effect over its standard error
    (:math:`(m - z)/\mathrm{se}`, paired when the null is)."""

    label: str
    mean: float
    sem: float
    low: float
    high: float
    prediction: float
    null: float
    margin: float
    df: float
    seeds: int
    kind: str
    distinct: bool
    t_null: float = float("nan")

    def __str__(self) -> str:
        return self.label


def _values(x, name: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(x, dtype=float))
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be a non-empty 1-d sequence of finite numbers, got {x!r}")
    return arr


def mean_sem(x) -> tuple:
    """Mean and standard error (``ddof=1``; 0 for one value) of the values ``x`` over seeds."""
    x = np.asarray(x, dtype=float)
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else 0.0


def t_interval(mean: float, sem: float, df: float, confidence: float = CONFIDENCE) -> tuple:
    r"""``(low, high)`` :math:`= m \mp t_\nu\,\mathrm{se}` with :math:`t_\nu` the
    :math:`(1+\gamma)/2` quantile of Student's t with ``df`` :math:`=\nu > 0` degrees of freedom."""
    t = float(stats.t.ppf(0.5 + confidence / 2, df))
    return mean - t * sem, mean + t * sem


def binomial_interval(hits: int, total: int, confidence: float = CONFIDENCE) -> tuple:
    """Clopper--Pearson interval ``(low, high)`` of a share ``hits / total``."""
    result = stats.binomtest(hits, total).proportion_ci(confidence, method="exact")
    return float(result.low), float(result.high)


def verdict(measured, prediction: float, null, *, predicts_null: bool = False,
            alternative: float | None = None) -> Verdict:
    r"""Judge a measurement, one value per seed, against its prediction and its null.

    Parameters
    ----------
    measured : sequence of float, shape (seeds,)
    prediction : float
        The claim's value :math:`p`.
    null : float or sequence of float
        The value without the effect :math:`z`; a sequence of the same length as ``measured``
        is a paired null (same seeds), and whether the effect is there is then judged on the
        paired difference.
    predicts_null : bool
        The claim is that there is no effect (``prediction`` is then the null's value).
    alternative : float, optional
        For a null claim, the effect it denies :math:`a` (the margin is a tenth of
        :math:`|a - z|`); required then, not used otherwise.

    Returns
    -------
    Verdict
    """
    x = _values(measured, "measured")
    m, se = mean_sem(x)
    if np.ndim(null) == 0:
        z = check_real(null, "null")
        gap, gap_se = m - z, se
    else:
        zs = _values(null, "null")
        if zs.size != x.size:
            raise ValueError(f"a paired null must have one value per seed ({x.size}), got {zs.size}")
        z = float(zs.mean())
        gap, gap_se = mean_sem(x - zs)
    return _judge(m, se, gap, gap_se, prediction, z, x.size, x.size - 1, predicts_null,
                  alternative)


def judge(mean: float, sem: float, prediction: float, null: float, *, seeds: int,
          df: float | None = None, predicts_null: bool = False,
          alternative: float | None = None) -> Verdict:
    r""":func:`verdict` from a summary: an estimate ``mean`` with standard error ``sem`` over
    ``seeds`` seeds, with ``df`` degrees of freedom (default ``seeds - 1``; a least-squares slope
    over :math:`m` points has :math:`m - 2`), against an unpaired ``null``."""
    m = check_real(mean, "mean")
    se = check_real(sem, "sem", low=0.0)
    seeds = check_int(seeds, "seeds", 1)
    df = seeds - 1 if df is None else check_real(df, "df", low=0.0)
    return _judge(m, se, m - check_real(null, "null"), se, prediction, float(null), seeds, df,
                  predicts_null, alternative)


def _judge(m, se, gap, gap_se, prediction, z, seeds, df, predicts_null, alternative):
    # The rule of the module docstring, once.
    p = check_real(prediction, "prediction")
    if check_bool(predicts_null, "predicts_null"):
        if alternative is None:
            raise ValueError("a null claim (predicts_null=True) needs the alternative it denies")
        delta = MARGIN * abs(check_real(alternative, "alternative") - z)
        kind = "null"
    else:
        if p == z:
            raise ValueError(f"an effect claim needs a prediction different from its null, "
                             f"got {p} for both (use predicts_null=True)")
        delta = MARGIN * abs(p - z)
        kind = "effect"
    nan = float("nan")
    if seeds < MIN_SEEDS or se == 0 or gap_se == 0 or df <= 0:
        return Verdict("not judged", m, se, nan, nan, p, z, delta, df, seeds, kind, False)
    t_null = gap / gap_se
    low, high = t_interval(m, se, df)
    glow, ghigh = t_interval(gap, gap_se, df)
    if kind == "null":
        label = ("seen" if z - delta <= low and high <= z + delta else
                 "contradicted" if high < z - delta or low > z + delta else "not seen")
        return Verdict(label, m, se, low, high, p, z, delta, df, seeds, kind, False, t_null)
    sign = 1.0 if p > z else -1.0
    distinct = bool(glow > 0) if sign > 0 else bool(ghigh < 0)
    wrong = bool(ghigh < 0) if sign > 0 else bool(glow > 0)
    short = bool(high < p - delta) if sign > 0 else bool(low > p + delta)
    inside = p - delta <= low and high <= p + delta
    if wrong or short:
        label = "contradicted"
    elif distinct:
        label = "seen" if inside else "seen in part"
    else:
        label = "not seen"
    return Verdict(label, m, se, low, high, p, z, delta, df, seeds, kind, distinct, t_null)


def count_verdict(hits: int, total: int, *, seeds: int) -> Verdict:
    r"""Judge a count claim: the predicted count was found at ``hits`` of ``total``
    (setting, seed) pairs drawn with ``seeds`` seeds; prediction 1 (every pair), margin
    :data:`MARGIN`, the Clopper--Pearson interval of the share. ``total = 0`` (no pair where the
    claim applies) or fewer than :data:`MIN_SEEDS` seeds gives "not judged"."""
    hits, total = check_int(hits, "hits", 0), check_int(total, "total", 0)
    seeds = check_int(seeds, "seeds", 0)
    if hits > total:
        raise ValueError(f"hits must be in [0, total] = [0, {total}], got {hits}")
    nan = float("nan")
    if total == 0 or seeds < MIN_SEEDS:
        return Verdict("not judged", hits / total if total else nan, nan, nan, nan, 1.0, 0.0,
                       MARGIN, nan, seeds, "count", False)
    low, high = binomial_interval(hits, total)
    label = ("seen" if low >= 1 - MARGIN else "contradicted" if high < 1 - MARGIN
             else "seen in part")
    return Verdict(label, hits / total, nan, low, high, 1.0, 0.0, MARGIN, total - 1, seeds,
                   "count", bool(low > 0))


def worst(verdicts) -> str:
    """The least favourable label among ``verdicts`` (:class:`Verdict` objects or labels), in
    the order of :data:`SEVERITY`."""
    labels = [str(v) for v in verdicts]
    if not labels or any(label not in SEVERITY for label in labels):
        raise ValueError(f"verdicts must be a non-empty sequence of verdicts in {SEVERITY}, "
                         f"got {labels!r}")
    return max(labels, key=SEVERITY.index)


def rule_rows() -> list:
    """The rule table's rows ``[label, when]``, with the constants' own values, and the margin's
    reason as a last row."""
    return ([[label, RULES[label]] for label in SEVERITY]
            + [["the margin", MARGIN_REASON],
               ["the interval", f"mean ± t × standard error, t the {(1 + CONFIDENCE) / 2:.3f} "
                                f"quantile of Student's t with the measurement's degrees of "
                                f"freedom (seeds − 1; points − 2 for a fitted slope): "
                                f"{stats.t.ppf(0.975, 2):.2f} for 3 seeds, "
                                f"{stats.t.ppf(0.975, 9):.2f} for 10"]])
