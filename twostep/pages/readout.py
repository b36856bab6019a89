r"""What the learned features buy: five first layers compared by their readouts' test error."""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from ..analysis.alignment import chance_maximum
from ..analysis.readout import asymptotic_ideal, explained_fraction, feature_scale, features
from ..analysis.summary import Summary
from ..analysis.sweep import rng_for, split_batches, sweep
from ..analysis.theory import n_spikes
from ..experiments.readout import (SCHEMES, SECOND_STEP_SCHEMES, neuron_memorisation,
                                   payoff_experiment, train_schemes)
from ..experiments.reuse import signal_overlap_experiment
from ..model.network import gaussian_inputs
from .figures import (COLORS, TARGET_LABELS, attach_data, chance_line, errorbars, finished,
                      legend_below, legend_from, ticks_at, width_axis)

#: Label and colour of each first layer in the figures.
SCHEME_STYLE = {
    "W0": dict(label="0 steps (random features)", color="0.5"),
    "W1": dict(label=r"1 step ($\eta_1$)", color=COLORS["one-step"]),
    "W1_total": dict(label=r"1 step of size $\eta_1+\eta_2$", color="#d68910"),
    "W2_reused": dict(label="2 steps, reused batch", color=COLORS["reused"]),
    "W2_fresh": dict(label="2 steps, fresh batch", color=COLORS["fresh"]),
}
#: Short names of the first layers in narrow tables.
SCHEME_SHORT = {"W0": "0 steps", "W1": "1 step", "W1_total": r"$\eta_1{+}\eta_2$",
                "W2_reused": "reused", "W2_fresh": "fresh"}
#: Markers against n/d: the later ones open, so that two equal test errors both show.
SCHEME_MARKS = {"W1": {"marker": "o", "ms": 4}, "W1_total": {"marker": "s", "ms": 6, "mfc": "none"},
                "W2_reused": {"marker": "^", "ms": 6, "mfc": "none"},
                "W2_fresh": {"marker": "D", "ms": 5, "mfc": "none"}}
#: Marker sizes in the scatter of test errors: concentric open rings where points coincide.
SCATTER_SIZES = {"W0": 3.0, "W1": 4.0, "W1_total": 5.5, "W2_fresh": 7.0, "W2_reused": 8.5}
#: Paired differences of test errors, ``name: (minuend, subtrahend, title)``.
PAIRED_DIFFERENCES = {"d_total_W1": ("W1_total", "W1", r"$\eta_1{+}\eta_2$ − 1 step"),
                      "d_fresh_total": ("W2_fresh", "W1_total", r"fresh − $\eta_1{+}\eta_2$"),
                      "d_reused_total": ("W2_reused", "W1_total", r"reused − $\eta_1{+}\eta_2$"),
                      "d_reused_fresh": ("W2_reused", "W2_fresh", "reused − fresh")}
#: The targets drawn in the test-error figures (the odd bounded one stays at 1 throughout).
PLOTTED = ("he1", "he1+odd")

_LINE = dict(ls="--", lw=1)

def _row(panel, series, x, y, sem=np.nan, theory=np.nan) -> dict:
    """One plotted point for :func:`attach_data` (every figure's rows have these columns)."""
    return dict(panel=panel, series=series, x=x, y=y, sem=sem, theory=theory)

# -- Sweeps and summaries over seeds ------------------------------------------------------

def payoff_runs(grid, seeds, n_jobs: int = 1) -> list:
    r""":func:`twostep.payoff_experiment` at every point of ``grid`` (a list of keyword dicts)
    and seed (:func:`twostep.sweep`), the costliest tasks (:math:`N^2` times the samples
    drawn) first; one record per task, in the grid's order."""
    def cost(p):
        n = p.get("n") or p["N"]
        return p["N"] ** 2 * (n + (p.get("n_train") or n)) * len(p.get("alpha2s", (0,)))

    return sweep(payoff_experiment, list(grid), seeds=seeds, n_jobs=n_jobs, cost=cost)

def payoff_summary(records, by) -> Summary:
    r"""Means and standard errors over seeds of :func:`payoff_experiment` records, by ``by``."""
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
    r"""A :func:`payoff_experiment` record at its ``alpha2s[i]``."""
    return {k: (v[i] if any(s in k for s in SECOND_STEP_SCHEMES) and np.ndim(v) == 1 else v)
            for k, v in record.items()}

def shared_reference(records, base: dict) -> list:
    r"""The runs of ``records`` that are the configuration ``base`` (:func:`at_alpha2`)."""
    (alpha2,) = base["alpha2s"]
    same = [at_alpha2(r, list(r["alpha2s"]).index(alpha2)) for r in records
            if alpha2 in r["alpha2s"] and all(r.get(k) == v for k, v in base.items()
                                               if k not in ("alpha2s", "scalings"))]
    if not same:
        raise ValueError(f"records hold no run of the configuration {base!r}")
    return same

def psi_summary(psi_records, alpha_records, alpha1: float, alpha2: float) -> Summary:
    r""":func:`payoff_summary` by ``("target", "n")`` of the :math:`n \ne d` runs
    ``psi_records`` and the :math:`n = d` runs of the :math:`\alpha_2` sweep
    (``alpha_records``) at ``alpha1``, all at ``alpha2`` (:func:`at_alpha2`)."""
    same = [r for r in alpha_records if r["alpha1"] == alpha1]
    i = list(same[0]["alpha2s"]).index(alpha2)
    return payoff_summary([at_alpha2(r) for r in psi_records] + [at_alpha2(r, i) for r in same],
                          by=["target", "n"])

def config_summary(records, configs: dict, base: dict) -> tuple:
    r"""``(summary, points)`` of runs of several configurations, each at one :math:`\alpha_2`:
    ``configs`` maps a name to the keywords in which it differs from ``base``; ``summary`` is
    the :func:`payoff_summary` by those keywords, ``points[name]`` their values."""
    keys = sorted(set().union(*configs.values()))
    return (payoff_summary([at_alpha2(r) for r in records], by=keys),
            {name: {k: {**base, **c}[k] for k in keys} for name, c in configs.items()})

# -- What the spectral picture predicts (fig-ro-ideal) ------------------------------------

def u2_records(sizes, seeds, n_jobs: int = 1) -> list:
    r""":func:`twostep.signal_overlap_experiment` of the odd bounded link, :math:`u_2` only, at
    :math:`n = d` = each of ``sizes``: one record per batch (``"reused"``, ``"fresh"``), both
    from one task per size and seed (``batch="both"``, bit for bit each batch's own run)."""
    tasks = [dict(n=m, d=m, target="odd", batch="both", ks=(2,)) for m in sizes]
    return split_batches(sweep(signal_overlap_experiment, tasks, seeds=seeds, n_jobs=n_jobs,
                               cost=lambda p: p["n"]), ("reused", "fresh"))

def plot_ideal(u2: Summary, teachers: dict):
    r"""Fraction of :math:`\mathbb E[y^2]` an ideal readout of one direction explains against its
    overlap :math:`\rho`, with the measured overlaps of :math:`u_2` and the chance band."""
    fig, ax = plt.subplots(figsize=(5.0, 4.8))
    sizes = u2.axis(batch="reused")
    chance = 1 / np.sqrt(np.array(sizes, dtype=float))
    measured = {b: u2.series("overlaps", (0, 0), batch=b) for b in ("reused", "fresh")}
    low = min(np.min(m - s) for _, m, s in measured.values())
    rho = np.geomspace(min(0.02, 0.7 * min(low, chance.min())), 1, 200)
    # He_1 and He_3/sqrt(6) explain exactly rho^2 and rho^6: the leading powers.
    curves = (("he1", r"$\mathrm{He}_1$ (IE 1): $\rho^2$", COLORS["one-step"]),
              ("odd", "odd bounded (IE 3)", "#d68910"),
              ("he3", r"$\mathrm{He}_3/\sqrt{6}$ (IE 3): $\rho^6$", "#1e8449"))
    rows = []
    for t, label, color in curves:
        y = explained_fraction(teachers[t], rho)
        ax.plot(rho, y, color=color, label=label)
        rows += [dict(series=t, x=u, x_sem=np.nan, y=v) for u, v in zip(rho, y)]
    bottom = 1e-9
    for (b, (n, mean, sem)), marker in zip(measured.items(), ("^", "v")):
        y = explained_fraction(teachers["odd"], mean)
        bottom = min(bottom, 0.3 * y.min())
        ax.errorbar(mean, y, xerr=sem, ls="none", marker=marker, ms=6, capsize=2,
                    color=COLORS[b], label=rf"$u_2$, {b} batch, $n = d \leq {n[-1]}$")
        rows += [dict(series=f"u2 {b}, n = {m}", x=x, x_sem=s, y=v)
                 for m, x, s, v in zip(n, mean, sem, y)]
    ax.axvspan(chance.min(), chance.max(), color=COLORS["chance"], alpha=0.35, lw=0,
               label=rf"chance $1/\sqrt{{d}}$, $d = {sizes[0]}$ to ${sizes[-1]}$")
    rows += [dict(series=f"chance, d = {m}", x=x, x_sem=np.nan, y=np.nan)
             for m, x in zip(sizes, chance)]
    ax.set(xscale="log", yscale="log", ylim=(bottom, 1.5),
           xlabel=r"overlap $\rho$ of the learned direction with $\beta^\star$",
           ylabel=r"$1 - \mathcal{E}/\mathbb{E}[y^2]$ (fraction explained)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return finished(attach_data(fig, rows))

# -- Test error across (alpha1, alpha2) (fig-ro-alpha, fig-ro-paired) ---------------------

def _level(ax, x, mean, sem, color, ls="-", label=None, lw=1.4):
    """A horizontal line at ``mean`` over ``x``, with a band of ± ``sem``."""
    ax.plot(x, [mean] * len(x), color=color, ls=ls, lw=lw, label=label)
    if sem:
        ax.fill_between(x, mean - sem, mean + sem, color=color, alpha=0.15, lw=0)

#: The levels that do not depend on the parameter a panel varies: (series, key, style).
_LEVELS = (("best linear predictor (population)", "best_linear", dict(color="k", ls=":")),
           ("linear ridge on $x$", "err_linear", dict(color="0.3", ls="-.")),
           (SCHEME_STYLE["W0"]["label"], "err_W0", dict(color=SCHEME_STYLE["W0"]["color"])))

def _baselines(ax, x, e, panel, labels=True, clip=False) -> list:
    """The levels :data:`_LEVELS` of the summary entry ``e`` over ``x``; their data rows."""
    rows = []
    lo, hi = ax.get_ylim()
    for series, key, style in _LEVELS:
        sem = e.get(key + "_sem", 0.0)
        if not clip or lo <= e[key] <= hi:   # one off the zoomed range is named at its edge (_offscale)
            _level(ax, x, e[key], sem, label=series if labels else None, **style)
        rows.append(_row(panel, series, np.nan, e[key], sem))
    return rows

def _offscale(ax, value, label, color):
    """Name a level that lies outside the panel's y-range at the edge it leaves by."""
    lo, hi = ax.get_ylim()
    if lo <= value <= hi:
        return
    up = value > hi
    y, va, arrow, dy = (hi, "top", "$\\uparrow$", -3) if up else (lo, "bottom", "$\\downarrow$", 3)
    ax.annotate(f"{arrow} {label}: {value:.2f}", (0.02, y), xycoords=("axes fraction", "data"),
                xytext=(0, dy), textcoords="offset points", va=va, fontsize=9, color=color)

def plot_alpha(summary: Summary, alpha1s, alpha2s, L: int):
    r"""Test error against :math:`\alpha_2`, one row per :math:`\alpha_1`, with the ideal readouts,
    the baselines, the phase boundaries and :math:`\Lambda` on the top axis."""
    A2S = list(alpha2s)
    fig, axes = plt.subplots(len(alpha1s), len(PLOTTED), figsize=(7.0, 7.6), sharex=True,
                             squeeze=False)
    xr = [A2S[0] - 0.03, A2S[-1] + 0.03]
    rows = []
    for col, t in enumerate(PLOTTED):
        # One y-range per column: all of [0, 0 steps] for He_1; a zoom on the curves for the
        # two-index target, whose curves lie within a few hundredths of one another.
        ylim = (-0.02, 0.9)
        if t != "he1":
            keys = ([f"{k}_{s}" for s in SCHEMES[1:] for k in ("err", "ideal")] + ["err_linear"])
            vals = np.concatenate([np.ravel(summary.at(k, target=t, alpha1=a1))
                                   for a1 in alpha1s for k in keys])
            ylim = (vals.min() - 0.015, vals.max() + 0.015)
        for row, a1 in enumerate(alpha1s):
            ax, e, panel = axes[row, col], summary.entry(target=t, alpha1=a1), f"{t}, alpha1 = {a1}"
            ax.set(xlim=xr, ylim=ylim)
            rows += _baselines(ax, xr, e, panel, clip=True)
            _level(ax, xr, e["err_W1"], e["err_W1_sem"], **SCHEME_STYLE["W1"])
            _level(ax, xr, e["ideal_W1"], 0, SCHEME_STYLE["W1"]["color"], **_LINE)
            rows.append(_row(panel, "W1", np.nan, e["err_W1"], e["err_W1_sem"], e["ideal_W1"]))
            for s in SECOND_STEP_SCHEMES:
                errorbars(ax, A2S, e[f"err_{s}"], e[f"err_{s}_sem"], **SCHEME_STYLE[s])
                if s != "W1_total":   # its directions are one step's: the dashed W1 level
                    ax.plot(A2S, e[f"ideal_{s}"], color=SCHEME_STYLE[s]["color"], marker="x",
                            ms=5, **_LINE)
                rows += [_row(panel, s, *p) for p in
                         zip(A2S, e[f"err_{s}"], e[f"err_{s}_sem"], e[f"ideal_{s}"])]
            _offscale(ax, e["best_linear"], "best linear", "k")
            _offscale(ax, e["err_W0"], "0 steps", SCHEME_STYLE["W0"]["color"])
            for k in range(1, L):
                if xr[0] < k * (0.5 - a1) < xr[1]:
                    ax.axvline(k * (0.5 - a1), color=COLORS["chance"], lw=0.8, ls=":")
            top = ax.secondary_xaxis("top")   # Lambda(alpha1, alpha2) of each simulated alpha2
            top.set_xticks(A2S, [rf"$\Lambda={n_spikes(a1, a2, L)}$" for a2 in A2S])
            top.tick_params(length=0, labelsize=9, labelcolor="0.3")
            if row == 0:
                ax.set_title(TARGET_LABELS[t] + ("" if t == "he1" else " (zoomed y-axis)"))
            if row == len(alpha1s) - 1:
                ax.set_xlabel(r"$\alpha_2$")
            ax.set_ylabel(rf"$\alpha_1 = {a1}$: test error / $\overline{{y^2}}$" if col == 0
                          else r"test error / $\overline{y^2}$")
    axes[0, 0].plot([], [], color="0.3", marker="x", ms=5, label="ideal readout of the learned "
                    "directions", **_LINE)
    legend_below(fig, axes[0, 0], ncol=2)
    return finished(attach_data(fig, rows))

def plot_paired(summary: Summary, alpha1s, alpha2s):
    r"""The paired differences of :data:`PAIRED_DIFFERENCES` against :math:`\alpha_2` (mean ±
    standard error over the seeds of the differences taken problem by problem), one row per
    :math:`\alpha_1`, columns :math:`\mathrm{He}_1` and the two-index target, with zero."""
    A2S = np.asarray(alpha2s, dtype=float)
    fig, axes = plt.subplots(len(alpha1s), len(PLOTTED), figsize=(7.0, 6.4), sharex=True,
                             sharey=True, squeeze=False)
    colors = {"d_total_W1": SCHEME_STYLE["W1_total"]["color"], "d_fresh_total": COLORS["fresh"],
              "d_reused_total": COLORS["reused"], "d_reused_fresh": "0.35"}
    marks = {"d_total_W1": "s", "d_fresh_total": "D", "d_reused_total": "^", "d_reused_fresh": "o"}
    rows = []
    for (row, a1), (col, t) in ((r, c) for r in enumerate(alpha1s) for c in enumerate(PLOTTED)):
        ax, e = axes[row, col], summary.entry(target=t, alpha1=a1)
        # Side by side, so that the error bars of one alpha2 do not hide one another.
        for j, (k, (*_, title)) in enumerate(PAIRED_DIFFERENCES.items()):
            errorbars(ax, A2S + 0.008 * (j - 1.5), e[k], e[k + "_sem"], color=colors[k],
                      marker=marks[k], ms=5, label=title)
            rows += [_row(f"{t}, alpha1 = {a1}", k, *p) for p in zip(A2S, e[k], e[k + "_sem"])]
        ax.axhline(0, color="k", lw=0.8)
        ax.set_title(rf"{TARGET_LABELS[t]}, $\alpha_1 = {a1}$")
        ax.set_xlabel(r"$\alpha_2$" if row == len(alpha1s) - 1 else "")
        if col == 0:
            ax.set_ylabel(r"paired difference of test error / $\overline{y^2}$")
    legend_below(fig, axes[0, 0], ncol=2)
    return finished(attach_data(fig, rows))

# -- Does the spectral picture predict the test error? (fig-ro-scatter) -------------------

def scatter_points(alpha_summary: Summary, psi_summary: Summary, d: int) -> list:
    r"""Every (setting, first layer) of both sweeps as ``(target, scheme, ideal, measured, sem)``.
    """
    points = []
    for (t, _), e in alpha_summary.groups.items():
        for s in ("W1",) + SECOND_STEP_SCHEMES:
            keys = (f"ideal_{s}", f"err_{s}", f"err_{s}_sem")
            points += [(t, s, *p) for p in zip(*(np.atleast_1d(e[k]) for k in keys))]
    for (t, n), e in psi_summary.groups.items():
        if n != d:
            points += [(t, s, e[f"ideal_{s}"], e[f"err_{s}"], e[f"err_{s}_sem"])
                       for s in ("W1",) + SECOND_STEP_SCHEMES]
    return points

def plot_scatter(points):
    r"""Measured test error against the ideal readout, one point per :func:`scatter_points`."""
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
    return finished(attach_data(fig, [dict(target=t, series=s, ideal=x, measured=y, sem=se)
                                      for t, s, x, y, se in points]))

# -- Test error against n/d (fig-ro-psi) --------------------------------------------------

def plot_psi(summary: Summary, teachers: dict, d: int, etas):
    r"""Test error against :math:`\psi = n/d` with the baselines and the ideal errors."""
    fig, axes = plt.subplots(1, len(PLOTTED), figsize=(7.0, 4.9), sharey=True, squeeze=False)
    psis = np.array(summary.axis(target=PLOTTED[0])) / d
    fine = np.geomspace(psis[0] * 0.85, psis[-1] * 1.15, 80)
    rows = []
    for ax, t in zip(axes[0], PLOTTED):
        rows += _baselines(ax, fine, summary.entry(target=t, n=d), t)
        theory = {"W1": asymptotic_ideal(teachers[t], psis),
                  "W2_fresh": asymptotic_ideal(teachers[t], psis, etas)}
        theory["W1_total"] = theory["W1"]   # the same direction v_1
        for s in ("W1",) + SECOND_STEP_SCHEMES:
            _, y, sem = summary.series(f"err_{s}", target=t)
            errorbars(ax, psis, y, sem, **SCHEME_STYLE[s], **SCHEME_MARKS[s])
            th = theory.get(s, np.full_like(y, np.nan))
            rows += [_row(t, s, *p) for p in zip(psis, y, sem, th)]
        for w, s, label in (((1.0,), "W1", "$v_1$"), (etas, "W2_fresh", r"$\eta_1v_1+\eta_2v_2$")):
            ax.plot(fine, asymptotic_ideal(teachers[t], fine, w), color=SCHEME_STYLE[s]["color"],
                    label=f"ideal, {label} (large-$n$ overlap)", **_LINE)
        ax.set(xscale="log", xlabel=r"$\psi = n/d$ of the gradient steps", ylim=(-0.02, 1.1),
               title=TARGET_LABELS[t])
        ticks_at(ax.xaxis, psis)
    axes[0, 0].set_ylabel(r"test error / $\overline{y^2}$")
    legend_below(fig, axes[0, 0], ncol=2)
    return finished(attach_data(fig, rows))

# -- Why a reused second step does not pay (fig-ro-why, fig-ro-penalty) -------------------

def _row_norms(ax, x, summary: Summary, title: str, panel: str, **point) -> list:
    r"""The largest row norms ``max_row_*`` of ``summary`` against ``x``, and their rows."""
    rows = []
    for s in ("W1_total", "W2_fresh", "W2_reused"):
        _, y, sem = summary.series(f"max_row_{s}", **point)
        errorbars(ax, x, y, sem, **SCHEME_STYLE[s])
        rows += [_row(panel, s, *p) for p in zip(x, y, sem)]
    chance_line(ax, 1, r"initial rows ($\approx 1$)")
    ax.set(xscale="log", yscale="log", ylabel=r"largest row norm $\max_i\|w_i\|$", title=title)
    ax.minorticks_off()
    return rows

@dataclass
class MemorisationData:
    r"""Per neuron and batch: ``move``, ``memo``, ``scale``; ``unrelated`` :math:`\sqrt{2\log n/d}`.
    """

    move: dict
    memo: dict
    scale: dict
    unrelated: float

def memorisation_data(N: int, n: int, d: int, activation, target, c: float, alpha1: float,
                      alpha2: float, seed: int) -> MemorisationData:
    r"""One problem's second steps: each neuron's move, memorisation and feature scale."""
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

def plot_why(data: MemorisationData, psi: Summary, d: int, summary: Summary, alpha1: float,
             alpha2s):
    r"""Three panels: neuron moves against memorisation, the largest row norm against :math:`\psi`,
    and test error with standardised and raw features against :math:`\alpha_2`."""
    A2S = list(alpha2s)
    fig, ax = plt.subplot_mosaic([["move", "rows"], ["raw", "raw"]], figsize=(7.0, 8.6),
                                 height_ratios=[1.15, 1])
    rows = []
    for b in ("fresh", "reused"):
        ax["move"].scatter(data.move[b], data.memo[b], s=4, alpha=0.5, color=COLORS[b],
                           label=f"{b} batch", rasterized=True)
        rows += [_row("per neuron", b, *p) for p in zip(data.move[b], data.memo[b])]
    chance_line(ax["move"], data.unrelated, r"unrelated $\sqrt{2\log n/d}$")
    rows.append(_row("per neuron", "unrelated", np.nan, data.unrelated))
    ax["move"].set(xscale="log", ylim=(0, 1.02), title="one problem, per neuron",
                   xlabel=r"move of neuron $i$, $\|w^{(2)}_i - w^{(1)}_i\|$",
                   ylabel=r"$\max_j|\cos(w^{(2)}_i - w^{(1)}_i, x_j)|$")
    ax["move"].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), markerscale=3)

    psis = np.array(psi.axis(target="he1")) / d
    rows += _row_norms(ax["rows"], psis, psi, r"$\mathrm{He}_1$, across $\psi$",
                       "row norms against psi", target="he1")
    ax["rows"].set_xlabel(r"$\psi = n/d$")
    ticks_at(ax["rows"].xaxis, psis)
    ax["rows"].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2))

    e = summary.entry(target="he1", alpha1=alpha1)
    xr = [A2S[0] - 0.02, A2S[-1] + 0.02]
    rows += _baselines(ax["raw"], xr, e, "raw against standardised", labels=False)
    for s in ("W1", "W2_fresh", "W2_reused"):
        for suffix, ls, mfc in (("", "-", None), ("_raw", "--", "white")):
            y, sem = (np.broadcast_to(e[f"err_{s}{suffix}{k}"], len(A2S)) for k in ("", "_sem"))
            errorbars(ax["raw"], A2S, y, sem, color=SCHEME_STYLE[s]["color"], ls=ls, mfc=mfc)
            rows += [_row("raw against standardised", s + suffix, *p) for p in zip(A2S, y, sem)]
    ax["raw"].set(xlim=xr, ylim=(-0.02, 1.08), xlabel=rf"$\alpha_2$ ($\alpha_1 = {alpha1}$)",
                  ylabel=r"test error / $\overline{y^2}$",
                  title=r"$\mathrm{He}_1$: raw vs standardised")
    dots = [(SCHEME_STYLE[s]["label"], dict(color=SCHEME_STYLE[s]["color"], marker="o", ls="none"))
            for s in ("W1", "W2_fresh", "W2_reused")]
    legend_from(ax["raw"], [(label, style) for label, _, style in _LEVELS] + dots
                + [("standardised features", dict(marker="o", ms=4)),
                   ("raw features", dict(ls="--", marker="o", ms=4, mfc="white"))],
                loc="center left", bbox_to_anchor=(1.02, 0.5))
    return finished(attach_data(fig, rows))

def plot_penalty(data: Summary):
    r"""Left: the paired reuse penalties against :math:`N` (``data``: :func:`payoff_summary` by
    ``N`` of runs at one :math:`\alpha_2`) and zero. Right: the largest row norms against N."""
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 4.4))
    Ns, rows = data.axis(), []
    for k, color in (("d_reused_fresh", COLORS["reused"]),
                     ("d_reused_total", SCHEME_STYLE["W1_total"]["color"])):
        _, y, sem = data.series(k)
        errorbars(axes[0], Ns, y, sem, color=color, label=PAIRED_DIFFERENCES[k][2])
        rows += [_row("reuse penalty", k, *p) for p in zip(Ns, y, sem)]
    axes[0].axhline(0, color="k", lw=0.8)
    axes[0].set(ylabel=r"paired difference of test error / $\overline{y^2}$",
                title=r"reuse penalty, $\mathrm{He}_1$")
    width_axis(axes[0], Ns, r"width $N = n = d = n_{\mathrm{tr}}$")
    rows += _row_norms(axes[1], Ns, data, "runaway neurons", "row norms")
    width_axis(axes[1], Ns, r"width $N$")
    for ax in axes:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18))
    return finished(attach_data(fig, rows))
