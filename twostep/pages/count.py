r"""The count of *Two steps, several spikes* and its appendix: the phase diagram, the map of the
count over the :math:`(\alpha_1, \alpha_2)` plane, the orders along :math:`\alpha_1`, and
:math:`W_2`'s outliers draw by draw in a count results file."""

from __future__ import annotations

from functools import partial

import matplotlib.pyplot as plt
import numpy as np

from ..analysis.confirmatory import nstar_array
from ..analysis.plane import (ALIGNED, count_margins, empirical_boundary, empirical_count,
                              is_spike, plane_grid, plane_map, predicted_count, rank_points,
                              theory_count)
from ..analysis.sweep import sweep
from ..experiments.spikes import spike_experiment
from ..model.activations import PolynomialActivation
from .figures import BATCH_ORDER, COLORS, K_COLORS, attach_data, finished, legend_from, width_axis
from .two_steps import SHADE_KEY, shade_plane

#: The two measures of the map: the exact term, and the spike sum's singular value.
METHODS = {"term": r"$s_1(T_k)$", "sum": r"$s_{k+1}(\Sigma)$"}
#: A count that differs from the theory's: below, above (markers of the map, numbers of the
#: phase diagram: dark enough to read on the blue shades).
LOW, HIGH = "#a93226", "#d35400"

# --------------------------------------------------------------------------- the phase diagram

def phase_data(scaling, n_se: float = 2.0) -> dict:
    r"""The empirical phase diagram from the scaling study."""
    s, L, N, n = scaling.summary, scaling.L, scaling.Ns[-1], len(scaling.alphas)
    A1, A2 = np.meshgrid(scaling.alphas, scaling.alphas, indexing="ij")
    out = dict(alphas=scaling.alphas, L=L, n_se=n_se, n_top=scaling.n_top,
               theory=theory_count(A1, A2, L), emp={}, emp_grid={}, exp_grid={}, raw={})
    for b in BATCH_ORDER:
        top = np.array([scaling.slope(b, "top_free", k) for k in range(L)])
        rel = np.array([scaling.slope(b, "rel", k) for k in range(L)])
        left, right = s.at("left", batch=b, N=N), s.at("right", batch=b, N=N)
        spike = is_spike(left, right, -rel[:, 0] - n_se * rel[:, 1])
        out["emp"][b] = dict(e_hat=top[:, 0], e_se=top[:, 1], ratio_slope=-rel[:, 0],
                             ratio_se=rel[:, 1], left=left, right=right, spike=spike)
        out["emp_grid"][b] = empirical_count(A1, A2, top[:, 0], spike, L)
        out["exp_grid"][b] = empirical_count(A1, A2, top[:, 0], np.ones(L, bool), L)
        out["raw"][b] = s.seed_values("grid_count", batch=b, N=scaling.n_grid).mean(0).reshape(n, n)
    out["margins"] = count_margins(scaling.alphas, out["emp"]["fresh"]["e_hat"], L)
    return out

def plot_phase(data: dict, resolution: int = 400):
    r"""Figure *fig-phase*: the plane shaded by :math:`\Lambda` with the theory's and the measured
    boundaries and the raw counts of :math:`W_2` (fresh, reused); differences in bold red."""
    L, alphas, ceiling, emp = data["L"], data["alphas"], data["n_top"], data["emp"]
    fine = np.linspace(0, 0.4999, resolution)
    fig, grid = plt.subplots(2, 2, figsize=(7.0, 7.0))
    axes, ax_key, rows = list(grid.flat[:3]), grid.flat[3], []
    ticks = [0, 0.1, 0.2, 0.3, 0.4, 0.5]
    for ax in axes:
        shade_plane(ax, L, resolution)
        ax.set(xlim=(0, 0.5), ylim=(0, 0.5), xlabel=r"$\alpha_1$", ylabel=r"$\alpha_2$",
               aspect="equal", xticks=ticks, yticks=ticks)
    box = dict(boxstyle="round,pad=0.12", fc="white", ec="none", alpha=0.9)
    for k in range(1, L):
        col = K_COLORS[k % len(K_COLORS)]
        axes[0].plot(fine, empirical_boundary(fine, k, emp["fresh"]["e_hat"][k]), color=col,
                     ls="--", lw=1.4)
        x_top = (-emp["fresh"]["e_hat"][k] - 0.5) / k      # where the measured line leaves the plot
        axes[0].text(x_top + 0.012, 0.49, f"$k={k}$", color=col, ha="left", va="top", bbox=box)
    panel_names = ("a: 1 + measured count, fresh", "b: raw, fresh", "c: raw, reused")
    for i, a1 in enumerate(alphas):
        for j, a2 in enumerate(alphas):
            values = [1 + data["emp_grid"]["fresh"][i, j]] + [data["raw"][b][i, j]
                                                             for b in BATCH_ORDER]
            for p, (ax, val) in enumerate(zip(axes, values)):
                censored = p > 0 and val >= ceiling
                txt = (f"≥{ceiling}" if censored else
                       f"{val:.0f}" if float(val).is_integer() else f"{val:.1f}")
                match = val == 1 + data["theory"][i, j]
                ax.text(a1, a2, txt, ha="center", va="center", bbox=box,
                        color="k" if match else LOW, fontweight="normal" if match else "bold")
                rows.append(dict(panel=panel_names[p], alpha1=a1, alpha2=a2, count=float(val),
                                 theory=int(1 + data["theory"][i, j]), censored=bool(censored)))
    axes[0].set_title("(a) $1+\\hat\\Lambda$ from measured $\\hat e_k$, fresh")
    axes[1].set_title("(b) raw outliers of $W_2$, fresh")
    axes[2].set_title("(c) raw outliers of $W_2$, reused")
    ax_key.axis("off")
    legend_from(ax_key, SHADE_KEY + [(r"theory: $\alpha_2 = k(1/2-\alpha_1)$", dict(color="k", lw=1))]
                + [(rf"(a) measured, $k = {k}$", dict(color=K_COLORS[k % len(K_COLORS)], ls="--",
                                                       lw=1.4)) for k in range(1, L)]
                + [(r"count equals $1+\Lambda$", dict(ls="none", marker="$1$", color="k", ms=7)),
                   (r"count differs", dict(ls="none", marker="$1$", color=LOW, ms=7))],
                loc="center", frameon=False, title="shading: theory's $\\Lambda$")
    return attach_data(finished(fig), rows)

# --------------------------------------------------------------------------- the map of the plane

def plane_data(scaling, step: float = 0.02) -> dict:
    r"""The map over the plane for both batches and the best points per :math:`\Lambda`."""
    points = plane_grid(step=step, offset=step / 2, L=scaling.L)
    runs = {b: scaling.summary.runs(batch=b) for b in BATCH_ORDER}
    return {"points": points, "maps": {b: plane_map(runs[b], points, scaling.c) for b in BATCH_ORDER},
            "rank": rank_points(runs["fresh"], points, scaling.c), "L": scaling.L}

def chosen(data: dict) -> list:
    r"""The ranked points, :math:`\Lambda = 0..L-1` in turn, best first: ``[[alpha1, alpha2], ...]``."""
    return [[a1, a2] for lam in sorted(data["rank"]) for a1, a2, _ in data["rank"][lam]]

def plot_plane(data: dict):
    r"""Figure *fig-plane*: the measured count of growing orders at every map point over the theory's
    :math:`\Lambda`; rows: the two measures, columns: fresh and reused; stars: chosen points."""
    pick = np.array(chosen(data))
    fig, axes = plt.subplots(2, 2, figsize=(7.0, 7.4), sharex=True, sharey=True)
    rows = []
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
            ax.set(xlim=(0, 0.5), ylim=(0, 0.5), aspect="equal",
                   title=f"({'ab'[row]}{col + 1}) {METHODS[method]}, {batch}: "
                         f"{np.mean(count == m.lam):.0%} agree")
            ax.grid(False)
            rows += [dict(measure=method, batch=batch, alpha1=p[0], alpha2=p[1], theory=int(t),
                          measured=int(c), resolved=bool(r))
                     for p, t, c, r in zip(m.points, m.lam, count, ok)]
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
    return attach_data(finished(fig), rows)

# --------------------------------------------------------------------------- more orders along alpha1

def order_count_data(L: int = 6, alpha2: float = 0.3, Ns=(500, 1000, 2000), seeds: int = 3,
                     alpha1=np.linspace(0.0, 0.48, 49), c: float = 0.2,
                     batch: str = "fresh", n_jobs: int = 1) -> dict:
    r"""How many exact terms :math:`T_k` are growing spikes along :math:`\alpha_1`, for :math:`\sigma_L`.
    """
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
    r"""Figure *fig-order-count*: (a) :math:`\Lambda` and the measured count along :math:`\alpha_1`;
    (b) the top-vector cosines of each :math:`T_k` at the largest width."""
    a1, a2, N = data["alpha1"], data["alpha2"], data["Ns"][-1]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(7.0, 3.9), gridspec_kw={"width_ratios": [1.15, 1]})
    ax.step(a1, data["theory"], where="post", color=COLORS["theory"], lw=1.6,
            label=rf"(a) theory $\Lambda(\alpha_1, {a2:g})$, $L = {data['L']}$")
    for s, per_seed in enumerate(data["measured_seeds"]):
        ax.step(a1, per_seed + 0.06 * (s - 1), where="post", color=COLORS["fresh"], lw=0.8,
                alpha=0.5, label="(a) each seed alone (shifted)" if s == 0 else None)
    ax.step(a1, data["measured"], where="post", color=COLORS["fresh"], lw=1.6, ls="--",
            label=r"(a) measured: spike terms with $\alpha_2 + k\alpha_1 + \hat e_k \geq 0$")
    ax.set(xlabel=r"$\alpha_1$", ylabel="new outliers", xlim=(0, 0.5),
           title=rf"(a) count along $\alpha_1$, $\alpha_2 = {a2:g}$")
    k = np.arange(data["L"])
    for side, dx, fmt, color, label in (
            ("left", -0.08, "o", COLORS["fresh"], r"(b) left vector vs $a^{\circ(k+1)}$"),
            ("right", 0.08, "s", COLORS["reused"], r"(b) right vector vs $u_k$")):
        bx.errorbar(k + dx, data[side], yerr=data[side + "_sd"], fmt=fmt, color=color,
                    capsize=2, label=label)
    bx.axhline(ALIGNED, color=COLORS["theory"], ls=":", lw=1, label=r"(b) threshold $1/\sqrt{2}$")
    bx.axhline(1 / np.sqrt(N), color=COLORS["chance"], ls="--", lw=1,
               label=r"(b) chance $1/\sqrt{N}$")
    bx.set(xlabel="order $k$", ylabel="cosine", ylim=(0, 1.05), xticks=k,
           title=rf"(b) is $T_k$ a spike? $N = {N}$")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = bx.get_legend_handles_labels()
    fig.legend(h1 + h2, l1 + l2, loc="outside lower center", ncol=2)
    rows = [dict(panel="a", series=name, x=float(x), value=float(v), sd=np.nan,
                 theory=int(t)) for name, values in
            [("measured", data["measured"])] + [(f"seed {s}", v) for s, v in
                                                enumerate(data["measured_seeds"])]
            for x, v, t in zip(a1, values, data["theory"])]
    rows += [dict(panel="b", series=f"{side} cosine", x=int(j), value=float(data[side][j]),
                  sd=float(data[side + "_sd"][j]), theory=np.nan)
             for side in ("left", "right") for j in k]
    return attach_data(finished(fig), rows)

# --------------------------------------------------------------------------- the count, draw by draw

def draw_counts(records, registry: dict) -> dict:
    r"""A count file laid out one row per record and registered setting, with the predictions."""
    m = registry["measurement"]
    settings, lam, kappa = m["params"]["settings"], m["lambda"], m["kappa"]
    margin, n_top = registry["prediction"]["margin"], m["params"]["n_top"]
    nstar = {b: nstar_array(registry, b) for b in BATCH_ORDER}
    cols = {k: [] for k in ("batch", "N", "seed", "setting", "lam", "count", "predicted",
                            "ceiling", "nstar")}
    for r in records:
        pts = np.asarray(r["points"], dtype=float)
        for s, (a1, a2) in enumerate(settings):
            i = int(np.flatnonzero(np.all(np.isclose(pts, [kappa, a1, a2]), axis=1))[0])
            c = int(r["count_own"][i])
            for key, value in (("batch", r["batch"]), ("N", int(r["N"])), ("seed", int(r["seed"])),
                               ("setting", s), ("lam", lam[s]), ("count", c),
                               ("predicted", predicted_count(r["spike_sum"][i], r["edge_own"][i],
                                                             margin)),
                               ("ceiling", c >= n_top), ("nstar", nstar[r["batch"]][s, :, 2])):
                cols[key].append(value)
    return {k: np.array(v) for k, v in cols.items()}

def plot_count(counts: dict, L: int = 4):
    r"""Figure *fig-count*: :math:`W_2`'s outliers against :math:`N` per :math:`\Lambda`, measured,
    predicted at finite :math:`N` (diamonds) and :math:`1+\Lambda`; censored means as triangles."""
    fig, axes = plt.subplots(2, 2, figsize=(7.0, 6.0), sharex=True)
    Ns = sorted(set(counts["N"].tolist()))
    rows, top = [], 1 + L
    for lam, ax in enumerate(axes.flat):
        for b_i, batch in enumerate(BATCH_ORDER):
            sel = (counts["lam"] == lam) & (counts["batch"] == batch)
            widths = [N for N in Ns if np.any(sel & (counts["N"] == N))]
            for name, key in (("measured", "count"), ("predicted", "predicted")):
                at = [counts[key][sel & (counts["N"] == N)] for N in widths]
                censored = [bool(np.any(counts["ceiling"][sel & (counts["N"] == N)]))
                            if key == "count" else False for N in widths]
                mean = np.array([x.mean() for x in at])
                lo, hi = np.array([x.min() for x in at]), np.array([x.max() for x in at])
                # side by side at each width: fresh measured, predicted, reused measured, ...
                x = np.array(widths, float) * (0.91 + 0.06 * (2 * b_i + (key != "count")))
                face = COLORS[batch] if batch == "fresh" and key == "count" else "none"
                style = dict(color=COLORS[batch], ms=5 if key == "count" else 6, mfc=face,
                             ls="-" if key == "count" else "--", lw=1)
                ok = ~np.array(censored, bool)
                ax.errorbar(x[ok], mean[ok], yerr=[mean[ok] - lo[ok], hi[ok] - mean[ok]],
                            marker="o" if key == "count" else "D", capsize=2, **style)
                ax.plot(x[~ok], mean[~ok], ls="none", marker="^", color=COLORS[batch], ms=7)
                top = max(top, float(hi.max(initial=0)))
                rows += [dict(Lambda=lam, batch=batch, series=name, N=int(N), mean=float(v),
                              low=float(lo_), high=float(hi_), items=int(a.size),
                              asymptotic=1 + lam, censored=c)
                         for N, v, lo_, hi_, a, c in zip(widths, mean, lo, hi, at, censored)]
        ax.axhline(1 + lam, color=COLORS["theory"], lw=1.2)
        ax.axhline(1, color=COLORS["chance"], ls=":", lw=1.2)
        ax.set(xscale="log", title=rf"({'abcd'[lam]}) $\Lambda = {lam}$",
               ylabel="outliers of $W_2$")
    for ax in axes.flat:
        ax.set_ylim(-0.3, top + 0.8)
    for ax in axes[-1]:
        width_axis(ax, Ns, "$N = n = d$", thousands=True)
    legend_from(fig, [("measured, fresh", dict(marker="o", color=COLORS["fresh"])),
                      ("measured, reused", dict(marker="o", mfc="white", color=COLORS["reused"])),
                      ("predicted for the same draws", dict(marker="D", mfc="none", ls="--",
                                                            color="0.4")),
                      (r"paper: $1+\Lambda$", dict(color=COLORS["theory"], lw=1.2)),
                      ("first spike alone: 1", dict(color=COLORS["chance"], ls=":", lw=1.2))],
                loc="outside lower center", ncol=3)
    return attach_data(finished(fig), rows)
