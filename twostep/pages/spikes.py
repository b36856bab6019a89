r"""The exact terms :math:`T_k` against their predicted spikes, and the results files' folder."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator

from ..analysis.confirmatory import REACH
from ..analysis.spikes import power_law_constant
from ..analysis.summary import Summary
from ..analysis.verdicts import size, worst
from .figures import (BATCH_ORDER, COLORS, K_COLORS, attach_data, finished, legend_from,
                      width_axis)
from .report import sci

#: The values of a record that :func:`terms_summary` averages over seeds (``rel`` and ``size``
#: are added to each record).
TERM_VALUES = ("top", "signal", "rel", "size", "left", "right")

def results_folder() -> Path:
    """``results/at_scale`` of the repository holding this package (an editable install, a
    checkout), or else the current folder: a reader who downloaded a notebook and its results
    files from the site puts them side by side and runs it there."""
    repository = Path(__file__).resolve().parents[2] / "results" / "at_scale"
    return repository if repository.is_dir() else Path.cwd()

def results_path(name: str, folder=None) -> Path:
    """The path of results file ``name`` in ``folder`` (default :func:`results_folder`): the
    appendix's ``"spike"``, ``"reuse"`` and its control ``"reuse_he2"``, ``"count"`` (the
    exploratory count) and ``"count_confirm"`` (the registered confirmatory count)."""
    return (results_folder() if folder is None else Path(folder)) / f"{name}.json"

def terms_summary(records, values=()) -> Summary:
    r"""``records`` by ``("batch", "N")``, each with ``rel`` :math:`= \|T_k-S_k\|_{op}/\|S_k\|`
    and ``size`` :math:`= s_1(T_k)/\|S_k\|` per order added (as new dicts), averaged over seeds
    for :data:`TERM_VALUES` and ``values``."""
    records = [{**r, "rel": np.asarray(r["residual"]) / np.asarray(r["signal"]),
                "size": np.asarray(r["top"]) / np.asarray(r["signal"])} for r in records]
    return Summary(records, ("batch", "N"), TERM_VALUES + tuple(values))

def series(s: Summary, value: str, index=(), **where) -> tuple:
    """:meth:`Summary.series`, with a NaN standard error (no error bar) at a width of one run."""
    x, mean, sem = s.series(value, index, **where)
    one = np.array([s.count(**where, **{s.by[-1]: t}) == 1 for t in x])
    return x, mean, np.where(one, np.nan, sem)

def plot_terms(terms: Summary, predicted):
    r"""Figures *fig-terms* and *fig-at-scale-terms*: each exact :math:`T_k` against its spike by
    width, fresh and reused: :math:`s_1(T_k)`, the relative remainder, one minus the cosines."""
    Ns, L = terms.axis(), len(predicted)
    N = np.array(Ns, float)
    fig, axes = plt.subplots(3, 2, figsize=(7.0, 9.0))
    rows = []

    def draw(ax, panel, batch, name, x, y, err, theory, **style):
        ax.errorbar(x, y, yerr=err, capsize=3, ms=4, **{"marker": "o", **style})
        rows.extend(dict(panel=panel, batch=batch, series=name, N=int(round(n)), value=v, sem=e,
                         theory=t) for n, v, e, t in zip(x, y, err, theory))

    for col, batch in enumerate(BATCH_ORDER):
        ax_size, ax_rel, ax_cos = axes[:, col]
        floor = 2e-4
        half = terms.at("rel", min(1, L - 1), batch=batch, N=Ns[0]) * (N / N[0]) ** -0.5
        for k in range(L):
            c = K_COLORS[k % len(K_COLORS)]
            C, _ = power_law_constant(*terms.pooled("top", k, batch=batch), predicted[k])
            line = C * N ** predicted[k]
            ax_size.plot(N, line, color=c, ls="--", lw=1.6, alpha=0.45)
            draw(ax_size, "top", batch, f"s1(T_{k})", *series(terms, "top", k, batch=batch),
                 line, color=c)
            draw(ax_rel, "middle", batch, f"remainder k={k}",
                 *series(terms, "rel", k, batch=batch), half if k == 1 else [np.nan] * len(N),
                 color=c)
            for side, shift, style in (("left", 0.97, {}), ("right", 1.03, {"mfc": "white",
                                                                              "ls": "--"})):
                x, mean, sem = series(terms, side, k, batch=batch)
                gap = np.asarray(1 - mean, dtype=float)
                floor = min(floor, np.min(gap[gap > 0], initial=floor))
                draw(ax_cos, "bottom", batch, f"1-cos {side} k={k}", x * shift, 1 - mean, sem,
                     1 - 1 / np.sqrt(x), color=c, **style)
        ax_rel.plot(N, half, color="k", ls="--", lw=1)
        ax_cos.plot(N, 1 - 1 / np.sqrt(N), color=COLORS["chance"], ls=":", lw=1.2)
        ax_size.set(yscale="log", ylabel=r"$s_1(T_k)$", title=f"{batch} batch")
        ax_rel.set(yscale="log")
        # the axis reaches the closest alignment measured (wide runs pass 2e-4)
        ax_cos.set(yscale="log", ylim=(0.5 * floor, 1.5), ylabel="1 − cosine")
    axes[1, 0].set_ylabel(r"$\|T_k-S_k\|_{op}/\|S_k\|$")
    axes[1, 1].set_ylabel(r"$\|T_k-\tilde S_k\|_{op}/\|\tilde S_k\|$")
    for i, ax in enumerate(axes.flat):
        width_axis(ax, Ns, "$N$")
        ax.yaxis.set_minor_locator(plt.NullLocator())
        if i < 4:                    # sizes and ratios span about a decade: more ticks
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    legend_from(fig, [(f"$k = {k}$", dict(color=K_COLORS[k % len(K_COLORS)], marker="o", ms=4))
                      for k in range(L)]
                + [(r"slope $e_k$ (top)", dict(color="0.4", lw=1.6, alpha=0.45, ls="--")),
                   (r"$N^{-1/2}$ (middle)", dict(color="k", lw=1, ls="--")),
                   (r"left vs $a^{\circ(k+1)}$", dict(color="k", marker="o", ms=4)),
                   (r"right vs $u_k$ ($\tilde u_k$)", dict(color="k", marker="o", mfc="white",
                                                           ls="--", ms=4)),
                   (r"chance $1-1/\sqrt{N}$", dict(color=COLORS["chance"], ls=":"))],
                loc="outside lower center", ncol=3)
    return attach_data(finished(fig), rows)

def terms_verdict(terms: Summary, N: int, orders=(2, 3), size_key: str = "size") -> str:
    r"""The book's size prediction judged at width ``N``: the least favourable label."""
    return worst(size(terms.seed_values(size_key, k, batch="fresh", N=N), 1.0) for k in orders)

#: How a table writes a width :math:`N^\star` beyond :data:`~twostep.analysis.confirmatory.REACH`
#: or never reached: an extrapolation that far is no width.
BEYOND = f"beyond reach (> {sci(REACH)})"

def nstar_text(x: float, reach: float | None = None) -> str:
    r"""A width :math:`N^\star` for a table: two significant digits. With ``reach`` (e.g.
    :data:`~twostep.analysis.confirmatory.REACH`), :data:`BEYOND` above it or when never
    reached; without, "never" when infinite."""
    if reach is not None:
        return sci(x, 2) if np.isfinite(x) and x <= reach else BEYOND
    return sci(x, 2) if np.isfinite(x) else "never"
