r"""The count over the :math:`(\alpha_1, \alpha_2)` plane and where it can be seen (chapter
*Two steps, several spikes*, its last two sections).

:func:`plane_data` maps the measured count of growing orders over the whole plane from the
scaling study's draws (:mod:`twostep.analysis.plane`) and ranks the points where the count
should be seen soonest; :func:`count_data` reads the count test at the chosen points from
``results/at_scale/count.json`` (:func:`twostep.scale.device.count_on`, written by
``tools/at_scale.py``; :func:`twostep.pages.spikes.results_path`) and judges it by the book's
rule. Along :math:`\alpha_1` at fixed :math:`\alpha_2`, :func:`order_count_data` counts the
orders that grow for a polynomial activation of any degree (claim C6). The ``*_table``
functions return the header and rows of tables whose captions the chapter writes.
"""

from __future__ import annotations

from functools import partial

import matplotlib.pyplot as plt
import numpy as np

from ..analysis.plane import (ALIGNED, CountTest, count_test, empirical_count, is_spike,
                              plane_grid, plane_map, rank_points, theory_count)
from ..analysis.sweep import sweep
from ..analysis.verdicts import share, worst
from ..experiments.spikes import spike_experiment
from ..model.activations import PolynomialActivation
from .figures import BATCH_ORDER, COLORS, finished, legend_from, width_axis
from .report import num, pm, sci, width_verdicts
from .two_steps import SHADE_KEY, shade_plane

METHODS = {"term": r"$s_1(T_k)$", "sum": r"$s_{k+1}(\Sigma)$"}
#: Markers of a measured count below and above Lambda.
LOW, HIGH = "#c0392b", "#e67e22"
#: The widest width that fits one H200 (141 GB) for this task, from its memory per width.
GPU_WIDTH = 45000


def plane_data(scaling, step: float = 0.02) -> dict:
    r"""The map over the plane (:func:`twostep.analysis.plane.plane_map`) for both batches from
    the scaling study's draws, on :func:`~twostep.analysis.plane.plane_grid` with ``step``,
    and the points ranked best per :math:`\Lambda` from the fresh draws
    (:func:`~twostep.analysis.plane.rank_points`)."""
    points = plane_grid(step=step, offset=step / 2, L=scaling.L)
    runs = {b: scaling.summary.runs(batch=b) for b in BATCH_ORDER}
    maps = {b: plane_map(runs[b], points, scaling.c) for b in BATCH_ORDER}
    return {"points": points, "maps": maps, "rank": rank_points(runs["fresh"], points, scaling.c),
            "L": scaling.L}


def chosen(data: dict) -> list:
    r"""The ranked points, :math:`\Lambda = 0..L-1` in turn, best first: ``[[alpha1, alpha2], ...]``."""
    return [[a1, a2] for lam in sorted(data["rank"]) for a1, a2, _ in data["rank"][lam]]


def plot_plane(data: dict):
    r"""Figure *fig-plane*: the plane shaded by the theory's :math:`\Lambda`, with a marker at
    every map point shaded by the measured count of growing orders, edged red where it differs
    from :math:`\Lambda` and drawn open where an order's exponent is not resolved from 0; rows:
    the two measures (:data:`METHODS`), columns: fresh and reused; stars: the chosen points."""
    pick = np.array(chosen(data))
    fig, axes = plt.subplots(2, 2, figsize=(7.0, 7.4), sharex=True, sharey=True)
    for row, method in enumerate(METHODS):
        for col, batch in enumerate(BATCH_ORDER):
            ax, m = axes[row, col], data["maps"][batch]
            shade_plane(ax, data["L"], lw=0.8)
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
    dot = dict(ls="none", marker="o")
    legend_from(fig, SHADE_KEY + [
        (r"$=\Lambda$", dict(dot, ms=3, color="0.15")),
        (r"$=\Lambda$, unresolved", dict(dot, ms=4, mfc="none", mec="0.35")),
        (r"$<\Lambda$", dict(dot, marker="v", ms=5, color=LOW)),
        (r"$>\Lambda$", dict(dot, marker="^", ms=5, color=HIGH)),
        ("chosen", dict(dot, marker="*", ms=9, mfc="white", mec="k"))],
        loc="outside lower center", ncol=5,
        title="background: the theory's $\\Lambda$; markers: the measured count")
    return finished(fig)


def plane_table(data: dict) -> tuple:
    r"""Table *tab-plane*: per batch, measure and :math:`\Lambda`, the map points, the share
    where the measured count equals :math:`\Lambda`, and the share where every order's exponent
    is resolved from 0."""
    rows = []
    for batch in BATCH_ORDER:
        m = data["maps"][batch]
        for method in METHODS:
            c, ok = m.count(method), m.resolved(method)
            for lam in range(data["L"]):
                sel = m.lam == lam
                rows.append([batch, METHODS[method], str(lam), str(int(sel.sum())),
                             f"{np.mean(c[sel] == lam):.0%}", f"{np.mean(ok[sel]):.0%}"])
    return ["batch", "measure", r"$\Lambda$", "points", r"count $=\Lambda$", "resolved"], rows


def exponent_table(data: dict, batch: str = "fresh") -> tuple:
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
                             pm(m.term_exp[i, k], m.term_se[i, k]),
                             pm(m.sum_exp[i, k], m.sum_se[i, k])])
    return ([r"$(\alpha_1,\alpha_2)$", r"$\Lambda$", "$k$", "$e_k$", r"$s_1(T_k)$",
             r"$s_{k+1}(\Sigma)$"], rows)


def plane_numbers(data: dict) -> dict:
    """Glue values of the map: its size and, per batch and measure, the share of points whose
    measured count equals Lambda (``plane_<batch>_<method>``)."""
    maps = data["maps"]
    return {"plane_points": len(data["points"]),
            **{f"plane_{b}_{method}": float(np.mean(maps[b].count(method) == maps[b].lam))
               for b in BATCH_ORDER for method in METHODS}}


# --------------------------------------------------------------------------- the count test

def count_data(doc: dict, kappa: float = 0.2) -> dict:
    r"""The count test of ``doc`` (the ``count`` results file) at step constant ``kappa``, both
    batches (:func:`twostep.analysis.plane.count_test`), its settings and the other constants
    the file holds."""
    params = doc["params"]
    settings = params["settings"]
    L = 4 if params.get("activation", "poly4") == "poly4" else int(params["L"])
    tests = {b: count_test(doc["records"], b, kappa, settings, L) for b in BATCH_ORDER}
    return {"tests": tests, "settings": settings, "L": L, "kappa": kappa,
            "kappas": list(params["kappas"]) + list(params.get("extra_kappas", [])),
            "extra_max_N": int(params.get("extra_max_N", 0)), "records": doc["records"]}


def _range(x) -> str:
    x = np.asarray(x, dtype=float)
    lo, hi = x.min(), x.max()
    return f"{x.mean():.1f}" if lo == hi else f"{x.mean():.1f} ({lo:.0f}–{hi:.0f})"


def count_table(data: dict, batch: str) -> tuple:
    r"""Table *tab-count-<batch>*: per chosen setting, :math:`\Lambda` and :math:`W_2`'s own-edge
    count at each width (mean over seeds, with its range)."""
    t: CountTest = data["tests"][batch]
    return ([r"$(\alpha_1,\alpha_2)$", r"$\Lambda$"] + [f"{N}" for N in t.Ns],
            [[f"({a1:g}, {a2:g})", str(int(t.lam[j]))] + [_range(t.count[N][:, j]) for N in t.Ns]
             for j, (a1, a2) in enumerate(t.settings)])


def _star(lo: float, hi: float) -> str:
    return (f"{sci(lo, 2)}–{sci(hi, 2)}" if np.isfinite(hi) else
            f"{sci(lo, 2)}–∞" if np.isfinite(lo) else "∞")


def judged_table(data: dict) -> tuple:
    r"""Table *tab-count-judged*: per batch and chosen setting, :math:`\Lambda`, the predicted
    :math:`N^\star` of the full count (low–high over seeds and margins), the (seed, width) pairs
    at or beyond its high end with :math:`1+\Lambda` outliers, and the (new outlier :math:`j`,
    seed, width) triples at or beyond their own :math:`N^\star_j` with at least :math:`1+j`."""
    rows = []
    for batch in BATCH_ORDER:
        t: CountTest = data["tests"][batch]
        ns = t.nstar_count()
        for j, (a1, a2) in enumerate(t.settings):
            rows.append([batch, f"({a1:g}, {a2:g})", str(int(t.lam[j])), _star(ns[j, 0], ns[j, 2]),
                         f"{t.hits[j]}/{t.total[j]}" if t.total[j] else "—",
                         f"{t.spike_hits[j]}/{t.spike_total[j]}" if t.spike_total[j] else "—"])
    return ["batch", r"$(\alpha_1,\alpha_2)$", r"$\Lambda$", r"$N^\star$", r"$=1+\Lambda$",
            r"$\ge1+j$"], rows


def _draw_outcomes(t: CountTest, sel, test: str, widths=None) -> tuple:
    r"""``(passed, draws)`` of one test over the settings ``sel``, one item per (setting, seed,
    width) where it applies, each labelled by its draw (width, seed): ``count``, the full count
    :math:`1+\Lambda` at or beyond :math:`N^\star` (high); ``spikes``, at least :math:`1+j`
    beyond :math:`N^\star_j` (high); ``several``, at least two outliers."""
    passed, draws = [], []
    for N in (t.Ns if widths is None else widths):
        for i, seed in enumerate(t.seeds[N]):
            for s in np.flatnonzero(sel):
                c, lam = t.count[N][i, s], int(t.lam[s])
                if test == "count":
                    cases = [c == 1 + lam] if N >= t.nstar[s, lam, 2] else []
                elif test == "spikes":
                    cases = [c >= 1 + j for j in range(1, lam + 1) if N >= t.nstar[s, j, 2]]
                else:
                    cases = [c >= 2]
                passed += [bool(x) for x in cases]
                draws += [(N, seed)] * len(cases)
    return passed, draws


def count_numbers(data: dict) -> dict:
    """Glue values of the count test: the verdict per batch and Lambda (``count_<batch>_<lam>``,
    ``count_<batch>`` the worst; :func:`twostep.analysis.verdicts.share` over the
    (setting, seed, width) triples at or beyond the setting's N*_high), the pairs behind each,
    the widest width, the N* of each Lambda group with new outliers (the smallest high end),
    the width a GPU reaches, the verdict on each new outlier where its own N*_j is reached
    (``spikes_<batch>``, with its triples), and, fresh batch, the settings whose full count
    shows before N* (``early_fresh``)."""
    out = {"count_N_max": max(data["tests"]["fresh"].Ns), "count_gpu_N": GPU_WIDTH,
           "count_kappa": data["kappa"], "count_settings": len(data["settings"])}
    for batch, t in data["tests"].items():
        ns, labels = t.nstar_count(), []
        for lam in sorted(set(t.lam.tolist())):
            sel = t.lam == lam
            v = share(*_draw_outcomes(t, sel, "count"))
            labels.append(v.label)
            out[f"count_{batch}_{lam}"] = labels[-1]
            out[f"count_{batch}_{lam}_hits"], out[f"count_{batch}_{lam}_total"] = v.passed, v.draws
            if lam >= 1:   # Lambda = 0 has no new outlier to wait for
                high = float(np.min(ns[sel, 2]))
                out[f"count_{batch}_{lam}_nstar"] = sci(high, 2) if np.isfinite(high) else "∞"
        out[f"count_{batch}"] = worst(labels)
        v = share(*_draw_outcomes(t, t.lam >= 1, "spikes"))
        out[f"spikes_{batch}"] = v.label
        out[f"spikes_{batch}_hits"], out[f"spikes_{batch}_total"] = v.passed, v.draws
    # Settings whose full count is reached at the widest width on every seed although the
    # conservative rule does not judge it there: inside the predicted range of N*.
    # (Under reuse the memorised inputs fill the count early, so the fresh batch only.)
    t = data["tests"]["fresh"]
    N, ns = t.Ns[-1], t.nstar_count()
    early = [f"({a1:g}, {a2:g})" for j, (a1, a2) in enumerate(t.settings)
             if t.lam[j] >= 1 and ns[j, 0] <= N < ns[j, 2] and np.all(t.count[N][:, j] == 1 + t.lam[j])]
    out["early_fresh"], out["early_fresh_n"] = ", ".join(early) or "none", len(early)
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
        for b_i, batch in enumerate(BATCH_ORDER):
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
        width_axis(ax, Ns, "$N = n = d$", thousands=True)
    legend_from(fig, [("fresh", dict(marker="o", ls="none", color=COLORS["fresh"])),
                      ("reused", dict(marker="o", ls="none", color=COLORS["reused"], mfc="none")),
                      (r"prediction $1+\Lambda$", dict(color=COLORS["theory"], lw=1.2)),
                      ("null: 1", dict(color=COLORS["chance"], ls=":", lw=1.2)),
                      (r"$N \geq N^\star$", dict(patch=True, color=COLORS["theory"], alpha=0.07))],
                loc="outside lower center", ncol=3)
    return finished(fig)


def kappa_table(data: dict) -> tuple:
    r"""Table *tab-count-kappa*: at the widths that carry every :math:`\kappa`, per batch and
    :math:`\kappa`, :math:`W_2`'s own edge (median over the settings with :math:`\Lambda\ge1`
    and seeds, against :math:`W_0`'s edge 2) and the share of those (setting, seed) pairs whose
    count is :math:`1+\Lambda`."""
    recs = [r for r in data["records"] if r["N"] <= data["extra_max_N"]]
    rows = []
    for batch in BATCH_ORDER:
        for kappa in sorted(data["kappas"]):
            t = count_test(recs, batch, kappa, data["settings"], data["L"])
            sel = t.lam >= 1
            rows.append([batch, f"{kappa:g}"] + [
                f"{np.median(t.edge[N][:, sel]):.2f} · {np.mean(t.count[N][:, sel] == 1 + t.lam[sel]):.0%}"
                for N in t.Ns])
    return ["batch", r"$\kappa$"] + [f"$N = {N}$" for N in t.Ns], rows


def width_verdicts_by_test(data: dict) -> dict:
    r"""Three count verdicts (:func:`twostep.analysis.verdicts.share`) at each width of
    the file, per batch, over the settings with :math:`\Lambda \ge 1`: ``count``, whether the
    own-edge count is :math:`1+\Lambda` at the (setting, seed) pairs whose setting's
    :math:`N^\star_{\rm high}` the width reaches; ``spikes``, whether it is at least
    :math:`1+j` at the (new outlier :math:`j`, setting, seed) triples beyond their own
    :math:`N^\star_j` (high); ``several``, whether it is at least 2 at every (setting, seed)
    pair. ``{batch: {test: {N: (hits, total, Verdict)}}}``."""
    out = {}
    for batch, t in data["tests"].items():
        out[batch] = {"count": {}, "spikes": {}, "several": {}}
        for N in t.Ns:
            for test in ("count", "spikes", "several"):
                v = share(*_draw_outcomes(t, t.lam >= 1, test, [N]))
                out[batch][test][N] = (v.passed, v.draws, v)
    return out


def width_numbers(data: dict) -> dict:
    """Glue values for the landing page's verdicts at each width
    (:func:`width_verdicts_by_test`): the count beyond N* per batch (``vw_count_<batch>_<N>``);
    fresh batch, each new outlier where its N*_j is reached (``vw_spikes_fresh_<N>``) and
    "several outliers" (``vw_several_fresh_<N>``), with the widest width's "several" verdict
    and its pairs (``several_fresh``, ``several_fresh_hits``, ``..._pairs``). Under reuse the
    memorised inputs make "several outliers" no test of the claim."""
    by = width_verdicts_by_test(data)
    out = {}
    for batch, test in [(b, "count") for b in by] + [("fresh", "spikes"), ("fresh", "several")]:
        out.update(width_verdicts(f"vw_{test}_{batch}",
                                  {N: v.label for N, (_, _, v) in by[batch][test].items()}))
    hits, pairs, v = by["fresh"]["several"][max(by["fresh"]["several"])]
    out["several_fresh"], out["several_fresh_hits"], out["several_fresh_pairs"] = v.label, hits, pairs
    return out


# --- Claim C6: more orders as alpha1 -> 1/2 (issue 16, item 2) -------------------------

def order_count_data(L: int = 6, alpha2: float = 0.3, Ns=(500, 1000, 2000), seeds: int = 3,
                     alpha1=np.linspace(0.0, 0.48, 49), c: float = 0.2,
                     batch: str = "fresh", n_jobs: int = 1) -> dict:
    r"""Claim C6 with a degree-``L`` polynomial :math:`\sigma_L = \sum_{k\le L}\mathrm{He}_k/k!`:
    how many exact terms :math:`T_k` are spikes that grow, along :math:`\alpha_1` at fixed
    :math:`\alpha_2`.

    One :func:`~twostep.experiments.spikes.spike_experiment` per width (at least two) and
    seed ``0..seeds-1`` (target :math:`\mathrm{He}_1`, :math:`\eta_t = \kappa N^{0.4},
    \kappa N^{0.25}`); since :math:`T_k = \eta_2\eta_1^k\hat T_k`, the spike test and the
    exponent :math:`\hat e_k` of :math:`s_1(\hat T_k)` hold at every step size, and the count at
    :math:`(\alpha_1, \alpha_2)` is the number of spike terms with
    :math:`\alpha_2 + k\alpha_1 + \hat e_k \ge 0` (:func:`empirical_count`). Returns, shape
    ``(L,)``: ``e_hat`` and ``ratio_slope``, the exponents in :math:`N` of
    :math:`s_1(\hat T_k)` and :math:`\|S_k\|/\|T_k-S_k\|_{op}`; ``left``, ``right`` (cosines at
    the largest :math:`N`) and their spread ``left_sd``, ``right_sd``; ``spike``
    (:func:`is_spike`); shape ``(g,)``: ``alpha1``, ``theory`` :math:`\Lambda` and ``measured``
    :math:`\hat\Lambda`; ``measured_seeds`` ``(seeds, g)``, the count from each seed alone; and
    ``L``, ``alpha2``, ``Ns``, ``seeds``. ``n_jobs``: worker processes of the sweep."""
    Ns, a1 = np.array(Ns), np.asarray(alpha1, dtype=float)
    activation = PolynomialActivation([0.0] + [1.0] * L, name=f"sigma_{L}")
    task = partial(spike_experiment, batch=batch, activation=activation, target="he1", c1=c,
                   alpha1=0.4, c2=c, alpha2=0.25)
    records = sweep(task, [{"N": int(N)} for N in Ns], seeds=range(seeds), n_jobs=n_jobs,
                    cost=lambda p: p["N"] ** 3)

    def per_run(value):     # (widths, seeds, L)
        return np.array([value(r) for r in records]).reshape(Ns.size, seeds, L)

    top, ratio = per_run(lambda r: r["top_free"]), per_run(lambda r: r["signal"] / r["residual"])
    left, right = per_run(lambda r: r["left"])[-1], per_run(lambda r: r["right"])[-1]

    def fit(x):     # the exponents in N of x (widths, ...), fitted in logs along the widths
        return np.polyfit(np.log(Ns), np.log(x).reshape(len(Ns), -1), 1)[0].reshape(x.shape[1:])

    e_hat, slope, e_seed, r_seed = fit(top.mean(1)), fit(ratio.mean(1)), fit(top), fit(ratio)
    spike = is_spike(left.mean(0), right.mean(0), slope)
    per_seed = [empirical_count(a1, alpha2, e_seed[s], is_spike(left[s], right[s], r_seed[s]), L)
                for s in range(seeds)]     # the same count from one seed's draws alone
    return dict(L=L, alpha2=alpha2, Ns=Ns, seeds=seeds, e_hat=e_hat, ratio_slope=slope,
                left=left.mean(0), right=right.mean(0), left_sd=left.std(0),
                right_sd=right.std(0), spike=spike, alpha1=a1, theory=theory_count(a1, alpha2, L),
                measured=empirical_count(a1, alpha2, e_hat, spike, L),
                measured_seeds=np.array(per_seed))


def plot_order_count(data: dict):
    r"""(a) :math:`\Lambda` and the measured count along :math:`\alpha_1` at fixed :math:`\alpha_2`;
    (b) the top-vector cosines of each :math:`T_k` at the largest width, with the threshold
    :math:`1/\sqrt2` and the chance levels :math:`1/\sqrt N`."""
    a1, a2, N = data["alpha1"], data["alpha2"], data["Ns"][-1]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(7.0, 3.9), gridspec_kw={"width_ratios": [1.15, 1]})
    ax.step(a1, data["theory"], where="post", color=COLORS["theory"], lw=1.6,
            label=rf"(a) theory $\Lambda(\alpha_1, {a2:g})$, $L = {data['L']}$")
    ax.step(a1, data["measured"], where="post", color=COLORS["fresh"], lw=1.6, ls="--",
            label=r"(a) measured: spike terms with $\alpha_2 + k\alpha_1 + \hat e_k \geq 0$")
    ax.set(xlabel=r"$\alpha_1$", ylabel="new outliers", xlim=(0, 0.5),
           title=rf"(a) count along $\alpha_1$, $\alpha_2 = {a2:g}$")
    k = np.arange(data["L"])
    bx.errorbar(k - 0.08, data["left"], yerr=data["left_sd"], fmt="o", color=COLORS["fresh"],
                capsize=2, label=r"(b) left vector vs $a^{\circ(k+1)}$")
    bx.errorbar(k + 0.08, data["right"], yerr=data["right_sd"], fmt="s", color=COLORS["reused"],
                capsize=2, label=r"(b) right vector vs $u_k$")
    bx.axhline(ALIGNED, color=COLORS["theory"], ls=":", lw=1, label=r"(b) threshold $1/\sqrt{2}$")
    bx.axhline(1 / np.sqrt(N), color=COLORS["chance"], ls="--", lw=1,
               label=r"(b) chance $1/\sqrt{N}$")
    bx.set(xlabel="order $k$", ylabel="cosine", ylim=(0, 1.05), xticks=k,
           title=rf"(b) is $T_k$ a spike? $N = {N}$")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = bx.get_legend_handles_labels()
    fig.legend(h1 + h2, l1 + l2, loc="outside lower center", ncol=2)
    return finished(fig)


def order_count_verdict(data: dict) -> dict:
    r"""Verdict of "more directions as :math:`\alpha_1\to1/2`", judged as a count
    (:func:`twostep.analysis.verdicts.share`): at the middle of each interval of
    :math:`\alpha_1` where the theory's :math:`\Lambda` is constant, and for each seed's own
    count, whether the measured count equals :math:`\Lambda`. Returns ``verdict_c6``, the pairs
    ``c6_hits`` of ``c6_pairs``, and ``c6_points`` (the midpoints)."""
    a1, a2, seeds = data["alpha1"], data["alpha2"], data["seeds"]
    edges = [0.0] + [0.5 - a2 / k for k in range(1, data["L"]) if 0.5 - a2 / k > 0]
    edges = sorted(set(edges)) + [0.5]
    mids = [(lo + hi) / 2 for lo, hi in zip(edges[:-1], edges[1:])]
    cols = [int(np.argmin(np.abs(a1 - m))) for m in mids]
    ok = data["measured_seeds"][:, cols] == data["theory"][cols]      # (seeds, points)
    v = share([bool(x) for x in ok.ravel()], draws=np.repeat(np.arange(seeds), len(cols)))
    return {"verdict_c6": v.label, "c6_hits": v.passed, "c6_pairs": v.draws, "c6_points": ", ".join(f"{a1[c]:.2f}" for c in cols)}
