r"""Chapter *Two steps, several spikes* and its appendix: the scaling study and its figures."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

from ..analysis.plane import nstar_spread, spike_widths, theory_count
from ..analysis.population import population_signal
from ..analysis.spikes import outlier_strength, power_law_constant
from ..analysis.summary import Summary
from ..analysis.sweep import loglog_slope, rng_for, split_batches, sweep
from ..analysis.theory import phase_boundaries, spike_exponent
from ..experiments import spikes as experiments
from ..model.activations import as_activation
from .figures import (BATCH_ORDER, COLORS, K_COLORS, attach_data, chance_line, finished,
                      legend_from, plot_spectrum, width_axis)
from .report import minus_sign
from .spikes import terms_summary

#: Colour of the predicted spike strengths and projections.
PRED = "#b8860b"
#: One shade per value of :math:`\Lambda` (and of a measured count), 0..3, and their key.
SHADES = ListedColormap(["#f7f7f7", "#d6e6f4", "#a6cbe6", "#6fa8d6"])
SHADE_KEY = [(rf"$\Lambda = {v}$", dict(ls="none", marker="s", ms=8, mfc=SHADES(v), mec="0.6"))
             for v in range(4)]
#: Values of the scaling study's records averaged over seeds besides the terms' own
#: (:data:`twostep.pages.spikes.TERM_VALUES`).
SUMMARY_VALUES = ("size_corr", "rel_corr", "right_corrected", "localisation",
                  "localisation_signal", "memorisation", "settings_higher",
                  "settings_lin_overlap", "settings_beta_two", "settings_beta_lin",
                  "settings_count", "settings_count_W1", "settings_count_own", "settings_edge_own")
#: The orders whose size the book's correction changes (order 1 as the unchanged reference).
CORRECTION_ORDERS = (1, 2, 3)

@dataclass
class Scaling:
    r"""The scaling study: ``summary`` by ``("batch", "N")`` and the study's arguments."""

    summary: Summary
    Ns: list
    c: float
    ref: tuple
    settings: list
    alphas: list
    n_grid: int
    n_top: int
    L: int
    activation: object
    target: object

    @property
    def predicted(self) -> list:
        r""":math:`e_k` at ``ref``, :math:`k = 0..L-1`."""
        return [spike_exponent(k, *self.ref) for k in range(self.L)]

    def slope(self, batch: str, key: str, index=()) -> tuple:
        r"""(log-log slope, standard error) in :math:`N` of ``key[index]`` over the runs of ``batch``.
        """
        return loglog_slope(*self.summary.pooled(key, index, batch=batch))

def scaling_study(Ns, seeds, activation="poly4", target="he1", c: float = 0.2, ref=(0.4, 0.25),
                  settings=(), alphas=(), n_grid: int = 0, n_top: int = 6,
                  n_jobs: int = 1) -> Scaling:
    r""":func:`~twostep.experiments.spikes.spike_experiment` over widths, seeds and both batches.
    """
    act = as_activation(activation)
    task = partial(experiments.spike_experiment, activation=activation, target=target, c1=c,
                   alpha1=ref[0], c2=c, alpha2=ref[1], settings=settings, n_top=n_top,
                   corrected=True)
    grid = [(a1, a2) for a1 in alphas for a2 in alphas]
    # Largest widths first (cost N^3): with an odd number of the widest pairs, a worker left
    # alone with one at the end would idle the other core; the smaller ones fill it.
    records = sweep(task, [{"N": N, "batch": "both", "grid": grid if N == n_grid else ()}
                           for N in Ns], seeds=seeds, n_jobs=n_jobs, cost=lambda p: p["N"] ** 3)
    records = split_batches(records, BATCH_ORDER)
    for r in records:
        r["size_corr"] = r["top"] / r["signal_corrected"]
        r["rel_corr"] = r["residual_corrected"] / r["signal_corrected"]
    return Scaling(terms_summary(records, SUMMARY_VALUES), list(Ns), c, tuple(ref),
                   [tuple(st) for st in settings], list(alphas), n_grid, n_top, act.degree, act,
                   target)

def draw(experiment: str, seed: int, **kwargs):
    """One of the chapter's single draws, keyed for :func:`twostep.pages.memo.study`."""
    if experiment not in ("decomposition_check", "one_draw", "power_components"):
        raise ValueError(f"experiment must be a single draw of twostep.experiments.spikes, "
                         f"got {experiment!r}")
    return getattr(experiments, experiment)(rng_for(seed), **kwargs)

# --------------------------------------------------------------------------- the book's correction

def correction_limits(scaling: Scaling) -> dict:
    r"""The large-:math:`N` limit of :math:`\|S_k^{\rm corr}\|/\|S_k\|` at :math:`\psi = 1` for
    :data:`CORRECTION_ORDERS`, ``{batch: (3,)}``
    (:func:`twostep.analysis.population.population_signal`, ``"corrected"`` over ``"reuse"``)."""
    def norm(k, b, kind):
        return population_signal(scaling.target, 1.0, k, b, kind,
                                 activation=scaling.activation).norm
    return {b: np.array([norm(k, b, "corrected") / norm(k, b, "reuse") for k in CORRECTION_ORDERS])
            for b in BATCH_ORDER}

def plot_correction(scaling: Scaling, limits: dict):
    r"""Figure *fig-correction*: :math:`S_k` against :math:`S_k^{\rm corr}` along :math:`N`, fresh.
    """
    colors = {1: "#7f7f7f", 2: "#1f77b4", 3: "#d62728"}
    fig, grid = plt.subplots(2, 2, figsize=(7.0, 5.6))
    axes, ax_key, rows = list(grid.flat[:3]), grid.flat[3], []
    panels = (("size", "size_corr", r"$s_1(T_k)\,/\,\|S\|$"),
              ("rel", "rel_corr", r"$\|T_k - S\|_{op}\,/\,\|S\|$"),
              ("right", "right_corrected", r"$|\cos|$ with $S$'s right vector"))
    for p, (ax, (plain, corr, label)) in enumerate(zip(axes, panels)):
        for j, k in enumerate(CORRECTION_ORDERS):
            # The corrected spike filled, then the plain one as a larger open ring on top: at
            # k = 1 the two coincide, and a filled marker drawn last would hide the other.
            for key, style, face, size in ((corr, "-", colors[k], 4), (plain, "--", "none", 6)):
                x, mean, sem = scaling.summary.series(key, k, batch="fresh")
                ax.errorbar(x, mean, yerr=sem, color=colors[k], ls=style, marker="o", ms=size,
                            mfc=face, capsize=2, lw=1.1)
                rows += [dict(panel="abc"[p], k=k, prediction="S_k" if key == plain else "S_k^corr",
                              N=int(n), mean=m, sem=e,
                              limit=limits["fresh"][j] if p == 0 and key == plain else np.nan)
                         for n, m, e in zip(x, mean, sem)]
            if p == 0 and k >= 2:
                ax.axhline(limits["fresh"][j], color=colors[k], lw=0.8, ls=":")
        width_axis(ax, scaling.Ns, r"width $N = n = d$")
        ax.set_ylabel(label)
    axes[0].axhline(1.0, color="0.3", lw=0.8)
    ax_key.axis("off")
    legend_from(ax_key, [(rf"$k={k}$, " + name, dict(color=colors[k], marker="o", ls=ls,
                                                     mfc=colors[k] if ls == "-" else "none"))
                         for k in CORRECTION_ORDERS
                         for name, ls in ((r"$S_k$", "--"), (r"$S_k^{\rm corr}$", "-"))]
                + [("1", dict(color="0.3", lw=0.8)),
                   (r"(a) limit of $\|S_k^{\rm corr}\|/\|S_k\|$", dict(color="0.3", lw=0.8,
                                                                      ls=":"))],
                loc="center", frameon=False)
    for ax, title in zip(axes, ("(a) size of $T_k$", "(b) what the prediction leaves",
                                "(c) top right vector")):
        ax.set_title(title)
    return attach_data(finished(fig), rows)

# --------------------------------------------------------------------------- one draw's spectrum

#: W0's histogram outline in fig-spectra; the threshold's legend entry names it in words, since
#: mathtext draws the star of a subscript as a dot at 9 pt.
W0_COLOR = "#2e86c1"
THETA_LABEL = r"outlier threshold $\theta_{\star}$"

def plot_spectra(data: dict):
    r"""Figure *fig-spectra*: per setting, :math:`W_2`'s spectrum (left) and the top singular values
    of :math:`W_2-W_0` against the predicted spikes and :math:`\theta_\star` (right)."""
    n, L, theta = len(data["spec"]), len(data["U"]), outlier_strength(1.0)
    fig, axes = plt.subplots(n, 2, figsize=(7.0, 2.25 * n + 1.1), squeeze=False,
                             gridspec_kw={"width_ratios": [1.25, 1]})
    rows = []
    for j, s in enumerate(data["spec"]):
        ax = axes[j, 0]
        plot_spectrum(ax, s["sv2"], 1.0, bins=50, label=r"$W_2$", outlier_color="k")
        # W0's outline in a colour of its own: in black it merges with the Marchenko-Pastur curve
        ax.hist(data["W0"], bins=50, density=True, histtype="step", color=W0_COLOR, lw=0.9)
        for x in s["sv1"][s["sv1"] > 2.1]:
            ax.axvline(x, color=COLORS["one-step"], lw=1.2, ymax=0.2, ls="--")
        ax.set_xscale("symlog", linthresh=3, linscale=2)
        ax.set_xlim(0, 20)
        ax.set_xticks([0, 1, 2, 3, 10], ["0", "1", "2", "3", "10"])
        ax.set_xticks([5, 20], minor=True)
        ax.set_title(rf"$({s['a1']}, {s['a2']})$, $\Lambda = {s['lam']}$: "
                     + f"outliers $W_1$ {s['n1']}, $W_2$ {s['n2']}", loc="left")
        ax.set(xlabel="singular value of $W_2$", ylabel="density")
        ax = axes[j, 1]
        ranks = np.arange(1, len(s["learned"]) + 1)
        ax.plot(ranks, s["learned"], "o", color="k", ms=4)
        strength = np.asarray(s["strengths"], dtype=float)
        low = strength < 1e-3
        ax.plot(ranks[:L][~low], strength[~low], "D", mfc="none", color=PRED, ms=7)
        # a strength below the axis is marked at its floor, not drawn off it
        ax.plot(ranks[:L][low], np.full(low.sum(), 1.3e-3), "v", color=PRED, ms=6)
        ax.axhline(theta, color=COLORS["theory"], ls="--", lw=1)
        ax.axvspan(0.5, 1.5 + s["lam"], color="0.92", zorder=0)
        ax.set(yscale="log", ylim=(1e-3, 30), xlim=(0.5, 8.5), xticks=range(1, 9),
               xlabel="rank $i$", ylabel="singular value")
        setting = f"({s['a1']}, {s['a2']})"
        rows += [dict(setting=setting, series=name, rank=i + 1, value=float(v), theta_star=theta)
                 for name, values in (("s_i(W2 - W0)", s["learned"]), ("predicted strength",
                                                                       s["strengths"]),
                                      ("W2 beyond 2.1", s["sv2"][s["sv2"] > 2.1]),
                                      ("W1 beyond 2.1", s["sv1"][s["sv1"] > 2.1]))
                 for i, v in enumerate(values)]
    box = dict(ls="none", marker="s", ms=9)      # a patch: a histogram's bars, a shaded band
    legend_from(fig, [(r"$W_2$", dict(color="0.6", alpha=0.8, **box)),
                      (r"$W_0$", dict(color=W0_COLOR, lw=0.9)),
                      ("Marchenko–Pastur", dict(color=COLORS["theory"], lw=1.3)),
                      ("bulk edge 2", dict(color=COLORS["theory"], ls=":", lw=1)),
                      (r"outliers of $W_2$", dict(color="k", lw=1.6)),
                      (r"outliers of $W_1$", dict(color=COLORS["one-step"], lw=1.2, ls="--")),
                      (r"$s_i(W_2 - W_0)$", dict(color="k", marker="o", ls="none", ms=4)),
                      ("predicted spike strengths", dict(color=PRED, marker="D", mfc="none",
                                                         ls="none", ms=7)),
                      (THETA_LABEL, dict(color=COLORS["theory"], ls="--", lw=1)),
                      (r"first spike and $k\leq\Lambda$", dict(color="0.92", **box))],
                loc="outside lower center", ncol=3)
    return attach_data(finished(fig), rows)

def panels(n: int, height: float, key: float, **kw):
    """``n`` panels in rows of two (one if ``n = 1``), 7.0 in wide, each row ``height`` in tall
    and ``key`` in more for a key below; the cells past ``n`` hidden. Returns the figure and
    the ``n`` axes."""
    ncol = 2 if n > 1 else 1
    nrow = -(-n // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(7.0, height * nrow + key), squeeze=False, **kw)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes.flat[:n]

def plot_left(data: dict):
    r"""Figure *fig-left*: entries of the top left singular vector of each :math:`T_k` against
    :math:`\sqrt N a_i`, with the predicted profile :math:`a^{\circ(k+1)}/\|a^{\circ(k+1)}\|`."""
    a, U = data["a"], data["U"]
    fig, axes = panels(len(U), 2.55, 0.5, sharex=True)
    x = a * np.sqrt(a.size)
    grid_x, rows = np.linspace(x.min(), x.max(), 200), []
    for k, ax in enumerate(axes):
        power = a ** (k + 1)
        u = U[k] * np.sign(U[k] @ power)
        profile = power / np.linalg.norm(power)
        # thousands of dots: drawn as one raster inside the SVG, so the page keeps a vector figure
        ax.plot(x, u, ".", ms=2, color=K_COLORS[k % len(K_COLORS)], alpha=0.6, rasterized=True)
        ax.plot(grid_x, (grid_x / np.sqrt(a.size)) ** (k + 1) / np.linalg.norm(power),
                color=COLORS["theory"], lw=1)
        ax.set_title(f"$T_{k}$: cosine {data['left'][k]:.3f}")
        ax.set(xlabel=r"$\sqrt{N}\,a_i$", ylabel="entry $i$ of the left vector")
        ax.xaxis.set_tick_params(labelbottom=True)
        rows += [dict(k=k, sqrtN_a=float(xi), entry=float(ui), predicted=float(pi))
                 for xi, ui, pi in zip(x, u, profile)]
    legend_from(fig, [("top left vector of $T_k$", dict(color="0.4", marker=".", ls="none")),
                      (r"$a^{\circ(k+1)}/\|a^{\circ(k+1)}\|$", dict(color=COLORS["theory"], lw=1))],
                loc="outside lower center", ncol=2)
    return attach_data(finished(fig), rows)

# --------------------------------------------------------------------------- two steps as one

def plot_one_step(scaling: Scaling, mem: dict, settings):
    r"""Figure *fig-one-step*: (a) spectra of :math:`W_2` and of one step of size
    :math:`\eta_1+\eta_2`; (b) their distance against :math:`N`; (c) their top vectors' cosine."""
    s, NS, spec = scaling.summary, scaling.Ns, mem["spec"][0]
    fig, grid = plt.subplots(2, 2, figsize=(7.0, 5.9))
    ax, ax_norm, ax_cos, ax_key = grid.flat
    bins = np.linspace(0, 2.4, 60)
    ax.hist(spec["sv2"], bins=bins, density=True, histtype="stepfilled", color="0.75",
            label=r"$W_2$")
    ax.hist(spec["sv_lin"], bins=bins, density=True, histtype="step", color=COLORS["one-step"],
            lw=1.2, label=r"$W_0+(\eta_1+\eta_2)G_1$")
    ax.set(xlabel="singular value", ylabel="density", ylim=(0, 1.25),
           title=rf"(a) $({settings[0][0]}, {settings[0][1]})$, reused, $N = {spec['sv2'].size}$")
    ax.legend(loc="upper right")
    rows = [dict(panel="a", series=name, batch="reused", setting=str(settings[0]), N=i + 1,
                 value=float(v), sem=np.nan, theory=np.nan)
            for name in ("sv2", "sv_lin") for i, v in enumerate(spec[name])]
    Ns, key = np.array(NS, float), []
    for j, st in enumerate(settings):
        i = scaling.settings.index(st)
        e1, ls = spike_exponent(1, *st), (":", "-.")[j % 2]
        C, _ = power_law_constant(*s.pooled("settings_higher", i, batch="fresh"), e1)
        ax_norm.plot(Ns, C * Ns ** e1, color="0.2", ls=ls, lw=1.3)
        key.append((rf"slope $e_1 = {e1:+.1f}$ at $({st[0]}, {st[1]})$",
                    dict(color="0.2", ls=ls, lw=1.3)))
        for b in BATCH_ORDER:
            style = dict(color=COLORS[b], ls=("-", "--")[j % 2],
                         mfc=COLORS[b] if j == 0 else "white", capsize=3, ms=4)
            x, y, e = s.series("settings_higher", i, batch=b)
            ax_norm.errorbar(x, y, yerr=e, marker="o", **style)
            rows += [dict(panel="b", series="norm", batch=b, setting=str(st), N=int(n),
                          value=v, sem=se, theory=C * n ** e1) for n, v, se in zip(x, y, e)]
            x, lin, lin_sem = s.series("settings_lin_overlap", i, batch=b)
            ax_cos.errorbar(x * (0.96 if b == "fresh" else 1.04), 1 - lin, yerr=lin_sem,
                            marker="o" if b == "fresh" else "s", **style)
            rows += [dict(panel="c", series="1 - cosine", batch=b, setting=str(st), N=int(n),
                          value=1 - v, sem=se, theory=1 - 1 / np.sqrt(n))
                     for n, v, se in zip(x, lin, lin_sem)]
            slope = minus_sign(f"{scaling.slope(b, 'settings_higher', i)[0]:+.2f}")
            key.append((rf"{b} $({st[0]}, {st[1]})$, fitted slope {slope}", dict(style, marker="o")))
    chance = rf"chance $1-1/\sqrt{{{NS[-1]}}}$"
    chance_line(ax_cos, 1 - 1 / np.sqrt(NS[-1]), label=chance)
    key.append((chance, dict(color=COLORS["chance"], ls=":", lw=1.2)))
    ax_norm.set(yscale="log", ylabel=r"$\|W_2 - W_{\rm lin}\|_{op}$",
                title=r"(b) $\|\sum_{k\geq1}T_k\|_{op}$")
    ax_cos.set(yscale="log", ylabel="1 − cosine", title=r"(c) top right vectors of $W_2$, $W_{\rm lin}$")
    for a in (ax_norm, ax_cos):
        width_axis(a, NS, "width $N$")
        a.yaxis.set_minor_formatter(plt.NullFormatter())
    ax_key.axis("off")
    legend_from(ax_key, [(label, {k: v for k, v in st.items() if k != "capsize"})
                         for label, st in key],
                title="(b), (c); open, dashed: second setting", loc="center", frameon=False)
    return attach_data(finished(fig), rows)

# --------------------------------------------------------------------------- the cap at L - 1

def plot_cap(cap: dict, labels: dict):
    r"""Figure *fig-cap*: measured and predicted components along :math:`a^{\circ k}`."""
    fig, axes = panels(len(labels), 2.6, 0.6, sharey=True)
    rows = []
    for ax, (name, label) in zip(axes, labels.items()):
        c_ = cap[name]
        m = np.arange(len(c_["measured"]))
        ax.bar(m, c_["measured"], color="0.7", label=r"measured $\|q_m^\top(W_2-W_1)\|$")
        pred = np.asarray(c_["predicted"], dtype=float)
        low = pred < 1e-3
        ax.plot(m[~low], pred[~low], "D", color=PRED, ms=5,
                label=r"same projection of the predicted $\sum_k S_k$")
        # a prediction below the axis (zero past the cap) is marked at its floor, not hidden
        ax.plot(m[low], np.full(low.sum(), 1.3e-3), "v", color=PRED, ms=6,
                label=r"predicted below $10^{-3}$")
        ax.plot(m, c_["null"], "_", color="k", ms=14, mew=1.5, label="sampling level")
        ax.set(yscale="log", ylim=(1e-3, 10), xticks=m,
               xticklabels=[f"$a^{{\\circ{i + 1}}}$" for i in m], title=label)
        ax.set(xlabel="component along", ylabel="norm")
        ax.yaxis.set_tick_params(labelleft=True)
        rows += [dict(activation=name, power=int(i) + 1, measured=float(c_["measured"][i]),
                      predicted=float(c_["predicted"][i]), sampling_level=float(c_["null"][i]),
                      predicted_below_axis=bool(c_["predicted"][i] < 1e-3)) for i in m]
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return attach_data(finished(fig), rows)

# --------------------------------------------------------------------------- how large must N be

def shade_plane(ax, L: int, resolution: int = 300, lw: float = 1.0) -> None:
    r"""Shade ``ax`` by the theory's :math:`\Lambda` and draw its boundaries."""
    fine = np.linspace(0, 0.4999, resolution)
    F1, F2 = np.meshgrid(fine, fine, indexing="ij")
    ax.pcolormesh(fine, fine, theory_count(F1, F2, L).T, cmap=SHADES, vmin=-0.5, vmax=3.5,
                  shading="auto", rasterized=True)
    for k in range(1, L):
        ax.plot(fine, phase_boundaries(fine, k), color="k", lw=lw)

def extrapolation(scaling: Scaling, theta_star: float, key: str = "settings_spikes") -> list:
    r"""Width at which each predicted spike of :math:`W_2` would reach ``theta_star``."""
    return spike_widths(*scaling.summary.pooled(key, batch="fresh"), scaling.settings, theta_star)

def nstar_range(scaling: Scaling, setting: int, k: int, margins=(0.02, 0.10),
                key: str = "settings_spikes_corrected") -> dict:
    r""":func:`~twostep.analysis.plane.nstar_spread` of the :math:`(k+1)`-th spike of setting
    ``setting`` (its strengths ``key`` in the fresh runs): the growth per doubling of :math:`N`
    and the range of :math:`N^\star` over the margins and the seeds' constants."""
    fresh = scaling.summary.runs(batch="fresh")
    return nstar_spread([r["N"] for r in fresh], [r[key][setting][k] for r in fresh],
                        [r["seed"] for r in fresh], spike_exponent(k, *scaling.settings[setting]),
                        margins)
