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

from .._validation import check_alpha, check_int, check_pairs, check_real, check_rng
from ..analysis.alignment import chance_maximum, chance_overlap
from ..analysis.population import population_signal
from ..analysis.sweep import summarise, sweep
from ..analysis.theory import n_spikes, spike_exponent
from ..analysis.verdicts import mean_sem, verdict
from ..experiments.reuse import (_check_sequence, paired_reuse_experiment, reuse_experiment,
                                 signal_overlap_experiment)
from ..model.activations import as_activation, check_activation, get_activation
from ..model.hermite import gaussian_expectation
from ..model.steps import BATCHES
from ..model.targets import Link, get_link
from .figures import COLORS, errorbars
from .report import markdown_table, sig, width_verdicts




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


def n_grid(Ns, points: int = 60) -> np.ndarray:
    r"""Widths for theory curves: ``points`` values, geometric from :math:`0.8N_{min}` to
    :math:`1.25N_{max}`, shape ``(points,)``."""
    Ns = _check_sizes(Ns)
    return np.geomspace(0.8 * Ns[0], 1.25 * Ns[-1], check_int(points, "points", 2))


def _n_axis(ax, Ns, label="$N$ ($= n = d$)"):
    # Log-scaled width axis with one labelled tick per simulated N; past 10^4 the ticks
    # are in thousands, where 16000 and 24000 in full would run into each other.
    import matplotlib.pyplot as plt

    ax.set_xscale("log")
    if max(Ns) >= 10_000:
        ax.set_xticks(Ns, [f"{N / 1000:g}" for N in Ns])
        label += " (thousands)"
    else:
        ax.set_xticks(Ns, [str(N) for N in Ns])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel(label)


def cubed_link_moment(target) -> float:
    r""":math:`\mathbb E[g(z)^3z] = c_1(g^3)`, :math:`z\sim N(0,1)`: the first Hermite coefficient
    of the cubed link, which sets the reused batch's :math:`A_2 = \mathbb E[g^3z]/\psi^2`.

    ``target`` is a single-index link or its name (:func:`twostep.get_link`).
    """
    link = get_link(target) if isinstance(target, str) else target
    if not isinstance(link, Link):
        raise TypeError(f"target must be a Link or a link name, got {type(target).__name__}")
    return link.moment(lambda z, g: g ** 3 * z)


def self_term_moment(activation) -> float:
    r""":math:`\mathbb E[\sigma'''(z)\sigma'(z)^2]`, :math:`z\sim N(0,1)`.

    Under reuse the self-term of :math:`\Delta_{ij}` carries the neuron's own
    :math:`\sigma'(P_{ij})`, so the component of :math:`\tilde u_2` along :math:`\beta^\star`
    is :math:`\mathbb E[\sigma'''\sigma'^2]\,\mathbb E[g^3z]/\psi^2` instead of
    :math:`\mu_3\mu_1^2\,\mathbb E[g^3z]/\psi^2`.
    """
    act = get_activation(activation) if isinstance(activation, str) else check_activation(activation)
    return gaussian_expectation(lambda z: act.derivative(z, 3) * act.derivative(z, 1) ** 2)


@dataclass
class Limits:
    r"""Large-:math:`n` limits of the signal directions (:func:`population_limits`).

    ``plain[target, batch, k]`` is the :class:`PopulationSignal` of :math:`u_k`,
    ``aware[target, batch]`` that of the reuse-aware :math:`\tilde u_{k}` at ``aware_order``.
    """

    psi: float
    orders: tuple
    aware_order: int
    plain: dict
    aware: dict

    def overlap(self, target: str, batch: str, k: int | None = None, n: int | None = None,
                index: int = 0, aware: bool = False) -> float:
        r"""Overlap with :math:`\beta^\star_{\text{index}}`: the limit, or with ``n`` the mean at
        batch size ``n``; of :math:`u_k`, or with ``aware=True`` of :math:`\tilde u_2`."""
        sig = self.aware[target, batch] if aware else self.plain[target, batch, k]
        return float((sig.overlaps if n is None else sig.expected_overlaps(int(n)))[index])


def population_limits(targets, psi: float, orders, activation, aware_order: int = 2) -> Limits:
    r"""Large-:math:`n` overlaps of :math:`u_k` (each order in ``orders``) and of the reuse-aware
    :math:`\tilde u_{\text{aware\_order}}` with the target directions, for both batches.

    The limit of :math:`u_k` is :math:`|A_k|/\sqrt{A_k^2 + B_k^2 + \|r_k\|^2}` with
    :math:`A_k = \mathbb E[g(z)zs^k]`, :math:`s = c_1z + \rho y/\psi + \tau\zeta`
    (:func:`twostep.population_signal`, Gauss--Hermite quadrature).
    """
    targets = _check_names(targets)
    psi = check_real(psi, "psi", low=0.0, low_open=True)
    orders = tuple(check_int(k, "orders[k]", 0) for k in orders)
    aware_order = check_int(aware_order, "aware_order", 0)
    act = get_activation(activation) if isinstance(activation, str) else check_activation(activation)
    plain = {(t, b, k): population_signal(t, psi, k, b)
             for t in targets for b in BATCHES for k in orders}
    aware = {(t, b): population_signal(t, psi, aware_order, b, kind="reuse", activation=act)
             for t in targets for b in BATCHES}
    return Limits(psi, orders, aware_order, plain, aware)


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
    Ns, grid = data.Ns, n_grid(data.Ns)
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
            _n_axis(ax, Ns, "$N$" if row == 1 else "")
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
    tables = [markdown_table(
        f"Overlaps of $u_0$, $u_2$ and $\\tilde u_2$ with the target directions {what}",
        "tab-reuse-measured",
        ["target", "batch"] + [f"$u_{k}$" for k in main_orders] + [f"$\\tilde u_{ka}$"], main)]
    if other_orders:
        orders = " and ".join(f"$u_{k}$" for k in other_orders)
        tables.append(markdown_table(
            f"The other orders, {orders}, with the rows of the table above, {what}",
            "tab-reuse-measured-odd",
            ["target", "batch"] + [f"$u_{k}$" for k in other_orders], other))
    return _tables(*tables)


def plot_two_index(data: SignalData, limits: Limits, target: str):
    r"""Figure for a two-index target: overlap of :math:`u_0` with :math:`\beta_1` (left) and of
    :math:`u_2` and :math:`\tilde u_2` with :math:`\beta_2` (right) against :math:`N`, both batches,
    theory mean at batch size :math:`n` and chance :math:`1/\sqrt d`."""
    import matplotlib.pyplot as plt

    _check_type(data, "data", SignalData)
    _check_type(limits, "limits", Limits)
    Ns, grid = data.Ns, n_grid(data.Ns)
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
        _n_axis(ax, Ns)
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
    Ns, grid = net.Ns, n_grid(net.Ns)
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
        _n_axis(ax, Ns)
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
    Ns, grid = net.Ns, n_grid(net.Ns)
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
        _n_axis(ax, Ns)
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
    _n_axis(axes[-1], Ns)
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


def _tables(*tables):
    # Several MyST tables as one cell output (each fits the column; together they hold every
    # column of the wider table they replace).
    from IPython.display import Markdown

    return Markdown("\n\n".join(t.data for t in tables))


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
    return _tables(term, w2)


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
    Ns, grid = lam.Ns, n_grid(lam.Ns)
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
            _n_axis(ax, Ns, "$N$")
            ax.xaxis.set_tick_params(labelbottom=True)
        else:
            _n_axis(ax, Ns, "")
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


# --------------------------------------------------------------------------- paired runs

@dataclass(frozen=True)
class PairedConfig:
    r"""One configuration of the paired experiment: a label for the reader, the activation,
    the target and the step constant :math:`c` (both steps)."""

    label: str
    activation: str
    target: str
    c: float


@dataclass
class PairedData:
    r"""Paired reused/fresh runs over seeds (:func:`paired_data`).

    ``records`` are :func:`paired_reuse_experiment` rows with ``config`` (a key of
    ``configs``), ``N`` and ``seed``; ``alpha2s`` the second-step exponents measured (the
    reference first), ``n_spikes`` their :math:`\Lambda`.
    """

    configs: dict
    alpha2s: tuple
    n_spikes: tuple
    records: list

    def values(self, config: str, N: int, key: str, batch: str | None = None,
               index: int | None = None) -> np.ndarray:
        r"""Per-seed values of ``key`` (``key_batch`` if ``batch``; ``reused - fresh`` for
        ``batch="diff"``), at exponent ``index`` for the per-exponent keys; shape ``(seeds,)``."""
        rows = [r for r in self.records if r["config"] == config and r["N"] == N]
        if not rows:
            raise ValueError(f"no runs at (config, N) = ({config!r}, {N})")

        def get(r, name):
            v = np.asarray(r[name], dtype=float)
            return v if index is None or v.ndim == 0 else v[index]

        if batch == "diff":
            return np.array([get(r, f"{key}_reused") - get(r, f"{key}_fresh") for r in rows])
        return np.array([get(r, key if batch is None else f"{key}_{batch}") for r in rows])

    def Ns(self, config: str) -> list:
        """The widths simulated for ``config``, increasing."""
        return sorted({r["N"] for r in self.records if r["config"] == config})


def paired_data(configs: dict, sizes: dict, seeds, alpha1: float, alpha2: float, alpha2s=(),
                n_jobs: int = 1, dtype="float32") -> PairedData:
    r""":func:`paired_reuse_experiment` for every configuration, its widths and every seed.

    ``configs`` maps a key to a :class:`PairedConfig`; ``sizes`` maps the same keys to the
    widths :math:`N = n = d` run for that configuration.
    """
    if not isinstance(configs, dict) or not configs or not all(
            isinstance(c, PairedConfig) for c in configs.values()):
        raise TypeError("configs must be a non-empty dict of key -> PairedConfig")
    if not isinstance(sizes, dict) or set(sizes) != set(configs):
        raise ValueError(f"sizes must be a dict with the keys of configs, {sorted(configs)}")
    seeds = _check_seeds(seeds)
    a2s = (check_alpha(alpha2, "alpha2"),) + tuple(
        check_alpha(a, "alpha2s") for a in _check_sequence(alpha2s, "alpha2s"))
    grid = [dict(config=key, N=N, activation=cfg.activation, target=cfg.target, c1=cfg.c,
                 alpha1=alpha1, c2=cfg.c, alpha2=alpha2, alpha2s=list(a2s[1:]), dtype=dtype)
            for key, cfg in configs.items() for N in _check_sizes(sizes[key], f"sizes[{key!r}]")]
    tasks = [{k: v for k, v in g.items() if k != "config"} for g in grid]
    records = sweep(paired_reuse_experiment, tasks, seeds=seeds, n_jobs=check_int(n_jobs, "n_jobs"))
    # sweep keeps the grid's order, seeds innermost: label each record with its configuration
    labels = [g["config"] for g in grid for _ in seeds]
    for r, key in zip(records, labels):
        r["config"] = key
    return PairedData(dict(configs), a2s, tuple(n_spikes(alpha1, a) for a in a2s), records)


def fading_width(exponent: float, N0: int, factor: float = 2.0) -> float:
    r"""Width at which a spike whose size scales like :math:`N^{e}` has changed by ``factor``
    relative to width ``N0``: :math:`N_0\,\text{factor}^{1/|e|}`."""
    e = check_real(exponent, "exponent")
    if e == 0:
        raise ValueError("exponent must be non-zero (a spike of constant size never fades)")
    return check_int(N0, "N0", 1) * check_real(factor, "factor", low=1.0, low_open=True) ** (1 / abs(e))


def matched_constant(reference, activation, c: float, order: int = 2) -> float:
    r"""The step constant :math:`c'` at which ``activation`` gives its order-``order`` term the
    weight ``reference`` gives it at ``c``.

    The order-:math:`k` term of :math:`W_2` carries :math:`\mu_{k+1}\mu_1^k c^{k+1}` (model
    notes), so :math:`c' = c\,\bigl(|\mu_1^k\mu_{k+1}|_{\rm ref} /
    |\mu_1^k\mu_{k+1}|\bigr)^{1/(k+1)}`, with :math:`\mu_j = \mathbb E[\sigma(z)\mathrm{He}_j(z)]`.
    """
    k = check_int(order, "order", 1)
    c = check_real(c, "c", low=0.0, low_open=True)

    def weight(act):
        mu = as_activation(act).hermite_coefficients(k + 1)
        w = abs(mu[1] ** k * mu[k + 1])
        if w < 1e-12:   # quadrature leaves ~1e-17 where a coefficient vanishes by symmetry
            raise ValueError(f"activation {as_activation(act).name!r} has mu_1^{k} mu_{k + 1} = 0: "
                             f"no order-{k} term to match")
        return w

    return c * (weight(reference) / weight(activation)) ** (1 / (k + 1))


def paired_numbers(data: PairedData, limits: Limits, main: str, control: str, bounded: str,
                   width: int) -> dict:
    r"""The numbers the chapter quotes from :func:`paired_data`, by glue key.

    ``main`` is the configuration run at several widths, ``control`` (an even link) and
    ``bounded`` (a bounded activation) the ones run at ``width``. Differences are reused minus
    fresh; ``*_sem`` are standard errors over the seeds; ``p_lam_sem`` is the largest standard
    error of the paired learned-subspace difference over :math:`\Lambda` at the largest width
    (the differences themselves are in :func:`paired_lambda_table`).
    """
    _check_type(data, "data", PairedData)
    _check_type(limits, "limits", Limits)
    v, Ns = data.values, data.Ns(main)
    t2 = [mean_sem(v(main, N, "term_overlap", "diff")) for N in Ns]
    lam_index = {lam: i for i, lam in enumerate(data.n_spikes)}
    lam_stats = {lam: mean_sem(v(main, Ns[-1], "subspace_unmemorised", "diff", i))
                 for lam, i in lam_index.items()}
    he2 = mean_sem(v(control, width, "term_overlap", "diff"))
    K = int(np.asarray(data.records[0]["K"])[0])
    out = {"p_N_lo": Ns[0], "p_N_hi": Ns[-1], "p_ctrl": width,
           "p_t2_lo": min(m for m, _ in t2), "p_t2_hi": max(m for m, _ in t2),
           "p_t2_theory": limits.overlap(data.configs[main].target, "reused", aware=True)
           - 1 / np.sqrt(Ns[-1]),
           "p_he2_t2": he2[0], "p_he2_t2_sem": he2[1],
           "p_null": float(np.mean(v(main, width, "null_unmemorised", None, 0)
                                   - v(main, width, "null_subspace", None, 0))),
           "p_tanh_mem": v(bounded, width, "top_memorisation", "reused", 0).mean(),
           "p_tanh_rows": v(bounded, width, "row_ratio", "reused", 0).mean(),
           "p_s4_rows": v(main, width, "row_ratio", "reused", 0).mean(),
           "p_tanh_sub": v(bounded, width, "subspace_unmemorised", "reused", 0).mean(),
           "p_tanh_chance": np.sqrt(K / width),
           "p_lam_sem": max(s for _, s in lam_stats.values())}
    return out


#: Single seeds behind a mean: visible on white, lighter than the mean's marker.
SEED_ALPHA = 0.55
#: (marker, line style) per width where widths share one colour family.
WIDTH_LOOKS = (("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."))


def plot_paired(data: PairedData, limits: Limits, main: str, controls, null_N: int):
    r"""Figure: left, reused minus fresh overlap of :math:`T_2`'s top right vector with
    :math:`\beta^\star` against :math:`N` for configuration ``main`` (each seed, and mean ±
    standard error), with the theory's difference (limit of :math:`\tilde u_2` minus fresh
    chance) and zero; middle, the paired difference of the learned subspace (memorised inputs
    set aside) at the reference exponent for ``main`` and each of ``controls`` at width
    ``null_N``, next to the correction applied to random subspaces; right, the same paired
    difference against :math:`\Lambda` (the rescaled exponents) for ``main`` at each width."""
    import matplotlib.pyplot as plt

    _check_type(data, "data", PairedData)
    _check_type(limits, "limits", Limits)
    # Two rows: the T_2 and Lambda panels above, the controls (long category names) below at
    # the column's full width; one legend under all three.
    fig, axd = plt.subplot_mosaic([["t2", "lam"], ["ctrl", "ctrl"]], figsize=(7.0, 6.4),
                                  height_ratios=[1, 0.9])
    ax1, ax2, ax3 = axd["t2"], axd["ctrl"], axd["lam"]
    Ns = data.Ns(main)
    for N in Ns:
        x = data.values(main, N, "term_overlap", "diff")
        ax1.plot(np.full(x.size, N) * np.exp(np.linspace(-0.06, 0.06, x.size)), x, "o",
                 color=COLORS["reused"], alpha=SEED_ALPHA, ms=3.5, mew=0)
    stats = [mean_sem(data.values(main, N, "term_overlap", "diff")) for N in Ns]
    errorbars(ax1, Ns, [m for m, _ in stats], [s for _, s in stats], color=COLORS["reused"])
    grid = n_grid(Ns)
    cfg = data.configs[main]
    ax1.plot(grid, limits.overlap(cfg.target, "reused", aware=True) - 1 / np.sqrt(grid),
             color=COLORS["theory"], lw=1.2)
    ax1.axhline(0, color=COLORS["chance"], ls=":", lw=1.2)
    _n_axis(ax1, Ns, "$N$")
    ax1.set(ylabel=r"difference, $|\langle v_1(T_2), \beta^\star\rangle|$",
            title=f"{cfg.label}: $T_2$")

    names = [main, *controls]
    rows = [(data.configs[c].label, data.values(c, null_N, "subspace_unmemorised", "diff", 0))
            for c in names]
    null = data.values(main, null_N, "null_unmemorised", None, 0) - data.values(
        main, null_N, "null_subspace", None, 0)
    rows.append(("correction on a\nrandom subspace", null))
    for i, (label, x) in enumerate(rows):
        m, s = mean_sem(x)
        ax2.plot(np.full(x.size, i) + np.linspace(-0.15, 0.15, x.size), x, "o",
                 color=COLORS["reused"] if i < len(names) else COLORS["chance"], alpha=SEED_ALPHA,
                 ms=3.5, mew=0)
        ax2.errorbar(i, m, yerr=s, fmt="s", color="k", ms=5, capsize=3)
    ax2.axhline(0, color=COLORS["chance"], ls=":", lw=1.2)
    # Category names on two lines where they are long: "sigma_4, He_2 (control)" and the like.
    ax2.set_xticks(range(len(rows)), [r[0].replace(", ", ",\n", 1) if "\n" not in r[0] else r[0]
                                      for r in rows])
    ax2.set_xlim(-0.5, len(rows) - 0.5)
    ax2.set(xlabel="configuration", ylabel="difference, learned subspace",
            title=f"controls at $N = {null_N}$")

    order = np.argsort(data.n_spikes)
    lams = np.array(data.n_spikes)[order]
    # One width per marker shape and line style, in shades from light to dark: three reds alone
    # could not be told apart.
    shades = [plt.cm.Reds(0.35 + 0.65 * j / max(1, len(Ns) - 1)) for j in range(len(Ns))]
    looks = [WIDTH_LOOKS[j % len(WIDTH_LOOKS)] for j in range(len(Ns))]
    for j, N in enumerate(Ns):
        stats = [mean_sem(data.values(main, N, "subspace_unmemorised", "diff", int(i)))
                 for i in order]
        ax3.errorbar(lams + 0.08 * (j - (len(Ns) - 1) / 2), [m for m, _ in stats],
                     yerr=[s for _, s in stats], marker=looks[j][0], ls=looks[j][1], ms=4.5,
                     capsize=2, color=shades[j])
    ax3.axhline(0, color=COLORS["chance"], ls=":", lw=1.2)
    ax3.set_xticks(lams)
    ax3.set(xlabel=r"$\Lambda(\alpha_1, \alpha_2')$", ylabel="difference, learned subspace",
            title=f"{cfg.label}: $W_2$")
    handles = [plt.Line2D([], [], color=COLORS["reused"], marker="o", alpha=SEED_ALPHA, ls="none",
                          ms=3.5, mew=0, label="single seeds"),
               plt.Line2D([], [], color=COLORS["reused"], marker="o", ms=4,
                          label="mean ± s.e. (upper left)"),
               plt.Line2D([], [], color="k", marker="s", ms=5, ls="none",
                          label="mean ± s.e. (lower)"),
               plt.Line2D([], [], color=COLORS["theory"], lw=1.2,
                          label=r"theory: $\tilde u_2$ limit $-$ chance"),
               plt.Line2D([], [], color=COLORS["chance"], ls=":", lw=1.2, label="no effect of reuse")]
    handles += [plt.Line2D([], [], color=shades[j], marker=looks[j][0], ls=looks[j][1], ms=4.5,
                           label=f"$N = {N}$ (upper right)") for j, N in enumerate(Ns)]
    fig.legend(handles=handles, loc="outside lower center", ncol=3)
    plt.close(fig)
    return fig


def paired_table(data: PairedData):
    r"""Two tables of :func:`paired_data` at the reference exponent, one row per configuration and
    width. *tab-reuse-paired*: the paired difference (reused minus fresh, mean ± standard error)
    of the overlap of :math:`T_2`'s top right vector with :math:`\beta^\star` and of the learned
    subspace's overlap (memorised inputs set aside, and raw). *tab-reuse-paired-rows*: the
    memorisation of :math:`W_2`'s top vector and the largest row norm of :math:`W_2` over the
    median, reused and fresh (mean ± standard error). Returned as one Markdown output."""
    _check_type(data, "data", PairedData)

    def cell(x):
        m, s = mean_sem(x)
        return f"{m:+.3f} ± {s:.3f}"

    diff_rows, row_rows, seeds = [], [], set()
    # the rows table's spread, for its caption: the largest standard error of a memorisation,
    # and of a row ratio relative to its mean (the ratios run from about 1 to 1000)
    memo_sem = ratio_rel = 0.0
    for key, cfg in data.configs.items():
        for N in data.Ns(key):
            v = lambda name, b, i=None: data.values(key, N, name, b, i)  # noqa: E731
            term = v("term_overlap", "diff")
            seeds.add(term.size)
            diff_rows.append([cfg.label, str(N),
                              cell(term) if np.all(np.isfinite(term)) else "n/a",
                              cell(v("subspace_unmemorised", "diff", 0)),
                              cell(v("subspace", "diff", 0))])
            memo = [mean_sem(v("top_memorisation", b, 0)) for b in BATCHES]
            ratio = [mean_sem(v("row_ratio", b, 0)) for b in BATCHES]
            memo_sem = max(memo_sem, *(sem for _, sem in memo))
            ratio_rel = max(ratio_rel, *(sem / abs(m) for m, sem in ratio if m))
            row_rows.append([cfg.label, str(N)] + [f"{m:.2f}" for m, _ in memo]
                            + [f"{m:.1f}" for m, _ in ratio])
    n_seeds = f"{min(seeds)} to {max(seeds)}" if len(seeds) > 1 else str(seeds.pop())
    diff = markdown_table(
        "Paired runs: reused minus fresh on the same $W_0$, $a$ and first batch, at the reference "
        f"step sizes; mean ± standard error over {n_seeds} seeds. $T_2$: overlap of its top right "
        "singular vector with $\\beta^\\star$ (polynomial activations only). $W_2$: overlap of its "
        "learned subspace (top $1+\\Lambda$ right vectors), with memorised inputs set aside and raw.",
        "tab-reuse-paired", ["configuration", "$N$", "$T_2$", "$W_2$", "$W_2$ raw"], diff_rows)
    rows = markdown_table(
        "The same paired runs: memorisation of $W_2$'s top right vector, and the largest row norm "
        f"of $W_2$ over the median row norm, reused and fresh; means over {n_seeds} seeds, with "
        f"standard errors at most {sig(memo_sem)} for a memorisation and "
        f"{sig(100 * ratio_rel)}% of the entry for a row ratio.",
        "tab-reuse-paired-rows",
        ["configuration", "$N$", "mem., reused", "mem., fresh", "rows, reused", "rows, fresh"],
        row_rows)
    return _tables(diff, rows)


def paired_lambda_table(data: PairedData, config: str, alpha1: float, N: int | None = None):
    r"""Table *tab-reuse-paired-lambda*: for ``config`` at width ``N`` (default its largest), the
    paired difference (reused minus fresh, mean ± standard error) of the learned subspace's
    overlap (memorised inputs set aside) at each second-step exponent, with :math:`\Lambda` and
    the exponent :math:`e_2` of the aligned spike; ``alpha1`` is the runs' first-step exponent."""
    _check_type(data, "data", PairedData)
    N = data.Ns(config)[-1] if N is None else check_int(N, "N")
    alpha1 = check_alpha(alpha1, "alpha1")
    rows = []
    for i in np.argsort(data.n_spikes):
        m, s = mean_sem(data.values(config, N, "subspace_unmemorised", "diff", int(i)))
        a2 = data.alpha2s[i]
        rows.append([str(data.n_spikes[i]), f"{a2}", f"{spike_exponent(2, alpha1, a2):+.2f}",
                     f"{m:+.3f} ± {s:.3f}"])
    return markdown_table(
        f"Paired runs, {data.configs[config].label}, $N = {N}$: reused minus fresh overlap of the "
        "learned subspace (top $1+\\Lambda$ right vectors of $W_2$, memorised inputs set aside) at "
        "each second-step exponent, mean ± standard error over the seeds; $e_2$ is the exponent "
        "of the aligned spike's size.",
        "tab-reuse-paired-lambda", ["$\\Lambda$", "$\\alpha_2$", "$e_2$", "difference"], rows)


# --------------------------------------------------------------------------- T_2 seen through a^(k+1)

def _per_seed_null(data: PairedData, config: str, N: int) -> np.ndarray:
    # The strongest control of each seed: the fresh run's projection, the random-sign projection
    # and the memorised inputs' own span, whichever is largest (a conservative null).
    v = data.values
    return np.max([v(config, N, "projected_overlap", "fresh"),
                   v(config, N, "projected_random_sign", "reused"),
                   v(config, N, "projected_memorised_null", "reused")], axis=0)


def term_verdicts(data: PairedData, limits: Limits, main: str, control: str,
                  N: int | None = None) -> dict:
    r"""The verdicts of the exact-term test at width ``N`` (default: the largest width of
    ``main``; the control at its own largest width not above ``N``), each a
    :class:`~twostep.analysis.verdicts.Verdict`: ``reuse`` (reused :math:`T_2^\top a^{\circ3}`
    against the book's limit of :math:`\tilde u_2`; null: the strongest control of each seed),
    ``fresh`` (fresh batch) and ``even`` (the ``control`` link, reused), which predict no
    alignment: their null is the overlap that :math:`\tilde u_2`, whose limit is 0 there, has
    at :math:`n = N` by sampling alone (:meth:`Limits.overlap` with ``n``), and the effect they
    deny is the reused odd link's limit. ``even`` is ``None`` where the control has no width
    up to ``N``."""
    _check_type(data, "data", PairedData)
    _check_type(limits, "limits", Limits)
    v = data.values
    N = data.Ns(main)[-1] if N is None else N
    below = [w for w in data.Ns(control) if w <= N]
    target, even = data.configs[main].target, data.configs[control].target
    sampling = limits.overlap(target, "fresh", n=N, aware=True)
    predicted = limits.overlap(target, "reused", aware=True)
    out = {
        "reuse": verdict(v(main, N, "projected_overlap", "reused"), predicted,
                         _per_seed_null(data, main, N)),
        "fresh": verdict(v(main, N, "projected_overlap", "fresh"), sampling, sampling,
                         predicts_null=True, alternative=predicted),
        "even": None,
    }
    if below:
        Nc = below[-1]
        sampling_even = limits.overlap(even, "reused", n=Nc, aware=True)
        out["even"] = verdict(v(control, Nc, "projected_overlap", "reused"), sampling_even,
                              sampling_even, predicts_null=True, alternative=predicted)
    return out


def verdicts_by_width(data: PairedData, limits: Limits, main: str, control: str) -> dict:
    r"""The labels of :func:`term_verdicts` at every width of ``main``: ``{row: {N: label}}``
    for the rows ``reuse``, ``fresh`` and ``even`` (the control only at its own widths)."""
    out = {"reuse": {}, "fresh": {}, "even": {}}
    control_Ns = set(data.Ns(control))
    for N in data.Ns(main):
        vd = term_verdicts(data, limits, main, control, N)
        out["reuse"][N], out["fresh"][N] = vd["reuse"].label, vd["fresh"].label
        if N in control_Ns:
            out["even"][N] = vd["even"].label
    return out


def width_numbers(data: PairedData, limits: Limits, main: str, control: str,
                  prefix: str = "vw") -> dict:
    r"""Glue values of :func:`verdicts_by_width` for the landing page's table of verdicts at
    each width: ``<prefix>_reuse_<N>``, ``<prefix>_fresh_<N>``, ``<prefix>_even_<N>``
    (:func:`twostep.pages.report.width_verdicts`)."""
    out = {}
    for row, labels in verdicts_by_width(data, limits, main, control).items():
        out.update(width_verdicts(f"{prefix}_{row}", labels))
    return out


def term_evidence_numbers(data: PairedData, limits: Limits, main: str, control: str) -> dict:
    r"""Glue values of the exact-term evidence: at the smallest width of ``main`` (``*_lo``) the
    raw top vector's overlap ``raw_lo`` and the memorised input's own overlap ``input_lo``, and
    at both ends its memorisation ``memo_lo``, ``memo_hi`` (reused); at the largest width the
    projection ``proj_re``, ``proj_fr`` (reused, fresh, with standard errors ``*_sem``), the
    participation ``proj_part`` and :math:`\tilde u_2` of the same runs, ``proj_ut``; the theory
    ``proj_theory``; the verdicts ``verdict_*`` as text, with the numbers they rest on. The
    controls (random signs, memorised inputs) are in :func:`term_evidence_table`."""
    v = data.values
    Ns = data.Ns(main)
    N = Ns[-1]
    out = {"ev_N_lo": Ns[0], "ev_N_hi": N,
           "raw_lo": float(v(main, Ns[0], "term_overlap", "reused").mean()),
           "input_lo": float(v(main, Ns[0], "term_input_overlap", "reused").mean())}
    for tag, width in (("lo", Ns[0]), ("hi", N)):
        out[f"memo_{tag}"] = float(v(main, width, "term_memorisation", "reused").mean())
    for name, batch in (("re", "reused"), ("fr", "fresh")):
        out[f"proj_{name}"], out[f"proj_{name}_sem"] = mean_sem(
            v(main, N, "projected_overlap", batch))
    out["proj_ut"] = float(v(main, N, "signal_reuse", "reused").mean())
    out["proj_part"] = float(v(main, N, "projected_participation", "reused").mean())
    out["proj_theory"] = limits.overlap(data.configs[main].target, "reused", aware=True)
    verdicts = term_verdicts(data, limits, main, control)
    out.update({f"verdict_{k}": str(vd) for k, vd in verdicts.items()})
    out["proj_z"] = verdicts["reuse"].t_null
    out["proj_he2"], out["proj_he2_sem"] = verdicts["even"].mean, verdicts["even"].sem
    out["proj_he2_sampling"] = verdicts["even"].null
    out["proj_fr_sampling"] = verdicts["fresh"].null
    return out


def plot_term_evidence(data: PairedData, limits: Limits, main: str, control: str):
    r"""Figure: left, what the top right vector of the reused :math:`T_2` is (its overlap with
    :math:`\beta^\star`, its memorisation, and the overlap of the single input it memorises)
    against :math:`N`; right, :math:`T_2^\top a^{\circ3}`'s overlap with :math:`\beta^\star`,
    reused and fresh, with the random-sign and memorised-input controls, :math:`\tilde u_2` of
    the same runs, the ``control`` link, the theory (:math:`\tilde u_2` at finite :math:`n` and
    its limit) and chance. Means and standard errors over the paired seeds."""
    import matplotlib.pyplot as plt

    _check_type(data, "data", PairedData)
    _check_type(limits, "limits", Limits)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.0, 5.2), layout="constrained")
    Ns = data.Ns(main)
    target = data.configs[main].target

    def series(config, key, batch, Ns=Ns):
        stats = [mean_sem(data.values(config, N, key, batch)) for N in Ns]
        return [m for m, _ in stats], [s for _, s in stats]

    for key, label, style in (
            ("term_memorisation", r"memorisation of $v_1(T_2)$", dict(color="k", mfc="w")),
            ("term_overlap", r"$|\langle v_1(T_2), \beta^\star\rangle|$",
             dict(color=COLORS["reused"])),
            ("term_input_overlap", "the memorised input's own overlap",
             dict(color=COLORS["reused"], mfc="w", ls="--"))):
        errorbars(ax1, Ns, *series(main, key, "reused"), label=label, **style)
    ax1.plot(Ns, [chance_overlap(N) for N in Ns], ":", color=COLORS["chance"],
             label=r"chance $1/\sqrt{d}$")
    _n_axis(ax1, Ns, "$N$")
    ax1.set(yscale="log", ylabel="cosine", title=r"reused $T_2$: its top vector")

    grid = n_grid(Ns)
    ax2.plot(grid, [limits.overlap(target, "reused", n=int(n), aware=True) for n in grid],
             color=COLORS["theory"], lw=1.2, label=r"theory: $\tilde u_2$")
    # The limit as a mark just right of the widest run: a line at that height would lie
    # under the finite-n theory, which is within 0.001 of it from N = 4000 on.
    ax2.plot([grid[-1] * 1.15], [limits.overlap(target, "reused", aware=True)], marker="<",
             ls="none", ms=6, color=COLORS["theory"], label=r"its limit, $N\to\infty$")
    for key, batch, label, style in (
            ("projected_overlap", "reused", "reused", dict(color=COLORS["reused"])),
            ("projected_overlap", "fresh", "fresh", dict(color=COLORS["fresh"])),
            ("signal_reuse", "reused", r"$\tilde u_2$, same runs", dict(color="k", mfc="w",
                                                                       ms=3)),
            ("projected_random_sign", "reused", "random-sign left vector",
             dict(color=COLORS["reused"], mfc="w", ls=":")),
            ("projected_memorised_null", "reused", "memorised inputs alone",
             dict(color=COLORS["chance"], marker="s", ls="--"))):
        errorbars(ax2, Ns, *series(main, key, batch), label=label, **style)
    Nc = data.Ns(control)
    for batch, mark in (("reused", "^"), ("fresh", "v")):
        errorbars(ax2, Nc, *series(control, "projected_overlap", batch, Nc), ls="none",
                  marker=mark, color=COLORS[batch], mfc="w", ms=5,
                  label=f"{data.configs[control].label.split(',')[-1].strip()}, {batch}")
    ax2.plot(grid, 1 / np.sqrt(grid), ":", color=COLORS["chance"], label="chance")
    _n_axis(ax2, Ns, "$N$")
    ax2.set(ylabel=r"$|\cos(T_2^\top a^{\circ 3}, \beta^\star)|$",
            title=r"$T_2$ seen through $a^{\circ3}$", ylim=(0, None))
    h1, l1 = ax1.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    # Below both panels ("outside" needs the book style's constrained layout).
    fig.legend(h1 + h2, ["left: " + t for t in l1] + l2, loc="outside lower center", ncol=2,
               frameon=False)
    plt.close(fig)
    return fig


def _term_rows(data: PairedData, configs, columns):
    # One row per configuration and width: the link's name, N, then mean ± standard error over
    # the paired seeds of each (key, batch) in ``columns``.
    rows = []
    for key in configs:
        # The link only: the activation and step sizes are the caption's.
        name = data.configs[key].label.split(",")[-1].strip()
        for N in data.Ns(key):
            cells = []
            for column, batch in columns:
                m, s = mean_sem(data.values(key, N, column, batch))
                cells.append(f"{m:.3f} ± {s:.3f}")
            rows.append([name, str(N), *cells])
    return rows


def term_evidence_table(data: PairedData, limits: Limits, configs,
                        label: str = "tab-reuse-projected"):
    r"""Table ``label``: per configuration in ``configs`` and width, mean ± standard error over
    the paired seeds of :math:`T_2^\top a^{\circ3}`'s overlap with :math:`\beta^\star` (reused,
    fresh) and of :math:`\tilde u_2` in the same reused runs, next to the theory's
    :math:`\tilde u_2` at that :math:`n`. Its controls are :func:`term_controls_table`."""
    _check_type(data, "data", PairedData)
    _check_type(limits, "limits", Limits)
    rows = _term_rows(data, configs, [("projected_overlap", "reused"),
                                      ("projected_overlap", "fresh"), ("signal_reuse", "reused")])
    targets = [data.configs[key].target for key in configs for _ in data.Ns(key)]
    sizes = [N for key in configs for N in data.Ns(key)]
    for row, t, N in zip(rows, targets, sizes):
        row.append(f"{limits.overlap(t, 'reused', n=N, aware=True):.3f}")
    return markdown_table(
        "The exact term seen through its predicted left vector: overlap of $T_2^\\top a^{\\circ3}$ "
        "with $\\beta^\\star$, reused and fresh batch, and of the reuse-aware direction "
        "$\\tilde u_2$ of the same reused runs, against its theory at that $n$; mean ± standard "
        "error over the paired seeds, $\\sigma_4$.",
        label, ["link", "$N$", "reused", "fresh", "$\\tilde u_2$", "theory"], rows)


def term_controls_table(data: PairedData, configs, label: str = "tab-reuse-projected-controls"):
    r"""Table ``label``: the controls of :func:`term_evidence_table` in the same reused runs, per
    configuration in ``configs`` and width: :math:`T_2^\top a^{\circ3}` itself, the random-sign
    left vector and the span of the memorised inputs alone (overlap with :math:`\beta^\star`,
    mean ± standard error over the paired seeds)."""
    _check_type(data, "data", PairedData)
    rows = _term_rows(data, configs, [("projected_overlap", "reused"),
                                      ("projected_random_sign", "reused"),
                                      ("projected_memorised_null", "reused")])
    return markdown_table(
        "Controls of the exact-term test in the same reused runs: the random-sign left vector "
        "$|a|^{\\circ3}\\odot\\xi$ and the span of the memorised inputs alone, next to "
        "$T_2^\\top a^{\\circ3}$ itself; overlap with $\\beta^\\star$, mean ± standard error over "
        "the paired seeds, $\\sigma_4$.",
        label, ["link", "$N$", "$T_2^\\top a^{\\circ3}$", "random signs", "memorised inputs"], rows)


def term_summary_table(data: PairedData, main: str, control: str):
    r"""Table *tab-reuse-projected-summary*: at the largest width of ``main``, each quantity of the
    exact-term test in one row (mean ± standard error over the paired seeds): the reused and the
    fresh projection, its random-sign control, the memorised inputs alone, the projection without
    them, :math:`\tilde u_2` of the same runs, and the ``control`` link's projection (reused)."""
    _check_type(data, "data", PairedData)
    N, Nc = data.Ns(main)[-1], data.Ns(control)[-1]
    rows = [(r"$T_2^\top a^{\circ3}$", main, N, "projected_overlap", "reused"),
            ("the same, fresh batch", main, N, "projected_overlap", "fresh"),
            ("random-sign left vector", main, N, "projected_random_sign", "reused"),
            ("memorised inputs alone", main, N, "projected_memorised_null", "reused"),
            (r"$T_2^\top a^{\circ3}$ without those inputs", main, N,
             "projected_without_memorised", "reused"),
            (r"$\tilde u_2$, same runs", main, N, "signal_reuse", "reused"),
            (f"{data.configs[control].label}, $N = {Nc}$", control, Nc, "projected_overlap",
             "reused")]
    cells = []
    for label, config, width, key, batch in rows:
        m, s = mean_sem(data.values(config, width, key, batch))
        cells.append([label, f"{m:.3f} ± {s:.3f}"])
    return markdown_table(
        f"The exact-term test at $N = {N}$, {data.configs[main].label} (reused batch unless marked): "
        "overlap with the target direction, mean ± standard error over the paired seeds.",
        "tab-reuse-projected-summary", ["quantity", "overlap with $\\beta^\\star$"], cells)
