r"""Chapter *Reused versus fresh batches*: its sweeps, figures and tables.

The runs are those of :mod:`twostep.experiments.reuse` (the paired ones in
:mod:`twostep.pages.paired`): :func:`signal_data` (the directions :math:`u_k` from data alone)
and :func:`network_data` (the trained network) return a
:class:`~twostep.analysis.summary.Summary`, :func:`lambda_data` rereads the latter per
:math:`\alpha_2`; the ``*_table`` functions return ``(header, rows)``, the chapter writes the
captions.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..analysis.alignment import chance_maximum, chance_overlap
from ..analysis.population import Limits, cubed_link_moment
from ..analysis.summary import Summary
from ..analysis.sweep import run_tasks, split_batches, split_cases
from ..analysis.theory import n_spikes, spike_exponent
from ..experiments.reuse import reuse_cases, signal_overlap_cases
from ..model.steps import BATCHES
from ..model.targets import get_link, target_links
from .figures import (BATCH_ORDER, COLORS, K_COLORS, errorbars, finished, legend_below,
                      legend_from, width_axis, width_grid)
from .report import cell

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


def limits_table(limits: Limits, targets: dict) -> tuple:
    r"""``(header, rows)`` of :func:`population_limits`, one column per single-index target
    (``targets``: name -> header; transposed, it fits the text column): the information
    exponent, :math:`\mathbb E[g^3z]`, the limit of :math:`u_k` per batch and order, and the
    reuse-aware :math:`\tilde u_2` (reused)."""
    fmt = lambda x: "0" if abs(x) < 5e-4 else f"{x:.3f}"  # noqa: E731
    rows = [["inf. exp."] + [str(get_link(t).information_exponent) for t in targets],
            ["$\\mathbb E[g^3z]$"] + [f"{cubed_link_moment(t):.3f}" for t in targets]]
    rows += [[f"{b} $u_{k}$"] + [fmt(limits.overlap(t, b, k)) for t in targets]
             for b in BATCHES for k in limits.orders]
    rows.append(["reused $\\tilde u_2$"] + [fmt(limits.overlap(t, "reused", aware=True))
                                            for t in targets])
    return ["", *targets.values()], rows


def signal_data(Ns, targets, seeds, activation, n_jobs: int = 1) -> Summary:
    r""":func:`signal_overlap_experiment` at :math:`n = d = N` for every size, target and seed,
    both batches of each draw (``batch="both"``), summarised by ``("target", "batch", "n")``:
    ``overlaps`` and ``overlaps_reuse`` :math:`|\langle u_k,\beta^\star_r\rangle|/\|u_k\|`,
    each of shape ``(4, r)`` (:math:`k = 0..3`), :math:`u_k = \frac1nX_2^\top(y_2\odot
    s^{\circ k})`, :math:`s = X_2v`, :math:`v = \frac1nX_1^\top y_1`.
    """
    # The targets of one rank share their draws at each size and seed (drawing the inputs is
    # most of a run's cost at n = d = 4000): one task per rank, size and seed
    # (signal_overlap_cases), each target's result bit for bit its own run's.
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


def signal_deviations(data: Summary, limits: Limits, target: str) -> np.ndarray:
    r"""``|measured - theory| / sem`` of the overlap of every :math:`u_k` with :math:`\beta^\star`
    (theory: the mean overlap at batch size :math:`n = N`), over batches, orders and sizes."""
    out = []
    for b in BATCHES:
        for k in limits.orders:
            Ns, mean, sem = data.series("overlaps", (k, 0), target=target, batch=b)
            out += [abs(m - limits.overlap(target, b, k, n=N)) / s for N, m, s in zip(Ns, mean, sem)]
    return np.array(out)


def plot_signal_overlaps(data: Summary, limits: Limits, targets: dict):
    r"""Figure: overlap of each :math:`u_k` with :math:`\beta^\star` against :math:`N`, one column per
    target in ``targets`` (name -> label), reused (top) and fresh (bottom) batch; theory mean
    at batch size :math:`n` dashed, chance :math:`1/\sqrt d` dotted."""
    Ns = data.axis()
    grid = width_grid(Ns)
    # A row of up to four targets per batch fits the 7-inch column (shared axes, labels outside).
    fig, axes = plt.subplots(2, len(targets), figsize=(7.0, 4.9), sharex=True, sharey=True,
                             squeeze=False)
    for col, (t, label) in enumerate(targets.items()):
        for row, b in enumerate(BATCHES):
            ax = axes[row, col]
            for k in limits.orders:
                # One open shape per order: where several orders sit at the same overlap
                # (the chance level, say), each still shows.
                errorbars(ax, *data.series("overlaps", (k, 0), target=t, batch=b),
                          color=K_COLORS[k], label=f"$u_{k}$", **_ORDER_MARKERS[k])
                ax.plot(grid, [limits.overlap(t, b, k, n=int(N)) for N in grid],
                        color=K_COLORS[k], lw=0.9, ls="--")
            ax.plot(grid, 1 / np.sqrt(grid), **_CHANCE)
            ax.set(yscale="log", ylim=(3e-3, 1.2))
            width_axis(ax, Ns, "$N$" if row == 1 else "")
            ax.tick_params(axis="x", labelrotation=45)
            ax.set_title(label)
            if col == 0:
                ax.set_ylabel(f"{b} batch\noverlap with $\\beta^\\star$")
    legend_from(fig, [(f"$u_{k}$, simulation", dict(color=K_COLORS[k], **_ORDER_MARKERS[k]))
                      for k in limits.orders]
                + [("theory, mean at this $n$", dict(color="k", ls="--", lw=0.9)),
                   (r"chance $1/\sqrt{d}$", _CHANCE)], loc="outside lower center", ncol=3)
    return finished(fig)


def signal_table(data: Summary, limits: Limits, targets: dict) -> tuple:
    r"""Two tables of the measured overlaps at the largest size, ``((header, rows), (header,
    rows))`` with the same rows: per target direction (``targets``: name -> label) and batch,
    means ± standard errors over seeds, then the theory's mean at batch size :math:`n`; columns
    :math:`u_0`, :math:`u_2`, :math:`\tilde u_2`, then the other orders."""
    N = data.axis()[-1]
    ka = limits.aware_order
    main_orders = [k for k in limits.orders if k in (0, ka)]
    other_orders = [k for k in limits.orders if k not in main_orders]
    main, other = [], []
    for t, label in targets.items():
        r = data.at("overlaps", target=t, batch=BATCHES[0], n=N).shape[1]
        for i in range(r):
            name = label + (f", $\\beta_{i + 1}$" if r > 1 else "")
            for b in BATCHES:
                at = lambda k, key: cell(data, key, (k, i), target=t, batch=b, n=N)  # noqa: E731
                theory = lambda k: f"{limits.overlap(t, b, k, n=N, index=i):.3f}"  # noqa: E731
                main.append([name, b] + [at(k, "overlaps") for k in main_orders]
                            + [at(ka, "overlaps_reuse")])
                main.append([name, "theory"] + [theory(k) for k in main_orders]
                            + [f"{limits.overlap(t, b, n=N, index=i, aware=True):.3f}"])
                other.append([name, b] + [at(k, "overlaps") for k in other_orders])
                other.append([name, "theory"] + [theory(k) for k in other_orders])
    return ((["target", "batch"] + [f"$u_{k}$" for k in main_orders] + [f"$\\tilde u_{ka}$"], main),
            (["target", "batch"] + [f"$u_{k}$" for k in other_orders], other))


def plot_two_index(data: Summary, limits: Limits, target: str):
    r"""Figure for a two-index target: overlap of :math:`u_0` with :math:`\beta_1` (left) and of
    :math:`u_2` and :math:`\tilde u_2` with :math:`\beta_2` (right) against :math:`N`, both batches,
    theory mean at batch size :math:`n` and chance :math:`1/\sqrt d`."""
    Ns = data.axis()
    grid = width_grid(Ns)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.0, 3.9), sharey=True)
    for b in BATCH_ORDER:
        # u_0 is the first step's direction, the same for both batches up to sampling: the
        # fresh batch is a larger ring around the reused dot.
        errorbars(ax1, *data.series("overlaps", (0, 0), target=target, batch=b), color=COLORS[b],
                  label=f"$u_0$, {b}", **({"mfc": "none", "ms": 6} if b == "fresh" else {}))
        ax1.plot(grid, [limits.overlap(target, b, 0, n=int(N)) for N in grid],
                 color=COLORS[b], lw=0.9, ls="--")
        for key, marker, ls, name, aware in (("overlaps", "o", "--", "u_2", False),
                                             ("overlaps_reuse", "s", "-", r"\tilde u_2", True)):
            if b == "fresh" and aware:
                continue   # without a self-term the reuse-aware weight is mu_3 (mu_1 s)^2: the same direction
            if b == "fresh":
                name = r"u_2 = \tilde u_2"
            errorbars(ax2, *data.series(key, (2, 1), target=target, batch=b), color=COLORS[b],
                      marker=marker, mfc="white" if marker == "s" else None, label=f"${name}$, {b}")
            ax2.plot(grid, [limits.overlap(target, b, 2, n=int(N), index=1, aware=aware)
                            for N in grid], color=COLORS[b], lw=0.9, ls=ls)
    for ax, title in ((ax1, "$\\beta_1$ (linear part)"),
                      (ax2, "$\\beta_2$ (odd, inf. exp. 3)")):
        # labelled once, in the right panel: the chance line is the legend's last entry
        ax.plot(grid, 1 / np.sqrt(grid), **_CHANCE,
                label=r"chance $1/\sqrt{d}$" if ax is ax2 else None)
        ax.set(yscale="log", title=title, ylim=(3e-3, 1.2))
        width_axis(ax, Ns)
    ax1.set_ylabel("overlap with the direction")
    # One legend below both panels: it covers no data or theory line.
    (h1, l1), (h2, l2) = ax1.get_legend_handles_labels(), ax2.get_legend_handles_labels()
    fig.legend(h1 + h2, l1 + l2, loc="outside lower center", ncol=3)
    return finished(fig)


def network_data(Ns, targets, steps, seeds, alpha2s=None, extra_seeds=(), extra_point=None,
                 top: int = 8, n_jobs: int = 1, dtype="float64") -> Summary:
    r""":func:`reuse_experiment` (exact term :math:`T_2`) for every size :math:`N = n = d`,
    target and seed, both batches of each draw (``batch="both"``), summarised by
    ``("target", "batch", "N")`` (:data:`NETWORK_VALUES`); ``alpha2s`` maps a target to the
    exponents :math:`\alpha_2'` at which its draws are also rescaled, ``extra_seeds`` run only
    at ``extra_point = (target, batch, N)``, after the grid."""
    alpha2s, targets = alpha2s or {}, list(targets)
    (c1, alpha1), (c2, alpha2) = steps
    common = dict(c1=c1, alpha1=alpha1, c2=c2, alpha2=alpha2, top=top, dtype=dtype)
    # The targets are single-index: at each width and seed their runs are one draw, which one
    # task (reuse_cases) draws once, with its first pre-activations W0 X1^T and W0 X2^T.
    tasks = [(dict(N=N, targets=targets, batch="both",
                   alpha2s=[list(alpha2s.get(t, [])) for t in targets], **common), s)
             for N in Ns for s in seeds]
    if extra_seeds:
        t, b, N = extra_point
        tasks += [(dict(N=N, targets=[t], batch=b, alpha2s=[list(alpha2s.get(t, []))],
                        **common), s) for s in extra_seeds]
    # One pool for the grid and the extra runs, the costliest first: the longest tasks start
    # first and the short ones fill the cores at the end.
    done = run_tasks(reuse_cases, tasks, n_jobs=n_jobs,
                     cost=lambda p: p["N"] ** 3 * len(p["targets"]) * (2 if p["batch"] == "both"
                                                                      else 1))
    runs = split_cases(done, "targets", "target", order=lambda r: targets.index(r["target"]))
    return Summary(split_batches([r for r in runs if r["batch"] == "both"], BATCHES)
                   + [r for r in runs if r["batch"] != "both"],
                   ("target", "batch", "N"), NETWORK_VALUES)


def plot_term(net: Summary, limits: Limits, targets: dict):
    r"""Figure: overlap with :math:`\beta^\star` of the top right singular vector of the exact
    :math:`T_2` (left, with the theory of :math:`\tilde u_2` and chance :math:`1/\sqrt d`) and its
    memorisation :math:`\max_j|\cos(\cdot,x_j)|` (right, with :math:`\sqrt{2\log n/d}`), against
    :math:`N`, for the two targets of ``targets`` (name -> label)."""
    Ns = net.axis()
    grid = width_grid(Ns)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.0, 4.2))
    for (t, label), style in zip(targets.items(), _TARGET_STYLES):
        for b in BATCH_ORDER:
            errorbars(ax1, *net.series("term_overlap", 0, target=t, batch=b), color=COLORS[b],
                      label=f"{label}, {b}", **style)
            errorbars(ax2, *net.series("term_memorisation", target=t, batch=b), color=COLORS[b],
                      label=f"{label}, {b}", **style)
        ax1.plot(grid, [limits.overlap(t, "reused", n=int(N), aware=True) for N in grid],
                 color=COLORS["theory"], lw=1, ls=style["ls"], label=rf"$\tilde u_2$, theory, {label}")
    ax1.plot(grid, 1 / np.sqrt(grid), **_CHANCE, label=r"chance $1/\sqrt{d}$")
    ax1.set(yscale="log", ylim=(3e-3, 1), ylabel=r"overlap with $\beta^\star$",
            title=r"top right singular vector of $T_2$")
    ax2.plot(grid, chance_maximum(grid, grid), **_CHANCE,
             label=r"unrelated vector $\sqrt{2\log n/d}$")
    ax2.set(ylim=(0, 1.05), ylabel=r"$\max_j|\cos(\cdot, x_j)|$", title="its memorisation")
    for ax in (ax1, ax2):
        width_axis(ax, Ns)
    handles = ax1.get_legend_handles_labels()[0] + [h for h, lab in zip(*ax2.get_legend_handles_labels())
                                                   if lab.startswith("unrelated")]
    fig.legend(handles=handles, loc="outside lower center", ncol=3)
    return finished(fig)


def _subspace_panel(ax, series, Ns, K: int, limit: float, labels) -> None:
    # The learned subspace's overlap per batch (series(key, batch) -> x, mean, sem), memorised
    # inputs set aside and raw (larger faint open rings: where nothing is memorised, a fresh
    # batch, they are the filled values and must not cover them), with the chance level
    # sqrt(K/d) of a random K-dimensional subspace and the limit of u~2; labels: the suffixes
    # of the two kinds of series, and the chance line's label.
    grid = width_grid(Ns)
    for b in BATCH_ORDER:
        for key, mfc, ms, ls, alpha, name in (("subspace_unmemorised", None, 4, "-", 1.0, labels[0]),
                                              ("subspace", "none", 6, ":", 0.5, labels[1])):
            errorbars(ax, *series(key, b), color=COLORS[b], mfc=mfc, ms=ms, ls=ls, alpha=alpha,
                      label=b + name)
    ax.plot(grid, np.sqrt(K / grid), **_CHANCE, label=labels[2])
    ax.axhline(limit, color=COLORS["theory"], lw=1, label=r"limit of $\tilde u_2$")


def plot_learned_subspace(net: Summary, limits: Limits, targets: dict, K: int):
    r"""Figure: overlap with :math:`\beta^\star` of the span of :math:`W_2`'s top ``K`` right
    singular vectors, raw and with memorised inputs set aside, one panel per target of the two
    in ``targets`` (with the limit of :math:`\tilde u_2` and chance :math:`\sqrt{K/d}`), and the
    memorisation of the top right vector (last panel), against :math:`N`."""
    Ns = net.axis()
    grid = width_grid(Ns)
    # 2 x 2: the two targets above, the memorisation and the legends below.
    fig, grid_axes = plt.subplots(2, 2, figsize=(7.0, 6.8))
    axes = [grid_axes[0, 0], grid_axes[0, 1], grid_axes[1, 0]]
    legend_ax = grid_axes[1, 1]
    legend_ax.axis("off")
    for ax, (t, label) in zip(axes[:-1], targets.items()):
        _subspace_panel(ax, lambda key, b: net.series(key, (K - 1, 0), target=t, batch=b), Ns, K,
                        limits.overlap(t, "reused", aware=True),
                        (", memorised set aside", ", raw", rf"chance $\sqrt{{{K}/d}}$"))
        ax.set(yscale="log", ylim=(1e-3, 1), title=f"{label}: top {K} of $W_2$")
        width_axis(ax, Ns)
    axes[0].set_ylabel(r"overlap of the span with $\beta^\star$")
    for (t, label), style in zip(targets.items(), _TARGET_STYLES):
        for b in BATCH_ORDER:
            errorbars(axes[-1], *net.series("top_memorisation", 0, target=t, batch=b),
                      color=COLORS[b], label=f"{label}, {b}", **style)
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
    return finished(fig)


def network_table(net: Summary, targets: dict, K: int) -> tuple:
    r"""Two tables of the trained network, ``((header, rows), (header, rows))``, one row per target,
    batch and size: :math:`T_2`'s top right singular vector (overlap with :math:`\beta^\star`,
    memorisation) and :math:`\tilde u_2` of the same runs; :math:`s_1(W_2)`, its right vector's
    overlap and memorisation, and the span of its top ``K`` (raw, memorised inputs set aside)."""
    term_rows, w2_rows = [], []
    for t, label in targets.items():
        for b in BATCHES:
            for N in net.axis(target=t, batch=b):
                p = dict(target=t, batch=b, N=N)
                term_rows.append([label, b, str(N), cell(net, "term_overlap", 0, **p),
                                  cell(net, "term_memorisation", (), 2, **p),
                                  cell(net, "signal_reuse", 0, **p)])
                w2_rows.append([label, b, str(N), f"{net.at('top_values', 0, **p):.1f}",
                                f"{net.at('top_overlap', (0, 0), **p):.3f}",
                                f"{net.at('top_memorisation', 0, **p):.2f}",
                                f"{net.at('subspace', (K - 1, 0), **p):.3f}",
                                cell(net, "subspace_unmemorised", (K - 1, 0), **p)])
    return ((["target", "batch", "$N$", "$T_2$ overlap", "$T_2$ mem.", "$\\tilde u_2$"], term_rows),
            (["target", "batch", "$N$", "$s_1(W_2)$", "overlap", "mem.", "span, raw",
              "span, set aside"], w2_rows))


def span_chance(net: Summary, K: int) -> str:
    r"""The chance level :math:`\sqrt{K/d}` of a ``K``-dimensional span at each size of ``net``,
    for a caption: "0.077, 0.055 at :math:`N = ` 500, 1000"."""
    Ns = net.axis()
    return (", ".join(f"{chance_overlap(N, K):.3f}" for N in Ns) + " at $N = $ "
            + ", ".join(str(N) for N in Ns))


def lambda_data(net: Summary, target: str, alpha1: float, alpha2: float, alpha2s,
                L: int) -> dict:
    r"""The learned subspace of ``target``'s runs at each :math:`\alpha_2'` in ``alpha2s``: at the
    runs' own ``alpha2`` as trained, at the others from the rescaled draws of
    :func:`network_data` (whose ``alpha2s`` are these without ``alpha2``, in order). Returns
    ``summary`` (by ``("alpha2", "batch", "N")``: :data:`LAMBDA_VALUES` of the top
    :math:`1+\Lambda` right vectors), ``alpha1`` and ``n_spikes``, ``alpha2 -> Lambda``."""
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


def lambda_fresh_ratio(lam: dict) -> float:
    r"""The largest ratio, over :math:`\alpha_2`, of the fresh batch's learned-subspace overlap
    (memorised inputs set aside) at the largest width to the chance level
    :math:`\sqrt{(1+\Lambda)/d}` of a random subspace of that dimension."""
    N = lam["summary"].axis()[-1]
    return max(lam["summary"].at("subspace_unmemorised", alpha2=a2, batch="fresh", N=N)
               / chance_overlap(N, 1 + k) for a2, k in lam["n_spikes"].items())


def plot_lambda(lam: dict, limits: Limits, target: str = "odd"):
    r"""Figure: one panel per :math:`\alpha_2`, the learned subspace of :func:`plot_learned_subspace`
    for the top :math:`1+\Lambda` right vectors of :math:`W_2` against :math:`N`."""
    summary, lams = lam["summary"], lam["n_spikes"]
    Ns, alpha2s = summary.axis(), list(lams)
    # Two panels a row: the 7-inch column holds two log-N axes at full font size.
    ncols = min(2, len(alpha2s))
    nrows = -(-len(alpha2s) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.0, 1.2 + 2.5 * nrows), sharex=True,
                             sharey=True, squeeze=False)
    for ax in axes.flat[len(alpha2s):]:
        ax.remove()
    left = [row[0] for row in axes]
    axes = axes.flat[:len(alpha2s)]
    for i, (ax, a2) in enumerate(zip(axes, alpha2s)):
        _subspace_panel(ax, lambda key, b: summary.series(key, alpha2=a2, batch=b), Ns,
                        1 + lams[a2], limits.overlap(target, "reused", aware=True),
                        ("", ", raw", "chance"))
        ax.set(yscale="log", ylim=(5e-3, 0.6),
               title=rf"$\alpha_2 = {a2}$: $\Lambda = {lams[a2]}$, "
                     rf"$e_2 = {spike_exponent(2, lam['alpha1'], a2):+.2f}$")
        if i + ncols >= len(alpha2s):       # nothing below it: its N axis is labelled
            width_axis(ax, Ns, "$N$")
            ax.xaxis.set_tick_params(labelbottom=True)
        else:
            width_axis(ax, Ns, "")
    for ax in left:
        ax.set_ylabel(r"overlap with $\beta^\star$")
    legend_below(fig, axes[0], 3)
    return finished(fig)


def lambda_table(lam: dict) -> tuple:
    r"""``(header, rows)`` of :func:`lambda_data`: per :math:`\Lambda` and batch, the overlap ±
    standard error of the learned subspace (memorised inputs set aside) at each size, and the
    chance level :math:`\sqrt{(1+\Lambda)/d}`."""
    summary = lam["summary"]
    Ns, rows = summary.axis(), []
    for a2, k in lam["n_spikes"].items():
        rows += [[str(k), b] + [cell(summary, "subspace_unmemorised", alpha2=a2, batch=b, N=N)
                                for N in Ns] for b in BATCHES]
        rows.append([str(k), "chance"] + [f"{chance_overlap(N, 1 + k):.3f}" for N in Ns])
    return ["$\\Lambda$", "batch"] + [f"$N = {N}$" for N in Ns], rows
