r"""Appendix *At scale*: the book's measurements read back from the committed results files.

The appendix runs no simulation: ``tools/at_scale.py`` writes ``results/at_scale/`` (the spike
file, :func:`twostep.scale.device.spike_on`: the exact terms of the two-steps chapter's
reference setting and :math:`W_2`'s raw outlier count over its phase grid; the reuse file and
its even-link control, :func:`twostep.scale.device.reuse_on`: where :math:`T_2` and
:math:`W_2` point, reused and fresh batch on the same draw). :func:`at_scale_data` takes the
documents (this layer may not import :mod:`twostep.scale`, so not the paths) and holds each
file's runs as a :class:`~twostep.analysis.summary.Summary` by batch and width. The terms are
drawn and judged as in the two-steps chapter (:mod:`twostep.pages.spikes`), the reuse files
read as the reuse chapter's paired runs (:func:`paired_from_files`); the ``*_table``
functions return the header and rows of tables whose captions the chapter writes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from ..analysis.plane import spike_sum_values, spike_widths
from ..analysis.population import Limits, population_signal
from ..analysis.spikes import outlier_strength
from ..analysis.summary import Summary
from ..analysis.sweep import linear_slope
from ..analysis.theory import n_spikes, spike_exponent
from ..analysis.verdicts import CONFIDENCE, mean_sem, share, t_interval
from ..experiments.reuse import TERM_KEYS
from ..model.activations import get_activation
from .figures import BATCH_ORDER, COLORS, K_COLORS, errorbars, finished, legend_below, width_axis
from .paired import PairedConfig, PairedData, term_verdicts
from .report import pm, sig, width_verdicts
from .spikes import nstar_text, series, terms_summary

#: The files the appendix reads: the spike file, the reuse file (odd bounded link) and its
#: control (the same runs with the even link He_2).
NAMES = ("spike", "reuse", "reuse_he2")
#: The two-steps chapter's settings (Lambda = 0, 1, 2, 3) and widths.
SETTINGS = ((0.2, 0.2), (0.3, 0.3), (0.4, 0.25), (0.45, 0.3))
CHAPTER_NS = (500, 1000, 2000, 4000)
#: Configurations of :func:`paired_from_files`: file name -> label for the reader.
PAIRED_LABELS = {"reuse": r"$\sigma_4$, odd link", "reuse_he2": r"$\sigma_4$, He$_2$ (control)"}


@dataclass
class AtScale:
    r"""The results documents by name (``docs``; the control ``reuse_he2`` may be missing) and
    each file's runs by ``("batch", "N")`` (``runs``; the spike file's by
    :func:`~twostep.pages.spikes.terms_summary`, with ``beta``); the spike file's phase grid
    ``grid`` of :math:`(\alpha_1,\alpha_2)`, its :math:`\Lambda` per point ``lam``, the degree
    ``L`` and the predicted exponents ``predicted`` :math:`e_k` of its setting."""

    docs: dict
    runs: dict
    grid: list
    lam: np.ndarray
    L: int
    predicted: list


def at_scale_data(spike: dict, reuse: dict, reuse_he2: dict | None = None) -> AtScale:
    """The documents of :func:`twostep.scale.results.read_results`, with their runs summarised."""
    docs = {name: doc for name, doc in zip(NAMES, (spike, reuse, reuse_he2)) if doc is not None}
    runs = {name: Summary(doc["records"], ("batch", "N"), ()) for name, doc in docs.items()}
    runs["spike"] = terms_summary(spike["records"], ("beta",))
    p = spike["params"]
    L = get_activation(p.get("activation", "poly4")).degree
    grid = [(float(a1), float(a2)) for a1, a2 in p.get("grid", ())]
    return AtScale(docs, runs, grid, np.array([n_spikes(a1, a2, L) for a1, a2 in grid]), L,
                   [spike_exponent(k, p["alpha1"], p["alpha2"]) for k in range(L)])


def _seeds(data: AtScale, name: str, N: int) -> list:
    # The seeds of file `name` at width N that both batch schemes ran.
    by = [{r["seed"] for r in data.runs[name].runs(batch=b, N=N)} for b in BATCH_ORDER]
    return sorted(by[0] & by[1])


def _spike_seeds(data: AtScale) -> dict:
    # {N: seeds} of the spike file, the fewer of the two batches'.
    s = data.runs["spike"]
    return {N: min(s.count(batch=b, N=N) for b in BATCH_ORDER) for N in s.axis()}


def seeds_text(data: AtScale) -> str:
    """The spike file's seeds per width for a caption: "means over 2 to 3 seeds per width"
    ("over 3 seeds" where every width has as many), with " (one draw at $N = ...$)" for the
    widths with a single seed; "one draw per width" where every width has one."""
    seeds = _spike_seeds(data)
    n = sorted(set(seeds.values()))
    if n == [1]:
        return "one draw per width"
    text = f"means over {n[0]} to {n[-1]} seeds" if len(n) > 1 else f"means over {n[0]} seeds"
    one = [str(N) for N in sorted(seeds) if seeds[N] == 1]
    return text + " per width" + (f" (one draw at $N = {', '.join(one)}$)" if one else "")


# --------------------------------------------------------------------------- provenance

def provenance_numbers(data: AtScale) -> dict:
    """Glue values of where the files come from: ``{name}_widths`` and ``{name}_seeds`` (the
    seeds per width, "3 at 1000, ...") of each file, and ``label`` (:func:`where_label`)."""
    out = {"label": where_label(data)}
    for name, doc in data.docs.items():
        Ns = data.runs[name].axis()
        per = doc.get("seeds_per_width") or {
            str(N): sorted({r["seed"] for r in data.runs[name].runs(N=N)}) for N in Ns}
        out[f"{name}_widths"] = ", ".join(str(N) for N in Ns)
        out[f"{name}_seeds"] = ", ".join(f"{len(v)} at {k}" for k, v in per.items())
    return out


def _provenance(doc: dict, Ns: list) -> dict:
    # What one results document records of how it was made (provenance_table, where_label).
    env, host = doc.get("environment", {}), doc.get("host", {})
    planned = doc.get("widths_planned") or Ns
    return {"backend": doc.get("backend", "?"), "device": env.get("device", doc.get("device", "?")),
            "dtype": doc.get("dtype", doc["params"].get("dtype", "?")),
            "date": str(doc.get("created", "?"))[:10],
            "minutes": float(doc.get("elapsed", float("nan"))) / 60,
            "version": doc.get("version", "?"), "numpy": env.get("numpy", "?"),
            "cores": host.get("cpu_count", "?"),
            "threads": host.get("OPENBLAS_NUM_THREADS") or "default", "nice": host.get("nice", "?"),
            "status": "ran to completion" if doc.get("complete", True) else
            f"was stopped after N = {Ns[-1]} (planned: N = {', '.join(str(N) for N in planned)})"}


def provenance_table(data: AtScale) -> tuple:
    """Table *tab-at-scale-provenance*: per file, where and how it was computed (backend and
    device, precision, UTC day, cores, BLAS threads asked for and ``nice`` level, versions),
    its wall time over all tasks, and whether it ran to completion."""
    p = {name: _provenance(doc, data.runs[name].axis()) for name, doc in data.docs.items()}
    fields = [("backend, device, dtype", "{backend}, {device}, {dtype}"), ("day (UTC)", "{date}"),
              ("cores / BLAS threads / nice", "{cores} / {threads} / {nice}"),
              ("twostep / numpy", "{version} / {numpy}"), ("wall time (min)", "{minutes:.0f}"),
              ("the run", "{status}")]
    return ([""] + [f"{name}.json" for name in data.docs],
            [[label] + [form.format(**p[name]) for name in data.docs] for label, form in fields])


def seeds_table(data: AtScale) -> tuple:
    """Table *tab-at-scale-seeds*: the seeds per width (rows) of each file (columns) that both
    batch schemes ran ("–" where a file has no run at that width)."""
    Ns = sorted({N for s in data.runs.values() for N in s.axis()})
    return (["$N$"] + [f"{name}.json" for name in data.docs],
            [[str(N)] + [str(len(_seeds(data, name, N))) if N in data.runs[name].axis() else "–"
                         for name in data.docs] for N in Ns])


def commands_text(data: AtScale) -> str:
    """The commands that wrote the files, in order (a resumed run lists every command it took),
    as shell lines with the file each wrote, for ``print`` in the chapter."""
    lines = []
    for name, doc in data.docs.items():
        p = _provenance(doc, data.runs[name].axis())
        lines.append(f"# results/at_scale/{name}.json ({p['backend']} backend, device "
                     f"{p['device']}, {p['date']})")
        lines += [str(c) for c in doc.get("commands") or [doc.get("command", "?")]]
    return "\n".join(lines)


def where_label(data: AtScale) -> str:
    """One line saying where the files were computed, from the spike file's provenance: on the
    host (numpy backend) "computed on a 2-core CPU in float32; no GPU run has been made (...)",
    on a device "computed on <device> in <dtype>"."""
    p = _provenance(data.docs["spike"], data.runs["spike"].axis())
    if p["backend"] == "numpy":
        return (f"computed on a {p['cores']}-core CPU in {p['dtype']}; no GPU run has been made "
                "(one would reach N = 32000–45000 with the same command)")
    return f"computed on {p['device']} ({p['backend']}) in {p['dtype']}"


def wall_table(data: AtScale) -> tuple:
    """Table *tab-at-scale-wall*: runs per width, their mean wall time and its standard deviation,
    and the process's peak resident memory (where the file records ``peak_rss_gb``), per file."""
    rows = []
    for name, s in data.runs.items():
        for N in s.axis():
            recs = s.runs(N=N)
            wall = np.array([r["wall_s"] for r in recs], dtype=float)
            peaks = [r["peak_rss_gb"] for r in recs if "peak_rss_gb" in r]
            rows.append([name, str(N), str(wall.size), f"{wall.mean():.1f}",
                         f"{wall.std(ddof=1):.1f}" if wall.size > 1 else "–",
                         f"{max(peaks):.1f}" if peaks else "–"])
    return ["file", "$N$", "tasks", "mean wall time (s)", "s.d. (s)", "peak memory (GB)"], rows


# --------------------------------------------------------------------------- the terms

def terms_table(data: AtScale, orders=(1, 2, 3)) -> tuple:
    r"""Table *tab-at-scale-terms*: per batch and width, for each order in ``orders``, the
    relative remainder :math:`\|T_k-S_k\|/\|S_k\|`, and the smallest over those orders of the
    cosines of :math:`T_k`'s top vectors with :math:`a^{\circ(k+1)}` and :math:`u_k` (means over
    seeds)."""
    s = data.runs["spike"]
    return (["batch", "$N$"] + [f"remainder, $k = {k}$" for k in orders]
            + ["cosine, left", "cosine, right"],
            [[b, str(N)] + [f"{s.at('rel', k, batch=b, N=N):.3f}" for k in orders]
             + [f"{min(s.at(side, k, batch=b, N=N) for k in orders):.3f}"
                for side in ("left", "right")] for b in BATCH_ORDER for N in s.axis()])


def terms_spread(data: AtScale, orders=(1, 2, 3)) -> str:
    r"""The spread of :func:`terms_table` for its caption: per batch, the largest standard error
    over seeds of a relative remainder and of a cosine (that of the order whose mean cosine is
    the entry); "" where every width has one seed."""
    s = data.runs["spike"]
    if max(_spike_seeds(data).values()) == 1:
        return ""
    sem = {b: (max(s.at("rel", k, sem=True, batch=b, N=N) for N in s.axis() for k in orders),
               max(s.at(side, min(orders, key=lambda k: s.at(side, k, batch=b, N=N)), sem=True,
                        batch=b, N=N) for N in s.axis() for side in ("left", "right")))
           for b in BATCH_ORDER}
    return (f" Largest standard error, fresh and reused: {sig(sem['fresh'][0])} and "
            f"{sig(sem['reused'][0])} for a remainder, {sig(sem['fresh'][1])} and "
            f"{sig(sem['reused'][1])} for a cosine.")


def terms_numbers(data: AtScale) -> dict:
    r"""Glue values at the largest width ``N_terms``: ``fresh_left_min``, ``fresh_right_min``,
    the smallest mean cosine of :math:`T_k`'s top left and right vectors with the predicted
    ones over :math:`k\le L-1`, fresh batch, and ``reused_rel_{L-1}``, the reused batch's
    relative remainder at the highest order (the rest is in :func:`terms_table`)."""
    s = data.runs["spike"]
    N = s.axis()[-1]
    return {"N_terms": N, "fresh_left_min": float(s.at("left", batch="fresh", N=N).min()),
            "fresh_right_min": float(s.at("right", batch="fresh", N=N).min()),
            f"reused_rel_{data.L - 1}": s.at("rel", data.L - 1, batch="reused",
                                             N=s.axis(batch="reused")[-1])}


def beta_limits(data: AtScale, psi: float = 1.0) -> dict:
    r"""Population overlap of :math:`u_k` with :math:`\beta^\star` for the spike file's target,
    ``{batch: array (L,)}`` (:func:`twostep.analysis.population.population_signal`)."""
    target = data.docs["spike"]["params"].get("target", "he1")
    return {b: np.array([float(population_signal(target, psi, k, b).overlaps[0])
                         for k in range(data.L)]) for b in BATCH_ORDER}


def plot_beta(data: AtScale, limits: dict):
    r"""Figure *fig-at-scale-beta*: :math:`|\cos(\hat r_k, \beta^\star)|` against :math:`N`, fresh
    (left) and reused (right), each order with its population value :math:`|\cos(u_k,\beta^\star)|`
    (dashed; ``limits`` from :func:`beta_limits`) and the chance level :math:`1/\sqrt N`."""
    s = data.runs["spike"]
    Ns = np.array(s.axis(), float)
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.9), sharey=True)
    for ax, batch in zip(axes, BATCH_ORDER):
        for k in range(data.L):
            col = K_COLORS[k % len(K_COLORS)]
            x, m, e = series(s, "beta", k, batch=batch)
            errorbars(ax, x * (1 + 0.02 * (k - 1.5)), m, e, color=col, label=f"$k = {k}$")
            if limits[batch][k] > 1e-8:
                ax.axhline(limits[batch][k], color=col, ls="--", lw=1)
        ax.plot(Ns, 1 / np.sqrt(Ns), color=COLORS["chance"], ls=":", lw=1.2,
                label=r"chance $1/\sqrt{N}$")
        ax.set(yscale="log", title=f"{batch} batch", ylim=(3e-3, 1.2))
        width_axis(ax, s.axis(), "$N$", thousands=True)
    axes[0].set_ylabel(r"$|\cos(\hat r_k,\ \beta^\star)|$")
    legend_below(fig, axes[1], ncol=5)
    return finished(fig)


def beta_numbers(data: AtScale, limits: dict) -> dict:
    r"""Glue values ``fresh_beta_{k}`` (mean at the largest width) and ``fresh_beta_lim_{k}``
    for ``k = 0, 2`` (the orders with a non-zero population overlap for :math:`\mathrm{He}_1`
    with a fresh batch; every order and both batches are in the figure)."""
    s = data.runs["spike"]
    N = s.axis(batch="fresh")[-1]
    out = {}
    for k in (0, 2):
        out[f"fresh_beta_{k}"] = s.at("beta", k, batch="fresh", N=N)
        out[f"fresh_beta_lim_{k}"] = float(limits["fresh"][k])
    return out


# --------------------------------------------------------------------------- the count

def grid_counts(data: AtScale, batch: str, N: int) -> np.ndarray:
    r"""Raw outlier counts of :math:`W_2` at the grid points, ``(runs, points)`` at one width."""
    return data.runs["spike"].seed_values("grid_count", batch=batch, N=N)


def count_hits(data: AtScale, batch: str, N: int, lam_min: int = 0, lam_max: int = 99,
               every_run: bool = False) -> tuple:
    r"""(hits, points) at one width over the grid points with ``lam_min`` :math:`\le\Lambda\le`
    ``lam_max``: the points whose seed-mean count rounds to :math:`1+\Lambda`, or with
    ``every_run`` the (run, point) pairs whose count is :math:`1+\Lambda`."""
    mask = (data.lam >= lam_min) & (data.lam <= lam_max)
    c = grid_counts(data, batch, N)[:, mask]
    if every_run:
        return int(np.sum(c == 1 + data.lam[mask])), int(c.size)
    return int(np.sum(np.rint(c.mean(axis=0)) == 1 + data.lam[mask])), int(mask.sum())


def plot_counts(data: AtScale):
    r"""Figure *fig-at-scale-counts*: mean raw count of :math:`W_2` over the grid points of each
    :math:`\Lambda` (and seeds) against :math:`N`, fresh (left) and reused (right), with the
    theory's :math:`1+\Lambda` (dashed)."""
    Ns = data.runs["spike"].axis()
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.9), sharey=True)
    for ax, batch in zip(axes, BATCH_ORDER):
        for lam in sorted(set(data.lam.tolist())):
            col = K_COLORS[lam % len(K_COLORS)]
            vals = [grid_counts(data, batch, N)[:, data.lam == lam] for N in Ns]
            sem = [mean_sem(v.mean(axis=1))[1] if len(v) > 1 else math.nan for v in vals]
            # Open markers of growing size and their own shape: under reuse several Lambda
            # sit at the same ceiling, and a filled marker would hide the one drawn before.
            errorbars(ax, Ns, [v.mean() for v in vals], sem, color=col, marker="osD^v"[lam % 5],
                      mfc="none", ms=5 + 1.5 * lam,
                      label=f"$\\Lambda = {lam}$ ({int(np.sum(data.lam == lam))} points)")
            ax.axhline(1 + lam, color=col, ls="--", lw=1)
        ax.set_title(f"{batch} batch")
        width_axis(ax, Ns, "$N$", thousands=True)
    axes[0].set_ylabel(r"raw outliers of $W_2$ (above $2\times1.05$)")
    legend_below(fig, axes[0], ncol=4)
    return finished(fig)


def counts_table(data: AtScale) -> tuple:
    r"""Table *tab-at-scale-counts*: per batch and width, the grid points where the seed-mean
    raw count equals :math:`1+\Lambda`, for :math:`\Lambda = 0` and :math:`\Lambda\ge1`, and the
    mean count per :math:`\Lambda`."""
    lams = sorted(set(data.lam.tolist()))
    return (["batch", "$N$", "hits, $\\Lambda = 0$", "hits, $\\Lambda\\ge1$"]
            + [f"$\\Lambda = {lam}$ ({1 + lam})" for lam in lams],
            [[b, str(N), "{} / {}".format(*count_hits(data, b, N, 0, 0)),
              "{} / {}".format(*count_hits(data, b, N, 1))]
             + [f"{grid_counts(data, b, N)[:, data.lam == lam].mean():.2f}" for lam in lams]
             for b in BATCH_ORDER for N in data.runs["spike"].axis()])


def counts_spread(data: AtScale) -> str:
    r"""The end of the caption of :func:`counts_table`: the seeds per width (:func:`seeds_text`)
    and each batch's largest standard error over seeds of a mean count (per seed, the mean
    over the points of one :math:`\Lambda`) at the widths with more than one seed."""
    text, s = seeds_text(data), data.runs["spike"]
    text = text[0].upper() + text[1:]
    if max(_spike_seeds(data).values()) == 1:
        return text
    sem = {b: max((mean_sem(grid_counts(data, b, N)[:, data.lam == lam].mean(axis=1))[1]
                   for N in s.axis() if s.count(batch=b, N=N) > 1
                   for lam in set(data.lam.tolist())), default=0.0) for b in BATCH_ORDER}
    return (f"{text}; the largest standard error of a mean count is {sig(sem['fresh'])} "
            f"(fresh) and {sig(sem['reused'])} (reused)")


def counts_numbers(data: AtScale) -> dict:
    r"""Glue values at the largest width ``N_count``: ``fresh_hits1`` of ``fresh_total1`` grid
    points with :math:`\Lambda\ge1` whose seed-mean count rounds to :math:`1+\Lambda` (both
    batches and every :math:`\Lambda` are in :func:`counts_table`)."""
    N = data.runs["spike"].axis()[-1]
    hits, total = count_hits(data, "fresh", N, 1)
    return {"N_count": N, "fresh_hits1": hits, "fresh_total1": total}


def count_rises(data: AtScale, batch: str = "fresh") -> dict:
    r"""What the two widest widths of the spike file add to the count: the grid points with
    :math:`\Lambda\ge1` whose raw count rises from the second-widest width to the widest on
    every seed both hold, as text (``rises_text``; each point with :math:`\Lambda` and the
    seeds' counts), their number ``rises_n``, the widths ``rises_from``, ``rises_to`` and the
    seeds ``rises_seeds``; and the points with at least two outliers on every seed at the widest
    (``several_text``, ``several_n``)."""
    lo, hi = data.runs["spike"].axis()[-2:]
    a, b = grid_counts(data, batch, lo), grid_counts(data, batch, hi)
    seeds = min(len(a), len(b))     # seeds 0 .. k-1 at every width
    parts, several = [], []
    for i, (a1, a2) in enumerate(data.grid):
        lam = data.lam[i]
        if lam >= 1 and np.all(b[:seeds, i] > a[:seeds, i]):
            before = ", ".join(f"{v:.0f}" for v in a[:seeds, i])
            after = ", ".join(f"{v:.0f}" for v in b[:seeds, i])
            parts.append(f"({a1:g}, {a2:g}) with Λ = {lam} (1 + Λ = {1 + lam}): {before} → {after}")
        if lam >= 1 and np.all(b[:, i] >= 2):
            several.append(f"({a1:g}, {a2:g}) with Λ = {lam}")
    return {"rises_text": "; ".join(parts) or "none", "rises_n": len(parts), "rises_from": lo,
            "rises_to": hi, "rises_seeds": seeds, "several_text": "; ".join(several) or "none",
            "several_n": len(several)}


# --------------------------------------------------------------------------- how large must N be

def extrapolation(count: dict, settings=SETTINGS, chapter_Ns=CHAPTER_NS, margin: float = 0.05) -> list:
    r""":func:`~twostep.analysis.plane.spike_widths` of the fresh runs of ``count`` (the count
    results document) at ``settings``, to :math:`\theta_\star` (:func:`outlier_strength` at
    :math:`N/d = 1`): the strength of the :math:`k`-th new spike is :math:`s_{k+1}(\Sigma)`, the
    corrected spike sum rebuilt at :math:`\eta_t = \kappa N^{\alpha_t}` from each record's core
    (:func:`~twostep.analysis.plane.spike_sum_values`), as in the two-steps chapter's
    :math:`S_k^{\rm corr}` column. Each row also holds ``theta_star``, ``kappa``, the largest
    width ``N_max`` and ``n_star_chapter``, from the widths within ``chapter_Ns`` alone (the
    largest of which is ``N_chapter``)."""
    theta, kappa = outlier_strength(1.0, margin), float(count["params"]["c"])
    recs = [r for r in count["records"] if r["batch"] == "fresh"]
    N = np.array([r["N"] for r in recs], float)
    x = np.array([spike_sum_values(r, settings, kappa) for r in recs])      # (R, S, L + 1)
    inside = np.isin(N, chapter_Ns)
    rows = spike_widths(N, x, settings, theta)
    chapter = (spike_widths(N[inside], x[inside], settings, theta)
               if len(set(N[inside])) >= 2 else [{"n_star": math.nan}] * len(rows))
    for r, c in zip(rows, chapter):
        r.update(theta_star=theta, kappa=kappa, N_max=int(N.max()), n_star_chapter=c["n_star"],
                 N_chapter=int(N[inside].max()) if inside.any() else None)
    return rows


def extrapolation_table(rows: list) -> tuple:
    r"""Table *tab-at-scale-extrapolation* from the rows of :func:`extrapolation`."""
    to_ch = rows[0]["N_chapter"] if rows[0]["N_chapter"] is not None else "-"
    return (["$(\\alpha_1,\\alpha_2)$, $\\Lambda$", "$k$", "$e_k$", f"$N^\\star$, to {to_ch}",
             f"$N^\\star$, to {rows[0]['N_max']}", "fitted exponent", "$N^\\star$, fitted"],
            [[f"({r['a1']:g}, {r['a2']:g}), {r['lam']}", str(r["k"]), f"{r['e']:+.2f}",
              nstar_text(r["n_star_chapter"]), nstar_text(r["n_star"]),
              pm(r["e_fit"], r["e_fit_se"], 3, signed=True), nstar_text(r["n_fit"])] for r in rows])


def extrapolation_numbers(rows: list) -> dict:
    r"""Glue values of the spike with the smallest :math:`N^\star`, named by its setting and
    order (e.g. ``nstar_45_30_1``, so that a page naming it fails to build when another becomes
    the first): ``nstar_...`` from all widths, ``nstar_ch_...`` from the chapter's; the next
    smallest ``nstar_second``, "beyond" or "within" the GPU run's largest planned width 45000
    (``nstar_second_gpu``); ``theta_star``; whether the file's largest width "lies beyond" or
    "falls short of" the smallest (``nstar_min_reach``); ``nstar_steeper`` of ``nstar_orders``,
    the orders whose fitted exponent lies over two standard errors above :math:`e_k`."""
    first = min(rows, key=lambda r: r["n_star"])
    tag = f"{round(100 * first['a1'])}_{round(100 * first['a2'])}_{first['k']}"
    ordered = sorted(r["n_star"] for r in rows)
    second = ordered[1] if len(ordered) > 1 else ordered[0]
    return {"theta_star": rows[0]["theta_star"], f"nstar_{tag}": nstar_text(first["n_star"]),
            f"nstar_ch_{tag}": nstar_text(first["n_star_chapter"]),
            "nstar_second": nstar_text(second),
            "nstar_second_gpu": "beyond" if second > 45000 else "within",
            "nstar_min_reach": "lies beyond" if rows[0]["N_max"] >= ordered[0] else "falls short of",
            "nstar_steeper": sum(r["e_fit"] - r["e"] > 2 * r["e_fit_se"] for r in rows),
            "nstar_orders": len(rows)}


# --------------------------------------------------------------------------- reuse

def paired_from_files(data: AtScale) -> PairedData:
    r"""The reuse files as the reuse chapter's paired runs
    (:class:`twostep.pages.paired.PairedData`, one configuration per file: ``"reuse"`` and, if
    given, ``"reuse_he2"``), pairing the reused and the fresh record of each seed, so that the
    chapter's test of :math:`T_2^\top a^{\circ3}` (:func:`~twostep.pages.paired.term_verdicts`,
    :func:`~twostep.pages.paired.plot_term_evidence`) reads the files unchanged."""
    configs, records = {}, []
    for name in ("reuse", "reuse_he2"):
        if name not in data.docs:
            continue
        p, runs = data.docs[name]["params"], data.runs[name]
        configs[name] = PairedConfig(PAIRED_LABELS[name], p.get("activation", "poly4"),
                                     p.get("target", "odd"), float(p.get("c1", 0.5)))
        for N in runs.axis():
            by = {b: {r["seed"]: r for r in runs.runs(batch=b, N=N)} for b in BATCH_ORDER}
            for seed in _seeds(data, name, N):
                records.append({"config": name, "N": N, "seed": seed} | {
                    f"{key}_{b}": float(np.asarray(by[b][seed][key], float).ravel()[0])
                    for b in BATCH_ORDER for key in TERM_KEYS})
    p = data.docs["reuse"]["params"]
    a2 = float(p.get("alpha2", 0.25))
    return PairedData(configs, (a2,), (n_spikes(float(p.get("alpha1", 0.4)), a2, data.L),), records)


def width_numbers(data: PairedData, limits: Limits, main: str, control: str,
                  prefix: str = "vw") -> dict:
    r"""Glue values ``<prefix>_<row>_<N>`` of the labels of :func:`~twostep.pages.paired.term_verdicts`
    at every width of ``main`` (rows ``reuse``, ``fresh``, and ``even`` at the control's own
    widths), for the landing page's table of verdicts at each width (moved from
    :mod:`twostep.pages.paired`, whose chapter glues its own)."""
    labels = {"reuse": {}, "fresh": {}, "even": {}}
    for N in data.Ns(main):
        for row, vd in term_verdicts(data, limits, main, control, N).items():
            if row in labels and vd is not None and (row != "even" or N in data.Ns(control)):
                labels[row][N] = vd.label
    return {k: v for row, by_N in labels.items()
            for k, v in width_verdicts(f"{prefix}_{row}", by_N).items()}


def term_evidence_numbers(data: PairedData, limits: Limits, main: str, control: str) -> dict:
    r"""Values of the exact-term evidence for ``main`` that the appendix *At scale* quotes,
    reused batch unless named: at the smallest width (``*_lo``) and the largest (``*_hi``) the
    top vector's memorisation, the widths ``ev_N_lo``, ``ev_N_hi``; at the largest the
    projection ``proj_re`` (``_sem``), :math:`\tilde u_2` of the same runs ``proj_ut``, the
    theory ``proj_theory``; the verdicts of :func:`term_verdicts` as text and ``proj_z``."""
    Ns = data.Ns(main)
    mean = lambda width, key: float(data.stat(main, width, key, "reused")[0])  # noqa: E731
    out = {"ev_N_lo": Ns[0], "ev_N_hi": Ns[-1], "memo_lo": mean(Ns[0], "term_memorisation"),
           "memo_hi": mean(Ns[-1], "term_memorisation"), "proj_ut": mean(Ns[-1], "signal_reuse"),
           "proj_theory": limits.overlap(data.configs[main].target, "reused", aware=True)}
    out["proj_re"], out["proj_re_sem"] = data.stat(main, Ns[-1], "projected_overlap", "reused")
    verdicts = term_verdicts(data, limits, main, control)
    out.update({f"verdict_{k}": str(vd) for k, vd in verdicts.items()})
    out["proj_z"] = verdicts["reuse"].t_null
    return out


def widest_projection(paired: PairedData) -> dict:
    r"""Glue values of what the widest width adds to the reused :math:`T_2^\top a^{\circ3}`: its
    mean and standard error over seeds at the largest width of the reuse file, ``N_last``
    (``proj_last``, ``proj_last_sem``, and the seeds ``seeds_last``). Its slope against
    :math:`N` is :func:`trend_numbers`' ``proj_slope``."""
    N = paired.Ns("reuse")[-1]
    x = paired.values("reuse", N, "projected_overlap", "reused")
    proj, sem = mean_sem(x)
    return {"N_last": N, "seeds_last": int(x.size), "proj_last": proj, "proj_last_sem": sem}


def top_vector_split(paired: PairedData, threshold: float = 0.5) -> dict:
    r"""Glue values of what the reused :math:`T_2`'s top right vector is (a memorised input or
    the spike, the larger of the two), run by run over the reuse file: ``split_seeds`` runs,
    ``split_memorised`` of them with a memorisation :math:`\max_j|\cos(v_1, x_j)|` of at least
    ``threshold``, and ``split_text``, the unmemorised runs per width ("2 of 10 at N = 4000,
    ...") and each group's mean overlap with :math:`\beta^\star`."""
    Ns = paired.Ns("reuse")
    memo = [paired.values("reuse", N, "term_memorisation", "reused") for N in Ns]
    parts = [f"{int(np.sum(m < threshold))} of {m.size} at N = {N}" for N, m in zip(Ns, memo)]
    memo = np.concatenate(memo)
    overlap = np.concatenate([paired.values("reuse", N, "term_overlap", "reused") for N in Ns])
    won = memo >= threshold
    out = {"split_seeds": int(memo.size), "split_memorised": int(won.sum())}
    if won.any() and not won.all():
        out["split_text"] = (
            f"In {int((~won).sum())} of the {out['split_seeds']} reused runs "
            f"({', '.join(parts)}) no input reaches a memorisation of {threshold:g}; "
            f"there the top vector overlaps β⋆ at {overlap[~won].mean():.3f} on "
            f"average, against {overlap[won].mean():.3f} where an input wins.")
    else:
        out["split_text"] = (f"In {'every' if out['split_memorised'] else 'no'} one of the "
                             f"{out['split_seeds']} reused runs does an input reach a "
                             f"memorisation of {threshold:g}.")
    return out


# --------------------------------------------------------------------------- trends

def trends(data: AtScale, paired: PairedData) -> list:
    r"""The appendix's trends against :math:`N`, least-squares slopes (:func:`_trend`) over every
    seed's value: the relative remainders :math:`\|T_k-S_k\|/\|S_k\|` per batch and order
    (``rem_{batch}_{k}``, in :math:`\log_{10}`: a power of :math:`N`), and per decade of
    :math:`N` the fresh-batch mean raw count at :math:`\Lambda\ge1` (``count``), the paired
    difference of :math:`T_2`'s top vector (``raw``), the reused :math:`T_2^\top a^{\circ3}`
    (``proj``) and its memorised-input null (``null``). One dict each: ``key``, ``quantity``,
    ``unit``, ``slope``, ``se``, ``points`` (values fitted) and the means ``lo``, ``prev``,
    ``hi`` at the widths ``N_lo`` (smallest), ``N_prev`` (before the largest), ``N_hi``."""
    rows = []

    def add(key, quantity, unit, by_N, log_y=False):
        Ns = sorted(by_N)
        slope, se = _trend(by_N, log_y=log_y)
        prev = Ns[-2] if len(Ns) > 1 else Ns[-1]
        rows.append({"key": key, "quantity": quantity, "unit": unit, "N_lo": Ns[0], "N_hi": Ns[-1],
                     "lo": float(np.mean(by_N[Ns[0]])), "hi": float(np.mean(by_N[Ns[-1]])),
                     "N_prev": prev, "prev": float(np.mean(by_N[prev])), "slope": slope, "se": se,
                     "points": sum(len(v) for v in by_N.values())})

    s = data.runs["spike"]
    for batch in BATCH_ORDER:
        for k in range(1, data.L):
            add(f"rem_{batch}_{k}", rf"$\|T_{k}-S_{k}\|/\|S_{k}\|$, {batch}", "exponent of $N$",
                {N: s.seed_values("rel", k, batch=batch, N=N) for N in s.axis(batch=batch)},
                log_y=True)
    add("count", r"mean raw count, $\Lambda\ge1$, fresh", "per decade",
        {N: grid_counts(data, "fresh", N)[:, data.lam >= 1].mean(axis=1) for N in s.axis()})
    for tag, label, key, batch in (("raw", r"$T_2$ top vector, reused − fresh", "term_overlap", "diff"),
                                   ("proj", r"$T_2^\top a^{\circ3}$, reused", "projected_overlap", "reused"),
                                   ("null", r"memorised inputs alone", "projected_memorised_null", "reused")):
        add(tag, label, "per decade", {N: paired.values("reuse", N, key, batch) for N in paired.Ns("reuse")})
    return rows


def _trend(by_N: dict, log_y: bool = False) -> tuple:
    """``(slope, se)`` of every seed's value (``{N: values}``; their log10 if ``log_y``) against
    log10 N (:func:`~twostep.analysis.sweep.linear_slope`); NaN where the values do not span two
    widths and three points."""
    Ns = sorted(by_N)
    x = np.concatenate([np.full(len(by_N[N]), math.log10(N)) for N in Ns])
    y = np.concatenate([np.log10(by_N[N]) if log_y else np.asarray(by_N[N], float) for N in Ns])
    if len(Ns) < 2 or x.size < 3:
        return math.nan, math.nan
    return linear_slope(x, y)


def trends_table(rows: list) -> tuple:
    """Table *tab-at-scale-trends*: each trend of :func:`trends` with its means at the smallest
    width, at the width before the largest and at the largest, and its fitted slope ± standard
    error."""
    return (["quantity (slope as)", "$N$", "means", "slope"],
            [[f"{r['quantity']} ({r['unit']})", f"{r['N_lo']}, {r['N_prev']}, {r['N_hi']}",
              f"{r['lo']:.3f}, {r['prev']:.3f} → {r['hi']:.3f}", pm(r["slope"], r["se"], 3, signed=True)]
             for r in rows])


def widest_step_text(rows: list) -> str:
    """What the largest width adds, in words computed from :func:`trends`' rows: at how many
    orders the remainders fall from the width before the largest to the largest, per batch, and
    where the count and the three reuse measurements go (their means at the two widths)."""
    by = {r["key"]: r for r in rows}
    parts = []
    for batch in BATCH_ORDER:
        rem = [r for key, r in by.items() if key.startswith(f"rem_{batch}_")]
        if rem:
            fall = sum(r["hi"] < r["prev"] for r in rem)
            parts.append(f"the {batch}-batch remainders fall at {fall} of {len(rem)} orders")
    names = {"count": "the fresh-batch mean count at Λ ≥ 1",
             "raw": "the reused-minus-fresh overlap of T₂'s top vector",
             "proj": "the reused T₂ seen through a^∘3", "null": "the memorised inputs' own span"}
    widths = {(r["N_prev"], r["N_hi"]) for r in rows}
    for key, name in names.items():
        if key in by:
            r = by[key]
            at = f" (N = {r['N_prev']} to {r['N_hi']})" if len(widths) > 1 else ""
            parts.append(f"{name} goes from {r['prev']:.3f} to {r['hi']:.3f}{at}")
    return f"From N = {rows[0]['N_prev']} to N = {rows[0]['N_hi']}, " + "; ".join(parts) + "."


def trend_numbers(rows: list) -> dict:
    r"""Glue values of :func:`trends`: ``rem_slope_{batch}_{k}`` and ``rem_slope_se_{batch}_{k}``
    (remainders, as exponents of :math:`N`), ``rem_fresh_z_max`` (the largest distance of a
    fresh-batch exponent from :math:`-1/2`, in its standard errors), and, per decade of
    :math:`N`, ``{key}_slope`` and ``{key}_slope_se`` for ``count``, ``raw`` and ``proj``."""
    rem = {r["key"]: r for r in rows if r["key"].startswith("rem_")}
    out = {"rem_fresh_z_max": max((abs(r["slope"] + 0.5) / r["se"] for key, r in rem.items()
                                   if key.startswith("rem_fresh_")), default=math.nan)}
    for key, r in rem.items():
        out[f"rem_slope_{key[4:]}"], out[f"rem_slope_se_{key[4:]}"] = r["slope"], r["se"]
    for r in rows:
        if r["key"] in ("count", "raw", "proj"):
            out[f"{r['key']}_slope"], out[f"{r['key']}_slope_se"] = r["slope"], r["se"]
    return out


# --------------------------------------------------------------------------- what the widths show

def verdict_numbers(data: AtScale, rows: list) -> dict:
    r"""What the files show at their largest widths, in words computed from them (so the
    take-aways follow the files): ``beyond_text``, whether they reach beyond the chapters'
    largest width; ``count_hits_text`` ("0 of 20"), the fresh (seed, grid point) pairs with
    :math:`\Lambda\ge1` at the widest width whose raw count equals :math:`1+\Lambda`, and
    ``count_verdict``, the rule's verdict on them; ``trend_text``, whether the
    :data:`~twostep.analysis.verdicts.CONFIDENCE` interval (Student :math:`t`, points minus two
    degrees of freedom) of the slope of the paired difference (the ``raw`` row of
    :func:`trends`) contains zero: a description of a slope that no claim predicts, not a
    verdict."""
    raw = next(r for r in rows if r["key"] == "raw")
    slope, se, points = raw["slope"], raw["se"], raw["points"]
    # its CONFIDENCE interval; one that cannot be fitted (too few points) contains zero
    lo, hi = t_interval(slope, se, points - 1) if points > 2 and np.isfinite(se) else (0, 0)
    where = ("contains zero" if not np.isfinite(slope) or lo <= 0 <= hi
             else f"lies {'above' if lo > 0 else 'below'} zero")
    N_max = max(data.runs["spike"].axis()[-1], data.runs["reuse"].axis()[-1])
    N_count = data.runs["spike"].axis()[-1]
    exact = count_hits(data, "fresh", N_count, 1, every_run=True)
    beyond = N_max > max(CHAPTER_NS)
    return {
        "beyond_text": (f"reach N = {N_max}, beyond the chapters' largest width {max(CHAPTER_NS)}"
                        if beyond else f"stop at N = {N_max}, the chapters' own largest width: "
                        "they add seeds and paired runs, not range"),
        "count_hits_text": f"{exact[0]} of {exact[1]}",
        # one outcome per draw (run): its grid points share it
        "count_verdict": share(list(np.all(grid_counts(data, "fresh", N_count)[:, data.lam >= 1]
                                           == 1 + data.lam[data.lam >= 1], axis=1))).label,
        "trend_text": f"a slope whose {100 * CONFIDENCE:g} % interval {where}",
    }
