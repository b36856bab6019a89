r"""Chapter *Reused versus fresh batches*: its sweeps, figures and tables.

The single runs are in :mod:`twostep.experiments.reuse`: ``signal_overlap_experiment``
measures, from data alone, the overlaps of the signal directions :math:`u_k` (and of the
reuse-aware :math:`\tilde u_k`) with the target directions; ``reuse_experiment`` trains the
network and measures where the top singular vectors of :math:`W_2` and of the exact term
:math:`T_k` point; ``paired_reuse_experiment`` runs both batches on one draw.

The chapter calls one compute and one plot function per figure:

* :func:`population_limits` (large-:math:`n` limits by quadrature, :mod:`twostep.analysis.population`)
  and :func:`limits_table`; the moments :func:`cubed_link_moment`, :math:`\mathbb E[g^3z]`, and
  :func:`self_term_moment`, :math:`\mathbb E[\sigma'''\sigma'^2]`;
* :func:`signal_data` with :func:`plot_signal_overlaps`, :func:`plot_two_index`,
  :func:`signal_table` and :func:`signal_deviations`;
* :func:`network_data` with :func:`plot_term`, :func:`plot_learned_subspace`,
  :func:`network_table` and :func:`typical_max_label`;
* :func:`lambda_data` with :func:`plot_lambda` and :func:`lambda_table`.

The compute functions return small dataclasses (:class:`Limits`, :class:`SignalData`,
:class:`NetworkData`, :class:`LambdaData`) whose ``at`` methods give the numbers the prose quotes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_alpha, check_int, check_pairs, check_rng
from ..analysis.alignment import chance_maximum
from ..analysis.population import Limits, cubed_link_moment
from ..analysis.sweep import summarise, sweep
from ..analysis.theory import n_spikes, spike_exponent
from ..experiments.reuse import (reuse_experiment,
                                 signal_overlap_experiment)
from ..model.steps import BATCHES
from ..model.targets import get_link
from .figures import COLORS, errorbars, width_axis, width_grid
from .report import markdown_table, tables




# ---------------------------------------------------------------------------------------------
# The chapter's figures and tables: one compute function and one plot function per figure.
# ---------------------------------------------------------------------------------------------

#: One colour per order :math:`k` of the signal directions :math:`u_k`.
K_COLORS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a")
_SUMMARY_KEYS = ("signal_reuse", "term_overlap", "term_memorisation", "top_values", "top_overlap",
                 "top_memorisation", "subspace", "subspace_unmemorised")
_LAMBDA_KEYS = ("subspace", "subspace_unmemorised")


def _check_sizes(Ns, name: str = "Ns") -> tuple:
    if isinstance(Ns, (str, bytes)) or not hasattr(Ns, "__iter__"):
        raise TypeError(f"{name} must be a sequence of integers >= 2, got {Ns!r}")
    Ns = tuple(check_int(N, f"{name}[{i}]", 2) for i, N in enumerate(Ns))
    if not Ns or any(b <= a for a, b in zip(Ns, Ns[1:])):
        raise ValueError(f"{name} must be a non-empty increasing sequence of sizes, got {Ns}")
    return Ns


def _check_names(targets, name: str = "targets") -> list:
    if isinstance(targets, (str, bytes)) or not hasattr(targets, "__iter__"):
        raise TypeError(f"{name} must be a sequence (or dict) of target names, got {targets!r}")
    targets = list(targets)
    if not targets or not all(isinstance(t, str) for t in targets):
        raise TypeError(f"{name} must be a non-empty sequence of target names, got {targets!r}")
    return targets


def _check_seeds(seeds, name: str = "seeds") -> list:
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
        raise TypeError(f"{name} must be a sequence of integers >= 0, got {seeds!r}")
    return [check_int(s, f"{name}[{i}]", 0) for i, s in enumerate(seeds)]


def _check_type(value, name: str, cls):
    if not isinstance(value, cls):
        raise TypeError(f"{name} must be a {cls.__name__} (from the chapter's compute functions), "
                        f"got {type(value).__name__}")
    return value



def limits_table(limits: Limits, targets: dict):
    r"""Table of :func:`population_limits`, one column per single-index target (``targets`` maps
    target names to column headers): its information exponent, :math:`\mathbb E[g^3z]`, and one row
    per batch and order for the limit of :math:`u_k`, then the reuse-aware :math:`\tilde u_2`
    (reused). Transposed (targets as columns) so that it fits the text column."""
    _check_type(limits, "limits", Limits)
    if not isinstance(targets, dict):
        raise TypeError(f"targets must be a dict of target name -> label, got {type(targets).__name__}")
    fmt = lambda x: "0" if abs(x) < 5e-4 else f"{x:.3f}"
    rows = [["inf. exp."] + [str(get_link(t).information_exponent) for t in targets],
            ["$\\mathbb E[g^3z]$"] + [f"{cubed_link_moment(t):.3f}" for t in targets]]
    rows += [[f"{b} $u_{k}$"] + [fmt(limits.overlap(t, b, k)) for t in targets]
             for b in BATCHES for k in limits.orders]
    rows.append(["reused $\\tilde u_2$"] + [fmt(limits.overlap(t, "reused", aware=True))
                                            for t in targets])
    return markdown_table(
        "Large-$n$ overlap of $u_k$ with $\\beta^\\star$ at $\\psi = 1$ "
        "(Gauss–Hermite quadrature of the limit derived above), and of the reuse-aware "
        "$\\tilde u_2$; one column per target, with its information exponent and "
        "$\\mathbb E[g^3z]$.",
        "tab-reuse-limits", ["", *targets.values()], rows)


@dataclass
class SignalData:
    r"""Measured overlaps of the :math:`u_k` over seeds (:func:`signal_data`).

    ``summary[target, batch, N]`` holds ``overlaps`` and ``overlaps_reuse``, each
    ``(len(orders), r)`` means over seeds, their ``*_sem`` and ``count``.
    """

    Ns: tuple
    records: list
    summary: dict

    def at(self, target: str, batch: str, k: int, N: int | None = None, key: str = "overlaps",
           index: int = 0, sem: bool = False) -> float:
        """Mean (or with ``sem=True`` its standard error) of ``key[k, index]`` at ``N`` (default
        the largest size)."""
        entry = self.summary[target, batch, self.Ns[-1] if N is None else N]
        return float(entry[key + ("_sem" if sem else "")][k, index])

    def series(self, target: str, batch: str, key: str, index) -> tuple:
        """Means and standard errors against ``Ns`` of ``summary[...][key][index]``, each ``(len(Ns),)``."""
        mean = np.array([self.summary[target, batch, N][key][index] for N in self.Ns])
        sem = np.array([self.summary[target, batch, N][key + "_sem"][index] for N in self.Ns])
        return mean, sem


def signal_data(Ns, targets, seeds, activation, ks=(0, 1, 2, 3), n_jobs: int = 1) -> SignalData:
    r""":func:`signal_overlap_experiment` at :math:`n = d = N` for every size, target, batch and
    seed, summarised over seeds.

    :math:`u_k = \frac1nX_2^\top(y_2\odot s^{\circ k})`, :math:`s = X_2v`,
    :math:`v = \frac1nX_1^\top y_1`; the overlaps are :math:`|\langle u_k,\beta^\star_r\rangle|/\|u_k\|`.
    """
    Ns, targets, seeds = _check_sizes(Ns), _check_names(targets), _check_seeds(seeds)
    grid = [dict(n=N, d=N, target=t, batch=b, activation=activation, ks=tuple(ks))
            for t in targets for b in BATCHES for N in Ns]
    records = sweep(signal_overlap_experiment, grid, seeds=seeds, n_jobs=check_int(n_jobs, "n_jobs"))
    summary = {(e["target"], e["batch"], e["n"]): e
               for e in summarise(records, by=["target", "batch", "n"],
                                  values=["overlaps", "overlaps_reuse"])}
    return SignalData(Ns, records, summary)


def signal_deviations(data: SignalData, limits: Limits, target: str) -> np.ndarray:
    r"""``|measured - theory| / sem`` of the overlap of every :math:`u_k` with :math:`\beta^\star`,
    theory being the mean overlap at batch size :math:`n = N`; shape ``(2 len(orders) len(Ns),)``,
    ordered by batch, order, size."""
    _check_type(data, "data", SignalData)
    _check_type(limits, "limits", Limits)
    return np.array([abs(data.at(target, b, k, N) - limits.overlap(target, b, k, n=N))
                     / data.at(target, b, k, N, sem=True)
                     for b in BATCHES for k in limits.orders for N in data.Ns])


def _order_marker(k: int) -> dict:
    # The marker of order k in the overlap figures: open, its own shape, larger with k.
    return {"marker": "osD^v"[k % 5], "mfc": "none", "ms": 4 + 0.8 * k}


def plot_signal_overlaps(data: SignalData, limits: Limits, targets: dict):
    r"""Figure: overlap of each :math:`u_k` with :math:`\beta^\star` against :math:`N`, one column per
    single-index target in ``targets`` (name -> label), reused (top) and fresh (bottom) batch;
    theory mean at batch size :math:`n` dashed, chance :math:`1/\sqrt d` dotted."""
    import matplotlib.pyplot as plt

    _check_type(data, "data", SignalData)
    _check_type(limits, "limits", Limits)
    Ns, grid = data.Ns, width_grid(data.Ns)
    ncol = len(targets)
    # A row of up to four targets per batch fits the 7-inch column (shared axes, labels outside).
    fig, axes = plt.subplots(2, ncol, figsize=(7.0, 4.9), sharex=True, sharey=True,
                             squeeze=False)
    for col, (t, label) in enumerate(targets.items()):
        for row, b in enumerate(BATCHES):
            ax = axes[row, col]
            for k in limits.orders:
                mean, sem = data.series(t, b, "overlaps", (k, 0))
                # One open shape per order: where several orders sit at the same overlap
                # (the chance level, say), each still shows.
                errorbars(ax, Ns, mean, sem, color=K_COLORS[k], label=f"$u_{k}$",
                          **_order_marker(k))
                ax.plot(grid, [limits.overlap(t, b, k, n=int(N)) for N in grid],
                        color=K_COLORS[k], lw=0.9, ls="--")
            ax.plot(grid, 1 / np.sqrt(grid), color=COLORS["chance"], ls=":", lw=1.2)
            ax.set(yscale="log", ylim=(3e-3, 1.2))
            width_axis(ax, Ns, "$N$" if row == 1 else "")
            ax.tick_params(axis="x", labelrotation=45)
            ax.set_title(label)
            if col == 0:
                ax.set_ylabel(f"{b} batch\noverlap with $\\beta^\\star$")
    handles = [plt.Line2D([], [], color=K_COLORS[k], **_order_marker(k),
                          label=f"$u_{k}$, simulation") for k in limits.orders]
    handles += [plt.Line2D([], [], color="k", ls="--", lw=0.9, label="theory, mean at this $n$"),
                plt.Line2D([], [], color=COLORS["chance"], ls=":", lw=1.2, label=r"chance $1/\sqrt{d}$")]
    fig.legend(handles=handles, loc="outside lower center", ncol=3)
    plt.close(fig)
    return fig


def signal_table(data: SignalData, limits: Limits, targets: dict, N: int | None = None):
    r"""Two tables of the measured overlaps at size ``N`` (default the largest), with the same
    rows: per target direction and batch a row of means ± standard errors over seeds, followed
    by a row of the theory's mean at batch size :math:`n`. *tab-reuse-measured* has the columns
    :math:`u_0`, :math:`u_2` and :math:`\tilde u_2`, *tab-reuse-measured-odd* the other orders
    (:math:`u_1`, :math:`u_3`). ``targets`` maps names to labels; a target with several
    directions gets rows per direction. Returned as one Markdown output."""
    _check_type(data, "data", SignalData)
    _check_type(limits, "limits", Limits)
    N = data.Ns[-1] if N is None else check_int(N, "N")
    if N not in data.Ns:
        raise ValueError(f"N must be one of the simulated sizes {data.Ns}, got {N}")
    ka = limits.aware_order
    main_orders = [k for k in limits.orders if k in (0, ka)]
    other_orders = [k for k in limits.orders if k not in main_orders]
    main, other = [], []
    for t, label in targets.items():
        r = data.summary[t, BATCHES[0], N]["overlaps"].shape[1]
        for i in range(r):
            name = label + (f", $\\beta_{i + 1}$" if r > 1 else "")
            for b in BATCHES:
                cell = lambda k, key: (f"{data.at(t, b, k, N, key, i):.3f} ± "
                                       f"{data.at(t, b, k, N, key, i, sem=True):.3f}")
                theory = lambda k: f"{limits.overlap(t, b, k, n=N, index=i):.3f}"
                main.append([name, b] + [cell(k, "overlaps") for k in main_orders]
                            + [cell(ka, "overlaps_reuse")])
                main.append([name, "theory"] + [theory(k) for k in main_orders]
                            + [f"{limits.overlap(t, b, n=N, index=i, aware=True):.3f}"])
                other.append([name, b] + [cell(k, "overlaps") for k in other_orders])
                other.append([name, "theory"] + [theory(k) for k in other_orders])
    count = data.summary[next(iter(targets)), BATCHES[0], N]['count']
    what = (f"at $N = n = d = {N}$: mean ± standard error over {count} draws of the data; below "
            "each batch's row (theory), the theory's mean overlap for that batch at this $n$ (the "
            "finite-$n$ formula above).")
    shown = [markdown_table(
        f"Overlaps of $u_0$, $u_2$ and $\\tilde u_2$ with the target directions {what}",
        "tab-reuse-measured",
        ["target", "batch"] + [f"$u_{k}$" for k in main_orders] + [f"$\\tilde u_{ka}$"], main)]
    if other_orders:
        orders = " and ".join(f"$u_{k}$" for k in other_orders)
        shown.append(markdown_table(
            f"The other orders, {orders}, with the rows of the table above, {what}",
            "tab-reuse-measured-odd",
            ["target", "batch"] + [f"$u_{k}$" for k in other_orders], other))
    return tables(*shown)


def plot_two_index(data: SignalData, limits: Limits, target: str):
    r"""Figure for a two-index target: overlap of :math:`u_0` with :math:`\beta_1` (left) and of
    :math:`u_2` and :math:`\tilde u_2` with :math:`\beta_2` (right) against :math:`N`, both batches,
    theory mean at batch size :math:`n` and chance :math:`1/\sqrt d`."""
    import matplotlib.pyplot as plt

    _check_type(data, "data", SignalData)
    _check_type(limits, "limits", Limits)
    Ns, grid = data.Ns, width_grid(data.Ns)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.0, 3.9), sharey=True)
    for b in BATCHES:
        mean, sem = data.series(target, b, "overlaps", (0, 0))
        # u_0 is the first step's direction, the same for both batches up to sampling: the
        # fresh batch, drawn second, is a ring around the reused dot.
        errorbars(ax1, Ns, mean, sem, color=COLORS[b], label=f"$u_0$, {b}",
                  **({"mfc": "none", "ms": 6} if b == "fresh" else {}))
        ax1.plot(grid, [limits.overlap(target, b, 0, n=int(N)) for N in grid],
                 color=COLORS[b], lw=0.9, ls="--")
        for key, marker, ls, name, aware in (("overlaps", "o", "--", "u_2", False),
                                             ("overlaps_reuse", "s", "-", r"\tilde u_2", True)):
            if b == "fresh" and aware:
                continue   # without a self-term the reuse-aware weight is mu_3 (mu_1 s)^2: the same direction
            if b == "fresh":
                name = r"u_2 = \tilde u_2"
            mean, sem = data.series(target, b, key, (2, 1))
            errorbars(ax2, Ns, mean, sem, color=COLORS[b], marker=marker,
                      mfc="white" if marker == "s" else None, label=f"${name}$, {b}")
            ax2.plot(grid, [limits.overlap(target, b, 2, n=int(N), index=1, aware=aware) for N in grid],
                     color=COLORS[b], lw=0.9, ls=ls)
    for ax, title in ((ax1, "$\\beta_1$ (linear part)"),
                      (ax2, "$\\beta_2$ (odd, inf. exp. 3)")):
        ax.plot(grid, 1 / np.sqrt(grid), color=COLORS["chance"], ls=":", lw=1.2, label=r"chance $1/\sqrt{d}$")
        ax.set(yscale="log", title=title, ylim=(3e-3, 1.2))
        width_axis(ax, Ns)
    ax1.set_ylabel("overlap with the direction")
    # One legend below both panels: it covers no data or theory line.
    h1, l1 = ax1.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    keep = [(h, lab) for h, lab in zip(h1 + h2, l1 + l2) if not lab.startswith("chance")]
    keep.append((h1[l1.index(r"chance $1/\sqrt{d}$")], r"chance $1/\sqrt{d}$"))
    fig.legend(*zip(*keep), loc="outside lower center", ncol=3)
    plt.close(fig)
    return fig


@dataclass
class NetworkData:
    r"""Trained-network measurements over seeds (:func:`network_data`).

    ``summary[target, batch, N]`` holds the means, ``*_sem`` and ``count`` of
    :func:`reuse_experiment`'s ``signal_reuse``, ``term_*``, ``top_*`` and ``subspace*``.
    """

    Ns: tuple
    records: list
    summary: dict

    def at(self, target: str, batch: str, key: str, N: int | None = None, sem: bool = False):
        """Mean (or its standard error) of ``key`` at ``N`` (default the largest size)."""
        return self.summary[target, batch, self.Ns[-1] if N is None else N][key + ("_sem" if sem else "")]

    def series(self, target: str, batch: str, key: str, index=()) -> tuple:
        """Means and standard errors against ``Ns`` of ``summary[...][key][index]``, each ``(len(Ns),)``."""
        mean = np.array([self.summary[target, batch, N][key][index] for N in self.Ns])
        sem = np.array([self.summary[target, batch, N][key + "_sem"][index] for N in self.Ns])
        return mean, sem

    def seed_values(self, target: str, batch: str, key: str, N: int | None = None, index=()) -> np.ndarray:
        """``key[index]`` of every run at one point, in run order, shape ``(count,)``."""
        N = self.Ns[-1] if N is None else N
        return np.array([r[key][index] for r in self.records
                         if (r["target"], r["batch"], r["N"]) == (target, batch, N)])


def network_data(Ns, targets, steps, seeds, alpha2s=None, extra_seeds=(), extra_point=None,
                 top: int = 8, term: int = 2, n_jobs: int = 1, dtype="float64") -> NetworkData:
    r""":func:`reuse_experiment` for every size :math:`N = n = d`, target, batch and seed.

    ``alpha2s`` maps a target to the other exponents :math:`\alpha_2'` at which its draws are
    rescaled (:math:`W_2' = W_1 + (\eta_2'/\eta_2)(W_2 - W_1)`); ``extra_seeds`` are run only at
    ``extra_point = (target, batch, N)``. The records keep that order: the grid, then the extra runs.
    ``dtype`` is passed to :func:`reuse_experiment`.
    """
    Ns, targets, seeds = _check_sizes(Ns), _check_names(targets), _check_seeds(seeds)
    extra_seeds = _check_seeds(extra_seeds, "extra_seeds")
    alpha2s = {} if alpha2s is None else alpha2s
    if not isinstance(alpha2s, dict):
        raise TypeError(f"alpha2s must be a dict of target -> exponents, got {type(alpha2s).__name__}")
    n_jobs = check_int(n_jobs, "n_jobs")
    (c1, alpha1), (c2, alpha2) = check_pairs(steps, "steps", "a (c, alpha) pair")
    grid = [dict(N=N, target=t, batch=b, c1=c1, alpha1=alpha1, c2=c2, alpha2=alpha2, term=term,
                 top=top, alpha2s=list(alpha2s.get(t, [])), dtype=dtype)
            for t in targets for b in BATCHES for N in Ns]
    records = sweep(reuse_experiment, grid, seeds=seeds, n_jobs=n_jobs)
    if extra_seeds:
        key = tuple(extra_point) if isinstance(extra_point, (tuple, list)) else None
        point = [g for g in grid if (g["target"], g["batch"], g["N"]) == key]
        if not point:
            raise ValueError(f"extra_point must be a (target, batch, N) of the grid, got {extra_point!r}")
        records += sweep(reuse_experiment, point, seeds=extra_seeds, n_jobs=n_jobs)
    summary = {(e["target"], e["batch"], e["N"]): e
               for e in summarise(records, by=["target", "batch", "N"], values=list(_SUMMARY_KEYS))}
    return NetworkData(Ns, records, summary)


def _seed_note(net: NetworkData) -> str:
    counts = sorted({e["count"] for e in net.summary.values()})
    return " to ".join(str(c) for c in (counts[0], counts[-1])) if len(counts) > 1 else str(counts[0])


def plot_term(net: NetworkData, limits: Limits, targets: dict):
    r"""Figure: overlap with :math:`\beta^\star` of the top right singular vector of the exact
    :math:`T_2` (left, with the theory of :math:`\tilde u_2` and chance :math:`1/\sqrt d`) and its
    memorisation :math:`\max_j|\cos(\cdot,x_j)|` (right, with :math:`\sqrt{2\log n/d}`), against
    :math:`N`; ``targets`` maps the two simulated targets to labels (first: filled, solid)."""
    import matplotlib.pyplot as plt

    _check_type(net, "net", NetworkData)
    _check_type(limits, "limits", Limits)
    Ns, grid = net.Ns, width_grid(net.Ns)
    first = next(iter(targets))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.0, 4.2))
    for t, label in targets.items():
        style = dict(marker="o" if t == first else "s", mfc=None if t == first else "white",
                     ls="-" if t == first else "--")
        for b in BATCHES:
            errorbars(ax1, Ns, *net.series(t, b, "term_overlap", 0), color=COLORS[b],
                      label=f"{label}, {b}", **style)
            errorbars(ax2, Ns, *net.series(t, b, "term_memorisation"), color=COLORS[b],
                      label=f"{label}, {b}", **style)
        ax1.plot(grid, [limits.overlap(t, "reused", n=int(N), aware=True) for N in grid],
                 color=COLORS["theory"], lw=1, ls=style["ls"], label=rf"$\tilde u_2$, theory, {label}")
    ax1.plot(grid, 1 / np.sqrt(grid), color=COLORS["chance"], ls=":", lw=1.2, label=r"chance $1/\sqrt{d}$")
    ax1.set(yscale="log", ylim=(3e-3, 1), ylabel=r"overlap with $\beta^\star$",
            title=r"top right singular vector of $T_2$")
    ax2.plot(grid, chance_maximum(grid, grid), color=COLORS["chance"], ls=":", lw=1.2,
             label=r"unrelated vector $\sqrt{2\log n/d}$")
    ax2.set(ylim=(0, 1.05), ylabel=r"$\max_j|\cos(\cdot, x_j)|$", title="its memorisation")
    for ax in (ax1, ax2):
        width_axis(ax, Ns)
    handles = ax1.get_legend_handles_labels()[0] + [h for h, lab in zip(*ax2.get_legend_handles_labels())
                                                   if lab.startswith("unrelated")]
    fig.legend(handles=handles, loc="outside lower center", ncol=3)
    plt.close(fig)
    return fig


def plot_learned_subspace(net: NetworkData, limits: Limits, targets: dict, K: int):
    r"""Figure: overlap with :math:`\beta^\star` of the span of :math:`W_2`'s top ``K`` right
    singular vectors, raw and with memorised inputs set aside, one panel per target (with the
    limit of :math:`\tilde u_2` and chance :math:`\sqrt{K/d}`), and the memorisation of the top
    right vector (last panel), against :math:`N`."""
    import matplotlib.pyplot as plt

    _check_type(net, "net", NetworkData)
    _check_type(limits, "limits", Limits)
    K = check_int(K, "K")
    Ns, grid = net.Ns, width_grid(net.Ns)
    first = next(iter(targets))
    if len(targets) != 2:
        raise ValueError(f"targets must name two targets (a 2 x 2 figure), got {len(targets)}")
    # 2 x 2: the two targets above, the memorisation and the legends below.
    fig, grid_axes = plt.subplots(2, 2, figsize=(7.0, 6.8))
    axes = [grid_axes[0, 0], grid_axes[0, 1], grid_axes[1, 0]]
    legend_ax = grid_axes[1, 1]
    legend_ax.axis("off")
    for ax, (t, label) in zip(axes[:-1], targets.items()):
        for b in BATCHES:
            for key, mfc, ls, alpha, what in (
                    ("subspace_unmemorised", None, "-", 1.0, "memorised set aside"),
                    ("subspace", "white", ":", 0.5, "raw")):
                errorbars(ax, Ns, *net.series(t, b, key, (K - 1, 0)), color=COLORS[b], mfc=mfc,
                          ls=ls, alpha=alpha, label=f"{b}, {what}")
        ax.plot(grid, [limits.overlap(t, "reused", aware=True)] * len(grid), color=COLORS["theory"],
                lw=1, label=r"limit of $\tilde u_2$")
        ax.plot(grid, np.sqrt(K / grid), color=COLORS["chance"], ls=":", lw=1.2,
                label=rf"chance $\sqrt{{{K}/d}}$")
        ax.set(yscale="log", ylim=(1e-3, 1), title=f"{label}: top {K} of $W_2$")
        width_axis(ax, Ns)
    axes[0].set_ylabel(r"overlap of the span with $\beta^\star$")
    for t, label in targets.items():
        for b in BATCHES:
            errorbars(axes[-1], Ns, *net.series(t, b, "top_memorisation", 0), color=COLORS[b],
                      marker="o" if t == first else "s", mfc=None if t == first else "white",
                      ls="-" if t == first else "--", label=f"{label}, {b}")
    axes[-1].plot(grid, chance_maximum(grid, grid), color=COLORS["chance"], ls=":", lw=1.2,
                  label=r"unrelated $\sqrt{2\log n/d}$")
    axes[-1].set(ylim=(0, 1.05), ylabel=r"$\max_j|\cos(\cdot, x_j)|$",
                 title="memorisation of $W_2$'s top vector")
    width_axis(axes[-1], Ns)
    # The legends in the free fourth cell: top panels' (upper), memorisation panel's (lower).
    top = legend_ax.legend(*axes[0].get_legend_handles_labels(), loc="upper left",
                           title="upper panels", frameon=False, borderaxespad=0,
                           alignment="left", labelspacing=0.3)
    legend_ax.add_artist(top)
    legend_ax.legend(*axes[-1].get_legend_handles_labels(), loc="lower left",
                     title="lower panel", frameon=False, borderaxespad=0, alignment="left",
                     labelspacing=0.3)
    plt.close(fig)
    return fig


def network_table(net: NetworkData, targets: dict, K: int):
    r"""Two tables of the trained network's measurements, one row per target, batch and size.
    *tab-reuse-network*: the top right singular vector of :math:`T_2` (overlap with
    :math:`\beta^\star`, memorisation) and the overlap of :math:`\tilde u_2` in the same runs.
    *tab-reuse-network-w2*: :math:`W_2`'s top singular value :math:`s_1(W_2)`, its right
    vector's overlap and memorisation, and the overlap of the span of its top ``K`` right vectors
    (raw, and with memorised inputs set aside); the chance level :math:`\sqrt{K/d}` is in its
    caption. Returned as one Markdown output."""
    _check_type(net, "net", NetworkData)
    K = check_int(K, "K")
    pm = lambda t, b, key, N, i, digits=3: (f"{net.at(t, b, key, N)[i]:.{digits}f} ± "
                                            f"{net.at(t, b, key, N, sem=True)[i]:.{digits}f}")
    term_rows, w2_rows = [], []
    for t, label in targets.items():
        for b in BATCHES:
            for N in net.Ns:
                term_rows.append([label, b, str(N), pm(t, b, "term_overlap", N, 0),
                                  pm(t, b, "term_memorisation", N, (), 2),
                                  pm(t, b, "signal_reuse", N, 0)])
                w2_rows.append([label, b, str(N), f"{net.at(t, b, 'top_values', N)[0]:.1f}",
                                f"{net.at(t, b, 'top_overlap', N)[0, 0]:.3f}",
                                f"{net.at(t, b, 'top_memorisation', N)[0]:.2f}",
                                f"{net.at(t, b, 'subspace', N)[K - 1, 0]:.3f}",
                                pm(t, b, "subspace_unmemorised", N, (K - 1, 0))])
    chance = ", ".join(f"{np.sqrt(K / N):.3f}" for N in net.Ns)
    sizes = ", ".join(str(N) for N in net.Ns)
    term = markdown_table(
        f"The exact term $T_2$ of the trained network: means ± standard errors over "
        f"{_seed_note(net)} seeds of the overlap with $\\beta^\\star$ and the memorisation of its "
        "top right singular vector, and the overlap of the reuse-aware direction $\\tilde u_2$ "
        "in the same runs.",
        "tab-reuse-network",
        ["target", "batch", "$N$", "$T_2$ overlap", "$T_2$ mem.", "$\\tilde u_2$"], term_rows)
    w2 = markdown_table(
        f"The trained first layer $W_2$, same runs as the table above: its top singular value "
        f"$s_1(W_2)$, the overlap with $\\beta^\\star$ and the memorisation of its top right "
        f"vector, and the overlap of the span of its top {K} right vectors, raw and with the "
        f"memorised inputs set aside (mean ± standard error). The chance level of that span, "
        f"$\\sqrt{{{K}/d}}$, is {chance} at $N = $ {sizes}.",
        "tab-reuse-network-w2",
        ["target", "batch", "$N$", "$s_1(W_2)$", "overlap", "mem.", "span, raw",
         "span, set aside"], w2_rows)
    return tables(term, w2)


def typical_max_label(targets, n: int, rng: np.random.Generator, draws: int = 50) -> dict:
    r"""Median over ``draws`` samples of :math:`\max_{j\le n}|g(z_j)|`, :math:`z_j\sim N(0,1)`, for each
    target link (drawn in the order of ``targets``, ``draws`` samples each)."""
    targets = _check_names(targets)
    n, draws = check_int(n, "n"), check_int(draws, "draws")
    check_rng(rng)
    return {t: float(np.median([np.abs(get_link(t)(rng.standard_normal(n))).max() for _ in range(draws)]))
            for t in targets}


@dataclass
class LambdaData:
    r"""Learned-subspace overlaps of one target at several :math:`\alpha_2` (:func:`lambda_data`).

    ``values[alpha2, batch, N]`` maps ``subspace``, ``subspace_unmemorised`` and their ``*_sem``
    to ``(top, r)`` arrays; ``n_spikes[alpha2]`` is :math:`\Lambda(\alpha_1,\alpha_2)`.
    """

    Ns: tuple
    alpha1: float
    alpha2s: tuple
    n_spikes: dict
    values: dict

    def at(self, alpha2: float, batch: str, N: int | None = None, key: str = "subspace_unmemorised",
           sem: bool = False) -> float:
        r"""Overlap of the span of the top :math:`1+\Lambda` right vectors (``key``), or its standard
        error, at ``N`` (default the largest size)."""
        v = self.values[alpha2, batch, self.Ns[-1] if N is None else N][key + ("_sem" if sem else "")]
        return float(v[self.n_spikes[alpha2], 0])

    def chance(self, alpha2: float, N: int | None = None) -> float:
        r""":math:`\sqrt{(1+\Lambda)/d}`, the overlap of a random subspace of that dimension."""
        return float(np.sqrt((1 + self.n_spikes[alpha2]) / (self.Ns[-1] if N is None else N)))

    def exponent(self, alpha2: float) -> float:
        r""":math:`e_2 = \alpha_2 - 2(1/2-\alpha_1)`, the exponent of the aligned spike's size."""
        return spike_exponent(2, self.alpha1, alpha2)


def lambda_data(net: NetworkData, target: str, alpha1: float, alpha2: float, alpha2s, L: int) -> LambdaData:
    r"""The learned subspace of ``target``'s runs at each :math:`\alpha_2'` in ``alpha2s``: the runs'
    own :math:`\alpha_2` as trained, the others from the rescaled draws of :func:`network_data`
    (whose ``alpha2s`` must be ``alpha2s`` without ``alpha2``, in order)."""
    _check_type(net, "net", NetworkData)
    alpha1, alpha2 = check_alpha(alpha1, "alpha1"), check_alpha(alpha2, "alpha2")
    alpha2s = tuple(check_alpha(a, "alpha2s") for a in alpha2s)
    L = check_int(L, "L")
    others = [a for a in alpha2s if a != alpha2]
    records = [r for r in net.records if r["target"] == target]
    if not records:
        raise ValueError(f"target must be one of the simulated targets, got {target!r}")
    keys = list(_LAMBDA_KEYS) + ["rescaled_" + k for k in _LAMBDA_KEYS]
    values = {}
    for e in summarise(records, by=["batch", "N"], values=keys):
        for a2 in alpha2s:
            i = None if a2 == alpha2 else others.index(a2)
            pick = lambda key: e[key] if i is None else e["rescaled_" + key][i]
            values[a2, e["batch"], e["N"]] = {key: pick(key) for key in
                                              [*_LAMBDA_KEYS, *(k + "_sem" for k in _LAMBDA_KEYS)]}
    return LambdaData(net.Ns, alpha1, alpha2s, {a2: n_spikes(alpha1, a2, L) for a2 in alpha2s}, values)


def plot_lambda(lam: LambdaData, limits: Limits, target: str = "odd"):
    r"""Figure: one panel per :math:`\alpha_2`, overlap with :math:`\beta^\star` of the span of the
    top :math:`1+\Lambda` right vectors of :math:`W_2` against :math:`N` (memorised inputs set aside,
    and raw), both batches, with chance :math:`\sqrt{(1+\Lambda)/d}` and the limit of :math:`\tilde u_2`."""
    import matplotlib.pyplot as plt

    _check_type(lam, "lam", LambdaData)
    _check_type(limits, "limits", Limits)
    Ns, grid = lam.Ns, width_grid(lam.Ns)
    # Two panels a row: the 7-inch column holds two log-N axes at full font size.
    ncols = min(2, len(lam.alpha2s))
    nrows = -(-len(lam.alpha2s) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.0, 1.2 + 2.5 * nrows), sharex=True,
                             sharey=True, squeeze=False)
    for ax in axes.flat[len(lam.alpha2s):]:
        ax.remove()
    left = [row[0] for row in axes]
    axes = axes.flat[:len(lam.alpha2s)]
    for i, (ax, a2) in enumerate(zip(axes, lam.alpha2s)):
        k_sub = 1 + lam.n_spikes[a2]
        for b in BATCHES:
            # Raw values as larger open rings: where nothing is memorised (a fresh batch) they
            # are the filled values, and must not cover them.
            for key, mfc, ms, ls, alpha in (("subspace_unmemorised", None, 4, "-", 1.0),
                                            ("subspace", "none", 6, ":", 0.5)):
                mean = [lam.at(a2, b, N, key) for N in Ns]
                sem = [lam.at(a2, b, N, key, sem=True) for N in Ns]
                errorbars(ax, Ns, mean, sem, color=COLORS[b], mfc=mfc, ms=ms, ls=ls, alpha=alpha,
                          label=f"{b}" + ("" if key == "subspace_unmemorised" else ", raw"))
        ax.plot(grid, np.sqrt(k_sub / grid), color=COLORS["chance"], ls=":", lw=1.2, label="chance")
        ax.axhline(limits.overlap(target, "reused", aware=True), color=COLORS["theory"], lw=1,
                   label=r"limit of $\tilde u_2$")
        ax.set(yscale="log", ylim=(5e-3, 0.6),
               title=rf"$\alpha_2 = {a2}$: $\Lambda = {lam.n_spikes[a2]}$, $e_2 = {lam.exponent(a2):+.2f}$")
        if i + ncols >= len(lam.alpha2s):       # nothing below it: its N axis is labelled
            width_axis(ax, Ns, "$N$")
            ax.xaxis.set_tick_params(labelbottom=True)
        else:
            width_axis(ax, Ns, "")
    for ax in left:
        ax.set_ylabel(r"overlap with $\beta^\star$")
    fig.legend(handles=axes[0].get_legend_handles_labels()[0], loc="outside lower center", ncol=3)
    plt.close(fig)
    return fig


def lambda_table(lam: LambdaData):
    r"""Table of :func:`lambda_data`: per :math:`\Lambda` (the caption gives each
    :math:`\alpha_2`) and batch, the overlap ± standard error of the learned subspace
    (memorised inputs set aside) at each size, and the chance level :math:`\sqrt{(1+\Lambda)/d}`."""
    _check_type(lam, "lam", LambdaData)
    rows = []
    for a2 in lam.alpha2s:
        head = [str(lam.n_spikes[a2])]
        for b in BATCHES:
            rows.append(head + [b] + [f"{lam.at(a2, b, N):.3f} ± {lam.at(a2, b, N, sem=True):.3f}"
                                      for N in lam.Ns])
        rows.append(head + ["chance"] + [f"{lam.chance(a2, N):.3f}" for N in lam.Ns])
    counts = ", ".join(str(lam.n_spikes[a2]) for a2 in lam.alpha2s)
    settings = ", ".join(f"{a2}" for a2 in lam.alpha2s)
    return markdown_table(
        "Overlap with $\\beta^\\star$ of the learned subspace (span of $W_2$'s top $1+\\Lambda$ "
        "right singular vectors, memorised inputs set aside): mean ± standard error over seeds, "
        "and the chance level of a random subspace of that dimension. "
        f"$\\alpha_1 = {lam.alpha1}$; $\\Lambda = $ {counts} at $\\alpha_2 = $ {settings}.",
        "tab-reuse-lambda",
        ["$\\Lambda$", "batch"] + [f"$N = {N}$" for N in lam.Ns], rows)
