r"""Chapter *The setting*: the gradient check's kink margin, one step's sizes, the spectrum."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..analysis.spectra import (bulk_edge, ks_distance, marchenko_pastur_density,
                                singular_values, top_singular)
from ..analysis.summary import Summary
from ..experiments.first_step import first_update
from ..model.activations import Activation
from ..model.network import initialise
from ..model.steps import step_size
from ..model.targets import hermite_link
from .figures import (COLORS, attach_data, finished, legend_from, seeds_and_mean, ticks_at,
                      width_axis)
from .report import minus_sign

def kink_margin(W, X, h: float) -> tuple[float, float]:
    r"""``(min_pre, max_shift)``: the finite differences stay off the kink if the first is larger.
    """
    return float(np.abs(W @ X.T).min()), float(h * np.abs(X).max())

def displacement(N: int, seed: int, c: float, alpha: float, activation: Activation) -> tuple:
    r"""One step's median row move and :math:`\|W_1-W_0\|_{op}` at :math:`N = n = d`."""
    G = first_update(np.random.default_rng([N, seed]), N, activation, hermite_link(1))[1]
    D = step_size(c, alpha, N) * G
    return float(np.median(np.linalg.norm(D, axis=1))), float(top_singular(D, 1)[0][0])

def step_scaling_data(widths, n_seeds: int, c: float, alpha: float,
                      activation: Activation) -> Summary:
    r""":func:`displacement` for the seeds ``0..n_seeds-1`` at each width, summarised by
    ``("N",)``: ``row`` (the median neuron move), ``op`` (:math:`\|W_1-W_0\|_{op}`) and
    ``eta``."""
    records = [dict(N=N, seed=s, eta=step_size(c, alpha, N),
                    **dict(zip(("row", "op"), displacement(N, s, c, alpha, activation))))
               for N in widths for s in range(n_seeds)]
    return Summary(records, ("N",), ("row", "op", "eta"))

def plot_step_scaling(data: Summary, alpha: float):
    r"""Figure *fig-step-scaling*: the neuron move and :math:`\|W_1-W_0\|_{op}` against :math:`N`.
    """
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    rows, entries = [], []
    for key, name, power, color in (("op", r"$\|W_1 - W_0\|_{op}$", alpha, COLORS["one-step"]),
                                    ("row", "median neuron move", alpha - 0.5, "#1e8449")):
        x, mean, _ = data.series(key)
        theory = mean[0] * (x / x[0]) ** power
        seeds_and_mean(ax, data, key, {}, rows, name, theory=theory, color=color, ls="none")
        ax.plot(x, theory, color=color, ls="--", lw=1)
        entries.append((name, dict(color=color, marker="o")))
    ax.axhline(bulk_edge(1.0), color=COLORS["chance"], ls=":", lw=1.2)
    ax.set_yscale("log")
    width_axis(ax, data.axis())
    ticks_at(ax.yaxis, [0.2, 0.5, 1, 2, 5, 10])
    ax.set_ylabel("size of one step")
    legend_from(fig, entries + [
        (rf"$N^{{\alpha}}$, $N^{{\alpha - 1/2}}$ ($\alpha = {alpha:g}$)", dict(ls="--", lw=1)),
        (r"bulk edge of $W_0$", dict(color=COLORS["chance"], ls=":", lw=1.2))],
        loc="outside lower center", ncol=2, fontsize=9)
    return finished(attach_data(fig, rows))

def w0_spectrum_data(shapes) -> dict:
    r"""``(N, d) -> singular values`` (descending) of :math:`W_0` for each ``(N, d)`` of ``shapes``.
    """
    return {(N, d): singular_values(initialise(N, d, np.random.default_rng(N + d))[0])
            for N, d in shapes}

def plot_w0_spectrum(data: dict, bins: int = 60):
    r"""Figure *fig-w0-spectrum*: :math:`W_0`'s singular values against Marchenko--Pastur."""
    fig, axes = plt.subplots(1, len(data), figsize=(6.6, 3.0), squeeze=False)
    rows = []
    for panel, (ax, ((N, d), s)) in enumerate(zip(axes[0], data.items()), 1):
        ratio, edge = N / d, bulk_edge(N / d)
        density, edges = np.histogram(s, bins=bins, density=True)
        centres = 0.5 * (edges[1:] + edges[:-1])
        theory = marchenko_pastur_density(centres, ratio)
        ax.stairs(density, edges, fill=True, color="0.6", alpha=0.8)
        grid = np.linspace(edges[0], edge, 400)
        ax.plot(grid, marchenko_pastur_density(grid, ratio), color=COLORS["theory"], lw=1.3)
        ax.axvline(edge, color=COLORS["theory"], ls=":", lw=1)
        ax.text(0.03, 0.95, minus_sign(f"KS {ks_distance(s, ratio):.3f}\n"
                                       f"$s_1$ − edge {s[0] - edge:+.3f}"),
                transform=ax.transAxes, va="top", fontsize=9)
        ax.set(title=f"N = {N}, d = {d}", xlabel="singular value", ylabel="density",
               ylim=(0, 1.4 * max(density.max(), theory.max())))
        rows += [dict(panel=panel, x=c, density=h, theory=t)
                 for c, h, t in zip(centres, density, theory)]
    legend_from(fig, [("singular values of $W_0$", dict(color="0.6", patch=True)),
                      ("Marchenko–Pastur density", dict(color=COLORS["theory"], lw=1.3)),
                      (r"bulk edge $1 + \sqrt{N/d}$", dict(color=COLORS["theory"], ls=":"))],
                loc="outside lower center", ncol=3, fontsize=9)
    return finished(attach_data(fig, rows))
