r"""Appendix *At scale*: the book's measurements read back from the committed results files."""

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
from ..analysis.verdicts import mean_sem
from ..experiments.reuse import TERM_KEYS
from ..model.activations import get_activation
from .figures import (BATCH_ORDER, COLORS, K_COLORS, attach_data, errorbars, finished,
                      legend_below, width_axis)
from .paired import PairedConfig, PairedData
from .spikes import series, terms_summary

#: The files the appendix reads: the spike file, the reuse file (odd bounded link) and its
#: control (the same runs with the even link He_2).
NAMES = ("spike", "reuse", "reuse_he2")
#: The two-steps chapter's settings (Lambda = 0, 1, 2, 3) and widths.
SETTINGS = ((0.2, 0.2), (0.3, 0.3), (0.4, 0.25), (0.45, 0.3))
CHAPTER_NS = (500, 1000, 2000, 4000)
#: The most outliers the spike file counts at a grid point: the singular values it computed
#: there (the command line's default ``n_top``); a count equal to it means "at least".
CEILING = 6
#: Configurations of :func:`paired_from_files`: file name -> label for the reader.
PAIRED_LABELS = {"reuse": r"$\sigma_4$, odd link", "reuse_he2": r"$\sigma_4$, He$_2$ (control)"}

@dataclass
class AtScale:
    r"""The results documents (``docs``), each file's runs (``runs``) and the spike file's grid."""

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

def paired_seeds(data: AtScale, name: str, N: int) -> list:
    """The seeds of file ``name`` at width ``N`` that both batch schemes ran."""
    by = [{r["seed"] for r in data.runs[name].runs(batch=b, N=N)} for b in BATCH_ORDER]
    return sorted(by[0] & by[1])

def provenance(doc: dict, Ns: list) -> dict:
    """How one results document was made: backend, device, dtype, date, versions, threads."""
    env, host = doc.get("environment", {}), doc.get("host", {})
    planned = doc.get("widths_planned") or Ns
    commands = [str(c) for c in doc.get("commands") or [doc.get("command", "?")]]
    return {"backend": doc.get("backend", "?"), "device": env.get("device", doc.get("device", "?")),
            "dtype": doc.get("dtype", doc["params"].get("dtype", "?")),
            "date": str(doc.get("created", "?"))[:10],
            "minutes": float(doc.get("elapsed", float("nan"))) / 60,
            "version": doc.get("version", "?"), "numpy": env.get("numpy", "?"),
            "cores": host.get("cpu_count", "?"),
            "threads": host.get("OPENBLAS_NUM_THREADS") or "default", "nice": host.get("nice", "?"),
            "status": "ran to completion" if doc.get("complete", True) else
            f"was stopped after N = {Ns[-1]} (planned: N = {', '.join(str(N) for N in planned)})",
            # the recorded program ("python tools/at_scale.py") is the package's command line
            "commands": [c.split(" --", 1)[1] if " --" in c else "" for c in commands]}

# --------------------------------------------------------------------------- the terms

def beta_limits(data: AtScale, psi: float = 1.0) -> dict:
    r"""Population overlap of :math:`u_k` with :math:`\beta^\star`, ``{batch: array (L,)}``."""
    target = data.docs["spike"]["params"].get("target", "he1")
    return {b: np.array([float(population_signal(target, psi, k, b).overlaps[0])
                         for k in range(data.L)]) for b in BATCH_ORDER}

def plot_beta(data: AtScale, limits: dict):
    r"""Figure *fig-at-scale-beta*: :math:`|\cos(\hat r_k, \beta^\star)|` against :math:`N`, fresh
    and reused, with each order's population value (dashed) and chance :math:`1/\sqrt N`."""
    s, rows = data.runs["spike"], []
    Ns = np.array(s.axis(), float)
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.9), sharey=True)
    lowest = []
    for panel, (ax, batch) in enumerate(zip(axes, BATCH_ORDER), 1):
        for k in range(data.L):
            col = K_COLORS[k % len(K_COLORS)]
            x, m, e = series(s, "beta", k, batch=batch)
            errorbars(ax, x * (1 + 0.02 * (k - 1.5)), m, e, color=col, label=f"$k = {k}$")
            lowest.append(np.min(m - np.nan_to_num(e)))
            if limits[batch][k] > 1e-8:
                ax.axhline(limits[batch][k], color=col, ls="--", lw=1)
            rows += [dict(panel=panel, batch=batch, k=k, N=t, mean=v, sem=se,
                          limit=limits[batch][k], chance=1 / np.sqrt(t))
                     for t, v, se in zip(x, m, e)]
        ax.plot(Ns, 1 / np.sqrt(Ns), color=COLORS["chance"], ls=":", lw=1.2,
                label=r"chance $1/\sqrt{N}$")
        width_axis(ax, s.axis(), "$N$", thousands=True)
        ax.set(yscale="log", title=f"{batch} batch")
    axes[0].set_ylim(0.5 * max(min(lowest), 1e-4), 1.2)
    axes[0].set_ylabel(r"$|\cos(\hat r_k,\ \beta^\star)|$")
    legend_below(fig, axes[1], ncol=5)
    return finished(attach_data(fig, rows))

# --------------------------------------------------------------------------- the count

def grid_counts(data: AtScale, batch: str, N: int) -> np.ndarray:
    r"""Raw outlier counts of :math:`W_2` at the grid points, ``(runs, points)`` at one width."""
    return data.runs["spike"].seed_values("grid_count", batch=batch, N=N)

def count_means(data: AtScale, batch: str, lam: int) -> list:
    r"""Per width of the spike file: ``(N, mean, sem, censored)`` of the raw count."""
    out = []
    for N in data.runs["spike"].axis():
        c = grid_counts(data, batch, N)[:, data.lam == lam]
        sem = mean_sem(c.mean(axis=1))[1] if len(c) > 1 else math.nan
        out.append((N, float(c.mean()), sem, bool(np.any(c >= CEILING))))
    return out

def plot_counts(data: AtScale):
    r"""Figure *fig-at-scale-counts*: mean raw count of :math:`W_2` per :math:`\Lambda` against
    :math:`N`, fresh and reused, with :math:`1+\Lambda`; a censored mean is an open triangle."""
    Ns, rows = data.runs["spike"].axis(), []
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.9), sharey=True)
    for panel, (ax, batch) in enumerate(zip(axes, BATCH_ORDER), 1):
        for lam in sorted(set(data.lam.tolist())):
            col = K_COLORS[lam % len(K_COLORS)]
            pts = count_means(data, batch, lam)
            ok = [p for p in pts if not p[3]]
            # Open markers of growing size and their own shape, so that means at one value
            # show through each other.
            if ok:
                errorbars(ax, [p[0] for p in ok], [p[1] for p in ok], [p[2] for p in ok],
                          color=col, marker="osDv"[lam % 4], mfc="none", ms=5 + 1.5 * lam,
                          label=f"$\\Lambda = {lam}$ ({int(np.sum(data.lam == lam))} points)")
            cut = [p for p in pts if p[3]]
            if cut:
                # concentric triangles: several Lambda can sit at the ceiling together
                ax.plot([p[0] for p in cut], [p[1] for p in cut], "^", color=col, mfc="none",
                        ms=6 + 2.5 * lam, ls="none")
            ax.axhline(1 + lam, color=col, ls="--", lw=1)
            rows += [dict(panel=panel, batch=batch, Lambda=lam, N=N, mean=m, sem=se, censored=c,
                          theory=1 + lam) for N, m, se, c in pts]
        ax.axhline(CEILING, color=COLORS["chance"], ls=":", lw=1)
        ax.set_title(f"{batch} batch")
        width_axis(ax, Ns, "$N$", thousands=True)
    axes[0].plot([], [], "^", color="0.3", mfc="none", ms=7, ls="none",
                 label=f"with a count at the ceiling {CEILING}: a lower bound")
    axes[0].set_ylabel(r"raw outliers of $W_2$ (above $2\times1.05$)")
    legend_below(fig, axes[0], ncol=3)
    return finished(attach_data(fig, rows))

def extrapolation(count: dict, settings=SETTINGS, chapter_Ns=CHAPTER_NS,
                  margin: float = 0.05) -> list:
    r""":func:`~twostep.analysis.plane.spike_widths` of ``count``'s fresh runs at ``settings``, to
    :math:`\theta_\star`, with ``n_star_chapter`` from the widths in ``chapter_Ns`` alone."""
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

# --------------------------------------------------------------------------- reuse

def paired_from_files(data: AtScale) -> PairedData:
    r"""The reuse files as the reuse chapter's paired runs (:class:`~.paired.PairedData`)."""
    configs, records = {}, []
    for name in ("reuse", "reuse_he2"):
        if name not in data.docs:
            continue
        p, runs = data.docs[name]["params"], data.runs[name]
        configs[name] = PairedConfig(PAIRED_LABELS[name], p.get("activation", "poly4"),
                                     p.get("target", "odd"), float(p.get("c1", 0.5)))
        for N in runs.axis():
            by = {b: {r["seed"]: r for r in runs.runs(batch=b, N=N)} for b in BATCH_ORDER}
            for seed in paired_seeds(data, name, N):
                records.append({"config": name, "N": N, "seed": seed} | {
                    f"{key}_{b}": float(np.asarray(by[b][seed][key], float).ravel()[0])
                    for b in BATCH_ORDER for key in TERM_KEYS})
    p = data.docs["reuse"]["params"]
    a2 = float(p.get("alpha2", 0.25))
    return PairedData(configs, (a2,), (n_spikes(float(p.get("alpha1", 0.4)), a2, data.L),),
                      records)

# --------------------------------------------------------------------------- trends

def trends(data: AtScale, paired: PairedData) -> list:
    r"""Least-squares slopes against :math:`\log_{10}N` of the appendix's trends, one dict each."""
    rows = []

    def add(key, quantity, unit, by_N, log_y=False):
        Ns = sorted(by_N)
        x = np.concatenate([np.full(len(by_N[N]), math.log10(N)) for N in Ns])
        y = np.concatenate([np.log10(by_N[N]) if log_y else np.asarray(by_N[N], float)
                            for N in Ns])
        slope, se = linear_slope(x, y) if len(Ns) >= 2 and x.size >= 3 else (math.nan,) * 2
        prev = Ns[-2] if len(Ns) > 1 else Ns[-1]
        rows.append({"key": key, "quantity": quantity, "unit": unit, "N_lo": Ns[0],
                     "N_hi": Ns[-1], "N_prev": prev, "lo": float(np.mean(by_N[Ns[0]])),
                     "prev": float(np.mean(by_N[prev])), "hi": float(np.mean(by_N[Ns[-1]])),
                     "slope": slope, "se": se, "points": int(x.size)})

    s = data.runs["spike"]
    for batch in BATCH_ORDER:
        for k in range(1, data.L):
            add(f"rem_{batch}_{k}", rf"$\|T_{k}-S_{k}\|/\|S_{k}\|$, {batch}", "exponent of $N$",
                {N: s.seed_values("rel", k, batch=batch, N=N) for N in s.axis(batch=batch)},
                log_y=True)
    add("count", r"mean raw count, $\Lambda\ge1$, fresh", "per decade",
        {N: grid_counts(data, "fresh", N)[:, data.lam >= 1].mean(axis=1) for N in s.axis()})
    for tag, label, key, batch in (
            ("raw", r"$T_2$ top vector, reused − fresh", "term_overlap", "diff"),
            ("proj", r"$T_2^\top a^{\circ3}$, reused", "projected_overlap", "reused"),
            ("null", r"memorised inputs alone", "projected_memorised_null", "reused")):
        add(tag, label, "per decade",
            {N: paired.values("reuse", N, key, batch) for N in paired.Ns("reuse")})
    return rows
