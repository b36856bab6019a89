r"""Chapter *Two steps, several spikes*: its sweeps, tables and figures.

The second update splits exactly into one term per order of the Taylor expansion of
:math:`\sigma'`, :math:`W_2 - W_1 = \sum_{k=0}^{L-1}T_k`, and each term is predicted to be the
rank-one spike :math:`S_k\propto a^{\circ(k+1)}u_k^\top` of size :math:`N^{e_k}`,
:math:`e_k = \alpha_2 - k(1/2-\alpha_1)` (:mod:`twostep.analysis.decomposition`,
:mod:`twostep.analysis.theory`). This module holds everything the chapter computes but its
single runs, which are in :mod:`twostep.experiments.spikes`:

* ``spike_experiment`` (in :mod:`twostep.experiments.spikes`): one draw at :math:`N = n = d`, the term diagnostics
  (:func:`twostep.analysis.spikes.term_diagnostics`) and, through the exact step-size
  rescaling of :class:`~twostep.analysis.rescaling.StepFamily`, the spectrum of :math:`W_2`
  at many :math:`(\alpha_1, \alpha_2)` on the same draw; :func:`scaling_study` runs it over
  widths, seeds and both batch schemes and fits the log-log slopes.
* one compute and one plot function per figure: :func:`scaling_study` / :func:`plot_terms`,
  :func:`spectra_data` / :func:`plot_spectra` and :func:`plot_left`,
  :func:`one_step_data` / :func:`plot_one_step`, :func:`cap_data` / :func:`plot_cap`,
  :func:`phase_data` / :func:`plot_phase`;
* the checks and single-draw measurements quoted in the text
  (:func:`decomposition_check`, :func:`memorised_pair`, :func:`extrapolation`,
  :func:`first_spike_threshold`) and the formulas the chapter compares with
  (:func:`count_margins`: the window of measured exponents that leaves the count of the phase
  diagram unchanged; :func:`power_gram`: cosines between the powers :math:`a^{\circ k}`);
* the numbers glued into the prose (``*_numbers``, dicts for
  :func:`twostep.pages.report.glue_numbers`) and the tables (``*_table``, MyST ``{table}``
  directives from :func:`twostep.pages.report.markdown_table`).

Every random draw goes through :func:`twostep.analysis.sweep.rng_for` with an explicit seed, so
the order in which the chapter calls these functions does not change any number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from .._validation import check_array, check_choice, check_int, check_pairs, check_real
from ..analysis.alignment import chance_maximum
from ..analysis.bbp import bbp_threshold
from ..analysis.decomposition import RankOne, first_step_spike, second_step_terms, signal_part
from ..analysis.phases import ALIGNED, empirical_boundary, empirical_count, is_spike, theory_count
from ..analysis.plane import extrapolated_width
from ..analysis.population import population_signal
from ..analysis.rescaling import StepFamily
from ..analysis.spectra import count_outliers, singular_values, top_singular
from ..analysis.spikes import (outlier_strength, power_law_constant, power_projections,
                               power_projections_null, predicted_spikes,
                               rank_one_sum_singular_values, term_diagnostics, width_to_reach)
from ..analysis.sweep import loglog_slope, rng_for, summarise, sweep
from ..analysis.verdicts import count_verdict, mean_sem, verdict, worst
from ..analysis.theory import (n_spikes, phase_boundaries, spike_exponent, spike_strength,
                               spike_terms)
from ..experiments.spikes import (_check_alpha_pair, _check_ints, _check_settings, _polynomial,
                                  spike_experiment, _steps, _target)
from ..model.activations import PolynomialActivation, as_activation, get_activation
from ..model.steps import run_two_steps
from . import figures as plotting
from .figures import COLORS
from .report import markdown_table, minus_sign, pm, sci, sig, width_verdicts

#: Colours of the orders k = 0..3 and of predicted spike strengths / projections.
K_COLORS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a"]
PRED = "#b8860b"
BATCHES = ("fresh", "reused")
#: Quantities of :func:`spike_experiment` averaged over seeds by :func:`scaling_study`.
SUMMARY_KEYS = ["signal", "top", "residual", "rel", "left", "right", "memorisation",
                "localisation", "localisation_signal", "top_free", "signal_free",
                "residual_free", "settings_count", "settings_count_W1", "settings_top",
                "settings_spikes", "settings_higher", "settings_lin_overlap",
                "settings_beta_two", "settings_beta_lin"]
SLOPE_KEYS = ("signal", "top", "residual", "rel", "top_free")




def parameter_numbers(c: float, ref, settings, L: int, Ns, seeds, n_grid: int) -> dict:
    r"""The chapter's parameters as glue values.

    ``c``, ``ref_a1``, ``ref_a2``, ``ref`` (the pair as text), ``ref_lambda`` (:math:`\Lambda` at ``ref``), ``L``, ``N_min``,
    ``N_max``, ``n_seeds``, ``N_grid``, and per setting ``i``: ``s{i}a1``, ``s{i}a2``, ``s{i}``
    (the pair as text) and ``s{i}e{k}`` :math:`= e_k` for :math:`0\le k<L`.
    """
    c = check_real(c, "c", low=0.0, low_open=True)
    ref = _check_alpha_pair(ref, "ref")
    settings = _check_settings(settings, "settings")
    L = check_int(L, "L", 1)
    Ns = _check_ints(Ns, "Ns", 1)
    seeds = _check_ints(seeds, "seeds", 0)
    out = dict(c=c, ref_a1=ref[0], ref_a2=ref[1], ref=f"({ref[0]:g}, {ref[1]:g})", ref_lambda=n_spikes(*ref, L), L=L,
               N_min=Ns[0], N_max=Ns[-1], n_seeds=len(seeds), N_grid=check_int(n_grid, "n_grid", 1))
    for i, (a1, a2) in enumerate(settings):
        out[f"s{i}a1"], out[f"s{i}a2"], out[f"s{i}"] = a1, a2, f"({a1:g}, {a2:g})"
        for k in range(L):
            out[f"s{i}e{k}"] = spike_exponent(k, a1, a2)
    return out


# --------------------------------------------------------------------------- exactness checks

def decomposition_check(N: int, activation="poly4", target="he1", c: float = 0.2,
                        ref=(0.4, 0.25), other=((1.0, 0.1), (0.5, 0.45)), seed: int = 0) -> dict:
    r"""How exact the decomposition :math:`W_2 - W_1 = \sum_kT_k` and the step-size rescaling are.

    Trains one draw (``rng_for(seed)``, float64, :math:`N = n = d`) with both batch schemes at
    :math:`\eta_t = \kappa N^{\alpha_t}`, ``ref`` :math:`= (\alpha_1,\alpha_2)`, and the same reused
    draw at the step sizes ``other`` :math:`= ((\kappa_1,\alpha_1), (\kappa_2,\alpha_2))`.

    Returns
    -------
    dict
        ``sum_error`` (dict by batch): :math:`\|\sum_kT_k - (W_2-W_1)\|_F/\|W_2-W_1\|_F`;
        ``scale_error``: :math:`\max_k\|T_k' - \eta_2'\eta_1'^k\hat T_k\|_F/\|T_k'\|_F`, the terms at
        ``other`` rebuilt from the reference run (:class:`StepFamily`); ``w2_error``: the same
        for :math:`W_2'`; ``N`` and ``other``.
    """
    N = check_int(N, "N", 8)
    act, link = _polynomial(activation), _target(target)
    c = check_real(c, "c", low=0.0, low_open=True)
    ref = _check_alpha_pair(ref, "ref")
    other = [(check_real(ci, f"other[{i}][0]", low=0.0, low_open=True),
              check_real(ai, f"other[{i}][1]", low=0.0, high=0.5, high_open=True))
             for i, (ci, ai) in enumerate(check_pairs(other, "other", "a (c, alpha) pair"))]
    if len(other) != 2:
        raise ValueError(f"other must hold 2 (c, alpha) pairs, got {len(other)}")
    seed = check_int(seed, "seed", 0)
    runs = {b: run_two_steps(N, N, N, act, link, _steps(c, ref), b, rng_for(seed))
            for b in BATCHES}
    sum_error = {}
    for b, run in runs.items():
        D = run.W2 - run.W1
        sum_error[b] = float(np.linalg.norm(sum(second_step_terms(run)) - D) / np.linalg.norm(D))
    run = runs["reused"]
    moved = run_two_steps(N, N, N, act, link, tuple(other), "reused", rng_for(seed))
    family = StepFamily(run)
    terms = second_step_terms(moved)
    scale_error = max(np.linalg.norm(family.term(k, moved.eta1, moved.eta2) - T) / np.linalg.norm(T)
                      for k, T in enumerate(terms))
    w2_error = np.linalg.norm(family.W2(moved.eta1, moved.eta2) - moved.W2) / np.linalg.norm(moved.W2)
    return dict(N=N, other=tuple(other), sum_error=sum_error, scale_error=float(scale_error),
                w2_error=float(w2_error))


def check_numbers(check: dict) -> dict:
    """Glue values of :func:`decomposition_check`: ``N_check``, ``sum_err_fresh``,
    ``sum_err_reused``, ``scale_error``, ``w2_error`` (as text) and ``other_c1``, ``other_a1``,
    ``other_c2``, ``other_a2``."""
    if not isinstance(check, dict) or "sum_error" not in check:
        raise TypeError("check must be the dict returned by decomposition_check")
    (c1, a1), (c2, a2) = check["other"]
    return dict(N_check=check["N"], sum_err_fresh=sci(check["sum_error"]["fresh"]),
                sum_err_reused=sci(check["sum_error"]["reused"]),
                scale_error=sci(check["scale_error"]), w2_error=sci(check["w2_error"]),
                other_c1=c1, other_a1=a1, other_c2=c2, other_a2=a2)


def check_table(check: dict):
    """The four errors of :func:`decomposition_check` as a table (label ``tab-checks``)."""
    v = check_numbers(check)
    rows = [[r"$\sum_kT_k$ against $W_2-W_1$, fresh", v["sum_err_fresh"]],
            [r"$\sum_kT_k$ against $W_2-W_1$, reused", v["sum_err_reused"]],
            [r"terms $T_k$ rebuilt from other step sizes (largest over $k$)", v["scale_error"]],
            [r"$W_2$ rebuilt from other step sizes", v["w2_error"]]]
    return markdown_table(
        f"Exactness checks at $N = n = d = {check['N']}$, float64: relative errors in Frobenius "
        f"norm. The rebuilt quantities are those of the same reused draw trained with "
        f"$(\\kappa_t, \\alpha_t)$ = ({v['other_c1']}, {v['other_a1']}) and "
        f"({v['other_c2']}, {v['other_a2']}), rebuilt from a run at the reference step sizes.",
        "tab-checks", ["check", "relative error"], rows)


# --------------------------------------------------------------------------- the scaling study

def _scaling_task(rng, N, batch, *, activation, target, c, ref, settings, grid, n_grid, n_top):
    return spike_experiment(
        rng, N=N, batch=batch, activation=activation, target=target, c1=c, alpha1=ref[0], c2=c,
        alpha2=ref[1], settings=settings, grid=grid if N == n_grid else (), n_top=n_top,
        corrected=True)


@dataclass
class Scaling:
    r"""The scaling study: :func:`spike_experiment` over widths, seeds and both batch schemes.

    Attributes
    ----------
    records : list of dict
        One per (batch, N, seed), with ``rel`` :math:`= \|T_k-S_k\|_{op}/\|S_k\|` added, shape ``(L,)``.
    summary : dict
        ``summary[batch][N]``: means and standard errors (``*_sem``) of :data:`SUMMARY_KEYS`.
    slopes : dict
        ``slopes[batch][key][k]``: (log-log slope, standard error) in :math:`N` over all seeds,
        for ``key`` in :data:`SLOPE_KEYS`.
    predicted : list of float
        :math:`e_k` at ``ref``, :math:`k = 0..L-1`.
    """

    records: list
    summary: dict
    slopes: dict
    predicted: list
    Ns: list
    seeds: list
    c: float
    ref: tuple
    settings: list
    alphas: list = field(default_factory=list)
    n_grid: int = 0
    n_top: int = 6
    L: int = 4
    activation: object = "poly4"
    target: object = "he1"

    def pooled(self, batch: str, key: str, k: int):
        """(N, value) of ``records`` over all widths and seeds, for a log-log fit."""
        batch = check_choice(batch, "batch", BATCHES)
        rows = [r for r in self.records if r["batch"] == batch]
        return np.array([r["N"] for r in rows], float), np.array([r[key][k] for r in rows])


def scaling_study(Ns, seeds, activation="poly4", target="he1", c: float = 0.2, ref=(0.4, 0.25),
                  settings=(), alphas=(), n_grid: int = 0, n_top: int = 6,
                  n_jobs: int = 1) -> Scaling:
    r"""Run :func:`spike_experiment` for both batch schemes, every width in ``Ns`` and every seed.

    Step sizes :math:`\eta_t = \kappa N^{\alpha_t}` with ``ref`` :math:`= (\alpha_1,\alpha_2)`; the
    spectrum of :math:`W_2` is also recorded at ``settings`` and, at :math:`N` = ``n_grid`` only,
    on the grid ``alphas`` :math:`\times` ``alphas``. Tasks run in the order fresh then reused,
    widths ascending, seeds ascending (:func:`twostep.analysis.sweep.sweep`; each task's
    generator depends on its seed only). Then averages over seeds (:func:`summarise`) and fits
    :math:`\log(\text{value})` against :math:`\log N` over all seeds (:func:`loglog_slope`).
    """
    Ns = _check_ints(Ns, "Ns", 8)
    seeds = _check_ints(seeds, "seeds", 0)
    act = _polynomial(activation)
    c = check_real(c, "c", low=0.0, low_open=True)
    ref = _check_alpha_pair(ref, "ref")
    settings = _check_settings(settings, "settings")
    alphas = [check_real(a, f"alphas[{i}]", low=0.0, high=0.5, high_open=True)
              for i, a in enumerate(alphas)]
    n_grid = check_int(n_grid, "n_grid", 0)
    n_top = check_int(n_top, "n_top", 1)
    n_jobs = check_int(n_jobs, "n_jobs", 1)
    grid = [(a1, a2) for a1 in alphas for a2 in alphas]
    if grid and n_grid not in Ns:
        raise ValueError(f"n_grid must be one of Ns = {Ns} when alphas is given, got {n_grid}")
    task = partial(_scaling_task, activation=activation, target=target, c=c, ref=ref,
                   settings=settings, grid=grid, n_grid=n_grid, n_top=n_top)
    tasks = [{"N": N, "batch": b} for b in BATCHES for N in Ns]
    records = sweep(task, tasks, seeds=seeds, n_jobs=n_jobs)
    L = act.degree
    for r in records:
        r["rel"] = r["residual"] / r["signal"]
    summary = {b: {e["N"]: e for e in summarise([r for r in records if r["batch"] == b],
                                                ["N"], SUMMARY_KEYS)}
               for b in BATCHES}
    out = Scaling(records=records, summary=summary, slopes={}, Ns=Ns, seeds=seeds, c=c, ref=ref,
                  settings=settings, alphas=alphas, n_grid=n_grid, n_top=n_top, L=L,
                  predicted=[spike_exponent(k, *ref) for k in range(L)], activation=act,
                  target=target)
    out.slopes = {b: {key: [loglog_slope(*out.pooled(b, key, k)) for k in range(L)]
                      for key in SLOPE_KEYS} for b in summary}
    return out


def _check_scaling(scaling):
    if not isinstance(scaling, Scaling):
        raise TypeError(f"scaling must be a Scaling (from scaling_study), got {type(scaling).__name__}")
    return scaling


def _log_ticks(ax, Ns):
    import matplotlib.pyplot as plt

    ax.set_xticks(Ns, [str(N) for N in Ns])
    ax.xaxis.set_minor_locator(plt.NullLocator())


def plot_terms(scaling: Scaling):
    r"""Figure *fig-terms*: each exact :math:`T_k` against its predicted spike, by width.

    Columns: fresh, reused batch. Top row: :math:`s_1(T_k)` with a line of slope :math:`e_k`
    fitted in constant; middle row: :math:`\|T_k-S_k\|_{op}/\|S_k\|` with :math:`N^{-1/2}`; bottom
    row: one minus the cosines of the top singular vectors with :math:`a^{\circ(k+1)}` and
    :math:`u_k`, chance :math:`1-1/\sqrt N`. 7.0 in wide. Returns the ``matplotlib.figure.Figure``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator

    scaling = _check_scaling(scaling)
    NS, L, predicted = scaling.Ns, scaling.L, scaling.predicted
    fig, axes = plt.subplots(3, 2, figsize=(7.0, 9.0))
    Ns = np.array(NS, float)
    chance = 1 / np.sqrt(Ns)
    for col_i, batch in enumerate(BATCHES):
        s = scaling.summary[batch]
        ax_size, ax_rel, ax_cos = axes[:, col_i]
        for k in range(L):
            col = K_COLORS[k % len(K_COLORS)]
            plotting.errorbars(ax_size, Ns, [s[N]["top"][k] for N in NS],
                               [s[N]["top_sem"][k] for N in NS], color=col)
            Cfit, _ = power_law_constant(*scaling.pooled(batch, "top", k), predicted[k])
            plotting.theory_power_law(ax_size, Ns, predicted[k], Ns[0], Cfit * Ns[0] ** predicted[k],
                                      color=col, lw=1.6, alpha=0.45, ls="--")
            plotting.errorbars(ax_rel, Ns, [s[N]["rel"][k] for N in NS],
                               [s[N]["rel_sem"][k] for N in NS], color=col)
            plotting.errorbars(ax_cos, Ns * 0.97, [1 - s[N]["left"][k] for N in NS],
                               [s[N]["left_sem"][k] for N in NS], color=col)
            plotting.errorbars(ax_cos, Ns * 1.03, [1 - s[N]["right"][k] for N in NS],
                               [s[N]["right_sem"][k] for N in NS], color=col, mfc="white", ls="--")
        plotting.theory_power_law(ax_rel, Ns, -0.5, Ns[0], s[NS[0]]["rel"][min(1, L - 1)],
                                  color="k")  # through k = 1
        ax_cos.plot(Ns, 1 - chance, color=COLORS["chance"], ls=":", lw=1.2)
        ax_size.set(xscale="log", yscale="log", ylabel=r"$s_1(T_k)$", title=f"{batch} batch")
        ax_cos.set(xscale="log", yscale="log", ylim=(2e-4, 1.5), ylabel="1 − cosine")
        ax_rel.set(xscale="log", yscale="log")
    axes[1, 0].set_ylabel(r"$\|T_k-S_k\|_{op}/\|S_k\|$")
    axes[1, 1].set_ylabel(r"$\|T_k-\tilde S_k\|_{op}/\|\tilde S_k\|$")
    for ax in axes.flat:
        _log_ticks(ax, NS)
        ax.yaxis.set_minor_locator(plt.NullLocator())
    for ax in axes[2]:
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    for ax in axes[:2].flat:                     # sizes and ratios span about a decade: more ticks
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    for ax in axes.flat:
        ax.set_xlabel("width $N$ ($= n = d$)")
    handles = [plt.Line2D([], [], color=K_COLORS[k % len(K_COLORS)], marker="o", ms=4,
                          label=f"$k = {k}$") for k in range(L)]
    handles += [plt.Line2D([], [], color="0.4", lw=1.6, alpha=0.45, ls="--", label=r"slope $e_k$ (top)"),
                plt.Line2D([], [], color="k", lw=1, ls="--", label=r"$N^{-1/2}$ (middle)"),
                plt.Line2D([], [], color="k", marker="o", ms=4, label=r"left vs $a^{\circ(k+1)}$"),
                plt.Line2D([], [], color="k", marker="o", mfc="white", ls="--", ms=4,
                           label=r"right vs $u_k$ ($\tilde u_k$)"),
                plt.Line2D([], [], color=COLORS["chance"], ls=":", label=r"chance $1-1/\sqrt{N}$")]
    fig.legend(handles=handles, loc="outside lower center", ncol=3)
    plt.close(fig)
    return fig


def _fmt_slope(pair):
    return f"{pair[0]:+.3f} ± {pair[1]:.3f}"


def slopes_table(scaling: Scaling):
    r"""Table *tab-slopes*: log-log slopes of :math:`\|S_k\|`, :math:`s_1(T_k)` and the relative
    remainder, one row per batch and order, against :math:`e_k`."""
    s = _check_scaling(scaling)
    rows = [[b, str(k), f"{s.predicted[k]:+.3f}"]
            + [_fmt_slope(s.slopes[b][key][k]) for key in ("signal", "top", "rel")]
            for b in BATCHES for k in range(s.L)]
    return markdown_table(
        f"Log-log slopes in $N$ over $N = {s.Ns[0]}$–${s.Ns[-1]}$ (all seeds pooled; ± standard error of "
        f"the fit) at $(\\alpha_1,\\alpha_2) = ({s.ref[0]}, {s.ref[1]})$, of the spike's size "
        "$\\|S_k\\|$, of $s_1(T_k)$ and of the relative remainder $\\|T_k-S_k\\|_{op}/\\|S_k\\|$ "
        "(reused batch: $\\tilde S_k$ in place of $S_k$). Predicted: $e_k$ for the sizes, "
        "$-1/2$ (heuristic) for the relative remainder.", "tab-slopes",
        ["batch", "$k$", "$e_k$", "$\\|S_k\\|$", "$s_1(T_k)$", "remainder"],
        rows)


def terms_numbers(scaling: Scaling) -> dict:
    r"""Glue values of the scaling study quoted in the prose (the rest is in the tables).

    ``fr_left_min``, ``fr_right_min``: the smallest cosines over :math:`k` at the largest
    width, fresh batch; ``fr_top_slope_dev``: :math:`\max_k|\text{slope of }s_1(T_k) - e_k|`,
    fresh; ``ref_e{k}``, the predicted exponents, for :math:`k\ge2`; at the highest order
    :math:`k = L-1`, reused batch, ``re_left{k}`` (top left cosine) and ``re_ratio{k}``
    :math:`= s_1(T_k)/\|\tilde S_k\|`.
    """
    s = _check_scaling(scaling)
    f, r_ = s.summary["fresh"], s.summary["reused"]
    L, Nmax = s.L, s.Ns[-1]
    sl = s.slopes
    out = dict(fr_left_min=min(f[Nmax]["left"]), fr_right_min=min(f[Nmax]["right"]),
               fr_top_slope_dev=max(abs(sl["fresh"]["top"][k][0] - s.predicted[k]) for k in range(L)))
    out.update({f"ref_e{k}": s.predicted[k] for k in range(2, L)})
    k = L - 1
    out[f"re_left{k}"] = r_[Nmax]["left"][k]
    out[f"re_ratio{k}"] = r_[Nmax]["top"][k] / r_[Nmax]["signal"][k]
    return {key: (v.item() if isinstance(v, np.generic) else v) for key, v in out.items()}


def _terms_spread(s: Scaling) -> tuple:
    r"""The largest standard errors over seeds of the entries of :func:`terms_table`:
    ``(cosines, others)``, the largest over both batches and all orders of the standard errors
    of the two cosines at the largest width, and of the relative remainders (at the smallest
    width, at their peak, at the largest width) and of the size, for which the standard error
    is that of the per-seed ratio :math:`s_1(T_k)/\|S_k\|` (the table's entry is the ratio of
    the means)."""
    NS = s.Ns
    Nmin, Nmax = NS[0], NS[-1]
    cosines, others = 0.0, 0.0
    for b in BATCHES:
        m = s.summary[b]
        top = [r for r in s.records if r["batch"] == b and r["N"] == Nmax]
        for k in range(s.L):
            peak = max(NS, key=lambda N: m[N]["rel"][k])
            size_sem = mean_sem([r["top"][k] / r["signal"][k] for r in top])[1]
            cosines = max(cosines, m[Nmax]["left_sem"][k], m[Nmax]["right_sem"][k])
            others = max(others, size_sem, *(m[N]["rel_sem"][k] for N in (Nmin, peak, Nmax)))
    return float(cosines), float(others)


def terms_table(scaling: Scaling):
    r"""Table *tab-terms*: per batch and order, the cosines at the largest width, the relative
    remainder at the smallest width, its peak over widths and at the largest width, and
    :math:`s_1(T_k)/\|S_k\|` at the largest width (the localisation columns are in
    :func:`localisation_table`); means over seeds, with the largest standard error of a cosine
    and of the other entries in the caption."""
    s = _check_scaling(scaling)
    NS = s.Ns
    Nmin, Nmax = NS[0], NS[-1]
    rows = []
    for b in BATCHES:
        m = s.summary[b]
        for k in range(s.L):
            peak = max(NS, key=lambda N: m[N]["rel"][k])
            rows.append([b, str(k), f"{m[Nmax]['left'][k]:.3f}", f"{m[Nmax]['right'][k]:.3f}",
                         f"{m[Nmin]['rel'][k]:.2f}", f"{m[peak]['rel'][k]:.2f} ({peak})",
                         f"{m[Nmax]['rel'][k]:.2f}", f"{m[Nmax]['top'][k] / m[Nmax]['signal'][k]:.2f}"])
    cosines, others = _terms_spread(s)
    return markdown_table(
        f"Each term against its spike ($S_k$ fresh, $\\tilde S_k$ reused), means over "
        f"{len(s.seeds)} seeds (largest standard error: {sig(cosines)} for a cosine, "
        f"{sig(others)} otherwise). Left, right: cosines of $T_k$'s top singular vectors with "
        f"$a^{{\\circ(k+1)}}$ and $u_k$ at $N = {Nmax}$ (chance level "
        f"{1 / np.sqrt(Nmax):.3f}). Remainder: $\\|T_k-S_k\\|_{{op}}/\\|S_k\\|$ at three widths. "
        f"Size: $s_1(T_k)/\\|S_k\\|$ at $N = {Nmax}$.", "tab-terms",
        ["batch", "$k$", "left", "right", f"$N = {Nmin}$", "largest", f"$N = {Nmax}$", "size"], rows)


def localisation_table(scaling: Scaling):
    r"""Table *tab-localisation*: at the largest width, the largest entry of the top left vector
    of :math:`T_k` and of :math:`a^{\circ(k+1)}/\|a^{\circ(k+1)}\|`, and the largest cosine of the
    top right vector with one input, per batch and order, each as mean ± standard error over
    seeds."""
    s = _check_scaling(scaling)
    Nmax = s.Ns[-1]
    rows = [[b, str(k)] + [pm(s.summary[b][Nmax][key][k], s.summary[b][Nmax][key + "_sem"][k])
                           for key in ("localisation", "localisation_signal", "memorisation")]
            for b in BATCHES for k in range(s.L)]
    return markdown_table(
        f"Where the top singular pair of $T_k$ sits, at $N = {Nmax}$, mean ± standard error over "
        f"{len(s.seeds)} seeds: the largest entry of its left vector, the same for the predicted "
        f"$a^{{\\circ(k+1)}}/\\|a^{{\\circ(k+1)}}\\|$, and the largest cosine of its right vector with "
        f"one input $x_j$ (for a random unit vector both are at the chance level of a "
        f"maximum, $\\sqrt{{2\\log N/N}} = {chance_maximum(Nmax, Nmax):.3f}$).", "tab-localisation",
        ["batch", "$k$", "left entry", "predicted", "cosine with one $x_j$"], rows)


# --------------------------------------------------------------------------- one memorised pair

@dataclass
class Memorised:
    r"""One reused draw: the neuron and sample that carry the top singular pair of the highest term.

    ``numbers`` holds the glue values (see :func:`memorised_pair`); ``family`` is the draw's
    :class:`StepFamily`, reused for :func:`one_step_data`; ``N`` its width.
    """

    numbers: dict
    family: StepFamily
    N: int


def memorised_pair(N: int, activation="poly4", target="he1", c: float = 0.2, ref=(0.4, 0.25),
                   seed: int = 0) -> Memorised:
    r"""Which neuron and sample carry :math:`T_{L-1}`'s top singular pair in one reused draw.

    Trains ``rng_for(seed)`` in float32 at :math:`N = n = d`, :math:`\eta_t = \kappa N^{\alpha_t}`,
    and finds :math:`i^\star = \arg\max_i|U_i|` for the top left vector :math:`U` of
    :math:`T_{L-1}` and :math:`j^\star = \arg\max_j|\langle x_j, V\rangle|/\|x_j\|` for its top
    right vector :math:`V`. Numbers: ``N_mem``, ``chance_Nmem`` :math:`= \sqrt{2\log N/N}` (the
    chance level of a maximum, here of :math:`N` entries or of :math:`n = N` cosines in
    :math:`\mathbb R^{d}`, :math:`d = N`), ``mem_loc``
    :math:`= |U_{i^\star}|`, ``mem_cos``, ``mem_P`` :math:`= P_{i^\star j^\star}`, ``mem_dsigma``
    :math:`= \sigma'(P_{i^\star j^\star})`, ``mem_rank_P`` (fraction of the neuron's
    :math:`|P_{i^\star j}|` below it), ``mem_y`` :math:`= y_{j^\star}`, ``mem_rank_y``.
    """
    N = check_int(N, "N", 8)
    act = _polynomial(activation)
    c = check_real(c, "c", low=0.0, low_open=True)
    ref = _check_alpha_pair(ref, "ref")
    seed = check_int(seed, "seed", 0)
    k = act.degree - 1
    run = run_two_steps(N, N, N, act, _target(target), _steps(c, ref), "reused", rng_for(seed),
                        dtype=np.float32, keep_pre=True)
    terms = second_step_terms(run)
    diag = term_diagnostics(run, terms=terms, vectors=True)
    i_star = int(np.argmax(np.abs(diag["U"][k])))
    cosines = np.abs(run.X2 @ diag["Vt"][k]) / np.linalg.norm(run.X2, axis=1)
    j_star = int(np.argmax(cosines))
    P_row = run.W0[i_star] @ run.X2.T          # neuron i's pre-activations on all samples
    P_star = float(P_row[j_star])
    numbers = dict(N_mem=N, chance_Nmem=chance_maximum(N, N), mem_loc=float(abs(diag["U"][k][i_star])),
                   mem_cos=float(cosines[j_star]), mem_P=P_star,
                   mem_dsigma=float(act.derivative(P_star, 1)),
                   mem_rank_P=float(np.mean(np.abs(P_row) < abs(P_star))),
                   mem_y=float(run.y2[j_star]),
                   mem_rank_y=float(np.mean(np.abs(run.y2) < abs(run.y2[j_star]))))
    family = StepFamily(run, terms)
    return Memorised(numbers=numbers, family=family, N=N)


def memorised_table(mem: Memorised):
    """Table *tab-memorised*: the numbers of :func:`memorised_pair` with their reference values."""
    if not isinstance(mem, Memorised):
        raise TypeError(f"mem must be a Memorised (from memorised_pair), got {type(mem).__name__}")
    v = mem.numbers
    rows = [["largest entry of the top left vector (neuron $i$)", f"{v['mem_loc']:.2f}",
             f"random unit vector: $\\sqrt{{2\\log N/N}} = {v['chance_Nmem']:.3f}$"],
            ["cosine of the top right vector with one input $x_j$", f"{v['mem_cos']:.3f}",
             f"random vector, best of $n$: $\\sqrt{{2\\log n/d}} = {v['chance_Nmem']:.3f}$"],
            ["pre-activation $P_{ij}$", f"{v['mem_P']:.2f}",
             f"larger in absolute value than a fraction {v['mem_rank_P']:.4f} of neuron $i$'s others"],
            ["$\\sigma_4'(P_{ij})$", f"{v['mem_dsigma']:.1f}", "mean $\\mu_1 = 1$"],
            ["label $y_j$", f"{v['mem_y']:.2f}",
             f"larger in absolute value than a fraction {v['mem_rank_y']:.4f} of the others"]]
    return markdown_table(
        f"The top singular pair of $T_3$ in one reused draw at $N = {v['N_mem']}$ (the sweep's "
        "seed 0): one neuron $i$ and one sample $j$.", "tab-memorised",
        ["quantity", "value", "for comparison"], rows)


# --------------------------------------------------------------------------- spectra of W2

@dataclass
class Spectra:
    r"""One fresh draw at several step sizes (:func:`spectra_data`).

    ``spec``: one dict per setting with ``a1, a2, lam``, ``sv2`` (all singular values of
    :math:`W_2`), ``sv1`` (top 6 of :math:`W_1`), ``learned`` (top 8 of :math:`W_2-W_0`),
    ``sizes`` :math:`\|S_k\|` ``(L,)``, ``strengths`` (top ``L`` singular values of the predicted
    spike part), ``n2``, ``n1`` (outlier counts). ``W0``: singular values of :math:`W_0`;
    ``a``: the second layer ``(N,)``; ``U``: top left vectors of the :math:`T_k` ``(L, N)``;
    ``left``: their cosines with :math:`a^{\circ(k+1)}`; ``theta_star``; ``second_cos_a2``.
    """

    N: int
    c: float
    spec: list
    W0: np.ndarray
    a: np.ndarray
    U: np.ndarray
    left: np.ndarray
    theta_star: float
    second_cos_a2: float
    L: int


def spectra_data(N: int, activation="poly4", target="he1", c: float = 0.2, ref=(0.4, 0.25),
                 settings=(), seed: int = 0) -> Spectra:
    r"""One fresh draw (``rng_for(seed)``, float32, :math:`N = n = d`) rescaled to each setting.

    For every :math:`(\alpha_1,\alpha_2)` in ``settings`` (:math:`\eta_t = \kappa N^{\alpha_t}`): the
    spectrum of :math:`W_2`, the top of :math:`W_1` and of :math:`W_2-W_0`, and the singular
    values of the predicted spike part :math:`\eta_1\mu_1av^\top + \sum_kS_k`
    (:func:`rank_one_sum_singular_values`). Also the cosine of the second left singular vector of
    :math:`W_2` at the last setting with :math:`a^{\circ2}`, and :math:`\theta_\star`
    (:func:`outlier_strength` at :math:`N/d = 1`).
    """
    N = check_int(N, "N", 16)
    act = _polynomial(activation)
    c = check_real(c, "c", low=0.0, low_open=True)
    ref = _check_alpha_pair(ref, "ref")
    settings = _check_settings(settings, "settings")
    if not settings:
        raise ValueError("settings must hold at least one (alpha1, alpha2) pair")
    L = act.degree
    run = run_two_steps(N, N, N, act, _target(target), _steps(c, ref), "fresh", rng_for(seed),
                        dtype=np.float32, keep_pre=True)
    terms = second_step_terms(run)
    diag = term_diagnostics(run, terms=terms, vectors=True)
    a = run.a.astype(float)
    first = first_step_spike(run.a, run.X1, run.y1, act)   # mu1 a v^T
    parts_ref = [signal_part(run, k) for k in range(L)]
    eta_ref = (run.eta1, run.eta2)
    family = StepFamily(run, terms)   # rescales terms in place
    del terms
    theta_star = outlier_strength(1.0)              # what count_outliers needs at N/d = 1
    W0 = singular_values(run.W0)
    spec = []
    for a1, a2 in settings:
        e1, e2 = c * N ** a1, c * N ** a2
        W2 = family.W2(e1, e2)
        sv2 = singular_values(W2)
        sv1 = top_singular(family.W1(e1), 6)[0]
        learned = top_singular(W2 - family.W0, 8)[0]
        parts = [RankOne(first.value * e1, first.left, first.right)] + [
            RankOne(p.value * e2 * e1 ** k / (eta_ref[1] * eta_ref[0] ** k), p.left, p.right)
            for k, p in enumerate(parts_ref)]
        spec.append(dict(a1=a1, a2=a2, lam=n_spikes(a1, a2, L), sv2=sv2, sv1=sv1, learned=learned,
                         sizes=np.array([p.value for p in parts[1:]]),
                         strengths=rank_one_sum_singular_values(parts)[:L],
                         n2=count_outliers(sv2, 2.0), n1=count_outliers(sv1, 2.0)))
    # the second singular pair of W2 at the last setting: which left vector?
    _, U2, _ = top_singular(W2, 2)
    second_cos_a2 = float(abs(U2[:, 1].astype(float) @ parts_ref[1].left))
    return Spectra(N=N, c=c, spec=spec, W0=W0, a=a, U=np.asarray(diag["U"]),
                   left=np.asarray(diag["left"]), theta_star=theta_star,
                   second_cos_a2=second_cos_a2, L=L)


def _check_spectra(data):
    if not isinstance(data, Spectra):
        raise TypeError(f"data must be a Spectra (from spectra_data), got {type(data).__name__}")
    return data


def spectra_table(data: Spectra):
    """Table *tab-spectra*: outlier counts and the top singular values of :math:`W_2`, per setting
    (the predicted strengths and sizes are in :func:`spectra_spikes_table`)."""
    d = _check_spectra(data)
    return markdown_table(
        f"One fresh draw at $N = {d.N}$, the four settings of the figure below: outliers of $W_1$ and "
        "$W_2$ beyond the margin and the top three singular values of $W_2$.", "tab-spectra",
        ["$(\\alpha_1,\\alpha_2)$", "$\\Lambda$", "outliers $W_1$", "outliers $W_2$", "$s_1(W_2)$",
         "$s_2(W_2)$", "$s_3(W_2)$"],
        [[f"({s['a1']}, {s['a2']})", str(s["lam"]), str(s["n1"]), str(s["n2"])]
         + [f"{v:.3f}" for v in s["sv2"][:3]] for s in d.spec])


def spectra_spikes_table(data: Spectra):
    r"""Table *tab-spectra-spikes*: per setting, the strengths of the predicted spikes (singular
    values :math:`i = 1..L` of the predicted spike part) and the sizes :math:`\|S_{i-1}\|`."""
    d = _check_spectra(data)
    rows = []
    for s in d.spec:
        rows.append([f"({s['a1']}, {s['a2']})", "strength"] + [sci(v, 3) for v in s["strengths"]])
        rows.append(["", "$\\|S_{i-1}\\|$"] + [sci(v, 3) for v in s["sizes"]])
    return markdown_table(
        f"The predicted spikes of the same draw ($N = {d.N}$): their strengths, the singular values "
        "$s_i$ of the whole predicted spike part $\\eta_1\\mu_1av^\\top+\\sum_kS_k$, against the sizes "
        "$\\|S_{i-1}\\|$ of the terms on their own.", "tab-spectra-spikes",
        ["$(\\alpha_1,\\alpha_2)$", "", *[f"$i = {i}$" for i in range(1, d.L + 1)]], rows)


def spectra_numbers(data: Spectra) -> dict:
    r"""Glue values: ``N_spec``, ``theta_star``, ``edge_margin``, ``spec_n2_{i}``, and at the last
    setting ``spec_str{k}``, ``spec_S{k}``, ``spec_sv2`` :math:`= s_2(W_2)`, ``spec_sv1_2``
    :math:`= s_2(W_1)`, ``spec_cos_a2``; ``bbp_1`` :math:`=\gamma^{1/4}` at :math:`\gamma = 1`."""
    d = _check_spectra(data)
    last = d.spec[-1]
    out = dict(N_spec=d.N, theta_star=d.theta_star, edge_margin=2 * 1.05,
               spec_sv2=last["sv2"][1], spec_sv1_2=last["sv1"][1], spec_cos_a2=d.second_cos_a2,
               bbp_1=bbp_threshold(1.0))
    out.update({f"spec_n2_{i}": s["n2"] for i, s in enumerate(d.spec)})
    out.update({f"spec_str{k}": last["strengths"][k] for k in range(1, d.L)})
    out.update({f"spec_S{k}": last["sizes"][k] for k in range(2, d.L)})
    return {key: (v.item() if isinstance(v, np.generic) else v) for key, v in out.items()}


#: W0's histogram outline in fig-spectra; the threshold's legend entry names it in words, since
#: mathtext draws the star of a subscript as a dot at 9 pt.
W0_COLOR = "#2e86c1"
THETA_LABEL = r"outlier threshold $\theta_{\star}$"


def plot_spectra(data: Spectra):
    r"""Figure *fig-spectra*: one row per setting; left, the spectrum of :math:`W_2` against
    Marchenko--Pastur and :math:`W_0` with the outliers of :math:`W_1`; right, the top singular
    values of :math:`W_2-W_0` against the predicted spike strengths and :math:`\theta_\star`.
    7.0 in wide."""
    import matplotlib.pyplot as plt

    d = _check_spectra(data)
    n = len(d.spec)
    fig, axes = plt.subplots(n, 2, figsize=(7.0, 2.25 * n + 1.1), squeeze=False,
                             gridspec_kw={"width_ratios": [1.25, 1]})
    for j, s in enumerate(d.spec):
        ax = axes[j, 0]
        plotting.plot_spectrum(ax, s["sv2"], 1.0, bins=50, label=r"$W_2$", outlier_color="k")
        # W0's outline in a colour of its own: in black it merges with the Marchenko-Pastur curve
        ax.hist(d.W0, bins=50, density=True, histtype="step", color=W0_COLOR, lw=0.9, label=r"$W_0$")
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
        ax.plot(ranks[:d.L], s["strengths"], "D", mfc="none", color=PRED, ms=7,
                label="predicted spike strengths")
        ax.axhline(d.theta_star, color=COLORS["theory"], ls="--", lw=1, label=THETA_LABEL)
        ax.axvspan(0.5, 1.5 + s["lam"], color="0.92", zorder=0, label=r"first spike and $k\leq\Lambda$")
        ax.set(yscale="log", ylim=(1e-3, 30), xlim=(0.5, 8.5), xticks=range(1, 9),
               xlabel="rank $i$", ylabel="singular value")
    fig.legend(handles=[
        plt.Rectangle((0, 0), 1, 1, color="0.6", alpha=0.8, label=r"$W_2$"),
        plt.Line2D([], [], color=W0_COLOR, lw=0.9, label=r"$W_0$"),
        plt.Line2D([], [], color=COLORS["theory"], lw=1.3, label="Marchenko–Pastur"),
        plt.Line2D([], [], color=COLORS["theory"], ls=":", lw=1, label="bulk edge 2"),
        plt.Line2D([], [], color="k", lw=1.6, label=r"outliers of $W_2$"),
        plt.Line2D([], [], color=COLORS["one-step"], lw=1.2, ls="--", label=r"outliers of $W_1$"),
        plt.Line2D([], [], color="k", marker="o", ls="none", ms=4, label=r"$s_i(W_2 - W_0)$"),
        plt.Line2D([], [], color=PRED, marker="D", mfc="none", ls="none", ms=7,
                   label="predicted spike strengths"),
        plt.Line2D([], [], color=COLORS["theory"], ls="--", lw=1, label=THETA_LABEL),
        plt.Rectangle((0, 0), 1, 1, color="0.92", label=r"first spike and $k\leq\Lambda$")],
        loc="outside lower center", ncol=3)
    plt.close(fig)
    return fig


def plot_left(data: Spectra):
    r"""Figure *fig-left*: entries of the top left singular vector of each :math:`T_k` against
    :math:`\sqrt N a_i`, with the predicted profile :math:`a^{\circ(k+1)}/\|a^{\circ(k+1)}\|`."""
    import matplotlib.pyplot as plt

    d = _check_spectra(data)
    ncol = 2 if d.L > 1 else 1
    nrow = -(-d.L // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(7.0, 2.55 * nrow + 0.5), sharex=True,
                             squeeze=False)
    for ax in axes.flat[d.L:]:
        ax.set_visible(False)
    axes = axes.flat[:d.L]
    x = d.a * np.sqrt(d.N)
    grid_x = np.linspace(x.min(), x.max(), 200)
    for k, ax in enumerate(axes):
        u = d.U[k]
        norm = np.linalg.norm(d.a ** (k + 1))
        u = u * np.sign(u @ d.a ** (k + 1))
        # thousands of dots: drawn as one raster inside the SVG, so the page keeps a vector figure
        ax.plot(x, u, ".", ms=2, color=K_COLORS[k % len(K_COLORS)], alpha=0.6, rasterized=True)
        ax.plot(grid_x, (grid_x / np.sqrt(d.N)) ** (k + 1) / norm, color=COLORS["theory"], lw=1)
        ax.set_title(f"$T_{k}$: cosine {d.left[k]:.3f}")
        ax.set_xlabel(r"$\sqrt{N}\,a_i$")
        ax.set_ylabel("entry $i$ of the left vector")
        ax.xaxis.set_tick_params(labelbottom=True)
    fig.legend(handles=[plt.Line2D([], [], color="0.4", marker=".", ls="none",
                                   label="top left vector of $T_k$"),
                        plt.Line2D([], [], color=COLORS["theory"], lw=1,
                                   label=r"$a^{\circ(k+1)}/\|a^{\circ(k+1)}\|$")],
               loc="outside lower center", ncol=2)
    plt.close(fig)
    return fig


def power_gram(a, powers: int) -> np.ndarray:
    r"""Absolute cosines between the entrywise powers of ``a``, shape ``(powers, powers)``.

    Entry :math:`(i, j)` is :math:`|\langle a^{\circ(i+1)}, a^{\circ(j+1)}\rangle|/
    (\|a^{\circ(i+1)}\|\,\|a^{\circ(j+1)}\|)`; for Gaussian ``a`` it tends to
    :func:`twostep.analysis.spikes.power_cosine`.
    """
    a = check_array(a, "a", ndim=1)
    powers = check_int(powers, "powers", 1)
    P = np.stack([a ** m / np.linalg.norm(a ** m) for m in range(1, powers + 1)])
    return np.abs(P @ P.T)


def left_numbers(data: Spectra) -> dict:
    r"""Glue values: ``gram_13``, ``gram_24``, ``gram_12`` (:func:`power_gram` of the draw's
    :math:`a`) and ``left_min_spec`` (smallest left cosine over :math:`k`)."""
    d = _check_spectra(data)
    gram = power_gram(d.a, d.L)
    return dict(gram_13=float(gram[0, 2]), gram_24=float(gram[1, 3]), gram_12=float(gram[0, 1]),
                left_min_spec=float(d.left.min()))


# --------------------------------------------------------------------------- two steps as one

def one_step_data(scaling: Scaling, mem: Memorised, settings) -> dict:
    r"""Two steps against :math:`W_{\rm lin} = W_1 + T_0` at two settings of the scaling study.

    Returns ``settings``; ``index`` (position of each in ``scaling.settings``); ``e1``
    :math:`= \alpha_1+\alpha_2-1/2`; ``slopes[batch, setting]``: log-log slope and standard error
    of :math:`\|\sum_{k\ge1}T_k\|_{op}` over all seeds; ``C`` (constants of :math:`C N^{e_1}`
    fitted to the fresh runs); ``mean``, ``sem`` ``[batch, setting]`` ``(len(Ns),)`` of that norm,
    ``lin_overlap``, ``lin_overlap_sem`` (cosine of the top right vectors of :math:`W_2` and
    :math:`W_{\rm lin}`), ``beta_two``, ``beta_lin`` (their cosines with :math:`\beta^\star`, at the
    largest width); ``sv_two``, ``sv_one``: singular values of :math:`W_2` and of
    :math:`W_0+(\eta_1+\eta_2)G_1` for the draw of ``mem`` at the first setting.
    """
    s = _check_scaling(scaling)
    if not isinstance(mem, Memorised):
        raise TypeError(f"mem must be a Memorised (from memorised_pair), got {type(mem).__name__}")
    settings = _check_settings(settings, "settings")
    missing = [st for st in settings if st not in s.settings]
    if not settings or missing:
        raise ValueError(f"settings must be non-empty and among scaling.settings = {s.settings}, "
                         f"got {missing or settings}")
    index = {st: s.settings.index(st) for st in settings}
    e1 = {st: st[0] + st[1] - 0.5 for st in settings}
    out = dict(settings=settings, index=index, e1=e1, slopes={}, C={}, mean={}, sem={},
               lin_overlap={}, lin_overlap_sem={}, beta_two={}, beta_lin={}, Ns=s.Ns,
               N_mem=mem.N)
    for b in BATCHES:
        rows = [r for r in s.records if r["batch"] == b]
        for st in settings:
            i = index[st]
            out["slopes"][b, st] = loglog_slope([r["N"] for r in rows],
                                                [r["settings_higher"][i] for r in rows])
            m = s.summary[b]
            out["mean"][b, st] = np.array([m[N]["settings_higher"][i] for N in s.Ns])
            out["sem"][b, st] = np.array([m[N]["settings_higher_sem"][i] for N in s.Ns])
            out["lin_overlap"][b, st] = np.array([m[N]["settings_lin_overlap"][i] for N in s.Ns])
            out["lin_overlap_sem"][b, st] = np.array([m[N]["settings_lin_overlap_sem"][i] for N in s.Ns])
            out["beta_two"][b, st] = m[s.Ns[-1]]["settings_beta_two"][i]
            out["beta_lin"][b, st] = m[s.Ns[-1]]["settings_beta_lin"][i]
    fresh = [r for r in s.records if r["batch"] == "fresh"]
    for st in settings:
        out["C"][st], _ = power_law_constant(np.array([r["N"] for r in fresh], float),
                                             np.array([r["settings_higher"][index[st]] for r in fresh]),
                                             e1[st])
    a1, a2 = settings[0]
    eta1, eta2 = s.c * mem.N ** a1, s.c * mem.N ** a2
    out["sv_two"] = singular_values(mem.family.W2(eta1, eta2))
    out["sv_one"] = singular_values(mem.family.linearised(eta1, eta2))
    return out


def plot_one_step(data: dict):
    r"""Figure *fig-one-step*, a 2x2 grid 7.0 in wide: (a) the spectra of :math:`W_2` and of one
    step of size :math:`\eta_1+\eta_2`; (b) :math:`\|W_2-W_{\rm lin}\|_{op}` against :math:`N` with
    slope :math:`e_1`; (c) one minus the cosine of their top right vectors; the fourth cell holds
    the key to (b) and (c)."""
    import matplotlib.pyplot as plt

    if not isinstance(data, dict) or "sv_two" not in data:
        raise TypeError("data must be the dict returned by one_step_data")
    EQ, NS = data["settings"], data["Ns"]
    fig, grid = plt.subplots(2, 2, figsize=(7.0, 5.9))
    ax, ax_norm, ax_cos, ax_key = grid.flat
    bins = np.linspace(0, 2.4, 60)
    ax.hist(data["sv_two"], bins=bins, density=True, histtype="stepfilled", color="0.75",
            label=r"$W_2$")
    ax.hist(data["sv_one"], bins=bins, density=True, histtype="step", color=COLORS["one-step"],
            lw=1.2, label=r"$W_0+(\eta_1+\eta_2)G_1$")
    ax.set(xlabel="singular value", ylabel="density",
           title=rf"(a) $({EQ[0][0]}, {EQ[0][1]})$, reused, $N = {data['N_mem']}$", ylim=(0, 1.25))
    ax.legend(loc="upper right")
    Ns = np.array(NS, float)
    line_styles = ("-", "--", "-.", ":")
    for b in BATCHES:
        col = COLORS[b]
        for j, st in enumerate(EQ):
            ls = line_styles[j % len(line_styles)]
            plotting.errorbars(ax_norm, Ns, data["mean"][b, st], data["sem"][b, st], color=col, ls=ls,
                               mfc=col if j == 0 else "white",
                               label=rf"{b} $({st[0]}, {st[1]})$, fitted slope "
                                     + minus_sign(f"{data['slopes'][b, st][0]:+.2f}"))
            shift, mk = (0.96, "o") if b == "fresh" else (1.04, "s")
            plotting.errorbars(ax_cos, Ns * shift, 1 - data["lin_overlap"][b, st],
                               data["lin_overlap_sem"][b, st], color=col, ls=ls, marker=mk,
                               mfc=col if j == 0 else "white",
                               label=rf"{b} $({st[0]}, {st[1]})$")
    theory_handles = []
    for st, ls in zip(EQ, (":", "-.", "--", "-")):
        e1 = data["e1"][st]
        line, = plotting.theory_power_law(ax_norm, Ns, e1, Ns[0], data["C"][st] * Ns[0] ** e1,
                                          color="0.2", ls=ls, lw=1.3,
                                          label=rf"slope $e_1 = {e1:+.1f}$ at $({st[0]}, {st[1]})$")
        theory_handles.append(line)
    ax_norm.set(xscale="log", yscale="log", xlabel="width $N$",
                ylabel=r"$\|W_2 - W_{\rm lin}\|_{op}$", title=r"(b) $\|\sum_{k\geq1}T_k\|_{op}$")
    data_handles, data_labels = ax_norm.get_legend_handles_labels()
    keep = [i for i, lab in enumerate(data_labels) if not lab.startswith("slope")]
    plotting.chance_line(ax_cos, 1 - 1 / np.sqrt(NS[-1]), label=rf"chance $1-1/\sqrt{{{NS[-1]}}}$")
    ax_cos.set(xscale="log", yscale="log", xlabel="width $N$", ylabel="1 − cosine",
               title=r"(c) top right vectors of $W_2$, $W_{\rm lin}$")
    for a in (ax_norm, ax_cos):
        _log_ticks(a, NS)
        a.yaxis.set_minor_formatter(plt.NullFormatter())
    ax_key.axis("off")
    cos_handles, cos_labels = ax_cos.get_legend_handles_labels()
    chance = [i for i, lab in enumerate(cos_labels) if lab.startswith("chance")]
    ax_key.legend([data_handles[i] for i in keep] + theory_handles + [cos_handles[i] for i in chance],
                  [data_labels[i] for i in keep] + [h.get_label() for h in theory_handles]
                  + [cos_labels[i] for i in chance],
                  title="(b), (c); open, dashed: second setting", loc="center", frameon=False)
    plt.close(fig)
    return fig


def one_step_numbers(data: dict) -> dict:
    r"""Glue values: ``eq_top_two``, ``eq_top_one``, ``eq_n_two``, ``eq_n_one``, ``eq_ks`` (largest
    gap between the sorted spectra), ``eq_slope_{batch}_{j}`` and ``eq_slope_se_{batch}_{j}``,
    ``eq_vec_{batch}``, ``eq_beta_two``, ``eq_beta_one`` (reused, first setting)."""
    if not isinstance(data, dict) or "sv_two" not in data:
        raise TypeError("data must be the dict returned by one_step_data")
    sv_two, sv_one, EQ = data["sv_two"], data["sv_one"], data["settings"]
    out = dict(eq_top_two=sv_two[0], eq_top_one=sv_one[0], eq_n_two=count_outliers(sv_two, 2.0),
               eq_n_one=count_outliers(sv_one, 2.0),
               eq_ks=float(np.max(np.abs(np.sort(sv_two) - np.sort(sv_one)))),
               eq_beta_two=data["beta_two"]["reused", EQ[0]],
               eq_beta_one=data["beta_lin"]["reused", EQ[0]])
    for b in BATCHES:
        out[f"eq_vec_{b}"] = data["lin_overlap"][b, EQ[0]][-1]
        for j, st in enumerate(EQ):
            out[f"eq_slope_{b}_{j}"], out[f"eq_slope_se_{b}_{j}"] = data["slopes"][b, st]
    return {key: (v.item() if isinstance(v, np.generic) else v) for key, v in out.items()}


def one_step_table(data: dict):
    r"""Table *tab-one-step*: per setting and batch, :math:`e_1`, the fitted slope of
    :math:`\|\sum_{k\ge1}T_k\|_{op}` and the cosines of the top right vectors at the largest width."""
    one_step_numbers(data)   # validates data
    NS = data["Ns"]
    rows = []
    for st in data["settings"]:
        for b in BATCHES:
            sl = data["slopes"][b, st]
            rows.append([f"({st[0]}, {st[1]})", b, f"{data['e1'][st]:+.1f}", f"{sl[0]:+.2f} ± {sl[1]:.2f}",
                         f"{data['lin_overlap'][b, st][-1]:.4f}", f"{data['beta_two'][b, st]:.3f}",
                         f"{data['beta_lin'][b, st]:.3f}"])
    return markdown_table(
        f"Two steps against $W_{{\\rm lin}} = W_1 + T_0$: predicted exponent $e_1$ and fitted log-log "
        f"slope of $\\|W_2-W_{{\\rm lin}}\\|_{{op}}$ over $N = {NS[0]}$–${NS[-1]}$ (± standard error); at "
        f"$N = {NS[-1]}$ the cosine of the top right singular vectors of $W_2$ and $W_{{\\rm lin}}$ and "
        "their cosines with $\\beta^\\star$ (means over seeds).", "tab-one-step",
        ["$(\\alpha_1,\\alpha_2)$", "batch", "$e_1$", "slope", "$W_2$, $W_{\\rm lin}$",
         "$W_2$, $\\beta^\\star$", "$W_{\\rm lin}$, $\\beta^\\star$"], rows)


# --------------------------------------------------------------------------- the cap at L - 1

def cap_data(N: int, alphas, activations, powers: int = 6, target="he1", c: float = 0.2,
             seed: int = 0, null_seed: int = 1) -> dict:
    r"""Components of :math:`W_2-W_1` along the orthonormalised powers of :math:`a`, per activation.

    For each name in ``activations`` one fresh draw (``rng_for(seed)``, float32, :math:`N = n = d`,
    :math:`\eta_t = \kappa N^{\alpha_t}` at ``alphas``): ``measured`` :math:`\|q_m^\top(W_2-W_1)\|`,
    ``predicted`` (the same for :math:`\sum_kS_k`), ``null`` (random-sign directions,
    ``default_rng(null_seed)``), each ``(powers,)``; ``mu``, the Hermite coefficients
    :math:`\mu_0..\mu_8` (below :math:`10^{-12}` set to 0); ``terms``, the orders
    :math:`1\le k\le\Lambda` with :math:`\mu_{k+1}\ne0` (:func:`twostep.spike_terms`); ``ratio``
    :math:`=` measured / null.
    """
    N = check_int(N, "N", 16)
    alphas = _check_alpha_pair(alphas, "alphas")
    if isinstance(activations, (str, bytes)) or not hasattr(activations, "__iter__"):
        raise TypeError(f"activations must be a sequence of activation names, got {activations!r}")
    names = list(activations)
    if not names:
        raise ValueError("activations must not be empty")
    powers = check_int(powers, "powers", 1)
    if powers >= N:
        raise ValueError(f"powers must be < N = {N}, got {powers}")
    c = check_real(c, "c", low=0.0, low_open=True)
    link = _target(target)
    out = {}
    for name in names:
        act = get_activation(name)
        run = run_two_steps(N, N, N, act, link, _steps(c, alphas), "fresh", rng_for(seed),
                            dtype=np.float32)
        update = run.W2 - run.W1
        predicted_sum = sum(S.matrix() for S in predicted_spikes(run, powers))
        mu = np.array(act.hermite_coefficients(8))
        mu[np.abs(mu) < 1e-12] = 0.0
        out[name] = dict(
            measured=power_projections(update, run.a, powers),
            predicted=power_projections(predicted_sum, run.a, powers),
            null=power_projections_null(update, run.a, powers, np.random.default_rng(null_seed)),
            terms=spike_terms(*alphas, mu[: (act.degree + 1 if act.degree else 8)]),
            mu=mu, degree=act.degree)
        out[name]["ratio"] = out[name]["measured"] / out[name]["null"]
        del run, update, predicted_sum
    return dict(N=N, alphas=alphas, powers=powers, c=c, acts=out)


def _check_cap(data):
    if not isinstance(data, dict) or "acts" not in data:
        raise TypeError("data must be the dict returned by cap_data")
    return data


def cap_table(data: dict, labels: dict):
    r"""Table *tab-cap*: degree, :math:`\mu_2..\mu_5` and the orders present, per activation
    (``labels``: activation name to its label in the text)."""
    d = _check_cap(data)
    return markdown_table(
        f"Orders $k\\ge1$ that exist at $(\\alpha_1,\\alpha_2) = {d['alphas']}$ ("
        "$k\\le\\Lambda$ and $\\mu_{k+1}\\neq0$; for $\\tanh$, $\\Lambda$ is not capped and the list stops at "
        "$\\lfloor\\alpha_2/(1/2-\\alpha_1)\\rfloor$).", "tab-cap",
        ["activation", "degree $L$", "$\\mu_2$", "$\\mu_3$", "$\\mu_4$", "$\\mu_5$", "orders $k$ present"],
        [[label, str(d["acts"][n]["degree"] or "∞")] + [f"{d['acts'][n]['mu'][m]:.3f}" for m in range(2, 6)]
         + [", ".join(map(str, d["acts"][n]["terms"]))] for n, label in labels.items()])


def cap_ratio_table(data: dict, labels: dict):
    """Table *tab-cap-ratio*: the measured components in units of the sampling level."""
    d = _check_cap(data)
    return markdown_table(
        "Measured component along $q_m$ (the part of $a^{\\circ(m+1)}$ not explained by lower powers) "
        "in units of the sampling level.", "tab-cap-ratio",
        ["activation"] + [f"$a^{{\\circ{i + 1}}}$" for i in range(d["powers"])],
        [[label] + [f"{v:.2f}" for v in d["acts"][n]["ratio"]] for n, label in labels.items()])


def cap_numbers(data: dict) -> dict:
    r"""Glue values: ``cap_a1``, ``cap_a2``, ``cap`` (the pair as text), ``cap_floor``, ``N_cap``, ``cap_ymin``, the ratios
    quoted in the text (``cap_p{2,3,4}_m*``, ``cap_tanh_m*``), ``cap_absent_max`` (largest ratio
    along a power that :func:`twostep.spike_terms` rules out), and the predicted and sampling levels
    ``cap_p4_pred3``, ``cap_p4_null3``, ``cap_tanh_pred{1,4}``, ``cap_tanh_null{1,4}``.
    Needs the activations poly2, poly3, poly4 and tanh."""
    d = _check_cap(data)
    acts = d["acts"]
    if d["powers"] < 5:
        raise ValueError(f"cap_numbers needs cap_data with powers >= 5, got {d['powers']}")
    for name in ("poly2", "poly3", "poly4", "tanh"):
        if name not in acts:
            raise ValueError(f"cap_numbers needs the activation {name!r} in cap_data, got {list(acts)}")
    ratio = {n: a["ratio"] for n, a in acts.items()}
    return dict(
        cap_a1=d["alphas"][0], cap_a2=d["alphas"][1], cap=f"({d['alphas'][0]:g}, {d['alphas'][1]:g})",
        cap_floor=n_spikes(*d["alphas"]), N_cap=d["N"],
        cap_p2_m1=ratio["poly2"][1], cap_p2_m2=ratio["poly2"][2], cap_p3_m2=ratio["poly3"][2],
        cap_p3_m3=ratio["poly3"][3], cap_p4_m1=ratio["poly4"][1], cap_p4_m2=ratio["poly4"][2],
        cap_p4_m3=ratio["poly4"][3], cap_tanh_m1=ratio["tanh"][1], cap_tanh_m2=ratio["tanh"][2],
        cap_p4_pred3=acts["poly4"]["predicted"][3], cap_p4_null3=acts["poly4"]["null"][3],
        cap_absent_max=max(ratio["poly2"][2:].max(), ratio["poly3"][3:].max(), ratio["poly4"][4:].max(),
                           ratio["tanh"][1], ratio["tanh"][3]),
        cap_tanh_pred1=sci(acts["tanh"]["predicted"][1]), cap_tanh_pred4=sci(acts["tanh"]["predicted"][4]),
        cap_tanh_null1=acts["tanh"]["null"][1], cap_tanh_null4=acts["tanh"]["null"][4],
        cap_ymin=sci(1e-3))


def plot_cap(data: dict, labels: dict):
    r"""Figure *fig-cap*: measured components (bars), the predicted ones (diamonds) and the null
    level (dashes) along :math:`a^{\circ1}..a^{\circ P}`, one panel per activation."""
    import matplotlib.pyplot as plt

    d = _check_cap(data)
    ncol = 2 if len(labels) > 1 else 1
    nrow = -(-len(labels) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(7.0, 2.6 * nrow + 0.6), sharey=True,
                             squeeze=False)
    for ax in axes.flat[len(labels):]:
        ax.set_visible(False)
    axes = axes.flat[:len(labels)]
    m = np.arange(d["powers"])
    for ax, (name, label) in zip(axes, labels.items()):
        c_ = d["acts"][name]
        ax.bar(m, c_["measured"], color="0.7", label=r"measured $\|q_m^\top(W_2-W_1)\|$")
        ax.plot(m, c_["predicted"], "D", color=PRED, ms=5,
                label=r"same projection of the predicted $\sum_k S_k$")
        ax.plot(m, c_["null"], "_", color="k", ms=14, mew=1.5, label="sampling level")
        ax.set(yscale="log", ylim=(1e-3, 10), xticks=m,
               xticklabels=[f"$a^{{\\circ{i + 1}}}$" for i in m], title=label)
        ax.set(xlabel="component along", ylabel="norm")
        ax.yaxis.set_tick_params(labelleft=True)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    plt.close(fig)
    return fig


# --------------------------------------------------------------------------- the phase diagram

def phase_data(scaling: Scaling, n_se: float = 2.0) -> dict:
    r"""The empirical phase diagram from the scaling study.

    Per batch: ``e_hat``, ``e_se`` (log-log slope of :math:`s_1(\hat T_k)`), ``ratio_slope``,
    ``ratio_se`` (slope of :math:`\|S_k\|/\|T_k-S_k\|_{op}`, minus that of the relative remainder)
    and ``spike`` (:func:`twostep.analysis.phases.is_spike` with the ratio slope lowered by
    ``n_se`` standard errors), all ``(L,)``. On the grid ``scaling.alphas``:sup:`2`: ``theory``
    :math:`\Lambda`, ``emp[batch]`` (:func:`empirical_count`), ``exp[batch]`` (the same count
    with every order taken as a spike) and ``raw[batch]`` (mean raw outlier count of :math:`W_2` at
    :math:`N` = ``scaling.n_grid``), each ``(len(alphas), len(alphas))``.
    """
    s = _check_scaling(scaling)
    n_se = check_real(n_se, "n_se", low=0.0)
    if not s.alphas:
        raise ValueError("scaling must have been run with a grid of alphas")
    L, NS = s.L, s.Ns
    emp = {}
    for b in BATCHES:
        m = s.summary[b]
        e_hat = np.array([s.slopes[b]["top_free"][k][0] for k in range(L)])
        e_se = np.array([s.slopes[b]["top_free"][k][1] for k in range(L)])
        ratio_slope = -np.array([s.slopes[b]["rel"][k][0] for k in range(L)])
        ratio_se = np.array([s.slopes[b]["rel"][k][1] for k in range(L)])
        spike = is_spike(m[NS[-1]]["left"], m[NS[-1]]["right"], ratio_slope - n_se * ratio_se)
        emp[b] = dict(e_hat=e_hat, e_se=e_se, ratio_slope=ratio_slope, ratio_se=ratio_se, spike=spike)
    A1, A2 = np.meshgrid(s.alphas, s.alphas, indexing="ij")
    n = len(s.alphas)
    return dict(
        alphas=s.alphas, A1=A1, A2=A2, L=L, n_se=n_se, n_top=s.n_top, Ns=NS, emp=emp,
        left={b: s.summary[b][NS[-1]]["left"] for b in BATCHES},
        right={b: s.summary[b][NS[-1]]["right"] for b in BATCHES},
        theory=theory_count(A1, A2, L),
        emp_grid={b: empirical_count(A1, A2, emp[b]["e_hat"], emp[b]["spike"], L) for b in emp},
        exp_grid={b: empirical_count(A1, A2, emp[b]["e_hat"], np.ones(L, bool), L) for b in emp},
        raw={b: np.mean([r["grid_count"] for r in s.records if r["batch"] == b and r["N"] == s.n_grid],
                        axis=0).reshape(n, n) for b in emp})


def _check_phase(data):
    if not isinstance(data, dict) or "emp_grid" not in data:
        raise TypeError("data must be the dict returned by phase_data")
    return data


def phase_table(data: dict):
    r"""Table *tab-phase*: :math:`\hat e_k`, the ratio's slope, the cosines and the spike test."""
    d = _check_phase(data)
    emp, NS = d["emp"], d["Ns"]
    n_se = f"{d['n_se']:g}"
    return markdown_table(
        "Measured exponent $\\hat e_k$ of $s_1(\\hat T_k)$ over all widths (theory $-k/2$); fitted "
        "log-log slope in $N$ of the spike-to-remainder ratio $\\|S_k\\|/\\|T_k-S_k\\|_{op}$ "
        "($\\tilde S_k$ for the reused batch), minus the slope of the relative remainder, "
        "± standard error, over all widths and seeds; cosines at "
        f"$N = {NS[-1]}$; and whether $T_k$ counts as a spike: both cosines $\\ge 1/\\sqrt2$ and the "
        f"ratio's slope above {n_se} standard errors.",
        "tab-phase",
        ["batch", "$k$", "$\\hat e_k$", "slope of spike/remainder", "left", "right", "spike"],
        [[b, str(k), f"{emp[b]['e_hat'][k]:+.3f} ± {emp[b]['e_se'][k]:.3f}",
          f"{emp[b]['ratio_slope'][k]:+.3f} ± {emp[b]['ratio_se'][k]:.3f}", f"{d['left'][b][k]:.3f}",
          f"{d['right'][b][k]:.3f}", "yes" if emp[b]["spike"][k] else "no"]
         for b in emp for k in range(1, d["L"])])


def plot_phase(data: dict, resolution: int = 400):
    r"""Figure *fig-phase*: the :math:`(\alpha_1,\alpha_2)` plane shaded by :math:`\Lambda` with the
    theory's boundaries; (a) the measured boundaries and the outlier count
    :math:`1+\hat\Lambda` they give (fresh); (b) and (c) the raw outlier counts of :math:`W_2`
    (fresh, reused); every count bold where it differs from :math:`1+\Lambda`, as a 2x2 grid 7.0 in wide whose fourth cell holds the key.
    ``resolution``: points per axis of the shading (at least 2)."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    d = _check_phase(data)
    L, ALPHAS, N_TOP, emp = d["L"], d["alphas"], d["n_top"], d["emp"]
    cmap = ListedColormap(["#f7f7f7", "#d6e6f4", "#a6cbe6", "#6fa8d6"])
    fine = np.linspace(0, 0.4999, check_int(resolution, "resolution", 2))
    F1, F2 = np.meshgrid(fine, fine, indexing="ij")
    theory_fine = theory_count(F1, F2, L)
    fig, grid = plt.subplots(2, 2, figsize=(7.0, 7.0))
    axes, ax_key = list(grid.flat[:3]), grid.flat[3]
    for ax in axes:
        ax.pcolormesh(fine, fine, theory_fine.T, cmap=cmap, vmin=-0.5, vmax=3.5, shading="auto",
                      rasterized=True)
        for k in range(1, L):
            ax.plot(fine, phase_boundaries(fine, k), color="k", lw=1)
        ax.set(xlim=(0, 0.5), ylim=(0, 0.5), xlabel=r"$\alpha_1$", ylabel=r"$\alpha_2$",
               aspect="equal", xticks=[0, 0.1, 0.2, 0.3, 0.4, 0.5], yticks=[0, 0.1, 0.2, 0.3, 0.4, 0.5])
    for k in range(1, L):
        col = K_COLORS[k % len(K_COLORS)]
        axes[0].plot(fine, empirical_boundary(fine, k, emp["fresh"]["e_hat"][k]), color=col,
                     ls="--", lw=1.4)
        x_top = (-emp["fresh"]["e_hat"][k] - 0.5) / k      # where the measured line leaves the plot
        axes[0].text(x_top + 0.012, 0.49, f"$k={k}$", color=col, ha="left", va="top",
                     bbox=dict(boxstyle="round,pad=0.12", fc="white", ec="none", alpha=0.85))
    box = dict(boxstyle="round,pad=0.12", fc="white", ec="none", alpha=0.85)
    # Every panel prints an outlier count, to read against 1 + Lambda: panel (a) the count
    # 1 + Lambda-hat that the measured exponents give, (b) and (c) the raw count of W2.
    for i, a1 in enumerate(ALPHAS):
        for j, a2 in enumerate(ALPHAS):
            values = [1 + d["emp_grid"]["fresh"][i, j]] + [d["raw"][b][i, j] for b in BATCHES]
            for ax, val in zip(axes, values):
                txt = f"≥{N_TOP}" if val >= N_TOP else (f"{val:.0f}" if float(val).is_integer() else f"{val:.1f}")
                match = val == 1 + d["theory"][i, j]
                ax.text(a1, a2, txt, ha="center", va="center", bbox=box,
                        color="k" if match else PRED, fontweight="normal" if match else "bold")
    axes[0].set_title("(a) $1+\\hat\\Lambda$ from measured $\\hat e_k$, fresh")
    axes[1].set_title("(b) raw outliers of $W_2$, fresh")
    axes[2].set_title("(c) raw outliers of $W_2$, reused")
    # The key: one colour per Lambda, the lines and the two kinds of numbers.
    ax_key.axis("off")
    handles = [Patch(facecolor=cmap(v), edgecolor="0.6", lw=0.5, label=rf"$\Lambda = {v}$")
               for v in range(4)]
    handles += [plt.Line2D([], [], color="k", lw=1, label=r"theory: $\alpha_2 = k(1/2-\alpha_1)$")]
    handles += [plt.Line2D([], [], color=K_COLORS[k % len(K_COLORS)], ls="--", lw=1.4,
                           label=rf"(a) measured, $k = {k}$") for k in range(1, L)]
    handles += [plt.Line2D([], [], ls="none", marker="$1$", color="k", ms=7,
                           label=r"count equals $1+\Lambda$"),
                plt.Line2D([], [], ls="none", marker="$1$", color=PRED, ms=7,
                           label=r"count differs")]
    ax_key.legend(handles=handles, loc="center", frameon=False, title="shading: theory's $\\Lambda$")
    plt.close(fig)
    return fig


def phase_numbers(data: dict) -> dict:
    r"""Glue values of the phase diagram: grid size, agreements of the empirical and raw counts
    with the theory, the exponents ``e_hat_{k}``, and the reused spike test (``re_n_spike``,
    ``re_spike_list``, ``re_left3_phase``, ``re_rs2``, ``re_rs2_se``)."""
    d = _check_phase(data)
    emp, theory, raw, L = d["emp"], d["theory"], d["raw"], d["L"]
    out = dict(
        n_grid=int(theory.size), emp_agree=int(np.sum(d["emp_grid"]["fresh"] == theory)),
        raw_agree_fresh=int(np.sum(raw["fresh"] == 1 + theory)),
        raw_low_fresh=int(np.sum(raw["fresh"] < 1 + theory)),
        re_left3_phase=float(d["left"]["reused"][L - 1]),
        re_n_spike=int(emp["reused"]["spike"][1:].sum()), n_orders=L - 1,
        re_spike_list=", ".join(str(k) for k in range(1, L) if emp["reused"]["spike"][k]),
        re_agree_exp=int(np.sum(d["exp_grid"]["reused"] == theory)),
        re_rs2=float(emp["reused"]["ratio_slope"][2]), re_rs2_se=float(emp["reused"]["ratio_se"][2]),
        n_se=d["n_se"] if not float(d["n_se"]).is_integer() else int(d["n_se"]),
        re_emp_agree=int(np.sum(d["emp_grid"]["reused"] == theory)),
        raw_reused_high=int(np.sum(raw["reused"] > 1 + theory)),
        raw_reused_sat=int(np.sum(raw["reused"] >= d["n_top"])), n_top=d["n_top"],
        n_lam0=int(np.sum(theory == 0)), n_lam_pos=int(np.sum(theory > 0)),
        raw_agree_lam0=int(np.sum((raw["fresh"] == 1 + theory) & (theory == 0))),
        raw_agree_lam_pos=int(np.sum((raw["fresh"] == 1 + theory) & (theory > 0))))
    out.update({f"e_hat_{k}": float(emp["fresh"]["e_hat"][k]) for k in range(1, L)})
    return out


def counts_table(data: dict):
    r"""Table *tab-counts*: at how many grid points each count equals the theory's."""
    v = phase_numbers(data)
    d = data
    theory, raw = d["theory"], d["raw"]
    lam0, lam_pos = theory == 0, theory > 0

    def agree(count, target, mask):
        return str(int(np.sum((count == target) & mask)))

    rows = []
    for b in BATCHES:
        rows.append([f"exponents and spike test, {b}", "$\\Lambda$", agree(d["emp_grid"][b], theory, lam0),
                     agree(d["emp_grid"][b], theory, lam_pos), agree(d["emp_grid"][b], theory, theory >= 0)])
        rows.append([f"exponents only, {b}", "$\\Lambda$", agree(d["exp_grid"][b], theory, lam0),
                     agree(d["exp_grid"][b], theory, lam_pos), agree(d["exp_grid"][b], theory, theory >= 0)])
    for b in BATCHES:
        rows.append([f"raw outliers of $W_2$, {b}", "$1+\\Lambda$", agree(raw[b], 1 + theory, lam0),
                     agree(raw[b], 1 + theory, lam_pos), agree(raw[b], 1 + theory, theory >= 0)])
    return markdown_table(
        f"Grid points (of {v['n_grid']}: {v['n_lam0']} with $\\Lambda = 0$, {v['n_lam_pos']} with "
        f"$\\Lambda\\ge1$) at which a count equals the theory's. Below the theory's $1+\\Lambda$, the "
        f"fresh raw count is lower at {v['raw_low_fresh']} points; the reused raw count is higher at "
        f"{v['raw_reused_high']}, {v['raw_reused_sat']} of them at the ceiling of {v['n_top']} that the "
        "computation resolves.", "tab-counts",
        ["count", "compared with", "$\\Lambda = 0$", "$\\Lambda\\ge1$", "all"], rows)


def count_margins(alphas, exponents, L: int) -> dict:
    r"""How far each :math:`\hat e_k` may move from :math:`-k/2` before the count changes somewhere.

    At a grid point the order :math:`k` counts iff :math:`e_k + (\hat e_k + k/2)\ge0` with the
    theory's :math:`e_k = \alpha_2 - k(1/2-\alpha_1)`. So the count equals :math:`\Lambda` at every
    point of ``alphas``:sup:`2` iff the deviation :math:`\delta_k = \hat e_k + k/2` lies in
    :math:`[-\min_{e_k\ge0}e_k,\ -\max_{e_k<0}e_k)`.

    Parameters
    ----------
    alphas : sequence of float in [0, 1/2)
        The grid's values (both axes).
    exponents : array_like, shape (L,)
        :math:`\hat e_k`; entry 0 is ignored.
    L : int

    Returns
    -------
    dict
        ``down``, ``up``, ``dev``, ``slack`` (distance of :math:`\delta_k` to the nearer end of the
        window), each a list over :math:`k = 1..L-1` (``nan`` for a side without grid points).
    """
    L = check_int(L, "L", 2)
    alphas = [check_real(a, f"alphas[{i}]", low=0.0, high=0.5, high_open=True)
              for i, a in enumerate(alphas)]
    if not alphas:
        raise ValueError("alphas must not be empty")
    exponents = check_array(exponents, "exponents", shape=(L,))
    A1, A2 = np.meshgrid(alphas, alphas, indexing="ij")
    down, up, dev = [], [], []
    for k in range(1, L):
        e_pts = A2 - k * (0.5 - A1)
        down.append(float(e_pts[e_pts >= 0].min()) if np.any(e_pts >= 0) else math.nan)
        up.append(float(-e_pts[e_pts < 0].max()) if np.any(e_pts < 0) else math.nan)
        dev.append(float(exponents[k] + k / 2))
    slack = [md + dv if dv < 0 else mu_ - dv for md, mu_, dv in zip(down, up, dev)]
    return dict(down=down, up=up, dev=dev, slack=slack)


def margin_numbers(data: dict) -> dict:
    """Glue values of :func:`count_margins` for the fresh exponents (``margin_min``, ``margin_max``,
    ``dev{k}``, ``slack_min``, ``slack_k``, ``se_min``, ``se_max``) and the reused deviations and
    standard errors (``re_dev{k}``, ``re_se{k}``)."""
    d = _check_phase(data)
    L, emp = d["L"], d["emp"]
    m = count_margins(d["alphas"], emp["fresh"]["e_hat"], L)
    out = dict(margin_min=min(m["down"] + m["up"]), margin_max=max(m["down"] + m["up"]),
               slack_min=min(m["slack"]), slack_k=1 + int(np.argmin(m["slack"])),
               se_min=float(min(emp["fresh"]["e_se"][1:])), se_max=float(max(emp["fresh"]["e_se"][1:])))
    for k in range(1, L):
        out[f"dev{k}"] = m["dev"][k - 1]
        out[f"re_dev{k}"] = float(emp["reused"]["e_hat"][k] + k / 2)
        out[f"re_se{k}"] = float(emp["reused"]["e_se"][k])
    return out


def margin_table(data: dict):
    r"""Table *tab-margin*: the window of :math:`\hat e_k + k/2` that keeps the count at
    :math:`\Lambda` everywhere, against the measured deviations (both batches) and standard errors."""
    d = _check_phase(data)
    emp = d["emp"]
    m = count_margins(d["alphas"], emp["fresh"]["e_hat"], d["L"])
    rows = [[str(k), f"{-m['down'][k - 1]:+.3f} to {m['up'][k - 1]:+.3f}", f"{m['dev'][k - 1]:+.3f}",
             f"{emp['fresh']['e_se'][k]:.3f}", f"{emp['reused']['e_hat'][k] + k / 2:+.3f}",
             f"{emp['reused']['e_se'][k]:.3f}"] for k in range(1, d["L"])]
    return markdown_table(
        "Window of deviations $\\hat e_k + k/2$ within which the count at every grid point equals "
        "$\\Lambda$ (for an order that passes the spike test), against the measured deviations "
        "$\\hat e_k + k/2$ and the standard errors (s.e.) of $\\hat e_k$, fresh and reused batch.", "tab-margin",
        ["$k$", "window", "fresh", "fresh s.e.", "reused", "reused s.e."], rows)


# --------------------------------------------------------------------------- how large must N be

def extrapolation(scaling: Scaling, theta_star: float, key: str = "settings_spikes") -> list:
    r"""Width at which each predicted spike of :math:`W_2` would reach ``theta_star`` (fresh runs).

    For each setting and order :math:`1\le k\le\Lambda`: the strength :math:`x` of the
    :math:`(k+1)`-th predicted spike over all widths and seeds, its constant :math:`C_k` in
    :math:`C_kN^{e_k}` (:func:`power_law_constant`) and :math:`N^\star = (\theta_\star/C_k)^{1/e_k}`
    (:func:`~twostep.analysis.plane.extrapolated_width`); the same with a fitted exponent. One
    dict per (setting, k) with
    ``a1, a2, lam, k, e, strength_max`` (mean at the largest width), ``e_fit, e_fit_se``,
    ``n_star``, ``n_fit``, ``count_max`` (raw count at the largest width). ``key`` chooses the
    predicted strengths: ``"settings_spikes_corrected"`` uses :math:`S_k^{\rm corr}`.
    """
    s = _check_scaling(scaling)
    theta_star = check_real(theta_star, "theta_star", low=0.0, low_open=True)
    fresh_rows = [r for r in s.records if r["batch"] == "fresh"]
    N_all = np.array([r["N"] for r in fresh_rows], float)
    out = []
    for i, (a1, a2) in enumerate(s.settings):
        lam = n_spikes(a1, a2, s.L)
        count_max = s.summary["fresh"][s.Ns[-1]]["settings_count"][i]
        for k in range(1, lam + 1):
            e = spike_exponent(k, a1, a2)
            strength = np.array([r[key][i][k] for r in fresh_rows])
            out.append(dict(i=i, a1=a1, a2=a2, lam=lam, k=k, e=e,
                            strength_max=float(strength[N_all == s.Ns[-1]].mean()),
                            count_max=count_max,
                            **extrapolated_width(N_all, strength, e, theta_star)))
    return out


def extrapolation_table(rows: list, scaling: Scaling, theta_star: float):
    """Table *tab-extrapolation* from the rows of :func:`extrapolation`."""
    s = _check_scaling(scaling)
    NS = s.Ns
    return markdown_table(
        f"Extrapolated width $N^\\star$ at which the $(k+1)$-th predicted spike of $W_2$ reaches "
        f"$\\theta_\\star = {theta_star:.2f}$, fresh batch, $\\kappa = {s.c:g}$: with the theory's exponent "
        f"$e_k$ and with the exponent fitted over $N = {NS[0]}$–${NS[-1]}$ (± standard error). "
        f"Strength: the spike's mean strength at $N = {NS[-1]}$.", "tab-extrapolation",
        ["$(\\alpha_1,\\alpha_2)$", "$k$", "$e_k$", "strength", "fitted", "$N^\\star$, $e_k$",
         "$N^\\star$, fitted"],
        [[f"({r['a1']}, {r['a2']})", str(r["k"]), f"{r['e']:+.2f}",
          f"{r['strength_max']:.3f}", f"{r['e_fit']:+.3f} ± {r['e_fit_se']:.3f}",
          sci(r["n_star"], 2), sci(r["n_fit"], 2) if np.isfinite(r["n_fit"]) else "never"]
         for r in rows])


def first_spike_threshold(scaling: Scaling, activation="poly4", target="he1") -> dict:
    r"""The first spike of :math:`W_1` at the first setting, where it crosses the threshold.

    ``theta[N]`` :math:`= \eta_1|\mu_1|\sqrt{c_1^2+\mathbb E[y^2]/\psi}` (:func:`twostep.spike_strength`,
    :math:`\eta_1 = \kappa N^{\alpha_1}`, :math:`\psi = 1`) and ``count[N]``, the mean raw outlier count of
    :math:`W_1` in the fresh runs, with its standard error over seeds ``count_sem[N]``, for every
    width of the study.
    """
    s = _check_scaling(scaling)
    act, link = as_activation(activation), _target(target)
    a1 = s.settings[0][0]
    mu1, c1 = act.mu[1], link.coefficients[1]
    theta = {N: spike_strength(s.c * N ** a1, mu1, c1, link.second_moment, 1.0) for N in s.Ns}
    count = {N: s.summary["fresh"][N]["settings_count_W1"][0] for N in s.Ns}
    count_sem = {N: s.summary["fresh"][N]["settings_count_W1_sem"][0] for N in s.Ns}
    return dict(theta=theta, count=count, count_sem=count_sem)


def nstar_numbers(rows: list, prefix: str = "") -> dict:
    r"""Glue values ``{prefix}nstar_{i}{k}``: :math:`N^\star` (theory's exponent) as text for
    setting ``i`` and order ``k``, and ``{prefix}nstar_second``, the second smallest."""
    out = {f"{prefix}nstar_{r['i']}{r['k']}": sci(r["n_star"]) for r in rows}
    if len(rows) >= 2:
        out[f"{prefix}nstar_second"] = sci(sorted(r["n_star"] for r in rows)[1])
    return out


def nstar_table(rows: list, rows_corr: list):
    r"""Table *tab-nstar-corr*: :math:`N^\star` with the theory's exponent for the predicted spikes
    built from :math:`S_k` (``rows``) and from :math:`S_k^{\rm corr}` (``rows_corr``), both from
    :func:`extrapolation` on the same study."""
    if not isinstance(rows, list) or not isinstance(rows_corr, list):
        raise TypeError("rows and rows_corr must be the lists returned by extrapolation")
    corr = {(r["i"], r["k"]): r for r in rows_corr}
    if set(corr) != {(r["i"], r["k"]) for r in rows}:
        raise ValueError("rows and rows_corr must come from the same study (the same settings and orders)")
    return markdown_table(
        "Extrapolated width $N^\\star$ (theory's exponent $e_k$, fresh batch) at which the $(k+1)$-th "
        "predicted spike of $W_2$ reaches $\\theta_\\star$, with the spikes built from $S_k$ and from "
        "the corrected $S_k^{\\rm corr}$ of the book's derivation.", "tab-nstar-corr",
        ["$(\\alpha_1,\\alpha_2)$", "$k$", "$e_k$", "from $S_k$", "from $S_k^{\\rm corr}$"],
        [[f"({r['a1']}, {r['a2']})", str(r["k"]), f"{r['e']:+.2f}", sci(r["n_star"], 2),
          sci(corr[r["i"], r["k"]]["n_star"], 2)] for r in rows])


def extrapolation_numbers(rows: list, first: dict) -> dict:
    r"""Glue values: ``nstar_{i}{k}`` (:math:`N^\star` with the theory's exponent, as text, for
    setting ``i`` and order ``k``) from :func:`extrapolation`, and from
    :func:`first_spike_threshold` the strength and mean count of the first spike at the two
    largest widths (``first_theta_2000``, ``first_theta_4000``, ``first_count_2000``,
    ``first_count_4000``, widths ``N_2000``, ``N_4000``)."""
    if not isinstance(first, dict) or "theta" not in first:
        raise TypeError("first must be the dict returned by first_spike_threshold")
    out = nstar_numbers(rows)
    Ns = sorted(first["theta"])
    if len(Ns) < 2:
        raise ValueError("first must hold at least two widths")
    for tag, N in (("2000", Ns[-2]), ("4000", Ns[-1])):
        out[f"first_theta_{tag}"] = float(first["theta"][N])
        out[f"first_count_{tag}"] = float(first["count"][N])
        out[f"N_{tag}"] = N
    return out


def powers_table(data: Spectra):
    r"""Table *tab-powers*: cosines between the powers :math:`a^{\circ i}`, :math:`a^{\circ j}` of the
    draw of :func:`spectra_data` (:func:`power_gram`) against their Gaussian limits
    (:func:`twostep.analysis.spikes.power_cosine`), for all pairs :math:`i<j\le L`."""
    from ..analysis.spikes import power_cosine

    d = _check_spectra(data)
    gram = power_gram(d.a, d.L)
    rows = [[f"$a^{{\\circ{i + 1}}}$, $a^{{\\circ{j + 1}}}$", f"{gram[i, j]:.3f}",
             f"{power_cosine(i + 1, j + 1):.3f}"]
            for i in range(d.L) for j in range(i + 1, d.L)]
    return markdown_table(
        f"Cosines between the powers of the second layer $a$ for the fresh draw at $N = {d.N}$ "
        f"and their limits for Gaussian $a$, $m_{{i+j}}/\\sqrt{{m_{{2i}}m_{{2j}}}}$.",
        "tab-powers", ["powers", "this draw", "limit"], rows)


def first_spike_table(first: dict, scaling: Scaling, theta_star: float):
    r"""Table *tab-first*: the predicted strength of the first spike and the raw outlier count
    of :math:`W_1` at the first setting (mean ± standard error over seeds), per width
    (:func:`first_spike_threshold`)."""
    s = _check_scaling(scaling)
    if not isinstance(first, dict) or "theta" not in first:
        raise TypeError("first must be the dict returned by first_spike_threshold")
    theta_star = check_real(theta_star, "theta_star", low=0.0, low_open=True)
    a1 = s.settings[0][0]
    rows = [[str(N), f"{first['theta'][N]:.2f}", pm(first["count"][N], first["count_sem"][N])]
            for N in sorted(first["theta"])]
    return markdown_table(
        f"The first spike at $\\alpha_1 = {a1:g}$, fresh batch: its predicted strength "
        f"$\\eta_1|\\mu_1|\\sqrt{{c_1^2+\\mathbb E[y^2]/\\psi}}$ against $\\theta_\\star = {theta_star:.2f}$, "
        f"and the raw count of outliers of $W_1$, mean ± standard error over "
        f"{len(s.seeds)} seeds.", "tab-first",
        ["$N$", "predicted strength", "outliers of $W_1$"], rows)


# --- The missing term of the predicted spikes (issue 18; the book's derivation) ------------

CORRECTION_ORDERS = (1, 2, 3)


def _mean_sem(vals):
    # (widths, seeds, orders) -> mean and standard error over seeds, each (widths, orders)
    n = vals.shape[1]
    sem = vals.std(1, ddof=1) / np.sqrt(n) if n > 1 else 0 * vals.mean(1)
    return vals.mean(1), sem


def correction_data(scaling: Scaling) -> dict:
    r"""Both predictions of each term's size, from the scaling study's records.

    For each batch, order :math:`k` in :data:`CORRECTION_ORDERS` and width: mean and standard
    error over seeds of :math:`s_1(T_k)/\|S\|`, :math:`\|T_k - S\|_{op}/\|S\|` and
    :math:`|\cos(\hat r_k, r_S)|` for :math:`S = S_k` (the plain prediction) and
    :math:`S = S_k^{\rm corr}` (:func:`twostep.analysis.decomposition.signal_part` with
    ``corrected=True``); and the large-:math:`N` limit of :math:`\|S_k^{\rm corr}\|/\|S_k\|`
    from :func:`twostep.analysis.population.population_signal` (``kind="corrected"`` against
    ``"reuse"``) at :math:`\psi = 1`. Records must carry the ``*_corrected`` keys
    (:func:`scaling_study` with ``corrected=True``).
    """
    scaling = _check_scaling(scaling)
    if "signal_corrected" not in scaling.records[0]:
        raise ValueError("scaling must come from scaling_study(..., corrected=True)")
    out = {"Ns": np.array(scaling.Ns), "orders": CORRECTION_ORDERS, "seeds": len(scaling.seeds)}
    for b in BATCHES:
        rows = [r for r in scaling.records if r["batch"] == b]
        by_N = {N: [r for r in rows if r["N"] == N] for N in scaling.Ns}
        stats = {}
        for name, num, den in (("ratio", "top", "signal"), ("ratio_corr", "top", "signal_corrected"),
                               ("resid", "residual", "signal"),
                               ("resid_corr", "residual_corrected", "signal_corrected")):
            vals = np.array([[[r[num][k] / r[den][k] for k in CORRECTION_ORDERS] for r in by_N[N]]
                             for N in scaling.Ns])          # (widths, seeds, orders)
            stats[name] = _mean_sem(vals)
        for name, key in (("right", "right"), ("right_corr", "right_corrected")):
            vals = np.array([[[r[key][k] for k in CORRECTION_ORDERS] for r in by_N[N]]
                             for N in scaling.Ns])
            stats[name] = _mean_sem(vals)
        stats["limit"] = np.array([
            population_signal(scaling.target, 1.0, k, b, "corrected", activation=scaling.activation).norm
            / population_signal(scaling.target, 1.0, k, b, "reuse", activation=scaling.activation).norm
            for k in CORRECTION_ORDERS])
        out[b] = stats
    return out


def plot_correction(data: dict):
    r"""Three panels against :math:`N`, fresh batch: :math:`s_1(T_k)/\|S\|`, the relative residual
    and the right cosine, for :math:`S_k` (open markers, dashed) and :math:`S_k^{\rm corr}`
    (filled, solid); the ratio panel also shows the limit of :math:`\|S_k^{\rm corr}\|/\|S_k\|`.
    A 2x2 grid 7.0 in wide; the fourth cell holds the key."""
    import matplotlib.pyplot as plt

    Ns, orders, st = data["Ns"], data["orders"], data["fresh"]
    colors = {1: "#7f7f7f", 2: "#1f77b4", 3: "#d62728"}
    fig, grid = plt.subplots(2, 2, figsize=(7.0, 5.6))
    axes, ax_key = list(grid.flat[:3]), grid.flat[3]
    panels = (("ratio", r"$s_1(T_k)\,/\,\|S\|$"), ("resid", r"$\|T_k - S\|_{op}\,/\,\|S\|$"),
              ("right", r"$|\cos|$ with $S$'s right vector"))
    for ax, (key, label) in zip(axes, panels):
        for j, k in enumerate(orders):
            # The corrected spike filled, then the plain one as a larger open ring on top: at
            # k = 1 the two coincide, and a filled marker drawn last would hide the other.
            for suffix, style, face, size in (("_corr", "-", colors[k], 4), ("", "--", "none", 6)):
                mean, sem = st[key + suffix]
                ax.errorbar(Ns, mean[:, j], yerr=sem[:, j], color=colors[k], ls=style, marker="o",
                            ms=size, mfc=face, capsize=2, lw=1.1,
                            label=(rf"$k={k}$, " + (r"$S_k$" if not suffix else r"$S_k^{\rm corr}$"))
                            if key == "ratio" else None)
            if key == "ratio" and k >= 2:
                ax.axhline(st["limit"][j], color=colors[k], lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set(xlabel=r"width $N = n = d$", ylabel=label)
        ax.set_xticks(Ns, [str(N) for N in Ns])
        ax.minorticks_off()
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
    plt.close(fig)
    return fig


def _largest_width_rows(data: dict, keys, extra=None) -> list:
    # One row per batch and order: "mean ± standard error" over seeds at the largest width for
    # each key, then the cells of extra(stats, order index).
    j_last = len(data["Ns"]) - 1
    rows = []
    for b in BATCHES:
        st = data[b]
        for j, k in enumerate(data["orders"]):
            rows.append([b, str(k)] + [pm(st[key][0][j_last, j], st[key][1][j_last, j], 3)
                                       for key in keys] + (extra(st, j) if extra else []))
    return rows


def correction_table(data: dict):
    r"""Table *tab-correction*: the size ratio of each term to both predictions at the largest
    width, both batches, mean ± standard error over seeds, and the large-:math:`N` limit of their ratio (the
    residuals and right cosines are in :func:`correction_fit_table`)."""
    rows = _largest_width_rows(data, ("ratio", "ratio_corr"),
                               lambda st, j: [f"{st['limit'][j]:.3f}"])
    header = ["batch", "$k$", r"$s_1(T_k)/\|S_k\|$", r"$s_1(T_k)/\|S_k^{\rm corr}\|$", "limit"]
    N = int(data["Ns"][-1])
    return markdown_table(
        f"The size of each term $T_k$ against both predictions at $N = {N}$ (mean ± standard "
        f"error over {data['seeds']} seeds), and the limit: the large-$N$ limit of "
        r"$\|S_k^{\rm corr}\|/\|S_k\|$ at $\psi = 1$. For the reused batch both predictions are "
        "reuse-aware.", "tab-correction", header, rows)


def correction_fit_table(data: dict):
    r"""Table *tab-correction-fit*: at the largest width, the relative residual and the right
    cosine of each term for both predictions, both batches, mean ± standard error over seeds."""
    rows = _largest_width_rows(data, ("resid", "resid_corr", "right", "right_corr"))
    header = ["batch", "$k$", r"residual, $S_k$", r"residual, $S_k^{\rm corr}$",
              r"cosine, $S_k$", r"cosine, $S_k^{\rm corr}$"]
    N = int(data["Ns"][-1])
    return markdown_table(
        f"What each prediction $S$ leaves of the terms at $N = {N}$ (mean ± standard error over "
        f"{data['seeds']} seeds): the relative residual $\\|T_k - S\\|_{{op}}/\\|S\\|$ and the cosine "
        "of the top right singular vector of $T_k$ with the prediction's right vector.",
        "tab-correction-fit", header, rows)


# --- Claim C6: more orders as alpha1 -> 1/2 (issue 16, item 2) -------------------------

@dataclass
class OrderCount:
    r"""How many exact terms :math:`T_k` are spikes that grow, along :math:`\alpha_1` at fixed
    :math:`\alpha_2`, for a polynomial activation of degree ``L`` (see :func:`order_count_data`).

    ``Ns`` ``(m,)``; ``e_hat`` ``(L,)``: exponent of :math:`s_1(\hat T_k)` in :math:`N` (mean over
    seeds); ``ratio_slope`` ``(L,)``: exponent of :math:`\|S_k\|/\|T_k-S_k\|_{op}`; ``left``,
    ``right`` ``(L,)``: top-vector cosines at the largest :math:`N` (mean over seeds), ``*_sd``
    their spread; ``spike`` ``(L,)`` bool (:func:`twostep.analysis.phases.is_spike`);
    ``alpha1`` ``(g,)``, ``theory`` and ``measured`` ``(g,)``: :math:`\Lambda` and the
    empirical count :math:`\hat\Lambda` at each :math:`\alpha_1`; ``measured_seeds``
    ``(seeds, g)``: the same count from each seed's own exponents and spike test.
    """

    L: int
    alpha2: float
    Ns: np.ndarray
    seeds: int
    e_hat: np.ndarray
    ratio_slope: np.ndarray
    left: np.ndarray
    right: np.ndarray
    left_sd: np.ndarray
    right_sd: np.ndarray
    spike: np.ndarray
    alpha1: np.ndarray
    theory: np.ndarray
    measured: np.ndarray
    measured_seeds: np.ndarray


def order_count_data(L: int = 6, alpha2: float = 0.3, Ns=(500, 1000, 2000), seeds: int = 3,
                     alpha1=np.linspace(0.0, 0.48, 49), c: float = 0.2,
                     batch: str = "fresh") -> OrderCount:
    r"""Claim C6 with a degree-``L`` polynomial :math:`\sigma_L = \sum_{k\le L}\mathrm{He}_k/k!`.

    One fresh (or reused) two-step run per width and seed (:math:`N = n = d`, float32,
    target :math:`\mathrm{He}_1`, reference step sizes :math:`\kappa N^{0.4}, \kappa N^{0.25}`); since
    :math:`T_k = \eta_2\eta_1^k\hat T_k` (:mod:`twostep.analysis.rescaling`), the spike test and
    the exponent :math:`\hat e_k` of :math:`s_1(\hat T_k)` do not depend on the step sizes, and
    the empirical count at :math:`(\alpha_1, \alpha_2)` is the number of spike terms with
    :math:`\alpha_2 + k\alpha_1 + \hat e_k \ge 0` (:func:`twostep.analysis.phases.empirical_count`).
    Seed ``s`` of width ``N`` draws from ``numpy.random.default_rng(s)``.
    """
    L = check_int(L, "L", 2)
    alpha2 = check_real(alpha2, "alpha2", low=0.0, high=0.5, high_open=True)
    Ns = np.array([check_int(N, "Ns", 8) for N in Ns])
    if Ns.size < 2:
        raise ValueError("Ns must hold at least two widths (the exponents are slopes in N)")
    seeds = check_int(seeds, "seeds", 1)
    a1 = np.asarray(alpha1, dtype=float)
    activation = PolynomialActivation([0.0] + [1.0] * L, name=f"sigma_{L}")
    top, ratio, left, right = (np.zeros((Ns.size, seeds, L)) for _ in range(4))
    for i, N in enumerate(Ns):
        for s in range(seeds):
            run = run_two_steps(N, N, N, activation, "he1", ((c, 0.4), (c, 0.25)), batch,
                                np.random.default_rng(s), dtype=np.float32, keep_pre=True)
            out = term_diagnostics(run)
            top[i, s], ratio[i, s] = out["top"] / out["scale"], out["signal"] / out["residual"]
            left[i, s], right[i, s] = out["left"], out["right"]
    logN = np.log(Ns)
    e_hat = np.array([np.polyfit(logN, np.log(top[:, :, k].mean(1)), 1)[0] for k in range(L)])
    slope = np.array([np.polyfit(logN, np.log(ratio[:, :, k].mean(1)), 1)[0] for k in range(L)])
    spike = is_spike(left[-1].mean(0), right[-1].mean(0), slope)
    per_seed = []
    for s in range(seeds):     # the same count from one seed's draws alone
        e_s = np.array([np.polyfit(logN, np.log(top[:, s, k]), 1)[0] for k in range(L)])
        r_s = np.array([np.polyfit(logN, np.log(ratio[:, s, k]), 1)[0] for k in range(L)])
        per_seed.append(empirical_count(a1, alpha2, e_s,
                                        is_spike(left[-1, s], right[-1, s], r_s), L))
    return OrderCount(L, alpha2, Ns, seeds, e_hat, slope, left[-1].mean(0), right[-1].mean(0),
                      left[-1].std(0), right[-1].std(0), spike, a1,
                      theory_count(a1, alpha2, L), empirical_count(a1, alpha2, e_hat, spike, L),
                      np.array(per_seed))


def plot_order_count(data: OrderCount):
    r"""(a) :math:`\Lambda` and the measured count along :math:`\alpha_1` at fixed :math:`\alpha_2`;
    (b) the top-vector cosines of each :math:`T_k` at the largest width, with the threshold
    :math:`1/\sqrt2` and the chance levels :math:`1/\sqrt N`."""
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(7.0, 3.9), gridspec_kw={"width_ratios": [1.15, 1]})
    ax.step(data.alpha1, data.theory, where="post", color=COLORS["theory"], lw=1.6,
            label=rf"(a) theory $\Lambda(\alpha_1, {data.alpha2:g})$, $L = {data.L}$")
    ax.step(data.alpha1, data.measured, where="post", color=COLORS["fresh"], lw=1.6, ls="--",
            label=r"(a) measured: spike terms with $\alpha_2 + k\alpha_1 + \hat e_k \geq 0$")
    ax.set(xlabel=r"$\alpha_1$", ylabel="new outliers", xlim=(0, 0.5),
           title=rf"(a) count along $\alpha_1$, $\alpha_2 = {data.alpha2:g}$")
    k = np.arange(data.L)
    bx.errorbar(k - 0.08, data.left, yerr=data.left_sd, fmt="o", color=COLORS["fresh"], capsize=2,
                label=r"(b) left vector vs $a^{\circ(k+1)}$")
    bx.errorbar(k + 0.08, data.right, yerr=data.right_sd, fmt="s", color=COLORS["reused"],
                capsize=2, label=r"(b) right vector vs $u_k$")
    bx.axhline(ALIGNED, color=COLORS["theory"], ls=":", lw=1, label=r"(b) threshold $1/\sqrt{2}$")
    bx.axhline(1 / np.sqrt(data.Ns[-1]), color=COLORS["chance"], ls="--", lw=1,
               label=r"(b) chance $1/\sqrt{N}$")
    bx.set(xlabel="order $k$", ylabel="cosine", ylim=(0, 1.05), xticks=k,
           title=rf"(b) is $T_k$ a spike? $N = {data.Ns[-1]}$")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = bx.get_legend_handles_labels()
    fig.legend(h1 + h2, l1 + l2, loc="outside lower center", ncol=2)
    plt.close(fig)
    return fig


def correction_numbers(data: dict) -> dict:
    """Glue values: both predictions' size ratios at the largest width, fresh batch, k = 2, 3,
    and the large-N limits of ||S_k^corr||/||S_k||."""
    j_last, st = len(data["Ns"]) - 1, data["fresh"]
    out = {"corr_N": int(data["Ns"][-1])}
    for j, k in enumerate(data["orders"]):
        if k < 2:
            continue
        out[f"corr_old{k}"] = float(st["ratio"][0][j_last, j])
        out[f"corr_new{k}"] = float(st["ratio_corr"][0][j_last, j])
        out[f"corr_limit{k}"] = float(st["limit"][j])
    return out


def _own_edge_seeds(s, b, i, N):
    """Per seed, at batch ``b``, setting ``i`` and width ``N``: the counts of :math:`W_2`'s
    outliers against :math:`W_0`'s edge and against its own, and its own edge (arrays)."""
    recs = [r for r in s.records if r["batch"] == b and r["N"] == N]
    return tuple(np.array([r[key][i] for r in recs])
                 for key in ("settings_count", "settings_count_own", "settings_edge_own"))


def own_edge_table(scaling: Scaling):
    r"""Table *tab-own-edge*: :math:`W_2`'s outliers at each setting against :math:`W_0`'s edge and
    against its own bulk edge (:func:`twostep.analysis.spikes.own_bulk_edge`), mean over seeds
    at each width, both batches, next to the theory's :math:`1+\Lambda` (the own edges are in
    :func:`own_edge_level_table`); the caption gives the largest difference between two seeds'
    counts of one entry."""
    s = _check_scaling(scaling)
    rows, spread = [], 0
    for b in BATCHES:
        for i, (a1, a2) in enumerate(s.settings):
            lam = n_spikes(a1, a2, s.L)
            cells = []
            for N in s.Ns:
                raw, own, _ = _own_edge_seeds(s, b, i, N)
                cells.append(f"{raw.mean():.1f} / {own.mean():.1f}")
                spread = max(spread, int(np.ptp(raw)), int(np.ptp(own)))
            rows.append([b, f"({a1:g}, {a2:g})", str(1 + lam)] + cells)
    same = ("every seed gives the same counts" if spread == 0
            else f"the counts of the seeds differ by at most {spread}")
    return markdown_table(
        f"Outliers of $W_2$ counted two ways, mean over {len(s.seeds)} seeds ({same}): beyond 1.05 "
        "times the edge 2 of $W_0$ (first number) and beyond 1.05 times $W_2$'s own bulk edge, the "
        "top singular value of $W_2$ with the span of $a, a^{\\circ2}, \\dots, a^{\\circ L}$ "
        "projected out (second number). "
        "Theory: $1+\\Lambda$.", "tab-own-edge",
        ["batch", "$(\\alpha_1,\\alpha_2)$", "$1+\\Lambda$"] + [f"$N = {N}$" for N in s.Ns], rows)


def own_edge_level_table(scaling: Scaling):
    r"""Table *tab-own-edge-level*: :math:`W_2`'s own bulk edge at each setting and width, mean
    over seeds, both batches; the caption gives each batch's largest standard error (with a
    mean ± standard error in each cell the table is wider than the column)."""
    s = _check_scaling(scaling)
    stats = {(b, i, N): mean_sem(_own_edge_seeds(s, b, i, N)[2])
             for b in BATCHES for i in range(len(s.settings)) for N in s.Ns}
    rows = [[b, f"({a1:g}, {a2:g})"] + [f"{stats[b, i, N][0]:.2f}" for N in s.Ns]
            for b in BATCHES for i, (a1, a2) in enumerate(s.settings)]
    largest = {b: max(sem for (b2, _, _), (_, sem) in stats.items() if b2 == b) for b in BATCHES}
    return markdown_table(
        "The own bulk edge of $W_2$ used in the second count (the edge of $W_0$ is 2), mean "
        f"over {len(s.seeds)} seeds; standard errors at most "
        + " and ".join(f"{sig(largest[b])} ({b})" for b in BATCHES) + ".",
        "tab-own-edge-level", ["batch", "$(\\alpha_1,\\alpha_2)$"] + [f"$N = {N}$" for N in s.Ns], rows)


def own_edge_numbers(scaling: Scaling) -> dict:
    """Glue values: at the largest width, how many (batch, setting) pairs with Lambda >= 1 have
    the own-edge count equal to 1 + Lambda, of how many; the largest own edge of each batch."""
    s = _check_scaling(scaling)
    out = {}
    for b in BATCHES:
        recs = [r for r in s.records if r["batch"] == b and r["N"] == s.Ns[-1]]
        hits = total = 0
        for i, (a1, a2) in enumerate(s.settings):
            lam = n_spikes(a1, a2, s.L)
            if lam >= 1:
                total += 1
                hits += int(round(np.mean([r["settings_count_own"][i] for r in recs])) == 1 + lam)
        out[f"own_{b}_hits"], out[f"own_{b}_total"] = hits, total
        out[f"own_{b}_edge_max"] = float(max(np.mean([r["settings_edge_own"][i] for r in recs])
                                             for i in range(len(s.settings))))
    return out


# --------------------------------------------------------------------------- verdicts

def spike_verdicts(scaling: Scaling, orders=(2, 3), N: int | None = None) -> dict:
    r"""Verdicts (:func:`twostep.analysis.verdicts.verdict`) of the claim that each exact term
    :math:`T_k` is its predicted spike, fresh batch, at width ``N`` (default the largest), per
    seed: the size :math:`s_1(T_k)/\|S\|` against 1, with the spike-free level
    :math:`\|T_k - S\|_{op}/\|S\|` as the paired null, for the book's corrected
    :math:`S_k^{\rm corr}` and its plain :math:`S_k`: ``verdict_spikes_corr`` and
    ``verdict_spikes_plain``, the worst over the orders; ``plain_miss_<k>`` is
    :math:`s_1(T_k)/\|S_k\| - 1`."""
    s = _check_scaling(scaling)
    N = s.Ns[-1] if N is None else N
    recs = [r for r in s.records if r["batch"] == "fresh" and r["N"] == N]
    out, labels = {}, {"corr": [], "plain": []}
    for k in orders:
        k = check_int(k, "orders", 1)
        for tag, sig, res in (("corr", "signal_corrected", "residual_corrected"),
                              ("plain", "signal", "residual")):
            ratio = np.array([r["top"][k] / r[sig][k] for r in recs])
            null = np.array([r[res][k] / r[sig][k] for r in recs])
            labels[tag].append(str(verdict(ratio, 1.0, null)))
            if tag == "plain":
                out[f"plain_miss_{k}"] = float(ratio.mean() - 1.0)
    for tag in ("corr", "plain"):
        out[f"verdict_spikes_{tag}"] = worst(labels[tag])
    return out


def spike_width_numbers(scaling: Scaling, orders=(2, 3)) -> dict:
    """Glue values ``vw_terms_<N>`` (corrected spikes) and ``vw_plain_<N>`` for the landing
    page's verdicts at each width: :func:`spike_verdicts` at every width of the study."""
    s = _check_scaling(scaling)
    by = {N: spike_verdicts(s, orders, N) for N in s.Ns}
    return {**width_verdicts("vw_terms", {N: v["verdict_spikes_corr"] for N, v in by.items()}),
            **width_verdicts("vw_plain", {N: v["verdict_spikes_plain"] for N, v in by.items()})}


def nstar_range(scaling: Scaling, setting: int, k: int, margins=(0.02, 0.10),
                key: str = "settings_spikes_corrected") -> dict:
    r"""What the extrapolation of the :math:`(k+1)`-th spike of setting ``setting`` can and cannot
    say: its growth per doubling of :math:`N`, :math:`2^{e_k}`, and the range of
    :math:`N^\star = (\theta_\star/C_k)^{1/e_k}` over the outlier margins ``margins``
    (:func:`~twostep.analysis.spikes.outlier_strength`) and over the constants :math:`C_k` fitted
    to each seed separately (fresh runs). Returns ``growth``, ``e``, ``lo``, ``hi`` and
    ``decades`` (:math:`\log_{10}(hi/lo)`, ``inf`` when the spike never reaches it), and the
    margins ``margin_lo``, ``margin_hi``."""
    s = _check_scaling(scaling)
    setting = check_int(setting, "setting", 0)
    if setting >= len(s.settings):
        raise ValueError(f"setting must be in [0, {len(s.settings) - 1}], got {setting}")
    a1, a2 = s.settings[setting]
    k = check_int(k, "k", 1)
    if not isinstance(margins, (tuple, list)) or len(margins) != 2:
        raise TypeError(f"margins must be a pair (low, high) of margins, got {margins!r}")
    lo_m, hi_m = (check_real(m, "margins", low=0.0, low_open=True) for m in margins)
    e = spike_exponent(k, a1, a2)
    fresh = [r for r in s.records if r["batch"] == "fresh"]
    constants = []
    for seed in s.seeds:
        rows = [r for r in fresh if r["seed"] == seed]
        N = np.array([r["N"] for r in rows], float)
        constants.append(power_law_constant(N, np.array([r[key][setting][k] for r in rows]), e)[0])
    ratio = 1.0                           # N = d throughout the study
    lo = width_to_reach(outlier_strength(ratio, min(lo_m, hi_m)), max(constants), e)
    hi = width_to_reach(outlier_strength(ratio, max(lo_m, hi_m)), min(constants), e)
    decades = math.log10(hi / lo) if np.isfinite(hi) and np.isfinite(lo) else math.inf
    return {"growth": 2.0 ** e, "e": e, "lo": lo, "hi": hi, "decades": decades,
            "margin_lo": min(lo_m, hi_m), "margin_hi": max(lo_m, hi_m)}


def order_count_verdict(data: OrderCount) -> dict:
    r"""Verdict of "more directions as :math:`\alpha_1\to1/2`", judged as a count
    (:func:`twostep.analysis.verdicts.count_verdict`): at the middle of each interval of
    :math:`\alpha_1` where the theory's :math:`\Lambda` is constant, and for each seed's own
    count, whether the measured count equals :math:`\Lambda`. Returns ``verdict_c6``, the pairs
    ``c6_hits`` of ``c6_pairs``, and ``c6_points`` (the midpoints)."""
    if not isinstance(data, OrderCount):
        raise TypeError(f"data must be an OrderCount (from order_count_data), got {type(data).__name__}")
    edges = [0.0] + [0.5 - data.alpha2 / k for k in range(1, data.L) if 0.5 - data.alpha2 / k > 0]
    edges = sorted(set(edges)) + [0.5]
    mids = [(lo + hi) / 2 for lo, hi in zip(edges[:-1], edges[1:])]
    cols = [int(np.argmin(np.abs(data.alpha1 - m))) for m in mids]
    hits = int(np.sum(data.measured_seeds[:, cols] == data.theory[cols]))
    pairs = data.seeds * len(cols)
    v = count_verdict(hits, pairs, seeds=data.seeds)
    return {"verdict_c6": v.label, "c6_hits": hits, "c6_pairs": pairs,
            "c6_points": ", ".join(f"{data.alpha1[c]:.2f}" for c in cols)}
