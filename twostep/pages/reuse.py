r"""Chapter *Reused versus fresh batches* and its appendix: the sweeps and the figures."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..analysis.alignment import chance_maximum, chance_overlap
from ..analysis.population import Limits
from ..analysis.summary import Summary
from ..analysis.sweep import run_tasks, split_batches, split_cases
from ..analysis.theory import n_spikes, spike_exponent
from ..analysis.verdicts import mean_sem
from ..experiments.reuse import reuse_cases, signal_overlap_cases
from ..model.steps import BATCHES
from ..model.targets import target_links
from .figures import (BATCH_ORDER, COLORS, K_COLORS, attach_data, finished, legend_below,
                      legend_from, width_axis, width_grid)
from .paired import PairedData, plotted, strongest_control

#: The values of :func:`reuse_experiment` that :func:`network_data` summarises.
NETWORK_VALUES = ("signal_reuse", "term_overlap", "term_memorisation", "top_values",
                  "top_overlap", "top_memorisation", "subspace", "subspace_unmemorised")
#: The values of :func:`lambda_data`, at the top :math:`1+\Lambda` right vectors.
LAMBDA_VALUES = ("subspace", "subspace_unmemorised")
_CHANCE = dict(color=COLORS["chance"], ls=":", lw=1.2)
#: The marker of order k in the overlap figures: open, its own shape, larger with k.
_ORDER_MARKERS = [{"marker": m, "mfc": "none", "ms": 4 + 0.8 * k} for k, m in enumerate("osD^v")]
#: The two simulated targets of the network figures: the first filled and solid.
_TARGET_STYLES = (dict(marker="o", mfc=None, ls="-"), dict(marker="s", mfc="white", ls="--"))

def signal_data(Ns, targets, seeds, activation, n_jobs: int = 1) -> Summary:
    r"""Overlaps of :math:`u_k` and :math:`\tilde u_k` with :math:`\beta^\star`, both batches."""
    # The targets of one rank share their draws (most of a run's cost at n = d = 4000): one
    # task per rank, size and seed, each target's result bit for bit its own run's.
    ranks = {}
    for t in targets:
        ranks.setdefault(len(target_links(t)[0]), []).append(t)
    tasks = [(dict(n=N, d=N, targets=group, batch="both", activation=activation), s)
             for group in ranks.values() for N in Ns for s in seeds]
    done = run_tasks(signal_overlap_cases, tasks, n_jobs=n_jobs,
                     cost=lambda p: p["n"] ** 2 * (1 + len(p["targets"])))
    records = split_cases(done, "targets", "target",
                          order=lambda r: (targets.index(r["target"]), list(Ns).index(r["n"])))
    return Summary(split_batches(records, BATCHES), ("target", "batch", "n"),
                   ("overlaps", "overlaps_reuse"))

def plot_signal_overlaps(data: Summary, limits: Limits, targets: dict):
    r"""Figure: overlap of each :math:`u_k` with :math:`\beta^\star` against :math:`N`, one column per
    target in ``targets`` (name -> label), reused (top) and fresh (bottom) batch; theory mean
    at batch size :math:`n` dashed, chance :math:`1/\sqrt d` dotted."""
    Ns = data.axis()
    grid = width_grid(Ns)
    fig, axes = plt.subplots(2, len(targets), figsize=(7.0, 4.9), sharex=True, sharey=True,
                             squeeze=False)
    rows = []
    for col, (t, label) in enumerate(targets.items()):
        for row, b in enumerate(BATCHES):
            ax = axes[row, col]
            for k in limits.orders:
                # One open shape per order: where several orders sit at the same overlap
                # (the chance level, say), each still shows.
                x, mean, sem = data.series("overlaps", (k, 0), target=t, batch=b)
                plotted(rows, ax, f"{t}, {b}", f"u_{k}", x, mean, sem,
                        theory=[limits.overlap(t, b, k, n=int(N)) for N in x],
                        chance=1 / np.sqrt(x), color=K_COLORS[k], **_ORDER_MARKERS[k])
                ax.plot(grid, [limits.overlap(t, b, k, n=int(N)) for N in grid],
                        color=K_COLORS[k], lw=0.9, ls="--")
            ax.plot(grid, 1 / np.sqrt(grid), **_CHANCE)
            ax.set(yscale="log", ylim=(3e-3, 1.2), title=label)
            width_axis(ax, Ns, "$N$" if row == 1 else "")
            ax.tick_params(axis="x", labelrotation=45)
            if col == 0:
                ax.set_ylabel(f"{b} batch\noverlap with $\\beta^\\star$")
    legend_from(fig, [(f"$u_{k}$, simulation", dict(color=K_COLORS[k], **_ORDER_MARKERS[k]))
                      for k in limits.orders]
                + [("theory, mean at this $n$", dict(color="k", ls="--", lw=0.9)),
                   (r"chance $1/\sqrt{d}$", _CHANCE)], loc="outside lower center", ncol=3)
    return finished(attach_data(fig, rows))

def plot_two_index(data: Summary, limits: Limits, target: str):
    r"""Figure for a two-index target: overlap of :math:`u_0` with :math:`\beta_1` (left) and of
    :math:`u_2` and :math:`\tilde u_2` with :math:`\beta_2` (right) against :math:`N`, both batches,
    theory mean at batch size :math:`n` and chance :math:`1/\sqrt d`."""
    Ns = data.axis()
    grid = width_grid(Ns)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.0, 3.9), sharey=True)
    rows = []
    for b in BATCH_ORDER:
        # u_0 is the first step's direction, the same for both batches up to sampling: the
        # fresh batch is a larger ring around the reused dot.
        series = [(ax1, "overlaps", 0, 0, "$u_0$", False, "o", "--")]
        # without a self-term the reuse-aware weight is mu_3 (mu_1 s)^2: the same direction
        series += ([(ax2, "overlaps", 2, 1, r"$u_2 = \tilde u_2$", False, "o", "--")]
                   if b == "fresh" else [(ax2, "overlaps", 2, 1, "$u_2$", False, "o", "--"),
                                         (ax2, "overlaps_reuse", 2, 1, r"$\tilde u_2$", True, "s",
                                          "-")])
        for ax, key, k, i, name, aware, marker, ls in series:
            x, mean, sem = data.series(key, (k, i), target=target, batch=b)
            theory = lambda n: limits.overlap(target, b, k, n=int(n), index=i, aware=aware)  # noqa: E731
            plotted(rows, ax, f"beta_{i + 1}", f"{name}, {b}", x, mean, sem,
                    theory=[theory(n) for n in x], chance=1 / np.sqrt(x), color=COLORS[b],
                    marker=marker, mfc="white" if marker == "s" or (b == "fresh" and k == 0)
                    else None, ms=6 if (b == "fresh" and k == 0) else 4)
            ax.plot(grid, [theory(n) for n in grid], color=COLORS[b], lw=0.9, ls=ls)
    for ax, title in ((ax1, "$\\beta_1$ (linear part)"),
                      (ax2, "$\\beta_2$ (odd, inf. exp. 3)")):
        ax.plot(grid, 1 / np.sqrt(grid), **_CHANCE,
                label=r"chance $1/\sqrt{d}$" if ax is ax2 else None)
        ax.set(yscale="log", title=title, ylim=(3e-3, 1.2))
        width_axis(ax, Ns)
    ax1.set_ylabel("overlap with the direction")
    (h1, l1), (h2, l2) = ax1.get_legend_handles_labels(), ax2.get_legend_handles_labels()
    fig.legend(h1 + h2, l1 + l2, loc="outside lower center", ncol=3)
    return finished(attach_data(fig, rows))

def network_data(Ns, targets, steps, seeds, alpha2s=None, extra_seeds=(), extra_point=None,
                 top: int = 8, n_jobs: int = 1, dtype="float64") -> Summary:
    r""":func:`reuse_experiment` for every size, target and seed, both batches."""
    alpha2s, targets = alpha2s or {}, list(targets)
    (c1, alpha1), (c2, alpha2) = steps
    common = dict(c1=c1, alpha1=alpha1, c2=c2, alpha2=alpha2, top=top, dtype=dtype)
    # The targets are single-index: at each width and seed one task (reuse_cases) draws W0,
    # a, X1, X2 and the first pre-activations once for all of them.
    tasks = [(dict(N=N, targets=targets, batch="both",
                   alpha2s=[list(alpha2s.get(t, [])) for t in targets], **common), s)
             for N in Ns for s in seeds]
    if extra_seeds:
        t, b, N = extra_point
        tasks += [(dict(N=N, targets=[t], batch=b, alpha2s=[list(alpha2s.get(t, []))],
                        **common), s) for s in extra_seeds]
    # One pool for the grid and the extra runs, the costliest first.
    done = run_tasks(reuse_cases, tasks, n_jobs=n_jobs,
                     cost=lambda p: p["N"] ** 3 * len(p["targets"]) * (2 if p["batch"] == "both"
                                                                      else 1))
    runs = split_cases(done, "targets", "target", order=lambda r: targets.index(r["target"]))
    return Summary(split_batches([r for r in runs if r["batch"] == "both"], BATCHES)
                   + [r for r in runs if r["batch"] != "both"],
                   ("target", "batch", "N"), NETWORK_VALUES)

def _subspace_panel(ax, rows, panel, series, Ns, K: int, limit: float, labels) -> None:
    # The learned subspace's overlap per batch (series(key, batch) -> x, mean, sem), memorised
    # inputs set aside and raw (larger faint open rings, which must not cover the filled values
    # where nothing is memorised), chance sqrt(K/d) and the limit of u~2; labels: the two
    # series' suffixes and the chance line's label.
    for b in BATCH_ORDER:
        for key, mfc, ms, ls, alpha, name in (("subspace_unmemorised", None, 4, "-", 1.0, labels[0]),
                                              ("subspace", "none", 6, ":", 0.5, labels[1])):
            x = series(key, b)[0]
            plotted(rows, ax, panel, b + name, *series(key, b), theory=[limit] * len(x),
                    chance=np.sqrt(K / np.asarray(x)), color=COLORS[b], mfc=mfc, ms=ms, ls=ls,
                    alpha=alpha)
    grid = width_grid(Ns)
    ax.plot(grid, np.sqrt(K / grid), **_CHANCE, label=labels[2])
    ax.axhline(limit, color=COLORS["theory"], lw=1, label=r"limit of $\tilde u_2$")

def plot_learned_subspace(net: Summary, limits: Limits, targets: dict, K: int):
    r"""Figure: overlap with :math:`\beta^\star` of the span of :math:`W_2`'s top ``K`` right vectors,
    raw and without memorised inputs, per target, and the top vector's memorisation."""
    Ns = net.axis()
    # 2 x 2: the two targets above, the memorisation and the legends below.
    fig, grid_axes = plt.subplots(2, 2, figsize=(7.0, 6.8))
    axes, legend_ax, rows = [grid_axes[0, 0], grid_axes[0, 1], grid_axes[1, 0]], grid_axes[1, 1], []
    legend_ax.axis("off")
    for ax, (t, label) in zip(axes[:-1], targets.items()):
        _subspace_panel(ax, rows, t, lambda key, b: net.series(key, (K - 1, 0), target=t, batch=b),
                        Ns, K, limits.overlap(t, "reused", aware=True),
                        (", memorised set aside", ", raw", rf"chance $\sqrt{{{K}/d}}$"))
        ax.set(yscale="log", ylim=(1e-3, 1), title=f"{label}: top {K} of $W_2$")
        width_axis(ax, Ns)
    axes[0].set_ylabel(r"overlap of the span with $\beta^\star$")
    for (t, label), style in zip(targets.items(), _TARGET_STYLES):
        for b in BATCH_ORDER:
            x, mean, sem = net.series("top_memorisation", 0, target=t, batch=b)
            plotted(rows, axes[-1], "memorisation", f"{label}, {b}", x, mean, sem,
                    chance=chance_maximum(x, x), color=COLORS[b], **style)
    grid = width_grid(Ns)
    axes[-1].plot(grid, chance_maximum(grid, grid), **_CHANCE, label=r"unrelated $\sqrt{2\log n/d}$")
    axes[-1].set(ylim=(0, 1.05), ylabel=r"$\max_j|\cos(\cdot, x_j)|$",
                 title="memorisation of $W_2$'s top vector")
    width_axis(axes[-1], Ns)
    # The legends in the free fourth cell: top panels' (upper), memorisation panel's (lower).
    style = dict(frameon=False, borderaxespad=0, alignment="left", labelspacing=0.3)
    legend_ax.add_artist(legend_ax.legend(*axes[0].get_legend_handles_labels(), loc="upper left",
                                          title="upper panels", **style))
    legend_ax.legend(*axes[-1].get_legend_handles_labels(), loc="lower left",
                     title="lower panel", **style)
    return finished(attach_data(fig, rows))

def lambda_data(net: Summary, target: str, alpha1: float, alpha2: float, alpha2s,
                L: int) -> dict:
    r"""``target``'s learned subspace at each :math:`\alpha_2'` of ``alpha2s``."""
    others = [a for a in alpha2s if a != alpha2]
    lams = {a2: n_spikes(alpha1, a2, L) for a2 in alpha2s}
    records = []
    for r in net.runs(target=target):
        for a2, lam in lams.items():
            # the trained exponent's values, or those of the rescaled draw at a2
            key, i = ("", ()) if a2 == alpha2 else ("rescaled_", (others.index(a2),))
            records.append({"alpha2": a2, "batch": r["batch"], "N": r["N"], **{
                v: np.asarray(r[key + v])[i + (lam, 0)] for v in LAMBDA_VALUES}})
    return dict(summary=Summary(records, ("alpha2", "batch", "N"), LAMBDA_VALUES), alpha1=alpha1,
                n_spikes=lams)

def plot_lambda(lam: dict, limits: Limits, target: str = "odd"):
    r"""Figure: one panel per :math:`\alpha_2`, the learned subspace of :func:`plot_learned_subspace`
    for the top :math:`1+\Lambda` right vectors of :math:`W_2` against :math:`N`."""
    summary, lams = lam["summary"], lam["n_spikes"]
    Ns, alpha2s = summary.axis(), list(lams)
    ncols = min(2, len(alpha2s))
    nrows = -(-len(alpha2s) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.0, 1.2 + 2.5 * nrows), sharex=True,
                             sharey=True, squeeze=False)
    for ax in axes.flat[len(alpha2s):]:
        ax.remove()
    left, axes, rows = [row[0] for row in axes], axes.flat[:len(alpha2s)], []
    for i, (ax, a2) in enumerate(zip(axes, alpha2s)):
        _subspace_panel(ax, rows, f"Lambda = {lams[a2]}",
                        lambda key, b: summary.series(key, alpha2=a2, batch=b), Ns, 1 + lams[a2],
                        limits.overlap(target, "reused", aware=True), ("", ", raw", "chance"))
        ax.set(yscale="log", ylim=(5e-3, 0.6),
               title=rf"$\alpha_2 = {a2}$: $\Lambda = {lams[a2]}$, "
                     rf"$e_2 = {spike_exponent(2, lam['alpha1'], a2):+.2f}$")
        below = i + ncols >= len(alpha2s)           # nothing below it: its N axis is labelled
        width_axis(ax, Ns, "$N$" if below else "")
        ax.xaxis.set_tick_params(labelbottom=below)
    for ax in left:
        ax.set_ylabel(r"overlap with $\beta^\star$")
    legend_below(fig, axes[0], 3)
    return finished(attach_data(fig, rows))

def views(paired: PairedData, net: Summary, data: Summary, target: str, K: int) -> dict:
    r"""One target's three views of reuse, each ``{N: (reused, null, chance)}``."""
    def pair(summary, value, index, **where):      # reused and fresh of the same draws
        by = {b: {r["seed"]: np.asarray(r[value])[index] for r in summary.runs(batch=b, **where)}
              for b in BATCHES}
        seeds = sorted(set(by["reused"]) & set(by["fresh"]))
        return [np.array([by[b][s] for s in seeds], dtype=float) for b in BATCHES]

    out, w2 = {"term": {}, "u2": {}}, {}
    for N in paired.Ns(target):
        w2[N] = [paired.values(target, N, "subspace_unmemorised", b, 0) for b in BATCHES]
        out["term"][N] = (paired.values(target, N, "projected_overlap", "reused"),
                          strongest_control(paired, target, N), chance_overlap(N))
    for N in (w for w in net.axis(target=target, batch="fresh") if w not in w2):
        w2[N] = pair(net, "subspace_unmemorised", (K - 1, 0), target=target, N=N)
    out["w2"] = {N: (re, np.maximum(fr, chance_overlap(N, K)), chance_overlap(N, K))
                 for N, (re, fr) in sorted(w2.items())}
    for N in data.axis(target=target, batch="reused"):
        re, fr = pair(data, "overlaps", (2, 0), target=target, n=N)
        out["u2"][N] = (re, np.maximum(fr, chance_overlap(N)), chance_overlap(N))
    return out

def plot_views(views: dict, titles: dict):
    r"""Figure of :func:`views`: one panel per view (``titles``: view -> title), one above the
    other, the reused runs and their null (mean ± standard error over the draws) and the chance
    level against :math:`N`."""
    fig, axes = plt.subplots(len(titles), 1, figsize=(4.8, 2.3 * len(titles) + 0.8), sharex=True)
    rows, Ns = [], sorted({N for v in views.values() for N in v})
    for ax, (view, title) in zip(axes, titles.items()):
        x, chance = sorted(views[view]), [views[view][N][2] for N in sorted(views[view])]
        for i, (name, color, marker) in enumerate((("reused", COLORS["reused"], "o"),
                                                   ("null", COLORS["fresh"], "s"))):
            stats = np.array([mean_sem(views[view][N][i]) for N in x])
            plotted(rows, ax, view, name, x, stats[:, 0], stats[:, 1], chance=chance, color=color,
                    marker=marker, mfc="white" if i else None)
        ax.plot(x, chance, **_CHANCE, label="chance")
        ax.set(yscale="log", title=title, ylabel=r"overlap with $\beta^\star$")
        # plain numbers at 1, 2 and 5 times a power of ten: less than a decade per panel
        plain = plt.FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "125" else "")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain)
        width_axis(ax, Ns, "$N$" if ax is axes[-1] else "")
    legend_below(fig, axes[0], 3)
    return finished(attach_data(fig, rows))
