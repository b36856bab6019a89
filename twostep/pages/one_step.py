r"""Chapter *One step*: the first gradient step as a spike plus a small remainder.

At initialisation the negative gradient of the correlation loss (the update
per unit step size) is :math:`G = -\nabla L(W_0)`, :math:`N\times d`. Splitting
:math:`\sigma'(W_0X^\top) = \mu_1\mathbf 1\mathbf 1^\top + \big(\sigma'(W_0X^\top)-\mu_1\big)`
gives

.. math::
    G = \mu_1\, a v^\top + \frac1n\operatorname{diag}(a)
        \big[(\sigma'(W_0X^\top)-\mu_1)\odot\mathbf 1y^\top\big]X,
    \qquad v = \frac1n X^\top y,

so :math:`W_1 = W_0 + \eta_1 G = W_0 + \eta_1\mu_1 av^\top + \Delta_1`. The chapter
*One step* measures, with :func:`first_step_diagnostics`, the relative size of the
remainder :math:`\|G-\mu_1av^\top\|_{op}/\|G\|_{op}` and the top of the spectrum of
:math:`W_1` for several step sizes, and with :func:`learned_direction_overlaps` the
overlap of the data's direction :math:`v` for several targets. The formulas they are
compared with live in :mod:`twostep.analysis.theory` and :mod:`twostep.analysis.bbp`.

Each figure of the chapter is one compute call and one plot call: :func:`residual_data` with
:func:`plot_residual` and :func:`plot_growth`, :func:`w1_spectrum_data` with
:func:`plot_w1_spectrum`, :func:`bbp_data` with :func:`plot_bbp`, :func:`overlap_data` with
:func:`plot_overlap`. The ``*_numbers`` functions return the values the prose glues, the
``*_table`` functions the (header, rows) of its tables, the ``*_table_spread`` functions the
spread over seeds that the caption of a table too wide for "mean ± standard error" cells
states, and the small formulas the prose uses (:func:`derivative_spread`,
:func:`single_sample_norm`, :func:`log_corrected_slope`, :func:`cross_moment`,
:func:`critical_step`) are tested here rather than computed in a cell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_dtype, check_int, check_pairs, check_real, check_rng
from ..experiments.first_step import (_check_link, feature_spikes, first_step_diagnostics,
                                      learned_direction_overlaps)
from ..model.activations import Activation, check_activation
from ..model.network import gaussian_inputs, initialise
from ..model.steps import step_size
from ..model.targets import Link
from .report import VERDICT_WIDTHS, sci, sig, width_verdicts




# ---------------------------------------------------------------------------
# The chapter's experiments and figures. Each figure of *One step* is one call to a
# ``*_data`` function (the runs, seeded per task through :func:`twostep.analysis.sweep.sweep`)
# and one call to a ``plot_*`` function; ``*_numbers`` gives the values the prose glues and
# ``*_table`` the rows of a table.
# ---------------------------------------------------------------------------

#: Colours of the chapter's targets (red and blue stay reserved for reused / fresh batches).
TARGET_COLORS = {"He_1": "#1e8449", "He_1+He_3": "#e377c2", "He_2": "#8c564b",
                 "He_3": "#d68910", "odd": "#7d3c98"}
#: Legend labels of the chapter's targets.
TARGET_LABELS = {"He_1": r"$\mathrm{He}_1$", "He_1+He_3": r"$\mathrm{He}_1+\mathrm{He}_3/\sqrt{6}$",
                 "He_2": r"$\mathrm{He}_2/\sqrt{2}$", "He_3": r"$\mathrm{He}_3/\sqrt{6}$",
                 "odd": r"odd ($\sin 2z$)"}
#: Colour and label of the comparison activation tanh.
TANH_COLOR = "0.45"
ACTIVATION_LABELS = {"poly4": r"$\sigma_4$", "tanh": r"$\tanh$"}
ALPHA_COLORS = ("0.45", "#b9770e", "#6c3483")


def _check_sizes(values, name: str, minimum: int = 3) -> list[int]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of integers >= {minimum}, got {values!r}")
    out = [check_int(v.item() if isinstance(v, np.generic) else v, f"{name}[{i}]", minimum)
           for i, v in enumerate(values)]
    if not out:
        raise ValueError(f"{name} must be a non-empty sequence of integers >= {minimum}")
    return out


def _check_links(links, name: str) -> dict:
    if not isinstance(links, dict) or not links or not all(isinstance(g, Link) for g in links.values()):
        raise TypeError(f"{name} must be a non-empty dict of name -> Link")
    return dict(links)


def _mu1(activation: Activation) -> float:
    return float(activation.hermite_coefficients(1)[1])


def derivative_spread(activation: Activation) -> float:
    r"""Standard deviation of :math:`\sigma'(z)` around its mean :math:`\mu_1`, :math:`z\sim\mathcal N(0,1)`:
    :math:`\mathrm{sd}(\sigma') = \mathbb E[(\sigma'(z)-\mu_1)^2]^{1/2}` (Gauss--Hermite quadrature).

    It sets the size of one sample's contribution to the remainder, see
    :func:`single_sample_norm`.
    """
    from ..model.hermite import gaussian_expectation

    check_activation(activation)
    mu1 = _mu1(activation)
    return float(np.sqrt(gaussian_expectation(lambda z: (activation.derivative(z, 1) - mu1) ** 2)))


def single_sample_norm(label: float, spread: float, n: int, d: int) -> float:
    r"""Predicted operator norm of one sample's share of the remainder per unit step,

    .. math::
        \Big\|\frac{y_j}{n}\big(a\odot(\sigma'(W_0x_j)-\mu_1)\big)x_j^\top\Big\|_{op}
        \approx |y_j|\,\mathrm{sd}(\sigma')\,\frac{\sqrt d}{n},

    using :math:`\|x_j\|\approx\sqrt d` and :math:`\|a\odot(\sigma'-\mu_1)\|\approx\mathrm{sd}(\sigma')`.
    """
    label = abs(check_real(label, "label"))
    spread = check_real(spread, "spread", low=0.0)
    n, d = check_int(n, "n"), check_int(d, "d")
    return label * spread * float(np.sqrt(d)) / n


def log_corrected_slope(N: float) -> float:
    r"""Local log-log slope of :math:`\sqrt{\log N/N}` at ``N`` (> 1): :math:`-\tfrac12 + 1/(2\log N)`."""
    N = check_real(N, "N", low=1.0, low_open=True)
    return -0.5 + 1.0 / (2.0 * np.log(N))


def cross_moment(link: Link) -> float:
    r""":math:`\mathbb E[g(z)^2z^2]` of a link, :math:`z\sim\mathcal N(0,1)` (quadrature); it sets the
    finite-size variance :math:`(\mathbb E[y^2z^2]-c_1^2)/n` of :math:`v` along :math:`\beta^*`."""
    _check_link(link, "link")
    return float(link.moment(lambda z, gz: gz ** 2 * z ** 2))


def critical_step(mu1: float, c1: float, second_moment: float, psi: float, ratio: float) -> float:
    r"""Critical first step at :math:`\alpha_1 = 0`, where :math:`\theta` of :func:`spike_strength`
    reaches the BBP threshold :math:`\gamma^{1/4}`:

    .. math::
        \eta_c = \frac{\gamma^{1/4}}{|\mu_1|\sqrt{c_1^2 + \mathbb E[y^2]/\psi}}.
    """
    from ..analysis.bbp import bbp_threshold
    from ..analysis.theory import spike_strength

    mu1 = check_real(mu1, "mu1")
    if mu1 == 0:
        raise ValueError("mu1 must be non-zero: with mu1 = 0 the first step has no spike")
    second_moment = check_real(second_moment, "second_moment", low=0.0)
    c1 = check_real(c1, "c1")
    if c1 == 0 and second_moment == 0:
        raise ValueError("c1 and second_moment must not both be zero (no spike)")
    return bbp_threshold(ratio) / spike_strength(1.0, mu1, c1, second_moment, psi)


def _fixed(x: float, digits: int) -> str:
    # fixed-point text without a negative zero ("-0.00")
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _minus(x: float, digits: int) -> str:
    # a legend's number with a true minus sign, at the precision the text and tables use
    return f"{x:.{digits}f}".replace("-", "\u2212")


def _log_ticks(axis, ticks):
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))


def _plt():
    import matplotlib.pyplot as plt

    return plt


def _check_data(data, cls, name="data"):
    if not isinstance(data, cls):
        raise TypeError(f"{name} must be the {cls.__name__} returned by the matching *_data "
                        f"function, got {type(data).__name__}")
    return data


# --- the remainder and the growing outlier (fig-residual, fig-growth) -------------------

@dataclass
class ResidualData:
    """Runs behind the chapter's figures of the remainder and of the growing outlier
    (see :func:`residual_data`)."""

    sizes: np.ndarray                 # (S,) all widths N = n = d
    sizes_small: np.ndarray           # (S_small,) widths of the tail targets
    n_seeds_small: int
    n_seeds_large: int
    large_from: int                   # first width with fewer seeds
    fit_from: int                     # widths >= fit_from make the "_large" slopes
    main: str                         # activation with recorded steps and tail targets
    steps: list                       # (c, alpha) of the recorded W_1
    c1: float
    second_moment: float
    mu1: float
    spread: float                     # sd of sigma'(z) of the main activation
    summary: dict                     # activation -> rows of summarise over (act, N)
    tail_summary: dict                # target -> rows over N (main activation)
    slopes: dict                      # name -> (slope, standard error)


def _first_step_task(rng, N, act, activations, target, main, steps, dtype):
    return first_step_diagnostics(rng, N=N, activation=activations[act], target=target,
                                  steps=steps if act == main else (), top=2, dtype=dtype)


def _tail_task(rng, N, target, activation, targets, dtype):
    return first_step_diagnostics(rng, N=N, activation=activation, target=targets[target],
                                  dtype=dtype)


def residual_data(activations: dict, target: Link, sizes_small, seeds_small, sizes_large,
                  seeds_large, tail_targets: dict, steps=(), main: str = "poly4",
                  main_key: str = "He_1", fit_from: int = 1000, n_jobs: int = 1,
                  dtype=np.float32) -> ResidualData:
    r"""The first update against the width :math:`N = n = d`, for several activations and targets.

    For every activation in ``activations``, width and seed, :func:`first_step_diagnostics`
    with ``target`` measures the relative remainder :math:`\|G-\mu_1av^\top\|_{op}/\|G\|_{op}`;
    for the activation ``main`` it also records the two largest singular values of
    :math:`W_1 = W_0 + \eta_1G` at each :math:`\eta_1 = cN^\alpha` of ``steps`` and the absolute
    remainder :math:`\|\Delta_1\|_{op} = \eta_1\|G-\mu_1av^\top\|_{op}`. The targets of
    ``tail_targets`` are run with ``main`` over ``sizes_small`` and ``seeds_small``. Each task
    draws from its own seed (:func:`twostep.analysis.sweep.sweep`).

    Parameters
    ----------
    activations : dict of name -> Activation
        Must contain ``main``.
    target : Link
        The target of the main series (:math:`\mathrm{He}_1` in the chapter), stored under
        ``main_key`` among the tail rows.
    sizes_small, sizes_large : sequence of int (>= 3)
        Widths run with ``seeds_small`` and ``seeds_large``.
    seeds_small, seeds_large : iterable of int
    tail_targets : dict of name -> Link
    steps : sequence of (c, alpha)
    fit_from : int
        The ``"<act>_large"`` slopes fit only widths ``>= fit_from`` (at least two of them).
    n_jobs : int
    dtype : float32 or float64

    Returns
    -------
    ResidualData
        ``summary[act]``: one row per width with means and standard errors of ``residual``,
        ``best_residual``, ``spike``, ``top1``/``top2`` (shape ``(len(steps),)`` for ``main``)
        and ``remainder`` (same shape); ``tail_summary[key]``: rows over ``sizes_small`` of
        ``residual``, ``remainder_sample_overlap``, ``max_label``, ``remainder_norm``
        (:math:`\|G-\mu_1av^\top\|_{op}`); ``slopes``: fitted log-log slopes ``(slope, se)``
        keyed ``act``, ``act + "_large"`` and ``"tail_" + key``.
    """
    from functools import partial

    from ..analysis.sweep import loglog_slope, summarise, sweep

    if not isinstance(activations, dict) or not activations:
        raise TypeError("activations must be a non-empty dict of name -> Activation")
    for act in activations.values():
        check_activation(act)
    if main not in activations:
        raise ValueError(f"main must be one of {sorted(activations)}, got {main!r}")
    _check_link(target, "target")
    tail_targets = _check_links(tail_targets, "tail_targets")
    if main_key in tail_targets:
        raise ValueError(f"main_key {main_key!r} must not be a key of tail_targets")
    sizes_small = _check_sizes(sizes_small, "sizes_small")
    sizes_large = _check_sizes(sizes_large, "sizes_large")
    seeds_small, seeds_large = list(seeds_small), list(seeds_large)
    if len(seeds_small) < 2 or len(seeds_large) < 2:
        raise ValueError("seeds_small and seeds_large need at least two seeds each (standard errors)")
    steps = [(check_real(c, f"steps[{i}][0]", low=0.0, low_open=True),
              check_real(al, f"steps[{i}][1]", low=0.0, high=0.5, high_open=True))
             for i, (c, al) in enumerate(check_pairs(steps, "steps", "a (c, alpha) pair"))]
    fit_from = check_int(fit_from, "fit_from")
    n_jobs = check_int(n_jobs, "n_jobs")
    dt = check_dtype(dtype)
    acts = list(activations)
    task = partial(_first_step_task, activations=activations, target=target, main=main,
                   steps=steps, dtype=dt)
    records = (sweep(task, {"N": sizes_small, "act": acts}, seeds=seeds_small, n_jobs=n_jobs)
               + sweep(task, {"N": sizes_large, "act": acts}, seeds=seeds_large, n_jobs=n_jobs))
    for r in records:
        r["remainder"] = r["eta"] * r["residual"] * r["update_norm"]
        has_steps = len(r["eta"]) > 0
        r["top1"] = r["top"][:, 0] if has_steps else 0.0
        r["top2"] = r["top"][:, 1] if has_steps else 0.0
    tail = partial(_tail_task, activation=activations[main], targets=tail_targets, dtype=dt)
    tail_records = sweep(tail, {"N": sizes_small, "target": list(tail_targets)},
                         seeds=seeds_small, n_jobs=n_jobs)
    for r in records + tail_records:
        r["remainder_norm"] = r["residual"] * r["update_norm"]
    tail_values = ["residual", "remainder_sample_overlap", "max_label", "remainder_norm"]
    tail_all = summarise(tail_records, ["target", "N"], tail_values)
    tail_summary = {t: [e for e in tail_all if e["target"] == t] for t in tail_targets}
    main_small = [r for r in records if r["act"] == main and r["N"] in sizes_small]
    tail_summary[main_key] = summarise(main_small, ["N"], tail_values)
    summary_all = summarise(records, ["act", "N"],
                            ["residual", "best_residual", "top1", "top2", "remainder", "spike"])
    summary = {act: [e for e in summary_all if e["act"] == act] for act in acts}
    sizes = np.array([e["N"] for e in summary[main]])
    small = np.array(sizes_small)
    if np.sum(sizes >= fit_from) < 2:
        raise ValueError(f"fit_from must leave at least two widths, got {fit_from}")
    slopes = {}
    for act, rows in summary.items():
        res = np.array([e["residual"] for e in rows])
        slopes[act] = loglog_slope(sizes, res)
        slopes[act + "_large"] = loglog_slope(sizes[sizes >= fit_from], res[sizes >= fit_from])
    for key, rows in tail_summary.items():
        slopes["tail_" + key] = loglog_slope(small, np.array([e["residual"] for e in rows]))
    return ResidualData(sizes=sizes, sizes_small=small, n_seeds_small=len(seeds_small),
                        n_seeds_large=len(seeds_large), large_from=int(sizes_large[0]),
                        fit_from=fit_from, main=main, steps=steps,
                        c1=float(target.coefficients[1]), second_moment=float(target.second_moment),
                        mu1=_mu1(activations[main]), spread=derivative_spread(activations[main]),
                        summary=summary, tail_summary=tail_summary, slopes=slopes)


def plot_residual(data: ResidualData):
    r"""figure ``fig-residual``: the relative remainder against :math:`N`, with :math:`N^{-1/2}` and
    :math:`\sqrt{\log N/N}` overlaid (left: the activations; right: the tail targets).

    Returns a ``matplotlib.figure.Figure`` with two log-log axes.
    """
    from .figures import COLORS, errorbars, theory_power_law

    _check_data(data, ResidualData)
    plt = _plt()
    fig, (ax, ax_t) = plt.subplots(1, 2, figsize=(6.8, 4.0))
    sizes, slopes = data.sizes, data.slopes
    markers = {"poly4": "o", "tanh": "s"}
    for act, rows in data.summary.items():
        res = np.array([e["residual"] for e in rows])
        sem = np.array([e["residual_sem"] for e in rows])
        color = TARGET_COLORS["He_1"] if act == data.main else TANH_COLOR
        label = ACTIVATION_LABELS.get(act, act)
        errorbars(ax, sizes, res, sem, color=color, marker=markers.get(act, "^"),
                  label=f"{label}: slope {_minus(slopes[act][0], 3)} ± {slopes[act][1]:.3f}")
        mid = len(sizes) // 2
        first = act == data.main
        theory_power_law(ax, sizes, -0.5, sizes[mid], res[mid], label=r"$N^{-1/2}$" if first else None)
        log_ref = res[mid] * np.sqrt(np.log(sizes) / sizes) / np.sqrt(np.log(sizes[mid]) / sizes[mid])
        ax.plot(sizes, log_ref, color=COLORS["theory"], ls=":", lw=1,
                label=r"$\sqrt{\log N/N}$" if first else None)
    ax.set_title(r"target $\mathrm{He}_1$")
    small = data.sizes_small
    keys = list(data.tail_summary)
    anchor = data.tail_summary["odd" if "odd" in keys else keys[0]][0]["residual"]
    theory_power_law(ax_t, small, -0.5, small[0], anchor, label=r"$N^{-1/2}$")
    order = sorted(keys, key=lambda k: list(TARGET_COLORS).index(k) if k in TARGET_COLORS else 99)
    for t in order:
        rows = data.tail_summary[t]
        s, se = slopes["tail_" + t]
        errorbars(ax_t, small, [e["residual"] for e in rows], [e["residual_sem"] for e in rows],
                  color=TARGET_COLORS.get(t, "0.3"),
                  label=f"{TARGET_LABELS.get(t, t)}: slope {_minus(s, 2)} ± {se:.2f}")
    ax_t.set_title(r"activation $\sigma_4$")
    nice = [250, 500, 1000, 2000, 4000]
    for axis, top in [(ax, sizes.max()), (ax_t, small.max())]:
        axis.set_xscale("log")
        axis.set_yscale("log")
        _log_ticks(axis.xaxis, [t for t in nice if t <= top] or list(sizes))
        axis.set_xlabel("width $N$ ($= n = d$)")
        axis.set_ylabel(r"$\|G-\mu_1 a v^\top\|_{op}\,/\,\|G\|_{op}$")
        axis.legend(fontsize=9, ncol=1, loc="upper center", bbox_to_anchor=(0.5, -0.2),
                    handlelength=1.8)
    _log_ticks(ax.yaxis, [0.03, 0.05, 0.1, 0.2, 0.3])
    _log_ticks(ax_t.yaxis, [0.1, 0.2, 0.3, 0.5, 0.7])
    return fig


def _growth_curves(data: ResidualData) -> list[dict]:
    # Per recorded step: measured s_1, s_2, ||Delta_1|| against N and the predicted s_star.
    from ..analysis.bbp import spiked_outlier
    from ..analysis.theory import spike_strength
    from ..model.steps import step_size

    rows = data.summary[data.main]
    out = []
    for i, (c, alpha) in enumerate(data.steps):
        theta = np.array([spike_strength(step_size(c, alpha, int(N)), data.mu1, data.c1,
                                         data.second_moment, 1.0) for N in data.sizes])
        out.append(dict(alpha=alpha, c=c,
                        top1=np.array([e["top1"][i] for e in rows]),
                        top1_sem=np.array([e["top1_sem"][i] for e in rows]),
                        top2=np.array([e["top2"][i] for e in rows]),
                        top2_sem=np.array([e["top2_sem"][i] for e in rows]),
                        rem=np.array([e["remainder"][i] for e in rows]),
                        rem_sem=np.array([e["remainder_sem"][i] for e in rows]),
                        pred=np.asarray(spiked_outlier(theta, 1.0))))
    return out


def plot_growth(data: ResidualData):
    r"""figure ``fig-growth``: top two singular values of :math:`W_1` against :math:`N` with
    :math:`s_\star(\theta)` (left) and :math:`\|\Delta_1\|_{op}` with slopes :math:`\alpha_1-1/2`
    (right), one colour per recorded step. Returns a ``matplotlib.figure.Figure``."""
    from matplotlib.lines import Line2D

    from ..analysis.spectra import bulk_edge
    from .figures import COLORS, errorbars, theory_power_law

    _check_data(data, ResidualData)
    if not data.steps:
        raise ValueError("data has no recorded steps (residual_data(..., steps=()))")
    plt = _plt()
    sizes = data.sizes
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 3.8))
    curves = _growth_curves(data)
    colors = [ALPHA_COLORS[i % len(ALPHA_COLORS)] for i in range(len(curves))]
    for cur, color in zip(curves, colors):
        errorbars(axes[0], sizes, cur["top1"], cur["top1_sem"], color=color, ls="none")
        axes[0].plot(sizes, cur["top2"], color=color, marker="s", ms=3.5, ls="none", mfc="none")
        axes[0].plot(sizes, cur["pred"], color=color, lw=1)
        errorbars(axes[1], sizes, cur["rem"], cur["rem_sem"], color=color, ls="none")
        theory_power_law(axes[1], sizes, cur["alpha"] - 0.5, sizes[0], cur["rem"][0], color=color)
    for ax, yticks in zip(axes, [[2, 3, 5, 10, 20, 40], [0.1, 0.2, 0.5, 1, 2, 4]]):
        ax.axhline(bulk_edge(1.0), color=COLORS["chance"], ls=":", lw=1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        _log_ticks(ax.xaxis, [t for t in [250, 500, 1000, 2000, 4000] if t <= sizes.max()])
        _log_ticks(ax.yaxis, yticks)
        ax.set_xlabel("width $N$ ($= n = d$)")
    axes[0].set_ylabel("top two singular values of $W_1$")
    axes[1].set_ylabel(r"$\|\Delta_1\|_{op} = \eta_1\|G - \mu_1 a v^\top\|_{op}$")
    ink = COLORS["theory"]
    handles = [Line2D([], [], color=c, lw=4, label=rf"$\alpha_1 = {cur['alpha']:g}$")
               for cur, c in zip(curves, colors)] + [
        Line2D([], [], color=ink, marker="o", ls="none", ms=4, label=r"$s_1$ (left), $\|\Delta_1\|$ (right)"),
        Line2D([], [], color=ink, marker="s", ms=3.5, mfc="none", ls="none", label="$s_2$ (left)"),
        Line2D([], [], color=ink, lw=1, label=r"$s_\star(\theta)$ (left)"),
        Line2D([], [], color=ink, ls="--", lw=1, label=r"$N^{\alpha_1 - 1/2}$ (right)"),
        Line2D([], [], color=COLORS["chance"], ls=":", lw=1.2, label="bulk edge")]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=9)
    return fig


def residual_numbers(data: ResidualData) -> dict:
    """Named values of :func:`residual_data` for the prose (``glue_numbers(**...)``).

    Keys: the seeds and widths of the fits (``res_seeds_small``, ``res_seeds_large``,
    ``res_large_from``, ``res_Nmid``), the slopes ``slope_poly`` (with ``_se``), ``slope_tanh``
    and ``slope_he3``, the relative remainders at the largest width (``res_poly_max``,
    ``best_poly_max``, ``res_he3_max``), ``log_slope_max``, the tail's ``tail_Nmax``,
    ``sample_chance`` and ``sample_ov_he3``, and per recorded step ``i`` its exponent
    ``alpha_i``, with ``top2_max_i`` and ``rem_max_i`` of the last step, ``growth_c`` and
    ``rem_exponent_2``.
    """
    _check_data(data, ResidualData)
    s, sizes, small = data.slopes, data.sizes, data.sizes_small
    last = {act: rows[-1] for act, rows in data.summary.items()}
    ts_ = data.tail_summary
    out = dict(
        res_seeds_small=data.n_seeds_small, res_seeds_large=data.n_seeds_large,
        res_large_from=data.large_from,
        slope_poly=s[data.main][0], slope_poly_se=s[data.main][1],
        res_Nmid=data.fit_from, log_slope_max=log_corrected_slope(sizes[-1]),
        res_poly_max=last[data.main]["residual"], best_poly_max=last[data.main]["best_residual"],
        tail_Nmax=int(small[-1]), sample_chance=1 / np.sqrt(small[-1]))
    if "tanh" in data.summary:
        out["slope_tanh"] = s["tanh"][0]
    if "He_3" in ts_:
        out["slope_he3"] = s["tail_He_3"][0]
        out["res_he3_max"] = ts_["He_3"][-1]["residual"]
        out["sample_ov_he3"] = ts_["He_3"][-1]["remainder_sample_overlap"]
    curves = _growth_curves(data)
    out.update({f"alpha_{i}": cur["alpha"] for i, cur in enumerate(curves)})
    if curves:
        i = len(curves) - 1
        out[f"top2_max_{i}"], out[f"rem_max_{i}"] = curves[-1]["top2"][-1], curves[-1]["rem"][-1]
    if data.steps:
        out["growth_c"] = data.steps[0][0]
        out["rem_exponent_2"] = data.steps[-1][1] - 0.5
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in out.items()}


def residual_table(data: ResidualData) -> tuple[list, list]:
    r"""Header and rows of the relative remainder per width (means over seeds): for each
    activation the ratio and :math:`\sqrt N` times it."""
    _check_data(data, ResidualData)
    acts = list(data.summary)
    header = ["$N$", "seeds"]
    for act in acts:
        lab = ACTIVATION_LABELS.get(act, act)
        header += [lab, rf"$\sqrt N\times$ ratio, {lab}"]
    rows = []
    for i, e in enumerate(data.summary[acts[0]]):
        row = [f"{e['N']}", f"{e['count']}"]
        for act in acts:
            t = data.summary[act][i]
            row += [f"{t['residual']:.4f}", f"{t['residual'] * np.sqrt(t['N']):.2f}"]
        rows.append(row)
    return header, rows


def residual_table_spread(data: ResidualData) -> str:
    r"""The spread over seeds of :func:`residual_table`, for its caption: "means over the seeds
    counted in the second column, with standard errors at most 4% of the entry", the percentage
    the largest relative standard error :math:`\mathrm{se}/\bar r` of the ratio :math:`\bar r`
    over the widths and activations (the same for :math:`\sqrt N\,\bar r`), with one
    significant digit (two when it starts with 1)."""
    _check_data(data, ResidualData)
    rel = max(float(e["residual_sem"] / e["residual"]) for rows in data.summary.values()
              for e in rows)
    return (f"means over the seeds counted in the second column, with standard errors at most "
            f"{sig(100 * rel)}% of the entry")


def slope_table(data: ResidualData) -> tuple[list, list]:
    """Header and rows of the fitted log-log slopes of the relative remainder (with standard
    errors) and its value at the largest width of each fit."""
    _check_data(data, ResidualData)
    s, sizes, small = data.slopes, data.sizes, data.sizes_small
    header = ["activation", "target", "widths $N$", "fitted slope", "ratio at the largest $N$"]
    rows = []
    main_label = TARGET_LABELS.get("He_1")
    for act, rows_act in data.summary.items():
        lab = ACTIVATION_LABELS.get(act, act)
        for key, lo in [(act, sizes[0]), (act + "_large", data.fit_from)]:
            rows.append([lab, main_label, f"{lo}–{sizes[-1]}", f"{s[key][0]:.3f} ± {s[key][1]:.3f}",
                         f"{rows_act[-1]['residual']:.3f}"])
    for key in [k for k in TARGET_COLORS if k in data.tail_summary]:
        sl = s["tail_" + key]
        rows.append([ACTIVATION_LABELS.get(data.main, data.main), TARGET_LABELS.get(key, key),
                     f"{small[0]}–{small[-1]}", f"{sl[0]:.2f} ± {sl[1]:.2f}",
                     f"{data.tail_summary[key][-1]['residual']:.2f}"])
    return header, rows


def tail_table(data: ResidualData) -> tuple[list, list]:
    r"""Header and rows, per tail target at the largest small width, each cell the mean ± standard
    error over seeds (``"0.81 ± 0.03"``): the cosine of the top right singular vector of
    :math:`G-\mu_1av^\top` with the input of the largest label, the largest label, the measured
    :math:`\|G-\mu_1av^\top\|_{op}` and the single-sample prediction :func:`single_sample_norm`
    of the mean largest label (linear in it, so its standard error is the prediction's at the
    label's standard error)."""
    _check_data(data, ResidualData)
    N = int(data.sizes_small[-1])
    # no "|" inside a cell: it would end the cell of a pipe table
    header = ["target", r"cosine with $x_{j^\star}$", r"$\max_j \lvert y_j\rvert$",
              r"$\lVert G-\mu_1av^\top\rVert_{op}$", "one sample predicts"]
    rows = []
    for key in [k for k in TARGET_COLORS if k in data.tail_summary]:
        e = data.tail_summary[key][-1]
        pm = lambda name: f"{e[name]:.2f} ± {e[name + '_sem']:.2f}"
        one = lambda label: single_sample_norm(label, data.spread, N, N)
        rows.append([TARGET_LABELS.get(key, key), pm("remainder_sample_overlap"), pm("max_label"),
                     pm("remainder_norm"),
                     f"{one(e['max_label']):.2f} ± {one(e['max_label_sem']):.2f}"])
    return header, rows


def growth_table(data: ResidualData) -> tuple[list, list]:
    r"""Header and rows, per recorded step at the largest width: :math:`s_1`, its prediction
    :math:`s_\star(\theta)`, :math:`s_2` and :math:`\|\Delta_1\|_{op}` (at the smallest and
    the largest width)."""
    _check_data(data, ResidualData)
    lo, hi = int(data.sizes[0]), int(data.sizes[-1])
    header = [r"$\alpha_1$", rf"$s_1$ at $N = {hi}$", r"predicted $s_\star(\theta)$", r"$s_2$",
              rf"$\lVert\Delta_1\rVert_{{op}}$, $N = {lo}$",
              rf"$\lVert\Delta_1\rVert_{{op}}$, $N = {hi}$"]
    rows = [[f"{cur['alpha']:g}", f"{cur['top1'][-1]:.3f}", f"{cur['pred'][-1]:.3f}",
             f"{cur['top2'][-1]:.3f}", f"{cur['rem'][0]:.2f}", f"{cur['rem'][-1]:.2f}"]
            for cur in _growth_curves(data)]
    return header, rows


def growth_table_spread(data: ResidualData) -> str:
    r"""The spread over seeds of :func:`growth_table`, for its caption: the seeds at the largest
    and the smallest width, and per measured quantity (:math:`s_1`, :math:`s_2`,
    :math:`\|\Delta_1\|_{op}`) the largest relative standard error :math:`\mathrm{se}/\text{mean}`
    of its entries over the recorded steps, in percent with one significant digit (two when it
    starts with 1): "means over 3 seeds (6 at :math:`N = 250`), with standard errors at most
    0.8% of the entry for :math:`s_1`, ..."."""
    _check_data(data, ResidualData)
    curves = _growth_curves(data)
    if not curves:
        raise ValueError("data has no recorded steps (residual_data(..., steps=()))")
    rows = data.summary[data.main]
    rel = lambda key, at: max(float(c[key + "_sem"][i] / c[key][i]) for c in curves for i in at)
    lo, hi = rows[0]["count"], rows[-1]["count"]
    seeds = f"{hi} seeds" + ("" if lo == hi else f" ({lo} at $N = {rows[0]['N']}$)")
    return (f"means over {seeds}, with standard errors at most {sig(100 * rel('top1', [-1]))}% "
            f"of the entry for $s_1$, {sig(100 * rel('top2', [-1]))}% for $s_2$ and "
            rf"{sig(100 * rel('rem', [0, -1]))}% for $\lVert\Delta_1\rVert_{{op}}$")


# --- the spectrum of W_1 at two step sizes (fig-w1-spectrum) -----------------------------

@dataclass
class SpectrumData:
    """One draw of :math:`W_1 = W_0 + \\eta_1G` at several step sizes (see :func:`w1_spectrum_data`)."""

    N: int
    cs: list                  # step constants c, eta_1 = c N^alpha
    alpha: float
    margin: float
    singular: list            # per step: all singular values of W_1, shape (N,)
    theta: list               # predicted spike strength per step
    pred: list                # predicted outlier s_star(theta) per step
    outliers: list            # number of values beyond (1 + margin) x bulk edge
    eta_c: float              # critical step at alpha = 0


def w1_spectrum_data(N: int, cs, alpha: float, activation: Activation, target: Link,
                     rng: np.random.Generator, margin: float = 0.05) -> SpectrumData:
    r"""All singular values of :math:`W_1 = W_0 + \eta_1G` for one draw, :math:`N = n = d`.

    Draws, in this order, the teacher, :math:`(W_0, a)`, :math:`X` and the labels, forms the
    update per unit step :math:`G` once (``one_step(..., eta=1) - W0``) and, for each ``c``
    in ``cs``, the spectrum of :math:`W_0 + cN^{\alpha}G`; the prediction is
    :math:`s_\star(\theta)` of equation ``eq-bbp`` with :math:`\theta = \eta_1|\mu_1|\sqrt{c_1^2+\mathbb E[y^2]}`.
    """
    from ..analysis.bbp import spiked_outlier
    from ..analysis.spectra import bulk_edge, singular_values
    from ..analysis.theory import spike_strength
    from ..model.steps import one_step
    from ..model.targets import Teacher

    N = check_int(N, "N", 3)
    cs = [check_real(c, f"cs[{i}]", low=0.0, low_open=True) for i, c in enumerate(cs)]
    if not cs:
        raise ValueError("cs must be a non-empty sequence of positive step constants")
    alpha = check_real(alpha, "alpha", low=0.0, high=0.5, high_open=True)
    check_activation(activation)
    _check_link(target, "target")
    check_rng(rng)
    margin = check_real(margin, "margin", low=0.0)
    teacher = Teacher(target, N, rng)
    W0, a = initialise(N, N, rng)
    X = gaussian_inputs(N, N, rng)
    y = teacher.labels(X, rng)
    G = one_step(W0, a, X, y, activation, 1.0) - W0
    mu1 = _mu1(activation)
    c1, m2 = float(target.coefficients[1]), float(target.second_moment)
    singular = [singular_values(W0 + step_size(c, alpha, N) * G) for c in cs]
    theta = [spike_strength(step_size(c, alpha, N), mu1, c1, m2, 1.0) for c in cs]
    edge = bulk_edge(1.0)
    return SpectrumData(N=N, cs=cs, alpha=alpha, margin=margin, singular=singular, theta=theta,
                        pred=[float(spiked_outlier(t, 1.0)) for t in theta],
                        outliers=[int(np.sum(s > edge * (1 + margin))) for s in singular],
                        eta_c=critical_step(mu1, c1, m2, 1.0, 1.0))


def plot_w1_spectrum(data: SpectrumData):
    r"""figure ``fig-w1-spectrum``: one histogram per step size against the Marchenko--Pastur
    density of :math:`W_0`, the values beyond the margin and the predicted outlier (dashed).
    Returns a ``matplotlib.figure.Figure``."""
    from matplotlib.lines import Line2D

    from ..analysis.spectra import bulk_edge
    from .figures import COLORS, plot_spectrum

    _check_data(data, SpectrumData)
    plt = _plt()
    fig, axes = plt.subplots(1, len(data.cs), figsize=(6.8, 3.4), sharey=True, squeeze=False)
    axes = axes[0]
    for ax, c, s, theta, pred in zip(axes, data.cs, data.singular, data.theta, data.pred):
        plot_spectrum(ax, s, 1.0, margin=data.margin, outlier_color=TARGET_COLORS["He_1"])
        # Below the BBP threshold the prediction is the bulk edge itself, already drawn.
        if pred > bulk_edge(1.0) * (1 + 1e-9):
            ax.axvline(pred, color=COLORS["theory"], ls="--", lw=1.2)
        ax.set_title(rf"$\eta_1 = {c:g}$, $\theta = {theta:.2f}$")
        ax.set_xlim(0, 3.6)
        ax.set_ylim(0, 0.9)
    for ax in axes[1:]:
        ax.set_ylabel("")
    ink = COLORS["theory"]
    fig.legend(handles=[
        plt.Rectangle((0, 0), 1, 1, color="0.6", alpha=0.8, label="singular values of $W_1$"),
        Line2D([], [], color=ink, lw=1.3, label="Marchenko–Pastur density of $W_0$"),
        Line2D([], [], color=ink, ls=":", lw=1, label=f"bulk edge {bulk_edge(1.0):.2f}"),
        Line2D([], [], color=TARGET_COLORS["He_1"], lw=1.6, label=f"beyond {1 + data.margin:g} × edge"),
        Line2D([], [], color=ink, ls="--", lw=1.2, label=r"predicted outlier $s_\star(\theta)$")],
        loc="outside lower center", ncol=3, fontsize=9)
    return fig


def w1_spectrum_numbers(data: SpectrumData) -> dict:
    """Named values of :func:`w1_spectrum_data` for the prose (the last step size)."""
    _check_data(data, SpectrumData)
    return dict(spec_N=data.N, spec_out_high=data.outliers[-1],
                spec_top_high=float(data.singular[-1][0]), spec_pred_high=data.pred[-1],
                spec_margin=data.margin, eta_c_he1=data.eta_c)


# --- the BBP-type transition (fig-bbp) ---------------------------------------------------

@dataclass
class BBPData:
    """Step-size sweep at :math:`\\alpha_1 = 0` (see :func:`bbp_data`)."""

    N: int
    cs: np.ndarray            # (C,) step sizes eta_1 = c
    n_seeds: int
    window: float
    mu1: float
    targets: dict             # name -> Link
    summary: dict             # name -> means/sems of top1, right_v_overlap, pred_measured,
                              # residual, measured_gap, spike_dev
    eta_c: dict               # name -> critical step
    gap: dict                 # name -> (max rel. gap to the limit, to the measured-theta prediction)
    spike_dev: dict           # name -> mean of ||a|| ||v|| / limit - 1
    gap_sem: dict             # name -> standard errors of the two gaps, at the steps of the maxima
    spike_dev_sem: dict       # name -> standard error of spike_dev


def _bbp_task(rng, target, N, cs, activation, targets, dtype):
    steps = [(float(c), 0.0) for c in cs]
    return first_step_diagnostics(rng, N=N, activation=activation, target=targets[target],
                                  steps=steps, dtype=dtype)


def bbp_data(N: int, cs, targets: dict, seeds, activation: Activation, window: float = 1.2,
             n_jobs: int = 1, dtype=np.float32) -> BBPData:
    r"""Top singular value of :math:`W_1` and the cosine of its right singular vector with
    :math:`\hat v`, against the step :math:`\eta_1 = c` (:math:`\alpha_1 = 0`, :math:`N = n = d`).

    For each draw the prediction :math:`s_\star` is also evaluated at the draw's own
    :math:`\theta = c\,|\mu_1|\|a\|\|v\|` (``pred_measured``). ``gap[name]`` is the largest
    relative deviation :math:`|s_1/s_\star - 1|` over steps :math:`c > \text{window}\cdot\eta_c`,
    against the limiting and against the measured :math:`\theta`; ``spike_dev[name]`` the mean of
    :math:`|\mu_1|\|a\|\|v\|/\lim - 1`. ``gap_sem[name]`` holds the standard errors over seeds
    of the two gaps at the step where each is largest: :math:`\mathrm{se}(s_1)/s_\star` for the
    limiting :math:`\theta` (a constant), and that of the draws' own :math:`s_1/s_\star - 1` for
    the measured one; ``spike_dev_sem[name]`` that of ``spike_dev``.

    Parameters
    ----------
    N : int
    cs : sequence of float, shape (C,), each > 0
    targets : dict of name -> Link
    seeds : iterable of int (at least two)
    activation : Activation
    window : float (>= 1)
    """
    from functools import partial

    from ..analysis.bbp import spiked_outlier
    from ..analysis.sweep import summarise, sweep
    from ..analysis.theory import spike_strength

    N = check_int(N, "N", 3)
    cs = np.asarray([check_real(c, f"cs[{i}]", low=0.0, low_open=True) for i, c in enumerate(cs)])
    if cs.size < 2:
        raise ValueError("cs must hold at least two step sizes")
    targets = _check_links(targets, "targets")
    seeds = list(seeds)
    if len(seeds) < 2:
        raise ValueError("seeds must hold at least two seeds")
    check_activation(activation)
    window = check_real(window, "window", low=1.0)
    n_jobs = check_int(n_jobs, "n_jobs")
    dt = check_dtype(dtype)
    mu1 = _mu1(activation)
    task = partial(_bbp_task, N=N, cs=cs, activation=activation, targets=targets, dtype=dt)
    records = sweep(task, {"target": list(targets)}, seeds=seeds, n_jobs=n_jobs)
    for r in records:
        r["top1"] = r["top"][:, 0]
        r["pred_measured"] = spiked_outlier(cs * r["spike"], 1.0)
        g = targets[r["target"]]
        r["spike_dev"] = r["spike"] / spike_strength(1.0, mu1, g.coefficients[1], g.second_moment, 1.0) - 1
        r["measured_gap"] = r["top1"] / r["pred_measured"] - 1
    summary = {e["target"]: e for e in summarise(
        records, ["target"],
        ["top1", "right_v_overlap", "pred_measured", "residual", "measured_gap", "spike_dev"])}
    eta_c, gap, spike_dev, gap_sem, spike_dev_sem = {}, {}, {}, {}, {}
    for name, g in targets.items():
        e = summary[name]
        eta_c[name] = critical_step(mu1, g.coefficients[1], g.second_moment, 1.0, 1.0)
        above = cs > window * eta_c[name]
        limit = spiked_outlier(np.array([spike_strength(c, mu1, g.coefficients[1], g.second_moment, 1.0)
                                         for c in cs[above]]), 1.0)
        to_limit = np.abs(e["top1"][above] / limit - 1)
        to_measured = np.abs(e["top1"][above] / e["pred_measured"][above] - 1)
        i, j = int(np.argmax(to_limit)), int(np.argmax(to_measured))
        gap[name] = (float(to_limit[i]), float(to_measured[j]))
        gap_sem[name] = (float(e["top1_sem"][above][i] / limit[i]),
                         float(e["measured_gap_sem"][above][j]))
        spike_dev[name] = float(np.mean([r["spike_dev"] for r in records if r["target"] == name]))
        spike_dev_sem[name] = float(e["spike_dev_sem"])
    return BBPData(N=N, cs=cs, n_seeds=len(seeds), window=window, mu1=mu1, targets=targets,
                   summary=summary, eta_c=eta_c, gap=gap, spike_dev=spike_dev, gap_sem=gap_sem,
                   spike_dev_sem=spike_dev_sem)


def plot_bbp(data: BBPData):
    r"""figure ``fig-bbp``: top singular value of :math:`W_1` (left) and
    :math:`|\langle\tilde w_1,\hat v\rangle|` (right) against :math:`\eta_1`, with the limits of
    ``claim-bbp``, the critical steps and the bulk edge. Returns a ``Figure``."""
    from matplotlib.lines import Line2D

    from ..analysis.bbp import spiked_outlier, spiked_overlaps
    from ..analysis.spectra import bulk_edge
    from ..analysis.theory import spike_strength
    from .figures import COLORS, errorbars

    _check_data(data, BBPData)
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 3.7))
    cs = data.cs
    grid = np.linspace(cs[0], cs[-1], 400)
    for name, g in data.targets.items():
        color = TARGET_COLORS.get(name, "0.3")
        e = data.summary[name]
        theta = np.array([spike_strength(c, data.mu1, g.coefficients[1], g.second_moment, 1.0)
                          for c in grid])
        errorbars(axes[0], cs, e["top1"], e["top1_sem"], color=color, ls="none")
        axes[0].plot(grid, spiked_outlier(theta, 1.0), color=color, lw=1.2)
        axes[0].plot(cs, e["pred_measured"], color=color, ls=":", lw=1.2)
        errorbars(axes[1], cs, e["right_v_overlap"], e["right_v_overlap_sem"], color=color, ls="none")
        axes[1].plot(grid, spiked_overlaps(theta, 1.0)[1], color=color, lw=1.2)
        for ax in axes:
            ax.axvline(data.eta_c[name], color=color, ls="--", lw=0.8)
    axes[0].axhline(bulk_edge(1.0), color=COLORS["chance"], ls=":", lw=1.2)
    axes[0].set_ylabel(r"top singular value of $W_1$")
    axes[1].set_ylabel(r"$|\langle \tilde w_1, v/\|v\|\rangle|$")
    for ax in axes:
        ax.set_xlabel(r"step size $\eta_1$ ($\alpha_1 = 0$)")
    ink = COLORS["theory"]
    handles = [Line2D([], [], color=TARGET_COLORS.get(k, "0.3"), lw=4, label=TARGET_LABELS.get(k, k))
               for k in data.targets] + [
        Line2D([], [], color=ink, marker="o", ls="none", ms=4, label="simulation"),
        Line2D([], [], color=ink, lw=1.2, label=r"theory, limiting $\theta$"),
        Line2D([], [], color=ink, ls=":", lw=1.2, label=r"theory, measured $\|a\|\|v\|$ (left)"),
        Line2D([], [], color=ink, ls="--", lw=0.8, label=r"critical $\eta_c$"),
        Line2D([], [], color=COLORS["chance"], ls=":", lw=1.2, label="bulk edge (left)")]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=9)
    return fig


def bbp_numbers(data: BBPData) -> dict:
    """Named values of :func:`bbp_data` (targets ``He_1`` and ``He_3``) for the prose."""
    _check_data(data, BBPData)
    out = dict(bbp_N=data.N, bbp_seeds=data.n_seeds, bbp_window=data.window)
    for name in data.targets:
        out[f"eta_c_{name}"] = data.eta_c[name]
    short = {"He_1": "he1", "He_3": "he3"}
    for name, s in short.items():
        if name in data.targets:
            out[f"bbp_gap_{s}"] = data.gap[name][0]
    if "He_1" in data.targets and "He_3" in data.targets:
        out["eta_c_ratio"] = data.eta_c["He_3"] / data.eta_c["He_1"]
    return out


def bbp_table(data: BBPData) -> tuple[list, list]:
    r"""Header and rows per target: :math:`\eta_c`, the largest relative gap of :math:`s_1` to
    :math:`s_\star` above ``window`` :math:`\eta_c` (limiting and measured :math:`\theta`), the
    mean deviation of :math:`\|a\|\|v\|` from its limit, and the relative remainder."""
    _check_data(data, BBPData)
    header = ["target", r"$\eta_c$", r"gap to $s_\star$, limiting $\theta$",
              r"gap, measured $\lVert a\rVert\lVert v\rVert$",
              r"$\lVert a\rVert\lVert v\rVert$ vs. limit",
              r"$\lVert G-\mu_1av^\top\rVert_{op}/\lVert G\rVert_{op}$"]
    rows = [[TARGET_LABELS.get(k, k), f"{data.eta_c[k]:.3f}", f"{data.gap[k][0]:.1%}",
             f"{data.gap[k][1]:.1%}", f"{data.spike_dev[k]:+.1%}",
             f"{float(data.summary[k]['residual']):.3f}"] for k in data.targets]
    return header, rows


def bbp_table_spread(data: BBPData) -> str:
    r"""The spread over seeds of :func:`bbp_table`, for its caption: "means over 3 seeds, with
    standard errors at most 0.3% for the percentages and 0.004 for the remainder", the first
    the largest of ``gap_sem`` and ``spike_dev_sem`` over the targets, the second the largest
    standard error of the relative remainder, each with one significant digit (two when it
    starts with 1); :math:`\eta_c` is a formula, without spread."""
    _check_data(data, BBPData)
    percent = max(max(max(data.gap_sem[k]), data.spike_dev_sem[k]) for k in data.targets)
    remainder = max(float(data.summary[k]["residual_sem"]) for k in data.targets)
    return (f"means over {data.n_seeds} seeds, with standard errors at most {sig(100 * percent)}% "
            f"for the percentages and {sig(remainder)} for the remainder")


# --- the learned direction (fig-overlap) -------------------------------------------------

@dataclass
class OverlapData:
    """Overlaps of the one-step direction with :math:`\\beta^*` (see :func:`overlap_data`)."""

    d: int
    c: float
    alpha: float
    psis: np.ndarray          # (P,)
    n_seeds: int
    targets: dict             # name -> Link
    stats: dict               # name -> arrays over psi: v, v_sem, w, w_sem, wv, pred, finite, z; m22
    dim_psi: float
    dim_ds: np.ndarray        # (D,)
    dim_seeds: int
    dim_keys: list
    dim_stats: dict           # name -> arrays over d: v, v_sem, finite; slope (slope, se)


def _rms(mean_square, sem):
    # Root mean square over seeds, with the delta-method standard error.
    root = np.sqrt(mean_square)
    return root, sem / (2 * np.maximum(root, 1e-12))


def _overlap_task(rng, psi, target, d, activation, targets, c, alpha, dtype):
    n = int(round(psi * d))
    out = first_step_diagnostics(rng, N=d, n=n, d=d, activation=activation, target=targets[target],
                                 steps=[(c, alpha)], dtype=dtype)
    return {"v2": out["v_overlap"] ** 2, "w2": out["right_overlap"][0] ** 2,
            "wv": out["right_v_overlap"][0]}


def _dimension_task(rng, d, psi, links, dtype):
    o = learned_direction_overlaps(int(psi * d), d, links, rng, dtype=dtype)
    return {"v2": o ** 2}


def overlap_data(d: int, c: float, alpha: float, psis, seeds, targets: dict, activation: Activation,
                 dim_psi: float, dim_ds, dim_seeds, dim_keys, n_jobs: int = 1,
                 dtype=np.float32) -> OverlapData:
    r"""Overlap with :math:`\beta^*` of :math:`\hat v = v/\|v\|` and of the top right singular vector
    of :math:`W_1` (:math:`N = d`, :math:`n = \psi d`, :math:`\eta_1 = cN^\alpha`) against
    :math:`\psi`, and of :math:`\hat v` alone (:func:`learned_direction_overlaps`) at
    ``dim_psi`` against ``d``.

    Overlaps are root mean squares over seeds (standard errors by the delta method). The
    predictions are :math:`|c_1|/\sqrt{c_1^2+\mathbb E[y^2]/\psi}` (``pred``,
    equation ``eq-one-step-overlap``) and :func:`twostep.finite_size_overlap` (``finite``), with
    :math:`\mathbb E[y^2z^2]` from :func:`cross_moment`; ``z`` is
    :math:`|\hat v - \text{finite}|/\text{sem}`.

    Returns
    -------
    OverlapData
        ``stats[name]``: arrays of shape ``(len(psis),)``; ``dim_stats[name]``: arrays of shape
        ``(len(dim_ds),)`` and ``slope``, the log-log slope against :math:`d`.
    """
    from functools import partial

    from ..analysis.sweep import loglog_slope, summarise, sweep
    from ..analysis.theory import finite_size_overlap, one_step_overlap

    d = check_int(d, "d", 3)
    c = check_real(c, "c", low=0.0, low_open=True)
    alpha = check_real(alpha, "alpha", low=0.0, high=0.5, high_open=True)
    psis = sorted(check_real(p, f"psis[{i}]", low=0.0, low_open=True) for i, p in enumerate(psis))
    if not psis:
        raise ValueError("psis must be a non-empty sequence of positive ratios n/d")
    targets = _check_links(targets, "targets")
    check_activation(activation)
    dim_psi = check_real(dim_psi, "dim_psi", low=0.0, low_open=True)
    dim_ds = _check_sizes(dim_ds, "dim_ds", 2)
    dim_keys = list(dim_keys)
    for k in dim_keys:
        if k not in targets:
            raise ValueError(f"dim_keys must be keys of targets {sorted(targets)}, got {k!r}")
    seeds, dim_seeds = list(seeds), list(dim_seeds)
    if len(seeds) < 2 or len(dim_seeds) < 2:
        raise ValueError("seeds and dim_seeds need at least two seeds each")
    n_jobs = check_int(n_jobs, "n_jobs")
    dt = check_dtype(dtype)

    task = partial(_overlap_task, d=d, activation=activation, targets=targets, c=c, alpha=alpha,
                   dtype=dt)
    ov = summarise(sweep(task, {"psi": psis, "target": list(targets)}, seeds=seeds, n_jobs=n_jobs),
                   ["target", "psi"], ["v2", "w2", "wv"])
    links = [targets[k] for k in dim_keys]
    dim = summarise(sweep(partial(_dimension_task, psi=dim_psi, links=links, dtype=dt),
                          {"d": dim_ds}, seeds=dim_seeds, n_jobs=n_jobs), ["d"], ["v2"])
    stats = {}
    for key, g in targets.items():
        rows = sorted([e for e in ov if e["target"] == key], key=lambda e: e["psi"])
        p = np.array([e["psi"] for e in rows])
        v, v_sem = (np.array(x) for x in zip(*(_rms(e["v2"], e["v2_sem"]) for e in rows)))
        w, w_sem = (np.array(x) for x in zip(*(_rms(e["w2"], e["w2_sem"]) for e in rows)))
        c1, m2, m22 = g.coefficients[1], g.second_moment, cross_moment(g)
        finite = np.array([finite_size_overlap(c1, m2, m22, int(round(q * d)), d) for q in p])
        stats[key] = dict(v=v, v_sem=v_sem, w=w, w_sem=w_sem, m22=m22,
                          wv=np.array([e["wv"] for e in rows]),
                          pred=np.array([one_step_overlap(c1, m2, q) for q in p]),
                          finite=finite, z=np.abs(v - finite) / v_sem)
    ds = np.array(dim_ds)
    dim_stats = {}
    for j, key in enumerate(dim_keys):
        g = targets[key]
        v, v_sem = (np.array(x) for x in zip(*(_rms(e["v2"][j], e["v2_sem"][j]) for e in dim)))
        m22 = cross_moment(g)
        dim_stats[key] = dict(v=v, v_sem=v_sem, slope=loglog_slope(ds, v),
                              finite=np.array([finite_size_overlap(g.coefficients[1], g.second_moment,
                                                                   m22, int(dim_psi * q), int(q))
                                               for q in ds]))
    return OverlapData(d=d, c=c, alpha=alpha, psis=np.array(psis), n_seeds=len(seeds),
                       targets=targets, stats=stats, dim_psi=dim_psi, dim_ds=ds,
                       dim_seeds=len(dim_seeds), dim_keys=dim_keys, dim_stats=dim_stats)


def plot_overlap(data: OverlapData):
    r"""figure ``fig-overlap``: overlaps against :math:`\psi` (left; limits solid, finite-size
    dashed, chance :math:`1/\sqrt d` dotted) and against :math:`d` (right, log-log).
    Returns a ``matplotlib.figure.Figure``."""
    from matplotlib.lines import Line2D

    from ..analysis.alignment import chance_overlap
    from ..analysis.theory import finite_size_overlap, one_step_overlap
    from .figures import COLORS, chance_line, errorbars

    _check_data(data, OverlapData)
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 4.4))
    keys = list(data.targets)
    palette = {k: TARGET_COLORS.get(k, "0.3") for k in keys}
    psi_grid = np.geomspace(data.psis[0], data.psis[-1], 200)
    for key, g in data.targets.items():
        st, color = data.stats[key], palette[key]
        errorbars(axes[0], data.psis, st["v"], st["v_sem"], color=color, ls="none")
        errorbars(axes[0], data.psis, st["w"], st["w_sem"], color=color, mfc="none", ls="none", marker="D")
        c1, m2 = g.coefficients[1], g.second_moment
        if c1 != 0:
            axes[0].plot(psi_grid, [one_step_overlap(c1, m2, p) for p in psi_grid], color=color, lw=1.2)
        else:
            axes[0].plot(psi_grid, [finite_size_overlap(c1, m2, st["m22"], int(round(p * data.d)), data.d)
                                    for p in psi_grid], color=color, lw=1, ls="--")
    axes[0].axhline(0.0, color=COLORS["theory"], lw=1.2)
    chance_line(axes[0], chance_overlap(data.d))
    axes[0].set_xscale("log")
    _log_ticks(axes[0].xaxis, list(data.psis))
    axes[0].set_xlabel(r"$\psi = n/d$")
    axes[0].set_ylabel(r"overlap with $\beta^\star$ (r.m.s. over seeds)")
    axes[0].set_title(rf"$N = d = {data.d}$")
    ds = data.dim_ds
    for key in data.dim_keys:
        st = data.dim_stats[key]
        errorbars(axes[1], ds, st["v"], st["v_sem"], color=palette[key], ls="none")
        axes[1].plot(ds, st["finite"], color=palette[key], lw=1, ls="--")
    axes[1].plot(ds, 1 / np.sqrt(ds), color=COLORS["chance"], ls=":", lw=1.2)
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    _log_ticks(axes[1].xaxis, list(ds))
    _log_ticks(axes[1].yaxis, [0.02, 0.05, 0.1, 0.2, 0.5, 1])
    axes[1].set_xlabel("input dimension $d$")
    axes[1].set_ylabel(r"overlap of $v/\|v\|$ with $\beta^\star$ (r.m.s.)")
    axes[1].set_title(rf"$\psi = {data.dim_psi:g}$")
    ink = COLORS["theory"]
    swatch = [Line2D([], [], color=palette[k], lw=4, label=TARGET_LABELS.get(k, k)) for k in keys]
    styles = [Line2D([], [], color=ink, marker="o", ms=4, ls="none", label=r"$\hat v = v/\|v\|$"),
              Line2D([], [], color=ink, marker="D", ms=4, mfc="none", ls="none",
                     label=r"top right sing. vector of $W_1$"),
              Line2D([], [], color=COLORS["chance"], ls=":", lw=1.2, label=r"chance $1/\sqrt{d}$"),
              Line2D([], [], color=ink, lw=1.2, label=r"limit $d\to\infty$ (black: $c_1 = 0$)"),
              Line2D([], [], color=ink, lw=1, ls="--", label="finite-size prediction")]
    blank = Line2D([], [], ls="none", label=" ")
    handles = swatch + [blank] * max(0, 6 - len(swatch)) + styles + [blank]
    if len(handles) == 12:   # targets, then styles: four rows of three
        handles = [handles[3 * r + c] for c in range(3) for r in range(4)]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=9)
    return fig


def _information_groups(data: OverlapData):
    first = [k for k, g in data.targets.items() if g.information_exponent == 1]
    return first, [k for k in data.targets if k not in first]


def overlap_numbers(data: OverlapData) -> dict:
    """Named values of :func:`overlap_data` for the prose: the largest deviations for the
    targets of information exponent one, the largest overlaps and z-scores for the others,
    :math:`\\mathbb E[y^2z^2]` and the slopes against ``d`` (targets ``He_2``, ``He_3``, ``odd``)."""
    from ..analysis.alignment import chance_overlap

    _check_data(data, OverlapData)
    ie1, high = _information_groups(data)
    st = data.stats
    out = dict(ov_alpha=data.alpha, ov_c=data.c, ov_seeds=data.n_seeds,
               ov_chance=chance_overlap(data.d), dim_seeds=data.dim_seeds)
    if ie1:
        out.update(dev_ie1=max(np.max(np.abs(st[k]["v"] - st[k]["pred"])) for k in ie1),
                   wv_min_ie1=min(np.min(st[k]["wv"]) for k in ie1))
    if high:
        out["high_max"] = max(np.max(st[k]["v"]) for k in high)
    for key, short in {"He_2": "he2", "He_3": "he3", "odd": "odd"}.items():
        if key in st:
            out[f"m22_{short}_root"] = np.sqrt(st[key]["m22"])
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in out.items()}


def overlap_table(data: OverlapData) -> tuple[list, list]:
    r"""Header and rows per target: :math:`c_1`, :math:`\mathbb E[y^2z^2]`, the largest overlap of
    :math:`\hat v` and of :math:`W_1`'s singular vector over :math:`\psi`, the largest deviation of
    :math:`\hat v` from the limit (targets with :math:`c_1\ne0`) or from the finite-size prediction
    in standard errors (the others), and the slope against :math:`d`."""
    _check_data(data, OverlapData)
    ie1, _ = _information_groups(data)
    # short headers (the caption says what they are): the table fits the text column
    header = ["target", "$c_1$", r"$\mathbb E[y^2z^2]$", r"$\hat v$", r"$\tilde w_1$",
              "deviation", "slope in $d$"]
    rows = []
    for key, g in data.targets.items():
        st = data.stats[key]
        c1 = float(g.coefficients[1])
        dev = (f"{np.max(np.abs(st['v'] - st['pred'])):.3f}" if key in ie1
               else f"{np.max(st['z']):.1f} s.e.")
        slope = data.dim_stats.get(key, {}).get("slope")
        rows.append([TARGET_LABELS.get(key, key), "0" if abs(c1) < 1e-12 else f"{c1:.3f}",
                     f"{st['m22']:.3g}", f"{np.max(st['v']):.3f}", f"{np.max(st['w']):.3f}", dev,
                     "–" if slope is None else f"{_fixed(slope[0], 2)} ± {slope[1]:.2f}"])
    return header, rows


# --- the one-step literature, reproduced -----------------------------------------------
#
# Cui, Pesce, Dandi, Krzakala, Lu, Zdeborova and Loureiro (2024) published the code of their
# simulations and of their theory: the SPOC group's repository OneStepGD_asymptotics, read
# at the commits below. What the chapter needs from it is data: the settings, the stored
# outputs, and the three expressions of gamma, r and c, transcribed (not copied) into
# :func:`cui_cell7_parameters`. The simulations use twostep's own functions only.

#: The repository, notebooks and commits the numbers below are quoted from.
CUI_SOURCE = {"repository": "SPOC-group/OneStepGD_asymptotics",
              "simulations": ("Simulations.ipynb", "6dda8e9fbf291f31fcb52a89a58f664cabb9fdb1"),
              "theory": ("theory.ipynb", "3494d103b5f35b47ea1740627ab8a6e8090b74fc")}

#: First setting (``Simulations.ipynb``, cells 3 and 5): tanh teacher and tanh student,
#: ``d = p = 2000``, first batch ``n0 = alpha0 d``, step ``eta~``, ridge penalty ``lam``,
#: ``n_test`` test samples, one first layer and 3 seeds of readout data per ``alpha``.
CUI_SETTING_1 = {"teacher": "tanh", "alpha0": 0.5, "eta_tilde": 1.0, "lam": 0.01, "d": 2000,
                 "n_test": 5000}

#: Test errors printed by ``Simulations.ipynb``, cell 12 (execution count 21), for the
#: ``alphas = np.linspace(.2, 3, 7)`` of cell 5, three seeds each (``alpha`` as printed).
CUI_SIMULATED = {
    0.2: (0.2990775949993957, 0.2898524418194445, 0.29418381263621085),
    0.6666666666666666: (0.3218365759752591, 0.31863128816064645, 0.3151598647331156),
    1.1333333333333333: (0.26713115046865477, 0.2885155886165104, 0.27541431235674196),
    1.5999999999999999: (0.19540339213297506, 0.21767984115339958, 0.20400605095996252),
    2.0666666666666664: (0.16899557812018212, 0.17510121804693074, 0.1724069785141186),
    2.533333333333333: (0.15161510868072295, 0.1566964898890306, 0.15631225980360028),
    3.0: (0.1426574683324664, 0.14221553063145795, 0.1485439373561868),
}

#: Second setting (``theory.ipynb``, cells 3, 7 and 20): sin teacher, tanh student.
CUI_SETTING_2 = {"teacher": "sin", "alpha0": 20.0, "eta_tilde": 3.0, "lam": 0.1, "d": 2000,
                 "n_test": 5000}

#: Asymptotic test errors of the Gaussian-equivalence theory printed by ``theory.ipynb``,
#: cell 21 (execution count 32), at ``alphas = np.linspace(.2, 3, 5)`` (as printed).
CUI_THEORY = {0.2: 0.048595388918455905, 0.8999999999999999: 0.04311805329862696,
              1.5999999999999999: 0.038072437563481894, 2.3: 0.03511150660016416,
              3.0: 0.033340014535464826}

#: Their links and activations, as twostep links (the student is :class:`twostep.Tanh`).
PEER_LINKS = {"tanh": np.tanh, "sin": np.sin}

#: Degree of the Hermite series of tanh behind ``Var sigma'`` (its tail is below 1e-13).
TANH_SERIES_DEGREE = 140


def peer_link(name: str) -> Link:
    """The teacher link ``"tanh"`` or ``"sin"`` of the peer's settings, as a :class:`Link`."""
    from .._validation import check_choice

    check_choice(name, "name", PEER_LINKS)
    return Link(PEER_LINKS[name], name)


def cui_parameters(link: Link, activation: Activation, alpha0: float, eta_tilde: float,
                   degree: int = TANH_SERIES_DEGREE) -> dict:
    r"""The spiked-random-features parameters of Cui et al. from the book's one-step formulas.

    In the peer's normalisation (rows of :math:`W_0` of unit norm, :math:`a_i = 1/\sqrt N`,
    :math:`\eta = \tilde\eta\sqrt N`) the product that moves every row is :math:`\eta a_i =
    \tilde\eta`, so the book's formulas, with :math:`\psi = \alpha_0`, give

    * ``gamma`` :math:`= |c_1|/\sqrt{c_1^2 + \mathbb E[y^2]/\alpha_0}`: ``one_step_overlap``,
      the overlap of the spike's right vector :math:`\hat v` with :math:`\beta^\star`;
    * ``r`` :math:`= \tilde\eta|\mu_1|\sqrt{c_1^2 + \mathbb E[y^2]/\alpha_0}`: ``spike_strength``
      at :math:`\eta = \tilde\eta`, the shift of every row along :math:`\hat v` (the book's
      singular value :math:`\theta` of the spike :math:`\eta\mu_1 av^\top` is :math:`\sqrt N\,r`);
    * ``c`` :math:`= 1 + \tilde\eta^2 R^2`, :math:`R^2` = ``fluctuation_variance_limit``
      :math:`= \mathbb E[y^2]\,\mathrm{Var}\,\sigma'/\alpha_0`: the squared norm of a row
      orthogonally to :math:`\hat v`.

    ``degree`` is the length of the Hermite series of ``activation`` behind
    :math:`\mathrm{Var}\,\sigma' = \sum_{m\ge1}\mu_{m+1}^2/m!`.
    """
    from ..analysis.theory import fluctuation_variance_limit, one_step_overlap, spike_strength

    _check_link(link, "link")
    check_activation(activation)
    alpha0 = check_real(alpha0, "alpha0", low=0.0, low_open=True)
    eta_tilde = check_real(eta_tilde, "eta_tilde", low=0.0)
    degree = check_int(degree, "degree", 2)
    c1, m2 = float(link.coefficients[1]), float(link.second_moment)
    mu = activation.hermite_coefficients(degree)
    return {"gamma": one_step_overlap(c1, m2, alpha0),
            "r": spike_strength(eta_tilde, mu[1], c1, m2, alpha0),
            "c": 1.0 + eta_tilde ** 2 * fluctuation_variance_limit(mu, m2, alpha0)}


def cui_cell7_parameters(teacher, student, student_derivative, alpha0: float,
                         eta_tilde: float) -> dict:
    r"""The peer's own expressions of :math:`\gamma`, :math:`r` and :math:`c`, as
    ``theory.ipynb`` cell 7 writes them, evaluated with ``scipy.integrate.quad``.

    With :math:`\tilde\mu_1 = \mathbb E[z\sigma_\star(z)]`, :math:`\tilde\mu_2 = \mathbb
    E[\sigma_\star(z)^2]`, :math:`\mu_1 = \mathbb E[z\sigma(z)]` and :math:`\check h =
    \mathbb E[(\sigma'(z)-\mu_1)^2]`:
    :math:`\gamma = \tilde\mu_1/\sqrt{\tilde\mu_2/\alpha_0+\tilde\mu_1^2}`,
    :math:`r = \tilde\eta\sqrt{\tilde\mu_2/\alpha_0+\tilde\mu_1^2}\,\mu_1`, and the square
    :math:`c = c_W^2 = 1 + \tilde\eta^2\tilde\mu_2\check h\,\mu_1^2/\alpha_0` of their bulk
    scale ``cW_th``: the cell carries a factor :math:`\mu_1^2` that the book's
    :math:`c` does not (:func:`cui_parameters`). ``teacher``, ``student`` and
    ``student_derivative`` are vectorised callables.
    """
    from scipy.integrate import quad

    for name, f in (("teacher", teacher), ("student", student),
                    ("student_derivative", student_derivative)):
        if not callable(f):
            raise TypeError(f"{name} must be callable, got {type(f).__name__}")
    alpha0 = check_real(alpha0, "alpha0", low=0.0, low_open=True)
    eta_tilde = check_real(eta_tilde, "eta_tilde", low=0.0)

    def mean(f):
        return quad(lambda z: f(z) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi), -np.inf, np.inf,
                    epsabs=1e-14, epsrel=1e-13, limit=200)[0]

    mu1 = mean(lambda z: z * student(z))
    mu1t, mu2t = mean(lambda z: z * teacher(z)), mean(lambda z: teacher(z) ** 2)
    check = mean(lambda z: (student_derivative(z) - mu1) ** 2)
    norm = np.sqrt(mu2t / alpha0 + mu1t ** 2)
    return {"gamma": float(mu1t / norm), "r": float(eta_tilde * norm * mu1),
            "c": float(1 + eta_tilde ** 2 / alpha0 * mu2t * check * mu1 ** 2),
            "mu1": float(mu1), "check_h": float(check)}


def peer_first_layer(rng: np.random.Generator, d: int, link: Link, activation: Activation,
                     alpha0: float, eta_tilde: float, dtype=np.float32):
    r"""Cui et al.'s first step, with twostep's functions: width :math:`p = N = d`.

    :math:`W_0` has rows of unit norm (``initialise(rows="unit")``) and the second layer is
    constant. Their network :math:`a^\top\sigma(Wx)/\sqrt p` with :math:`a_i = 1/\sqrt p`
    is the book's network with second layer :math:`a_i/\sqrt p = 1/p`, and their step
    ``W0 + eta*sqrt(p)*G.T``, :math:`\eta = \tilde\eta\sqrt p`, is
    ``one_step(..., eta=eta_tilde * p, loss="squared")`` on it (the product
    :math:`\eta a_i = \tilde\eta` is what moves the rows), on a first batch of
    :math:`n_0 = \alpha_0 d` samples. Draws the teacher's direction, :math:`W_0`, then the
    batch from ``rng``.

    Returns ``(W1, teacher, measured)`` with ``measured`` the dict of the spike's
    overlap ``gamma`` :math:`= |\langle\hat v,\beta^\star\rangle|`, the mean row shift
    ``r`` along :math:`\hat v` and the mean squared row norm ``c`` orthogonally to
    :math:`\hat v`, for :math:`v = X^\top(y - f_0)/n_0` (the residual's direction).
    """
    from ..model.network import residuals
    from ..model.steps import one_step
    from ..model.targets import Teacher

    check_rng(rng)
    d = check_int(d, "d", 2)
    _check_link(link, "link")
    check_activation(activation)
    alpha0 = check_real(alpha0, "alpha0", low=0.0, low_open=True)
    eta_tilde = check_real(eta_tilde, "eta_tilde", low=0.0)
    dt = check_dtype(dtype)
    p = d
    teacher = Teacher(link, d, rng)
    W0, a = initialise(p, d, rng, dt, rows="unit", second_layer="constant")
    a = a / dt.type(np.sqrt(p))
    n0 = max(1, int(round(alpha0 * d)))
    X, y = teacher.sample(n0, rng, dt)
    W1 = one_step(W0, a, X, y, activation, eta=eta_tilde * p, loss="squared")
    v = X.T @ residuals(W0, a, X, y, activation) / n0
    v_hat = (v / np.linalg.norm(v)).astype(np.float64)
    shift = (W1 - W0).astype(np.float64) @ v_hat
    W1v = W1.astype(np.float64) @ v_hat
    rows = np.sum(W1.astype(np.float64) ** 2, axis=1) - W1v ** 2
    measured = {"gamma": float(abs(teacher.directions[0] @ v_hat)), "r": float(np.mean(shift)),
                "c": float(np.mean(rows))}
    return W1, teacher, measured


def peer_test_error(W1, teacher, activation: Activation, n: int, lam: float, X_test, y_test,
                    rng: np.random.Generator) -> float:
    r"""Test error of the peer's readout on the frozen first layer ``W1``.

    Their ridge :math:`\hat w = (A^\top A+\lambda I)^{-1}A^\top y` on :math:`A = \sigma(XW_1^\top)/\sqrt p`
    is twostep's :func:`twostep.analysis.readout.ridge` on :math:`F = \sigma(XW_1^\top)` with
    penalty :math:`\lambda p/n`; it is fitted on ``n`` fresh samples from ``rng`` and scored
    by the mean squared error on ``(X_test, y_test)``.
    """
    from ..analysis.readout import features, ridge

    n = check_int(n, "n", 1)
    lam = check_real(lam, "lam", low=0.0, low_open=True)
    check_rng(rng)
    p = W1.shape[0]
    X, y = teacher.sample(n, rng, W1.dtype)
    F = features(W1, X, activation).astype(np.float64)
    coef = ridge(F, y.astype(np.float64), lam * p / n, solver="gram")
    Ft = features(W1, X_test, activation).astype(np.float64)
    r = y_test.astype(np.float64) - Ft @ coef
    return float(r @ r / r.size)


def _peer_task(rng, d, link, activation, alpha0, eta_tilde, lam, alphas, n_test, dtype):
    W1, teacher, measured = peer_first_layer(rng, d, link, activation, alpha0, eta_tilde, dtype)
    X_test, y_test = teacher.sample(n_test, rng, W1.dtype)
    errors = [peer_test_error(W1, teacher, activation, max(1, int(round(al * d))), lam, X_test,
                              y_test, rng) for al in alphas]
    return {"errors": np.array(errors), **measured}


@dataclass
class PeerData:
    """A setting of Cui et al. simulated with twostep (see :func:`peer_data`)."""

    setting: dict                     # teacher, alpha0, eta_tilde, lam, n_test, d (the peer's)
    d: int                            # the size simulated here, d = p
    alphas: np.ndarray                # (A,) readout sample ratios n/d
    errors: np.ndarray                # (S, A) test errors, one row per seed
    measured: dict                    # gamma, r, c: (S,) per seed
    formulas: dict                    # gamma, r, c from cui_parameters
    cell7: dict                       # the peer's expressions (cui_cell7_parameters)
    peer_alphas: np.ndarray           # (P,) the peer's alphas
    peer_values: np.ndarray           # (P, k) the peer's stored values (k seeds, or 1: theory)
    peer_kind: str                    # "simulation" or "theory"

    @property
    def mean(self) -> np.ndarray:
        return self.errors.mean(axis=0)

    @property
    def sd(self) -> np.ndarray:
        """Standard deviation over seeds (``ddof = 1``)."""
        return self.errors.std(axis=0, ddof=1)


def peer_data(setting: dict, d: int, alphas, seeds, peer: dict, peer_kind: str,
              n_jobs: int = 1, dtype=np.float32) -> PeerData:
    r"""Cui et al.'s experiment at their ``setting``, with twostep, at size ``d = p``.

    Every seed draws a teacher direction, a first layer (:func:`peer_first_layer`), one
    test set of ``setting["n_test"]`` samples, and a fresh training set of
    :math:`\alpha d` samples for every ``alpha`` (:func:`peer_test_error`). Their stored
    numbers ``peer`` (``alpha -> value`` or ``alpha -> (seed values)``) and ``peer_kind``
    (``"simulation"`` or ``"theory"``) are kept beside for the comparison.
    """
    from functools import partial

    from ..analysis.sweep import sweep
    from ..model.activations import Tanh

    if not isinstance(setting, dict) or not {"teacher", "alpha0", "eta_tilde", "lam",
                                             "n_test"} <= set(setting):
        raise TypeError("setting must be a dict with teacher, alpha0, eta_tilde, lam, n_test")
    d = check_int(d, "d", 2)
    alphas = [check_real(a, f"alphas[{i}]", low=0.0, low_open=True) for i, a in enumerate(alphas)]
    if not alphas:
        raise ValueError("alphas must be a non-empty sequence of positive ratios n/d")
    seeds = list(seeds)
    if len(seeds) < 2:
        raise ValueError("seeds needs at least two seeds (a spread over seeds)")
    if not isinstance(peer, dict) or not peer:
        raise TypeError("peer must be a non-empty dict alpha -> stored value(s)")
    if peer_kind not in ("simulation", "theory"):
        raise ValueError(f"peer_kind must be 'simulation' or 'theory', got {peer_kind!r}")
    n_jobs = check_int(n_jobs, "n_jobs")
    dt = check_dtype(dtype)
    stored = np.array(sorted(peer), dtype=float)
    missing = [a for a in alphas if np.min(np.abs(stored - a)) > 1e-6]
    if missing:
        raise ValueError(f"alphas must be ratios the peer stored a value at "
                         f"({', '.join(f'{a:.4g}' for a in stored)}), got {missing[0]:g}")
    link, act = peer_link(setting["teacher"]), Tanh()
    task = partial(_peer_task, d=d, link=link, activation=act, alpha0=setting["alpha0"],
                   eta_tilde=setting["eta_tilde"], lam=setting["lam"], alphas=alphas,
                   n_test=check_int(setting["n_test"], "setting['n_test']"), dtype=dt)
    records = sweep(task, None, seeds=seeds, n_jobs=n_jobs)
    errors = np.array([r["errors"] for r in records])
    measured = {k: np.array([r[k] for r in records]) for k in ("gamma", "r", "c")}
    formulas = cui_parameters(link, act, setting["alpha0"], setting["eta_tilde"])
    cell7 = cui_cell7_parameters(link.func, np.tanh, lambda z: 1 - np.tanh(z) ** 2,
                                 setting["alpha0"], setting["eta_tilde"])
    peer_alphas = np.array(sorted(peer))
    peer_values = np.array([np.atleast_1d(peer[a]) for a in sorted(peer)], dtype=float)
    return PeerData(setting=dict(setting), d=d, alphas=np.array(alphas), errors=errors,
                    measured=measured, formulas=formulas, cell7=cell7, peer_alphas=peer_alphas,
                    peer_values=peer_values, peer_kind=peer_kind)


def _peer_at(data: PeerData, alpha: float):
    # the peer's stored value(s) at the alpha nearest to `alpha` (theirs are linspace floats)
    i = int(np.argmin(np.abs(data.peer_alphas - alpha)))
    if abs(data.peer_alphas[i] - alpha) > 1e-6:
        raise ValueError(f"the peer stored no value at alpha = {alpha:g}")
    return data.peer_values[i]


def peer_comparison(data: PeerData) -> dict:
    """Per simulated ``alpha`` (arrays over ``data.alphas``): the peer's value (mean of its
    seeds for a simulation), its spread over seeds (sd, ``ddof = 1``; 0 for the theory),
    twostep's mean and sd over seeds, and the difference twostep minus peer."""
    _check_data(data, PeerData)
    vals = [_peer_at(data, a) for a in data.alphas]
    peer = np.array([v.mean() for v in vals])
    peer_sd = np.array([v.std(ddof=1) if v.size > 1 else 0.0 for v in vals])
    return {"peer": peer, "peer_sd": peer_sd, "mean": data.mean, "sd": data.sd,
            "diff": data.mean - peer}


def plot_peer(first: PeerData, second: PeerData):
    r"""figure ``fig-peer``: test error against :math:`\alpha_{\rm C} = n/d` in the peer's two settings.

    Left: their simulation (mean and sd over their 3 seeds) and twostep's (mean and sd over
    its seeds); right: their theory curve and twostep's simulation. Returns a Figure.
    """
    from .figures import COLORS

    _check_data(first, PeerData, "first")
    _check_data(second, PeerData, "second")
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(6.5, 3.3), sharey=False)
    for ax, data, title in ((axes[0], first, "tanh teacher"), (axes[1], second, "sin teacher")):
        s = data.setting
        pv = data.peer_values
        if data.peer_kind == "simulation":
            ax.errorbar(data.peer_alphas, pv.mean(axis=1), yerr=pv.std(axis=1, ddof=1),
                        color=COLORS["theory"], marker="s", ms=4, capsize=3, lw=1,
                        label=f"Cui et al. (simulation, d = {s['d']})")
        else:
            ax.plot(data.peer_alphas, pv[:, 0], color=COLORS["theory"], marker="s", ms=4, lw=1.2,
                    label="Cui et al. (theory)")
        ax.errorbar(data.alphas, data.mean, yerr=data.sd, color=COLORS["reused"], marker="o",
                    ms=4, capsize=3, ls="--", lw=1,
                    label=f"twostep (d = {data.d})")
        ax.set_xlabel(r"$\alpha_{\rm C} = n/d$ (readout samples)")
        ax.set_title(rf"{title}: $\alpha_0 = {s['alpha0']:g}$, $\tilde\eta = {s['eta_tilde']:g}$, "
                     rf"$\lambda = {s['lam']:g}$")
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2))
        ax.set_ylabel("test error (mean squared)")
    return fig


def peer_table(first: PeerData, second: PeerData) -> tuple[list, list]:
    """Header and rows of the comparison table: gamma_C, r_C, c_C (the peer's cell-7 expressions
    against twostep's formulas and its measured values) and the test errors of both
    settings (the peer's simulation and theory against twostep's simulation)."""
    _check_data(first, PeerData, "first")
    _check_data(second, PeerData, "second")
    # the sources (notebook and cell) are named in the chapter's caption, not in a column:
    # the table fits the text column
    header = ["quantity", "peer value", "twostep", "difference", "spread over seeds"]
    rows = []
    names = {"gamma": r"$\gamma_{\rm C}$", "r": r"$r_{\rm C}$", "c": r"$c_{\rm C}$"}
    for key, label in names.items():
        peer, formula = first.cell7[key], first.formulas[key]
        m = first.measured[key]
        rows.append([f"{label}, formula", f"{peer:.4f}", f"{formula:.4f}",
                     sci(formula - peer, 2) if abs(formula - peer) > 1e-12 else "< 10⁻¹²", "–"])
        rows.append([f"{label}, measured", f"{peer:.4f}", f"{m.mean():.4f}",
                     _fixed(m.mean() - peer, 4), f"{m.std(ddof=1):.4f}"])
    for data in (first, second):
        cmp = peer_comparison(data)
        for j, al in enumerate(data.alphas):
            spread = (f"{cmp['sd'][j]:.4f} (peer {cmp['peer_sd'][j]:.4f})"
                      if data.peer_kind == "simulation" else f"{cmp['sd'][j]:.4f}")
            rows.append([f"test error, {data.setting['teacher']}, $\\alpha_{{\\rm C}} = {al:g}$",
                         f"{cmp['peer'][j]:.4f}", f"{cmp['mean'][j]:.4f}",
                         _fixed(cmp["diff"][j], 4), spread])
    return header, rows


def peer_numbers(first: PeerData, second: PeerData) -> dict:
    """Named values for the prose and the landing page: sizes, seeds, the largest formula
    difference (gamma and r), the two values of c, the largest test-error differences and
    their ratio to the spread over seeds."""
    _check_data(first, PeerData, "first")
    _check_data(second, PeerData, "second")
    out = {"peer_d2": second.d}
    diffs = []
    for data in (first, second):
        diffs += [abs(data.formulas[k] - data.cell7[k]) for k in ("gamma", "r")]
    out["peer_formula_diff"] = sci(max(max(diffs), 1e-16), 1)
    out["peer_c_book1"], out["peer_c_cell1"] = first.formulas["c"], first.cell7["c"]
    out["peer_c_meas1"] = float(first.measured["c"].mean())
    out["peer_c_sd1"] = float(first.measured["c"].std(ddof=1))
    out["peer_c_book2"], out["peer_c_cell2"] = second.formulas["c"], second.cell7["c"]
    out["peer_mu1_sq"] = first.cell7["mu1"] ** 2
    c1, c2 = peer_comparison(first), peer_comparison(second)
    out["peer_sim_max_diff"] = float(np.max(np.abs(c1["diff"])))
    out["peer_theory_max_diff"] = float(np.max(np.abs(c2["diff"])))
    out["peer_theory_max_rel"] = float(np.max(np.abs(c2["diff"]) / c2["peer"]))
    # differences in standard errors of the difference of the means (seeds independent)
    S1, P1 = first.errors.shape[0], first.peer_values.shape[1]
    se1 = np.sqrt(c1["sd"] ** 2 / S1 + c1["peer_sd"] ** 2 / P1)
    out["peer_sim_max_z"] = float(np.max(np.abs(c1["diff"]) / se1))
    se2 = c2["sd"] / np.sqrt(second.errors.shape[0])
    out["peer_theory_max_z"] = float(np.max(np.abs(c2["diff"]) / se2))
    out["peer_theory_sign"] = int(np.sum(c2["diff"] < 0))
    out["peer_theory_n"] = int(c2["diff"].size)
    return out


# --- Moniri et al. (2024): the spikes of the feature matrix after one step ---------------


@dataclass
class FeatureSpikeData:
    """Spike counts of the feature matrix over a grid of step exponents (see
    :func:`feature_spike_data`)."""

    N: int
    alphas: np.ndarray                # (A,)
    n_seeds: int
    L: int | None                     # degree of the activation (None: not a polynomial)
    margin: float
    kmax: int
    counts: np.ndarray                # (S, A)
    predicted: np.ndarray             # (A,) feature_spike_count(alpha, L)
    proj_beta: np.ndarray             # (S, A, kmax)
    proj_v: np.ndarray
    proj_chance: np.ndarray
    best_beta: np.ndarray
    top: np.ndarray                   # (S, A, top)
    edge: np.ndarray                  # (S, A) bulk edge of F_1 (spikes taken out)
    edge0: np.ndarray                 # (S,) s_1(F_0)
    v_overlap: np.ndarray             # (S,)


def _feature_task(rng, N, alphas, activation, link, margin, top, kmax, dtype):
    return feature_spikes(rng, N, alphas, activation, link, margin, top, kmax, dtype)


def feature_spike_data(N: int, alphas, seeds, activation: Activation, link: Link,
                       margin: float = 0.05, top: int = 8, kmax: int = 4, n_jobs: int = 1,
                       dtype=np.float64) -> FeatureSpikeData:
    r""":func:`feature_spikes` for several seeds (one task per seed), with the count the
    book's reading of Moniri et al. (2024) predicts
    (:func:`twostep.analysis.theory.feature_spike_count`, capped at the activation's degree)."""
    from functools import partial

    from ..analysis.sweep import sweep
    from ..analysis.theory import feature_spike_count

    seeds = list(seeds)
    if len(seeds) < 2:
        raise ValueError("seeds needs at least two seeds")
    check_activation(activation)
    n_jobs = check_int(n_jobs, "n_jobs")
    task = partial(_feature_task, N=N, alphas=list(alphas), activation=activation, link=link,
                   margin=margin, top=top, kmax=kmax, dtype=dtype)
    recs = sweep(task, None, seeds=seeds, n_jobs=n_jobs)
    L = activation.degree
    alphas = np.array([float(a) for a in alphas])
    stack = {k: np.array([r[k] for r in recs]) for k in
             ("count", "proj_beta", "proj_v", "proj_chance", "best_beta", "top", "edge",
              "edge0", "v_overlap")}
    return FeatureSpikeData(N=N, alphas=alphas, n_seeds=len(seeds), L=L, margin=margin,
                            kmax=kmax, counts=stack["count"],
                            predicted=np.array([feature_spike_count(a, L) for a in alphas]),
                            proj_beta=stack["proj_beta"], proj_v=stack["proj_v"],
                            proj_chance=stack["proj_chance"], best_beta=stack["best_beta"],
                            top=stack["top"], edge=stack["edge"], edge0=stack["edge0"],
                            v_overlap=stack["v_overlap"])


def plot_feature_spikes(data: FeatureSpikeData):
    r"""figure ``fig-feature-spikes``: left, the number of spikes of :math:`\sigma(\tilde XW_1^\top)`
    against :math:`\alpha_1` (every seed, and the book's reading of Moniri et al.'s count);
    right, the top singular values divided by the bulk edge, with the counting threshold.
    Returns a Figure."""
    from ..analysis.theory import feature_spike_count
    from .figures import COLORS

    _check_data(data, FeatureSpikeData)
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(6.5, 3.2))
    grid = np.linspace(0.0, float(max(data.alphas.max(), 0.45)), 400)
    axes[0].step(grid, [feature_spike_count(a, data.L) for a in grid], where="post",
                 color=COLORS["theory"], lw=1.2, label="predicted (book's reading)")
    offsets = np.linspace(-0.004, 0.004, data.n_seeds)
    for j in range(data.n_seeds):
        axes[0].plot(data.alphas + offsets[j], data.counts[j], "o", ms=4, color=COLORS["reused"],
                     alpha=0.8, label="counted, one seed each" if j == 0 else None)
    axes[0].set_xlabel(r"step exponent $\alpha_1$ ($\eta_1 = N^{\alpha_1}$)")
    axes[0].set_ylabel(r"spikes of $\sigma(\tilde X W_1^\top)$")
    ratio = data.top[0] / data.edge[0][:, None]
    for i in range(ratio.shape[1]):
        axes[1].plot(data.alphas, ratio[:, i], "o-" if i == 0 else "o", ms=3, lw=0.8,
                     color=COLORS["reused"] if i < 4 else "0.6")
    axes[1].axhline(1 + data.margin, color=COLORS["theory"], ls=":", lw=1.2,
                    label=f"threshold (1 + {data.margin:g}) × edge")
    axes[1].set_xlabel(r"step exponent $\alpha_1$")
    axes[1].set_ylabel("singular value / bulk edge")
    axes[1].set_title("seed 0: the eight largest")
    handles = [h for ax in axes for h in ax.get_legend_handles_labels()[0]]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=9)
    return fig


def feature_spike_table(data: FeatureSpikeData, orders=(1, 2, 3)) -> tuple[list, list]:
    r"""Header and rows per :math:`\alpha_1`: predicted and counted spikes (every seed), and for
    each order :math:`k` the norm of the projection of :math:`(\tilde X\beta^\star)^{\circ k}/\|\cdot\|`
    on the spikes' left singular vectors (mean over seeds), with the same for a random
    direction (chance) in brackets."""
    _check_data(data, FeatureSpikeData)
    orders = [check_int(k, "orders[i]") for k in orders]
    if max(orders) > data.kmax:
        raise ValueError(f"orders must be <= kmax = {data.kmax}")
    header = [r"$\alpha_1$", "predicted", "counted"] + [rf"$k = {k}$" for k in orders]
    rows = []
    for i, al in enumerate(data.alphas):
        counted = ", ".join(str(int(c)) for c in data.counts[:, i])
        cells = [f"{al:g}", str(int(data.predicted[i])), counted]
        for k in orders:
            cells.append(f"{data.proj_beta[:, i, k - 1].mean():.2f} "
                         f"({data.proj_chance[:, i, k - 1].mean():.2f})")
        rows.append(cells)
    return header, rows


def feature_spike_numbers(data: FeatureSpikeData) -> dict:
    """Named values for the prose: size, seeds, margin, the exponents where the count agrees
    with the prediction on every seed, and the overlap of the learned direction."""
    _check_data(data, FeatureSpikeData)
    agree = np.all(data.counts == data.predicted[None, :], axis=0)
    out = {"fs_N": data.N, "fs_margin": data.margin,
           "fs_agree": int(np.sum(agree)), "fs_alphas": int(data.alphas.size),
           "fs_max_count": int(data.counts.max()), "fs_max_pred": int(data.predicted.max()),
           "fs_v_overlap": float(data.v_overlap.mean()),
           "fs_edge0": float(data.edge0.mean()),
           "fs_edge_max": float(data.edge.mean(axis=0).max())}
    return out


@dataclass
class CuiData:
    """Both settings of Cui et al. simulated with twostep (see :func:`cui_data`)."""

    first: PeerData                   # tanh teacher: against their simulation
    second: PeerData                  # sin teacher: against their theory


def cui_data(d1: int, seeds1, alphas1, d2: int, seeds2, alphas2, n_jobs: int = 1,
             dtype=np.float32) -> CuiData:
    r""":func:`peer_data` in Cui et al.'s two settings: :data:`CUI_SETTING_1` at size ``d1``
    against their stored simulation (:data:`CUI_SIMULATED`) and :data:`CUI_SETTING_2` at size
    ``d2`` against their stored theory (:data:`CUI_THEORY`)."""
    return CuiData(peer_data(CUI_SETTING_1, d1, alphas1, seeds1, CUI_SIMULATED, "simulation",
                             n_jobs, dtype),
                   peer_data(CUI_SETTING_2, d2, alphas2, seeds2, CUI_THEORY, "theory",
                             n_jobs, dtype))


def plot_cui(data: CuiData):
    """figure ``fig-peer``: :func:`plot_peer` of both settings."""
    _check_data(data, CuiData)
    return plot_peer(data.first, data.second)


def cui_table(data: CuiData) -> tuple[list, list]:
    """table ``tab-peer``: :func:`peer_table` of both settings."""
    _check_data(data, CuiData)
    return peer_table(data.first, data.second)


def cui_numbers(data: CuiData) -> dict:
    """:func:`peer_numbers` of both settings."""
    _check_data(data, CuiData)
    return peer_numbers(data.first, data.second)


def one_step_verdict(residual: ResidualData, overlap: OverlapData) -> dict:
    r"""The verdicts of the chapter's claim (:func:`twostep.analysis.verdicts.judge`): the
    remainder's fitted slope against :math:`-1/2` (null: 0, no decay; the fit's standard error
    over the widths' means, with widths minus two degrees of freedom) and, for every target of
    information exponent two or more and every :math:`\psi`, the overlap of :math:`\hat v`
    with :math:`\beta^\star` against its finite-size level without a linear part (the claim
    predicts that null; the effect it denies is what a target of information exponent one
    reaches at that :math:`\psi`). Returns ``verdict_rank_one``, ``verdict_high`` (the worst
    over the targets and :math:`\psi`), ``high_chance`` (the largest finite-size level among
    the targets) and ``high_chance_d`` (:math:`1/\sqrt d`, a random direction's level)."""
    from ..analysis.verdicts import judge, worst

    _check_data(residual, ResidualData)
    _check_data(overlap, OverlapData)
    slope, se = residual.slopes[residual.main]
    rank_one = judge(slope, se, -0.5, 0.0, seeds=residual.n_seeds_small,
                     df=len(residual.sizes) - 2)
    first, high = _information_groups(overlap)
    st = overlap.stats
    learned = np.max([st[k]["pred"] for k in first], axis=0)      # (psis,)
    high_verdicts = [judge(float(st[k]["v"][i]), float(st[k]["v_sem"][i]), float(st[k]["finite"][i]),
                           float(st[k]["finite"][i]), seeds=overlap.n_seeds, predicts_null=True,
                           alternative=float(learned[i]))
                     for k in high for i in range(len(overlap.psis))]
    return {"verdict_rank_one": str(rank_one), "verdict_high": worst(high_verdicts),
            "high_chance": max(float(np.max(st[k]["finite"])) for k in high),
            "high_chance_d": 1.0 / math.sqrt(overlap.d)}


def rank_one_width_numbers(residual: ResidualData) -> dict:
    r"""Glue values ``vw_one_step_<N>`` for the landing page's verdicts at each width: the
    remainder's slope fitted over the widths up to ``N`` (at least three) against :math:`-1/2`,
    judged as in :func:`one_step_verdict`."""
    from ..analysis.sweep import loglog_slope
    from ..analysis.verdicts import judge

    _check_data(residual, ResidualData)
    res = np.array([e["residual"] for e in residual.summary[residual.main]])
    labels = {}
    for j in range(2, len(residual.sizes)):
        slope, se = loglog_slope(residual.sizes[:j + 1], res[:j + 1])
        labels[int(residual.sizes[j])] = judge(slope, se, -0.5, 0.0, seeds=residual.n_seeds_small,
                                               df=j - 1).label
    return width_verdicts("vw_one_step", {N: v for N, v in labels.items()
                                          if N in VERDICT_WIDTHS})
