r"""The count over the :math:`(\alpha_1, \alpha_2)` plane and where it can be seen (chapter
*Two steps, several spikes*, its last two sections).

:func:`plane_data` maps the measured count of growing orders over the whole plane from the
scaling study's draws (:mod:`twostep.analysis.plane`) and ranks the points where the count
should be seen soonest; :func:`count_data` reads the count test at the chosen points from
``results/at_scale/count.json`` (:func:`twostep.scale.device.count_on`, written by
``tools/at_scale.py``) and judges it by the book's rule.
"""

from __future__ import annotations

import numpy as np
from matplotlib import pyplot as plt
from matplotlib.colors import ListedColormap
from matplotlib.lines import Line2D

from ..analysis.plane import (CountTest, PlaneMap, count_test, plane_grid, plane_map,
                              rank_points)
from ..analysis.theory import n_spikes, phase_boundaries, spike_exponent
from ..analysis.verdicts import count_verdict, worst
from .figures import COLORS
from .report import markdown_table, num, sci, width_verdicts

#: One shade per value of Lambda (and of a measured count), 0..3.
SHADES = ListedColormap(["#f7f7f7", "#d6e6f4", "#a6cbe6", "#6fa8d6"])
METHODS = {"term": r"$s_1(T_k)$", "sum": r"$s_{k+1}(\Sigma)$"}
#: Markers of a measured count below and above Lambda.
LOW, HIGH = "#c0392b", "#e67e22"
#: Fresh first: the count is the paper's claim for any batch, and the fresh batch has no
#: memorised inputs.
ORDER = ("fresh", "reused")
#: The widest width that fits one H200 (141 GB) for this task, from its memory per width.
GPU_WIDTH = 45000


def plane_data(scaling, step: float = 0.02) -> dict:
    r"""The map over the plane (:func:`twostep.analysis.plane.plane_map`) for both batches from
    the scaling study's draws, on :func:`~twostep.analysis.plane.plane_grid` with ``step``,
    and the points ranked best per :math:`\Lambda` from the fresh draws
    (:func:`~twostep.analysis.plane.rank_points`)."""
    points = plane_grid(step=step, offset=step / 2, L=scaling.L)
    maps = {b: plane_map([r for r in scaling.records if r["batch"] == b], points, scaling.c)
            for b in ORDER}
    fresh = [r for r in scaling.records if r["batch"] == "fresh"]
    return {"points": points, "maps": maps, "rank": rank_points(fresh, points, scaling.c),
            "kappa": scaling.c, "Ns": scaling.Ns, "seeds": scaling.seeds, "L": scaling.L,
            "step": step}


def chosen(data: dict) -> list:
    r"""The ranked points, :math:`\Lambda = 0..L-1` in turn, best first: ``[[alpha1, alpha2], ...]``."""
    return [[a1, a2] for lam in sorted(data["rank"]) for a1, a2, _ in data["rank"][lam]]


def plot_plane(data: dict):
    r"""Figure *fig-plane*: the plane shaded by the theory's :math:`\Lambda`, with a marker at
    every map point shaded by the measured count of growing orders, edged red where it differs
    from :math:`\Lambda` and drawn open where an order's exponent is not resolved from 0; rows:
    the two measures (:data:`METHODS`), columns: fresh and reused; stars: the chosen points."""
    L = data["L"]
    fine = np.linspace(0, 0.4999, 300)
    F1, F2 = np.meshgrid(fine, fine, indexing="ij")
    theory = np.vectorize(lambda x, y: n_spikes(x, y, L))(F1, F2)
    pick = np.array(chosen(data))
    fig, axes = plt.subplots(2, 2, figsize=(7.0, 7.4), sharex=True, sharey=True)
    for row, method in enumerate(METHODS):
        for col, batch in enumerate(ORDER):
            ax, m = axes[row, col], data["maps"][batch]
            ax.pcolormesh(fine, fine, theory.T, cmap=SHADES, vmin=-0.5, vmax=3.5, shading="auto",
                          rasterized=True)
            for k in range(1, L):
                ax.plot(fine, phase_boundaries(fine, k), color="k", lw=0.8)
            count, ok = m.count(method), m.resolved(method)
            for sel, style in ((ok & (count == m.lam), dict(marker="o", s=4, c="0.15")),
                               (~ok & (count == m.lam), dict(marker="o", s=10, c="none",
                                                             edgecolors="0.35", linewidths=0.6)),
                               (count < m.lam, dict(marker="v", s=16, c=LOW)),
                               (count > m.lam, dict(marker="^", s=16, c=HIGH))):
                ax.scatter(m.points[sel, 0], m.points[sel, 1], rasterized=True, **style)
            ax.plot(pick[:, 0], pick[:, 1], ls="none", marker="*", ms=9, mfc="white", mec="k",
                    mew=0.8)
            agree = float(np.mean(count == m.lam))
            ax.set(xlim=(0, 0.5), ylim=(0, 0.5), aspect="equal",
                   title=f"({'ab'[row]}{col + 1}) {METHODS[method]}, {batch}: "
                         f"{agree:.0%} agree")
            ax.grid(False)
    for ax in axes[-1]:
        ax.set_xlabel(r"$\alpha_1$")
    for ax in axes[:, 0]:
        ax.set_ylabel(r"$\alpha_2$")
    handles = [Line2D([], [], ls="none", marker="s", ms=8, mfc=SHADES(v), mec="0.6",
                      label=rf"$\Lambda = {v}$") for v in range(4)]
    handles += [Line2D([], [], ls="none", marker="o", ms=3, color="0.15", label=r"$=\Lambda$"),
                Line2D([], [], ls="none", marker="o", ms=4, mfc="none", mec="0.35",
                       label=r"$=\Lambda$, unresolved"),
                Line2D([], [], ls="none", marker="v", ms=5, color=LOW, label=r"$<\Lambda$"),
                Line2D([], [], ls="none", marker="^", ms=5, color=HIGH, label=r"$>\Lambda$"),
                Line2D([], [], ls="none", marker="*", ms=9, mfc="white", mec="k",
                       label="chosen")]
    fig.legend(handles=handles, loc="outside lower center", ncol=5,
               title="background: the theory's $\\Lambda$; markers: the measured count")
    plt.close(fig)
    return fig


def plane_table(data: dict):
    r"""Table *tab-plane*: per batch, measure and :math:`\Lambda`, the map points, the share
    where the measured count equals :math:`\Lambda`, and the share where every order's exponent
    is resolved from 0."""
    rows = []
    for batch in ORDER:
        m = data["maps"][batch]
        for method in METHODS:
            c, ok = m.count(method), m.resolved(method)
            for lam in range(data["L"]):
                sel = m.lam == lam
                rows.append([batch, METHODS[method], str(lam), str(int(sel.sum())),
                             f"{np.mean(c[sel] == lam):.0%}", f"{np.mean(ok[sel]):.0%}"])
    return markdown_table(
        f"The map of the figure above in numbers: {len(data['points'])} points, "
        f"widths {data['Ns'][0]}–{data['Ns'][-1]}, {len(data['seeds'])} seeds each.",
        "tab-plane", ["batch", "measure", r"$\Lambda$", "points", r"count $=\Lambda$",
                      "resolved"], rows)


def exponent_table(data: dict, batch: str = "fresh"):
    r"""Table *tab-plane-exponents*: at each chosen point, for the weakest order the count
    includes, :math:`k = \Lambda`, and the first it leaves out, :math:`k = \Lambda+1` (orders
    :math:`1..L-1`), the theory's :math:`e_k` and the two measured exponents with their
    standard errors."""
    m = data["maps"][batch]
    rows = []
    for a1, a2 in chosen(data):
        i = int(np.flatnonzero(np.all(np.isclose(m.points, [a1, a2]), axis=1))[0])
        lam = int(m.lam[i])
        for k in (lam, lam + 1):
            if 1 <= k < data["L"]:
                rows.append([f"({a1:g}, {a2:g})", str(lam), str(k), num(m.e[i, k]),
                             f"{num(m.term_exp[i, k])} ± {num(m.term_se[i, k])}",
                             f"{num(m.sum_exp[i, k])} ± {num(m.sum_se[i, k])}"])
    return markdown_table(
        f"At the chosen points ({batch} batch), for the weakest order the count includes "
        r"($k = \Lambda$) and the first it leaves out ($k = \Lambda + 1$): the theory's $e_k$ "
        r"and the fitted exponents of $s_1(T_k)$ and of $s_{k+1}(\Sigma)$, ± one standard "
        f"error over {len(data['seeds'])} seeds at {len(data['Ns'])} widths.",
        "tab-plane-exponents", [r"$(\alpha_1,\alpha_2)$", r"$\Lambda$", "$k$", "$e_k$",
                                r"$s_1(T_k)$", r"$s_{k+1}(\Sigma)$"], rows)


def plane_numbers(data: dict) -> dict:
    """Glue values of the map: its size and, per batch and measure, the share of points whose
    measured count equals Lambda (``plane_<batch>_<method>``)."""
    out = {"plane_points": len(data["points"])}
    for batch in ORDER:
        for method in METHODS:
            m = data["maps"][batch]
            out[f"plane_{batch}_{method}"] = float(np.mean(m.count(method) == m.lam))
    return out


# --------------------------------------------------------------------------- the count test

def count_data(doc: dict, kappa: float = 0.2) -> dict:
    r"""The count test of ``doc`` (the ``count`` results file) at step constant ``kappa``, both
    batches (:func:`twostep.analysis.plane.count_test`), its settings and the other constants
    the file holds."""
    params = doc["params"]
    settings = params["settings"]
    L = 4 if params.get("activation", "poly4") == "poly4" else int(params["L"])
    tests = {b: count_test(doc["records"], b, kappa, settings, L) for b in ORDER}
    return {"tests": tests, "settings": settings, "L": L, "kappa": kappa,
            "kappas": list(params["kappas"]) + list(params.get("extra_kappas", [])),
            "extra_max_N": int(params.get("extra_max_N", 0)), "records": doc["records"]}


def _range(x) -> str:
    x = np.asarray(x, dtype=float)
    lo, hi = x.min(), x.max()
    return f"{x.mean():.1f}" if lo == hi else f"{x.mean():.1f} ({lo:.0f}–{hi:.0f})"


def count_table(data: dict, batch: str):
    r"""Table *tab-count-<batch>*: per chosen setting, :math:`\Lambda` and :math:`W_2`'s own-edge
    count at each width (mean over seeds, with its range)."""
    t: CountTest = data["tests"][batch]
    rows = [[f"({a1:g}, {a2:g})", str(int(t.lam[j]))] + [_range(t.count[N][:, j]) for N in t.Ns]
            for j, (a1, a2) in enumerate(t.settings)]
    return markdown_table(
        f"The count test, {batch} batch, $\\kappa = {t.kappa:g}$: $W_2$'s outliers beyond "
        r"$1.05$ times its own edge at each width $N$, mean over seeds with the range in "
        r"brackets (at most 8 are counted), to set against $1 + \Lambda$.", f"tab-count-{batch}",
        [r"$(\alpha_1,\alpha_2)$", r"$\Lambda$"] + [f"{N}" for N in t.Ns], rows)


def _star(lo: float, hi: float) -> str:
    return (f"{sci(lo, 2)}–{sci(hi, 2)}" if np.isfinite(hi) else
            f"{sci(lo, 2)}–∞" if np.isfinite(lo) else "∞")


def judged_table(data: dict):
    r"""Table *tab-count-judged*: per batch and chosen setting, :math:`\Lambda`, the predicted
    :math:`N^\star` of the full count (low–high over seeds and margins), the (seed, width) pairs
    at or beyond its high end with :math:`1+\Lambda` outliers, and the (new outlier :math:`j`,
    seed, width) triples at or beyond their own :math:`N^\star_j` with at least :math:`1+j`."""
    rows = []
    for batch in ORDER:
        t: CountTest = data["tests"][batch]
        ns = t.nstar_count()
        for j, (a1, a2) in enumerate(t.settings):
            rows.append([batch, f"({a1:g}, {a2:g})", str(int(t.lam[j])), _star(ns[j, 0], ns[j, 2]),
                         f"{t.hits[j]}/{t.total[j]}" if t.total[j] else "—",
                         f"{t.spike_hits[j]}/{t.spike_total[j]}" if t.spike_total[j] else "—"])
    return markdown_table(
        r"Where the count is judged. $N^\star$: the width at which the spike sum's "
        r"$(\Lambda+1)$-th singular value is extrapolated to clear $W_2$'s own edge (low–high "
        r"over seeds and margins of 2 % and 10 %). Then the (seed, width) pairs at or past its high "
        r"end with $1+\Lambda$ outliers, and the (new outlier $j$, seed, width) triples at or past "
        r"$N^\star_j$ with at least $1+j$.",
        "tab-count-judged", ["batch", r"$(\alpha_1,\alpha_2)$", r"$\Lambda$", r"$N^\star$",
                             r"$=1+\Lambda$", r"$\ge1+j$"], rows)


def count_verdicts(data: dict) -> dict:
    r"""The count claim judged by the rule (:func:`twostep.analysis.verdicts.count_verdict`):
    per batch and :math:`\Lambda`, over the (setting, seed, width) triples at or beyond the
    setting's :math:`N^\star_{\rm high}`; ``{batch: {lam: Verdict, "all": label}}``."""
    out = {}
    for batch, t in data["tests"].items():
        seeds = min(len(s) for s in t.seeds.values())
        per = {}
        for lam in sorted(set(t.lam.tolist())):
            sel = t.lam == lam
            per[lam] = count_verdict(int(t.hits[sel].sum()), int(t.total[sel].sum()), seeds=seeds)
        per["all"] = worst(per[lam] for lam in per)
        out[batch] = per
    return out


def count_numbers(data: dict) -> dict:
    """Glue values of the count test: the verdict per batch and Lambda (``count_<batch>_<lam>``,
    ``count_<batch>`` the worst), the pairs behind each, the widest width, the N* of each
    Lambda group with new outliers (the smallest high end), the width a GPU reaches, the verdict
    on each new outlier where its own N*_j is reached (``spikes_<batch>``, with its triples), and,
    fresh batch, the settings whose full count shows before N* (``early_fresh``)."""
    out = {"count_N_max": max(data["tests"]["fresh"].Ns), "count_gpu_N": GPU_WIDTH,
           "count_kappa": data["kappa"], "count_settings": len(data["settings"])}
    for batch, per in count_verdicts(data).items():
        t = data["tests"][batch]
        out[f"count_{batch}"] = per["all"]
        hits, total = int(t.spike_hits.sum()), int(t.spike_total.sum())
        seeds = min(len(x) for x in t.seeds.values())
        # Settings whose full count is reached at the widest width on every seed although the
        # conservative rule does not judge it there: inside the predicted range of N*.
        # (Under reuse the memorised inputs fill the count early, so the fresh batch only.)
        N, ns = t.Ns[-1], t.nstar_count()
        early = [f"({a1:g}, {a2:g})" for j, (a1, a2) in enumerate(t.settings)
                 if t.lam[j] >= 1 and ns[j, 0] <= N < ns[j, 2]
                 and np.all(t.count[N][:, j] == 1 + t.lam[j])]
        if batch == "fresh":
            out["early_fresh"] = ", ".join(early) if early else "none"
            out["early_fresh_n"] = len(early)
        out[f"spikes_{batch}"] = count_verdict(hits, total, seeds=seeds).label
        out[f"spikes_{batch}_hits"], out[f"spikes_{batch}_total"] = hits, total
        for lam in sorted(k for k in per if k != "all"):
            v, sel = per[lam], t.lam == lam
            out[f"count_{batch}_{lam}"] = v.label
            out[f"count_{batch}_{lam}_hits"] = int(t.hits[sel].sum())
            out[f"count_{batch}_{lam}_total"] = int(t.total[sel].sum())
            if lam >= 1:   # Lambda = 0 has no new outlier to wait for
                high = float(np.min(t.nstar_count()[sel, 2]))
                out[f"count_{batch}_{lam}_nstar"] = sci(high, 2) if np.isfinite(high) else "∞"
    return out


def plot_count(data: dict):
    r"""Figure *fig-count*: :math:`W_2`'s own-edge count against :math:`N`, one panel per
    :math:`\Lambda`, the settings of that :math:`\Lambda` side by side (marker shape; mean
    over seeds, bars: range), both batches (colour); lines at the prediction :math:`1+\Lambda`
    and at the null 1 (the first spike alone); shaded, the widths at or beyond the smallest
    :math:`N^\star_{\rm high}` of the group, fresh batch."""
    fig, axes = plt.subplots(2, 2, figsize=(6.9, 6.0), sharex=True)
    markers = ("o", "s", "^")
    Ns = data["tests"]["fresh"].Ns
    xlim = (Ns[0] / 1.4, Ns[-1] * 1.4)
    for lam, ax in enumerate(axes.flat):
        top = 1 + lam
        for b_i, batch in enumerate(ORDER):
            t = data["tests"][batch]
            idx = np.flatnonzero(t.lam == lam)
            for m_i, j in enumerate(idx):
                N = np.array(t.Ns, dtype=float)
                c = [t.count[w][:, j] for w in t.Ns]
                mean = np.array([x.mean() for x in c])
                err = [mean - [x.min() for x in c], [x.max() for x in c] - mean]
                top = max(top, max(x.max() for x in c))
                shift = 1.0 + 0.06 * (m_i - 1) + 0.025 * (b_i - 0.5)
                a1, a2 = t.settings[j]
                ax.errorbar(N * shift, mean, yerr=err, fmt=markers[m_i % 3], ms=4, capsize=2,
                            lw=1, color=COLORS[batch],
                            # Reused open (not white): drawn second, it must not cover the
                            # fresh marker where the two counts agree.
                            mfc=COLORS[batch] if batch == "fresh" else "none",
                            label=f"({a1:g}, {a2:g})" if b_i == 0 else None)
            high = float(np.min(t.nstar_count()[idx, 2])) if idx.size else np.inf
            if batch == "fresh" and high < xlim[1]:
                ax.axvspan(max(high, xlim[0]), xlim[1], color=COLORS["theory"], alpha=0.07, lw=0)
        ax.axhline(1 + lam, color=COLORS["theory"], lw=1.2)
        ax.axhline(1, color=COLORS["chance"], ls=":", lw=1.2)
        ax.set(xscale="log", xlim=xlim, ylim=(-0.3, top + 1.3),
               title=rf"({'abcd'[lam]}) $\Lambda = {lam}$", ylabel="outliers of $W_2$")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper left", ncol=3, handlelength=1.0, borderaxespad=0.2,
                      columnspacing=0.8, title=r"$(\alpha_1, \alpha_2)$", fontsize=8)
    for ax in axes[-1]:
        ax.set_xticks(Ns, [f"{N // 1000}k" for N in Ns])
        ax.minorticks_off()
        ax.set_xlabel("$N = n = d$")
    handles = [Line2D([], [], marker="o", ls="none", color=COLORS["fresh"], label="fresh"),
               Line2D([], [], marker="o", ls="none", color=COLORS["reused"], mfc="none",
                      label="reused"),
               Line2D([], [], color=COLORS["theory"], lw=1.2, label=r"prediction $1+\Lambda$"),
               Line2D([], [], color=COLORS["chance"], ls=":", lw=1.2, label="null: 1"),
               plt.Rectangle((0, 0), 1, 1, color=COLORS["theory"], alpha=0.07,
                             label=r"$N \geq N^\star$")]
    fig.legend(handles=handles, loc="outside lower center", ncol=3)
    plt.close(fig)
    return fig


def kappa_table(data: dict):
    r"""Table *tab-count-kappa*: at the widths that carry every :math:`\kappa`, per batch and
    :math:`\kappa`, :math:`W_2`'s own edge (median over the settings with :math:`\Lambda\ge1`
    and seeds, against :math:`W_0`'s edge 2) and the share of those (setting, seed) pairs whose
    count is :math:`1+\Lambda`."""
    settings = np.asarray(data["settings"], dtype=float)
    L = data["L"]
    lam = np.array([n_spikes(a1, a2, L) for a1, a2 in settings])
    rows = []
    widths = sorted({r["N"] for r in data["records"] if r["N"] <= data["extra_max_N"]})
    for batch in ORDER:
        for kappa in sorted(data["kappas"]):
            cells = []
            for N in widths:
                recs = [r for r in data["records"] if r["N"] == N and r["batch"] == batch]
                edges, hits = [], []
                for r in recs:
                    for j, (a1, a2) in enumerate(settings):
                        if lam[j] < 1:
                            continue
                        i = np.flatnonzero(np.all(np.isclose(r["points"], [kappa, a1, a2]),
                                                  axis=1))[0]
                        edges.append(r["edge_own"][i])
                        hits.append(r["count_own"][i] == 1 + lam[j])
                cells.append(f"{np.median(edges):.2f} · {np.mean(hits):.0%}")
            rows.append([batch, f"{kappa:g}"] + cells)
    return markdown_table(
        r"The step constant $\kappa$ ($\eta_t = \kappa N^{\alpha_t}$) at the smallest widths, "
        r"over the chosen settings with $\Lambda \ge 1$: $W_2$'s own edge (median; $W_0$'s "
        r"is 2) · the share of (setting, seed) pairs with $1 + \Lambda$ outliers.",
        "tab-count-kappa", ["batch", r"$\kappa$"] + [f"$N = {N}$" for N in widths], rows)


def count_by_width(data: dict) -> dict:
    r"""The count verdict at each width of the file, per batch, for the settings with
    :math:`\Lambda \ge 1`: over the (setting, seed) pairs at that width whose setting's
    :math:`N^\star_{\rm high}` it reaches ("not judged" where none does);
    ``{batch: {N: label}}``."""
    out = {}
    for batch, t in data["tests"].items():
        out[batch] = {}
        for N in t.Ns:
            sel = (t.nstar_count()[:, 2] <= N) & (t.lam >= 1)
            hits = int(np.sum(t.count[N][:, sel] == 1 + t.lam[sel]))
            total = int(sel.sum()) * len(t.seeds[N])
            out[batch][N] = count_verdict(hits, total, seeds=len(t.seeds[N])).label
    return out


def several_by_width(data: dict) -> dict:
    r"""The verdict that :math:`W_2` has several outliers: at each width, over the (setting, seed)
    pairs with :math:`\Lambda \ge 1`, whether the own-edge count is at least 2 (a count claim,
    :func:`twostep.analysis.verdicts.count_verdict`); ``{batch: {N: (hits, pairs, Verdict)}}``."""
    out = {}
    for batch, t in data["tests"].items():
        sel = t.lam >= 1
        out[batch] = {}
        for N in t.Ns:
            hits, pairs = int(np.sum(t.count[N][:, sel] >= 2)), int(sel.sum()) * len(t.seeds[N])
            out[batch][N] = (hits, pairs, count_verdict(hits, pairs, seeds=len(t.seeds[N])))
    return out


def spikes_by_width(data: dict) -> dict:
    r"""The verdict on each new outlier at each width, per batch: over the (new outlier
    :math:`j`, setting, seed) triples at that width beyond their own :math:`N^\star_j` (high),
    whether the count is at least :math:`1+j`; ``{batch: {N: label}}``."""
    out = {}
    for batch, t in data["tests"].items():
        out[batch] = {}
        for N in t.Ns:
            hits = total = 0
            for s_i, lam in enumerate(t.lam):
                for j in range(1, lam + 1):
                    if N >= t.nstar[s_i, j, 2]:
                        total += len(t.seeds[N])
                        hits += int(np.sum(t.count[N][:, s_i] >= 1 + j))
            out[batch][N] = count_verdict(hits, total, seeds=len(t.seeds[N])).label
    return out


def width_numbers(data: dict) -> dict:
    """Glue values for the landing page's verdicts at each width: the count beyond N* per batch
    (``vw_count_<batch>_<N>``, :func:`count_by_width`); fresh batch, each new outlier where
    its N*_j is reached (``vw_spikes_fresh_<N>``, :func:`spikes_by_width`) and "several
    outliers" (``vw_several_fresh_<N>``, :func:`several_by_width`), with the widest width's
    "several" verdict and its pairs (``several_fresh``, ``several_fresh_hits``, ``..._pairs``).
    Under reuse the memorised inputs make "several outliers" no test of the claim."""
    out = {}
    for batch, labels in count_by_width(data).items():
        out.update(width_verdicts(f"vw_count_{batch}", labels))
    out.update(width_verdicts("vw_spikes_fresh", spikes_by_width(data)["fresh"]))
    by = several_by_width(data)["fresh"]
    out.update(width_verdicts("vw_several_fresh", {N: v.label for N, (_, _, v) in by.items()}))
    hits, pairs, v = by[max(by)]
    out["several_fresh"], out["several_fresh_hits"], out["several_fresh_pairs"] = v.label, hits, pairs
    return out
