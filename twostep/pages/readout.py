r"""What the learned features buy: 0, 1 and 2 gradient steps compared by test error.

One problem is a teacher, an initialisation :math:`(W_0, a)` and two batches
:math:`(X_1, y_1)`, :math:`(X_2, y_2)`. From it, with :math:`\eta_t = \kappa\,N^{\alpha_t}`
(the step constant :math:`\kappa` is the parameter ``c``),
five first layers are built:

============  ================================================================
``W0``        the initialisation (random features, a kernel-like baseline)
``W1``        one step of size :math:`\eta_1` on batch 1
``W1_total``  one step of size :math:`\eta_1+\eta_2` on batch 1 (same total step)
``W2_reused`` a second step of size :math:`\eta_2` on batch 1 again
``W2_fresh``  a second step of size :math:`\eta_2` on batch 2
============  ================================================================

and each is scored by a ridge readout on the same fresh training, validation
and test data (:func:`twostep.paired_readout`). Next to every measured error
sits the error of an *ideal* readout of the directions the spectral picture
says were learned (:func:`learned_directions`, :func:`twostep.subspace_error`).
:func:`neuron_memorisation` tells whether a neuron's update is a feature or a
memorised training input.

The single runs (``train_schemes``, ``payoff_experiment``, ``learned_directions``,
``neuron_memorisation``) are in :mod:`twostep.experiments.readout`. The rest serves the
chapter ``book/readout.md``. Two theory formulas:
:func:`explained_fraction` (the ideal readout of one direction with a given overlap)
and :func:`asymptotic_ideal` (the ideal readout of a first-order spike from its
large-:math:`n` overlap). Summaries over seeds: :func:`payoff_summary` (with the
paired differences of :func:`add_paired_differences`) and :func:`psi_summary`. One
compute and one plot function per figure: :func:`ideal_data` / :func:`plot_ideal`,
:func:`payoff_summary` / :func:`plot_alpha`, :func:`scatter_points` /
:func:`plot_scatter`, :func:`psi_data` / :func:`plot_psi`, :func:`memorisation_data` /
:func:`plot_why`. The tables and the numbers the text quotes:
:func:`parameter_table`, :func:`u2_table`, :func:`ideal_numbers`,
:func:`paired_table`, :func:`alpha_numbers`, :func:`u2_consistency`,
:func:`residual_table`, :func:`psi_table`, :func:`memorisation_table`,
:func:`raw_table` (rows of cell strings for
:func:`twostep.pages.report.markdown_table`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import check_alpha, check_array, check_int, check_pairs, check_real
from ..experiments.readout import (_alpha2s, neuron_memorisation, SCHEMES, SECOND_STEP_SCHEMES,
                                   train_schemes)
from ..model.activations import as_activation
from ..analysis.alignment import chance_maximum
from ..model.network import gaussian_inputs
from ..analysis.population import population_signal
from ..analysis.readout import feature_scale, features, projected_error
from ..analysis.sweep import rng_for, summarise
from ..model.targets import Teacher
from ..analysis.theory import n_spikes
from .figures import COLORS, errorbars, legend_below
from .report import sci, sig

#: The first layers compared, in the order of the table above.


# ---------------------------------------------------------------------------
# The chapter's theory formulas, summaries, tables and figures.
# ---------------------------------------------------------------------------

#: Label and colour of each first layer in the chapter's figures.
SCHEME_STYLE = {
    "W0": ("0 steps (random features)", "0.5"),
    "W1": (r"1 step ($\eta_1$)", COLORS["one-step"]),
    "W1_total": (r"1 step of size $\eta_1+\eta_2$", "#d68910"),
    "W2_reused": ("2 steps, reused batch", COLORS["reused"]),
    "W2_fresh": ("2 steps, fresh batch", COLORS["fresh"]),
}

#: Markers of the trained first layers in the figures against n/d: each its own shape, the
#: later ones open, so that two schemes with the same test error both show.
SCHEME_MARKS = {"W1": {"marker": "o", "ms": 4}, "W1_total": {"marker": "s", "ms": 6, "mfc": "none"},
                "W2_reused": {"marker": "^", "ms": 6, "mfc": "none"},
                "W2_fresh": {"marker": "D", "ms": 5, "mfc": "none"}}
#: Marker sizes in the scatter of test errors: concentric open rings where points coincide.
SCATTER_SIZES = {"W0": 3.0, "W1": 4.0, "W1_total": 5.5, "W2_fresh": 7.0, "W2_reused": 8.5}

#: The chapter's three targets and their names in figures.
TARGET_LABELS = {"he1": r"$\mathrm{He}_1$", "odd": "odd bounded (IE 3)",
                 "he1+odd": r"$\mathrm{He}_1$ + odd bounded"}

#: Paired differences of test errors, ``name: (minuend, subtrahend)`` (scheme names).
PAIRED_DIFFERENCES = {"d_reused_total": ("W2_reused", "W1_total"),
                      "d_fresh_total": ("W2_fresh", "W1_total"),
                      "d_total_W1": ("W1_total", "W1"),
                      "d_reused_fresh": ("W2_reused", "W2_fresh")}

# Targets drawn in the test-error figures: the odd bounded one is at 1 throughout.
_PLOTTED = ("he1", "he1+odd")
_PLAIN = {"he1": "He₁", "odd": "odd", "he1+odd": "He₁ + odd"}


def _check_teacher(teacher, name="teacher") -> Teacher:
    if not isinstance(teacher, Teacher):
        raise TypeError(f"{name} must be a Teacher, got {type(teacher).__name__}")
    return teacher


def _check_records(records, name="records") -> list:
    if isinstance(records, dict) or not isinstance(records, (list, tuple)) or not records \
            or not all(isinstance(r, dict) for r in records):
        raise TypeError(f"{name} must be a non-empty list of records (dicts) from twostep.sweep")
    return list(records)


def _check_summary(summary, name) -> dict:
    if not isinstance(summary, dict) or not summary:
        raise TypeError(f"{name} must be a non-empty dict from payoff_summary")
    return summary


def explained_fraction(teacher: Teacher, rho):
    r"""Fraction of :math:`\mathbb{E}[y^2]` an ideal readout of one direction explains.

    For a single-index ``teacher`` and a direction with overlap :math:`\rho` with
    :math:`\beta^*`, :eq:`eq-ro-ideal` gives
    :math:`1 - \mathcal E/\mathbb E[y^2] = \big(c_0^2 + \sum_{k\ge1}c_k^2\rho^{2k}/k!\big)/\mathbb E[y^2]`
    (via :func:`twostep.projected_error` with :math:`M = \rho^2`). ``rho`` is a
    float in ``[0, 1]`` (returns a float) or a 1-d array of them (returns an array
    of the same shape).
    """
    _check_teacher(teacher)
    if len(teacher.links) != 1:
        raise ValueError(f"teacher must be single-index, got {len(teacher.links)} directions")
    scalar = np.ndim(rho) == 0
    r = check_array(rho, "rho", ndim=0 if scalar else 1)
    if np.any(r < 0) or np.any(r > 1):
        raise ValueError("rho must lie in [0, 1]")
    m2 = teacher.second_moment
    if scalar:
        return 1 - projected_error(teacher, [[rho * rho]]) / m2
    return np.array([1 - projected_error(teacher, [[x * x]]) / m2 for x in rho])


def asymptotic_ideal(teacher: Teacher, psi, weights=(1.0,)):
    r"""Large-:math:`n` ideal error :math:`\mathcal E/\mathbb E[y^2]` of a first-order spike.

    The spike :math:`\sum_t w_t v_t`, :math:`v_t = X_t^\top y_t/n` on independent batches
    of size :math:`n = \psi d`, has overlaps with the target directions

    .. math:: \rho_r = \frac{(\sum_t w_t)\,c_1(g_r)}
              {\sqrt{(\sum_t w_t)^2\sum_s c_1(g_s)^2 + (\sum_t w_t^2)\,\mathbb E[y^2]/\psi}},

    and :eq:`eq-ro-ideal` with :math:`M = \rho\rho^\top` gives the error. ``weights=(1,)``
    is one step (:math:`v_1`; for :math:`\mathrm{He}_1` the error is :math:`1/(1+\psi)`),
    ``(eta1, eta2)`` the merged spike of a fresh second step. ``psi`` is a positive float
    (returns a float) or a 1-d array of them (returns an array).
    """
    _check_teacher(teacher)
    w = check_array(weights, "weights", ndim=1)
    if w.size == 0 or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be a non-empty sequence of non-negative numbers, not all 0")
    if np.ndim(psi) != 0:
        p = check_array(psi, "psi", ndim=1)
        if np.any(p <= 0):
            raise ValueError("psi must be positive")
        return np.array([asymptotic_ideal(teacher, x, weights) for x in psi])
    check_real(psi, "psi", low=0.0, low_open=True)
    c1 = np.array([g.coefficients[1] for g in teacher.links])
    m2 = teacher.second_moment
    w = np.asarray(weights)
    rho = w.sum() * c1 / np.sqrt(w.sum() ** 2 * (c1 @ c1) + (w @ w) * m2 / psi)
    return projected_error(teacher, np.outer(rho, rho)) / m2


def add_paired_differences(records) -> list:
    r"""Add the paired differences of :data:`PAIRED_DIFFERENCES` to every record, in place.

    For one problem, ``d_reused_total = err_W2_reused - err_W1_total`` and so on (arrays
    over ``alpha2s``), before any average over seeds. Returns ``records``.
    """
    records = _check_records(records)
    for r in records:
        for name, (a, b) in PAIRED_DIFFERENCES.items():
            r[name] = r[f"err_{a}"] - r[f"err_{b}"]
    return records


def payoff_summary(records, by, raw: bool = True) -> dict:
    r"""Means and standard errors over seeds of :func:`payoff_experiment` records.

    Adds the paired differences (:func:`add_paired_differences`) and averages every
    error, ideal error, largest row norm, edge flag, overlap and difference
    (:func:`twostep.summarise`); with ``raw`` also the raw-feature errors of the groups whose
    records hold them (runs with ``"raw"`` among their ``scalings``), and the ideal
    errors of the measured directions (``ideal_svd_*``) where the records hold them. Returns a
    dict keyed by the tuple of the ``by`` values of each group (e.g.
    ``(target, alpha1)``), each entry as :func:`twostep.summarise` gives it.
    """
    records = _check_records(records)
    if isinstance(by, str) or not by:
        raise TypeError("by must be a non-empty sequence of record keys")
    by = list(by)
    add_paired_differences(records)
    values = ([f"err_{s}" for s in SCHEMES] + [f"ideal_{s}" for s in SCHEMES]
              + ["err_linear", "best_linear"]
              + [f"max_row_{s}" for s in SCHEMES] + [f"edge_{s}" for s in SCHEMES]
              + ["overlap_v", "overlap_u_reused", "overlap_u_fresh"] + list(PAIRED_DIFFERENCES)
              + [f"ideal_svd_{s}" for s in SCHEMES if f"ideal_svd_{s}" in records[0]])
    out = {tuple(e[k] for k in by): e for e in summarise(records, by=by, values=values)}
    # Raw features are fitted only where the chapter shows them (a sweep passes scalings per
    # point), so they are summarised over the records that hold them.
    with_raw = [r for r in records if "err_W0_raw" in r] if raw else []
    for e in summarise(with_raw, by=by, values=[f"err_{s}_raw" for s in SCHEMES]):
        key = tuple(e[k] for k in by)
        if e["count"] != out[key]["count"]:
            raise ValueError(f"group {key} holds raw-feature errors for {e['count']} of its "
                             f"{out[key]['count']} records")
        out[key].update({k: v for k, v in e.items() if k not in by and k != "count"})
    return out


def restrict_alpha2(record: dict, i: int) -> dict:
    r"""A record of an :math:`\alpha_2` sweep restricted to ``alpha2s[i]``.

    Every 1-d entry of a second-step scheme (``err_W2_fresh``, ``max_row_W1_total``, ...)
    becomes its slice ``[i:i+1]``; ``alpha2s`` becomes ``(alpha2s[i],)``. The result has
    the shape of a record run with that single :math:`\alpha_2`.
    """
    if not isinstance(record, dict) or "alpha2s" not in record:
        raise TypeError("record must be a payoff_experiment record (a dict with 'alpha2s')")
    i = check_int(i, "i", 0)
    if i >= len(record["alpha2s"]):
        raise ValueError(f"i must be < len(alpha2s) = {len(record['alpha2s'])}, got {i}")
    out = {k: (v[i:i + 1] if any(s in k for s in SECOND_STEP_SCHEMES) and np.ndim(v) == 1 else v)
           for k, v in record.items()}
    out["alpha2s"] = (record["alpha2s"][i],)
    return out


def psi_summary(psi_records, alpha_records, alpha1: float, alpha2: float) -> dict:
    r"""Summary of the :math:`n/d` sweep, keyed by ``(target, n)``.

    ``psi_records`` are the runs at :math:`n \ne d`; the :math:`n = d` runs are those of
    the :math:`\alpha_2` sweep (``alpha_records``) at ``alpha1``, restricted to
    ``alpha2`` (:func:`restrict_alpha2`), so both figures share them.
    """
    psi_records = _check_records(psi_records, "psi_records")
    alpha_records = _check_records(alpha_records, "alpha_records")
    alpha1, alpha2 = check_alpha(alpha1, "alpha1"), check_alpha(alpha2, "alpha2")
    same = [r for r in alpha_records if r["alpha1"] == alpha1]
    if not same or alpha2 not in list(same[0]["alpha2s"]):
        raise ValueError(f"alpha_records hold no run at alpha1={alpha1}, alpha2={alpha2}")
    i = list(same[0]["alpha2s"]).index(alpha2)
    records = psi_records + [restrict_alpha2(r, i) for r in same]
    return payoff_summary(records, by=["target", "n"], raw=False)


# -- What the spectral picture predicts (fig-ro-ideal) ------------------------------------

@dataclass
class IdealData:
    r"""Data of the ideal-readout figure.

    ``rho`` ``(m,)``; ``explained[target]`` ``(m,)``: :func:`explained_fraction` on ``rho``;
    ``overlaps[(n, batch)] = (mean, sem)`` of :math:`|\langle u_2, \beta^*\rangle|` over
    the draws; ``sizes`` the :math:`n = d` measured; ``band`` the smallest and largest
    reused mean; ``d`` the dimension of the chance line :math:`1/\sqrt d`.
    """

    rho: np.ndarray
    explained: dict
    overlaps: dict
    sizes: tuple
    band: tuple
    d: int
    counts: dict = field(default_factory=dict)


def ideal_data(teachers: dict, u2_records, d: int, rho=None) -> IdealData:
    r"""Ideal readout of one direction against its overlap, and the measured :math:`u_2`.

    ``teachers`` maps target names (``he1``, ``odd``, ``he3``) to single-index teachers;
    ``u2_records`` are :func:`twostep.signal_overlap_experiment` records with keys ``n``,
    ``batch`` and ``overlaps`` (``(1, 1)``: :math:`u_2` against :math:`\beta^*`). ``rho``
    defaults to 200 points from 0.02 to 1, log-spaced.
    """
    if not isinstance(teachers, dict) or not teachers:
        raise TypeError("teachers must be a non-empty dict of name -> Teacher")
    u2_records = _check_records(u2_records, "u2_records")
    d = check_int(d, "d")
    rho = np.geomspace(0.02, 1, 200) if rho is None else check_array(rho, "rho", ndim=1)
    explained = {t: explained_fraction(teachers[t], rho) for t in teachers}
    u2 = {(e["n"], e["batch"]): e
          for e in summarise(u2_records, by=["n", "batch"], values=["overlaps"])}
    sizes = tuple(sorted({n for n, _ in u2}))
    overlaps = {k: (e["overlaps"][0, 0], e["overlaps_sem"][0, 0]) for k, e in u2.items()}
    reused = np.array([overlaps[m, "reused"][0] for m in sizes])
    counts = {k: e["count"] for k, e in u2.items()}
    return IdealData(rho, explained, overlaps, sizes, (reused.min(), reused.max()), d, counts)


def plot_ideal(data: IdealData):
    r"""Fraction explained against overlap (log-log) with :math:`\rho^2`, :math:`\rho^6`,
    the band of the measured reuse :math:`u_2` and the chance overlap. Returns the Figure."""
    import matplotlib.pyplot as plt

    if not isinstance(data, IdealData):
        raise TypeError(f"data must be an IdealData, got {type(data).__name__}")
    fig, ax = plt.subplots(figsize=(5.0, 4.6))
    for t, label, color in (("he1", r"$\mathrm{He}_1$ (IE 1)", COLORS["one-step"]),
                            ("odd", "odd bounded (IE 3)", "#d68910"),
                            ("he3", r"$\mathrm{He}_3/\sqrt{6}$ (IE 3)", "#1e8449")):
        if t in data.explained:
            ax.plot(data.rho, data.explained[t], color=color, label=label)
    ax.plot(data.rho, data.rho ** 2, color=COLORS["theory"], ls="--", lw=1, label=r"$\rho^2$")
    ax.plot(data.rho, data.rho ** 6, color=COLORS["theory"], ls=":", lw=1, label=r"$\rho^6$")
    ax.axvspan(*data.band, color="#d68910", alpha=0.2, lw=0,
               label=rf"$u_2$ under reuse, $n = d \leq {data.sizes[-1]}$")
    ax.axvline(1 / np.sqrt(data.d), color=COLORS["chance"], ls="-.", lw=1.2,
               label=r"chance $1/\sqrt{d}$")
    ax.set(xscale="log", yscale="log", ylim=(1e-9, 1.5),
           xlabel=r"overlap $\rho$ of the learned direction with $\beta^\star$",
           ylabel=r"$1 - \mathcal{E}/\mathbb{E}[y^2]$ (fraction explained)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return fig


def _u2_theory(n: int) -> float:
    """Mean overlap of the reused u_2 with beta* for the odd bounded link at n = d."""
    return population_signal("odd", 1.0, 2, "reused").expected_overlaps(n)[0]


def u2_table(data: IdealData, teachers: dict) -> tuple:
    r"""Header and rows of the :math:`u_2` table, one column per :math:`n = d` (so that it
    fits a text column): the mean overlap ± standard error of the reused and the fresh
    :math:`u_2` (odd bounded link), chance :math:`1/\sqrt d`, the theory's mean overlap
    under reuse, and the fraction an ideal readout of a direction with the reused overlap
    explains for each target in ``teachers``."""
    if not isinstance(data, IdealData):
        raise TypeError(f"data must be an IdealData, got {type(data).__name__}")
    names = {"odd": "odd bounded", "he3": r"$\mathrm{He}_3$", "he1": r"$\mathrm{He}_1$"}
    header = ["$n = d$"] + [f"{m}" for m in data.sizes]
    ov = lambda b: [f"{data.overlaps[m, b][0]:.3f} ± {data.overlaps[m, b][1]:.3f}"
                    for m in data.sizes]
    rows = [[r"overlap of $u_2$, reused"] + ov("reused"),
            [r"overlap of $u_2$, fresh"] + ov("fresh"),
            [r"chance $1/\sqrt d$"] + [f"{1 / np.sqrt(m):.3f}" for m in data.sizes],
            ["theory's mean, reused"] + [f"{_u2_theory(m):.3f}" for m in data.sizes]]
    rows += [[f"explained, {names.get(t, t)}"]
             + [sci(explained_fraction(teachers[t], data.overlaps[m, "reused"][0]), 2)
                for m in data.sizes] for t in teachers]
    return header, rows


def ideal_numbers(data: IdealData, teachers: dict, u2_records, shared_seeds,
                  target_frac: float = 0.1) -> dict:
    r"""The numbers the text quotes next to the ideal-readout figure.

    ``c3_odd``; the mean ± sem of the reused :math:`u_2` at the largest :math:`n` over the
    draws with seeds ``shared_seeds``: their number ``n_shared``, and the largest distance of
    it or of the figure's estimate from the theory in its standard errors (``u2_nmax_maxz``);
    the top of the band, ``rho_hi``, and the odd link's fraction explained there;
    the overlap ``rho10_<t>`` at which an ideal readout explains ``target_frac``.
    """
    if not isinstance(data, IdealData):
        raise TypeError(f"data must be an IdealData, got {type(data).__name__}")
    u2_records = _check_records(u2_records, "u2_records")
    target_frac = check_real(target_frac, "target_frac", low=0.0, high=1.0, low_open=True)
    n_max = data.sizes[-1]
    shared = np.array([r["overlaps"][0, 0] for r in u2_records
                       if (r["n"], r["batch"]) == (n_max, "reused") and r["seed"] in shared_seeds])
    if shared.size < 2:
        raise ValueError("shared_seeds must select at least two draws at the largest n")
    shared_sem = shared.std(ddof=1) / np.sqrt(len(shared))
    th = _u2_theory(n_max)
    mean, sem = data.overlaps[n_max, "reused"]
    hi = data.band[1]
    n_draws = sum(1 for r in u2_records if (r["n"], r["batch"]) == (n_max, "reused"))
    out = dict(n_shared=len(shared), u2_nmax=n_max, n_data_seeds=n_draws,
               u2_nmax_maxz=max(abs(shared.mean() - th) / shared_sem, abs(mean - th) / sem),
               c3_odd=teachers["odd"].links[0].coefficients[3], rho_hi=hi,
               target_frac=target_frac, odd_at_hi_1=sci(explained_fraction(teachers["odd"], hi)))
    for t in ("odd", "he3"):
        if t in data.explained:
            out[f"rho10_{t}"] = float(np.interp(target_frac, data.explained[t], data.rho))
    return out


# -- Test error across (alpha1, alpha2) (fig-ro-alpha) ------------------------------------

def _hline(ax, x, mean, sem, color, ls="-", label=None, lw=1.4):
    ax.plot(x, [mean] * len(x), color=color, ls=ls, lw=lw, label=label)
    if sem:
        ax.fill_between(x, mean - sem, mean + sem, color=color, alpha=0.15, lw=0)


def _offscale(ax, value, label, color):
    """Name a horizontal baseline that lies outside the panel's y-range at the edge it leaves by."""
    lo, hi = ax.get_ylim()
    if lo <= value <= hi:
        return
    y, va, arrow = (hi, "top", r"$\uparrow$") if value > hi else (lo, "bottom", r"$\downarrow$")
    ax.annotate(f"{arrow} {label}: {value:.2f}", (0.02, y), xycoords=("axes fraction", "data"),
                xytext=(0, -3 if va == "top" else 3), textcoords="offset points", va=va,
                fontsize=9, color=color)


def _alpha_grid(summary, alpha1s, alpha2s):
    summary = _check_summary(summary, "summary")
    if isinstance(alpha1s, (int, float)) or isinstance(alpha2s, (int, float)):
        raise TypeError("alpha1s and alpha2s must be sequences of exponents")
    alpha1s = [check_alpha(a, "alpha1") for a in alpha1s]
    alpha2s = list(_alpha2s(alpha2s))
    for t in _PLOTTED:
        for a1 in alpha1s:
            if (t, a1) not in summary:
                raise ValueError(f"summary has no entry for target {t!r}, alpha1={a1}")
    return summary, alpha1s, alpha2s


def plot_alpha(summary: dict, alpha1s, alpha2s, L: int):
    r"""Test error against :math:`\alpha_2`, one row per :math:`\alpha_1`, columns
    :math:`\mathrm{He}_1` and the two-index target, with the ideal readouts (dashed),
    the baselines, the phase boundaries :math:`\alpha_2 = k(1/2-\alpha_1)`, :math:`k < L`,
    and :math:`\Lambda` on the top axis. ``summary``: :func:`payoff_summary` by
    ``(target, alpha1)``. Returns the Figure."""
    import matplotlib.pyplot as plt

    S1, alpha1s, A2S = _alpha_grid(summary, alpha1s, alpha2s)
    L = check_int(L, "L", 1)
    fig, axes = plt.subplots(len(alpha1s), len(_PLOTTED), figsize=(7.0, 7.6), sharex=True,
                             squeeze=False)
    xr = [A2S[0] - 0.03, A2S[-1] + 0.03]
    for col, t in enumerate(_PLOTTED):
        # One y-range per column: all of [0, 0 steps] for He_1; a zoom on the curves for the
        # two-index target, whose curves lie within a few hundredths of one another.
        if t == "he1":
            ylim = (-0.02, 0.9)
        else:
            vals = np.concatenate([np.ravel(S1[t, a1][k]) for a1 in alpha1s for k in
                                   [f"err_{s}" for s in SCHEMES if s != "W0"] + ["err_linear"]
                                   + [f"ideal_{s}" for s in SCHEMES if s != "W0"]])
            ylim = (vals.min() - 0.015, vals.max() + 0.015)
        for row, a1 in enumerate(alpha1s):
            ax, e = axes[row, col], S1[t, a1]
            ax.set(xlim=xr, ylim=ylim)
            _hline(ax, xr, e["best_linear"], 0, "k", ls=":", label="best linear predictor (population)")
            _hline(ax, xr, e["err_linear"], e["err_linear_sem"], "0.3", ls="-.",
                   label="linear ridge on $x$")
            for s in ("W0", "W1"):
                _hline(ax, xr, e[f"err_{s}"], e[f"err_{s}_sem"], SCHEME_STYLE[s][1],
                       label=SCHEME_STYLE[s][0])
            _hline(ax, xr, e["ideal_W1"], 0, SCHEME_STYLE["W1"][1], ls="--", lw=1, label=None)
            for s in SECOND_STEP_SCHEMES:
                errorbars(ax, A2S, e[f"err_{s}"], e[f"err_{s}_sem"], color=SCHEME_STYLE[s][1],
                          label=SCHEME_STYLE[s][0])
                if s != "W1_total":
                    ax.plot(A2S, e[f"ideal_{s}"], color=SCHEME_STYLE[s][1], ls="--", lw=1,
                            marker="x", ms=5)
            _offscale(ax, e["best_linear"], "best linear", "k")
            _offscale(ax, e["err_W0"], "0 steps", SCHEME_STYLE["W0"][1])
            for k in range(1, L):
                b = k * (0.5 - a1)
                if xr[0] < b < xr[1]:
                    ax.axvline(b, color=COLORS["chance"], lw=0.8, ls=":")
            top = ax.secondary_xaxis("top")   # Lambda(alpha1, alpha2) of each simulated alpha2
            top.set_xticks(A2S, [rf"$\Lambda={n_spikes(a1, a2, L)}$" for a2 in A2S])
            top.tick_params(length=0, labelsize=9, labelcolor="0.3")
            if row == 0:
                ax.set_title(TARGET_LABELS[t] + ("" if t == "he1" else " (zoomed y-axis)"))
            if row == len(alpha1s) - 1:
                ax.set_xlabel(r"$\alpha_2$")
            ax.set_ylabel(rf"$\alpha_1 = {a1}$: test error / $\overline{{y^2}}$" if col == 0
                          else r"test error / $\overline{y^2}$")
    axes[0, 0].plot([], [], color="0.3", ls="--", lw=1, marker="x", ms=5,
                    label="ideal readout of the learned directions")
    legend_below(fig, axes[0, 0], ncol=2)
    return fig


_PAIRED_COLUMNS = {"d_total_W1": r"$\eta_1{+}\eta_2$ − 1 step",
                   "d_fresh_total": r"fresh − $\eta_1{+}\eta_2$",
                   "d_reused_total": r"reused − $\eta_1{+}\eta_2$",
                   "d_reused_fresh": "reused − fresh"}


def paired_table(summary: dict, alpha1s, alpha2s, L: int, columns=None) -> tuple:
    r"""Header and rows of the paired differences of test error (mean ± standard error over
    seeds) for the targets with a learnable part, per :math:`(\alpha_1, \alpha_2)`.
    ``columns``: the differences shown, names of :data:`PAIRED_DIFFERENCES` (default all
    four, in the order :math:`\eta_1+\eta_2` − 1 step, fresh − :math:`\eta_1+\eta_2`,
    reused − :math:`\eta_1+\eta_2`, reused − fresh; two at a time fit a text column)."""
    S1, alpha1s, A2S = _alpha_grid(summary, alpha1s, alpha2s)
    L = check_int(L, "L", 1)
    columns = list(_PAIRED_COLUMNS) if columns is None else list(columns)
    if not columns or any(k not in _PAIRED_COLUMNS for k in columns):
        raise ValueError(f"columns must be names among {list(_PAIRED_COLUMNS)}, got {columns}")
    header = ["target", r"$\alpha_1$", r"$\alpha_2$", r"$\Lambda$"] + [_PAIRED_COLUMNS[k] for k in columns]
    rows = []
    for t in _PLOTTED:
        for a1 in alpha1s:
            e = S1[t, a1]
            for i, a2 in enumerate(A2S):
                rows.append([_PLAIN[t], f"{a1:g}", f"{a2:g}", f"{n_spikes(a1, a2, L)}"]
                            + [_pm_cell(e[k][i], e[k + '_sem'][i]) for k in columns])
    return header, rows


def _pm_cell(mean, sem, signed: bool = True) -> str:
    """``+0.012 ± 0.004`` for a table cell (``0.012 ± 0.004`` unless ``signed``): three
    decimals, four where the standard error would round to zero at three."""
    spec = ".3f" if abs(sem) >= 0.0005 else ".4f"
    return f"{mean:{'+' if signed else ''}{spec}} ± {sem:{spec}}"


def _odd_spread(records) -> float:
    """Largest |paired difference| between two first layers for the odd target, any problem."""
    return max(np.max(np.abs(r[k])) for r in records if r["target"] == "odd"
               for k in PAIRED_DIFFERENCES)


def alpha_numbers(summary: dict, records, alpha1s, alpha2s, ref, L: int) -> dict:
    r"""The numbers the text quotes about the :math:`\alpha_2` sweep.

    Errors and ideal errors at ``alpha1 = ref[0]`` (``h4_*`` for :math:`\mathrm{He}_1`,
    ``m4_*`` for the two-index target, ``_ref`` at ``alpha2 = ref[1]``), the range of the
    extra-step-size difference over all learnable settings (``tw_*``: how many, how many
    significantly worse or better), the largest paired difference and distance from the zero
    predictor for the odd target (``odd_spread``, ``odd_vs_zero``, from the single problems in
    ``records``), the odd target's share of fits at the largest penalty (``odd_edges``),
    overlaps of :math:`v_1` and :math:`u_2` (``ov_*``), and :math:`\Lambda` at ``alpha1s[0]``
    and ``alpha2 = ref[1]`` (``lam_ref_lo``).
    """
    S1, alpha1s, A2S = _alpha_grid(summary, alpha1s, alpha2s)
    records = _check_records(records)
    ref = check_pairs([ref], "ref", "an (alpha1, alpha2) pair")[0]
    A_LO, A_HI = alpha1s[0], check_alpha(ref[0], "ref[0]")
    if float(ref[1]) not in A2S:
        raise ValueError(f"ref[1] must be one of alpha2s {A2S}, got {ref[1]}")
    i_ref = A2S.index(float(ref[1]))
    L = check_int(L, "L", 1)

    def at(t, key, i=None, a1=A_HI):
        v = S1[t, a1][key]
        return v if i is None else v[i]

    g = dict(h4_W0=at("he1", "err_W0"), h4_W1=at("he1", "err_W1"), h3_W1=at("he1", "err_W1", a1=A_LO),
             h4_ideal_W1=at("he1", "ideal_W1"), h4_linear=at("he1", "err_linear"),
             h4_W2_fresh_ref=at("he1", "err_W2_fresh", i_ref),
             h4_ideal_W2_fresh_ref=at("he1", "ideal_W2_fresh", i_ref),
             h4_ideal_W2_reused_ref=at("he1", "ideal_W2_reused", i_ref),
             m4_linear=at("he1+odd", "err_linear"), m4_ideal_W1=at("he1+odd", "ideal_W1"),
             m4_ideal_W2_fresh_ref=at("he1+odd", "ideal_W2_fresh", i_ref),
             m_best_linear=at("he1+odd", "best_linear"))
    odd = [r for r in records if r["target"] == "odd"]
    g["odd_spread"] = _odd_spread(records)
    g["odd_vs_zero"] = max(np.max(np.abs(r[f"err_{s}"] - 1)) for r in odd for s in SCHEMES)

    def top_edge(keep):
        return np.mean(np.concatenate([np.ravel(r[f"edge_{s}"]) == 1 for r in records
                                       if keep(r["target"]) for s in SCHEMES]))

    g["odd_edges"] = top_edge(lambda t: t == "odd")
    g["min_reused_total"] = min(np.min(r["d_reused_total"]) for r in records if r["target"] != "odd")
    g["min_reused_total_mean"] = min(np.min(e["d_reused_total"]) for (t, a1), e in S1.items()
                                     if t != "odd")
    tw = [(e["d_total_W1"][i], e["d_total_W1_sem"][i]) for (t, a1), e in S1.items()
          if t != "odd" for i in range(len(A2S))]
    g.update(tw_n=len(tw),
             tw_n_sig_worse=sum(m > 2 * se for m, se in tw),
             tw_n_sig_better=sum(m < -2 * se for m, se in tw),
             ov_v_h=at("he1", "overlap_v")[0],
             ov_u2_fr_h=at("he1", "overlap_u_fresh")[1, 0],
             ov_u2_re_h=at("he1", "overlap_u_reused")[1, 0],
             ov_u2_fr_m=at("he1+odd", "overlap_u_fresh")[1, 1],
             ov_u2_re_m=at("he1+odd", "overlap_u_reused")[1, 1],
             lam_ref_lo=n_spikes(A_LO, A2S[i_ref], L))
    return g


def u2_consistency(summary: dict, records, data: IdealData, more_records, teacher: Teacher,
                   alpha1: float, d: int) -> tuple:
    r"""Estimates of the reused :math:`u_2` overlap of the odd target at :math:`n = d`.

    The problems of the :math:`\alpha_2` sweep at ``alpha1`` (``summary``, ``records``), the
    draws of the ideal-readout figure (``data``) and further draws ``more_records``
    (:func:`twostep.signal_overlap_experiment`), next to the theory's mean at this
    :math:`n` and its large-:math:`n` limit. Returns ``(header, rows, numbers)``: a table
    with one row per estimate (draws, mean ± sem, distance from the further draws' mean in
    standard errors of a mean of that many draws, the fraction an ideal readout of such a
    direction explains for ``teacher``) and the numbers the text quotes: ``u2_gap_z``, the
    first two estimates' difference in combined standard errors; ``ov_u2_re_o``, the first
    estimate; ``u2_p_here``, the two-sided Gaussian probability of a deviation as large as
    the first estimate's.
    """
    from scipy.special import erfc

    summary = _check_summary(summary, "summary")
    records = _check_records(records)
    more_records = _check_records(more_records, "more_records")
    if not isinstance(data, IdealData):
        raise TypeError(f"data must be an IdealData, got {type(data).__name__}")
    _check_teacher(teacher)
    alpha1, d = check_alpha(alpha1, "alpha1"), check_int(d, "d")
    if ("odd", alpha1) not in summary or (d, "reused") not in data.overlaps:
        raise ValueError(f"no odd-target runs at alpha1={alpha1} and n = d = {d}")
    e = summary["odd", alpha1]
    here, here_sem, n_here = e["overlap_u_reused"][1, 0], e["overlap_u_reused_sem"][1, 0], e["count"]
    fig, fig_sem = data.overlaps[d, "reused"]
    n_fig = data.counts[d, "reused"]
    more = np.array([r["overlaps"][0, 0] for r in more_records])
    mean, sd = more.mean(), more.std(ddof=1)
    sig = population_signal("odd", 1.0, 2, "reused")
    theory, limit = sig.expected_overlaps(d)[0], sig.overlaps[0]
    z = lambda x, k: (x - mean) / (sd / np.sqrt(k))
    frac = lambda x: sci(explained_fraction(teacher, x))
    header = ["estimate", "draws", "overlap", "distance", "explained"]
    rows = [["the test-error runs' problems", f"{n_here}", f"{here:.3f} ± {here_sem:.3f}",
             f"{z(here, n_here):+.1f}", frac(here)],
            ["draws of the ideal-readout figure", f"{n_fig}", f"{fig:.3f} ± {fig_sem:.3f}",
             f"{z(fig, n_fig):+.1f}", frac(fig)],
            ["further draws", f"{len(more)}", f"{mean:.3f} ± {sd / np.sqrt(len(more)):.3f}",
             "", frac(mean)],
            [f"theory, mean at $n = d = {d}$", "", f"{theory:.3f}", "", frac(theory)],
            ["theory, large-$n$ limit", "", f"{limit:.3f}", "", frac(limit)]]
    numbers = dict(u2_gap_z=(fig - here) / np.hypot(fig_sem, here_sem), ov_u2_re_o=here,
                   u2_p_here=float(erfc(abs(here - mean) / (sd / np.sqrt(n_here)) / np.sqrt(2))))
    return header, rows, numbers


# -- Does the spectral picture predict the test error? (fig-ro-scatter) -------------------

def scatter_points(alpha_summary: dict, psi_summary: dict, d: int) -> list:
    r"""Every (setting, first layer) of both sweeps as ``(target, scheme, ideal, measured,
    measured_sem)``: the one-step layer and the second-step schemes of each
    :math:`(\alpha_1, \alpha_2)`, then those of each :math:`n \ne d` (the :math:`n = d`
    runs of ``psi_summary`` are already in ``alpha_summary``)."""
    S1 = _check_summary(alpha_summary, "alpha_summary")
    S2 = _check_summary(psi_summary, "psi_summary")
    d = check_int(d, "d")
    points = []
    for (t, a1), e in S1.items():
        points.append((t, "W1", e["ideal_W1"], e["err_W1"], e["err_W1_sem"]))
        for s in SECOND_STEP_SCHEMES:
            points += [(t, s, e[f"ideal_{s}"][i], e[f"err_{s}"][i], e[f"err_{s}_sem"][i])
                       for i in range(len(e[f"err_{s}"]))]
    for (t, n), e in S2.items():
        if n != d:
            points.append((t, "W1", e["ideal_W1"], e["err_W1"], e["err_W1_sem"]))
            points += [(t, s, e[f"ideal_{s}"][0], e[f"err_{s}"][0], e[f"err_{s}_sem"][0])
                       for s in SECOND_STEP_SCHEMES]
    return points


def _check_points(points):
    if not isinstance(points, list) or not points or any(len(p) != 5 for p in points):
        raise TypeError("points must be a non-empty list of (target, scheme, ideal, measured, sem)")
    return points


def plot_scatter(points):
    r"""Measured test error against the ideal readout of the learned directions, one
    point per (setting, first layer), with the diagonal. Returns the Figure."""
    import matplotlib.pyplot as plt

    points = _check_points(points)
    markers = {"he1": "o", "odd": "s", "he1+odd": "^"}
    fig, ax = plt.subplots(figsize=(5.0, 4.8))
    # Open markers, one size per first layer: where the layers' errors coincide (the odd
    # target, which none of them learns) they show as concentric rings.
    for t, s, x, y, sem in points:
        ax.errorbar(x, y, yerr=sem, color=SCHEME_STYLE[s][1], marker=markers[t],
                    ms=SCATTER_SIZES[s], capsize=2, ls="none", mfc="none", alpha=0.85)
    ax.plot([0, 1.1], [0, 1.1], color=COLORS["theory"], lw=1, ls="--", label="measured = ideal")
    for s in ("W1", "W1_total", "W2_fresh", "W2_reused"):
        ax.plot([], [], color=SCHEME_STYLE[s][1], marker="o", ms=SCATTER_SIZES[s], mfc="none",
                ls="none", label=SCHEME_STYLE[s][0])
    for t in TARGET_LABELS:
        ax.plot([], [], color="0.3", marker=markers[t], mfc="none", ls="none",
                label=TARGET_LABELS[t])
    ax.set(xlim=(0.1, 1.08), ylim=(0.1, 1.08),
           xlabel=r"ideal readout of the learned directions, $\mathcal{E}/\mathbb{E}[y^2]$",
           ylabel=r"measured test error / $\overline{y^2}$")
    ax.legend(loc="upper left")
    return fig


def residual_table(points) -> tuple:
    r"""Measured minus ideal error for the targets with a learnable part, per first layer:
    ``(header, rows, numbers)`` with rows ``[layer, settings, mean, min, max]`` and
    ``numbers`` the values the text quotes (``n_points``, ``res_gap``: reused minus
    :math:`\eta_1+\eta_2` mean offset, ``res_fresh_maxabs``, ``corr_fresh``: correlation of
    ideal and measured for the fresh step)."""
    points = _check_points(points)
    resid = {s: np.array([y - x for t, s2, x, y, _ in points if s2 == s and t != "odd"])
             for s in SCHEMES if s != "W0"}
    fresh = [(x, y) for t, s, x, y, _ in points if s == "W2_fresh" and t != "odd"]
    header = ["first layer", "settings", "mean", "smallest", "largest"]
    rows = [[SCHEME_STYLE[s][0], f"{r.size}", f"{r.mean():+.3f}", f"{r.min():+.3f}",
             f"{r.max():+.3f}"] for s, r in resid.items()]
    numbers = dict(n_points=len(points), res_fresh_maxabs=np.abs(resid["W2_fresh"]).max(),
                   res_gap=resid["W2_reused"].mean() - resid["W1_total"].mean(),
                   corr_fresh=np.corrcoef(*np.array(fresh).T)[0, 1])
    return header, rows, numbers


# -- Test error against n/d (fig-ro-psi) --------------------------------------------------

@dataclass
class PsiData:
    r"""Data of the :math:`n/d` figure, for each target in ``targets``: ``err[t][scheme]``
    and ``sem[t][scheme]`` ``(len(psis),)``; ``baselines[t]`` the :math:`n = d` entry
    (``best_linear``, ``err_linear``, ``err_W0`` and their sems); ``ideal_v1[t]`` and
    ``ideal_merged[t]`` ``(len(psi_fine),)``: :func:`asymptotic_ideal` of :math:`v_1` and of
    :math:`\eta_1v_1+\eta_2v_2`; ``gap[t]``, ``gap_sem[t]``: reused minus
    :math:`\eta_1+\eta_2`; ``max_row[t][scheme]``; ``u2_reused[t]``: overlap of the reused
    :math:`u_2` with :math:`\beta^*_1`."""

    psis: np.ndarray
    psi_fine: np.ndarray
    etas: tuple
    err: dict
    sem: dict
    baselines: dict
    ideal_v1: dict
    ideal_merged: dict
    gap: dict
    gap_sem: dict
    max_row: dict
    max_row_sem: dict
    u2_reused: dict


def psi_data(summary: dict, teachers: dict, psis, d: int, etas, psi_fine=None) -> PsiData:
    r"""Collect the :math:`n/d` sweep (``summary`` from :func:`psi_summary`, keyed by
    ``(target, n)`` with :math:`n = \psi d`) and the asymptotic ideal curves for the step
    sizes ``etas = (eta1, eta2)``. ``psi_fine`` defaults to 80 log-spaced points from
    0.85 min(psis) to 1.15 max(psis)."""
    S2 = _check_summary(summary, "summary")
    if not isinstance(teachers, dict):
        raise TypeError("teachers must be a dict of name -> Teacher")
    psis = check_array(psis, "psis", ndim=1)
    if psis.size == 0 or np.any(psis <= 0):
        raise ValueError("psis must be a non-empty sequence of positive ratios n/d")
    d = check_int(d, "d")
    etas = tuple(check_array(etas, "etas", shape=(2,)))
    psi_fine = (np.geomspace(psis[0] * 0.85, psis[-1] * 1.15, 80) if psi_fine is None
                else check_array(psi_fine, "psi_fine", ndim=1))
    ns = [int(p * d) for p in psis]
    out = {k: {} for k in ("err", "sem", "baselines", "ideal_v1", "ideal_merged", "gap",
                           "gap_sem", "max_row", "max_row_sem", "u2_reused")}
    for t in teachers:
        missing = [n for n in ns if (t, n) not in S2]
        if missing:
            raise ValueError(f"summary has no entry for target {t!r} at n = {missing}")
        pick = lambda key, i: np.array([S2[t, n][key] if i is None else S2[t, n][key][i]
                                        for n in ns])
        one = lambda s: None if s in ("W0", "W1") else 0
        out["err"][t] = {s: pick(f"err_{s}", one(s)) for s in SCHEMES}
        out["sem"][t] = {s: pick(f"err_{s}_sem", one(s)) for s in SCHEMES}
        out["max_row"][t] = {s: pick(f"max_row_{s}", one(s)) for s in SCHEMES}
        out["max_row_sem"][t] = {s: pick(f"max_row_{s}_sem", one(s)) for s in SCHEMES}
        out["baselines"][t] = S2[t, d]
        out["ideal_v1"][t] = np.array([asymptotic_ideal(teachers[t], p) for p in psi_fine])
        out["ideal_merged"][t] = np.array([asymptotic_ideal(teachers[t], p, etas) for p in psi_fine])
        out["gap"][t], out["gap_sem"][t] = pick("d_reused_total", 0), pick("d_reused_total_sem", 0)
        out["u2_reused"][t] = np.array([S2[t, n]["overlap_u_reused"][1, 0] for n in ns])
    return PsiData(psis, psi_fine, etas, **out)


def plot_psi(data: PsiData):
    r"""Test error against :math:`\psi = n/d` for :math:`\mathrm{He}_1` and the two-index
    target, with the baselines and the asymptotic ideal curves. Returns the Figure."""
    import matplotlib.pyplot as plt

    if not isinstance(data, PsiData):
        raise TypeError(f"data must be a PsiData, got {type(data).__name__}")
    plotted = [t for t in _PLOTTED if t in data.err]
    fig, axes = plt.subplots(1, len(plotted), figsize=(7.0, 4.9), sharey=True, squeeze=False)
    for ax, t in zip(axes[0], plotted):
        e0, x = data.baselines[t], data.psi_fine
        _hline(ax, x, e0["best_linear"], 0, "k", ls=":", label="best linear predictor (population)")
        _hline(ax, x, e0["err_linear"], e0["err_linear_sem"], "0.3", ls="-.",
               label="linear ridge on $x$")
        _hline(ax, x, e0["err_W0"], e0["err_W0_sem"], SCHEME_STYLE["W0"][1],
               label=SCHEME_STYLE["W0"][0])
        for s in ("W1",) + SECOND_STEP_SCHEMES:
            errorbars(ax, data.psis, data.err[t][s], data.sem[t][s], color=SCHEME_STYLE[s][1],
                      label=SCHEME_STYLE[s][0], **SCHEME_MARKS[s])
        ax.plot(x, data.ideal_v1[t], color=SCHEME_STYLE["W1"][1], ls="--", lw=1,
                label=r"ideal, $v_1$ (large-$n$ overlap)")
        ax.plot(x, data.ideal_merged[t], color=SCHEME_STYLE["W2_fresh"][1], ls="--", lw=1,
                label=r"ideal, $\eta_1v_1+\eta_2v_2$ (large-$n$ overlap)")
        ax.set(xscale="log", ylim=(-0.02, 1.1), xlabel=r"$\psi = n/d$ of the gradient steps",
               title=TARGET_LABELS[t])
        ax.set_xticks(data.psis, [f"{p:g}" for p in data.psis])
        ax.minorticks_off()
    axes[0, 0].set_ylabel(r"test error / $\overline{y^2}$")
    legend_below(fig, axes[0, 0], ncol=2)
    return fig


def psi_table(data: PsiData, teachers: dict) -> tuple:
    r"""Per :math:`\psi`: for :math:`\mathrm{He}_1`, one step and its asymptotic ideal, the
    fresh second step and the ideal of the merged spike, the paired excess of the reused
    second step over one step of the same total size; one step for the two-index target;
    the reused :math:`u_2`'s overlap for the odd target. Returns ``(header, rows, numbers)``,
    ``numbers`` being what the text quotes: where the fresh step lies against its curve
    (``psi_fresh_cmp``), its largest excess (``psi_fresh_excess``, ``_sem``, ``_at``) and
    the odd target's largest distance from the zero predictor (``psi_o_max_dev``, and the
    last column, only where ``data`` holds the odd target)."""
    if not isinstance(data, PsiData):
        raise TypeError(f"data must be a PsiData, got {type(data).__name__}")
    for t in ("he1", "he1+odd"):
        if t not in data.err or t not in teachers:
            raise ValueError(f"data and teachers must hold the target {t!r}")
    odd = "odd" in data.err
    psis = [float(p) for p in data.psis]
    h = "he1"
    v1 = [asymptotic_ideal(teachers[h], p) for p in psis]
    merged = [asymptotic_ideal(teachers[h], p, data.etas) for p in psis]
    header = [r"$\psi$", "1 step", r"ideal, $v_1$", "fresh", "ideal, merged",
              r"reused − $\eta_1{+}\eta_2$", "He₁ + odd, 1 step"] + (["odd: reused u₂"] if odd else [])
    rows = [[f"{p:g}", f"{data.err[h]['W1'][j]:.3f}", f"{v1[j]:.3f}",
             f"{data.err[h]['W2_fresh'][j]:.3f}", f"{merged[j]:.3f}",
             f"{data.gap[h][j]:+.3f} ± {data.gap_sem[h][j]:.3f}",
             f"{data.err['he1+odd']['W1'][j]:.3f}"]
            + ([f"{data.u2_reused['odd'][j]:.2f}"] if odd else [])
            for j, p in enumerate(psis)]
    diff = {p: data.err[h]["W2_fresh"][j] - merged[j] for j, p in enumerate(psis)}
    sem = {p: data.sem[h]["W2_fresh"][j] for j, p in enumerate(psis)}
    join = lambda ps: (", ".join(f"{p:g}" for p in ps[:-1]) + " and " if len(ps) > 1 else "") \
        + f"{ps[-1]:g}"
    below = [p for p in psis if diff[p] < 0]
    above = [p for p in psis if diff[p] >= 0]
    parts = [f"{where} the curve at ψ = {join(ps)}"
             for where, ps in (("below", below), ("above", above)) if ps]
    worst = max(psis, key=lambda p: diff[p])
    numbers = dict(psi_fresh_cmp=" and ".join(parts), psi_fresh_excess=diff[worst],
                   psi_fresh_excess_sem=sem[worst], psi_fresh_excess_at=worst)
    if odd:
        numbers["psi_o_max_dev"] = max(abs(data.err["odd"][s][j] - 1)
                                       for j in range(len(psis)) for s in SCHEMES)
    return header, rows, numbers


# -- Beyond one configuration (tab-ro-configs, fig-ro-penalty, tab-ro-ideal-svd) -----------

def _one(entry, key) -> tuple:
    """Mean and sem of ``key`` in a summary entry of runs with a single alpha2."""
    m, se = np.ravel(entry[key]), np.ravel(entry[key + "_sem"])
    if m.size != 1:
        raise ValueError(f"the runs must have a single alpha2, got {m.size} values of {key}")
    return float(m[0]), float(se[0])


def _pm(entry, key, spec=".3f", signed=False) -> str:
    m, se = _one(entry, key)
    return f"{m:{'+' if signed else ''}{spec}} ± {se:{spec}}"


def _config_label(cfg: dict, base: dict) -> str:
    if not cfg:
        return "reference"
    parts = []
    for k, v in cfg.items():
        if k == "activation":
            parts.append(str(v))
        elif k == "n_train" and v % base["N"] == 0:
            parts.append(rf"$n_{{\mathrm{{tr}}}} = {v // base['N']}N$")
        elif k == "n_train":
            parts.append(rf"$n_{{\mathrm{{tr}}}} = {v}$")
        elif k == "c":   # the step constant: kappa in the book's notation
            parts.append(rf"$\kappa = {v:g}$")
        else:
            parts.append(f"${k} = {v:g}$" if isinstance(v, (int, float)) else f"{k} = {v}")
    return ", ".join(parts)


@dataclass
class ConfigData:
    r"""Summaries (:func:`payoff_summary`) of the runs of each configuration, by its name:
    ``entries[name]``; ``labels[name]`` its label in tables; ``base`` the reference
    keywords."""

    entries: dict
    labels: dict
    base: dict


def config_data(records, configs: dict, base: dict) -> ConfigData:
    r"""Collect the runs of several configurations of :func:`payoff_experiment`.

    ``configs`` maps a name (a Python identifier, used in glue names) to the keywords in
    which that configuration differs from ``base`` (``{}`` for the reference itself);
    ``records`` are the runs of all of them, e.g. one :func:`twostep.sweep` over
    ``[{**base, **c} for c in configs.values()]``, each with a single :math:`\alpha_2`.
    """
    records = _check_records(records)
    if not isinstance(configs, dict) or not configs \
            or not all(isinstance(c, dict) for c in configs.values()):
        raise TypeError("configs must be a non-empty dict of name -> dict of payoff_experiment keywords")
    if not all(isinstance(k, str) and k.isidentifier() for k in configs):
        raise ValueError(f"configs' names must be Python identifiers, got {list(configs)}")
    if not isinstance(base, dict) or "N" not in base:
        raise TypeError("base must be the dict of the reference's payoff_experiment keywords, with N")
    keys = sorted(set().union(*configs.values()))
    if not keys:
        raise ValueError("configs must differ from base in at least one keyword")
    missing = [k for k in keys if k not in base]
    if missing:
        raise ValueError(f"base must give the reference value of {missing}")
    S = payoff_summary(records, by=keys, raw=False)
    entries = {}
    for name, cfg in configs.items():
        want = tuple({**base, **cfg}[k] for k in keys)
        if want not in S:
            raise ValueError(f"records hold no run of the configuration {name!r} "
                             f"({dict(zip(keys, want))})")
        entries[name] = S[want]
    return ConfigData(entries, {k: _config_label(c, base) for k, c in configs.items()}, dict(base))


#: Short column names of the first layers in the narrow tables.
_SHORT = {"W0": "0 steps", "W1": "1 step", "W1_total": r"$\eta_1+\eta_2$",
          "W2_reused": "reused", "W2_fresh": "fresh"}


def config_table(data: ConfigData) -> tuple:
    r"""Per configuration, the columns the text uses: the test errors of 0 steps, 1 step and
    the fresh second step (means over the seeds) and the paired reuse penalties reused − fresh
    and reused − one step of size :math:`\eta_1+\eta_2` (mean ± sem)
    (:func:`config_errors_table` has every first layer's error with its sem and the largest
    row norm of the reused :math:`W_2`). Returns ``(header, rows, numbers)``; ``numbers`` holds,
    per configuration name ``c``, ``c_rt`` (reused − :math:`\eta_1+\eta_2`) and its ``_sem``,
    ``c_maxrow`` (the reused :math:`W_2`'s largest row norm) and ``c_W0`` (0 steps' error)."""
    if not isinstance(data, ConfigData):
        raise TypeError(f"data must be a ConfigData, got {type(data).__name__}")
    header = ["setting", "0 steps", "1 step", "fresh", "reused − fresh",
              r"reused − $\eta_1{+}\eta_2$"]
    rows, numbers = [], {}
    for name, e in data.entries.items():
        rows.append([data.labels[name]] + [f"{_one(e, f'err_{s}')[0]:.3f}"
                                           for s in ("W0", "W1", "W2_fresh")]
                    + [_pm(e, "d_reused_fresh", signed=True), _pm(e, "d_reused_total", signed=True)])
        rt, rt_sem = _one(e, "d_reused_total")
        numbers.update({f"{name}_rt": rt, f"{name}_rt_sem": rt_sem,
                        f"{name}_maxrow": _one(e, "max_row_W2_reused")[0],
                        f"{name}_W0": _one(e, "err_W0")[0]})
    return header, rows, numbers


def config_errors_table(data: ConfigData) -> tuple:
    r"""Test error of every first layer (mean over the seeds), the largest of their standard
    errors, and the largest row norm of the reused :math:`W_2` (mean), one column per
    configuration (so that it fits a text column). Returns ``(header, rows)``."""
    if not isinstance(data, ConfigData):
        raise TypeError(f"data must be a ConfigData, got {type(data).__name__}")
    header = ["first layer"] + [data.labels[name] for name in data.entries]
    rows = [[_SHORT[s]] + [f"{_one(e, f'err_{s}')[0]:.3f}" for e in data.entries.values()]
            for s in SCHEMES]
    rows.append(["largest standard error"]
                + [f"{max(_one(e, f'err_{s}')[1] for s in SCHEMES):.3f}"
                   for e in data.entries.values()])
    rows.append([r"largest row of reused $W_2$"]
                + [f"{_one(e, 'max_row_W2_reused')[0]:.1f}" for e in data.entries.values()])
    return header, rows


@dataclass
class PenaltyData:
    r"""The reuse penalty against the width :math:`N = n = d`: ``N`` ``(m,)``; per paired
    difference ``"d_reused_fresh"``, ``"d_reused_total"``: ``diff[k]``, ``sem[k]``
    ``(m,)``; per scheme ``max_row[s]``, ``max_row_sem[s]`` ``(m,)``; ``entries[N]`` the
    :func:`payoff_summary` entry of each width; ``seeds`` the runs per width."""

    N: np.ndarray
    diff: dict
    sem: dict
    max_row: dict
    max_row_sem: dict
    entries: dict
    seeds: np.ndarray


def penalty_data(records) -> PenaltyData:
    r"""Summarise :func:`payoff_experiment` runs at several widths ``N`` (one
    :math:`\alpha_2` each) into the paired reuse penalties and the largest row norms."""
    records = _check_records(records)
    S = payoff_summary(records, by=["N"], raw=False)
    Ns = sorted(k[0] for k in S)
    if len(Ns) < 2:
        raise ValueError(f"records must hold at least two widths N, got {Ns}")
    entries = {N: S[N,] for N in Ns}
    col = lambda key: np.array([_one(entries[N], key) for N in Ns])
    diff, sem = {}, {}
    for k in ("d_reused_fresh", "d_reused_total"):
        c = col(k)
        diff[k], sem[k] = c[:, 0], c[:, 1]
    max_row, max_row_sem = {}, {}
    for s in SECOND_STEP_SCHEMES:
        c = col(f"max_row_{s}")
        max_row[s], max_row_sem[s] = c[:, 0], c[:, 1]
    return PenaltyData(np.array(Ns), diff, sem, max_row, max_row_sem, entries,
                       np.array([entries[N]["count"] for N in Ns]))


def plot_penalty(data: PenaltyData):
    r"""Left: the paired reuse penalties against :math:`N`, with error bars and the zero
    line. Right: the largest row norm of the trained first layers against :math:`N`.
    Returns the Figure."""
    import matplotlib.pyplot as plt

    if not isinstance(data, PenaltyData):
        raise TypeError(f"data must be a PenaltyData, got {type(data).__name__}")
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 4.4))
    ax = axes[0]
    for k, label, color in (("d_reused_fresh", "reused − fresh", COLORS["reused"]),
                            ("d_reused_total", r"reused − 1 step of size $\eta_1+\eta_2$",
                             SCHEME_STYLE["W1_total"][1])):
        errorbars(ax, data.N, data.diff[k], data.sem[k], color=color, label=label)
    ax.axhline(0, color="k", lw=0.8)
    ax.set(xscale="log", xlabel=r"width $N = n = d = n_{\mathrm{tr}}$",
           ylabel=r"paired difference of test error / $\overline{y^2}$",
           title=r"reuse penalty, $\mathrm{He}_1$")
    ax.set_xticks(data.N, [str(n) for n in data.N])
    ax.minorticks_off()
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18))
    ax = axes[1]
    for s in ("W1_total", "W2_fresh", "W2_reused"):
        errorbars(ax, data.N, data.max_row[s], data.max_row_sem[s], color=SCHEME_STYLE[s][1],
                  label=SCHEME_STYLE[s][0])
    ax.axhline(1, color=COLORS["chance"], ls=":", lw=1.2, label=r"initial rows ($\approx 1$)")
    ax.set(xscale="log", yscale="log", xlabel=r"width $N$", ylabel=r"largest row norm $\max_i\|w_i\|$",
           title="runaway neurons")
    ax.set_xticks(data.N, [str(n) for n in data.N])
    ax.minorticks_off()
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18))
    return fig


def penalty_table(data: PenaltyData) -> tuple:
    r"""Per width: seeds, the two paired penalties and the largest row norms of the two
    second steps (the test errors themselves: :func:`penalty_errors_table`). Returns
    ``(header, rows, numbers)``;
    ``numbers``: ``pen_N_lo``, ``pen_N_hi`` (the end widths), the change of the penalty
    reused − fresh between them, ``pen_change`` ± ``pen_change_sem``, the same for reused −
    :math:`\eta_1+\eta_2` (``rt_change``, ``rt_change_sem``) with its value at the largest
    width, ``rt_hi`` ± ``rt_hi_sem``, in standard errors ``rt_hi_z``, and the smallest
    number of seeds, ``pen_seeds_min``."""
    if not isinstance(data, PenaltyData):
        raise TypeError(f"data must be a PenaltyData, got {type(data).__name__}")
    header = ["$N$", "seeds", "reused − fresh", r"reused − $\eta_1{+}\eta_2$",
              "row, reused", "row, fresh"]
    rows = [[f"{N}", f"{data.seeds[j]}"]
            + [_pm(data.entries[N], k, signed=True) for k in ("d_reused_fresh", "d_reused_total")]
            + [f"{data.max_row['W2_reused'][j]:.1f}", f"{data.max_row['W2_fresh'][j]:.1f}"]
            for j, N in enumerate(data.N)]
    numbers = dict(pen_N_lo=int(data.N[0]), pen_N_hi=int(data.N[-1]),
                   pen_seeds_min=int(data.seeds.min()))
    for short, k in (("pen", "d_reused_fresh"), ("rt", "d_reused_total")):
        d, se = data.diff[k], data.sem[k]
        numbers.update({f"{short}_change": d[-1] - d[0],
                        f"{short}_change_sem": float(np.hypot(se[0], se[-1]))})
    d, se = data.diff["d_reused_total"], data.sem["d_reused_total"]
    numbers.update(rt_hi=d[-1], rt_hi_sem=se[-1], rt_hi_z=d[-1] / se[-1] if se[-1] else np.inf)
    return header, rows, numbers


def penalty_errors_table(data: PenaltyData) -> tuple:
    r"""Per width: the test errors of one step and of both second steps, mean ± sem over
    the seeds. Returns ``(header, rows)``."""
    if not isinstance(data, PenaltyData):
        raise TypeError(f"data must be a PenaltyData, got {type(data).__name__}")
    shown = ("W1", "W1_total", "W2_reused", "W2_fresh")
    header = ["$N$"] + [_SHORT[s] for s in shown]
    rows = [[f"{N}"] + [_pm(data.entries[N], f"err_{s}") for s in shown] for N in data.N]
    return header, rows


def ideal_comparison_table(configs: ConfigData, widths: PenaltyData) -> tuple:
    r"""Measured test error next to the two ideal readouts of :eq:`eq-ro-ideal`, per
    setting (each configuration, then each width) and first layer: the theory's
    directions (:func:`learned_directions`) and the measured top singular vectors
    (:func:`measured_directions`), each cell the mean ± standard error over the seeds. Returns
    ``(header, rows, numbers)``; ``numbers``: ``n_ideal_pairs`` (settings × first layers),
    how many lie below each ideal (``n_below_theory``, ``n_below_svd``), the most the
    measured error lies below the theory's (``max_below_theory``), the largest difference
    of the two ideals outside the reused second step (``max_svd_gap``), and the reused
    second step's two ideals at the reference (``ref_ideal_re``, ``ref_ideal_svd_re``)."""
    if not isinstance(configs, ConfigData) or not isinstance(widths, PenaltyData):
        raise TypeError("configs must be a ConfigData and widths a PenaltyData")
    shown = ("W1", "W2_reused", "W2_fresh")
    settings = [(configs.labels[k], e) for k, e in configs.entries.items()]
    settings += [(f"$N = {N}$", widths.entries[N]) for N in widths.N]
    for label, e in settings:
        if f"ideal_svd_{shown[0]}" not in e:
            raise ValueError(f"the runs of {label!r} have no measured ideal "
                             "(run payoff_experiment with measured_ideal=True)")
    header = ["setting", "first layer", "measured", "theory's", "measured vectors"]
    rows, below_th, below_svd, gap_below, gap_svd = [], 0, 0, 0.0, 0.0
    for label, e in settings:
        for j, s in enumerate(shown):
            m, th, sv = (np.ravel(e[f"{k}_{s}"])[0] for k in ("err", "ideal", "ideal_svd"))
            below_th += m < th
            below_svd += m < sv
            gap_below = max(gap_below, th - m)
            if s != "W2_reused":
                gap_svd = max(gap_svd, abs(sv - th))
            rows.append([label if j == 0 else "", _SHORT[s]]
                        + [_pm_cell(*_one(e, f"{k}_{s}"), signed=False)
                           for k in ("err", "ideal", "ideal_svd")])
    ref = next(iter(configs.entries.values()))
    numbers = dict(n_ideal_pairs=len(settings) * len(shown), n_below_theory=int(below_th),
                   n_below_svd=int(below_svd), max_below_theory=float(gap_below),
                   max_svd_gap=float(gap_svd),
                   ref_ideal_re=float(np.ravel(ref["ideal_W2_reused"])[0]),
                   ref_ideal_svd_re=float(np.ravel(ref["ideal_svd_W2_reused"])[0]))
    return header, rows, numbers


# -- Why a reused second step does not pay (fig-ro-why) -----------------------------------

@dataclass
class MemorisationData:
    r"""One problem's second step, neuron by neuron, per batch (``"reused"``, ``"fresh"``):
    ``move[b]`` :math:`\|w^{(2)}_i - w^{(1)}_i\|` and ``memo[b]``
    :math:`\max_j|\cos(w^{(2)}_i - w^{(1)}_i, x_j)|` (:func:`neuron_memorisation`), both
    ``(N,)``; ``scale[b]`` ``(N,)`` the root mean square of each feature of :math:`W_2` on
    fresh inputs; ``unrelated`` :math:`\sqrt{2\log n/d}`."""

    move: dict
    memo: dict
    scale: dict
    unrelated: float


def memorisation_data(N: int, n: int, d: int, activation, target, c: float, alpha1: float,
                      alpha2: float, seed: int, scale_seed: int = 1) -> MemorisationData:
    r"""Draw one problem with ``twostep.rng_for(seed)`` (the teacher, then
    :func:`train_schemes`), take both second steps, and measure each neuron's move, its
    largest cosine with one input of the batch the step used, and the scale of each
    feature on ``n`` fresh inputs drawn with ``numpy.random.default_rng(scale_seed)``."""
    seed = check_int(seed, "seed", 0)
    scale_seed = check_int(scale_seed, "scale_seed", 0)
    act = as_activation(activation)
    sch = train_schemes(rng_for(seed), N=N, n=n, d=d, activation=act, target=target, c=c,
                        alpha1=alpha1, alpha2s=(alpha2,))
    move = {"reused": sch.W2_reused[0] - sch.W1, "fresh": sch.W2_fresh[0] - sch.W1}
    batch = {"reused": sch.X1, "fresh": sch.X2}
    X_new = gaussian_inputs(n, d, np.random.default_rng(scale_seed))
    scale = {b: feature_scale(features(W, X_new, act))
             for b, W in (("reused", sch.W2_reused[0]), ("fresh", sch.W2_fresh[0]))}
    return MemorisationData({b: np.linalg.norm(move[b], axis=1) for b in move},
                            {b: neuron_memorisation(move[b], batch[b]) for b in move},
                            scale, chance_maximum(n, d))


def plot_why(data: MemorisationData, psi: PsiData, alpha_entry: dict, alpha1: float, alpha2s):
    r"""Three panels: each neuron's second-step move against its largest cosine with one
    training input (``data``); the largest row norm against :math:`\psi` for
    :math:`\mathrm{He}_1` (``psi``); test error with standardised and raw features against
    :math:`\alpha_2` (``alpha_entry``: the :func:`payoff_summary` entry of
    :math:`\mathrm{He}_1` at ``alpha1``). Returns the Figure."""
    import matplotlib.pyplot as plt

    if not isinstance(data, MemorisationData) or not isinstance(psi, PsiData):
        raise TypeError("data must be a MemorisationData and psi a PsiData")
    if not isinstance(alpha_entry, dict) or "err_W2_reused_raw" not in alpha_entry:
        raise TypeError("alpha_entry must be a payoff_summary entry with raw-feature errors")
    A2S = list(_alpha2s(alpha2s))
    fig, ax = plt.subplot_mosaic([["move", "rows"], ["raw", "raw"]], figsize=(7.0, 8.6),
                                 height_ratios=[1.15, 1])
    axes = [ax["move"], ax["rows"], ax["raw"]]
    for b in ("fresh", "reused"):
        axes[0].scatter(data.move[b], data.memo[b], s=4, alpha=0.5, color=COLORS[b],
                        label=f"{b} batch", rasterized=True)
    axes[0].axhline(data.unrelated, color=COLORS["chance"], ls=":", lw=1.2,
                    label=r"unrelated $\sqrt{2\log n/d}$")
    axes[0].set(xscale="log", ylim=(0, 1.02),
                xlabel=r"move of neuron $i$, $\|w^{(2)}_i - w^{(1)}_i\|$",
                ylabel=r"$\max_j|\cos(w^{(2)}_i - w^{(1)}_i, x_j)|$", title="one problem, per neuron")
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), markerscale=3)

    for s in ("W1_total", "W2_fresh", "W2_reused"):
        errorbars(axes[1], psi.psis, psi.max_row["he1"][s], psi.max_row_sem["he1"][s],
                  color=SCHEME_STYLE[s][1], label=SCHEME_STYLE[s][0])
    axes[1].axhline(1, color=COLORS["chance"], ls=":", lw=1.2, label=r"initial rows ($\approx 1$)")
    axes[1].set(xscale="log", yscale="log", xlabel=r"$\psi = n/d$",
                ylabel=r"largest row norm $\max_i\|w_i\|$", title=r"$\mathrm{He}_1$, across $\psi$")
    axes[1].set_xticks(psi.psis, [f"{p:g}" for p in psi.psis])
    axes[1].minorticks_off()
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2))

    e = alpha_entry
    xr3 = [A2S[0] - 0.02, A2S[-1] + 0.02]
    _hline(axes[2], xr3, e["best_linear"], 0, "k", ls=":", label="best linear predictor")
    _hline(axes[2], xr3, e["err_linear"], e["err_linear_sem"], "0.3", ls="-.",
           label="linear ridge on $x$")
    _hline(axes[2], xr3, e["err_W0"], e["err_W0_sem"], SCHEME_STYLE["W0"][1],
           label="0 steps (standardised)")
    for s in ("W1", "W2_fresh", "W2_reused"):
        for suffix, ls, mfc in (("", "-", None), ("_raw", "--", "white")):
            y, sem = e[f"err_{s}{suffix}"], e[f"err_{s}{suffix}_sem"]
            if np.ndim(y) == 0:
                y, sem = [y] * len(A2S), [sem] * len(A2S)
            errorbars(axes[2], A2S, y, sem, color=SCHEME_STYLE[s][1], ls=ls, mfc=mfc)
    for s in ("W1", "W2_fresh", "W2_reused"):
        axes[2].plot([], [], color=SCHEME_STYLE[s][1], marker="o", ls="none", label=SCHEME_STYLE[s][0])
    axes[2].plot([], [], color="0.3", ls="-", marker="o", ms=4, label="standardised features")
    axes[2].plot([], [], color="0.3", ls="--", marker="o", ms=4, mfc="white", label="raw features")
    axes[2].set(xlim=xr3, ylim=(-0.02, 1.08), xlabel=rf"$\alpha_2$ ($\alpha_1 = {alpha1}$)",
                ylabel=r"test error / $\overline{y^2}$", title=r"$\mathrm{He}_1$: raw vs standardised")
    axes[2].legend(loc="center left", bbox_to_anchor=(1.02, 0.5))
    return fig


def memorisation_table(data: MemorisationData, psi: PsiData, memo_cut: float = 0.5,
                       top_frac: float = 0.01) -> tuple:
    r"""Reused against fresh second step, neuron by neuron and across :math:`\psi`:
    median and largest move, the share of the squared movement carried by the top
    ``top_frac`` of neurons, median largest cosine, fraction with cosine above
    ``memo_cut``, largest over median feature scale (these of the one problem of ``data``),
    and the largest row norm of :math:`W_2` at each :math:`\psi` (:math:`\mathrm{He}_1`,
    mean ± standard error over the seeds of ``psi``). Returns ``(header, rows, numbers)``;
    ``numbers`` holds the feature-scale ratios the text quotes."""
    if not isinstance(data, MemorisationData) or not isinstance(psi, PsiData):
        raise TypeError("data must be a MemorisationData and psi a PsiData")
    memo_cut = check_real(memo_cut, "memo_cut", low=0.0, high=1.0)
    top_frac = check_real(top_frac, "top_frac", low=0.0, high=1.0, low_open=True)
    bs = ("reused", "fresh")
    k = max(1, int(round(top_frac * data.move["reused"].size)))

    def share(b):
        sq = np.sort(data.move[b] ** 2)[::-1]
        return sq[:k].sum() / sq.sum()

    ratio = {b: data.scale[b].max() / np.median(data.scale[b]) for b in bs}
    rows = [["median move $\\|w^{(2)}_i - w^{(1)}_i\\|$"] + [f"{np.median(data.move[b]):.2f}" for b in bs],
            ["largest move"] + [f"{data.move[b].max():.1f}" for b in bs],
            [f"share of the squared movement in the top {top_frac:.0%} of neurons"]
            + [f"{share(b):.0%}" for b in bs],
            [f"median largest cosine with one input (unrelated: {data.unrelated:.2f})"]
            + [f"{np.median(data.memo[b]):.2f}" for b in bs],
            [f"neurons with cosine above {memo_cut:g}"]
            + [f"{np.mean(data.memo[b] > memo_cut):.0%}" for b in bs],
            ["largest / median feature scale on fresh inputs"]
            + [sci(ratio[b], 2) if ratio[b] >= 1000 else f"{ratio[b]:.0f}" for b in bs]]
    key = {"reused": "W2_reused", "fresh": "W2_fresh"}
    rows += [[f"largest row norm of $W_2$, $\\psi = {p:g}$"]
             + [f"{psi.max_row['he1'][key[b]][j]:.1f} ± {psi.max_row_sem['he1'][key[b]][j]:.1f}"
                for b in bs]
             for j, p in enumerate(psi.psis)]
    numbers = dict(feat_ratio_re_txt=sci(ratio["reused"], 2), feat_ratio_fr=ratio["fresh"])
    return ["", "reused batch", "fresh batch"], rows, numbers


def raw_table(alpha_summary: dict, alpha1: float, alpha2s, L: int) -> tuple:
    r"""Test error with raw and with standardised features per :math:`\alpha_2` at
    ``alpha1``: the reused and the fresh second step for :math:`\mathrm{He}_1`, and the
    reused one with raw features for the two-index target (means over the seeds). Returns
    ``(header, rows, numbers)``; ``numbers``: ``max_sem``, the largest standard error over
    the seeds of an entry, and ``max_sem_txt``, the same for a caption (:func:`_sig`)."""
    S1 = _check_summary(alpha_summary, "alpha_summary")
    alpha1 = check_alpha(alpha1, "alpha1")
    A2S = list(_alpha2s(alpha2s))
    L = check_int(L, "L", 1)
    e, m = S1["he1", alpha1], S1["he1+odd", alpha1]
    header = [r"$\alpha_2$", r"$\Lambda$", "reused, raw", "reused, std.", "fresh, raw",
              "fresh, std.", "He₁ + odd: reused, raw"]
    shown = ((e, "err_W2_reused_raw"), (e, "err_W2_reused"), (e, "err_W2_fresh_raw"),
             (e, "err_W2_fresh"), (m, "err_W2_reused_raw"))
    rows = [[f"{a2:g}", f"{n_spikes(alpha1, a2, L)}"] + [f"{x[k][i]:.3f}" for x, k in shown]
            for i, a2 in enumerate(A2S)]
    max_sem = float(max(np.max(x[k + "_sem"][:len(A2S)]) for x, k in shown))
    return header, rows, dict(max_sem=max_sem, max_sem_txt=sig(max_sem))


def parameter_table(N: int, c: float, alpha1s, alpha2s, ref, psis, L: int, n_train: int,
                    n_test: int, n_seeds: int, n_data_seeds: int, relative_lambdas) -> tuple:
    r"""Header and rows of the chapter's parameters: sizes, step sizes with the
    :math:`\Lambda(\alpha_1, \alpha_2)` they give (:func:`twostep.n_spikes`), batch ratios,
    readout data, penalty grid and seeds."""
    N, L = check_int(N, "N"), check_int(L, "L", 1)
    c = check_real(c, "c", low=0.0, low_open=True)
    alpha1s = [check_alpha(a, "alpha1") for a in alpha1s]
    alpha2s = list(_alpha2s(alpha2s))
    ref = tuple(check_alpha(a, "ref") for a in ref)
    if len(ref) != 2:
        raise ValueError("ref must be an (alpha1, alpha2) pair")
    psis = check_array(psis, "psis", ndim=1)
    grid = check_array(relative_lambdas, "relative_lambdas", ndim=1)
    fmt = lambda xs: ", ".join(f"{x:g}" for x in xs)
    rows = [["width and input dimension", f"$N = d = {N}$"],
            ["step sizes", rf"$\eta_t = \kappa\,N^{{\alpha_t}}$, $\kappa = {c:g}$"],
            [r"first-step exponents $\alpha_1$", fmt(alpha1s)],
            [r"second-step exponents $\alpha_2$", fmt(alpha2s)]]
    rows += [[rf"$\Lambda$ at $\alpha_1 = {a1:g}$", ", ".join(str(n_spikes(a1, a2, L)) for a2 in alpha2s)]
             for a1 in alpha1s]
    rows += [["reference setting", rf"$(\alpha_1, \alpha_2) = ({ref[0]:g}, {ref[1]:g})$, "
              rf"$\Lambda = {n_spikes(*ref, L)}$"],
             [r"batches $\psi = n/d$, across $\alpha_2$", "1"],
             [r"batches $\psi = n/d$, across $\psi$", f"{fmt(psis)} (reference setting)"],
             [r"readout: training, test samples", f"$n_{{\\mathrm{{tr}}}} = {check_int(n_train, 'n_train')}$, "
              f"$n_{{\\mathrm{{te}}}} = {check_int(n_test, 'n_test')}$"],
             [r"penalty grid $\lambda_0$", f"{grid.size} values, {sci(grid[0])} to {sci(grid[-1])}"],
             ["seeds per setting (networks; data only)",
              f"{check_int(n_seeds, 'n_seeds')}; {check_int(n_data_seeds, 'n_data_seeds')}"]]
    return ["parameter", "value"], rows
