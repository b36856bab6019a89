r"""Paired reused/fresh runs: both batch schemes on one draw, and the test of the reused
:math:`T_2` seen through :math:`a^{\circ3}`.

Shared by the chapters *Reused versus fresh batches* (runs at the build's widths) and *At scale*
(the same records read from the results files): :class:`PairedData` holds them, the figures and
tables below draw them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_alpha, check_int, check_real
from ..analysis.alignment import chance_overlap
from ..analysis.population import Limits
from ..analysis.sweep import sweep
from ..analysis.theory import n_spikes, spike_exponent
from ..analysis.verdicts import mean_sem, verdict
from ..experiments.reuse import (_check_sequence, paired_reuse_experiment)
from ..model.activations import as_activation
from ..model.steps import BATCHES
from .figures import COLORS, errorbars, width_axis, width_grid
from .report import markdown_table, sig, tables, width_verdicts

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
    a2s = (check_alpha(alpha2, "alpha2"),) + tuple(
        check_alpha(a, "alpha2s") for a in _check_sequence(alpha2s, "alpha2s"))
    grid = [dict(config=key, N=N, activation=cfg.activation, target=cfg.target, c1=cfg.c,
                 alpha1=alpha1, c2=cfg.c, alpha2=alpha2, alpha2s=list(a2s[1:]), dtype=dtype)
            for key, cfg in configs.items() for N in sizes[key]]
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
    grid = width_grid(Ns)
    cfg = data.configs[main]
    ax1.plot(grid, limits.overlap(cfg.target, "reused", aware=True) - 1 / np.sqrt(grid),
             color=COLORS["theory"], lw=1.2)
    ax1.axhline(0, color=COLORS["chance"], ls=":", lw=1.2)
    width_axis(ax1, Ns, "$N$")
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
    return tables(diff, rows)


def paired_lambda_table(data: PairedData, config: str, alpha1: float, N: int | None = None):
    r"""Table *tab-reuse-paired-lambda*: for ``config`` at width ``N`` (default its largest), the
    paired difference (reused minus fresh, mean ± standard error) of the learned subspace's
    overlap (memorised inputs set aside) at each second-step exponent, with :math:`\Lambda` and
    the exponent :math:`e_2` of the aligned spike; ``alpha1`` is the runs' first-step exponent."""
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
    width_axis(ax1, Ns, "$N$")
    ax1.set(yscale="log", ylabel="cosine", title=r"reused $T_2$: its top vector")

    grid = width_grid(Ns)
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
    width_axis(ax2, Ns, "$N$")
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
