r"""Chapter *Two steps, several spikes*: its sweeps, tables and figures.

The second update splits exactly into one term per order of the Taylor expansion of
:math:`\sigma'`, :math:`W_2 - W_1 = \sum_{k=0}^{L-1}T_k`, each predicted to be a rank-one spike
:math:`S_k\propto a^{\circ(k+1)}u_k^\top` of size :math:`N^{e_k}`,
:math:`e_k = \alpha_2 - k(1/2-\alpha_1)`. :func:`scaling_study` runs
:func:`twostep.experiments.spikes.spike_experiment` over widths, seeds and both batch schemes,
summarised by batch and width (:mod:`twostep.pages.spikes`, shared with the appendix *At
scale*); the chapter's single draws are the other experiments of
:mod:`twostep.experiments.spikes`, whose results the functions here draw and tabulate. The
``*_table`` functions return the header and rows of tables whose captions the chapter writes
(``*_spread``: a caption's spread over seeds), the ``*_numbers`` functions the values glued
into the prose. The count over the plane and its test are in :mod:`twostep.pages.count`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

from ..analysis.alignment import chance_maximum
from ..analysis.plane import (count_margins, empirical_boundary, empirical_count, is_spike,
                              nstar_spread, power_gram, spike_widths, theory_count)
from ..analysis.population import population_signal
from ..analysis.spikes import outlier_strength, power_cosine, power_law_constant
from ..analysis.summary import Summary
from ..analysis.sweep import loglog_slope, split_batches, sweep
from ..analysis.theory import n_spikes, phase_boundaries, spike_exponent, spike_strength
from ..experiments.spikes import spike_experiment
from ..model.activations import as_activation
from ..model.targets import target_links
from .figures import (BATCH_ORDER, COLORS, K_COLORS, chance_line, errorbars, finished,
                      legend_from, plot_spectrum, theory_power_law, width_axis)
from .report import cell, minus_sign, pm, sci, sig
from .spikes import nstar_text, terms_summary, terms_verdict, terms_width_verdicts

#: Colour of the predicted spike strengths and projections, and of a count that differs.
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


def parameter_numbers(c: float, ref, settings, L: int, Ns, seeds, n_grid: int) -> dict:
    r"""The chapter's parameters as glue values: ``c``, ``ref`` (the pair as text),
    ``ref_lambda`` (:math:`\Lambda` at ``ref``), ``N_min``, ``N_max``, ``n_seeds``, ``N_grid``,
    and per setting ``i`` the pair ``s{i}`` as text and ``s{i}e{k}`` :math:`= e_k`,
    :math:`0\le k<L`."""
    out = dict(c=c, ref=f"({ref[0]:g}, {ref[1]:g})", ref_lambda=n_spikes(*ref, L), N_min=Ns[0],
               N_max=Ns[-1], n_seeds=len(seeds), N_grid=n_grid)
    for i, (a1, a2) in enumerate(settings):
        out[f"s{i}"] = f"({a1:g}, {a2:g})"
        for k in range(L):
            out[f"s{i}e{k}"] = spike_exponent(k, a1, a2)
    return out


# --------------------------------------------------------------------------- exactness checks

def check_table(check: dict) -> tuple:
    """Table *tab-checks*: the four relative errors of
    :func:`twostep.experiments.spikes.decomposition_check`."""
    e = check["sum_error"]
    return ["check", "relative error"], [
        [r"$\sum_kT_k$ against $W_2-W_1$, fresh", sci(e["fresh"])],
        [r"$\sum_kT_k$ against $W_2-W_1$, reused", sci(e["reused"])],
        [r"terms $T_k$ rebuilt from other step sizes (largest over $k$)", sci(check["scale_error"])],
        [r"$W_2$ rebuilt from other step sizes", sci(check["w2_error"])]]


# --------------------------------------------------------------------------- the scaling study

@dataclass
class Scaling:
    r"""The scaling study (:func:`scaling_study`): ``summary``, its runs by ``("batch", "N")``
    (:func:`~twostep.pages.spikes.terms_summary`, each run with ``rel_corr``
    :math:`= \|T_k-S_k^{\rm corr}\|_{op}/\|S_k^{\rm corr}\|` and ``size_corr``
    :math:`= s_1(T_k)/\|S_k^{\rm corr}\|` too, shape ``(L,)``), and the study's arguments; ``L``
    is the activation's degree."""

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
        r"""(log-log slope, standard error) in :math:`N` of ``key[index]`` over every run of
        ``batch`` (:func:`~twostep.analysis.sweep.loglog_slope`)."""
        return loglog_slope(*self.summary.pooled(key, index, batch=batch))


def scaling_study(Ns, seeds, activation="poly4", target="he1", c: float = 0.2, ref=(0.4, 0.25),
                  settings=(), alphas=(), n_grid: int = 0, n_top: int = 6,
                  n_jobs: int = 1) -> Scaling:
    r""":func:`spike_experiment` for both batch schemes of each draw (``batch="both"``, records
    fresh first), every width in ``Ns`` and every seed (:func:`~twostep.analysis.sweep.sweep`),
    at :math:`\eta_t = \kappa N^{\alpha_t}`,
    ``ref`` :math:`= (\alpha_1,\alpha_2)`, with the spectrum of :math:`W_2` also at ``settings``
    and, at :math:`N` = ``n_grid`` only, on the grid ``alphas`` :math:`\times` ``alphas``."""
    act = as_activation(activation)
    task = partial(spike_experiment, activation=activation, target=target, c1=c, alpha1=ref[0],
                   c2=c, alpha2=ref[1], settings=settings, n_top=n_top, corrected=True)
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


def slopes_table(scaling: Scaling) -> tuple:
    r"""Table *tab-slopes*: log-log slopes of :math:`\|S_k\|`, :math:`s_1(T_k)` and the relative
    remainder (± standard error of the fit), one row per batch and order, against :math:`e_k`."""
    return (["batch", "$k$", "$e_k$", "$\\|S_k\\|$", "$s_1(T_k)$", "remainder"],
            [[b, str(k), f"{e:+.3f}"] + [pm(*scaling.slope(b, key, k), 3, signed=True)
                                         for key in ("signal", "top", "rel")]
             for b in BATCH_ORDER for k, e in enumerate(scaling.predicted)])


def terms_numbers(scaling: Scaling) -> dict:
    r"""Glue values of the scaling study: ``fr_left_min``, ``fr_right_min`` (the smallest
    cosines at the largest width, fresh), ``fr_top_slope_dev``
    :math:`= \max_k|\text{slope of }s_1(T_k) - e_k|` (fresh), ``ref_e{k}`` (:math:`e_k`,
    :math:`k\ge2`) and, reused, ``re_left{k}`` and ``re_ratio{k}`` :math:`= s_1(T_k)/\|\tilde
    S_k\|` at :math:`k = L-1` and the largest width."""
    s, N, k = scaling.summary, scaling.Ns[-1], scaling.L - 1
    out = dict(fr_left_min=float(min(s.at("left", batch="fresh", N=N))),
               fr_right_min=float(min(s.at("right", batch="fresh", N=N))),
               fr_top_slope_dev=max(abs(scaling.slope("fresh", "top", j)[0] - e)
                                    for j, e in enumerate(scaling.predicted)))
    out.update({f"ref_e{j}": e for j, e in enumerate(scaling.predicted) if j >= 2})
    out[f"re_left{k}"] = s.at("left", k, batch="reused", N=N)
    out[f"re_ratio{k}"] = s.at("top", k, batch="reused", N=N) / s.at("signal", k, batch="reused", N=N)
    return out


def _peak(s: Summary, batch: str, k: int, Ns) -> int:
    # The width at which the mean relative remainder of order k is largest.
    return max(Ns, key=lambda N: s.at("rel", k, batch=batch, N=N))


def terms_table(scaling: Scaling) -> tuple:
    r"""Table *tab-terms*: per batch and order, the cosines at the largest width, the relative
    remainder at the smallest width, its peak over widths and at the largest width, and
    :math:`s_1(T_k)/\|S_k\|` at the largest width (the ratio of the means); means over seeds."""
    s, Ns = scaling.summary, scaling.Ns
    rows = []
    for b in BATCH_ORDER:
        at = partial(s.at, batch=b)
        for k in range(scaling.L):
            peak = _peak(s, b, k, Ns)
            rows.append([b, str(k), f"{at('left', k, N=Ns[-1]):.3f}",
                         f"{at('right', k, N=Ns[-1]):.3f}", f"{at('rel', k, N=Ns[0]):.2f}",
                         f"{at('rel', k, N=peak):.2f} ({peak})", f"{at('rel', k, N=Ns[-1]):.2f}",
                         f"{at('top', k, N=Ns[-1]) / at('signal', k, N=Ns[-1]):.2f}"])
    return (["batch", "$k$", "left", "right", f"$N = {Ns[0]}$", "largest", f"$N = {Ns[-1]}$",
             "size"], rows)


def terms_table_spread(scaling: Scaling) -> str:
    r"""The spread of :func:`terms_table` for its caption: the largest standard error over
    seeds, over both batches and all orders, of a cosine at the largest width, and of the
    other entries (the relative remainders at the smallest width, at their peak and at the
    largest width, and the per-seed ratio :math:`s_1(T_k)/\|S_k\|`)."""
    s, Ns = scaling.summary, scaling.Ns
    cosines = others = 0.0
    for b in BATCH_ORDER:
        sem = partial(s.at, sem=True, batch=b)
        for k in range(scaling.L):
            cosines = max(cosines, sem("left", k, N=Ns[-1]), sem("right", k, N=Ns[-1]))
            others = max(others, sem("size", k, N=Ns[-1]),
                         *(sem("rel", k, N=N) for N in (Ns[0], _peak(s, b, k, Ns), Ns[-1])))
    return f"largest standard error: {sig(cosines)} for a cosine, {sig(others)} otherwise"


def localisation_table(scaling: Scaling) -> tuple:
    r"""Table *tab-localisation*: at the largest width, the largest entry of the top left vector
    of :math:`T_k` and of :math:`a^{\circ(k+1)}/\|a^{\circ(k+1)}\|`, and the largest cosine of the
    top right vector with one input, per batch and order, each as mean ± standard error."""
    s, N = scaling.summary, scaling.Ns[-1]
    return (["batch", "$k$", "left entry", "predicted", "cosine with one $x_j$"],
            [[b, str(k)] + [cell(s, key, k, 2, batch=b, N=N)
                            for key in ("localisation", "localisation_signal", "memorisation")]
             for b in BATCH_ORDER for k in range(scaling.L)])


# --------------------------------------------------------------------------- one memorised pair

def memorised_table(mem: dict, N: int) -> tuple:
    """Table *tab-memorised*: the pair of :func:`twostep.experiments.spikes.one_draw` (width
    ``N``) with its reference values."""
    chance = chance_maximum(N, N)
    return ["quantity", "value", "for comparison"], [
        ["largest entry of the top left vector (neuron $i$)", f"{mem['loc']:.2f}",
         f"random unit vector: $\\sqrt{{2\\log N/N}} = {chance:.3f}$"],
        ["cosine of the top right vector with one input $x_j$", f"{mem['cos']:.3f}",
         f"random vector, best of $n$: $\\sqrt{{2\\log n/d}} = {chance:.3f}$"],
        ["pre-activation $P_{ij}$", f"{mem['P']:.2f}",
         f"larger in absolute value than a fraction {mem['rank_P']:.4f} of neuron $i$'s others"],
        ["$\\sigma_4'(P_{ij})$", f"{mem['dsigma']:.1f}", "mean $\\mu_1 = 1$"],
        ["label $y_j$", f"{mem['y']:.2f}",
         f"larger in absolute value than a fraction {mem['rank_y']:.4f} of the others"]]


# --------------------------------------------------------------------------- spectra of W2
# ``data`` below: the dict of :func:`twostep.experiments.spikes.one_draw`.

def spectra_table(data: dict) -> tuple:
    """Table *tab-spectra*: outlier counts and the top singular values of :math:`W_2`, per setting
    (the predicted strengths and sizes are in :func:`spectra_spikes_table`)."""
    return (["$(\\alpha_1,\\alpha_2)$", "$\\Lambda$", "outliers $W_1$", "outliers $W_2$",
             "$s_1(W_2)$", "$s_2(W_2)$", "$s_3(W_2)$"],
            [[f"({s['a1']}, {s['a2']})", str(s["lam"]), str(s["n1"]), str(s["n2"])]
             + [f"{v:.3f}" for v in s["sv2"][:3]] for s in data["spec"]])


def spectra_spikes_table(data: dict) -> tuple:
    r"""Table *tab-spectra-spikes*: per setting, the strengths of the predicted spikes (singular
    values :math:`i = 1..L` of the predicted spike part) and the sizes :math:`\|S_{i-1}\|`."""
    rows = []
    for s in data["spec"]:
        rows.append([f"({s['a1']}, {s['a2']})", "strength"] + [sci(v, 3) for v in s["strengths"]])
        rows.append(["", "$\\|S_{i-1}\\|$"] + [sci(v, 3) for v in s["sizes"]])
    return ["$(\\alpha_1,\\alpha_2)$", "", *[f"$i = {i}$" for i in range(1, len(data["U"]) + 1)]], rows


def spectra_numbers(data: dict) -> dict:
    r"""Glue values: ``N_spec``, ``theta_star`` (:func:`outlier_strength` at :math:`N/d = 1`),
    ``edge_margin``, and at the last setting ``spec_sv2`` :math:`= s_2(W_2)`, ``spec_sv1_2``
    :math:`= s_2(W_1)`, ``spec_cos_a2``."""
    last = data["spec"][-1]
    return dict(N_spec=data["a"].size, theta_star=outlier_strength(1.0), edge_margin=2 * 1.05,
                spec_sv2=float(last["sv2"][1]), spec_sv1_2=float(last["sv1"][1]),
                spec_cos_a2=data["second_cos_a2"])


#: W0's histogram outline in fig-spectra; the threshold's legend entry names it in words, since
#: mathtext draws the star of a subscript as a dot at 9 pt.
W0_COLOR = "#2e86c1"
THETA_LABEL = r"outlier threshold $\theta_{\star}$"


def plot_spectra(data: dict):
    r"""Figure *fig-spectra*: one row per setting; left, the spectrum of :math:`W_2` against
    Marchenko--Pastur and :math:`W_0` with the outliers of :math:`W_1`; right, the top singular
    values of :math:`W_2-W_0` against the predicted spike strengths and :math:`\theta_\star`.
    7.0 in wide."""
    n, L = len(data["spec"]), len(data["U"])
    fig, axes = plt.subplots(n, 2, figsize=(7.0, 2.25 * n + 1.1), squeeze=False,
                             gridspec_kw={"width_ratios": [1.25, 1]})
    for j, s in enumerate(data["spec"]):
        ax = axes[j, 0]
        plot_spectrum(ax, s["sv2"], 1.0, bins=50, label=r"$W_2$", outlier_color="k")
        # W0's outline in a colour of its own: in black it merges with the Marchenko-Pastur curve
        ax.hist(data["W0"], bins=50, density=True, histtype="step", color=W0_COLOR, lw=0.9,
                label=r"$W_0$")
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
        ax.plot(ranks, s["learned"], "o", color="k", ms=4, label=r"$s_i(W_2 - W_0)$")
        ax.plot(ranks[:L], s["strengths"], "D", mfc="none", color=PRED, ms=7,
                label="predicted spike strengths")
        ax.axhline(outlier_strength(1.0), color=COLORS["theory"], ls="--", lw=1, label=THETA_LABEL)
        ax.axvspan(0.5, 1.5 + s["lam"], color="0.92", zorder=0,
                   label=r"first spike and $k\leq\Lambda$")
        ax.set(yscale="log", ylim=(1e-3, 30), xlim=(0.5, 8.5), xticks=range(1, 9),
               xlabel="rank $i$", ylabel="singular value")
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
    return finished(fig)


def _panels(n: int, height: float, key: float, **kw):
    # n panels in rows of two (one if n = 1), 7.0 in wide, each row `height` in tall and `key`
    # in more for the key below; the cells past n hidden. Returns the figure and the n axes.
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
    fig, axes = _panels(len(U), 2.55, 0.5, sharex=True)
    x = a * np.sqrt(a.size)
    grid_x = np.linspace(x.min(), x.max(), 200)
    for k, ax in enumerate(axes):
        power = a ** (k + 1)
        u = U[k] * np.sign(U[k] @ power)
        # thousands of dots: drawn as one raster inside the SVG, so the page keeps a vector figure
        ax.plot(x, u, ".", ms=2, color=K_COLORS[k % len(K_COLORS)], alpha=0.6, rasterized=True)
        ax.plot(grid_x, (grid_x / np.sqrt(a.size)) ** (k + 1) / np.linalg.norm(power),
                color=COLORS["theory"], lw=1)
        ax.set_title(f"$T_{k}$: cosine {data['left'][k]:.3f}")
        ax.set(xlabel=r"$\sqrt{N}\,a_i$", ylabel="entry $i$ of the left vector")
        ax.xaxis.set_tick_params(labelbottom=True)
    legend_from(fig, [("top left vector of $T_k$", dict(color="0.4", marker=".", ls="none")),
                      (r"$a^{\circ(k+1)}/\|a^{\circ(k+1)}\|$", dict(color=COLORS["theory"], lw=1))],
                loc="outside lower center", ncol=2)
    return finished(fig)


def powers_table(data: dict) -> tuple:
    r"""Table *tab-powers*: cosines between the powers :math:`a^{\circ i}`, :math:`a^{\circ j}` of the
    draw (:func:`~twostep.analysis.plane.power_gram`) against their Gaussian limits
    (:func:`~twostep.analysis.spikes.power_cosine`), all pairs :math:`i<j\le L`."""
    L = len(data["U"])
    gram = power_gram(data["a"], L)
    return ["powers", "this draw", "limit"], [
        [f"$a^{{\\circ{i + 1}}}$, $a^{{\\circ{j + 1}}}$", f"{gram[i, j]:.3f}",
         f"{power_cosine(i + 1, j + 1):.3f}"] for i in range(L) for j in range(i + 1, L)]


# --------------------------------------------------------------------------- two steps as one
# Two steps against W_lin = W_1 + T_0: the scaling study records ||sum_{k>=1} T_k||_op
# (settings_higher) and the top right vectors' cosines at its settings; the memorised pair's
# draw (twostep.experiments.spikes.one_draw) holds the spectra at the first setting.

def plot_one_step(scaling: Scaling, mem: dict, settings):
    r"""Figure *fig-one-step*, a 2x2 grid 7.0 in wide: (a) the spectra of :math:`W_2` and of one
    step of size :math:`\eta_1+\eta_2` (``mem["spec"][0]``, at the first of ``settings``); (b)
    :math:`\|W_2-W_{\rm lin}\|_{op}` against :math:`N` with slope :math:`e_1`; (c) one minus the
    cosine of their top right vectors, at ``settings`` (among ``scaling.settings``); the fourth
    cell holds the key to (b) and (c)."""
    s, NS, EQ, spec = scaling.summary, scaling.Ns, settings, mem["spec"][0]
    fig, grid = plt.subplots(2, 2, figsize=(7.0, 5.9))
    ax, ax_norm, ax_cos, ax_key = grid.flat
    bins = np.linspace(0, 2.4, 60)
    ax.hist(spec["sv2"], bins=bins, density=True, histtype="stepfilled", color="0.75",
            label=r"$W_2$")
    ax.hist(spec["sv_lin"], bins=bins, density=True, histtype="step", color=COLORS["one-step"],
            lw=1.2, label=r"$W_0+(\eta_1+\eta_2)G_1$")
    ax.set(xlabel="singular value", ylabel="density", ylim=(0, 1.25),
           title=rf"(a) $({EQ[0][0]}, {EQ[0][1]})$, reused, $N = {spec['sv2'].size}$")
    ax.legend(loc="upper right")
    Ns, key = np.array(NS, float), []
    for b in BATCH_ORDER:
        for j, st in enumerate(EQ):
            i = scaling.settings.index(st)
            style = dict(color=COLORS[b], ls=("-", "--", "-.", ":")[j % 4],
                         mfc=COLORS[b] if j == 0 else "white")
            errorbars(ax_norm, *s.series("settings_higher", i, batch=b), **style)
            x, lin, lin_sem = s.series("settings_lin_overlap", i, batch=b)
            errorbars(ax_cos, x * (0.96 if b == "fresh" else 1.04), 1 - lin, lin_sem, **style,
                      marker="o" if b == "fresh" else "s")
            slope = minus_sign(f"{scaling.slope(b, 'settings_higher', i)[0]:+.2f}")
            key.append((rf"{b} $({st[0]}, {st[1]})$, fitted slope {slope}", dict(style, marker="o")))
    for st, ls in zip(EQ, (":", "-.", "--", "-")):
        e1 = spike_exponent(1, *st)
        C, _ = power_law_constant(*s.pooled("settings_higher", scaling.settings.index(st),
                                            batch="fresh"), e1)
        theory_power_law(ax_norm, Ns, e1, Ns[0], C * Ns[0] ** e1, color="0.2", ls=ls, lw=1.3)
        key.append((rf"slope $e_1 = {e1:+.1f}$ at $({st[0]}, {st[1]})$",
                    dict(color="0.2", ls=ls, lw=1.3)))
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
    legend_from(ax_key, key, title="(b), (c); open, dashed: second setting", loc="center",
                frameon=False)
    return finished(fig)


def one_step_numbers(mem: dict) -> dict:
    r"""Glue values: ``eq_top_two``, ``eq_top_one`` (the top singular values of the memorised
    pair's two spectra) and ``eq_ks`` (the largest gap between the sorted spectra)."""
    two, one = mem["spec"][0]["sv2"], mem["spec"][0]["sv_lin"]
    return dict(eq_top_two=float(two[0]), eq_top_one=float(one[0]),
                eq_ks=float(np.max(np.abs(np.sort(two) - np.sort(one)))))


def one_step_table(scaling: Scaling, settings) -> tuple:
    r"""Table *tab-one-step*: per setting and batch, :math:`e_1`, the fitted slope of
    :math:`\|\sum_{k\ge1}T_k\|_{op}` (± standard error) and, at the largest width, the cosines of
    the top right vectors of :math:`W_2` and :math:`W_{\rm lin}` and with :math:`\beta^\star`."""
    rows = []
    for st in settings:
        i = scaling.settings.index(st)
        for b in BATCH_ORDER:
            at = partial(scaling.summary.at, index=i, batch=b, N=scaling.Ns[-1])
            rows.append([f"({st[0]}, {st[1]})", b, f"{spike_exponent(1, *st):+.1f}",
                         pm(*scaling.slope(b, "settings_higher", i), 2, signed=True),
                         f"{at('settings_lin_overlap'):.4f}", f"{at('settings_beta_two'):.3f}",
                         f"{at('settings_beta_lin'):.3f}"])
    return (["$(\\alpha_1,\\alpha_2)$", "batch", "$e_1$", "slope", "$W_2$, $W_{\\rm lin}$",
             "$W_2$, $\\beta^\\star$", "$W_{\\rm lin}$, $\\beta^\\star$"], rows)


# --------------------------------------------------------------------------- the cap at L - 1
# ``cap`` below: {activation name: twostep.experiments.spikes.power_components of one draw}.

def cap_table(cap: dict, labels: dict) -> tuple:
    r"""Table *tab-cap*: degree, :math:`\mu_2..\mu_5` and the orders present, per activation
    (``labels``: activation name to its label in the text)."""
    return (["activation", "degree $L$", "$\\mu_2$", "$\\mu_3$", "$\\mu_4$", "$\\mu_5$",
             "orders $k$ present"],
            [[label, str(cap[n]["degree"] or "∞")] + [f"{cap[n]['mu'][m]:.3f}" for m in range(2, 6)]
             + [", ".join(map(str, cap[n]["terms"]))] for n, label in labels.items()])


def cap_ratio_table(cap: dict, labels: dict) -> tuple:
    """Table *tab-cap-ratio*: the measured components in units of the sampling level."""
    powers = len(next(iter(cap.values()))["ratio"])
    return (["activation"] + [f"$a^{{\\circ{i + 1}}}$" for i in range(powers)],
            [[label] + [f"{v:.2f}" for v in cap[n]["ratio"]] for n, label in labels.items()])


def cap_numbers(cap: dict, alphas, N: int) -> dict:
    r"""Glue values: ``cap`` (the pair :math:`(\alpha_1,\alpha_2)` as text), ``cap_floor``
    (:math:`\Lambda` there), ``N_cap``, the ratios to the sampling level quoted in the text
    (``cap_p2_m2``, ``cap_p3_m2``, ``cap_p4_m1``, ``cap_tanh_m1``) and ``cap_absent_max`` (the
    largest ratio along a power that :func:`twostep.spike_terms` rules out). Needs the
    activations poly2, poly3, poly4 and tanh and at least 4 powers."""
    ratio = {n: a["ratio"] for n, a in cap.items()}
    a1, a2 = alphas
    return dict(cap=f"({a1:g}, {a2:g})", cap_floor=n_spikes(a1, a2), N_cap=N,
                cap_p2_m2=ratio["poly2"][2], cap_p3_m2=ratio["poly3"][2],
                cap_p4_m1=ratio["poly4"][1], cap_tanh_m1=ratio["tanh"][1],
                cap_absent_max=max(ratio["poly2"][2:].max(), ratio["poly3"][3:].max(),
                                   ratio["poly4"][4:].max(), ratio["tanh"][1], ratio["tanh"][3]))


def plot_cap(cap: dict, labels: dict):
    r"""Figure *fig-cap*: measured components (bars), the predicted ones (diamonds) and the null
    level (dashes) along :math:`a^{\circ1}..a^{\circ P}`, one panel per activation."""
    fig, axes = _panels(len(labels), 2.6, 0.6, sharey=True)
    for ax, (name, label) in zip(axes, labels.items()):
        c_ = cap[name]
        m = np.arange(len(c_["measured"]))
        ax.bar(m, c_["measured"], color="0.7", label=r"measured $\|q_m^\top(W_2-W_1)\|$")
        ax.plot(m, c_["predicted"], "D", color=PRED, ms=5,
                label=r"same projection of the predicted $\sum_k S_k$")
        ax.plot(m, c_["null"], "_", color="k", ms=14, mew=1.5, label="sampling level")
        ax.set(yscale="log", ylim=(1e-3, 10), xticks=m,
               xticklabels=[f"$a^{{\\circ{i + 1}}}$" for i in m], title=label)
        ax.set(xlabel="component along", ylabel="norm")
        ax.yaxis.set_tick_params(labelleft=True)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return finished(fig)


# --------------------------------------------------------------------------- the phase diagram

def shade_plane(ax, L: int, resolution: int = 300, lw: float = 1.0) -> None:
    r"""Shade ``ax`` over :math:`[0, 1/2)^2` by the theory's :math:`\Lambda` (:data:`SHADES`,
    ``resolution`` points per axis) and draw its boundaries :math:`\alpha_2 = k(1/2-\alpha_1)`."""
    fine = np.linspace(0, 0.4999, resolution)
    F1, F2 = np.meshgrid(fine, fine, indexing="ij")
    ax.pcolormesh(fine, fine, theory_count(F1, F2, L).T, cmap=SHADES, vmin=-0.5, vmax=3.5,
                  shading="auto", rasterized=True)
    for k in range(1, L):
        ax.plot(fine, phase_boundaries(fine, k), color="k", lw=lw)


def phase_data(scaling: Scaling, n_se: float = 2.0) -> dict:
    r"""The empirical phase diagram from the scaling study.

    Per batch, ``emp`` holds, each ``(L,)``: ``e_hat``, ``e_se`` (log-log slope of
    :math:`s_1(\hat T_k)`), ``ratio_slope``, ``ratio_se`` (that of :math:`\|S_k\|/\|T_k-S_k\|_{op}`,
    minus the relative remainder's), ``left``, ``right`` (cosines at the largest width) and
    ``spike`` (:func:`is_spike`, the ratio's slope lowered by ``n_se`` standard errors). On the
    grid ``scaling.alphas``:sup:`2`: ``theory`` :math:`\Lambda`, ``emp_grid`` and ``exp_grid``
    (:func:`empirical_count`, the second with every order a spike), ``raw`` (mean raw outlier
    count of :math:`W_2` at :math:`N` = ``scaling.n_grid``); ``margins``, the fresh exponents'
    :func:`~twostep.analysis.plane.count_margins`."""
    s, L, N, n = scaling.summary, scaling.L, scaling.Ns[-1], len(scaling.alphas)
    A1, A2 = np.meshgrid(scaling.alphas, scaling.alphas, indexing="ij")
    out = dict(alphas=scaling.alphas, L=L, n_se=n_se, n_top=scaling.n_top,
               theory=theory_count(A1, A2, L), emp={}, emp_grid={}, exp_grid={}, raw={})
    for b in BATCH_ORDER:
        top = np.array([scaling.slope(b, "top_free", k) for k in range(L)])
        rel = np.array([scaling.slope(b, "rel", k) for k in range(L)])
        left, right = s.at("left", batch=b, N=N), s.at("right", batch=b, N=N)
        spike = is_spike(left, right, -rel[:, 0] - n_se * rel[:, 1])
        out["emp"][b] = dict(e_hat=top[:, 0], e_se=top[:, 1], ratio_slope=-rel[:, 0],
                             ratio_se=rel[:, 1], left=left, right=right, spike=spike)
        out["emp_grid"][b] = empirical_count(A1, A2, top[:, 0], spike, L)
        out["exp_grid"][b] = empirical_count(A1, A2, top[:, 0], np.ones(L, bool), L)
        out["raw"][b] = s.seed_values("grid_count", batch=b, N=scaling.n_grid).mean(axis=0).reshape(n, n)
    out["margins"] = count_margins(scaling.alphas, out["emp"]["fresh"]["e_hat"], L)
    return out


def phase_table(data: dict) -> tuple:
    r"""Table *tab-phase*: :math:`\hat e_k`, the ratio's slope, the cosines and the spike test."""
    return (["batch", "$k$", "$\\hat e_k$", "slope of spike/remainder", "left", "right", "spike"],
            [[b, str(k), pm(e["e_hat"][k], e["e_se"][k], 3, signed=True),
              pm(e["ratio_slope"][k], e["ratio_se"][k], 3, signed=True), f"{e['left'][k]:.3f}",
              f"{e['right'][k]:.3f}", "yes" if e["spike"][k] else "no"]
             for b, e in data["emp"].items() for k in range(1, data["L"])])


def plot_phase(data: dict, resolution: int = 400):
    r"""Figure *fig-phase*: the :math:`(\alpha_1,\alpha_2)` plane shaded by :math:`\Lambda` with the
    theory's boundaries; (a) the measured boundaries and the outlier count
    :math:`1+\hat\Lambda` they give (fresh); (b) and (c) the raw outlier counts of :math:`W_2`
    (fresh, reused); every count bold where it differs from :math:`1+\Lambda`, as a 2x2 grid
    7.0 in wide whose fourth cell holds the key. ``resolution``: points per axis of the shading."""
    L, ALPHAS, N_TOP, emp = data["L"], data["alphas"], data["n_top"], data["emp"]
    fine = np.linspace(0, 0.4999, resolution)
    fig, grid = plt.subplots(2, 2, figsize=(7.0, 7.0))
    axes, ax_key = list(grid.flat[:3]), grid.flat[3]
    for ax in axes:
        shade_plane(ax, L, resolution)
        ax.set(xlim=(0, 0.5), ylim=(0, 0.5), xlabel=r"$\alpha_1$", ylabel=r"$\alpha_2$",
               aspect="equal", xticks=[0, 0.1, 0.2, 0.3, 0.4, 0.5], yticks=[0, 0.1, 0.2, 0.3, 0.4, 0.5])
    box = dict(boxstyle="round,pad=0.12", fc="white", ec="none", alpha=0.85)
    for k in range(1, L):
        col = K_COLORS[k % len(K_COLORS)]
        axes[0].plot(fine, empirical_boundary(fine, k, emp["fresh"]["e_hat"][k]), color=col,
                     ls="--", lw=1.4)
        x_top = (-emp["fresh"]["e_hat"][k] - 0.5) / k      # where the measured line leaves the plot
        axes[0].text(x_top + 0.012, 0.49, f"$k={k}$", color=col, ha="left", va="top", bbox=box)
    # Every panel prints an outlier count, to read against 1 + Lambda: panel (a) the count
    # 1 + Lambda-hat that the measured exponents give, (b) and (c) the raw count of W2.
    for i, a1 in enumerate(ALPHAS):
        for j, a2 in enumerate(ALPHAS):
            values = [1 + data["emp_grid"]["fresh"][i, j]] + [data["raw"][b][i, j] for b in BATCH_ORDER]
            for ax, val in zip(axes, values):
                txt = f"≥{N_TOP}" if val >= N_TOP else (f"{val:.0f}" if float(val).is_integer() else f"{val:.1f}")
                match = val == 1 + data["theory"][i, j]
                ax.text(a1, a2, txt, ha="center", va="center", bbox=box,
                        color="k" if match else PRED, fontweight="normal" if match else "bold")
    axes[0].set_title("(a) $1+\\hat\\Lambda$ from measured $\\hat e_k$, fresh")
    axes[1].set_title("(b) raw outliers of $W_2$, fresh")
    axes[2].set_title("(c) raw outliers of $W_2$, reused")
    # The key: one colour per Lambda, the lines and the two kinds of numbers.
    ax_key.axis("off")
    legend_from(ax_key, SHADE_KEY + [(r"theory: $\alpha_2 = k(1/2-\alpha_1)$", dict(color="k", lw=1))]
                + [(rf"(a) measured, $k = {k}$", dict(color=K_COLORS[k % len(K_COLORS)], ls="--",
                                                       lw=1.4)) for k in range(1, L)]
                + [(r"count equals $1+\Lambda$", dict(ls="none", marker="$1$", color="k", ms=7)),
                   (r"count differs", dict(ls="none", marker="$1$", color=PRED, ms=7))],
                loc="center", frameon=False, title="shading: theory's $\\Lambda$")
    return finished(fig)


def phase_numbers(data: dict) -> dict:
    r"""Glue values of the phase diagram: the grid's size ``n_grid`` (``n_lam0`` points with
    :math:`\Lambda = 0`, ``n_lam_pos`` with :math:`\Lambda\ge1`), ``emp_agree`` (fresh points
    where the empirical count equals :math:`\Lambda`), ``re_agree_exp`` (the same, reused,
    every order taken as a spike), ``re_spike_list`` (the reused orders that pass the spike
    test), ``n_se``, and the raw counts of :math:`W_2` against :math:`1+\Lambda`:
    ``raw_low_fresh`` (below), ``raw_reused_high`` (above), ``raw_reused_sat`` (at the
    ceiling ``n_top``)."""
    emp, theory, raw, L = data["emp"], data["theory"], data["raw"], data["L"]
    return dict(
        n_grid=int(theory.size), emp_agree=int(np.sum(data["emp_grid"]["fresh"] == theory)),
        re_spike_list=", ".join(str(k) for k in range(1, L) if emp["reused"]["spike"][k]),
        re_agree_exp=int(np.sum(data["exp_grid"]["reused"] == theory)),
        n_se=data["n_se"] if not float(data["n_se"]).is_integer() else int(data["n_se"]),
        raw_low_fresh=int(np.sum(raw["fresh"] < 1 + theory)),
        raw_reused_high=int(np.sum(raw["reused"] > 1 + theory)),
        raw_reused_sat=int(np.sum(raw["reused"] >= data["n_top"])), n_top=data["n_top"],
        n_lam0=int(np.sum(theory == 0)), n_lam_pos=int(np.sum(theory > 0)))


def counts_table(data: dict) -> tuple:
    r"""Table *tab-counts*: at how many grid points each count equals the theory's, at
    :math:`\Lambda = 0`, :math:`\Lambda\ge1` and all."""
    theory = data["theory"]
    counts = [(f"{name}, {b}", "$\\Lambda$", data[key][b], theory) for b in BATCH_ORDER
              for name, key in (("exponents and spike test", "emp_grid"),
                                ("exponents only", "exp_grid"))]
    counts += [(f"raw outliers of $W_2$, {b}", "$1+\\Lambda$", data["raw"][b], 1 + theory)
               for b in BATCH_ORDER]
    return (["count", "compared with", "$\\Lambda = 0$", "$\\Lambda\\ge1$", "all"],
            [[name, against] + [str(int(np.sum((count == target) & mask)))
                                for mask in (theory == 0, theory > 0, theory >= 0)]
             for name, against, count, target in counts])


def margin_numbers(data: dict) -> dict:
    """Glue values of the fresh exponents' window (``data["margins"]``): the narrowest and
    widest side of a window (``margin_min``, ``margin_max``) and the smallest and largest
    standard error of an exponent (``se_min``, ``se_max``)."""
    m, se = data["margins"], data["emp"]["fresh"]["e_se"][1:]
    return dict(margin_min=min(m["down"] + m["up"]), margin_max=max(m["down"] + m["up"]),
                se_min=float(min(se)), se_max=float(max(se)))


def margin_table(data: dict) -> tuple:
    r"""Table *tab-margin*: the window of :math:`\hat e_k + k/2` that keeps the count at
    :math:`\Lambda` everywhere, against the measured deviations (both batches) and standard errors."""
    m, fresh, reused = data["margins"], data["emp"]["fresh"], data["emp"]["reused"]
    return (["$k$", "window", "fresh", "fresh s.e.", "reused", "reused s.e."],
            [[str(k), f"{-m['down'][k - 1]:+.3f} to {m['up'][k - 1]:+.3f}", f"{m['dev'][k - 1]:+.3f}",
              f"{fresh['e_se'][k]:.3f}", f"{reused['e_hat'][k] + k / 2:+.3f}",
              f"{reused['e_se'][k]:.3f}"] for k in range(1, data["L"])])


# --------------------------------------------------------------------------- how large must N be

def extrapolation(scaling: Scaling, theta_star: float, key: str = "settings_spikes") -> list:
    r"""Width at which each predicted spike of :math:`W_2` would reach ``theta_star`` (fresh runs):
    :func:`~twostep.analysis.plane.spike_widths` of the scaling study's settings, from the
    strengths ``key`` (``"settings_spikes_corrected"`` for those built from
    :math:`S_k^{\rm corr}`)."""
    return spike_widths(*scaling.summary.pooled(key, batch="fresh"), scaling.settings, theta_star)


def extrapolation_table(rows: list) -> tuple:
    """Table *tab-extrapolation* from the rows of :func:`extrapolation`."""
    return (["$(\\alpha_1,\\alpha_2)$", "$k$", "$e_k$", "strength", "fitted", "$N^\\star$, $e_k$",
             "$N^\\star$, fitted"],
            [[f"({r['a1']}, {r['a2']})", str(r["k"]), f"{r['e']:+.2f}", f"{r['strength_max']:.3f}",
              pm(r["e_fit"], r["e_fit_se"], 3, signed=True), nstar_text(r["n_star"]), nstar_text(r["n_fit"])]
             for r in rows])


def nstar_numbers(rows: list, prefix: str = "") -> dict:
    r"""Glue values ``{prefix}nstar_{i}{k}``: :math:`N^\star` (theory's exponent) as text for
    setting ``i`` and order ``k``, and ``{prefix}nstar_second``, the second smallest."""
    out = {f"{prefix}nstar_{r['i']}{r['k']}": sci(r["n_star"]) for r in rows}
    if len(rows) >= 2:
        out[f"{prefix}nstar_second"] = sci(sorted(r["n_star"] for r in rows)[1])
    return out


def nstar_table(rows: list, rows_corr: list) -> tuple:
    r"""Table *tab-nstar-corr*: :math:`N^\star` with the theory's exponent for the predicted spikes
    built from :math:`S_k` (``rows``) and from :math:`S_k^{\rm corr}` (``rows_corr``), both from
    :func:`extrapolation` on the same study."""
    return (["$(\\alpha_1,\\alpha_2)$", "$k$", "$e_k$", "from $S_k$", "from $S_k^{\\rm corr}$"],
            [[f"({r['a1']}, {r['a2']})", str(r["k"]), f"{r['e']:+.2f}", sci(r["n_star"], 2),
              sci(c["n_star"], 2)] for r, c in zip(rows, rows_corr)])


def nstar_range(scaling: Scaling, setting: int, k: int, margins=(0.02, 0.10),
                key: str = "settings_spikes_corrected") -> dict:
    r""":func:`~twostep.analysis.plane.nstar_spread` of the :math:`(k+1)`-th spike of setting
    ``setting`` (its strengths ``key`` in the fresh runs): the growth per doubling of :math:`N`
    and the range of :math:`N^\star` over the margins and the seeds' constants."""
    fresh = scaling.summary.runs(batch="fresh")
    return nstar_spread([r["N"] for r in fresh], [r[key][setting][k] for r in fresh],
                        [r["seed"] for r in fresh], spike_exponent(k, *scaling.settings[setting]),
                        margins)


def extrapolation_numbers(rows: list, scaling: Scaling) -> dict:
    r"""Glue values: :func:`nstar_numbers` of :func:`extrapolation`'s rows, and the mean raw
    outlier count of :math:`W_1` at the first setting, fresh batch, at the two largest widths
    of the study (``first_count_2000``, ``first_count_4000``)."""
    at = partial(scaling.summary.at, "settings_count_W1", 0, batch="fresh")
    return dict(nstar_numbers(rows), first_count_2000=at(N=scaling.Ns[-2]),
                first_count_4000=at(N=scaling.Ns[-1]))


def first_spike_table(scaling: Scaling) -> tuple:
    r"""Table *tab-first*: per width, the predicted strength of the first spike of :math:`W_1` at
    the first setting, :math:`\eta_1|\mu_1|\sqrt{c_1^2+\mathbb E[y^2]/\psi}`
    (:func:`twostep.spike_strength`, :math:`\eta_1 = \kappa N^{\alpha_1}`, :math:`\psi = 1`),
    and its raw outlier count in the fresh runs (mean ± standard error over seeds)."""
    (link,), _ = target_links(scaling.target)
    act, a1 = scaling.activation, scaling.settings[0][0]
    theta = {N: spike_strength(scaling.c * N ** a1, act.mu[1], link.coefficients[1],
                               link.second_moment, 1.0) for N in scaling.Ns}
    return (["$N$", "predicted strength", "outliers of $W_1$"],
            [[str(N), f"{theta[N]:.2f}", cell(scaling.summary, "settings_count_W1", 0, 2,
                                              batch="fresh", N=N)] for N in scaling.Ns])


# --- The missing term of the predicted spikes (issue 18; the book's derivation) ------------

CORRECTION_ORDERS = (1, 2, 3)


def correction_limits(scaling: Scaling) -> dict:
    r"""The large-:math:`N` limit of :math:`\|S_k^{\rm corr}\|/\|S_k\|` at :math:`\psi = 1` for the
    orders :data:`CORRECTION_ORDERS`, ``{batch: (3,)}``:
    :func:`twostep.analysis.population.population_signal` with ``kind="corrected"`` against
    ``"reuse"``, for the study's target and activation."""
    def norm(k, b, kind):
        return population_signal(scaling.target, 1.0, k, b, kind,
                                 activation=scaling.activation).norm
    return {b: np.array([norm(k, b, "corrected") / norm(k, b, "reuse") for k in CORRECTION_ORDERS])
            for b in BATCH_ORDER}


def plot_correction(scaling: Scaling, limits: dict):
    r"""Three panels against :math:`N`, fresh batch: :math:`s_1(T_k)/\|S\|`, the relative residual
    and the right cosine, for :math:`S_k` (open markers, dashed) and :math:`S_k^{\rm corr}`
    (filled, solid); the ratio panel also shows the limit of :math:`\|S_k^{\rm corr}\|/\|S_k\|`
    (``limits``, :func:`correction_limits`). A 2x2 grid 7.0 in wide; the fourth cell holds the
    key."""
    colors = {1: "#7f7f7f", 2: "#1f77b4", 3: "#d62728"}
    fig, grid = plt.subplots(2, 2, figsize=(7.0, 5.6))
    axes, ax_key = list(grid.flat[:3]), grid.flat[3]
    panels = (("size", "size_corr", r"$s_1(T_k)\,/\,\|S\|$"),
              ("rel", "rel_corr", r"$\|T_k - S\|_{op}\,/\,\|S\|$"),
              ("right", "right_corrected", r"$|\cos|$ with $S$'s right vector"))
    for ax, (plain, corr, label) in zip(axes, panels):
        for j, k in enumerate(CORRECTION_ORDERS):
            # The corrected spike filled, then the plain one as a larger open ring on top: at
            # k = 1 the two coincide, and a filled marker drawn last would hide the other.
            for key, style, face, size in ((corr, "-", colors[k], 4), (plain, "--", "none", 6)):
                x, mean, sem = scaling.summary.series(key, k, batch="fresh")
                ax.errorbar(x, mean, yerr=sem, color=colors[k], ls=style, marker="o", ms=size,
                            mfc=face, capsize=2, lw=1.1,
                            label=(rf"$k={k}$, " + (r"$S_k$" if key == plain else r"$S_k^{\rm corr}$"))
                            if plain == "size" else None)
            if plain == "size" and k >= 2:
                ax.axhline(limits["fresh"][j], color=colors[k], lw=0.8, ls=":")
        width_axis(ax, scaling.Ns, r"width $N = n = d$")
        ax.set_ylabel(label)
    axes[0].axhline(1.0, color="0.3", lw=0.8)
    handles, labels = axes[0].get_legend_handles_labels()
    handles += [plt.Line2D([], [], color="0.3", lw=0.8),
                plt.Line2D([], [], color="0.3", lw=0.8, ls=":")]
    labels += ["1", r"(a) limit of $\|S_k^{\rm corr}\|/\|S_k\|$"]
    ax_key.axis("off")
    ax_key.legend(handles, labels, loc="center", frameon=False, ncol=1)
    axes[0].set_title("(a) size of $T_k$")
    axes[1].set_title("(b) what the prediction leaves")
    axes[2].set_title("(c) top right vector")
    return finished(fig)


def _correction_rows(scaling: Scaling, keys, extra=lambda b, j: []) -> list:
    # One row per batch and order: "mean ± standard error" over seeds at the largest width for
    # each key, then the cells extra(batch, order index).
    return [[b, str(k)] + [cell(scaling.summary, key, k, 3, batch=b, N=scaling.Ns[-1])
                           for key in keys] + extra(b, j)
            for b in BATCH_ORDER for j, k in enumerate(CORRECTION_ORDERS)]


def correction_table(scaling: Scaling, limits: dict) -> tuple:
    r"""Table *tab-correction*: the size ratio of each term to both predictions at the largest
    width, both batches, mean ± standard error over seeds, and the large-:math:`N` limit of
    their ratio (the residuals and right cosines are in :func:`correction_fit_table`)."""
    return (["batch", "$k$", r"$s_1(T_k)/\|S_k\|$", r"$s_1(T_k)/\|S_k^{\rm corr}\|$", "limit"],
            _correction_rows(scaling, ("size", "size_corr"),
                             lambda b, j: [f"{limits[b][j]:.3f}"]))


def correction_fit_table(scaling: Scaling) -> tuple:
    r"""Table *tab-correction-fit*: at the largest width, the relative residual and the right
    cosine of each term for both predictions, both batches, mean ± standard error over seeds."""
    return (["batch", "$k$", r"residual, $S_k$", r"residual, $S_k^{\rm corr}$",
             r"cosine, $S_k$", r"cosine, $S_k^{\rm corr}$"],
            _correction_rows(scaling, ("rel", "rel_corr", "right", "right_corrected")))


def correction_numbers(scaling: Scaling, limits: dict) -> dict:
    r"""Glue values: both predictions' size ratios at the largest width ``corr_N``, fresh batch,
    :math:`k = 2, 3` (``corr_old{k}``, ``corr_new{k}``), and the large-:math:`N` limits of
    :math:`\|S_k^{\rm corr}\|/\|S_k\|` (``corr_limit{k}``)."""
    at = partial(scaling.summary.at, batch="fresh", N=scaling.Ns[-1])
    out = {"corr_N": scaling.Ns[-1]}
    for j, k in enumerate(CORRECTION_ORDERS):
        if k >= 2:
            out[f"corr_old{k}"], out[f"corr_new{k}"] = at("size", k), at("size_corr", k)
            out[f"corr_limit{k}"] = float(limits["fresh"][j])
    return out


# --------------------------------------------------------------------------- own edge and verdicts

def own_edge_table(scaling: Scaling) -> tuple:
    r"""Table *tab-own-edge*: :math:`W_2`'s outliers at each setting against :math:`W_0`'s edge and
    against its own bulk edge (:func:`twostep.analysis.spikes.own_bulk_edge`), mean over seeds
    at each width, both batches, next to the theory's :math:`1+\Lambda` (the own edges are in
    :func:`own_edge_level_table`)."""
    at = scaling.summary.at
    return (["batch", "$(\\alpha_1,\\alpha_2)$", "$1+\\Lambda$"] + [f"$N = {N}$" for N in scaling.Ns],
            [[b, f"({a1:g}, {a2:g})", str(1 + n_spikes(a1, a2, scaling.L))]
             + [f"{at('settings_count', i, batch=b, N=N):.1f} / "
                f"{at('settings_count_own', i, batch=b, N=N):.1f}" for N in scaling.Ns]
             for b in BATCH_ORDER for i, (a1, a2) in enumerate(scaling.settings)])


def own_edge_spread(scaling: Scaling) -> str:
    """The spread of :func:`own_edge_table` for its caption: whether the seeds' counts of one
    entry (either count) differ, and by at most how much."""
    spread = max(int(np.ptp(scaling.summary.seed_values(key, i, batch=b, N=N)))
                 for key in ("settings_count", "settings_count_own") for b in BATCH_ORDER
                 for i in range(len(scaling.settings)) for N in scaling.Ns)
    return ("every seed gives the same counts" if spread == 0
            else f"the counts of the seeds differ by at most {spread}")


def own_edge_level_table(scaling: Scaling) -> tuple:
    r"""Table *tab-own-edge-level*: :math:`W_2`'s own bulk edge at each setting and width, mean
    over seeds, both batches (their standard errors: :func:`own_edge_level_spread`)."""
    at = scaling.summary.at
    return (["batch", "$(\\alpha_1,\\alpha_2)$"] + [f"$N = {N}$" for N in scaling.Ns],
            [[b, f"({a1:g}, {a2:g})"] + [f"{at('settings_edge_own', i, batch=b, N=N):.2f}"
                                         for N in scaling.Ns]
             for b in BATCH_ORDER for i, (a1, a2) in enumerate(scaling.settings)])


def own_edge_level_spread(scaling: Scaling) -> str:
    """Each batch's largest standard error over seeds of an entry of
    :func:`own_edge_level_table`, for its caption: "0.003 (fresh) and 0.004 (reused)"."""
    def largest(b):
        return max(scaling.summary.at("settings_edge_own", i, sem=True, batch=b, N=N)
                   for i in range(len(scaling.settings)) for N in scaling.Ns)
    return " and ".join(f"{sig(largest(b))} ({b})" for b in BATCH_ORDER)


def own_edge_numbers(scaling: Scaling) -> dict:
    """Glue values: at the largest width, how many (batch, setting) pairs with Lambda >= 1 have
    the own-edge count equal to 1 + Lambda, of how many; the largest own edge of each batch."""
    s, N, out = scaling.summary, scaling.Ns[-1], {}
    lams = [n_spikes(a1, a2, scaling.L) for a1, a2 in scaling.settings]
    for b in BATCH_ORDER:
        out[f"own_{b}_hits"] = sum(round(s.at("settings_count_own", i, batch=b, N=N)) == 1 + lam
                                   for i, lam in enumerate(lams) if lam >= 1)
        out[f"own_{b}_total"] = sum(lam >= 1 for lam in lams)
        out[f"own_{b}_edge_max"] = max(s.at("settings_edge_own", i, batch=b, N=N)
                                       for i in range(len(lams)))
    return out


def spike_verdicts(scaling: Scaling, orders=(2, 3), N: int | None = None) -> dict:
    r"""Verdicts (:func:`twostep.pages.spikes.terms_verdict`) of the claim that each exact term
    :math:`T_k` is its predicted spike, fresh batch, at width ``N`` (default the largest), for
    the book's corrected :math:`S_k^{\rm corr}` and its plain :math:`S_k`:
    ``verdict_spikes_corr`` and ``verdict_spikes_plain``, the worst over the orders;
    ``plain_miss_<k>`` is :math:`s_1(T_k)/\|S_k\| - 1`."""
    s, N = scaling.summary, scaling.Ns[-1] if N is None else N
    out = {f"plain_miss_{k}": float(s.seed_values("size", k, batch="fresh", N=N).mean() - 1.0)
           for k in orders}
    out["verdict_spikes_corr"] = terms_verdict(s, N, orders, "size_corr", "rel_corr")
    out["verdict_spikes_plain"] = terms_verdict(s, N, orders)
    return out


def spike_width_numbers(scaling: Scaling, orders=(2, 3)) -> dict:
    """Glue values ``vw_terms_<N>`` (corrected spikes) and ``vw_plain_<N>`` for the landing
    page's verdicts at each width (:func:`twostep.pages.spikes.terms_width_verdicts`)."""
    return {**terms_width_verdicts(scaling.summary, "vw_terms", orders, "size_corr", "rel_corr"),
            **terms_width_verdicts(scaling.summary, "vw_plain", orders)}
