r"""The book's verdict rule: one function that turns a measurement into "seen", "seen in
part", "not seen" or "contradicted", so that no verdict in the book is a typed word.

A claim is tested by a measured quantity over seeds, next to the value the claim predicts and
a *null*: what the quantity would be if the claimed effect were absent (chance, a control, no
effect of reuse). With :math:`m` and :math:`\mathrm{se}` the mean and standard error over seeds:

* the measurement **agrees** with the prediction :math:`p` when
  :math:`|m - p| \le \max(2\,\mathrm{se},\ \text{tol}\cdot|p|)`;
* it is **distinct** from the null when the null lies at least 5 standard errors away (for a
  paired null, 5 standard errors of the paired difference).

A claim that predicts an effect is *seen* when both hold, *seen in part* when the effect is
distinct from the null but off the prediction, and *not seen* otherwise. A claim that predicts
the null itself (a fresh batch learns nothing) is *seen* when the measurement is not distinct
from it and *contradicted* when it is. :data:`RULES` states this for the reader.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_real

#: Agreement within this many standard errors of the prediction.
N_SE = 2.0
#: Distinct from the null by at least this many standard errors.
N_NULL = 5.0
#: Agreement within this relative tolerance of the prediction, whatever the standard error.
REL_TOL = 0.10

#: What each verdict means, in the words the landing page shows.
RULES = {
    "seen": (f"the mean over seeds agrees with the prediction (within {N_SE:g} standard errors "
             f"or {REL_TOL:.0%} of it) and lies at least {N_NULL:g} standard errors from the null; "
             f"for a claim that predicts the null, within {N_NULL:g} standard errors of it"),
    "seen in part": (f"at least {N_NULL:g} standard errors from the null, but off the prediction "
                     f"by more than {N_SE:g} standard errors and {REL_TOL:.0%}"),
    "not seen": f"within {N_NULL:g} standard errors of the null: the effect is not resolved",
    "contradicted": (f"the claim predicts the null, and the measurement is at least {N_NULL:g} "
                     "standard errors from it"),
}


@dataclass(frozen=True)
class Verdict:
    """A measurement judged by :func:`verdict`: its ``label`` (a key of :data:`RULES`), the mean
    and standard error over seeds, the prediction, the null's mean, and the distance to the
    null in standard errors (``z_null``)."""

    label: str
    mean: float
    sem: float
    prediction: float
    null: float
    z_null: float
    agrees: bool
    distinct: bool
    seeds: int

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


def verdict(measured, prediction: float, null, *, predicts_null: bool = False,
            rel_tol: float = REL_TOL, n_se: float = N_SE, n_null: float = N_NULL) -> Verdict:
    r"""Judge a measurement against its prediction and its null.

    Parameters
    ----------
    measured : sequence of float, shape (seeds,)
        The quantity, one value per seed (one value: a single draw, standard error 0).
    prediction : float
        The claim's value.
    null : float or sequence of float
        The value without the effect; a sequence of the same length as ``measured`` is a paired
        null (same seeds), and distinctness is then judged on the paired difference.
    predicts_null : bool
        The claim is that there is no effect (the prediction is the null).
    rel_tol, n_se, n_null : float
        The rule's constants (defaults :data:`REL_TOL`, :data:`N_SE`, :data:`N_NULL`).

    Returns
    -------
    Verdict
    """
    x = _values(measured, "measured")
    p = check_real(prediction, "prediction")
    rel_tol = check_real(rel_tol, "rel_tol", low=0.0)
    n_se = check_real(n_se, "n_se", low=0.0)
    n_null = check_real(n_null, "n_null", low=0.0, low_open=True)
    if not isinstance(predicts_null, bool):
        raise TypeError(f"predicts_null must be a bool, got {type(predicts_null).__name__}")
    m, se = mean_sem(x)
    if np.ndim(null) == 0:
        null_mean = check_real(null, "null")
        gap, gap_se = m - null_mean, se
    else:
        z = _values(null, "null")
        if z.size != x.size:
            raise ValueError(f"a paired null must have one value per seed ({x.size}), got {z.size}")
        null_mean = float(z.mean())
        gap, gap_se = mean_sem(x - z)
    return _judge(m, se, p, null_mean, gap, gap_se, predicts_null, rel_tol, n_se, n_null,
                  int(x.size))


def judge(mean: float, sem: float, prediction: float, null: float, *, seeds: int,
          predicts_null: bool = False, rel_tol: float = REL_TOL, n_se: float = N_SE,
          n_null: float = N_NULL) -> Verdict:
    r""":func:`verdict` from a mean and its standard error over ``seeds`` seeds (an unpaired
    null), for measurements kept only as summaries."""
    m = check_real(mean, "mean")
    se = check_real(sem, "sem", low=0.0)
    p, z = check_real(prediction, "prediction"), check_real(null, "null")
    if not isinstance(predicts_null, bool):
        raise TypeError(f"predicts_null must be a bool, got {type(predicts_null).__name__}")
    seeds = int(seeds)
    if seeds < 1:
        raise ValueError(f"seeds must be an integer >= 1, got {seeds}")
    return _judge(m, se, p, z, m - z, se, predicts_null,
                  check_real(rel_tol, "rel_tol", low=0.0), check_real(n_se, "n_se", low=0.0),
                  check_real(n_null, "n_null", low=0.0, low_open=True), seeds)


def _judge(m, se, p, null_mean, gap, gap_se, predicts_null, rel_tol, n_se, n_null, seeds):
    # The rule of the module docstring, once.
    z_null = abs(gap) / gap_se if gap_se > 0 else (np.inf if gap != 0 else 0.0)
    distinct = bool(z_null >= n_null)
    agrees = bool(abs(m - p) <= max(n_se * se, rel_tol * abs(p)))
    if predicts_null:
        label = "contradicted" if distinct else "seen"
    else:
        label = "seen" if (agrees and distinct) else ("seen in part" if distinct else "not seen")
    return Verdict(label, m, se, p, null_mean, float(z_null), agrees, distinct, seeds)


#: The verdicts from best to worst, to combine several into one.
SEVERITY = ("seen", "seen in part", "not seen", "contradicted")


def worst(verdicts) -> str:
    """The least favourable label among ``verdicts`` (:class:`Verdict` objects or labels)."""
    labels = [str(v) for v in verdicts]
    if not labels or any(label not in SEVERITY for label in labels):
        raise ValueError(f"verdicts must be a non-empty sequence of verdicts in {SEVERITY}, "
                         f"got {labels!r}")
    return max(labels, key=SEVERITY.index)

