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
``*_table`` functions the (header, rows) of its tables, and the small formulas the prose uses
(:func:`derivative_spread`, :func:`single_sample_norm`, :func:`log_corrected_slope`,
:func:`cross_moment`, :func:`critical_step`) are tested here rather than computed in a cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.sparse.linalg import LinearOperator

from .._validation import check_dtype, check_int, check_pairs, check_real, check_rng
from ..analysis.alignment import overlap
from ..analysis.decomposition import first_step_spike
from ..analysis.spectra import SVDS_TOL, top_singular
from ..model.activations import Activation, as_activation, check_activation
from ..model.network import gaussian_inputs, gradient, initialise
from ..model.steps import draw_problem, step_size
from ..model.targets import Link


def _residual_top(G, spike, seed):
    # Top singular value and right vector of G - spike, applied matrix-free.
    N, d = G.shape
    lv = G.dtype.type(spike.value) * spike.left.astype(G.dtype, copy=False)
    right = spike.right.astype(G.dtype, copy=False)

    def matvec(x):
        x = np.ravel(x)
        return G @ x - lv * (right @ x)

    def rmatvec(x):
        x = np.ravel(x)
        return G.T @ x - right * (lv @ x)

    R = LinearOperator((N, d), matvec=matvec, rmatvec=rmatvec, dtype=G.dtype)
    s, Vt = top_singular(R, 1, vectors="right", tol=SVDS_TOL, seed=seed)
    return float(s[0]), Vt[0].astype(float)


def first_step_diagnostics(rng: np.random.Generator, *, N: int, n: int | None = None,
                           d: int | None = None, activation="poly4", target="he1",
                           steps: Sequence = (), top: int = 1, noise: float = 0.0,
                           dtype="float64") -> dict:
    r"""Draw a problem, take the first gradient, and measure how close it is to a spike.

    The problem is drawn by :func:`twostep.model.steps.draw_problem` (teacher directions,
    ``W0``, ``a``, ``X``, label noise), so for the same generator state
    :math:`W_0+\eta G` is :func:`twostep.run_two_steps`'s ``W1``.

    Parameters
    ----------
    rng : numpy.random.Generator
    N, n, d : int
        Width, batch size, input dimension (``n`` and ``d`` default to ``N``).
    activation : Activation or str
    target : Link, sequence of Link, Teacher or link names (``"he1"``)
        The first direction ``teacher.directions[0]`` is :math:`\beta^*`.
    steps : sequence of (c, alpha)
        Step sizes :math:`\eta = cN^\alpha` at which :math:`W_1 = W_0+\eta G` is examined.
    top : int
        How many top singular values of each :math:`W_1` to return (``1 <= top < min(N, d)``).
    noise : float
        Label-noise standard deviation (ignored when a Teacher is given).
    dtype : float64 or float32

    Returns
    -------
    dict
        ``residual``: :math:`\|G-\mu_1av^\top\|_{op}/\|G\|_{op}`;
        ``remainder_sample_overlap``: cosine between the top right singular vector of
        :math:`G-\mu_1av^\top` and the input :math:`x_{j^*}` with the largest label,
        :math:`j^* = \arg\max_j|y_j|` (near 1 when single extreme labels dominate the remainder);
        ``max_label``: :math:`\max_j|y_j|`;
        ``best_residual``: :math:`s_2(G)/s_1(G)` (what the best rank-one approximation leaves);
        ``update_norm``: :math:`\|G\|_{op}`; ``spike``: :math:`|\mu_1|\|a\|\|v\|`;
        ``v_overlap``: :math:`|\langle v/\|v\|,\beta^*\rangle|`;
        ``eta``: shape ``(len(steps),)``;
        ``top``: shape ``(len(steps), top)``, the largest singular values of each :math:`W_1`;
        ``right_overlap``: shape ``(len(steps),)``, cosine of the top right singular vector of
        :math:`W_1` with :math:`\beta^*`; ``right_v_overlap``: the same with :math:`v`.
    """
    N = check_int(N, "N")
    n, d = check_int(N if n is None else n, "n"), check_int(N if d is None else d, "d")
    activation = as_activation(activation)
    steps = check_pairs(steps, "steps", "a (c, alpha) pair")
    top = check_int(top, "top", 1)
    if top >= min(N, d) - 1 or min(N, d) < 3:
        raise ValueError(f"top must be in [1, min(N, d) - 2] = [1, {min(N, d) - 2}], got {top}")
    dt = check_dtype(dtype)
    etas = np.array([step_size(c, alpha, N) for c, alpha in steps], dtype=float)
    problem = draw_problem(N, n, d, target, "reused", rng, noise, dt)
    W0, a, X, y = problem.W0, problem.a, problem.X1, problem.y1
    beta = problem.teacher.directions[0]

    G = gradient(W0, a, X, y, activation)
    G *= -1
    spike = first_step_spike(a, X, y, activation)
    sG = top_singular(G, 2, vectors=False, tol=SVDS_TOL)
    remainder, r1 = _residual_top(G, spike, 0)
    extreme = X[int(np.argmax(np.abs(y)))].astype(float)
    out = {
        "residual": remainder / float(sG[0]),
        "remainder_sample_overlap": overlap(r1, extreme),
        "max_label": float(np.max(np.abs(y))),
        "best_residual": float(sG[1] / sG[0]),
        "update_norm": float(sG[0]),
        "spike": spike.value,
        "v_overlap": overlap(spike.right, beta) if spike.value > 0 else 0.0,
        "eta": etas,
        "top": np.zeros((len(steps), top)),
        "right_overlap": np.zeros(len(steps)),
        "right_v_overlap": np.zeros(len(steps)),
    }
    W1 = np.empty_like(W0)
    for i, eta in enumerate(etas):
        np.multiply(G, dt.type(eta), out=W1)
        W1 += W0
        s, Vt = top_singular(W1, top, vectors="right", tol=SVDS_TOL)
        out["top"][i] = s
        out["right_overlap"][i] = overlap(Vt[0].astype(float), beta)
        if spike.value > 0:
            out["right_v_overlap"][i] = overlap(Vt[0].astype(float), spike.right.astype(float))
    return out


def learned_direction_overlaps(n: int, d: int, links, rng: np.random.Generator,
                               noise: float = 0.0, dtype=np.float64) -> np.ndarray:
    r"""Overlaps :math:`|\langle v_k/\|v_k\|,\beta^*\rangle|` of the one-step directions
    :math:`v_k = X^\top y_k/n` for several single-index targets sharing one batch.

    Draws :math:`\beta^*` (uniform on the sphere), then :math:`X` (``n x d``), then the
    label noise of each link in turn; :math:`y_k = g_k(X\beta^*) + \varepsilon_k`.
    No network is involved: :math:`v` is the data's own first-step direction.

    Returns
    -------
    ndarray, shape (len(links),)
    """
    n, d = check_int(n, "n"), check_int(d, "d")
    if isinstance(links, Link):
        links = [links]
    if isinstance(links, (str, bytes)) or not isinstance(links, Sequence) or not links \
            or not all(isinstance(g, Link) for g in links):
        raise TypeError("links must be a Link or a non-empty sequence of Link")
    check_rng(rng)
    noise = check_real(noise, "noise", low=0.0)
    dt = check_dtype(dtype)
    beta = rng.standard_normal(d)
    beta /= np.linalg.norm(beta)
    X = gaussian_inputs(n, d, rng, dt)
    z = X @ beta.astype(dt)
    out = np.empty(len(links))
    for k, g in enumerate(links):
        y = np.asarray(g(z), dtype=dt)
        if noise > 0:
            y = y + (noise * rng.standard_normal(n)).astype(dt)
        v = X.T @ y
        nv = np.linalg.norm(v)
        out[k] = abs(float(v @ beta)) / nv if nv > 0 else 0.0
    return out


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


def _check_link(link, name: str) -> Link:
    if not isinstance(link, Link):
        raise TypeError(f"{name} must be a Link (e.g. twostep.hermite_link(1)), got {type(link).__name__}")
    return link


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
    fig, (ax, ax_t) = plt.subplots(1, 2, figsize=(7.4, 4.0))
    sizes, slopes = data.sizes, data.slopes
    markers = {"poly4": "o", "tanh": "s"}
    for act, rows in data.summary.items():
        res = np.array([e["residual"] for e in rows])
        sem = np.array([e["residual_sem"] for e in rows])
        color = TARGET_COLORS["He_1"] if act == data.main else TANH_COLOR
        label = ACTIVATION_LABELS.get(act, act)
        errorbars(ax, sizes, res, sem, color=color, marker=markers.get(act, "^"),
                  label=f"{label}: slope {slopes[act][0]:.2f} ± {slopes[act][1]:.2f}")
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
                  label=f"{TARGET_LABELS.get(t, t)}: slope {s:.2f} ± {se:.2f}")
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
    fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.8))
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
    """Named values of :func:`residual_data` for the prose and tables (``glue_numbers(**...)``).

    Keys: slopes (``slope_poly``, ``slope_tanh`` and their ``_large`` and ``_se`` variants,
    ``slope_he1_tail``, ``slope_he3``, ``slope_odd``), ratios at the largest widths, the
    tail diagnostics at the largest small width, and per recorded step ``i``
    ``top1_max_i``, ``top1_pred_i``, ``top2_max_i``, ``rem_max_i``, ``alpha_i``.
    """
    _check_data(data, ResidualData)
    s, sizes, small = data.slopes, data.sizes, data.sizes_small
    poly = data.summary[data.main]
    tanh_key = "tanh" if "tanh" in data.summary else None
    last = {act: rows[-1] for act, rows in data.summary.items()}
    mid = [e["residual"] for e in poly if e["N"] == data.fit_from]
    ts_ = data.tail_summary
    out = dict(
        res_Nmin=int(sizes[0]), res_Nmax=int(sizes[-1]), res_seeds_small=data.n_seeds_small,
        res_seeds_large=data.n_seeds_large, res_large_from=data.large_from,
        slope_poly=s[data.main][0], slope_poly_se=s[data.main][1],
        slope_poly_large=s[data.main + "_large"][0], slope_poly_large_se=s[data.main + "_large"][1],
        res_Nmid=data.fit_from, log_slope_max=log_corrected_slope(sizes[-1]),
        res_poly_max=last[data.main]["residual"], best_poly_max=last[data.main]["best_residual"],
        scaled_poly_min=poly[0]["residual"] * np.sqrt(sizes[0]),
        scaled_poly_max=last[data.main]["residual"] * np.sqrt(sizes[-1]),
        tail_Nmax=int(small[-1]), sample_chance=1 / np.sqrt(small[-1]), sd_dsigma=data.spread)
    if mid:
        out["scaled_poly_mid"] = mid[0] * np.sqrt(data.fit_from)
    if tanh_key:
        out.update(slope_tanh=s["tanh"][0], slope_tanh_se=s["tanh"][1],
                   slope_tanh_large=s["tanh_large"][0], slope_tanh_large_se=s["tanh_large"][1],
                   res_tanh_max=last["tanh"]["residual"])
    names = {"He_1": "he1", "He_3": "he3", "odd": "odd"}
    for key, short in names.items():
        if key not in ts_:
            continue
        e = ts_[key][-1]
        if key != "He_1":
            out[f"slope_{short}"], out[f"slope_{short}_se"] = s["tail_" + key]
            out[f"res_{short}_max"] = e["residual"]
            out[f"maxlabel_{short}"] = e["max_label"]
        else:
            out["slope_he1_tail"], out["slope_he1_tail_se"] = s["tail_He_1"]
            out["res_he1_tailmax"] = e["residual"]
        out[f"sample_ov_{short}"] = e["remainder_sample_overlap"]
    if "He_3" in ts_:
        e = ts_["He_3"][-1]
        out["remnorm_he3"] = e["remainder_norm"]
        out["sample_spike_he3"] = e["max_label"] * data.spread / np.sqrt(small[-1])
    for i, cur in enumerate(_growth_curves(data)):
        out.update({f"top1_max_{i}": cur["top1"][-1], f"top1_pred_{i}": cur["pred"][-1],
                    f"top2_max_{i}": cur["top2"][-1], f"rem_max_{i}": cur["rem"][-1],
                    f"alpha_{i}": cur["alpha"]})
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
    r"""Header and rows, per tail target at the largest small width: the cosine of the top right
    singular vector of :math:`G-\mu_1av^\top` with the input of the largest label, the largest
    label, the measured :math:`\|G-\mu_1av^\top\|_{op}` and the single-sample prediction
    :func:`single_sample_norm`."""
    _check_data(data, ResidualData)
    N = int(data.sizes_small[-1])
    # no "|" inside a cell: it would end the cell of a pipe table
    header = ["target", r"cosine with $x_{j^\star}$", r"$\max_j \lvert y_j\rvert$",
              r"$\lVert G-\mu_1av^\top\rVert_{op}$", "one sample predicts"]
    rows = []
    for key in [k for k in TARGET_COLORS if k in data.tail_summary]:
        e = data.tail_summary[key][-1]
        rows.append([TARGET_LABELS.get(key, key), f"{e['remainder_sample_overlap']:.2f}",
                     f"{e['max_label']:.2f}", f"{e['remainder_norm']:.2f}",
                     f"{single_sample_norm(e['max_label'], data.spread, N, N):.2f}"])
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
    fig, axes = plt.subplots(1, len(data.cs), figsize=(7.0, 3.4), sharey=True, squeeze=False)
    axes = axes[0]
    for ax, c, s, theta, pred in zip(axes, data.cs, data.singular, data.theta, data.pred):
        plot_spectrum(ax, s, 1.0, margin=data.margin, outlier_color=TARGET_COLORS["He_1"])
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
    """Named values of :func:`w1_spectrum_data` for the prose (first and last step size)."""
    from ..analysis.spectra import bulk_edge

    _check_data(data, SpectrumData)
    return dict(spec_N=data.N, spec_c_low=data.cs[0], spec_c_high=data.cs[-1],
                spec_out_low=data.outliers[0], spec_out_high=data.outliers[-1],
                spec_top_low=float(data.singular[0][0]), spec_top_high=float(data.singular[-1][0]),
                spec_pred_high=data.pred[-1], spec_edge=bulk_edge(1.0), spec_margin=data.margin,
                eta_c_he1=data.eta_c)


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
    summary: dict             # name -> means/sems of top1, right_v_overlap, pred_measured, residual
    eta_c: dict               # name -> critical step
    gap: dict                 # name -> (max rel. gap to the limit, to the measured-theta prediction)
    spike_dev: dict           # name -> mean of ||a|| ||v|| / limit - 1


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
    :math:`|\mu_1|\|a\|\|v\|/\lim - 1`.

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
    summary = {e["target"]: e for e in summarise(
        records, ["target"], ["top1", "right_v_overlap", "pred_measured", "residual"])}
    eta_c, gap, spike_dev = {}, {}, {}
    for name, g in targets.items():
        e = summary[name]
        eta_c[name] = critical_step(mu1, g.coefficients[1], g.second_moment, 1.0, 1.0)
        above = cs > window * eta_c[name]
        limit = spiked_outlier(np.array([spike_strength(c, mu1, g.coefficients[1], g.second_moment, 1.0)
                                         for c in cs[above]]), 1.0)
        gap[name] = (float(np.max(np.abs(e["top1"][above] / limit - 1))),
                     float(np.max(np.abs(e["top1"][above] / e["pred_measured"][above] - 1))))
        spike_dev[name] = float(np.mean([r["spike_dev"] for r in records if r["target"] == name]))
    return BBPData(N=N, cs=cs, n_seeds=len(seeds), window=window, mu1=mu1, targets=targets,
                   summary=summary, eta_c=eta_c, gap=gap, spike_dev=spike_dev)


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
    fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.7))
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
            out[f"bbp_res_{s}"] = float(data.summary[name]["residual"])
            out[f"bbp_spike_dev_{s}"] = data.spike_dev[name]
    if "He_3" in data.targets:
        out["bbp_gap_he3_measured"] = data.gap["He_3"][1]
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
    fig, axes = plt.subplots(1, 2, figsize=(7.4, 4.4))
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
    out = dict(ov_d=data.d, ov_alpha=data.alpha, ov_c=data.c, ov_seeds=data.n_seeds,
               ov_psi_min=float(data.psis[0]), ov_psi_max=float(data.psis[-1]),
               ov_chance=chance_overlap(data.d), dim_psi=data.dim_psi,
               dim_dmin=int(data.dim_ds[0]), dim_dmax=int(data.dim_ds[-1]), dim_seeds=data.dim_seeds)
    if ie1:
        out.update(dev_ie1=max(np.max(np.abs(st[k]["v"] - st[k]["pred"])) for k in ie1),
                   dev_ie1_w=max(np.max(np.abs(st[k]["w"] - st[k]["pred"])) for k in ie1),
                   wv_min_ie1=min(np.min(st[k]["wv"]) for k in ie1))
    if high:
        out.update(high_max=max(np.max(st[k]["v"]) for k in high),
                   high_w_max=max(np.max(st[k]["w"]) for k in high),
                   ov_high_z=max(np.max(st[k]["z"]) for k in high))
    for key, short in {"He_2": "he2", "He_3": "he3", "odd": "odd"}.items():
        if key in st:
            out[f"m22_{short}"] = st[key]["m22"]
            out[f"m22_{short}_root"] = np.sqrt(st[key]["m22"])
        if key in data.dim_stats:
            out[f"dim_slope_{short}"], out[f"dim_se_{short}"] = data.dim_stats[key]["slope"]
    if "He_1" in data.dim_stats:
        out["dim_slope_he1"] = data.dim_stats["He_1"]["slope"][0]
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in out.items()}


def overlap_table(data: OverlapData) -> tuple[list, list]:
    r"""Header and rows per target: :math:`c_1`, :math:`\mathbb E[y^2z^2]`, the largest overlap of
    :math:`\hat v` and of :math:`W_1`'s singular vector over :math:`\psi`, the largest deviation of
    :math:`\hat v` from the limit (targets with :math:`c_1\ne0`) or from the finite-size prediction
    in standard errors (the others), and the slope against :math:`d`."""
    _check_data(data, OverlapData)
    ie1, _ = _information_groups(data)
    header = ["target", "$c_1$", r"$\mathbb E[y^2z^2]$", r"largest overlap, $\hat v$",
              r"largest overlap, $W_1$", "largest deviation from theory", "slope against $d$"]
    rows = []
    for key, g in data.targets.items():
        st = data.stats[key]
        c1 = float(g.coefficients[1])
        dev = (f"{np.max(np.abs(st['v'] - st['pred'])):.3f} (limit)" if key in ie1
               else f"{np.max(st['z']):.1f} s.e. (finite size)")
        slope = data.dim_stats.get(key, {}).get("slope")
        rows.append([TARGET_LABELS.get(key, key), "0" if abs(c1) < 1e-12 else f"{c1:.3f}",
                     f"{st['m22']:.3g}", f"{np.max(st['v']):.3f}", f"{np.max(st['w']):.3f}", dev,
                     "–" if slope is None else f"{_fixed(slope[0], 2)} ± {slope[1]:.2f}"])
    return header, rows
