r"""Chapter *One step* and its appendix: the first gradient step as a spike plus a remainder."""

from __future__ import annotations

from functools import partial

import matplotlib.pyplot as plt
import numpy as np

from ..analysis import peer
from ..analysis.alignment import chance_overlap
from ..analysis.bbp import critical_step, spiked_outlier, spiked_overlaps
from ..analysis.moments import cross_moment, derivative_spread
from ..analysis.spectra import bulk_edge, singular_values
from ..analysis.summary import Summary
from ..analysis.sweep import loglog_slope, run_tasks, split_cases, sweep
from ..analysis.theory import (feature_spike_count, finite_size_overlap, one_step_overlap,
                               spike_strength)
from ..analysis.verdicts import mean_sem
from ..experiments.first_step import (cui_experiment, feature_spikes, first_step_cases,
                                      first_step_diagnostics, first_update,
                                      learned_direction_overlaps)
from ..model.activations import Activation, Tanh, get_activation
from ..model.steps import step_size
from ..model.targets import Link, get_link
from .figures import (ACTIVATION_LABELS, COLORS, TARGET_LABELS, attach_data, chance_line,
                      errorbars, finished, legend_below, legend_from, plot_spectrum,
                      seeds_and_mean, ticks_at, width_axis)
from .report import pm

#: Colours of the chapter's targets (red and blue stay reserved for reused / fresh batches),
#: of the comparison activation tanh, and of the recorded step exponents.
TARGET_COLORS = {"he1": "#1e8449", "he1_he3": "#e377c2", "he2": "#8c564b",
                 "he3": "#d68910", "odd": "#7d3c98"}
TANH_COLOR = "0.45"
ALPHA_COLORS = ("0.45", "#b9770e", "#6c3483")
#: The legend style of a chance level or a bulk edge.
CHANCE = dict(color=COLORS["chance"], ls=":", lw=1.2)

#: The remainder study (:func:`residual_data`): He_1 with two activations, six seeds to
#: N = 2000 and three at the two largest widths; two targets of information exponent three
#: with sigma_4; the spectrum of W_1 at three steps eta_1 = c N^alpha_1.
RESIDUAL = dict(acts=["poly4", "tanh"], target="he1", tails=["he3", "odd"],
                sizes_small=[250, 354, 500, 707, 1000, 1414, 2000], seeds_small=6,
                sizes_large=[2828, 4000], seeds_large=3,
                steps=[[1.0, 0.0], [1.0, 0.2], [1.0, 0.4]], n_jobs=2)
#: The transition at alpha_1 = 0 (:func:`bbp_data`): 17 constant steps, 3 seeds.
BBP = dict(N=1500, cs=[float(c) for c in np.round(np.linspace(0.1, 2.5, 17), 2)],
           targets=["he1", "he3"], seeds=3, activation="poly4", window=1.2, n_jobs=2)
#: The learned direction (:func:`overlap_data`): five targets at six batch ratios, ten seeds;
#: v alone at psi = 2 against d, 24 seeds.
OVERLAP = dict(d=500, c=1.0, alpha=0.25, psis=[0.25, 0.5, 1.0, 2.0, 4.0, 8.0], seeds=10,
               targets=["he1", "he1_he3", "he2", "he3", "odd"], activation="poly4",
               dim_psi=2.0, dim_ds=[125, 250, 500, 1000, 2000], dim_seeds=24,
               dim_keys=["he1", "he2", "he3", "odd"], n_jobs=2)

def link(name: str) -> Link:
    r"""A target link by its key in :data:`~twostep.pages.figures.TARGET_LABELS`."""
    return get_link("he1") + get_link("he3") if name == "he1_he3" else get_link(name)

def _theta(eta: float, mu1: float, g: Link) -> float:
    # the limiting spike strength eta |mu_1| sqrt(c_1^2 + E[y^2]) at psi = 1
    return spike_strength(eta, mu1, g.coefficients[1], g.second_moment, 1.0)

def _targets_key(keys) -> list:
    # legend entries: one thick line per target, in its colour
    return [(TARGET_LABELS[k], dict(color=TARGET_COLORS[k], lw=4)) for k in keys]

def _width_axis(ax, Ns) -> None:
    # a width axis labelled at 250, 500, ..., up to the largest width drawn
    width_axis(ax, [t for t in (250, 500, 1000, 2000, 4000) if t <= max(Ns)] or list(Ns))

def _seed_points(ax, x, per_seed, rows: list, color, **row):
    # every seed's values (one light artist, no legend entry) at the points x, a row each
    points = [dict(row, x=t, seed=seed, y=y, sem=None, theory=None)
              for seed, ys in enumerate(per_seed) for t, y in zip(x, ys)]
    ax.plot([p["x"] for p in points], [p["y"] for p in points], "o", color=color, alpha=0.35,
            ms=2.5, mew=0)
    rows += points

def _line(ax, x, y, rows: list, panel: int, series: str, **style):
    # a theory or reference line, one row per drawn point
    ax.plot(x, y, **{"color": COLORS["theory"], "lw": 1, **style})
    rows += [dict(panel=panel, series=series, x=t, seed=None, y=None, sem=None, theory=v)
             for t, v in zip(x, y)]

def residual_data(acts, target: str, tails, sizes_small, seeds_small: int, sizes_large,
                  seeds_large: int, steps=(), n_jobs: int = 1, dtype="float32") -> dict:
    r"""The first update against :math:`N = n = d` for the activations ``acts`` and links ``tails``.
    """
    steps, acts, main = [list(s) for s in steps], list(acts), acts[0]
    # One task per draw (width, seed): first_step_cases shares the draw and its
    # pre-activations between the cases; widest first, so that short tasks end the run.
    mains = [(act, target, steps if act == main else [], 2) for act in acts]
    cases = {True: mains + [(main, t, [], 1) for t in tails], False: mains}
    groups = [(dict(N=N, cases=cases[small]), s)
              for sizes, seeds, small in ((sizes_small, seeds_small, True),
                                          (sizes_large, seeds_large, False))
              for N in sizes for s in range(seeds)]
    done = run_tasks(partial(first_step_cases, dtype=dtype), groups, n_jobs=n_jobs,
                     cost=lambda p: p["N"] ** 3 * len(p["cases"]))
    runs = [dict(r, act=r["case"][0], target=r["case"][1])
            for r in split_cases(done, "cases", "case")]
    for r in runs:
        r["remainder_norm"] = r["residual"] * r["update_norm"]
        r["remainder"] = r["eta"] * r["remainder_norm"]
        r["top1"], r["top2"] = (r["top"][:, 0], r["top"][:, 1]) if len(r["eta"]) else (0.0, 0.0)
    tail = [r for r in runs if r["act"] == main and r["N"] in sizes_small]
    return dict(acts=acts, target=target, steps=steps,
                targets=[k for k in TARGET_COLORS if k in tails or k == target],
                mu1=float(get_activation(main).hermite_coefficients(1)[1]),
                spread=derivative_spread(get_activation(main)),
                summary=Summary([r for r in runs if r["target"] == target], ("act", "N"),
                                ("residual", "best_residual", "top1", "top2", "remainder")),
                tail=Summary(tail, ("target", "N"), ("residual", "remainder_sample_overlap",
                                                     "max_label", "remainder_norm")))

def seed_slopes(summary: Summary, up_to: int | None = None, since: int = 0,
                **where) -> np.ndarray:
    r"""Per seed, the log-log slope of ``residual`` against :math:`N`."""
    by_seed: dict = {}
    for r in summary.runs(**where):
        if since <= r["N"] and (up_to is None or r["N"] <= up_to):
            by_seed.setdefault(r["seed"], []).append((r["N"], r["residual"]))
    return np.array([loglog_slope(*zip(*sorted(p)))[0] for _, p in sorted(by_seed.items())
                     if len(p) >= 3 and (up_to is None or max(p)[0] == up_to)])

def plot_residual(data: dict):
    r"""Figure *fig-residual*: the relative remainder against :math:`N`, every seed and the
    mean ± standard error; left the activations, right the tail links; legends: the slope of
    :func:`seed_slopes`, mean ± standard error; dashed :math:`N^{-1/2}`."""
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 4.2))
    rows, main = [], data["acts"][0]
    series = [(0, data["summary"], dict(act=a), ACTIVATION_LABELS[a],
               TARGET_COLORS[data["target"]] if a == main else TANH_COLOR) for a in data["acts"]]
    series += [(1, data["tail"], dict(target=k), TARGET_LABELS[k], TARGET_COLORS[k])
               for k in data["targets"]]
    for i, s, where, label, color in series:
        panel, slope = i + 1, pm(*mean_sem(seed_slopes(s, **where)))
        x, mean, _ = seeds_and_mean(axes[i], s, "residual", where, rows, label, color=color,
                                    panel=panel, ls="none", marker="os"[color == TANH_COLOR],
                                    label=f"{label}: slope {slope}")
        # N^(-1/2) through the middle point of the main series, the first of the odd link
        j = len(x) // 2 if i == 0 else 0
        if where in (dict(act=main), dict(target="odd")):
            _line(axes[i], x, mean[j] * np.sqrt(x[j] / x), rows, panel, "N^-1/2", ls="--",
                  label=r"$N^{-1/2}$")
        if where == dict(act=main):
            _line(axes[0], x, mean[j] * np.sqrt(np.log(x) / x / (np.log(x[j]) / x[j])), rows,
                  panel, "sqrt(log N / N)", ls=":", label=r"$\sqrt{\log N/N}$")
    axes[0].set_title(rf"target {TARGET_LABELS[data['target']]}")
    axes[1].set_title(rf"activation {ACTIVATION_LABELS[main]}")
    for ax, ticks, s in zip(axes, ([0.03, 0.05, 0.1, 0.2, 0.3], [0.1, 0.2, 0.3, 0.5, 0.7]),
                            (data["summary"].axis(act=main), data["tail"].axis(target="odd"))):
        ax.set_yscale("log")
        _width_axis(ax, s)
        ticks_at(ax.yaxis, ticks)
        ax.set_ylabel(r"$\|G-\mu_1 a v^\top\|_{op}\,/\,\|G\|_{op}$")
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2), handlelength=1.8)
    return finished(attach_data(fig, rows))

def growth_curves(data: dict) -> list[dict]:
    r"""Per recorded step of :func:`residual_data` (first activation): ``alpha``, ``c``, over
    the widths the means of ``top1``, ``top2`` and ``remainder`` with their standard errors
    (``*_sem``), and the predicted outlier ``pred`` :math:`s_\star(\theta)`."""
    out, g, main = [], link(data["target"]), data["acts"][0]
    for i, (c, alpha) in enumerate(data["steps"]):
        theta = [_theta(step_size(c, alpha, int(N)), data["mu1"], g)
                 for N in data["summary"].axis(act=main)]
        cur = dict(alpha=alpha, c=c, pred=np.asarray(spiked_outlier(np.array(theta), 1.0)))
        for key in ("top1", "top2", "remainder"):
            _, cur[key], cur[key + "_sem"] = data["summary"].series(key, index=i, act=main)
        out.append(cur)
    return out

def plot_growth(data: dict):
    r"""Figure *fig-growth*: :math:`s_1`, :math:`s_2` of :math:`W_1` against :math:`N` with
    :math:`s_\star(\theta)` (left), :math:`\|\Delta_1\|_{op}` with slopes :math:`\alpha_1-1/2`
    (right), one colour per recorded step."""
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 3.8))
    main, s, rows = data["acts"][0], data["summary"], []
    for i, (cur, color) in enumerate(zip(growth_curves(data), ALPHA_COLORS)):
        name = rf"$\alpha_1 = {cur['alpha']:g}$"
        x, _, _ = seeds_and_mean(axes[0], s, "top1", dict(act=main), rows, f"s_1, {name}",
                                 index=i, theory=cur["pred"], panel=1, color=color,
                                 ls="none")
        axes[0].plot(x, cur["top2"], color=color, marker="s", ms=3.5, ls="none", mfc="none")
        rows += [dict(panel=1, series=f"s_2, {name}", x=t, seed=None, y=m, sem=e,
                      theory=None) for t, m, e in zip(x, cur["top2"], cur["top2_sem"])]
        _line(axes[0], x, cur["pred"], rows, 1, f"s_star, {name}", color=color)
        ref = cur["remainder"][0] * (x / x[0]) ** (cur["alpha"] - 0.5)
        seeds_and_mean(axes[1], s, "remainder", dict(act=main), rows, f"remainder, {name}",
                       index=i, theory=ref, panel=2, color=color, ls="none")
        axes[1].plot(x, ref, color=color, ls="--", lw=1)
    for ax, yticks in zip(axes, [[2, 3, 5, 10, 20, 40], [0.1, 0.2, 0.5, 1, 2, 4]]):
        ax.axhline(bulk_edge(1.0), **CHANCE)
        ax.set_yscale("log")
        _width_axis(ax, x)
        ticks_at(ax.yaxis, yticks)
    axes[0].set_ylabel("top two singular values of $W_1$")
    axes[1].set_ylabel(r"$\|\Delta_1\|_{op} = \eta_1\|G - \mu_1 a v^\top\|_{op}$")
    legend_from(fig, [(rf"$\alpha_1 = {a:g}$", dict(color=c, lw=4))
                      for (_, a), c in zip(data["steps"], ALPHA_COLORS)] + [
        (r"$s_1$ (left), $\|\Delta_1\|$ (right)", dict(marker="o", ls="none", ms=4)),
        ("$s_2$ (left)", dict(marker="s", ms=3.5, mfc="none", ls="none")),
        (r"$s_\star(\theta)$ (left)", {}), (r"$N^{\alpha_1 - 1/2}$ (right)", dict(ls="--")),
        ("bulk edge", CHANCE)], loc="outside lower center", ncol=3, fontsize=9)
    return finished(attach_data(fig, rows))

def w1_spectrum_data(N: int, cs, alpha: float, activation: Activation, target: Link,
                     rng: np.random.Generator, margin: float = 0.05) -> dict:
    r"""All singular values ``singular`` of :math:`W_1 = W_0 + \eta_1G` for one draw at
    :math:`\eta_1 = cN^{\alpha}`, ``c`` in ``cs``, with ``theta`` and the predicted outlier
    ``pred`` :math:`s_\star(\theta)`; ``eta_c``, the critical step at :math:`\alpha = 0`."""
    W0, G = first_update(rng, N, activation, target)
    mu1 = float(activation.hermite_coefficients(1)[1])
    theta = [_theta(step_size(c, alpha, N), mu1, target) for c in cs]
    return dict(cs=list(cs), margin=margin, theta=theta,
                singular=[singular_values(W0 + step_size(c, alpha, N) * G) for c in cs],
                pred=[float(spiked_outlier(t, 1.0)) for t in theta],
                eta_c=critical_step(mu1, target.coefficients[1], target.second_moment, 1, 1))

def plot_w1_spectrum(data: dict, bins: int = 60):
    r"""Figure *fig-w1-spectrum*: one histogram per step against the Marchenko--Pastur density
    of :math:`W_0`, the values beyond the margin and the predicted outlier (dashed, only above
    the threshold; below it the prediction is the bulk edge, already drawn)."""
    fig, axes = plt.subplots(1, len(data["cs"]), figsize=(6.8, 3.4), sharey=True)
    margin, edge, rows = data["margin"], bulk_edge(1.0), []
    for panel, (ax, c, s, theta, pred) in enumerate(zip(axes, data["cs"], data["singular"],
                                                        data["theta"], data["pred"]), 1):
        plot_spectrum(ax, s, 1.0, bins=bins, margin=margin, outlier_color=TARGET_COLORS["he1"],
                      label="singular values of $W_1$")
        density, edges = np.histogram(s[s <= edge * (1 + margin)], bins=bins, density=True)
        rows += [dict(panel=panel, series="bulk", x=(lo + hi) / 2, y=h)
                 for lo, hi, h in zip(edges[:-1], edges[1:], density)]
        rows += [dict(panel=panel, series="outlier", x=v, y=None)
                 for v in s[s > edge * (1 + margin)]]
        if pred > edge * (1 + 1e-9):
            ax.axvline(pred, color=COLORS["theory"], ls="--", lw=1.2,
                       label=r"predicted $s_\star(\theta)$")
            rows.append(dict(panel=panel, series="predicted outlier", x=pred, y=None))
        ax.set(title=rf"$\eta_1 = {c:g}$, $\theta = {theta:.2f}$", xlim=(0, 3.6), ylim=(0, 0.9))
    axes[-1].set_ylabel("")
    legend_below(fig, axes[-1], ncol=3)
    return finished(attach_data(fig, rows))

def bbp_data(N: int, cs, targets, seeds: int, activation: str, window: float = 1.2,
             n_jobs: int = 1, dtype="float32") -> dict:
    r"""Top singular value of :math:`W_1` and its right vector's overlap against :math:`\eta_1`."""
    cs = np.asarray(cs, dtype=float)
    mu1 = float(get_activation(activation).hermite_coefficients(1)[1])
    records = sweep(partial(first_step_diagnostics, N=N, activation=activation, dtype=dtype,
                            steps=[(c, 0.0) for c in cs]),
                    {"target": list(targets)}, seeds=range(seeds), n_jobs=n_jobs)
    for r in records:
        r["top1"], r["pred_measured"] = r["top"][:, 0], spiked_outlier(cs * r["spike"], 1.0)
        r["spike_dev"] = r["spike"] / _theta(1.0, mu1, link(r["target"])) - 1
        r["measured_gap"] = r["top1"] / r["pred_measured"] - 1
    summary = Summary(records, ("target",), ("top1", "right_v_overlap", "pred_measured",
                                             "residual", "measured_gap", "spike_dev"))
    eta_c, gap, gap_sem = {}, {}, {}
    for name in targets:
        e, g = summary.entry(target=name), link(name)
        eta_c[name] = critical_step(mu1, g.coefficients[1], g.second_moment, 1.0, 1.0)
        above = cs > window * eta_c[name]
        limit = spiked_outlier(np.array([_theta(c, mu1, g) for c in cs[above]]), 1.0)
        to_limit = np.abs(e["top1"][above] / limit - 1)
        to_measured = np.abs(e["top1"][above] / e["pred_measured"][above] - 1)
        i, j = int(np.argmax(to_limit)), int(np.argmax(to_measured))
        gap[name] = (float(to_limit[i]), float(to_measured[j]))
        gap_sem[name] = (float(e["top1_sem"][above][i] / limit[i]),
                         float(e["measured_gap_sem"][above][j]))
    return dict(cs=cs, n_seeds=seeds, mu1=mu1, targets=list(targets), summary=summary,
                eta_c=eta_c, gap=gap, gap_sem=gap_sem)

def plot_bbp(data: dict):
    r"""Figure *fig-bbp*: :math:`s_1(W_1)` (left) and :math:`|\langle\tilde w_1,\hat v\rangle|`
    (right) against :math:`\eta_1`, every seed and the mean ± standard error, with the limits
    of ``claim-bbp``, the critical steps and the bulk edge."""
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 3.7))
    cs, s, rows = data["cs"], data["summary"], []
    grid = np.linspace(cs[0], cs[-1], 400)
    for name in data["targets"]:
        color, e, g = TARGET_COLORS[name], s.entry(target=name), link(name)
        theta, theta_grid = (np.array([_theta(c, data["mu1"], g) for c in x]) for x in (cs, grid))
        for ax, key, theory, panel in (
                (axes[0], "top1", spiked_outlier(theta, 1.0), 1),
                (axes[1], "right_v_overlap", spiked_overlaps(theta, 1.0)[1], 2)):
            _seed_points(ax, cs, s.seed_values(key, target=name), rows, color, panel=panel,
                         series=name)
            errorbars(ax, cs, e[key], e[key + "_sem"], color=color, ls="none")
            rows += [dict(panel=panel, series=name + " (mean)", x=c, seed=None, y=m, sem=se,
                          theory=t) for c, m, se, t in zip(cs, e[key], e[key + "_sem"], theory)]
            ax.axvline(data["eta_c"][name], color=color, ls="--", lw=0.8)
            ax.set_xlabel(r"step size $\eta_1$ ($\alpha_1 = 0$)")
        axes[0].plot(grid, spiked_outlier(theta_grid, 1.0), color=color, lw=1.2)
        axes[0].plot(cs, e["pred_measured"], color=color, ls=":", lw=1.2)
        axes[1].plot(grid, spiked_overlaps(theta_grid, 1.0)[1], color=color, lw=1.2)
    axes[0].axhline(bulk_edge(1.0), **CHANCE)
    axes[0].set_ylabel(r"top singular value of $W_1$")
    axes[1].set_ylabel(r"$|\langle \tilde w_1, v/\|v\|\rangle|$")
    legend_from(fig, _targets_key(data["targets"]) + [
        ("simulation", dict(marker="o", ls="none", ms=4)), (r"theory, limiting $\theta$", {}),
        (r"theory, measured $\|a\|\|v\|$ (left)", dict(ls=":")),
        (r"critical $\eta_c$", dict(ls="--", lw=0.8)), ("bulk edge (left)", CHANCE)],
        loc="outside lower center", ncol=3, fontsize=9)
    return finished(attach_data(fig, rows))

def _overlap_task(rng, psi, d, activation, targets, c, alpha, dtype):
    # Every target of one batch size and seed on one draw (first_step_cases: the targets are
    # single-index), each result first_step_diagnostics' for that target alone.
    runs = first_step_cases(rng, N=d, n=int(round(psi * d)), d=d, dtype=dtype,
                            cases=[(activation, link(t), [(c, alpha)], 1) for t in targets])
    return {"by_target": {t: {"v": out["v_overlap"], "v2": out["v_overlap"] ** 2,
                              "w2": out["right_overlap"][0] ** 2, "wv": out["right_v_overlap"][0]}
                          for t, out in zip(targets, runs["results"])}}

def _dimension_task(rng, d, psi, keys, dtype):
    return {"v2": learned_direction_overlaps(int(psi * d), d, [link(k) for k in keys], rng,
                                             dtype=dtype) ** 2}

def _rms(s: Summary, key: str, **where) -> tuple:
    # root mean square over seeds of a squared overlap, with the delta-method standard error
    _, ms, sem = s.series(key, **where)
    return np.sqrt(ms), sem / (2 * np.maximum(np.sqrt(ms), 1e-12))

def overlap_data(d: int, c: float, alpha: float, psis, seeds: int, targets, activation: str,
                 dim_psi: float, dim_ds, dim_seeds: int, dim_keys, n_jobs: int = 1,
                 dtype="float32") -> dict:
    r"""Overlap with :math:`\beta^\star` of :math:`\hat v` and :math:`W_1`'s top right vector."""
    psis, ds = sorted(psis), np.array(dim_ds)
    task = partial(_overlap_task, d=d, activation=get_activation(activation),
                   targets=list(targets), c=c, alpha=alpha, dtype=dtype)
    done = {(r["psi"], r["seed"]): r["by_target"]
            for r in sweep(task, {"psi": psis}, seeds=range(seeds), n_jobs=n_jobs)}
    ov = Summary([dict(done[(psi, s)][t], psi=psi, target=t, seed=s)
                  for psi in psis for t in targets for s in range(seeds)],
                 ("target", "psi"), ("v", "v2", "w2", "wv"))
    dim = Summary(sweep(partial(_dimension_task, psi=dim_psi, keys=list(dim_keys), dtype=dtype),
                        {"d": list(dim_ds)}, seeds=range(dim_seeds), n_jobs=n_jobs),
                  ("d",), ("v2",))
    stats, dim_stats = {}, {}
    for key in targets:
        g = link(key)
        c1, m2, m22 = g.coefficients[1], g.second_moment, cross_moment(g)
        stats[key] = dict(zip(("v", "v_sem", "w", "w_sem"), (*_rms(ov, "v2", target=key),
                                                             *_rms(ov, "w2", target=key))),
                          m22=m22, wv=ov.series("wv", target=key)[1],
                          pred=np.array([one_step_overlap(c1, m2, q) for q in psis]),
                          finite=np.array([finite_size_overlap(c1, m2, m22, int(round(q * d)), d)
                                           for q in psis]))
    for j, key in enumerate(dim_keys):
        g, (v, v_sem) = link(key), _rms(dim, "v2", index=j)
        dim_stats[key] = dict(v=v, v_sem=v_sem, slope=loglog_slope(ds, v), finite=np.array(
            [finite_size_overlap(g.coefficients[1], g.second_moment, stats[key]["m22"],
                                 int(dim_psi * q), int(q)) for q in ds]))
    return dict(d=d, psis=np.array(psis), n_seeds=seeds, targets=list(targets), summary=ov,
                stats=stats, dim_psi=dim_psi, dim_ds=ds, dim_keys=list(dim_keys),
                dim_stats=dim_stats)

def plot_overlap(data: dict):
    r"""Figure *fig-overlap*: overlaps with :math:`\beta^\star` against :math:`\psi` (left: every
    seed's :math:`\hat v`, root mean squares ± standard error, limits solid, finite-size levels
    dashed, chance dotted) and of :math:`\hat v` against :math:`d` (right, log-log)."""
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 4.4))
    psis, d, s, rows = data["psis"], data["d"], data["summary"], []
    grid = np.geomspace(psis[0], psis[-1], 200)
    for key in data["targets"]:
        st, color, g = data["stats"][key], TARGET_COLORS[key], link(key)
        c1, m2 = g.coefficients[1], g.second_moment
        _seed_points(axes[0], psis, np.array([s.seed_values("v", target=key, psi=p)
                                              for p in psis]).T, rows, color, panel=1,
                     series=f"{key}, v")
        for name, marker in (("v", "o"), ("w", "D")):
            errorbars(axes[0], psis, st[name], st[name + "_sem"], color=color, ls="none",
                      marker=marker, mfc=None if name == "v" else "none")
            rows += [dict(panel=1, series=f"{key}, {name} (r.m.s.)", x=p, seed=None, y=m,
                          sem=se, theory=t) for p, m, se, t in
                     zip(psis, st[name], st[name + "_sem"], st["pred" if c1 else "finite"])]
        axes[0].plot(grid, [one_step_overlap(c1, m2, p) if c1 else
                            finite_size_overlap(c1, m2, st["m22"], int(round(p * d)), d)
                            for p in grid], color=color, lw=1.2 if c1 else 1,
                     ls="-" if c1 else "--")
    axes[0].axhline(0.0, color=COLORS["theory"], lw=1.2)
    chance_line(axes[0], chance_overlap(d))
    axes[0].set_xscale("log")
    ticks_at(axes[0].xaxis, list(psis))
    axes[0].set(xlabel=r"$\psi = n/d$", title=rf"$N = d = {d}$",
                ylabel=r"overlap with $\beta^\star$")
    ds = data["dim_ds"]
    for key in data["dim_keys"]:
        st = data["dim_stats"][key]
        errorbars(axes[1], ds, st["v"], st["v_sem"], color=TARGET_COLORS[key], ls="none")
        axes[1].plot(ds, st["finite"], color=TARGET_COLORS[key], lw=1, ls="--")
        rows += [dict(panel=2, series=f"{key}, v (r.m.s.)", x=q, seed=None, y=m, sem=se,
                      theory=t) for q, m, se, t in zip(ds, st["v"], st["v_sem"], st["finite"])]
    axes[1].plot(ds, 1 / np.sqrt(ds), **CHANCE)
    axes[1].set_yscale("log")
    width_axis(axes[1], list(ds), "input dimension $d$")
    ticks_at(axes[1].yaxis, [0.02, 0.05, 0.1, 0.2, 0.5, 1])
    axes[1].set(ylabel=r"overlap of $v/\|v\|$ with $\beta^\star$ (r.m.s.)",
                title=rf"$\psi = {data['dim_psi']:g}$")
    legend_from(fig, _targets_key(data["targets"]) + [
        (r"$\hat v$ (r.m.s.; light: seeds)", dict(marker="o", ms=4, ls="none")),
        (r"top right sing. vector of $W_1$", dict(marker="D", ms=4, mfc="none", ls="none")),
        (r"chance $1/\sqrt{d}$", CHANCE), (r"limit $d\to\infty$ (black: $c_1 = 0$)", {}),
        ("finite-size level", dict(ls="--"))], loc="outside lower center", ncol=3, fontsize=9)
    return finished(attach_data(fig, rows))

def _peer_runs(runs, n_jobs, dtype) -> list:
    # Cui et al.'s experiment for each (setting, d, alphas, seeds, stored) of runs, one task
    # per seed in one pool of workers (the largest size first, so that no core waits idle).
    tasks = [(dict(setting=st, d=d, alphas=list(al), dtype=dtype), seed)
             for st, d, al, seeds, _ in runs for seed in seeds]
    done = iter(run_tasks(cui_experiment, tasks, n_jobs=n_jobs,
                          cost=lambda p: p["d"] ** 3 * len(p["alphas"])))
    out = []
    for st, d, alphas, seeds, stored in runs:
        records, g = [next(done) for _ in seeds], peer.peer_link(st["teacher"])
        out.append(dict(
            setting=dict(st), d=d, alphas=np.array(alphas, dtype=float),
            errors=np.array([r["errors"] for r in records]),
            measured={k: np.array([r[k] for r in records]) for k in ("gamma", "r", "c")},
            formulas=peer.cui_parameters(g, Tanh(), st["alpha0"], st["eta_tilde"]),
            cell7=peer.cui_cell7_parameters(g.func, np.tanh, lambda z: 1 - np.tanh(z) ** 2,
                                            st["alpha0"], st["eta_tilde"]),
            peer_alphas=np.array(sorted(stored)),
            peer_values=np.array([np.atleast_1d(stored[a]) for a in sorted(stored)], float)))
    return out

def peer_data(setting: dict, d: int, alphas, seeds, stored: dict, n_jobs: int = 1,
              dtype=np.float32) -> dict:
    r"""Cui et al.'s experiment at ``setting`` and size ``d``, with the peer's values."""
    return _peer_runs([(setting, d, alphas, seeds, stored)], n_jobs, dtype)[0]

def cui_data(d1: int, seeds1, alphas1, d2: int, seeds2, alphas2, n_jobs: int = 1,
             dtype=np.float32) -> tuple[dict, dict]:
    r""":func:`peer_data` in Cui et al.'s two settings, in one pool of workers: the tanh
    teacher at size ``d1`` against their simulation, the sin teacher at ``d2`` against their
    theory."""
    return tuple(_peer_runs([(peer.CUI_SETTING_1, d1, alphas1, seeds1, peer.CUI_SIMULATED),
                             (peer.CUI_SETTING_2, d2, alphas2, seeds2, peer.CUI_THEORY)],
                            n_jobs, dtype))

def peer_comparison(data: dict) -> dict:
    """Per simulated ``alpha``: the peer's value at its nearest stored ratio (their seeds'
    mean), its ``peer_sd`` (0 for a theory), twostep's ``mean`` and ``sd`` over seeds, and the
    difference ``diff``."""
    pv, pa = data["peer_values"], data["peer_alphas"]
    vals = [pv[np.argmin(np.abs(pa - a))] for a in data["alphas"]]
    stored, mean = np.array([v.mean() for v in vals]), data["errors"].mean(axis=0)
    return {"peer": stored, "peer_sd": np.array([v.std(ddof=1) if v.size > 1 else 0.0
                                                 for v in vals]),
            "mean": mean, "sd": data["errors"].std(axis=0, ddof=1), "diff": mean - stored}

def plot_cui(data: tuple[dict, dict]):
    r"""Figure *fig-peer*: test error against :math:`\alpha_{\rm C} = n/d` in the peer's two
    settings, their simulation (left) or theory (right) and twostep's simulation, each the
    mean and standard deviation over seeds."""
    fig, axes = plt.subplots(1, 2, figsize=(6.5, 3.3))
    rows = []
    for panel, (ax, run, title) in enumerate(zip(axes, data, ("tanh", "sin")), 1):
        s, pv, cmp = run["setting"], run["peer_values"], peer_comparison(run)
        sd = pv.std(axis=1, ddof=1) if pv.shape[1] > 1 else None
        what = f"simulation, d = {s['d']}" if pv.shape[1] > 1 else "theory"
        for x, y, e, name, style in (
                (run["peer_alphas"], pv.mean(axis=1), sd, f"Cui et al. ({what})",
                 dict(color=COLORS["theory"], marker="s")),
                (run["alphas"], cmp["mean"], cmp["sd"], f"twostep (d = {run['d']})",
                 dict(color=COLORS["reused"], marker="o", ls="--"))):
            ax.errorbar(x, y, yerr=e, ms=4, capsize=3, lw=1, label=name, **style)
            rows += [dict(panel=panel, series=name, x=a, y=m, sd=None if e is None else e[i])
                     for i, (a, m) in enumerate(zip(x, y))]
        ax.set(xlabel=r"$\alpha_{\rm C} = n/d$ (readout samples)",
               ylabel="test error (mean squared)",
               title=rf"{title} teacher: $\alpha_0 = {s['alpha0']:g}$, "
                     rf"$\tilde\eta = {s['eta_tilde']:g}$, $\lambda = {s['lam']:g}$")
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    return finished(attach_data(fig, rows))

def feature_spike_data(N: int, alphas, seeds, activation: Activation, g: Link,
                       margin: float = 0.05, n_jobs: int = 1, dtype=np.float32) -> dict:
    r""":func:`~twostep.experiments.first_step.feature_spikes` over seeds, with the predicted count.
    """
    alphas, L = np.array([float(a) for a in alphas]), activation.degree
    task = partial(feature_spikes, N=N, alphas=list(alphas), activation=activation, link=g,
                   margin=margin, dtype=dtype)
    runs = sweep(task, None, seeds=list(seeds), n_jobs=n_jobs)
    return dict(alphas=alphas, L=L, margin=margin,
                predicted=np.array([feature_spike_count(a, L) for a in alphas]),
                **{k: np.array([r[k] for r in runs]) for k in (
                    "count", "proj_beta", "proj_chance", "top", "edge", "edge0", "v_overlap")})

def plot_feature_spikes(data: dict):
    r"""Figure *fig-feature-spikes*: the spikes of :math:`\sigma(\tilde XW_1^\top)` per seed against
    :math:`\alpha_1` with Moniri et al.'s count (left); seed 0's top singular values (right)."""
    fig, axes = plt.subplots(1, 2, figsize=(6.5, 3.2))
    alphas, counts, margin, rows = data["alphas"], data["count"], data["margin"], []
    grid = np.linspace(0.0, float(max(alphas.max(), 0.45)), 400)
    axes[0].step(grid, [feature_spike_count(a, data["L"]) for a in grid], where="post",
                 color=COLORS["theory"], lw=1.2, label="predicted (book's reading)")
    for j, (count, dx) in enumerate(zip(counts, np.linspace(-0.004, 0.004, len(counts)))):
        full = count >= data["top"].shape[-1]
        axes[0].plot(alphas[~full] + dx, count[~full], "o", ms=4, color=COLORS["reused"],
                     alpha=0.8, label=None if j else "counted, one seed each")
        axes[0].plot(alphas[full] + dx, count[full], "^", ms=5, mfc="none", color=COLORS["reused"])
        rows += [dict(panel=1, series="counted", x=a, seed=j, y=c, censored=bool(f),
                      theory=p) for a, c, f, p in zip(alphas, count, full, data["predicted"])]
    ratio = data["top"][0] / data["edge"][0][:, None]
    for i in range(ratio.shape[1]):
        axes[1].plot(alphas, ratio[:, i], "o-" if i == 0 else "o", ms=3, lw=0.8,
                     color=COLORS["reused"] if i < 4 else "0.6")
        rows += [dict(panel=2, series=f"s_{i + 1} / edge", x=a, seed=0, y=r,
                      censored=False, theory=1 + margin) for a, r in zip(alphas, ratio[:, i])]
    axes[1].axhline(1 + margin, color=COLORS["theory"], ls=":", lw=1.2,
                    label=f"threshold (1 + {margin:g}) × edge")
    axes[0].set(xlabel=r"step exponent $\alpha_1$ ($\eta_1 = N^{\alpha_1}$)",
                ylabel=r"spikes of $\sigma(\tilde X W_1^\top)$")
    axes[1].set(xlabel=r"step exponent $\alpha_1$", ylabel="singular value / bulk edge",
                title="seed 0: the eight largest")
    fig.legend(handles=[h for ax in axes for h in ax.get_legend_handles_labels()[0]],
               loc="outside lower center", ncol=3, fontsize=9)
    return finished(attach_data(fig, rows))
