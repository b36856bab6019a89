r"""Paired reused/fresh runs and the test of the reused :math:`T_2` seen through :math:`a^{\circ3}`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np

from ..analysis.alignment import chance_overlap
from ..analysis.population import Limits
from ..analysis.sweep import sweep
from ..analysis.theory import n_spikes
from ..analysis.verdicts import effect, mean_sem, no_effect, size
from ..experiments.reuse import paired_reuse_experiment
from .figures import COLORS, attach_data, errorbars, finished, width_axis, width_grid
from .report import markdown_table, pm

class PairedConfig(NamedTuple):
    r"""One configuration of the paired experiment: label, activation, target and step constant."""

    label: str
    activation: str
    target: str
    c: float

@dataclass
class PairedData:
    r"""Paired reused/fresh runs over seeds (:func:`paired_data`)."""

    configs: dict             # key -> PairedConfig
    alpha2s: tuple            # the second-step exponents measured, the reference first
    n_spikes: tuple           # their Lambda
    records: list             # paired_reuse_experiment's, with config (a key), N and seed

    def values(self, config: str, N: int, key: str, batch: str | None = None,
               index: int | None = None) -> np.ndarray:
        r"""Per-seed values of ``key`` (``batch="diff"``: reused minus fresh), shape ``(seeds,)``.
        """
        rows = [r for r in self.records if r["config"] == config and r["N"] == N]
        if not rows:
            raise ValueError(f"no runs at (config, N) = ({config!r}, {N})")

        def get(r, name):
            v = np.asarray(r[name], dtype=float)
            return v if index is None or v.ndim == 0 else v[index]

        if batch == "diff":
            return np.array([get(r, f"{key}_reused") - get(r, f"{key}_fresh") for r in rows])
        return np.array([get(r, key if batch is None else f"{key}_{batch}") for r in rows])

    def stat(self, config: str, N: int, key: str, batch: str | None = None,
             index: int | None = None) -> tuple:
        """Mean and standard error over the seeds of :meth:`values`."""
        return mean_sem(self.values(config, N, key, batch, index))

    def Ns(self, config: str) -> list:
        """The widths simulated for ``config``, increasing."""
        return sorted({r["N"] for r in self.records if r["config"] == config})

    def series(self, config: str, key: str, batch: str | None = None, index: int | None = None):
        """:meth:`stat` at every width of ``config``: two lists, means and standard errors."""
        stats = [self.stat(config, N, key, batch, index) for N in self.Ns(config)]
        return [m for m, _ in stats], [s for _, s in stats]

def paired_data(configs: dict, sizes: dict, seeds, alpha1: float, alpha2: float, alpha2s=(),
                rescaled=None, n_jobs: int = 1) -> PairedData:
    r""":func:`paired_reuse_experiment` for every configuration, its widths and every seed."""
    rescaled = set(configs if rescaled is None else rescaled)
    pairs = [(key, N) for key in configs for N in sizes[key]]
    grid = [dict(N=N, activation=configs[k].activation, target=configs[k].target, c1=configs[k].c,
                 alpha1=alpha1, c2=configs[k].c, alpha2=alpha2,
                 alpha2s=list(alpha2s) if k in rescaled else [], dtype="float32")
            for k, N in pairs]
    # Costliest first, so that short runs fill the cores at the end; sweep keeps the grid's
    # order, seeds innermost: label each record with its configuration.
    records = sweep(paired_reuse_experiment, grid, seeds=seeds, n_jobs=n_jobs,
                    cost=lambda p: p["N"] ** 3 * (1 + len(p["alpha2s"]) / 3))
    for r, (key, _) in zip(records, [p for p in pairs for _ in seeds]):
        r["config"] = key
    a2s = (alpha2, *alpha2s)
    return PairedData(dict(configs), a2s, tuple(n_spikes(alpha1, a) for a in a2s), records)

def plotted(rows: list, ax, panel: str, series: str, x, mean, sem, theory=None, chance=None,
            **style):
    r"""Draw ``mean`` ± ``sem`` against ``x`` on ``ax`` (labelled ``series``) and add one row per
    point to ``rows`` (for :func:`~twostep.pages.figures.attach_data`): panel, series, x, mean,
    sem, and the ``theory`` and ``chance`` values at that point (sequences, or None)."""
    errorbars(ax, x, mean, sem, label=series, **style)
    given = lambda v: [None] * len(x) if v is None else [float(t) for t in v]  # noqa: E731
    rows += [dict(panel=panel, series=series, x=float(xi), mean=float(m), sem=float(s), theory=t,
                  chance=c) for xi, m, s, t, c in zip(x, mean, sem, given(theory), given(chance))]

# --------------------------------------------------------------------------- T_2 seen through a^3

def strongest_control(data: PairedData, config: str, N: int) -> np.ndarray:
    r"""Per seed, the strongest control of the reused :math:`T_2^\top a^{\circ3}`: the largest of
    the fresh run's projection, the random-sign projection, the memorised inputs' own span and
    the chance level :math:`1/\sqrt d`, shape ``(seeds,)``."""
    return np.max([data.values(config, N, "projected_overlap", "fresh"),
                   data.values(config, N, "projected_random_sign", "reused"),
                   data.values(config, N, "projected_memorised_null", "reused"),
                   np.full(len(data.values(config, N, "projected_overlap", "fresh")),
                           chance_overlap(N))], axis=0)

def term_verdicts(data: PairedData, limits: Limits, main: str, control: str,
                  N: int | None = None) -> dict:
    r"""The verdicts of the exact-term test at width ``N``."""
    v = data.values
    N = data.Ns(main)[-1] if N is None else N
    below = [w for w in data.Ns(control) if w <= N]
    target, even = data.configs[main].target, data.configs[control].target
    sampling = limits.overlap(target, "fresh", n=N, aware=True)
    reused = v(main, N, "projected_overlap", "reused")
    out = {"reuse": effect(reused, strongest_control(data, main, N)),
           "reuse_size": size(reused, limits.overlap(target, "reused", aware=True), sampling),
           "fresh": no_effect(v(main, N, "projected_overlap", "fresh"), sampling), "even": None}
    if below:
        out["even"] = no_effect(v(control, below[-1], "projected_overlap", "reused"),
                                limits.overlap(even, "reused", n=below[-1], aware=True))
    return out

def plot_term_evidence(data: PairedData, limits: Limits, main: str, control: str):
    r"""Figure against :math:`N`: above, :math:`T_2^\top a^{\circ3}`'s overlap with :math:`\beta^\star`
    with its controls and theory; below, the reused :math:`T_2`'s top right vector."""
    fig, (ax2, ax1) = plt.subplots(2, 1, figsize=(4.8, 7.6), height_ratios=[1.25, 1])
    rows, Ns, target = [], data.Ns(main), data.configs[main].target
    grid = width_grid(Ns)
    ax2.plot(grid, [limits.overlap(target, "reused", n=int(n), aware=True) for n in grid],
             color=COLORS["theory"], lw=1.2, label=r"theory: $\tilde u_2$")
    # The limit as a mark just right of the widest run: a line at that height would lie
    # under the finite-n theory, which is within 0.001 of it from N = 4000 on.
    ax2.plot([grid[-1] * 1.15], [limits.overlap(target, "reused", aware=True)], marker="<",
             ls="none", ms=6, color=COLORS["theory"], label=r"its limit, $N\to\infty$")
    theory = [limits.overlap(target, "reused", n=N, aware=True) for N in Ns]
    chance = [chance_overlap(N) for N in Ns]
    for key, batch, label, style in (
            ("projected_overlap", "reused", "reused", dict(color=COLORS["reused"])),
            ("projected_overlap", "fresh", "fresh", dict(color=COLORS["fresh"])),
            ("signal_reuse", "reused", r"$\tilde u_2$, same runs", dict(color="k", mfc="w",
                                                                       ms=3)),
            ("projected_random_sign", "reused", "random signs", dict(color=COLORS["reused"],
                                                                    mfc="w", ls=":")),
            ("projected_memorised_null", "reused", "memorised inputs alone",
             dict(color=COLORS["chance"], marker="s", ls="--"))):
        plotted(rows, ax2, "projection", label, Ns, *data.series(main, key, batch),
                theory=theory if key == "signal_reuse" or label == "reused" else None,
                chance=chance, **style)
    Nc = data.Ns(control)
    for batch, mark in (("reused", "^"), ("fresh", "v")):
        plotted(rows, ax2, "projection",
                f"{data.configs[control].label.split(',')[-1].strip()}, {batch}", Nc,
                *data.series(control, "projected_overlap", batch), ls="none", marker=mark,
                color=COLORS[batch], mfc="w", ms=5, chance=[chance_overlap(N) for N in Nc])
    ax2.plot(grid, 1 / np.sqrt(grid), ":", color=COLORS["chance"], label="chance")
    ax2.set(ylabel=r"$|\cos(T_2^\top a^{\circ 3}, \beta^\star)|$", ylim=(0, None),
            title=r"$T_2$ seen through $a^{\circ3}$")
    for key, label, style in (
            ("term_memorisation", "its memorisation", dict(color="k", mfc="w")),
            ("term_overlap", r"its overlap with $\beta^\star$", dict(color=COLORS["reused"])),
            ("term_input_overlap", "the memorised input's overlap",
             dict(color=COLORS["reused"], mfc="w", ls="--"))):
        plotted(rows, ax1, "top vector", label, Ns, *data.series(main, key, "reused"),
                chance=chance, **style)
    ax1.plot(Ns, chance, ":", color=COLORS["chance"], label=r"chance $1/\sqrt{d}$")
    ax1.set(yscale="log", ylabel="cosine", title=r"reused $T_2$: its top right vector")
    for ax in (ax2, ax1):
        width_axis(ax, Ns, "$N$")
        # below its own panel: the figure is narrow, and each legend names its panel's series
        ax.legend(ncol=2, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    return finished(attach_data(fig, rows))

def term_rows(data: PairedData, configs, columns) -> list:
    """One row per configuration and width: mean ± standard error of each ``(key, batch)``."""
    return [[data.configs[key].label.split(",")[-1].strip(), str(N)]
            + [pm(*data.stat(key, N, column, batch), 3) for column, batch in columns]
            for key in configs for N in data.Ns(key)]

def term_evidence_table(data: PairedData, limits: Limits, configs,
                        label: str = "tab-reuse-projected"):
    r"""Table ``label``: per configuration in ``configs`` and width, the overlap with
    :math:`\beta^\star` of :math:`T_2^\top a^{\circ3}` (reused, fresh) and of :math:`\tilde u_2`
    in the same reused runs, next to the theory's :math:`\tilde u_2` at that :math:`n`."""
    rows = term_rows(data, configs, [("projected_overlap", "reused"),
                                     ("projected_overlap", "fresh"), ("signal_reuse", "reused")])
    theory = [f"{limits.overlap(data.configs[key].target, 'reused', n=N, aware=True):.3f}"
              for key in configs for N in data.Ns(key)]
    return markdown_table(
        "The exact term seen through its predicted left vector: overlap of $T_2^\\top a^{\\circ3}$ "
        "with $\\beta^\\star$, reused and fresh batch, and of the reuse-aware direction "
        "$\\tilde u_2$ of the same reused runs, against its theory at that $n$; mean ± standard "
        "error over the paired seeds, $\\sigma_4$.",
        label, ["link", "$N$", "reused", "fresh", "$\\tilde u_2$", "theory"],
        [row + [cell] for row, cell in zip(rows, theory)])

def term_controls_table(data: PairedData, configs, label: str = "tab-reuse-projected-controls"):
    r"""Table ``label``: the controls of :func:`term_evidence_table` in the same reused runs."""
    return markdown_table(
        "Controls of the exact-term test in the same reused runs: the random-sign left vector "
        "$|a|^{\\circ3}\\odot\\xi$ and the span of the memorised inputs alone, next to "
        "$T_2^\\top a^{\\circ3}$ itself; overlap with $\\beta^\\star$, mean ± standard error over "
        "the paired seeds, $\\sigma_4$.",
        label, ["link", "$N$", "$T_2^\\top a^{\\circ3}$", "random signs", "memorised inputs"],
        term_rows(data, configs, [("projected_overlap", "reused"),
                                  ("projected_random_sign", "reused"),
                                  ("projected_memorised_null", "reused")]))
