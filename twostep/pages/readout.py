r"""What the learned features buy (chapter ``book/readout.md``): the five first layers of one
problem (:mod:`twostep.experiments.readout`) compared by the test error of a ridge readout and
by the ideal readout of the directions they learned (:mod:`twostep.analysis.readout`).

Summaries over seeds are :class:`twostep.analysis.summary.Summary` objects
(:func:`payoff_summary` and the functions built on it). Each figure has one compute and one
plot function (``ideal_data`` / ``plot_ideal``, ...), which returns the closed Figure; each
table a ``*_table`` function returning ``(header, rows)`` for
:func:`twostep.pages.report.markdown_table`, or ``(header, rows, numbers)`` with the numbers
the text quotes where it quotes some.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from scipy.special import erfc

from ..analysis.alignment import chance_maximum
from ..analysis.population import PopulationSignal, population_signal
from ..analysis.readout import asymptotic_ideal, explained_fraction, feature_scale, features
from ..analysis.summary import Summary
from ..analysis.sweep import rng_for, split_batches, sweep
from ..analysis.theory import n_spikes
from ..experiments.readout import (SCHEMES, SECOND_STEP_SCHEMES, neuron_memorisation,
                                   train_schemes)
from ..experiments.reuse import signal_overlap_experiment
from ..model.network import gaussian_inputs
from .figures import (COLORS, TARGET_LABELS, chance_line, errorbars, finished, legend_below,
                      legend_from, ticks_at, width_axis)
from .report import cell, pm, sci, sig

#: Label and colour of each first layer in the chapter's figures.
SCHEME_STYLE = {
    "W0": dict(label="0 steps (random features)", color="0.5"),
    "W1": dict(label=r"1 step ($\eta_1$)", color=COLORS["one-step"]),
    "W1_total": dict(label=r"1 step of size $\eta_1+\eta_2$", color="#d68910"),
    "W2_reused": dict(label="2 steps, reused batch", color=COLORS["reused"]),
    "W2_fresh": dict(label="2 steps, fresh batch", color=COLORS["fresh"]),
}

#: Markers of the trained first layers in the figures against n/d: each its own shape, the
#: later ones open, so that two schemes with the same test error both show.
SCHEME_MARKS = {"W1": {"marker": "o", "ms": 4}, "W1_total": {"marker": "s", "ms": 6, "mfc": "none"},
                "W2_reused": {"marker": "^", "ms": 6, "mfc": "none"},
                "W2_fresh": {"marker": "D", "ms": 5, "mfc": "none"}}
#: Marker sizes in the scatter of test errors: concentric open rings where points coincide.
SCATTER_SIZES = {"W0": 3.0, "W1": 4.0, "W1_total": 5.5, "W2_fresh": 7.0, "W2_reused": 8.5}

#: Paired differences of test errors, ``name: (minuend, subtrahend, title)``: scheme names, and
#: the difference's column title in the tables.
PAIRED_DIFFERENCES = {"d_total_W1": ("W1_total", "W1", r"$\eta_1{+}\eta_2$ − 1 step"),
                      "d_fresh_total": ("W2_fresh", "W1_total", r"fresh − $\eta_1{+}\eta_2$"),
                      "d_reused_total": ("W2_reused", "W1_total", r"reused − $\eta_1{+}\eta_2$"),
                      "d_reused_fresh": ("W2_reused", "W2_fresh", "reused − fresh")}

# Targets drawn in the test-error figures: the odd bounded one is at 1 throughout.
_PLOTTED = ("he1", "he1+odd")
_PLAIN = {"he1": "He₁", "odd": "odd", "he1+odd": "He₁ + odd"}
#: The two reuse penalties of the tables and figures against the configuration and the width.
_PENALTIES = ("d_reused_fresh", "d_reused_total")
#: Short column names of the first layers in the narrow tables.
_SHORT = {"W0": "0 steps", "W1": "1 step", "W1_total": r"$\eta_1+\eta_2$",
          "W2_reused": "reused", "W2_fresh": "fresh"}



# -- Summaries over seeds -----------------------------------------------------------------

def payoff_summary(records, by) -> Summary:
    r"""Means and standard errors over seeds of :func:`payoff_experiment` records, grouped by
    ``by`` (e.g. ``("target", "alpha1")``).

    First adds to every record, in place, the paired differences of
    :data:`PAIRED_DIFFERENCES` (``d_reused_total = err_W2_reused - err_W1_total`` and so on,
    problem by problem), then summarises every error, ideal error, largest row norm, edge flag,
    overlap and difference, the raw-feature errors of the groups whose records hold them (runs
    with ``"raw"`` among their ``scalings``), and the ideal errors of the measured directions
    (``ideal_svd_*``) where the records hold them.
    """
    for r in records:
        for name, (a, b, _) in PAIRED_DIFFERENCES.items():
            r[name] = r[f"err_{a}"] - r[f"err_{b}"]
    values = ([f"{k}_{s}" for k in ("err", "ideal", "max_row", "edge") for s in SCHEMES]
              + ["err_linear", "best_linear", "overlap_v", "overlap_u_reused", "overlap_u_fresh"]
              + list(PAIRED_DIFFERENCES) + [k for k in records[0] if k.startswith("ideal_svd_")])
    out = Summary(records, by, values)
    # Raw features are fitted only where the chapter shows them (a sweep passes scalings per
    # point), so they are summarised over the records that hold them: all of a group's or none.
    held = Summary([r for r in records if "err_W0_raw" in r], by, [f"err_{s}_raw" for s in SCHEMES])
    for key, e in held.groups.items():
        if e["count"] != out.groups[key]["count"]:
            raise ValueError(f"group {key} holds raw-feature errors for {e['count']} of its "
                             f"{out.groups[key]['count']} records")
        out.groups[key].update({k: v for k, v in e.items() if k not in out.by and k != "count"})
    return out


def at_alpha2(record: dict, i: int = 0) -> dict:
    r"""A :func:`payoff_experiment` record at its ``alpha2s[i]``: every entry of a second-step
    scheme (``err_W2_fresh``, ``max_row_W1_total``, ...) becomes its ``i``-th value, a float."""
    return {k: (v[i] if any(s in k for s in SECOND_STEP_SCHEMES) and np.ndim(v) == 1 else v)
            for k, v in record.items()}


def shared_reference(records, base: dict) -> list:
    r"""The runs of ``records`` (an :math:`\alpha_2` sweep of :func:`payoff_experiment`) that are
    the configuration ``base`` itself: every keyword of ``base`` the same but ``alpha2s`` (and
    ``scalings``), ``base``'s single :math:`\alpha_2` among the sweep's. Each is returned at that
    :math:`\alpha_2` (:func:`at_alpha2`): a run of ``base`` at the same seed would repeat it draw
    for draw (the draws do not depend on :math:`\alpha_2`), so it stands for ``base``'s runs."""
    (alpha2,) = base["alpha2s"]
    same = [at_alpha2(r, list(r["alpha2s"]).index(alpha2)) for r in records
            if alpha2 in r["alpha2s"] and all(r.get(k) == v for k, v in base.items()
                                               if k not in ("alpha2s", "scalings"))]
    if not same:
        raise ValueError(f"records hold no run of the configuration {base!r}")
    return same


def psi_summary(psi_records, alpha_records, alpha1: float, alpha2: float) -> Summary:
    r""":func:`payoff_summary` of the :math:`n/d` sweep by ``("target", "n")``, at its single
    :math:`\alpha_2` (:func:`at_alpha2`). ``psi_records`` are the runs at :math:`n \ne d`; the
    :math:`n = d` runs are those of the :math:`\alpha_2` sweep (``alpha_records``) at
    ``alpha1`` and ``alpha2``, so both figures share them.
    """
    same = [r for r in alpha_records if r["alpha1"] == alpha1]
    i = list(same[0]["alpha2s"]).index(alpha2)
    return payoff_summary([at_alpha2(r) for r in psi_records] + [at_alpha2(r, i) for r in same],
                          by=["target", "n"])


# -- What the spectral picture predicts (fig-ro-ideal) ------------------------------------

@dataclass
class IdealData:
    r"""Data of the ideal-readout figure.

    ``rho`` ``(m,)``; ``explained[target]`` ``(m,)``: :func:`explained_fraction` on ``rho``;
    ``u2`` the overlaps :math:`|\langle u_2, \beta^*\rangle|` of the draws (a :class:`Summary`
    by ``("batch", "n")`` of the value ``overlaps``, index ``(0, 0)``); ``sizes`` the
    :math:`n = d` measured; ``band`` the smallest and largest reused mean; ``d`` the dimension
    of the chance line :math:`1/\sqrt d`; ``signal`` the theory of the reused :math:`u_2` of
    the odd bounded link at :math:`n = d` (:func:`twostep.population_signal`).
    """

    rho: np.ndarray
    explained: dict
    u2: Summary
    sizes: tuple
    band: tuple
    d: int
    signal: PopulationSignal


def u2_records(sizes, seeds, n_jobs: int = 1) -> list:
    r""":func:`twostep.signal_overlap_experiment` of the odd bounded link at :math:`n = d` =
    each of ``sizes``, :math:`u_2` only, one record per batch scheme (``batch`` ``"reused"``
    and ``"fresh"``). Both schemes come from one task per size and seed (``batch="both"``,
    each record bit for bit its scheme's own run), which draws the first batch once; the
    largest sizes start first."""
    tasks = [dict(n=m, d=m, target="odd", batch="both", ks=(2,)) for m in sizes]
    return split_batches(sweep(signal_overlap_experiment, tasks, seeds=seeds, n_jobs=n_jobs,
                               cost=lambda p: p["n"]), ("reused", "fresh"))


def ideal_data(teachers: dict, u2_records, d: int) -> IdealData:
    r"""Ideal readout of one direction against its overlap, and the measured :math:`u_2`.

    ``teachers`` maps target names (``he1``, ``odd``, ``he3``) to single-index teachers;
    ``u2_records`` are :func:`twostep.signal_overlap_experiment` records of the odd bounded
    link with keys ``n``, ``batch`` and ``overlaps`` (``(1, 1)``: :math:`u_2` against
    :math:`\beta^*`). The overlaps ``rho`` are 200 points from 0.02 to 1, log-spaced.
    """
    rho = np.geomspace(0.02, 1, 200)
    u2 = Summary(u2_records, by=["batch", "n"], values=["overlaps"])
    sizes, reused, _ = u2.series("overlaps", (0, 0), batch="reused")
    return IdealData(rho, {t: explained_fraction(teachers[t], rho) for t in teachers}, u2,
                     tuple(int(m) for m in sizes), (reused.min(), reused.max()), d,
                     population_signal("odd", 1.0, 2, "reused"))


def plot_ideal(data: IdealData):
    r"""Fraction explained against overlap (log-log) with :math:`\rho^2`, :math:`\rho^6`,
    the band of the measured reuse :math:`u_2` and the chance overlap."""
    fig, ax = plt.subplots(figsize=(5.0, 4.6))
    for t, label, color in (("he1", r"$\mathrm{He}_1$ (IE 1)", COLORS["one-step"]),
                            ("odd", "odd bounded (IE 3)", "#d68910"),
                            ("he3", r"$\mathrm{He}_3/\sqrt{6}$ (IE 3)", "#1e8449")):
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
    return finished(fig)


def u2_table(data: IdealData, teachers: dict, shared_seeds, target_frac: float = 0.1) -> tuple:
    r"""The :math:`u_2` table, one column per :math:`n = d` (so that it fits a text column):
    the mean overlap ± standard error of the reused and the fresh :math:`u_2` (odd bounded
    link), chance :math:`1/\sqrt d`, the theory's mean overlap under reuse, and the fraction
    an ideal readout of a direction with the reused overlap explains for each target in
    ``teachers``. The numbers: ``c3_odd``; the mean ± sem of the reused :math:`u_2` at the
    largest :math:`n` over the draws with seeds ``shared_seeds``: their number ``n_shared``,
    and the largest distance of it or of the figure's estimate from the theory in its
    standard errors (``u2_nmax_maxz``); the top of the band, ``rho_hi``, and the odd link's
    fraction explained there; the overlap ``rho10_<t>`` at which an ideal readout explains
    ``target_frac``."""
    names = {"odd": "odd bounded", "he3": r"$\mathrm{He}_3$", "he1": r"$\mathrm{He}_1$"}
    header = ["$n = d$"] + [f"{m}" for m in data.sizes]
    ov = lambda b: [cell(data.u2, "overlaps", (0, 0), batch=b, n=m) for m in data.sizes]
    rows = [[r"overlap of $u_2$, reused"] + ov("reused"),
            [r"overlap of $u_2$, fresh"] + ov("fresh"),
            [r"chance $1/\sqrt d$"] + [f"{1 / np.sqrt(m):.3f}" for m in data.sizes],
            ["theory's mean, reused"]
            + [f"{data.signal.expected_overlaps(m)[0]:.3f}" for m in data.sizes]]
    reused = data.u2.series("overlaps", (0, 0), batch="reused")[1]
    rows += [[f"explained, {names.get(t, t)}"]
             + [sci(explained_fraction(teachers[t], x), 2) for x in reused] for t in teachers]
    n_max = data.sizes[-1]
    top = dict(batch="reused", n=n_max)
    shared = np.array([r["overlaps"][0, 0] for r in data.u2.runs(**top)
                       if r["seed"] in shared_seeds])
    shared_sem = shared.std(ddof=1) / np.sqrt(len(shared))
    th = data.signal.expected_overlaps(n_max)[0]
    mean = data.u2.at("overlaps", (0, 0), **top)
    sem = data.u2.at("overlaps", (0, 0), sem=True, **top)
    hi = data.band[1]
    out = dict(n_shared=len(shared), u2_nmax=n_max, n_data_seeds=data.u2.count(**top),
               u2_nmax_maxz=max(abs(shared.mean() - th) / shared_sem, abs(mean - th) / sem),
               c3_odd=teachers["odd"].links[0].coefficients[3], rho_hi=hi,
               target_frac=target_frac, odd_at_hi_1=sci(explained_fraction(teachers["odd"], hi)))
    for t in ("odd", "he3"):
        out[f"rho10_{t}"] = float(np.interp(target_frac, data.explained[t], data.rho))
    return header, rows, out


# -- Test error across (alpha1, alpha2) (fig-ro-alpha) ------------------------------------

def _hline(ax, x, mean, sem, color, ls="-", label=None, lw=1.4):
    ax.plot(x, [mean] * len(x), color=color, ls=ls, lw=lw, label=label)
    if sem:
        ax.fill_between(x, mean - sem, mean + sem, color=color, alpha=0.15, lw=0)


def _baselines(ax, x, e, labels=True):
    """The best linear predictor, ridge on :math:`x` and random features of the summary
    entry ``e``, as horizontal lines (with their standard errors as bands) over ``x``."""
    _hline(ax, x, e["best_linear"], 0, "k", ls=":",
           label="best linear predictor (population)" if labels else None)
    _hline(ax, x, e["err_linear"], e["err_linear_sem"], "0.3", ls="-.",
           label="linear ridge on $x$" if labels else None)
    _hline(ax, x, e["err_W0"], e["err_W0_sem"], SCHEME_STYLE["W0"]["color"],
           label=SCHEME_STYLE["W0"]["label"] if labels else None)


def _offscale(ax, value, label, color):
    """Name a horizontal baseline that lies outside the panel's y-range at the edge it leaves by."""
    lo, hi = ax.get_ylim()
    if lo <= value <= hi:
        return
    y, va, arrow = (hi, "top", r"$\uparrow$") if value > hi else (lo, "bottom", r"$\downarrow$")
    ax.annotate(f"{arrow} {label}: {value:.2f}", (0.02, y), xycoords=("axes fraction", "data"),
                xytext=(0, -3 if va == "top" else 3), textcoords="offset points", va=va,
                fontsize=9, color=color)


def _row_norms(ax, x, summary: Summary, title: str, **point):
    """The largest row norm of the trained first layers against ``x`` (log-log): the series
    ``max_row_*`` of ``summary`` along its axis (``point`` fixes the rest), and the level 1
    of the initial rows."""
    for s in ("W1_total", "W2_fresh", "W2_reused"):
        errorbars(ax, x, *summary.series(f"max_row_{s}", **point)[1:], **SCHEME_STYLE[s])
    chance_line(ax, 1, r"initial rows ($\approx 1$)")
    ax.set(xscale="log", yscale="log", ylabel=r"largest row norm $\max_i\|w_i\|$", title=title)


def plot_alpha(summary: Summary, alpha1s, alpha2s, L: int):
    r"""Test error against :math:`\alpha_2`, one row per :math:`\alpha_1`, columns
    :math:`\mathrm{He}_1` and the two-index target, with the ideal readouts (dashed),
    the baselines, the phase boundaries :math:`\alpha_2 = k(1/2-\alpha_1)`, :math:`k < L`,
    and :math:`\Lambda` on the top axis. ``summary``: :func:`payoff_summary` by
    ``(target, alpha1)``."""
    A2S = list(alpha2s)
    fig, axes = plt.subplots(len(alpha1s), len(_PLOTTED), figsize=(7.0, 7.6), sharex=True,
                             squeeze=False)
    xr = [A2S[0] - 0.03, A2S[-1] + 0.03]
    for col, t in enumerate(_PLOTTED):
        # One y-range per column: all of [0, 0 steps] for He_1; a zoom on the curves for the
        # two-index target, whose curves lie within a few hundredths of one another.
        if t == "he1":
            ylim = (-0.02, 0.9)
        else:
            keys = ([f"err_{s}" for s in SCHEMES if s != "W0"] + ["err_linear"]
                    + [f"ideal_{s}" for s in SCHEMES if s != "W0"])
            vals = np.concatenate([np.ravel(summary.at(k, target=t, alpha1=a1))
                                   for a1 in alpha1s for k in keys])
            ylim = (vals.min() - 0.015, vals.max() + 0.015)
        for row, a1 in enumerate(alpha1s):
            ax, e = axes[row, col], summary.entry(target=t, alpha1=a1)
            ax.set(xlim=xr, ylim=ylim)
            _baselines(ax, xr, e)
            _hline(ax, xr, e["err_W1"], e["err_W1_sem"], **SCHEME_STYLE["W1"])
            _hline(ax, xr, e["ideal_W1"], 0, SCHEME_STYLE["W1"]["color"], ls="--", lw=1, label=None)
            for s in SECOND_STEP_SCHEMES:
                errorbars(ax, A2S, e[f"err_{s}"], e[f"err_{s}_sem"], **SCHEME_STYLE[s])
                if s != "W1_total":
                    ax.plot(A2S, e[f"ideal_{s}"], color=SCHEME_STYLE[s]["color"], ls="--", lw=1,
                            marker="x", ms=5)
            _offscale(ax, e["best_linear"], "best linear", "k")
            _offscale(ax, e["err_W0"], "0 steps", SCHEME_STYLE["W0"]["color"])
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
    return finished(fig)


def paired_table(summary: Summary, alpha1s, alpha2s, L: int, columns) -> tuple:
    r"""Header and rows of the paired differences of test error (mean ± standard error over
    seeds) for the targets with a learnable part, per :math:`(\alpha_1, \alpha_2)`.
    ``columns``: the differences shown, names of :data:`PAIRED_DIFFERENCES` (two at a time
    fit a text column)."""
    header = [*("target", r"$\alpha_1$", r"$\alpha_2$", r"$\Lambda$"),
              *(PAIRED_DIFFERENCES[k][2] for k in columns)]
    return header, [[_PLAIN[t], f"{a1:g}", f"{a2:g}", f"{n_spikes(a1, a2, L)}"]
                    + [cell(summary, k, i, signed=True, target=t, alpha1=a1) for k in columns]
                    for t in _PLOTTED for a1 in alpha1s for i, a2 in enumerate(alpha2s)]


def alpha_numbers(summary: Summary, alpha1s, alpha2s, ref, L: int) -> dict:
    r"""The numbers the text quotes about the :math:`\alpha_2` sweep (``summary``:
    :func:`payoff_summary` by ``(target, alpha1)``).

    Errors and ideal errors at ``alpha1 = ref[0]`` (``h4_*`` for :math:`\mathrm{He}_1`,
    ``m4_*`` for the two-index target, ``_ref`` at ``alpha2 = ref[1]``), the range of the
    extra-step-size difference over all learnable settings (``tw_*``: how many, how many
    significantly worse or better), the largest paired difference and distance from the zero
    predictor for the odd target (``odd_spread``, ``odd_vs_zero``, from the single problems),
    the odd target's share of fits at the largest penalty (``odd_edges``),
    overlaps of :math:`v_1` and :math:`u_2` (``ov_*``), and :math:`\Lambda` at ``alpha1s[0]``
    and ``alpha2 = ref[1]`` (``lam_ref_lo``).
    """
    at, i = summary.at, list(alpha2s).index(ref[1])
    h, m = dict(target="he1", alpha1=ref[0]), dict(target="he1+odd", alpha1=ref[0])
    g = dict(h4_W0=at("err_W0", **h), h4_W1=at("err_W1", **h),
             h3_W1=at("err_W1", target="he1", alpha1=alpha1s[0]),
             h4_ideal_W1=at("ideal_W1", **h), h4_linear=at("err_linear", **h),
             h4_W2_fresh_ref=at("err_W2_fresh", i, **h),
             h4_ideal_W2_fresh_ref=at("ideal_W2_fresh", i, **h),
             h4_ideal_W2_reused_ref=at("ideal_W2_reused", i, **h),
             m4_linear=at("err_linear", **m), m4_ideal_W1=at("ideal_W1", **m),
             m4_ideal_W2_fresh_ref=at("ideal_W2_fresh", i, **m),
             m_best_linear=at("best_linear", **m),
             ov_v_h=at("overlap_v", 0, **h), ov_u2_fr_h=at("overlap_u_fresh", (1, 0), **h),
             ov_u2_re_h=at("overlap_u_reused", (1, 0), **h),
             ov_u2_fr_m=at("overlap_u_fresh", (1, 1), **m),
             ov_u2_re_m=at("overlap_u_reused", (1, 1), **m),
             lam_ref_lo=n_spikes(alpha1s[0], alpha2s[i], L))
    odd = summary.runs(target="odd")
    g["odd_spread"] = max(np.max(np.abs(r[k])) for r in odd for k in PAIRED_DIFFERENCES)
    g["odd_vs_zero"] = max(np.max(np.abs(r[f"err_{s}"] - 1)) for r in odd for s in SCHEMES)
    g["odd_edges"] = np.mean(np.concatenate([np.ravel(r[f"edge_{s}"]) == 1
                                             for r in odd for s in SCHEMES]))
    g["min_reused_total"] = min(np.min(r["d_reused_total"]) for r in summary.records
                                if r["target"] != "odd")
    points = [dict(target=t, alpha1=a1) for t in _PLOTTED for a1 in alpha1s]
    g["min_reused_total_mean"] = min(np.min(at("d_reused_total", **p)) for p in points)
    tw = [(at("d_total_W1", j, **p), at("d_total_W1", j, sem=True, **p))
          for p in points for j in range(len(alpha2s))]
    g.update(tw_n=len(tw), tw_n_sig_worse=sum(x > 2 * se for x, se in tw),
             tw_n_sig_better=sum(x < -2 * se for x, se in tw))
    return g


def u2_consistency(summary: Summary, data: IdealData, more_records, teacher,
                   alpha1: float, d: int) -> tuple:
    r"""Estimates of the reused :math:`u_2` overlap of the odd target at :math:`n = d`.

    The problems of the :math:`\alpha_2` sweep at ``alpha1`` (``summary``), the draws of the
    ideal-readout figure (``data``) and further draws ``more_records``
    (:func:`twostep.signal_overlap_experiment`), next to the theory's mean at this
    :math:`n` and its large-:math:`n` limit: a table with one row per estimate (draws, mean ±
    sem, distance from the further draws' mean in standard errors of a mean of that many
    draws, the fraction an ideal readout of such a direction explains for ``teacher``) and
    the numbers ``u2_gap_z``, the first two estimates' difference in combined standard
    errors; ``ov_u2_re_o``, the first estimate; ``u2_p_here``, the two-sided Gaussian
    probability of a deviation as large as the first estimate's.
    """
    odd, drawn = dict(target="odd", alpha1=alpha1), dict(batch="reused", n=d)
    here, n_here = summary.at("overlap_u_reused", (1, 0), **odd), summary.count(**odd)
    here_sem = summary.at("overlap_u_reused", (1, 0), sem=True, **odd)
    fig, n_fig = data.u2.at("overlaps", (0, 0), **drawn), data.u2.count(**drawn)
    fig_sem = data.u2.at("overlaps", (0, 0), sem=True, **drawn)
    more = np.array([r["overlaps"][0, 0] for r in more_records])
    mean, sd = more.mean(), more.std(ddof=1)
    theory, limit = data.signal.expected_overlaps(d)[0], data.signal.overlaps[0]
    z = lambda x, k: (x - mean) / (sd / np.sqrt(k))
    frac = lambda x: sci(explained_fraction(teacher, x))
    header = ["estimate", "draws", "overlap", "distance", "explained"]
    rows = [[label, f"{k}", pm(x, se, 3), f"{z(x, k):+.1f}", frac(x)]
            for label, x, se, k in (("the test-error runs' problems", here, here_sem, n_here),
                                    ("draws of the ideal-readout figure", fig, fig_sem, n_fig))]
    rows += [["further draws", f"{len(more)}", pm(mean, sd / np.sqrt(len(more)), 3), "",
              frac(mean)],
             [f"theory, mean at $n = d = {d}$", "", f"{theory:.3f}", "", frac(theory)],
             ["theory, large-$n$ limit", "", f"{limit:.3f}", "", frac(limit)]]
    numbers = dict(u2_gap_z=(fig - here) / np.hypot(fig_sem, here_sem), ov_u2_re_o=here,
                   u2_p_here=float(erfc(abs(here - mean) / (sd / np.sqrt(n_here)) / np.sqrt(2))))
    return header, rows, numbers


# -- Does the spectral picture predict the test error? (fig-ro-scatter) -------------------

def scatter_points(alpha_summary: Summary, psi_summary: Summary, d: int) -> list:
    r"""Every (setting, first layer) of both sweeps as ``(target, scheme, ideal, measured,
    measured_sem)``: the one-step layer and the second-step schemes of each
    :math:`(\alpha_1, \alpha_2)`, then those of each :math:`n \ne d` (the :math:`n = d`
    runs of ``psi_summary`` are already in ``alpha_summary``)."""
    points = []
    for (t, _), e in alpha_summary.groups.items():
        for s in ("W1",) + SECOND_STEP_SCHEMES:
            points += [(t, s, x, y, se) for x, y, se in
                       zip(*(np.atleast_1d(e[k]) for k in (f"ideal_{s}", f"err_{s}", f"err_{s}_sem")))]
    for (t, n), e in psi_summary.groups.items():
        if n != d:
            points += [(t, s, e[f"ideal_{s}"], e[f"err_{s}"], e[f"err_{s}_sem"])
                       for s in ("W1",) + SECOND_STEP_SCHEMES]
    return points


def plot_scatter(points):
    r"""Measured test error against the ideal readout of the learned directions, one
    point per (setting, first layer), with the diagonal."""
    markers = {"he1": "o", "odd": "s", "he1+odd": "^"}
    fig, ax = plt.subplots(figsize=(5.0, 4.8))
    # Open markers, one size per first layer: where the layers' errors coincide (the odd
    # target, which none of them learns) they show as concentric rings.
    for t, s, x, y, sem in points:
        ax.errorbar(x, y, yerr=sem, color=SCHEME_STYLE[s]["color"], marker=markers[t],
                    ms=SCATTER_SIZES[s], capsize=2, ls="none", mfc="none", alpha=0.85)
    diagonal = dict(color=COLORS["theory"], lw=1, ls="--")
    ax.plot([0, 1.1], [0, 1.1], **diagonal)
    ax.set(xlim=(0.1, 1.08), ylim=(0.1, 1.08),
           xlabel=r"ideal readout of the learned directions, $\mathcal{E}/\mathbb{E}[y^2]$",
           ylabel=r"measured test error / $\overline{y^2}$")
    legend_from(ax, [("measured = ideal", diagonal)]
                + [(SCHEME_STYLE[s]["label"], dict(color=SCHEME_STYLE[s]["color"], marker="o",
                                                  mfc="none", ms=SCATTER_SIZES[s], ls="none"))
                   for s in ("W1", "W1_total", "W2_fresh", "W2_reused")]
                + [(TARGET_LABELS[t], dict(marker=markers[t], mfc="none", ls="none"))
                   for t in markers], loc="upper left")
    return finished(fig)


def residual_table(points) -> tuple:
    r"""Measured minus ideal error for the targets with a learnable part, per first layer:
    rows ``[layer, settings, mean, min, max]``; the numbers ``n_points``, ``res_gap`` (reused
    minus :math:`\eta_1+\eta_2` mean offset), ``res_fresh_maxabs``, ``corr_fresh``
    (correlation of ideal and measured for the fresh step)."""
    resid = {s: np.array([y - x for t, s2, x, y, _ in points if s2 == s and t != "odd"])
             for s in SCHEMES if s != "W0"}
    fresh = [(x, y) for t, s, x, y, _ in points if s == "W2_fresh" and t != "odd"]
    header = ["first layer", "settings", "mean", "smallest", "largest"]
    rows = [[SCHEME_STYLE[s]["label"], f"{r.size}", f"{r.mean():+.3f}", f"{r.min():+.3f}",
             f"{r.max():+.3f}"] for s, r in resid.items()]
    numbers = dict(n_points=len(points), res_fresh_maxabs=np.abs(resid["W2_fresh"]).max(),
                   res_gap=resid["W2_reused"].mean() - resid["W1_total"].mean(),
                   corr_fresh=np.corrcoef(*np.array(fresh).T)[0, 1])
    return header, rows, numbers


# -- Test error against n/d (fig-ro-psi) --------------------------------------------------

@dataclass
class PsiData:
    r"""Data of the :math:`n/d` figure: ``summary`` (:func:`psi_summary`, by
    ``("target", "n")``) and ``d``; ``psis`` ``(m,)`` its ratios :math:`n/d`; for each target
    drawn, ``ideal_v1[t]`` and ``ideal_merged[t]`` ``(len(psi_fine),)``:
    :func:`asymptotic_ideal` of :math:`v_1` and of :math:`\eta_1v_1+\eta_2v_2` (``etas``)."""

    summary: Summary
    d: int
    psis: np.ndarray
    psi_fine: np.ndarray
    etas: tuple
    ideal_v1: dict
    ideal_merged: dict


def psi_data(summary: Summary, teachers: dict, d: int, etas) -> PsiData:
    r"""The :math:`n/d` sweep (``summary`` from :func:`psi_summary`) of the targets in
    ``teachers`` and their asymptotic ideal curves for the step sizes ``etas = (eta1, eta2)``
    at 80 log-spaced ``psi_fine`` from 0.85 min(psis) to 1.15 max(psis)."""
    psis = np.array(summary.axis(target=next(iter(teachers)))) / d
    psi_fine = np.geomspace(psis[0] * 0.85, psis[-1] * 1.15, 80)
    return PsiData(summary, d, psis, psi_fine, tuple(etas),
                   {t: asymptotic_ideal(g, psi_fine) for t, g in teachers.items()},
                   {t: asymptotic_ideal(g, psi_fine, etas) for t, g in teachers.items()})


def plot_psi(data: PsiData):
    r"""Test error against :math:`\psi = n/d` for :math:`\mathrm{He}_1` and the two-index
    target, with the baselines and the asymptotic ideal curves."""
    fig, axes = plt.subplots(1, len(_PLOTTED), figsize=(7.0, 4.9), sharey=True, squeeze=False)
    for ax, t in zip(axes[0], _PLOTTED):
        x = data.psi_fine
        _baselines(ax, x, data.summary.entry(target=t, n=data.d))
        for s in ("W1",) + SECOND_STEP_SCHEMES:
            errorbars(ax, data.psis, *data.summary.series(f"err_{s}", target=t)[1:],
                      **SCHEME_STYLE[s], **SCHEME_MARKS[s])
        ax.plot(x, data.ideal_v1[t], color=SCHEME_STYLE["W1"]["color"], ls="--", lw=1,
                label=r"ideal, $v_1$ (large-$n$ overlap)")
        ax.plot(x, data.ideal_merged[t], color=SCHEME_STYLE["W2_fresh"]["color"], ls="--", lw=1,
                label=r"ideal, $\eta_1v_1+\eta_2v_2$ (large-$n$ overlap)")
        ax.set(xscale="log", xlabel=r"$\psi = n/d$ of the gradient steps", ylim=(-0.02, 1.1),
               title=TARGET_LABELS[t])
        ticks_at(ax.xaxis, data.psis)
    axes[0, 0].set_ylabel(r"test error / $\overline{y^2}$")
    legend_below(fig, axes[0, 0], ncol=2)
    return finished(fig)


def psi_table(data: PsiData, teachers: dict) -> tuple:
    r"""Per :math:`\psi`: for :math:`\mathrm{He}_1`, one step and its asymptotic ideal, the
    fresh second step and the ideal of the merged spike, the paired excess of the reused
    second step over one step of the same total size; one step for the two-index target.
    The numbers: where the fresh step lies against its curve (``psi_fresh_cmp``) and its
    largest excess (``psi_fresh_excess``, ``_sem``, ``_at``)."""
    S = data.summary
    psis, ns = [float(p) for p in data.psis], S.axis(target="he1")
    v1 = [asymptotic_ideal(teachers["he1"], p) for p in psis]
    merged = [asymptotic_ideal(teachers["he1"], p, data.etas) for p in psis]
    one = S.series("err_W1", target="he1")[1]
    _, fresh, fresh_sem = S.series("err_W2_fresh", target="he1")
    header = [r"$\psi$", "1 step", r"ideal, $v_1$", "fresh", "ideal, merged",
              r"reused − $\eta_1{+}\eta_2$", "He₁ + odd, 1 step"]
    rows = [[f"{p:g}", f"{one[j]:.3f}", f"{v1[j]:.3f}", f"{fresh[j]:.3f}", f"{merged[j]:.3f}",
             cell(S, "d_reused_total", signed=True, target="he1", n=n),
             f"{S.at('err_W1', target='he1+odd', n=n):.3f}"] for j, (p, n) in enumerate(zip(psis, ns))]
    diff = fresh - np.array(merged)
    join = lambda ps: (", ".join(f"{p:g}" for p in ps[:-1]) + " and " if len(ps) > 1 else "") \
        + f"{ps[-1]:g}"
    sides = {"below": [p for p, x in zip(psis, diff) if x < 0],
             "above": [p for p, x in zip(psis, diff) if x >= 0]}
    j = int(np.argmax(diff))
    numbers = dict(psi_fresh_cmp=" and ".join(f"{where} the curve at ψ = {join(ps)}"
                                              for where, ps in sides.items() if ps),
                   psi_fresh_excess=diff[j], psi_fresh_excess_sem=fresh_sem[j],
                   psi_fresh_excess_at=psis[j])
    return header, rows, numbers


# -- Beyond one configuration (tab-ro-configs, fig-ro-penalty, tab-ro-ideal-svd) -----------

def _config_label(cfg: dict, base: dict) -> str:
    """A configuration's label in the tables: what it changes from ``base``."""
    shown = {"activation": str, "c": lambda v: rf"$\kappa = {v:g}$",   # kappa: the step constant
             "n_train": lambda v: rf"$n_{{\mathrm{{tr}}}} = {v / base['N']:g}N$"}
    return ", ".join(shown.get(k, lambda v: f"{k} = {v}")(v) for k, v in cfg.items()) or "reference"


@dataclass
class ConfigData:
    r"""The runs of several configurations: ``summary``, their :func:`payoff_summary` at
    their single :math:`\alpha_2` (:func:`at_alpha2`) by the keywords in which they differ;
    ``points[name]`` the values of those keywords in each configuration, ``labels[name]``
    its label in tables."""

    summary: Summary
    points: dict
    labels: dict


def config_data(records, configs: dict, base: dict) -> ConfigData:
    r"""Collect the runs of several configurations of :func:`payoff_experiment`.

    ``configs`` maps a name (a Python identifier, used in glue names) to the keywords in
    which that configuration differs from ``base`` (``{}`` for the reference itself);
    ``records`` are the runs of all of them, e.g. one :func:`twostep.sweep` over
    ``[{**base, **c} for c in configs.values()]``, each with a single :math:`\alpha_2`.
    """
    keys = sorted(set().union(*configs.values()))
    return ConfigData(payoff_summary([at_alpha2(r) for r in records], by=keys),
                      {name: {k: {**base, **c}[k] for k in keys} for name, c in configs.items()},
                      {name: _config_label(c, base) for name, c in configs.items()})


def config_table(data: ConfigData) -> tuple:
    r"""Per configuration, the columns the text uses: the test errors of 0 steps, 1 step and
    the fresh second step (means over the seeds) and the paired reuse penalties reused − fresh
    and reused − one step of size :math:`\eta_1+\eta_2` (mean ± sem)
    (:func:`config_errors_table` has every first layer's error with its sem and the largest
    row norm of the reused :math:`W_2`). The numbers, per configuration name ``c``: ``c_rt``
    (reused − :math:`\eta_1+\eta_2`) and its ``_sem``, ``c_maxrow`` (the reused
    :math:`W_2`'s largest row norm) and ``c_W0`` (0 steps' error)."""
    S = data.summary
    header = ["setting", "0 steps", "1 step", "fresh"] + [PAIRED_DIFFERENCES[k][2] for k in _PENALTIES]
    rows, numbers = [], {}
    for name, p in data.points.items():
        rows.append([data.labels[name]] + [f"{S.at(f'err_{s}', **p):.3f}"
                                           for s in ("W0", "W1", "W2_fresh")]
                    + [cell(S, k, signed=True, **p) for k in _PENALTIES])
        numbers.update({f"{name}_rt": S.at("d_reused_total", **p),
                        f"{name}_rt_sem": S.at("d_reused_total", sem=True, **p),
                        f"{name}_maxrow": S.at("max_row_W2_reused", **p),
                        f"{name}_W0": S.at("err_W0", **p)})
    return header, rows, numbers


def config_errors_table(data: ConfigData) -> tuple:
    r"""Test error of every first layer (mean over the seeds), the largest of their standard
    errors, and the largest row norm of the reused :math:`W_2` (mean), one column per
    configuration (so that it fits a text column)."""
    S, points = data.summary, list(data.points.values())
    header = ["first layer"] + [data.labels[name] for name in data.points]
    rows = [[_SHORT[s]] + [f"{S.at(f'err_{s}', **p):.3f}" for p in points] for s in SCHEMES]
    rows.append(["largest standard error"]
                + [f"{max(S.at(f'err_{s}', sem=True, **p) for s in SCHEMES):.3f}" for p in points])
    rows.append([r"largest row of reused $W_2$"]
                + [f"{S.at('max_row_W2_reused', **p):.1f}" for p in points])
    return header, rows


def plot_penalty(data: Summary):
    r"""Left: the paired reuse penalties against :math:`N` (``data``: :func:`payoff_summary`
    by ``N`` of runs at a single :math:`\alpha_2`, :func:`at_alpha2`), with error bars and
    the zero line. Right: the largest row norm of the trained first layers against
    :math:`N`."""
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 4.4))
    ax = axes[0]
    for k, label, color in (("d_reused_fresh", "reused − fresh", COLORS["reused"]),
                            ("d_reused_total", r"reused − 1 step of size $\eta_1+\eta_2$",
                             SCHEME_STYLE["W1_total"]["color"])):
        errorbars(ax, *data.series(k), color=color, label=label)
    ax.axhline(0, color="k", lw=0.8)
    ax.set(ylabel=r"paired difference of test error / $\overline{y^2}$",
           title=r"reuse penalty, $\mathrm{He}_1$")
    width_axis(ax, data.axis(), r"width $N = n = d = n_{\mathrm{tr}}$")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18))
    _row_norms(axes[1], data.axis(), data, "runaway neurons")
    width_axis(axes[1], data.axis(), r"width $N$")
    axes[1].minorticks_off()
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.18))
    return finished(fig)


def penalty_table(data: Summary) -> tuple:
    r"""Per width: seeds, the two paired penalties and the largest row norms of the two
    second steps (the test errors themselves: :func:`penalty_errors_table`). The numbers:
    ``pen_N_lo``, ``pen_N_hi`` (the end widths), the change of the penalty
    reused − fresh between them, ``pen_change`` ± ``pen_change_sem``, the same for reused −
    :math:`\eta_1+\eta_2` (``rt_change``, ``rt_change_sem``) with its value at the largest
    width, ``rt_hi`` ± ``rt_hi_sem``, in standard errors ``rt_hi_z``, and the smallest
    number of seeds, ``pen_seeds_min``."""
    Ns = data.axis()
    header = ["$N$", "seeds", *(PAIRED_DIFFERENCES[k][2] for k in _PENALTIES), "row, reused",
              "row, fresh"]
    rows = [[f"{N}", f"{data.count(N=N)}"]
            + [cell(data, k, signed=True, N=N) for k in _PENALTIES]
            + [f"{data.at(f'max_row_W2_{b}', N=N):.1f}" for b in ("reused", "fresh")]
            for N in Ns]
    numbers = dict(pen_N_lo=int(Ns[0]), pen_N_hi=int(Ns[-1]),
                   pen_seeds_min=min(data.count(N=N) for N in Ns))
    for short, k in zip(("pen", "rt"), _PENALTIES):
        _, d, se = data.series(k)
        numbers.update({f"{short}_change": d[-1] - d[0],
                        f"{short}_change_sem": float(np.hypot(se[0], se[-1]))})
    _, d, se = data.series("d_reused_total")
    numbers.update(rt_hi=d[-1], rt_hi_sem=se[-1], rt_hi_z=d[-1] / se[-1] if se[-1] else np.inf)
    return header, rows, numbers


def penalty_errors_table(data: Summary) -> tuple:
    r"""Per width: the test errors of one step and of both second steps, mean ± sem over
    the seeds."""
    shown = ("W1", "W1_total", "W2_reused", "W2_fresh")
    return (["$N$"] + [_SHORT[s] for s in shown],
            [[f"{N}"] + [cell(data, f"err_{s}", N=N) for s in shown] for N in data.axis()])


def ideal_comparison_table(configs: ConfigData, widths: Summary) -> tuple:
    r"""Measured test error next to the two ideal readouts of :eq:`eq-ro-ideal`, per
    setting (each configuration, then each width of ``widths``, as in :func:`plot_penalty`)
    and first layer: the theory's directions (:func:`learned_directions`) and the measured top
    singular vectors (:func:`measured_directions`; the runs need ``measured_ideal=True``),
    each cell the mean ± standard error over the seeds. The numbers: ``n_ideal_pairs``
    (settings × first layers), how many lie below each ideal (``n_below_theory``,
    ``n_below_svd``), the most the measured error lies below the theory's
    (``max_below_theory``), the largest difference of the two ideals outside the reused
    second step (``max_svd_gap``), and the reused second step's two ideals at the reference
    (``ref_ideal_re``, ``ref_ideal_svd_re``)."""
    shown = ("W1", "W2_reused", "W2_fresh")
    settings = [(configs.labels[k], configs.summary, p) for k, p in configs.points.items()]
    settings += [(f"$N = {N}$", widths, {"N": N}) for N in widths.axis()]
    cells = [(label, S, p, s) for label, S, p in settings for s in shown]
    kinds = ("err", "ideal", "ideal_svd")
    rows = [[label if s == shown[0] else "", _SHORT[s]] + [cell(S, f"{k}_{s}", **p) for k in kinds]
            for label, S, p, s in cells]
    m, th, sv = (np.array([S.at(f"{k}_{s}", **p) for _, S, p, s in cells]) for k in kinds)
    apart = np.abs(sv - th)[[s != "W2_reused" for *_, s in cells]]
    ref = next(iter(configs.points.values()))
    numbers = dict(n_ideal_pairs=len(cells), n_below_theory=int(np.sum(m < th)),
                   n_below_svd=int(np.sum(m < sv)), max_below_theory=float(max(0.0, *(th - m))),
                   max_svd_gap=float(max(0.0, *apart)),
                   ref_ideal_re=configs.summary.at("ideal_W2_reused", **ref),
                   ref_ideal_svd_re=configs.summary.at("ideal_svd_W2_reused", **ref))
    return ["setting", "first layer", "measured", "theory's", "measured vectors"], rows, numbers


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
                      alpha2: float, seed: int) -> MemorisationData:
    r"""Draw one problem with ``twostep.rng_for(seed)`` (the teacher, then
    :func:`train_schemes`), take both second steps, and measure each neuron's move, its
    largest cosine with one input of the batch the step used, and the scale of each
    feature on ``n`` fresh inputs drawn with ``numpy.random.default_rng(1)``."""
    sch = train_schemes(rng_for(seed), N=N, n=n, d=d, activation=activation, target=target,
                        c=c, alpha1=alpha1, alpha2s=(alpha2,))
    W2 = {"reused": sch.W2_reused[0], "fresh": sch.W2_fresh[0]}
    move = {b: W - sch.W1 for b, W in W2.items()}
    batch = {"reused": sch.X1, "fresh": sch.X2}
    X_new = gaussian_inputs(n, d, np.random.default_rng(1))
    return MemorisationData({b: np.linalg.norm(move[b], axis=1) for b in move},
                            {b: neuron_memorisation(move[b], batch[b]) for b in move},
                            {b: feature_scale(features(W, X_new, sch.activation))
                             for b, W in W2.items()},
                            chance_maximum(n, d))


def plot_why(data: MemorisationData, psi: PsiData, summary: Summary, alpha1: float, alpha2s):
    r"""Three panels: each neuron's second-step move against its largest cosine with one
    training input (``data``); the largest row norm against :math:`\psi` for
    :math:`\mathrm{He}_1` (``psi``); test error with standardised and raw features against
    :math:`\alpha_2` for :math:`\mathrm{He}_1` at ``alpha1`` (``summary``:
    :func:`payoff_summary` by ``(target, alpha1)``, with raw features there)."""
    A2S = list(alpha2s)
    fig, ax = plt.subplot_mosaic([["move", "rows"], ["raw", "raw"]], figsize=(7.0, 8.6),
                                 height_ratios=[1.15, 1])
    axes = [ax["move"], ax["rows"], ax["raw"]]
    for b in ("fresh", "reused"):
        axes[0].scatter(data.move[b], data.memo[b], s=4, alpha=0.5, color=COLORS[b],
                        label=f"{b} batch", rasterized=True)
    chance_line(axes[0], data.unrelated, r"unrelated $\sqrt{2\log n/d}$")
    axes[0].set(xscale="log", ylim=(0, 1.02),
                xlabel=r"move of neuron $i$, $\|w^{(2)}_i - w^{(1)}_i\|$",
                ylabel=r"$\max_j|\cos(w^{(2)}_i - w^{(1)}_i, x_j)|$", title="one problem, per neuron")
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), markerscale=3)

    _row_norms(axes[1], psi.psis, psi.summary, r"$\mathrm{He}_1$, across $\psi$", target="he1")
    axes[1].set_xlabel(r"$\psi = n/d$")
    ticks_at(axes[1].xaxis, psi.psis)
    axes[1].minorticks_off()
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2))

    e = summary.entry(target="he1", alpha1=alpha1)
    xr3 = [A2S[0] - 0.02, A2S[-1] + 0.02]
    _baselines(axes[2], xr3, e, labels=False)
    for s in ("W1", "W2_fresh", "W2_reused"):
        for suffix, ls, mfc in (("", "-", None), ("_raw", "--", "white")):
            y, sem = (np.broadcast_to(e[f"err_{s}{suffix}{k}"], len(A2S)) for k in ("", "_sem"))
            errorbars(axes[2], A2S, y, sem, color=SCHEME_STYLE[s]["color"], ls=ls, mfc=mfc)
    axes[2].set(xlim=xr3, ylim=(-0.02, 1.08), xlabel=rf"$\alpha_2$ ($\alpha_1 = {alpha1}$)",
                ylabel=r"test error / $\overline{y^2}$", title=r"$\mathrm{He}_1$: raw vs standardised")
    legend_from(axes[2], [("best linear predictor", dict(color="k", ls=":")),
                          ("linear ridge on $x$", dict(ls="-.")),
                          ("0 steps (standardised)", dict(color=SCHEME_STYLE["W0"]["color"]))]
                + [(SCHEME_STYLE[s]["label"], dict(color=SCHEME_STYLE[s]["color"], marker="o",
                                                  ls="none")) for s in ("W1", "W2_fresh", "W2_reused")]
                + [("standardised features", dict(marker="o", ms=4)),
                   ("raw features", dict(ls="--", marker="o", ms=4, mfc="white"))],
                loc="center left", bbox_to_anchor=(1.02, 0.5))
    return finished(fig)


def memorisation_table(data: MemorisationData, psi: PsiData, memo_cut: float = 0.5,
                       top_frac: float = 0.01) -> tuple:
    r"""Reused against fresh second step, neuron by neuron and across :math:`\psi`:
    median and largest move, the share of the squared movement carried by the top
    ``top_frac`` of neurons, median largest cosine, fraction with cosine above
    ``memo_cut``, largest over median feature scale (these of the one problem of ``data``),
    and the largest row norm of :math:`W_2` at each :math:`\psi` (:math:`\mathrm{He}_1`,
    mean ± standard error over the seeds of ``psi``). The numbers: the feature-scale
    ratios."""
    bs = ("reused", "fresh")
    k = max(1, int(round(top_frac * data.move["reused"].size)))
    squares = {b: np.sort(data.move[b] ** 2)[::-1] for b in bs}
    ratio = {b: data.scale[b].max() / np.median(data.scale[b]) for b in bs}
    rows = [["median move $\\|w^{(2)}_i - w^{(1)}_i\\|$"] + [f"{np.median(data.move[b]):.2f}" for b in bs],
            ["largest move"] + [f"{data.move[b].max():.1f}" for b in bs],
            [f"share of the squared movement in the top {top_frac:.0%} of neurons"]
            + [f"{squares[b][:k].sum() / squares[b].sum():.0%}" for b in bs],
            [f"median largest cosine with one input (unrelated: {data.unrelated:.2f})"]
            + [f"{np.median(data.memo[b]):.2f}" for b in bs],
            [f"neurons with cosine above {memo_cut:g}"]
            + [f"{np.mean(data.memo[b] > memo_cut):.0%}" for b in bs],
            ["largest / median feature scale on fresh inputs"]
            + [sci(ratio[b], 2) if ratio[b] >= 1000 else f"{ratio[b]:.0f}" for b in bs]]
    rows += [[f"largest row norm of $W_2$, $\\psi = {p:g}$"]
             + [cell(psi.summary, f"max_row_W2_{b}", decimals=1, target="he1", n=n) for b in bs]
             for p, n in zip(psi.psis, psi.summary.axis(target="he1"))]
    numbers = dict(feat_ratio_re_txt=sci(ratio["reused"], 2), feat_ratio_fr=ratio["fresh"])
    return ["", "reused batch", "fresh batch"], rows, numbers


def raw_table(summary: Summary, alpha1: float, alpha2s, L: int) -> tuple:
    r"""Test error with raw and with standardised features per :math:`\alpha_2` at
    ``alpha1``: the reused and the fresh second step for :math:`\mathrm{He}_1`, and the
    reused one with raw features for the two-index target (means over the seeds). The
    numbers: ``max_sem``, the largest standard error over the seeds of an entry, and
    ``max_sem_txt``, the same for a caption (:func:`report.sig`)."""
    e, m = (summary.entry(target=t, alpha1=alpha1) for t in ("he1", "he1+odd"))
    header = [r"$\alpha_2$", r"$\Lambda$", "reused, raw", "reused, std.", "fresh, raw",
              "fresh, std.", "He₁ + odd: reused, raw"]
    shown = ((e, "err_W2_reused_raw"), (e, "err_W2_reused"), (e, "err_W2_fresh_raw"),
             (e, "err_W2_fresh"), (m, "err_W2_reused_raw"))
    rows = [[f"{a2:g}", f"{n_spikes(alpha1, a2, L)}"] + [f"{x[k][i]:.3f}" for x, k in shown]
            for i, a2 in enumerate(alpha2s)]
    max_sem = float(max(np.max(x[k + "_sem"][:len(alpha2s)]) for x, k in shown))
    return header, rows, dict(max_sem=max_sem, max_sem_txt=sig(max_sem))


def parameter_table(N: int, c: float, alpha1s, alpha2s, ref, psis, L: int, n_train: int,
                    n_test: int, n_seeds: int, n_data_seeds: int, relative_lambdas) -> tuple:
    r"""Header and rows of the chapter's parameters: sizes, step sizes with the
    :math:`\Lambda(\alpha_1, \alpha_2)` they give (:func:`twostep.n_spikes`), batch ratios,
    readout data, penalty grid and seeds."""
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
             [r"readout: training, test samples", f"$n_{{\\mathrm{{tr}}}} = {n_train}$, "
              f"$n_{{\\mathrm{{te}}}} = {n_test}$"],
             [r"penalty grid $\lambda_0$", f"{len(relative_lambdas)} values, "
              f"{sci(relative_lambdas[0])} to {sci(relative_lambdas[-1])}"],
             ["seeds per setting (networks; data only)", f"{n_seeds}; {n_data_seeds}"]]
    return ["parameter", "value"], rows
