r"""Paired reused/fresh runs (both batch schemes on one draw) and the test of the reused
:math:`T_2` seen through :math:`a^{\circ3}`, for the chapters *Reused versus fresh batches*
(runs at the build's widths) and *At scale* (the results files' records). The ``*_table``
functions return ``(header, rows)``, except :func:`term_evidence_table` and
:func:`term_controls_table`, whose captions both chapters share.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from ..analysis.alignment import chance_overlap
from ..analysis.population import Limits
from ..analysis.sweep import sweep
from ..analysis.theory import n_spikes, spike_exponent
from ..analysis.verdicts import effect, mean_sem, no_effect
from ..experiments.reuse import paired_reuse_experiment
from ..model.steps import BATCHES
from .figures import COLORS, errorbars, finished, legend_from, width_axis, width_grid
from .report import markdown_table, pm, sig, width_verdicts

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
    r"""Paired reused/fresh runs over seeds (:func:`paired_data`). Not a
    :class:`~twostep.analysis.summary.Summary`: a paired difference (reused minus fresh) is
    taken seed by seed, and its standard error is that of the per-seed differences."""

    configs: dict             # key -> PairedConfig
    alpha2s: tuple            # the second-step exponents measured, the reference first
    n_spikes: tuple           # their Lambda
    records: list             # paired_reuse_experiment's, with config (a key), N and seed

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


def _signed(stat) -> str:
    # a paired difference over the seeds: "+0.012 ± 0.004"
    return pm(*stat, 3, signed=True)


def paired_data(configs: dict, sizes: dict, seeds, alpha1: float, alpha2: float, alpha2s=(),
                n_jobs: int = 1) -> PairedData:
    r""":func:`paired_reuse_experiment` (float32) for every configuration, its widths and every
    seed. ``configs`` maps a key to a :class:`PairedConfig`, ``sizes`` the same keys to the
    widths :math:`N = n = d` run for that configuration."""
    pairs = [(key, N) for key in configs for N in sizes[key]]
    grid = [dict(N=N, activation=configs[k].activation, target=configs[k].target,
                 c1=configs[k].c, alpha1=alpha1, c2=configs[k].c, alpha2=alpha2,
                 alpha2s=list(alpha2s), dtype="float32") for k, N in pairs]
    # Widest first (cost N^3), so that the short runs fill the cores at the end; sweep keeps
    # the grid's order, seeds innermost: label each record with its configuration.
    records = sweep(paired_reuse_experiment, grid, seeds=seeds, n_jobs=n_jobs,
                    cost=lambda p: p["N"] ** 3)
    for r, (key, _) in zip(records, [p for p in pairs for _ in seeds]):
        r["config"] = key
    a2s = (alpha2, *alpha2s)
    return PairedData(dict(configs), a2s, tuple(n_spikes(alpha1, a) for a in a2s), records)


def _null_correction(data: PairedData, config: str, N: int) -> np.ndarray:
    # per seed: what setting memorised inputs aside does to a random subspace's overlap
    return (data.values(config, N, "null_unmemorised", None, 0)
            - data.values(config, N, "null_subspace", None, 0))


def paired_numbers(data: PairedData, limits: Limits, main: str, control: str, bounded: str,
                   width: int) -> dict:
    r"""The numbers the chapter quotes from :func:`paired_data`: ``main`` is the configuration
    run at several widths, ``control`` (an even link) and ``bounded`` (a bounded activation)
    those run at ``width``; ``p_lam_sem`` is the largest standard error of
    :func:`paired_lambda_table`."""
    v, Ns = data.values, data.Ns(main)
    t2 = data.series(main, "term_overlap", "diff")[0]
    he2 = data.stat(control, width, "term_overlap", "diff")
    K = int(np.asarray(data.records[0]["K"])[0])
    return {"p_t2_lo": min(t2), "p_t2_hi": max(t2),
            "p_t2_theory": limits.paired_difference(data.configs[main].target, Ns[-1]),
            "p_he2_t2": he2[0], "p_he2_t2_sem": he2[1],
            "p_null": float(np.mean(_null_correction(data, main, width))),
            "p_tanh_mem": v(bounded, width, "top_memorisation", "reused", 0).mean(),
            "p_tanh_rows": v(bounded, width, "row_ratio", "reused", 0).mean(),
            "p_s4_rows": v(main, width, "row_ratio", "reused", 0).mean(),
            "p_tanh_sub": v(bounded, width, "subspace_unmemorised", "reused", 0).mean(),
            "p_tanh_chance": chance_overlap(width, K),
            "p_lam_sem": max(data.stat(main, Ns[-1], "subspace_unmemorised", "diff", i)[1]
                             for i in range(len(data.n_spikes)))}


#: Single seeds behind a mean: visible on white, lighter than the mean's marker.
SEEDS_STYLE = dict(color=COLORS["reused"], marker="o", alpha=0.55, ls="none", ms=3.5, mew=0)
#: (marker, line style) per width where widths share one colour family.
WIDTH_LOOKS = (("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."))


def plot_paired(data: PairedData, limits: Limits, main: str, controls, null_N: int):
    r"""Figure of the paired differences (reused minus fresh; each seed, mean ± standard error):
    :math:`T_2`'s top right vector against :math:`N` for ``main``, with the theory's difference;
    the learned subspace (memorised inputs set aside) for ``main`` and ``controls`` at width
    ``null_N``, next to the correction on random subspaces; and against :math:`\Lambda`."""
    # Two rows: the T_2 and Lambda panels above, the controls (long category names) below at
    # the column's full width; one legend under all three.
    fig, axd = plt.subplot_mosaic([["t2", "lam"], ["ctrl", "ctrl"]], figsize=(7.0, 6.4),
                                  height_ratios=[1, 0.9])
    ax1, ax2, ax3 = axd["t2"], axd["ctrl"], axd["lam"]
    Ns = data.Ns(main)
    for N in Ns:
        x = data.values(main, N, "term_overlap", "diff")
        ax1.plot(np.full(x.size, N) * np.exp(np.linspace(-0.06, 0.06, x.size)), x, **SEEDS_STYLE)
    errorbars(ax1, Ns, *data.series(main, "term_overlap", "diff"), color=COLORS["reused"])
    grid = width_grid(Ns)
    cfg = data.configs[main]
    ax1.plot(grid, limits.paired_difference(cfg.target, grid), color=COLORS["theory"], lw=1.2)
    ax1.axhline(0, color=COLORS["chance"], ls=":", lw=1.2)
    width_axis(ax1, Ns, "$N$")
    ax1.set(ylabel=r"difference, $|\langle v_1(T_2), \beta^\star\rangle|$",
            title=f"{cfg.label}: $T_2$")

    names = [main, *controls]
    rows = [(data.configs[c].label, data.values(c, null_N, "subspace_unmemorised", "diff", 0))
            for c in names] + [("correction on a\nrandom subspace",
                                _null_correction(data, main, null_N))]
    for i, (label, x) in enumerate(rows):
        ax2.plot(np.full(x.size, i) + np.linspace(-0.15, 0.15, x.size), x, **{
            **SEEDS_STYLE, "color": COLORS["reused"] if i < len(names) else COLORS["chance"]})
        ax2.errorbar(i, *mean_sem(x), fmt="s", color="k", ms=5, capsize=3)
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
        stats = np.array([data.stat(main, N, "subspace_unmemorised", "diff", int(i))
                          for i in order])
        ax3.errorbar(lams + 0.08 * (j - (len(Ns) - 1) / 2), stats[:, 0], yerr=stats[:, 1],
                     marker=looks[j][0], ls=looks[j][1], ms=4.5, capsize=2, color=shades[j])
    ax3.axhline(0, color=COLORS["chance"], ls=":", lw=1.2)
    ax3.set_xticks(lams)
    ax3.set(xlabel=r"$\Lambda(\alpha_1, \alpha_2')$", ylabel="difference, learned subspace",
            title=f"{cfg.label}: $W_2$")
    legend_from(fig, [
        ("single seeds", SEEDS_STYLE),
        ("mean ± s.e. (upper left)", dict(color=COLORS["reused"], marker="o", ms=4)),
        ("mean ± s.e. (lower)", dict(color="k", marker="s", ms=5, ls="none")),
        (r"theory: $\tilde u_2$ limit $-$ chance", dict(color=COLORS["theory"], lw=1.2)),
        ("no effect of reuse", dict(color=COLORS["chance"], ls=":", lw=1.2))] + [
        (f"$N = {N}$ (upper right)", dict(color=shades[j], marker=looks[j][0], ls=looks[j][1],
                                          ms=4.5)) for j, N in enumerate(Ns)],
        loc="outside lower center", ncol=3)
    return finished(fig)


def paired_table(data: PairedData) -> tuple:
    r"""Two tables at the reference exponent, ``((header, rows), (header, rows))``, a row per
    configuration and width: the paired differences of :math:`T_2`'s top right vector and of
    the learned subspace (memorised inputs set aside, and raw); the mean memorisation of
    :math:`W_2`'s top vector and its largest row norm over the median, reused and fresh."""
    diff_rows, row_rows = [], []
    for key, cfg in data.configs.items():
        for N in data.Ns(key):
            term = data.stat(key, N, "term_overlap", "diff")
            diff_rows.append([cfg.label, str(N), _signed(term) if np.isfinite(term[0]) else "n/a",
                              _signed(data.stat(key, N, "subspace_unmemorised", "diff", 0)),
                              _signed(data.stat(key, N, "subspace", "diff", 0))])
            row_rows.append([cfg.label, str(N)] + [
                f"{data.stat(key, N, name, b, 0)[0]:.{decimals}f}"
                for name, decimals in (("top_memorisation", 2), ("row_ratio", 1)) for b in BATCHES])
    return ((["configuration", "$N$", "$T_2$", "$W_2$", "$W_2$ raw"], diff_rows),
            (["configuration", "$N$", "mem., reused", "mem., fresh", "rows, reused",
              "rows, fresh"], row_rows))


def paired_table_spread(data: PairedData) -> str:
    r"""The spread over seeds of the second table of :func:`paired_table`, for its caption: the
    largest standard error of a memorisation, and of a row ratio relative to its mean (the
    ratios run from about 1 to 1000), over every configuration, width and batch."""
    stats = {name: [data.stat(key, N, name, b, 0) for key in data.configs
                    for N in data.Ns(key) for b in BATCHES]
             for name in ("top_memorisation", "row_ratio")}
    memo = max(s for _, s in stats["top_memorisation"])
    ratio = max(s / abs(m) for m, s in stats["row_ratio"] if m)
    return (f"standard errors at most {sig(memo)} for a memorisation and {sig(100 * ratio)}% of "
            "the entry for a row ratio")


def paired_lambda_table(data: PairedData, config: str, alpha1: float) -> tuple:
    r"""``(header, rows)``: for ``config`` at its largest width, the paired difference (mean ±
    standard error) of the learned subspace's overlap (memorised inputs set aside) at each
    second-step exponent, with :math:`\Lambda` and the exponent :math:`e_2` of the aligned
    spike; ``alpha1`` is the runs' first-step exponent."""
    N = data.Ns(config)[-1]
    rows = [[str(data.n_spikes[i]), f"{data.alpha2s[i]}",
             f"{spike_exponent(2, alpha1, data.alpha2s[i]):+.2f}",
             _signed(data.stat(config, N, "subspace_unmemorised", "diff", int(i)))]
            for i in np.argsort(data.n_spikes)]
    return ["$\\Lambda$", "$\\alpha_2$", "$e_2$", "difference"], rows


# --------------------------------------------------------------------------- T_2 seen through a^(k+1)

def term_verdicts(data: PairedData, limits: Limits, main: str, control: str,
                  N: int | None = None) -> dict:
    r"""The verdicts (:class:`~twostep.analysis.verdicts.Verdict`) of the exact-term test at width
    ``N`` (default: the largest of ``main``; the control at its own largest width not above
    ``N``): ``reuse``, the reused :math:`T_2^\top a^{\circ3}` against the book's limit of
    :math:`\tilde u_2`, null the strongest control of each seed; ``fresh`` (fresh batch) and
    ``even`` (the ``control`` link, reused; ``None`` without a width up to ``N``), which predict
    no alignment: their null is the overlap that :math:`\tilde u_2`, whose limit is 0 there, has
    at :math:`n = N` by sampling alone, and the effect they deny the reused odd link's limit."""
    v = data.values
    N = data.Ns(main)[-1] if N is None else N
    below = [w for w in data.Ns(control) if w <= N]
    target, even = data.configs[main].target, data.configs[control].target
    sampling = limits.overlap(target, "fresh", n=N, aware=True)
    predicted = limits.overlap(target, "reused", aware=True)
    # The reuse null: the strongest control of each seed (the fresh run's projection, the
    # random-sign projection, the memorised inputs' own span), a conservative null.
    null = np.max([v(main, N, "projected_overlap", "fresh"),
                   v(main, N, "projected_random_sign", "reused"),
                   v(main, N, "projected_memorised_null", "reused")], axis=0)
    out = {"reuse": effect(v(main, N, "projected_overlap", "reused"), null),
           "fresh": no_effect(v(main, N, "projected_overlap", "fresh"), sampling), "even": None}
    if below:
        sampling_even = limits.overlap(even, "reused", n=below[-1], aware=True)
        out["even"] = no_effect(v(control, below[-1], "projected_overlap", "reused"),
                                sampling_even)
    return out


def width_numbers(data: PairedData, limits: Limits, main: str, control: str,
                  prefix: str = "vw") -> dict:
    r"""Glue values ``<prefix>_reuse_<N>``, ``<prefix>_fresh_<N>`` and ``<prefix>_even_<N>`` (the
    control only at its own widths) of the labels of :func:`term_verdicts` at every width of
    ``main``, for the landing page's table of verdicts at each width
    (:func:`twostep.pages.report.width_verdicts`)."""
    labels = {"reuse": {}, "fresh": {}, "even": {}}
    for N in data.Ns(main):
        vd = term_verdicts(data, limits, main, control, N)
        labels["reuse"][N], labels["fresh"][N] = vd["reuse"].label, vd["fresh"].label
        if N in data.Ns(control):
            labels["even"][N] = vd["even"].label
    return {k: v for row, by_N in labels.items()
            for k, v in width_verdicts(f"{prefix}_{row}", by_N).items()}


def term_evidence_numbers(data: PairedData, limits: Limits, main: str, control: str) -> dict:
    r"""Glue values of the exact-term evidence for ``main``, reused batch unless named: at the
    smallest width (``*_lo``) the top vector's overlap and that of the input it memorises, at
    both ends its memorisation; at the largest width the projection (``proj_re``, ``proj_fr``
    fresh, with ``*_sem``), its participation and :math:`\tilde u_2` of the same runs; the
    theory ``proj_theory``; the verdicts of :func:`term_verdicts` as text, with their numbers."""
    Ns = data.Ns(main)
    N = Ns[-1]
    mean = lambda width, key: float(data.stat(main, width, key, "reused")[0])  # noqa: E731
    out = {"ev_N_lo": Ns[0], "ev_N_hi": N, "raw_lo": mean(Ns[0], "term_overlap"),
           "input_lo": mean(Ns[0], "term_input_overlap"),
           "memo_lo": mean(Ns[0], "term_memorisation"), "memo_hi": mean(N, "term_memorisation"),
           "proj_ut": mean(N, "signal_reuse"), "proj_part": mean(N, "projected_participation"),
           "proj_theory": limits.overlap(data.configs[main].target, "reused", aware=True)}
    for name, batch in (("re", "reused"), ("fr", "fresh")):
        out[f"proj_{name}"], out[f"proj_{name}_sem"] = data.stat(main, N, "projected_overlap",
                                                                 batch)
    verdicts = term_verdicts(data, limits, main, control)
    out.update({f"verdict_{k}": str(vd) for k, vd in verdicts.items()})
    out["proj_z"] = verdicts["reuse"].t_null
    out["proj_he2"], out["proj_he2_sem"] = verdicts["even"].mean, verdicts["even"].sem
    out["proj_he2_sampling"] = verdicts["even"].null
    out["proj_fr_sampling"] = verdicts["fresh"].null
    return out


def plot_term_evidence(data: PairedData, limits: Limits, main: str, control: str):
    r"""Figure against :math:`N`, means and standard errors over the paired seeds: left, the
    reused :math:`T_2`'s top right vector (overlap with :math:`\beta^\star`, memorisation, and
    the overlap of the input it memorises); right, :math:`T_2^\top a^{\circ3}`'s overlap with
    :math:`\beta^\star`, reused and fresh, its controls, :math:`\tilde u_2` of the same runs,
    the ``control`` link, the theory (finite :math:`n` and the limit) and chance."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.0, 5.2), layout="constrained")
    Ns = data.Ns(main)
    target = data.configs[main].target
    for key, label, style in (
            ("term_memorisation", r"memorisation of $v_1(T_2)$", dict(color="k", mfc="w")),
            ("term_overlap", r"$|\langle v_1(T_2), \beta^\star\rangle|$",
             dict(color=COLORS["reused"])),
            ("term_input_overlap", "the memorised input's own overlap",
             dict(color=COLORS["reused"], mfc="w", ls="--"))):
        errorbars(ax1, Ns, *data.series(main, key, "reused"), label=label, **style)
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
        errorbars(ax2, Ns, *data.series(main, key, batch), label=label, **style)
    Nc = data.Ns(control)
    for batch, mark in (("reused", "^"), ("fresh", "v")):
        errorbars(ax2, Nc, *data.series(control, "projected_overlap", batch), ls="none",
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
    return finished(fig)


def _term_rows(data: PairedData, configs, columns):
    # One row per configuration and width: the link's name, N, then mean ± standard error over
    # the paired seeds of each (key, batch) in ``columns``.
    rows = []
    for key in configs:
        # The link only: the activation and step sizes are the caption's.
        name = data.configs[key].label.split(",")[-1].strip()
        rows += [[name, str(N)] + [pm(*data.stat(key, N, column, batch), 3)
                                   for column, batch in columns] for N in data.Ns(key)]
    return rows


def term_evidence_table(data: PairedData, limits: Limits, configs,
                        label: str = "tab-reuse-projected"):
    r"""Table ``label``: per configuration in ``configs`` and width, the overlap with
    :math:`\beta^\star` of :math:`T_2^\top a^{\circ3}` (reused, fresh) and of :math:`\tilde u_2`
    in the same reused runs, next to the theory's :math:`\tilde u_2` at that :math:`n`."""
    rows = _term_rows(data, configs, [("projected_overlap", "reused"),
                                      ("projected_overlap", "fresh"), ("signal_reuse", "reused")])
    theory = [f"{limits.overlap(data.configs[key].target, 'reused', n=N, aware=True):.3f}"
              for key in configs for N in data.Ns(key)]
    rows = [row + [cell] for row, cell in zip(rows, theory)]
    return markdown_table(
        "The exact term seen through its predicted left vector: overlap of $T_2^\\top a^{\\circ3}$ "
        "with $\\beta^\\star$, reused and fresh batch, and of the reuse-aware direction "
        "$\\tilde u_2$ of the same reused runs, against its theory at that $n$; mean ± standard "
        "error over the paired seeds, $\\sigma_4$.",
        label, ["link", "$N$", "reused", "fresh", "$\\tilde u_2$", "theory"], rows)


def term_controls_table(data: PairedData, configs, label: str = "tab-reuse-projected-controls"):
    r"""Table ``label``: the controls of :func:`term_evidence_table` in the same reused runs (the
    random-sign left vector, the memorised inputs alone) next to :math:`T_2^\top a^{\circ3}`."""
    rows = _term_rows(data, configs, [("projected_overlap", "reused"),
                                      ("projected_random_sign", "reused"),
                                      ("projected_memorised_null", "reused")])
    return markdown_table(
        "Controls of the exact-term test in the same reused runs: the random-sign left vector "
        "$|a|^{\\circ3}\\odot\\xi$ and the span of the memorised inputs alone, next to "
        "$T_2^\\top a^{\\circ3}$ itself; overlap with $\\beta^\\star$, mean ± standard error over "
        "the paired seeds, $\\sigma_4$.",
        label, ["link", "$N$", "$T_2^\\top a^{\\circ3}$", "random signs", "memorised inputs"], rows)


def term_summary_table(data: PairedData, main: str, control: str) -> tuple:
    r"""``(header, rows)``: each quantity of the exact-term test at the largest width of ``main``
    (mean ± standard error over the paired seeds), and the ``control`` link's projection."""
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
    return (["quantity", "overlap with $\\beta^\\star$"],
            [[label, pm(*data.stat(config, width, key, batch), 3)]
             for label, config, width, key, batch in rows])
