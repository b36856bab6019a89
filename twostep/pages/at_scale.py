r"""Appendix *At scale*: the book's measurements read back from the committed results files.

The appendix runs no simulation. ``tools/at_scale.py`` writes ``results/at_scale/spike.json``
(:func:`twostep.scale.device.spike_on`: the exact terms :math:`T_k` of the two-steps chapter's
reference setting, their top vectors and remainders, and :math:`W_2`'s raw outlier count over
the 25-point phase grid) and ``results/at_scale/reuse.json``
(:func:`twostep.scale.device.reuse_on`: where :math:`T_2` and :math:`W_2` point for the odd
bounded target, reused and fresh batch, same seed = same :math:`\beta^\star, W_0, a, X_1`). The
chapter reads both with :func:`twostep.scale.results.read_results` and hands the documents to
:func:`at_scale_data`; everything else is here, one compute and one plot function per figure:

* :func:`terms_table` and :func:`plot_terms`: remainders and cosines of :math:`T_k` against
  :math:`N`; :func:`plot_beta`: the overlap of :math:`T_k`'s top right vector with
  :math:`\beta^\star` against the population overlap of :math:`u_k`
  (:func:`twostep.analysis.population.population_signal`);
* :func:`count_data`, :func:`plot_counts`, :func:`counts_table`: the raw count against
  :math:`1+\Lambda` (:func:`twostep.analysis.theory.n_spikes`);
* :func:`extrapolation` and :func:`extrapolation_table`: the width :math:`N^\star` at which each
  predicted spike reaches :math:`\theta_\star`, from the spike-sum cores of the count file
  (``results/at_scale/count.json``) by the two-steps chapter's definition
  (:func:`~twostep.analysis.plane.extrapolated_width`), over that chapter's widths and over all
  widths here;
* :func:`reuse_data`: :math:`T_2`'s top vector's overlap with :math:`\beta^\star`, reused and
  fresh, the paired difference per seed; :func:`paired_from_files`: the reuse files as the reuse
  chapter's paired runs, so that its test of :math:`T_2^\top a^{\circ3}`, figure and table
  (:func:`twostep.pages.paired.plot_term_evidence`) read them; :func:`widest_projection`;
* the numbers glued into the prose (``*_numbers``) and :func:`provenance_numbers`,
  :func:`wall_table`.

This layer may not import :mod:`twostep.scale`, so it takes the documents, not the paths.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from .._validation import check_choice, check_int, check_pairs, check_real
from ..analysis.population import population_signal
from ..analysis.plane import extrapolated_width, spike_sum_values
from ..analysis.spikes import outlier_strength
from ..analysis.sweep import linear_slope, loglog_slope
from ..analysis.theory import n_spikes, spike_exponent
from ..analysis.verdicts import CONFIDENCE, count_verdict, mean_sem, verdict, worst
from ..model.activations import get_activation
from . import figures as plotting
from ..analysis.population import population_limits
from .figures import COLORS
from .paired import PairedConfig, PairedData
from .report import markdown_table, sci, sig, width_verdicts

#: The files the appendix reads, under :func:`results_folder`: the spike file, the reuse file
#: (odd bounded link) and its control (the same runs with the even link He_2).
NAMES = ("spike", "reuse", "reuse_he2")
#: Every committed results file: the appendix's and the count test that *Two steps* reads.
RESULTS_FILES = NAMES + ("count",)
BATCHES = ("fresh", "reused")
K_COLORS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a"]
SPIKE_KEYS = ("N", "batch", "seed", "top", "signal", "residual", "left", "right", "beta",
              "scale", "grid_count")
COUNT_KEYS = ("N", "batch", "seed", "core_left", "core_right", "core_free")
REUSE_KEYS = ("N", "batch", "seed", "term_overlap", "signal_reuse", "term_memorisation",
              "term_input_overlap", "projected_overlap", "projected_random_sign",
              "projected_memorised_null", "projected_without_memorised",
              "projected_participation", "projected_memorisation")
#: The two-steps chapter's settings (Lambda = 0, 1, 2, 3) and widths.
SETTINGS = ((0.2, 0.2), (0.3, 0.3), (0.4, 0.25), (0.45, 0.3))
CHAPTER_NS = (500, 1000, 2000, 4000)


def results_folder() -> Path:
    """``results/at_scale`` of the repository holding this package (an editable install, a
    checkout), or else the current folder: a reader who downloaded the appendix's notebook
    and its results files from the site puts them side by side and runs it there."""
    repository = Path(__file__).resolve().parents[2] / "results" / "at_scale"
    return repository if repository.is_dir() else Path.cwd()


def results_path(name: str, folder=None) -> Path:
    """The path of results file ``name`` (one of :data:`RESULTS_FILES`) in ``folder``
    (default :func:`results_folder`)."""
    check_choice(name, "name", RESULTS_FILES)
    return (results_folder() if folder is None else Path(folder)) / f"{name}.json"


@dataclass
class AtScale:
    """The results documents, checked, with their widths and the spike file's grid
    (``reuse_he2``, the even-link control, may be ``None``)."""

    spike: dict
    reuse: dict
    grid: list
    L: int
    reuse_he2: dict | None = None

    @property
    def names(self) -> list:
        """The names of the files given, in :data:`NAMES` order."""
        return [name for name in NAMES if getattr(self, name) is not None]

    def Ns(self, name: str) -> list:
        """Widths of file ``name``, ascending."""
        return sorted({r["N"] for r in self.doc(name)["records"]})

    def doc(self, name: str) -> dict:
        doc = getattr(self, check_choice(name, "name", NAMES))
        if doc is None:
            raise ValueError(f"no {name!r} results file was given to at_scale_data")
        return doc

    def records(self, name: str, batch: str | None = None, N: int | None = None) -> list:
        """Records of file ``name`` (optionally of one batch and width), in file order."""
        out = self.doc(name)["records"]
        if batch is not None:
            check_choice(batch, "batch", BATCHES)
            out = [r for r in out if r["batch"] == batch]
        if N is not None:
            out = [r for r in out if r["N"] == N]
        return out


def _check_doc(doc, name: str, keys) -> dict:
    if not isinstance(doc, dict):
        raise TypeError(f"{name} must be a results document (read_results), got {type(doc).__name__}")
    if doc.get("experiment") != name:
        raise ValueError(f"{name} must be the {name!r} results file, got experiment "
                         f"{doc.get('experiment')!r}")
    records = doc.get("records")
    if not isinstance(records, list) or not records:
        raise ValueError(f"{name} has no records")
    for i, r in enumerate(records):
        missing = [k for k in keys if k not in r]
        if missing:
            raise ValueError(f"{name} record {i} lacks {missing}")
        if r["batch"] not in BATCHES:
            raise ValueError(f"{name} record {i} has batch {r['batch']!r}")
    return doc


def at_scale_data(spike, reuse, reuse_he2=None) -> AtScale:
    """Check the documents of :func:`twostep.scale.results.read_results` and bundle them."""
    spike = _check_doc(spike, "spike", SPIKE_KEYS)
    reuse = _check_doc(reuse, "reuse", REUSE_KEYS)
    if reuse_he2 is not None:
        reuse_he2 = _check_doc(reuse_he2, "reuse_he2", REUSE_KEYS)
    grid = [(float(a1), float(a2)) for a1, a2 in
            check_pairs(spike["params"].get("grid", ()), "spike['params']['grid']", "an (alpha1, alpha2) pair")]
    for i, r in enumerate(spike["records"]):
        if len(r["grid_count"]) != len(grid):
            raise ValueError(f"spike record {i} has {len(r['grid_count'])} grid counts for a grid of {len(grid)}")
    L = get_activation(spike["params"].get("activation", "poly4")).degree
    return AtScale(spike=spike, reuse=reuse, grid=grid, L=L, reuse_he2=reuse_he2)


def _check(data) -> AtScale:
    if not isinstance(data, AtScale):
        raise TypeError(f"data must be an AtScale (from at_scale_data), got {type(data).__name__}")
    return data


def width_stats(records, value) -> dict:
    r"""Per width: mean, standard deviation (``ddof=1``; 0 for one seed) and count of
    ``value(record)`` (a number or an array) over ``records``. Returns ``{N: (mean, sd, n)}``."""
    if not callable(value):
        raise TypeError(f"value must be a function of a record, got {type(value).__name__}")
    by = {}
    for r in records:
        by.setdefault(r["N"], []).append(np.asarray(value(r), dtype=float))
    out = {}
    for N in sorted(by):
        x = np.array(by[N])
        sd = x.std(axis=0, ddof=1) if len(x) > 1 else np.zeros_like(x[0])
        out[N] = (x.mean(axis=0), sd, len(x))
    return out


def _series(stats: dict, index=(), sem: bool = True):
    # (widths, means, standard errors, or standard deviations with sem=False) of width_stats;
    # a width with a single seed has no spread to show: NaN, which draws no error bar.
    Ns = np.array(sorted(stats), float)
    mean = np.array([stats[N][0][index] for N in sorted(stats)])
    sd = np.array([stats[N][1][index] / (math.sqrt(stats[N][2]) if sem else 1.0)
                   if stats[N][2] > 1 else math.nan for N in sorted(stats)])
    return Ns, mean, sd


def _seeds_text(seeds: dict) -> str:
    """``{N: seeds}`` for a caption: "means over 2 to 3 seeds per width" ("over 3 seeds" where
    every width has as many), with " (one draw at $N = ...$)" for the widths with a single
    seed; "one draw per width" where every width has one."""
    n = sorted(set(seeds.values()))
    if n == [1]:
        return "one draw per width"
    text = f"means over {n[0]} to {n[-1]} seeds" if len(n) > 1 else f"means over {n[0]} seeds"
    one = [str(N) for N in sorted(seeds) if seeds[N] == 1]
    return text + " per width" + (f" (one draw at $N = {', '.join(one)}$)" if one else "")


def _log_ticks(ax, Ns):
    import matplotlib.pyplot as plt

    # In thousands, so that five widths fit under a panel a third of the column wide.
    ax.set_xscale("log")
    ax.set_xticks(list(Ns), [f"{N / 1000:g}" for N in Ns])
    ax.xaxis.set_minor_locator(plt.NullLocator())


# --------------------------------------------------------------------------- provenance

def provenance(data: AtScale) -> dict:
    r"""Where and how the files were made, by name: ``{name}_command``, ``{name}_backend``,
    ``{name}_device``, ``{name}_dtype``, ``{name}_date`` (UTC day), ``{name}_minutes`` (wall time
    of all tasks), ``{name}_version`` (of twostep), ``{name}_numpy``, ``{name}_cores``,
    ``{name}_threads`` (BLAS threads asked for), ``{name}_widths`` (text), ``{name}_N_max``,
    ``{name}_seeds`` (seeds per width as text), ``{name}_status`` ("ran to completion" or "was
    stopped after N = ... (planned: ...)") for ``name`` in ``spike``, ``reuse``; ``label``
    (:func:`where_label`)."""
    d = _check(data)
    out = {}
    for name in d.names:
        doc = d.doc(name)
        env = doc.get("environment", {})
        host = doc.get("host", {})
        per = doc.get("seeds_per_width") or {str(N): sorted({r["seed"] for r in d.records(name, N=N)})
                                             for N in d.Ns(name)}
        out.update({
            f"{name}_command": doc.get("command", "?"), f"{name}_backend": doc.get("backend", "?"),
            f"{name}_device": env.get("device", doc.get("device", "?")),
            f"{name}_dtype": doc.get("dtype", doc["params"].get("dtype", "?")),
            f"{name}_date": str(doc.get("created", "?"))[:10],
            f"{name}_minutes": float(doc.get("elapsed", float("nan"))) / 60,
            f"{name}_version": doc.get("version", "?"), f"{name}_numpy": env.get("numpy", "?"),
            f"{name}_cores": host.get("cpu_count", "?"),
            f"{name}_threads": host.get("OPENBLAS_NUM_THREADS") or "default",
            f"{name}_nice": host.get("nice", "?"),
            f"{name}_widths": ", ".join(str(N) for N in d.Ns(name)),
            f"{name}_N_max": d.Ns(name)[-1],
            f"{name}_seeds": ", ".join(f"{len(v)} at {k}" for k, v in per.items()),
            f"{name}_status": _status(doc, d.Ns(name)),
        })
    out["label"] = where_label(d)
    return out


def provenance_numbers(data: AtScale) -> dict:
    """Glue values of :func:`provenance` that the prose quotes: ``{name}_widths`` and
    ``{name}_seeds`` for each file, and ``label`` (the rest is in :func:`provenance_table`)."""
    p = provenance(data)
    return {key: p[key] for key in p
            if key == "label" or key.endswith(("_widths", "_seeds"))}


def _status(doc: dict, Ns: list) -> str:
    planned = doc.get("widths_planned") or Ns
    if doc.get("complete", True):
        return "ran to completion"
    return f"was stopped after N = {Ns[-1]} (planned: N = {', '.join(str(N) for N in planned)})"


def provenance_table(data: AtScale):
    """Table *tab-at-scale-provenance*: per file, where and how it was computed (backend and
    device, precision, day, cores, BLAS threads and ``nice`` level, versions), its wall time,
    whether it ran to completion, and its seeds per width (from :func:`provenance`)."""
    d = _check(data)
    p = provenance(d)
    fields = [("backend, device, dtype", lambda n: f"{p[f'{n}_backend']}, {p[f'{n}_device']}, "
                                                 f"{p[f'{n}_dtype']}"),
              ("day (UTC)", lambda n: p[f"{n}_date"]),
              ("cores / BLAS threads / nice", lambda n: f"{p[f'{n}_cores']} / {p[f'{n}_threads']} / "
                                                       f"{p[f'{n}_nice']}"),
              ("twostep / numpy", lambda n: f"{p[f'{n}_version']} / {p[f'{n}_numpy']}"),
              ("wall time (min)", lambda n: f"{p[f'{n}_minutes']:.0f}"),
              ("the run", lambda n: p[f"{n}_status"])]
    return markdown_table(
        "Where and how each results file was computed, as the file records it (wall time: of all "
        "the commands that wrote it, a resumed run adding to the one it continued).",
        "tab-at-scale-provenance", [""] + [f"{name}.json" for name in d.names],
        [[label] + [value(name) for name in d.names] for label, value in fields])


def seeds_table(data: AtScale):
    """Table *tab-at-scale-seeds*: the seeds per width (rows) of each file (columns); for the
    reuse files, the seeds that have both a reused and a fresh record."""
    d = _check(data)
    Ns = sorted({N for name in d.names for N in d.Ns(name)})

    def count(name, N):
        if N not in d.Ns(name):
            return "–"
        by = {b: {r["seed"] for r in d.records(name, b, N)} for b in BATCHES}
        return str(len(by["reused"] & by["fresh"]))

    # One row per width keeps the table narrow however far the files reach.
    return markdown_table(
        "Seeds per width in each file: a seed counts where both batch schemes ran on its draw (the "
        "spike file: one task per batch; the reuse files: paired runs). A width with one seed has "
        "no error bar in the figures; – : the file has no run at that width.",
        "tab-at-scale-seeds", ["$N$"] + [f"{name}.json" for name in d.names],
        [[str(N)] + [count(name, N) for name in d.names] for N in Ns])


def commands_text(data: AtScale) -> str:
    """The commands that wrote the two files, in order (a resumed run lists every command it took),
    as shell lines with the file each wrote, for ``print`` in the chapter."""
    d = _check(data)
    lines = []
    for name in d.names:
        doc = d.doc(name)
        cmds = doc.get("commands") or [doc.get("command", "?")]
        lines.append(f"# results/at_scale/{name}.json ({doc.get('backend', '?')} backend, "
                     f"device {doc.get('environment', {}).get('device', '?')}, "
                     f"{str(doc.get('created', '?'))[:10]})")
        lines += [str(c) for c in cmds]
    return "\n".join(lines)


def where_label(data: AtScale) -> str:
    """One line saying where the files were computed, from the spike file's provenance: on the
    host (numpy backend) "computed on a 2-core CPU in float32; no GPU run has been made (...)",
    on a device "computed on <device> in <dtype>"."""
    d = _check(data)
    doc = d.spike
    dtype = doc.get("dtype", doc["params"].get("dtype", "?"))
    if doc.get("backend") == "numpy":
        cores = doc.get("host", {}).get("cpu_count", "?")
        return (f"computed on a {cores}-core CPU in {dtype}; no GPU run has been made (one would "
                f"reach N = 32000–45000 with the same command)")
    device = doc.get("environment", {}).get("device", doc.get("device", "?"))
    return f"computed on {device} ({doc.get('backend')}) in {dtype}"


def wall_table(data: AtScale):
    """Table *tab-at-scale-wall*: runs per width, their mean wall time and the process's peak
    resident memory, per file (the memory where the file records it, ``peak_rss_gb``)."""
    d = _check(data)
    rows = []
    for name in d.names:
        records = d.records(name)
        for N, (mean, sd, n) in width_stats(records, lambda r: r["wall_s"]).items():
            peaks = [r["peak_rss_gb"] for r in records if r["N"] == N and "peak_rss_gb" in r]
            rows.append([name, str(N), str(n), f"{float(mean):.1f}",
                         f"{float(sd):.1f}" if n > 1 else "–",
                         f"{max(peaks):.1f}" if peaks else "–"])
    return markdown_table(
        "Wall time of one task (one seed, one batch: draw, two steps, measurement) as recorded in "
        "the files, per width (s.d.: over the tasks of that width; – for a single task), and the "
        "largest resident memory of the run's process up to the end of a task of that width "
        "(– where the file does not record it).",
        "tab-at-scale-wall",
        ["file", "$N$", "tasks", "mean wall time (s)", "s.d. (s)", "peak memory (GB)"], rows)


# --------------------------------------------------------------------------- the terms

def _terms_spread(d: AtScale, orders) -> dict:
    r"""The spread over seeds of the entries of :func:`terms_table`: per batch, the largest
    standard error (:math:`\mathrm{sd}/\sqrt{n}`, ``ddof=1``, over the :math:`n` seeds of a
    width) of a relative remainder (``{batch}_remainder``) and of a cosine (``{batch}_cosine``:
    that of the order whose mean cosine is the entry), over the widths with more than one seed;
    ``seeds``, the seeds per width ``{N: n}`` (the fewer of the two batches')."""
    out, seeds = {}, {}
    for batch in BATCHES:
        rel = width_stats(d.records("spike", batch), lambda r: r["residual"] / r["signal"])
        cos = [width_stats(d.records("spike", batch), lambda r, s=side: r[s])
               for side in ("left", "right")]
        rem = cosine = 0.0
        for N, (_, sd, n) in rel.items():
            seeds[N] = min(seeds.get(N, n), n)
            if n > 1:
                rem = max(rem, *(sd[k] / math.sqrt(n) for k in orders))
                for st in cos:
                    k = min(orders, key=lambda k: st[N][0][k])
                    cosine = max(cosine, st[N][1][k] / math.sqrt(n))
        out[f"{batch}_remainder"], out[f"{batch}_cosine"] = float(rem), float(cosine)
    return dict(out, seeds=seeds)


def terms_table(data: AtScale, orders=(1, 2, 3)):
    r"""Table *tab-at-scale-terms*: per batch and width, for each order in ``orders``, the
    relative remainder :math:`\|T_k-S_k\|/\|S_k\|` and the cosines of :math:`T_k`'s top vectors
    with :math:`a^{\circ(k+1)}` and :math:`u_k` (means over seeds; the largest standard errors
    of :func:`_terms_spread` in the caption)."""
    d = _check(data)
    orders = [check_int(k, "orders[k]", 0) for k in orders]
    if any(k >= d.L for k in orders):
        raise ValueError(f"orders must be < L = {d.L}, got {orders}")
    rows = []
    for batch in BATCHES:
        rel = width_stats(d.records("spike", batch), lambda r: r["residual"] / r["signal"])
        left = width_stats(d.records("spike", batch), lambda r: r["left"])
        right = width_stats(d.records("spike", batch), lambda r: r["right"])
        for N in rel:
            rows.append([batch, str(N)] + [f"{rel[N][0][k]:.3f}" for k in orders]
                        + [f"{min(left[N][0][k] for k in orders):.3f}",
                           f"{min(right[N][0][k] for k in orders):.3f}"])
    sp = _terms_spread(d, orders)
    spread = (f" Largest standard error, fresh and reused: {sig(sp['fresh_remainder'])} and "
              f"{sig(sp['reused_remainder'])} for a remainder, {sig(sp['fresh_cosine'])} and "
              f"{sig(sp['reused_cosine'])} for a cosine." if max(sp["seeds"].values()) > 1 else "")
    return markdown_table(
        f"The exact terms $T_k$ at the reference setting, {_seeds_text(sp['seeds'])}: the "
        "relative remainder $\\|T_k-S_k\\|/\\|S_k\\|$ of each order, and over those orders the "
        "smallest cosine of the top left vector with $a^{\\circ(k+1)}$ and of the top right vector "
        "with $u_k$ (reuse-aware for a reused batch)." + spread,
        "tab-at-scale-terms", ["batch", "$N$"] + [f"remainder, $k = {k}$" for k in orders]
        + ["cosine, left", "cosine, right"], rows)


def terms_numbers(data: AtScale) -> dict:
    r"""Glue values at the largest width ``N_terms``: ``fresh_left_min``, ``fresh_right_min``,
    the smallest mean cosine of :math:`T_k`'s top left and right vectors with the predicted
    ones over :math:`k\le L-1`, fresh batch, and ``reused_rel_{L-1}``, the reused batch's
    relative remainder at the highest order (the rest is in :func:`terms_table`)."""
    d = _check(data)
    Nmax = d.Ns("spike")[-1]
    fresh = d.records("spike", "fresh")
    out = {"N_terms": Nmax,
           "fresh_left_min": float(width_stats(fresh, lambda r: r["left"])[Nmax][0].min()),
           "fresh_right_min": float(width_stats(fresh, lambda r: r["right"])[Nmax][0].min())}
    rel = width_stats(d.records("spike", "reused"), lambda r: r["residual"] / r["signal"])
    out[f"reused_rel_{d.L - 1}"] = float(rel[max(rel)][0][d.L - 1])
    return out


def terms_width_numbers(data: AtScale, orders=(2, 3), prefix: str = "vwf_terms") -> dict:
    r"""Glue values for the landing page's verdicts at each width: at every width of the spike
    file, the rule's verdict (:func:`twostep.analysis.verdicts.verdict`) that each fresh
    :math:`T_k`, ``k`` in ``orders``, is its corrected spike (:math:`s_1(T_k)/\|S_k\|` against 1,
    the remainder :math:`\|T_k - S_k\|/\|S_k\|` as the paired null), the worst over the
    orders (:func:`twostep.pages.report.width_verdicts`)."""
    d = _check(data)
    labels = {}
    for N in d.Ns("spike"):
        recs = d.records("spike", "fresh", N)
        labels[N] = worst(verdict([r["top"][k] / r["signal"][k] for r in recs], 1.0,
                                  [r["residual"][k] / r["signal"][k] for r in recs])
                          for k in orders)
    return width_verdicts(prefix, labels)


def plot_terms(data: AtScale):
    r"""Figure *fig-at-scale-terms*: rows fresh, reused; columns :math:`\|T_k-S_k\|/\|S_k\|` (with
    a line of slope :math:`-1/2` and the level 1 where the remainder is as large as the spike),
    :math:`1-\cos(\hat\ell_k, a^{\circ(k+1)})` and :math:`1-\cos(\hat r_k, u_k)` (chance
    :math:`1-1/\sqrt N`), means and standard errors over seeds, log axes."""
    import matplotlib.pyplot as plt

    d = _check(data)
    Ns = np.array(d.Ns("spike"), float)
    fig, axes = plt.subplots(2, 3, figsize=(7.0, 5.6), sharex=True)
    for row, batch in enumerate(BATCHES):
        recs = d.records("spike", batch)
        rel = width_stats(recs, lambda r: r["residual"] / r["signal"])
        gaps = {key: width_stats(recs, lambda r, key=key: 1 - r[key]) for key in ("left", "right")}
        for k in range(d.L):
            col = K_COLORS[k % len(K_COLORS)]
            x, m, s = _series(rel, k)
            plotting.errorbars(axes[row, 0], x, m, s, color=col, label=f"$k = {k}$")
            for j, key in enumerate(("left", "right")):
                x, m, s = _series(gaps[key], k)
                plotting.errorbars(axes[row, 1 + j], x, m, s, color=col)
        x0, y0 = Ns[0], float(np.mean([rel[int(Ns[0])][0][k] for k in range(1, d.L)]))
        plotting.theory_power_law(axes[row, 0], Ns, -0.5, x0, y0, label=r"slope $-1/2$")
        axes[row, 0].axhline(1.0, color=COLORS["chance"], ls=":", lw=1.2, label="remainder = spike")
        for ax in axes[row, 1:]:
            ax.plot(Ns, 1 - 1 / np.sqrt(Ns), color=COLORS["chance"], ls=":", lw=1.2,
                    label=r"chance $1-1/\sqrt{N}$")
        axes[row, 0].set_ylabel(f"{batch} batch")
    titles = (r"$\|T_k - S_k\|\,/\,\|S_k\|$", r"$1 - \cos(\hat\ell_k, a^{\circ(k+1)})$",
              r"$1 - \cos(\hat r_k, u_k)$")
    for j, ax in enumerate(axes.flat):
        ax.set_yscale("log")
        _log_ticks(ax, Ns)
        ax.set_title(titles[j % 3])
        if j >= 3:
            ax.set_xlabel("$N$ (thousands)")
    # One legend for the figure, below the panels: inside, it would cover the data.
    handles, labels = axes[0, 0].get_legend_handles_labels()
    h2, l2 = axes[0, 1].get_legend_handles_labels()
    fig.legend(handles + h2[-1:], labels + l2[-1:], loc="outside lower center", ncol=4)
    plt.close(fig)
    return fig


def beta_limits(data: AtScale, psi: float = 1.0) -> dict:
    r"""Population overlap of :math:`u_k` with :math:`\beta^\star` for the spike file's target,
    ``{batch: array (L,)}`` (:func:`twostep.analysis.population.population_signal`)."""
    d = _check(data)
    psi = check_real(psi, "psi", low=0.0, low_open=True)
    target = d.spike["params"].get("target", "he1")
    return {b: np.array([float(population_signal(target, psi, k, b).overlaps[0]) for k in range(d.L)])
            for b in BATCHES}


def plot_beta(data: AtScale, limits: dict):
    r"""Figure *fig-at-scale-beta*: :math:`|\cos(\hat r_k, \beta^\star)|` against :math:`N`, fresh
    (left) and reused (right), each order with its population value :math:`|\cos(u_k,\beta^\star)|`
    (dashed; ``limits`` from :func:`beta_limits`) and the chance level :math:`1/\sqrt N`."""
    import matplotlib.pyplot as plt

    d = _check(data)
    if not isinstance(limits, dict) or set(limits) != set(BATCHES):
        raise TypeError("limits must be the dict of beta_limits")
    Ns = np.array(d.Ns("spike"), float)
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.9), sharey=True)
    for ax, batch in zip(axes, BATCHES):
        st = width_stats(d.records("spike", batch), lambda r: r["beta"])
        for k in range(d.L):
            col = K_COLORS[k % len(K_COLORS)]
            x, m, s = _series(st, k)
            plotting.errorbars(ax, x * (1 + 0.02 * (k - 1.5)), m, s, color=col, label=f"$k = {k}$")
            if limits[batch][k] > 1e-8:
                ax.axhline(limits[batch][k], color=col, ls="--", lw=1)
        ax.plot(Ns, 1 / np.sqrt(Ns), color=COLORS["chance"], ls=":", lw=1.2, label=r"chance $1/\sqrt{N}$")
        ax.set(yscale="log", title=f"{batch} batch", xlabel="$N$ (thousands)", ylim=(3e-3, 1.2))
        _log_ticks(ax, Ns)
    axes[0].set_ylabel(r"$|\cos(\hat r_k,\ \beta^\star)|$")
    plotting.legend_below(fig, axes[1], ncol=5)
    plt.close(fig)
    return fig


def beta_numbers(data: AtScale, limits: dict) -> dict:
    r"""Glue values ``fresh_beta_{k}`` (mean at the largest width) and ``fresh_beta_lim_{k}``
    for ``k = 0, 2`` (the orders with a non-zero population overlap for :math:`\mathrm{He}_1`
    with a fresh batch; every order and both batches are in the figure)."""
    d = _check(data)
    st = width_stats(d.records("spike", "fresh"), lambda r: r["beta"])
    Nmax = max(st)
    out = {}
    for k in (0, 2):
        out[f"fresh_beta_{k}"] = float(st[Nmax][0][k])
        out[f"fresh_beta_lim_{k}"] = float(limits["fresh"][k])
    return out


# --------------------------------------------------------------------------- the count

@dataclass
class Counts:
    """Raw outlier counts of :math:`W_2` over the grid: ``lam`` (per grid point), ``target``
    (:math:`1+\\Lambda`) and per batch ``{N: array (seeds, points)}``."""

    grid: list
    lam: np.ndarray
    target: np.ndarray
    counts: dict
    Ns: list

    def hits(self, batch: str, N: int, lam_min: int = 0, lam_max: int = 99) -> tuple:
        """(points where the seed-mean count rounds to 1 + Lambda, points) for lam_min <= Lambda <= lam_max."""
        mask = (self.lam >= lam_min) & (self.lam <= lam_max)
        mean = self.counts[batch][N].mean(axis=0)
        return int(np.sum(np.rint(mean[mask]) == self.target[mask])), int(mask.sum())

    def exact(self, batch: str, N: int, lam_min: int = 0, lam_max: int = 99) -> tuple:
        """(runs x points where the count equals 1 + Lambda, runs x points) in that range."""
        mask = (self.lam >= lam_min) & (self.lam <= lam_max)
        c = self.counts[batch][N][:, mask]
        return int(np.sum(c == self.target[mask])), int(c.size)


def count_data(data: AtScale) -> Counts:
    r"""The raw counts of the spike file against :math:`1+\Lambda(\alpha_1,\alpha_2)`
    (:func:`twostep.analysis.theory.n_spikes` with the activation's degree)."""
    d = _check(data)
    lam = np.array([n_spikes(a1, a2, d.L) for a1, a2 in d.grid])
    counts = {b: {N: np.array([r["grid_count"] for r in d.records("spike", b, N)], dtype=float)
                  for N in d.Ns("spike")} for b in BATCHES}
    return Counts(grid=d.grid, lam=lam, target=1 + lam, counts=counts, Ns=d.Ns("spike"))


def plot_counts(counts: Counts):
    r"""Figure *fig-at-scale-counts*: mean raw count of :math:`W_2` over the grid points of each
    :math:`\Lambda` (and seeds) against :math:`N`, fresh (left) and reused (right), with the
    theory's :math:`1+\Lambda` (dashed)."""
    import matplotlib.pyplot as plt

    if not isinstance(counts, Counts):
        raise TypeError(f"counts must be a Counts (from count_data), got {type(counts).__name__}")
    Ns = np.array(counts.Ns, float)
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.9), sharey=True)
    for ax, batch in zip(axes, BATCHES):
        for lam in sorted(set(counts.lam.tolist())):
            col = K_COLORS[lam % len(K_COLORS)]
            mask = counts.lam == lam
            vals = [counts.counts[batch][N][:, mask] for N in counts.Ns]
            m = [float(v.mean()) for v in vals]
            s = [float(v.mean(axis=1).std(ddof=1) / math.sqrt(v.shape[0])) if v.shape[0] > 1
                 else math.nan for v in vals]   # one seed: no error bar
            # Open markers of growing size and their own shape: under reuse several Lambda
            # sit at the same ceiling, and a filled marker would hide the one drawn before.
            plotting.errorbars(ax, Ns, m, s, color=col, marker="osD^v"[lam % 5], mfc="none",
                               ms=5 + 1.5 * lam,
                               label=f"$\\Lambda = {lam}$ ({int(mask.sum())} points)")
            ax.axhline(1 + lam, color=col, ls="--", lw=1)
        ax.set(title=f"{batch} batch", xlabel="$N$ (thousands)")
        _log_ticks(ax, Ns)
    axes[0].set_ylabel(r"raw outliers of $W_2$ (above $2\times1.05$)")
    plotting.legend_below(fig, axes[0], ncol=4)
    plt.close(fig)
    return fig


def _counts_spread(counts: Counts) -> dict:
    r"""The spread over seeds of the mean counts of :func:`counts_table`: per batch, the largest
    standard error (:func:`~twostep.analysis.verdicts.mean_sem` of the per-seed means over the
    points of one :math:`\Lambda`) over the widths with more than one seed and every
    :math:`\Lambda` (``fresh``, ``reused``); ``seeds``, the seeds per width ``{N: n}`` (the
    fewer of the two batches')."""
    lams = sorted(set(counts.lam.tolist()))
    out = {"seeds": {N: min(int(counts.counts[b][N].shape[0]) for b in BATCHES)
                     for N in counts.Ns}}
    for batch in BATCHES:
        out[batch] = max((mean_sem(c[:, counts.lam == lam].mean(axis=1))[1]
                          for c in counts.counts[batch].values() if c.shape[0] > 1
                          for lam in lams), default=0.0)
    return out


def counts_table(counts: Counts):
    r"""Table *tab-at-scale-counts*: per batch and width, the grid points where the seed-mean
    raw count equals :math:`1+\Lambda`, for :math:`\Lambda = 0` and :math:`\Lambda\ge1`, and the
    mean count per :math:`\Lambda` (the largest standard errors of :func:`_counts_spread` in the
    caption)."""
    if not isinstance(counts, Counts):
        raise TypeError(f"counts must be a Counts (from count_data), got {type(counts).__name__}")
    lams = sorted(set(counts.lam.tolist()))
    rows = []
    for batch in BATCHES:
        for N in counts.Ns:
            h0, t0 = counts.hits(batch, N, 0, 0)
            h1, t1 = counts.hits(batch, N, 1)
            c = counts.counts[batch][N]
            rows.append([batch, str(N), f"{h0} / {t0}", f"{h1} / {t1}"]
                        + [f"{c[:, counts.lam == lam].mean():.2f}" for lam in lams])
    sp = _counts_spread(counts)
    seeds = _seeds_text(sp["seeds"])
    spread = (f"; the largest standard error of a mean count is {sig(sp['fresh'])} (fresh) and "
              f"{sig(sp['reused'])} (reused)" if max(sp["seeds"].values()) > 1 else "")
    return markdown_table(
        "Raw outlier count of $W_2$ (singular values above $2\\times1.05$) over the 25-point grid: "
        "points where the mean over seeds, rounded, equals $1+\\Lambda$ (hits / points), and the "
        "mean count over the points of each $\\Lambda$, whose theory is $1+\\Lambda$ (in brackets). "
        f"{seeds[0].upper() + seeds[1:]}{spread}.", "tab-at-scale-counts",
        ["batch", "$N$", "hits, $\\Lambda = 0$", "hits, $\\Lambda\\ge1$"]
        + [f"$\\Lambda = {lam}$ ({1 + lam})" for lam in lams], rows)


def counts_numbers(counts: Counts) -> dict:
    r"""Glue values at the largest width ``N_count``: ``fresh_hits1`` of ``fresh_total1`` grid
    points with :math:`\Lambda\ge1` whose seed-mean count rounds to :math:`1+\Lambda` (both
    batches and every :math:`\Lambda` are in :func:`counts_table`)."""
    if not isinstance(counts, Counts):
        raise TypeError(f"counts must be a Counts (from count_data), got {type(counts).__name__}")
    N = counts.Ns[-1]
    out = {"N_count": N}
    out["fresh_hits1"], out["fresh_total1"] = counts.hits("fresh", N, 1)
    return out


def count_rises(counts: Counts, batch: str = "fresh") -> dict:
    r"""What the two widest widths of the spike file add to the count: the grid points with
    :math:`\Lambda\ge1` whose raw count rises from the second-widest width to the widest on
    every seed both hold, as text (``rises_text``; each point with :math:`\Lambda` and the
    seeds' counts), their number ``rises_n``, and the widths ``rises_from``, ``rises_to``."""
    if not isinstance(counts, Counts):
        raise TypeError(f"counts must be a Counts (from count_data), got {type(counts).__name__}")
    lo, hi = counts.Ns[-2], counts.Ns[-1]
    a, b = counts.counts[batch][lo], counts.counts[batch][hi]
    seeds = min(len(a), len(b))     # seeds 0 .. k-1 at every width
    parts = []
    for i, (a1, a2) in enumerate(counts.grid):
        if counts.lam[i] >= 1 and np.all(b[:seeds, i] > a[:seeds, i]):
            before = ", ".join(f"{v:.0f}" for v in a[:seeds, i])
            after = ", ".join(f"{v:.0f}" for v in b[:seeds, i])
            parts.append(f"({a1:g}, {a2:g}) with Λ = {counts.lam[i]} (1 + Λ = "
                         f"{counts.target[i]}): {before} → {after}")
    text = "; ".join(parts) if parts else "none"
    several = [f"({a1:g}, {a2:g}) with Λ = {counts.lam[i]}"
               for i, (a1, a2) in enumerate(counts.grid)
               if counts.lam[i] >= 1 and np.all(b[:, i] >= 2)]
    return {"rises_text": text, "rises_n": len(parts), "rises_from": lo, "rises_to": hi,
            "rises_seeds": seeds, "several_text": "; ".join(several) if several else "none",
            "several_n": len(several)}


# --------------------------------------------------------------------------- how large must N be

def extrapolation(count: dict, settings=SETTINGS, chapter_Ns=CHAPTER_NS, margin: float = 0.05) -> list:
    r"""Width :math:`N^\star` at which each order :math:`1\le k\le\Lambda` of each setting would
    reach :math:`\theta_\star` (:func:`~twostep.analysis.spikes.outlier_strength` at
    :math:`N/d = 1`), fresh batch, computed as in the two-steps chapter's
    :math:`S_k^{\rm corr}` column: the strength is :math:`s_{k+1}(\Sigma)`, the
    :math:`(k+1)`-th singular value of the corrected spike sum, rebuilt at the setting's step
    sizes :math:`\eta_t = \kappa N^{\alpha_t}` from the core each record of the count file
    holds (:func:`~twostep.analysis.plane.spike_sum_values`), and :math:`N^\star` comes from
    :func:`~twostep.analysis.plane.extrapolated_width`.

    ``count`` is the count results document (``read_results(results_path("count"))``). Each
    dict: ``a1, a2, lam, k, e, theta_star, kappa``, ``strength_max`` (mean at the largest width
    ``N_max``), ``n_star`` and ``e_fit``, ``e_fit_se``, ``n_fit`` (all widths), and
    ``n_star_chapter`` (the widths within ``chapter_Ns``, the largest of which is ``N_chapter``).
    """
    doc = _check_doc(count, "count", COUNT_KEYS)
    settings = [(check_real(a1, f"settings[{i}][0]", low=0.0, high=0.5, high_open=True),
                 check_real(a2, f"settings[{i}][1]", low=0.0, high=0.5, high_open=True))
                for i, (a1, a2) in enumerate(check_pairs(settings, "settings", "an (alpha1, alpha2) pair"))]
    chapter_Ns = [check_int(N, "chapter_Ns[i]") for N in chapter_Ns]
    theta = outlier_strength(1.0, check_real(margin, "margin", low=0.0))
    kappa = float(doc["params"]["c"])
    recs = [r for r in doc["records"] if r["batch"] == "fresh"]
    N_all = np.array([r["N"] for r in recs], float)
    inside = np.isin(N_all, chapter_Ns)
    strengths = np.array([spike_sum_values(r, settings, kappa) for r in recs])  # (R, S, L + 1)
    L = strengths.shape[2] - 1
    out = []
    for i, (a1, a2) in enumerate(settings):
        lam = n_spikes(a1, a2, L)
        for k in range(1, lam + 1):
            e = spike_exponent(k, a1, a2)
            x = strengths[:, i, k]
            row = dict(a1=a1, a2=a2, lam=lam, k=k, e=e, theta_star=theta, kappa=kappa,
                       N_max=int(N_all.max()), strength_max=float(x[N_all == N_all.max()].mean()),
                       **extrapolated_width(N_all, x, e, theta))
            row["N_chapter"] = int(N_all[inside].max()) if inside.any() else None
            row["n_star_chapter"] = (extrapolated_width(N_all[inside], x[inside], e, theta)["n_star"]
                                     if len(set(N_all[inside])) >= 2 else math.nan)
            out.append(row)
    return out


def _sci(x) -> str:
    return sci(x, 2) if np.isfinite(x) else "never"


def _check_rows(rows):
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) and "n_star" in r for r in rows):
        raise TypeError("rows must be the non-empty list returned by extrapolation")
    return rows


def extrapolation_table(rows: list):
    r"""Table *tab-at-scale-extrapolation* from the rows of :func:`extrapolation`."""
    r0 = _check_rows(rows)[0]
    to_ch = r0["N_chapter"] if r0["N_chapter"] is not None else "-"
    return markdown_table(
        f"Width $N^\\star$ at which $s_{{k+1}}(\\Sigma)$, the corrected spike sum's $(k+1)$-th "
        f"singular value, reaches $\\theta_\\star = {r0['theta_star']:.2f}$ (fresh, "
        f"$\\kappa = {r0['kappa']:g}$): constant fitted at the theory's $e_k$ over the count "
        f"file's widths to {to_ch} and to {r0['N_max']}; last, the exponent fitted over all "
        f"widths (± one standard error) and the $N^\\star$ it gives.",
        "tab-at-scale-extrapolation",
        ["$(\\alpha_1,\\alpha_2)$, $\\Lambda$", "$k$", "$e_k$", f"$N^\\star$, to {to_ch}",
         f"$N^\\star$, to {r0['N_max']}", "fitted exponent", "$N^\\star$, fitted"],
        [[f"({r['a1']:g}, {r['a2']:g}), {r['lam']}", str(r["k"]), f"{r['e']:+.2f}",
          _sci(r["n_star_chapter"]), _sci(r["n_star"]),
          f"{r['e_fit']:+.3f} ± {r['e_fit_se']:.3f}", _sci(r["n_fit"])] for r in rows])


def extrapolation_numbers(rows: list) -> dict:
    r"""Glue values of the spike with the smallest :math:`N^\star`, named by its setting and
    order (text, e.g. ``nstar_45_30_1``): ``nstar_...`` from all widths, ``nstar_ch_...`` from
    the chapter's widths, so that a page naming that spike fails to build when another one
    becomes the first; ``nstar_second``, the next smallest (text), ``nstar_second_gpu``
    ("beyond" or "within" the GPU run's largest planned width, 45000), ``theta_star``,
    ``nstar_min_reach`` (whether the file's largest width "lies beyond" or "falls short of"
    the smallest :math:`N^\star`) and ``nstar_steeper``, the orders whose fitted exponent lies
    more than two standard errors above :math:`e_k`, of ``nstar_orders``."""
    rows = _check_rows(rows)
    out = {"theta_star": rows[0]["theta_star"]}
    first = min(rows, key=lambda r: r["n_star"])
    tag = f"{round(100 * first['a1'])}_{round(100 * first['a2'])}_{first['k']}"
    out[f"nstar_{tag}"] = _sci(first["n_star"])
    out[f"nstar_ch_{tag}"] = _sci(first["n_star_chapter"])
    ordered = sorted(r["n_star"] for r in rows)
    second = ordered[1] if len(ordered) > 1 else ordered[0]
    out["nstar_second"] = _sci(second)
    out["nstar_second_gpu"] = "beyond" if second > 45000 else "within"
    out["nstar_min_reach"] = "lies beyond" if rows[0]["N_max"] >= ordered[0] else "falls short of"
    out["nstar_steeper"] = sum(r["e_fit"] - r["e"] > 2 * r["e_fit_se"] for r in rows)
    out["nstar_orders"] = len(rows)
    return out


# --------------------------------------------------------------------------- reuse

@dataclass
class Reuse:
    r"""Overlaps of :math:`T_2`'s top right vector with :math:`\beta^\star` (``term_overlap``) per
    batch and width (``{N: array (seeds,)}``, seeds in ``seeds[N]``), the paired differences
    reused minus fresh (``diff``, same seeds), the reuse-aware direction's overlap measured in
    the same runs (``aware``), the memorisation of :math:`T_2`'s top vector, and the population
    values (``limit``: of :math:`\tilde u_2`, reused; ``expected``: ``{batch: {N: mean at n = N}}``)."""

    Ns: list
    seeds: dict
    overlap: dict
    diff: dict
    aware: dict
    memorisation: dict
    limit: float
    expected: dict

    def stats(self, key: str, batch: str | None = None) -> dict:
        """``{N: (mean, sd, seeds)}`` of ``overlap`` / ``aware`` / ``memorisation`` (per batch) or
        ``diff``."""
        src = getattr(self, check_choice(key, "key", ("overlap", "diff", "aware", "memorisation")))
        if key != "diff":
            src = src[check_choice(batch, "batch", BATCHES)]
        return {N: (float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0, int(v.size))
                for N, v in src.items()}

    def trend(self, key: str = "diff", batch: str | None = None) -> tuple:
        r"""Least-squares slope of the per-seed values against :math:`\log_{10}N` and its
        standard error: ``(slope, se)``."""
        src = self.diff if key == "diff" else getattr(self, check_choice(key, "key", ("overlap", "aware")))[
            check_choice(batch, "batch", BATCHES)]
        return _trend(src)


def reuse_data(data: AtScale, psi: float = 1.0) -> Reuse:
    r"""The reuse file's :math:`T_2` overlaps, paired by seed, with the population values of
    :func:`twostep.pages.paired.population_limits` (target and activation of the file)."""

    d = _check(data)
    psi = check_real(psi, "psi", low=0.0, low_open=True)
    p = d.reuse["params"]
    target, term = p.get("target", "odd"), int(p.get("term", 2))
    if term != 2:
        raise ValueError(f"the reuse file must measure T_2 (term = 2), got term = {term}")
    Ns = d.Ns("reuse")
    seeds, overlap, aware, memo, diff = {}, {b: {} for b in BATCHES}, {b: {} for b in BATCHES}, \
        {b: {} for b in BATCHES}, {}
    for N in Ns:
        by = {b: {r["seed"]: r for r in d.records("reuse", b, N)} for b in BATCHES}
        paired = sorted(set(by["reused"]) & set(by["fresh"]))
        if not paired:
            raise ValueError(f"the reuse file has no seed with both batches at N = {N}")
        seeds[N] = paired
        for b in BATCHES:
            overlap[b][N] = np.array([float(by[b][s]["term_overlap"][0]) for s in paired])
            aware[b][N] = np.array([float(by[b][s]["signal_reuse"][0]) for s in paired])
            memo[b][N] = np.array([float(by[b][s]["term_memorisation"]) for s in paired])
        diff[N] = overlap["reused"][N] - overlap["fresh"][N]
    limits = population_limits([target], psi, [term], p.get("activation", "poly4"), aware_order=term)
    expected = {b: {N: limits.overlap(target, b, term, n=N, aware=True) for N in Ns} for b in BATCHES}
    return Reuse(Ns=Ns, seeds=seeds, overlap=overlap, diff=diff, aware=aware, memorisation=memo,
                 limit=limits.overlap(target, "reused", term, aware=True), expected=expected)


def _check_reuse(reuse) -> Reuse:
    if not isinstance(reuse, Reuse):
        raise TypeError(f"reuse must be a Reuse (from reuse_data), got {type(reuse).__name__}")
    return reuse


def reuse_numbers(reuse: Reuse) -> dict:
    r"""Glue value ``reuse_limit``, the population overlap of :math:`\tilde u_2` that the reused
    :math:`T_2` tends to (the widths' means are in :func:`reuse_table`)."""
    return {"reuse_limit": _check_reuse(reuse).limit}


#: Configurations of :func:`paired_from_files`: file name -> label for the reader.
PAIRED_LABELS = {"reuse": r"$\sigma_4$, odd link", "reuse_he2": r"$\sigma_4$, He$_2$ (control)"}


def paired_from_files(data: AtScale):
    r"""The reuse files as the reuse chapter's paired runs
    (:class:`twostep.pages.paired.PairedData`, one configuration per file: ``"reuse"`` and, if
    given, ``"reuse_he2"``), pairing the reused and the fresh record of each seed, so that the
    chapter's test of :math:`T_2^\top a^{\circ3}` (:func:`~twostep.pages.paired.term_verdicts`,
    :func:`~twostep.pages.paired.plot_term_evidence`) reads the files unchanged."""
    from ..experiments.reuse import TERM_KEYS

    d = _check(data)
    configs, records = {}, []
    for name in ("reuse", "reuse_he2"):
        doc = getattr(d, name)
        if doc is None:
            continue
        p = doc["params"]
        configs[name] = PairedConfig(PAIRED_LABELS[name], p.get("activation", "poly4"),
                                     p.get("target", "odd"), float(p.get("c1", 0.5)))
        for N in d.Ns(name):
            by = {b: {r["seed"]: r for r in d.records(name, b, N)} for b in BATCHES}
            for seed in sorted(set(by["reused"]) & set(by["fresh"])):
                rec = {"config": name, "N": N, "seed": seed}
                for b in BATCHES:
                    for key in TERM_KEYS:
                        rec[f"{key}_{b}"] = float(np.asarray(by[b][seed][key], float).ravel()[0])
                records.append(rec)
    p = d.reuse["params"]
    a2 = float(p.get("alpha2", 0.25))
    return PairedData(configs, (a2,), (n_spikes(float(p.get("alpha1", 0.4)), a2, d.L),), records)


def widest_projection(paired) -> dict:
    r"""Glue values of what the widest width adds to the reused :math:`T_2^\top a^{\circ3}`: its
    mean and standard error over seeds at the largest width of the reuse file, ``N_last``
    (``proj_last``, ``proj_last_sem``, and the seeds ``seeds_last``). Its slope against
    :math:`N` is :func:`trend_numbers`' ``proj_slope``."""
    N = paired.Ns("reuse")[-1]
    x = paired.values("reuse", N, "projected_overlap", "reused")
    proj, sem = mean_sem(x)
    return {"N_last": N, "seeds_last": int(x.size), "proj_last": proj, "proj_last_sem": sem}


def top_vector_split(paired, threshold: float = 0.5) -> dict:
    r"""Glue values of what the reused :math:`T_2`'s top right vector is, seed by seed, over every
    width of the reuse file: ``split_seeds`` (reused runs), ``split_memorised`` (those whose
    memorisation :math:`\max_j|\cos(v_1, x_j)|` is at least ``threshold``) and ``split_text``,
    a sentence with the unmemorised count per width ("2 of 10 at N = 4000, ...") and the mean
    overlap with :math:`\beta^\star` of each group. The top vector is the larger of two competitors, a
    memorised input and the spike: where no input wins, its overlap is the spike's."""

    if not isinstance(paired, PairedData):
        raise TypeError(f"paired must be a PairedData (from paired_from_files), "
                        f"got {type(paired).__name__}")
    threshold = check_real(threshold, "threshold", low=0.0, high=1.0, low_open=True)
    memo, overlap, parts = [], [], []
    for N in paired.Ns("reuse"):
        m = paired.values("reuse", N, "term_memorisation", "reused")
        memo.append(m)
        overlap.append(paired.values("reuse", N, "term_overlap", "reused"))
        parts.append(f"{int(np.sum(m < threshold))} of {m.size} at N = {N}")
    memo, overlap = np.concatenate(memo), np.concatenate(overlap)
    won = memo >= threshold

    def mean(x):
        return float(x.mean()) if x.size else math.nan

    out = {"split_seeds": int(memo.size), "split_memorised": int(won.sum())}
    if won.any() and not won.all():
        out["split_text"] = (
            f"In {int((~won).sum())} of the {out['split_seeds']} reused runs "
            f"({', '.join(parts)}) no input reaches a memorisation of {threshold:g}; "
            f"there the top vector overlaps β⋆ at {mean(overlap[~won]):.3f} on "
            f"average, against {mean(overlap[won]):.3f} where an input wins.")
    else:
        out["split_text"] = (f"In {'every' if out['split_memorised'] else 'no'} one of the "
                             f"{out['split_seeds']} reused runs does an input reach a "
                             f"memorisation of {threshold:g}.")
    return out


def trends(data: AtScale, paired) -> list:
    r"""The appendix's trends against :math:`N`, each a least-squares slope over every seed's
    value with its standard error, from the smallest to the largest width of its file: the
    relative remainders :math:`\|T_k-S_k\|/\|S_k\|` per batch and order (slope of
    :math:`\log_{10}` of the remainder against :math:`\log_{10}N`, a power of :math:`N`), the
    fresh-batch mean raw count at :math:`\Lambda\ge1` (per decade of :math:`N`), and the reuse
    measurements (per decade): the paired difference of :math:`T_2`'s top vector (``raw``), the
    reused :math:`T_2^\top a^{\circ3}` (``proj``) and its memorised-input null (``null``).
    Returns a list of dicts with ``key`` (``rem_{batch}_{k}``, ``count``, ``raw``, ``proj``,
    ``null``), ``quantity``, ``unit``,
    ``N_lo``, ``N_hi``, ``lo``, ``hi`` (means at the smallest and the largest width), ``N_prev``,
    ``prev`` (at the width before the largest: what the largest adds), ``slope``, ``se``,
    ``points`` (seed values fitted)."""
    d = _check(data)
    rows = []

    def add(key, quantity, unit, by_N, log_y=False):
        Ns = sorted(by_N)
        slope, se = _trend(by_N, log_y=log_y)
        points = sum(len(v) for v in by_N.values())
        prev = Ns[-2] if len(Ns) > 1 else Ns[-1]
        rows.append({"key": key, "quantity": quantity, "unit": unit, "N_lo": Ns[0], "N_hi": Ns[-1],
                     "lo": float(np.mean(by_N[Ns[0]])), "hi": float(np.mean(by_N[Ns[-1]])),
                     "N_prev": prev, "prev": float(np.mean(by_N[prev])),
                     "slope": slope, "se": se, "points": points})

    for batch in BATCHES:
        for k in range(1, d.L):
            by_N = {}
            for r in d.records("spike", batch):
                by_N.setdefault(r["N"], []).append(float(np.asarray(r["residual"])[k]
                                                         / np.asarray(r["signal"])[k]))
            add(f"rem_{batch}_{k}", rf"$\|T_{k}-S_{k}\|/\|S_{k}\|$, {batch}", "exponent of $N$",
                {N: np.array(v) for N, v in by_N.items()}, log_y=True)
    counts = count_data(d)
    by_N = {N: counts.counts["fresh"][N][:, counts.lam >= 1].mean(axis=1) for N in counts.Ns}
    add("count", r"mean raw count, $\Lambda\ge1$, fresh", "per decade", by_N)
    for tag, label, key, batch in (("raw", r"$T_2$ top vector, reused − fresh", "term_overlap", "diff"),
                              ("proj", r"$T_2^\top a^{\circ3}$, reused", "projected_overlap", "reused"),
                              ("null", r"memorised inputs alone", "projected_memorised_null", "reused")):
        add(tag, label, "per decade", {N: paired.values("reuse", N, key, batch) for N in paired.Ns("reuse")})
    return rows


def trends_table(rows: list):
    """Table *tab-at-scale-trends*: each trend of :func:`trends` with its means at the smallest
    width, at the width before the largest and at the largest, and its fitted slope ± standard
    error."""
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) and "slope" in r for r in rows):
        raise TypeError("rows must be the non-empty list returned by trends")
    return markdown_table(
        "Trends against $N$, least-squares fits to every seed's value over the file's widths: "
        "the remainders as a power of $N$ (slope of $\\log_{10}$ remainder against "
        "$\\log_{10}N$; the book's reading predicts a negative one), the other quantities per "
        "decade of $N$; slopes ± one standard error. Means at the smallest width, the width "
        "before the largest, and the largest (the last step is what the widest runs add).",
        "tab-at-scale-trends",
        ["quantity (slope as)", "$N$", "means", "slope"],
        [[f"{r['quantity']} ({r['unit']})", f"{r['N_lo']}, {r['N_prev']}, {r['N_hi']}",
          f"{r['lo']:.3f}, {r['prev']:.3f} → {r['hi']:.3f}", f"{r['slope']:+.3f} ± {r['se']:.3f}"]
         for r in rows])


def widest_step_text(rows: list) -> str:
    """What the largest width adds, in words computed from :func:`trends`' rows: at how many
    orders the remainders fall from the width before the largest to the largest, per batch, and
    where the count and the three reuse measurements go (their means at the two widths)."""
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) and "prev" in r for r in rows):
        raise TypeError("rows must be the non-empty list returned by trends")
    by = {r["key"]: r for r in rows}
    parts = []
    for batch in BATCHES:
        rem = [r for key, r in by.items() if key.startswith(f"rem_{batch}_")]
        if rem:
            fall = sum(r["hi"] < r["prev"] for r in rem)
            parts.append(f"the {batch}-batch remainders fall at {fall} of {len(rem)} orders")
    names = {"count": "the fresh-batch mean count at Λ ≥ 1",
             "raw": "the reused-minus-fresh overlap of T₂'s top vector",
             "proj": "the reused T₂ seen through a^∘3",
             "null": "the memorised inputs' own span"}
    widths = {(r["N_prev"], r["N_hi"]) for r in rows}
    for key, name in names.items():
        if key in by:
            r = by[key]
            at = f" (N = {r['N_prev']} to {r['N_hi']})" if len(widths) > 1 else ""
            parts.append(f"{name} goes from {r['prev']:.3f} to {r['hi']:.3f}{at}")
    lo, hi = rows[0]["N_prev"], rows[0]["N_hi"]
    return f"From N = {lo} to N = {hi}, " + "; ".join(parts) + "."


def trend_numbers(rows: list) -> dict:
    r"""Glue values of :func:`trends`: ``rem_slope_{batch}_{k}`` and ``rem_slope_se_{batch}_{k}``
    (remainders, as exponents of :math:`N`), ``rem_fresh_z_max`` (the largest distance of a
    fresh-batch exponent from :math:`-1/2`, in its standard errors), and, per decade of
    :math:`N`, ``{key}_slope`` and ``{key}_slope_se`` for ``count``, ``raw`` and ``proj``."""
    if not isinstance(rows, list) or not rows:
        raise TypeError("rows must be the non-empty list returned by trends")
    rem = {r["key"]: r for r in rows if r["key"].startswith("rem_")}
    out = {"rem_fresh_z_max": max((abs(r["slope"] + 0.5) / r["se"] for key, r in rem.items()
                                   if key.startswith("rem_fresh_")), default=math.nan)}
    for key, r in rem.items():
        batch, k = key.split("_")[1:]
        out[f"rem_slope_{batch}_{k}"], out[f"rem_slope_se_{batch}_{k}"] = r["slope"], r["se"]
    for r in rows:
        if r["key"] in ("count", "raw", "proj"):
            out[f"{r['key']}_slope"], out[f"{r['key']}_slope_se"] = r["slope"], r["se"]
    return out


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


# --------------------------------------------------------------------------- what the widths show

def verdict_numbers(data: AtScale, counts: Counts, reuse: Reuse) -> dict:
    r"""Glue values that sum up what the files show at their largest widths, as numbers and as
    words computed from them (so the take-aways follow the files when they are regenerated):

    * ``beyond_text``: whether the files reach beyond the chapters' largest width (4000);
    * ``count_hits_text``: e.g. "0 of 20" fresh (seed, grid point) pairs with :math:`\Lambda\ge1`
      at the widest width whose raw count equals :math:`1+\Lambda`, and ``count_verdict``, the
      rule's verdict on them (:func:`twostep.analysis.verdicts.count_verdict`);
    * ``trend_text``: where the slope of the paired difference against :math:`\log_{10}N` lies,
      described by the verdict rule's interval (:data:`~twostep.analysis.verdicts.CONFIDENCE`,
      Student :math:`t` with points minus two degrees of freedom): whether it contains zero or
      lies above or below it. A description of a slope, not a verdict: no claim of the paper
      predicts this trend.
    """
    d = _check(data)
    if not isinstance(counts, Counts):
        raise TypeError(f"counts must be a Counts (from count_data), got {type(counts).__name__}")
    r = _check_reuse(reuse)
    slope, se = r.trend("diff")
    points = sum(len(v) for v in r.diff.values())
    half = (stats.t.ppf(0.5 + CONFIDENCE / 2, points - 2) * se
            if points > 2 and np.isfinite(se) else math.inf)
    if not np.isfinite(slope) or abs(slope) <= half:
        trend = f"a slope whose {100 * CONFIDENCE:g} % interval contains zero"
    else:
        trend = (f"a slope whose {100 * CONFIDENCE:g} % interval lies "
                 f"{'above' if slope > 0 else 'below'} zero")
    N_max = max(d.Ns("spike")[-1], d.Ns("reuse")[-1])
    N_count = counts.Ns[-1]
    exact = counts.exact("fresh", N_count, 1)      # (runs x points at 1 + Lambda, runs x points)
    beyond = N_max > max(CHAPTER_NS)
    return {
        "beyond_text": (f"reach N = {N_max}, beyond the chapters' largest width {max(CHAPTER_NS)}"
                        if beyond else f"stop at N = {N_max}, the chapters' own largest width: "
                        "they add seeds and paired runs, not range"),
        "count_hits_text": f"{exact[0]} of {exact[1]}",
        "count_verdict": count_verdict(*exact, seeds=len(d.records("spike", "fresh", N_count))).label,
        "trend_text": trend,
    }
