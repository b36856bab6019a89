r"""The :math:`(\alpha_1, \alpha_2)` plane: the theory's count :math:`\Lambda`, the empirical
count :math:`\hat\Lambda`, the map of growth exponents and :math:`N^\star`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._validation import check_array, check_int, check_real
from .spikes import (core_singular_values, outlier_strength, power_law_constant, spike_sum_factors,
                     width_to_reach)
from .sweep import linear_fit, loglog_slope
from ._core import spike_count
from .theory import n_spikes, spike_exponent

#: A cosine above 1/sqrt(2): the predicted vector carries over half of the squared norm.
ALIGNED = 1.0 / math.sqrt(2.0)

def _alphas(alpha, name):
    a = np.asarray(alpha, dtype=float)
    if not np.all(np.isfinite(a)) or np.any((a < 0) | (a >= 0.5)):
        raise ValueError(f"{name} must lie in [0, 1/2)")
    return a

def theory_count(alpha1, alpha2, L: int | None = None) -> np.ndarray:
    r""":math:`\Lambda(\alpha_1,\alpha_2)` elementwise over broadcast arrays (integer array)."""
    a1, a2 = np.broadcast_arrays(_alphas(alpha1, "alpha1"), _alphas(alpha2, "alpha2"))
    L = None if L is None else check_int(L, "L", 1)
    # n_spikes' formula on whole arrays: a Python call per point would dominate a fine shading.
    return np.asarray(spike_count(a1, a2, L), dtype=int)

def is_spike(left, right, ratio_slope, threshold: float = ALIGNED) -> np.ndarray:
    r"""``left >= threshold``, ``right >= threshold`` and ``ratio_slope > 0``, all ``(K,)``."""
    left = check_array(left, "left", ndim=1)
    right = check_array(right, "right", shape=left.shape)
    ratio_slope = check_array(ratio_slope, "ratio_slope", shape=left.shape)
    t = check_real(threshold, "threshold", low=0.0, high=1.0, low_open=True)
    return (left >= t) & (right >= t) & (ratio_slope > 0)

def empirical_boundary(alpha1, k: int, exponent: float) -> np.ndarray:
    r"""The line :math:`\alpha_2 = -\hat e_k - k\alpha_1` (``exponent`` :math:`= \hat e_k`)."""
    k = check_int(k, "k", 1)
    e = check_real(exponent, "exponent")
    return -e - k * _alphas(alpha1, "alpha1")

def empirical_count(alpha1, alpha2, exponents, spike, L: int | None = None) -> np.ndarray:
    r""":math:`\hat\Lambda(\alpha_1,\alpha_2)` elementwise: the :math:`k\in[1, \min(K, L)-1]` with
    ``spike[k]`` and :math:`\alpha_2 + k\alpha_1 + \hat e_k \ge 0` (``exponents``, ``spike``: ``(K,)``)."""
    a1, a2 = np.broadcast_arrays(_alphas(alpha1, "alpha1"), _alphas(alpha2, "alpha2"))
    e = check_array(exponents, "exponents", ndim=1)
    sp = np.asarray(spike)
    if sp.shape != e.shape or sp.dtype != bool:
        raise ValueError(f"spike must be a boolean array of shape {e.shape}")
    K = e.size if L is None else min(e.size, check_int(L, "L", 1))
    count = np.zeros(a1.shape, dtype=int)
    for k in range(1, K):
        if sp[k]:
            count += (a2 + k * a1 + e[k] >= 0).astype(int)
    return count

def count_margins(alphas, exponents, L: int) -> dict:
    r"""The window :math:`[-\min_{e_k\ge0}e_k, -\max_{e_k<0}e_k)` (``down``, ``up``) of
    :math:`\delta_k = \hat e_k + k/2` (``dev``) within which the count is :math:`\Lambda` on the grid
    ``alphas``:sup:`2`, lists over :math:`k = 1..L-1` (``nan``: a side without grid points)."""
    L = check_int(L, "L", 2)
    alphas = _alphas(alphas, "alphas")
    if alphas.ndim != 1 or alphas.size == 0:
        raise ValueError("alphas must be a non-empty 1-d sequence")
    exponents = check_array(exponents, "exponents", shape=(L,))
    A1, A2 = np.meshgrid(alphas, alphas, indexing="ij")
    down, up, dev = [], [], []
    for k in range(1, L):
        e_pts = A2 - k * (0.5 - A1)
        down.append(float(e_pts[e_pts >= 0].min()) if np.any(e_pts >= 0) else math.nan)
        up.append(float(-e_pts[e_pts < 0].max()) if np.any(e_pts < 0) else math.nan)
        dev.append(float(exponents[k] + k / 2))
    return dict(down=down, up=up, dev=dev)

#: Keys a record needs (from :func:`twostep.experiments.spikes.spike_experiment`).
RECORD_KEYS = ("N", "seed", "top_free", "core_left", "core_right", "core_free")

def plane_grid(step: float = 0.02, offset: float = 0.01, gap: float = 0.004, L: int = 4) -> np.ndarray:
    r"""Grid points ``(P, 2)`` of :math:`[0, 1/2)^2` (``offset``, ``offset + step``, ...), those within
    ``gap`` of a boundary :math:`\alpha_2 = k(1/2-\alpha_1)`, :math:`k < L`, left out."""
    if not (0 < step < 0.5 and 0 <= offset < 0.5 and gap >= 0):
        raise ValueError(f"step must be in (0, 1/2), offset in [0, 1/2) and gap >= 0, got "
                         f"{step}, {offset}, {gap}")
    a = np.arange(offset, 0.5 - 1e-12, step)
    A1, A2 = (x.ravel() for x in np.meshgrid(a, a, indexing="ij"))
    near = np.zeros(A1.shape, dtype=bool)
    for k in range(1, L):
        near |= np.abs(A2 - k * (0.5 - A1)) < gap
    return np.column_stack([A1[~near], A2[~near]])

@dataclass
class PlaneMap:
    r"""Growth exponents over the plane (:func:`plane_map`): points, :math:`\Lambda`, the theory's
    ``e``, the fitted exponents of :math:`s_1(T_k)` and :math:`s_j(\Sigma)` and ``df``."""

    points: np.ndarray
    lam: np.ndarray
    e: np.ndarray
    term_exp: np.ndarray
    term_se: np.ndarray
    sum_exp: np.ndarray
    sum_se: np.ndarray
    df: int

    def exponents(self, method: str) -> tuple:
        r"""``(exp, se)`` of orders :math:`k = 1..L-1`, each ``(P, L - 1)``: ``"term"`` :math:`s_1(T_k)`,
        ``"sum"`` :math:`s_{k+1}(\Sigma)`."""
        if method == "term":
            return self.term_exp[:, 1:], self.term_se[:, 1:]
        if method == "sum":
            L = self.term_exp.shape[1]
            return self.sum_exp[:, 1:L], self.sum_se[:, 1:L]
        raise ValueError(f"method must be 'term' or 'sum', got {method!r}")

    def count(self, method: str) -> np.ndarray:
        """Orders ``k >= 1`` of positive exponent per point, ``(P,)``."""
        return np.sum(self.exponents(method)[0] > 0, axis=1)

    def resolved(self, method: str, confidence: float = 0.95) -> np.ndarray:
        """Whether every order's Student-t interval excludes 0, ``(P,)``."""
        exp, se = self.exponents(method)
        t = stats.t.ppf(0.5 + confidence / 2, self.df)
        return np.all(np.abs(exp) > t * se, axis=1)

def _records(records):
    records = list(records)
    if len(records) < 3:
        raise ValueError(f"records must hold at least 3 draws (for a fit with a standard error), "
                         f"got {len(records)}")
    for i, r in enumerate(records):
        missing = [k for k in RECORD_KEYS if k not in r]
        if missing:
            raise ValueError(f"records[{i}] lacks {missing} (from spike_experiment)")
    if len({r["N"] for r in records}) < 2:
        raise ValueError("records must span at least two widths N")
    return records

def spike_sum_values(record: dict, points, kappa: float) -> np.ndarray:
    r"""Singular values of one draw's :math:`\Sigma` at each point, :math:`\eta_t = \kappa N^{\alpha_t}`:
    ``(P, L + 1)``."""
    pts = np.asarray(points, dtype=float).reshape(-1, 2)
    N = float(record["N"])
    L = len(record["core_free"]) - 1
    factors = spike_sum_factors(kappa * N ** pts[:, 0], kappa * N ** pts[:, 1], L)
    return core_singular_values(record["core_left"], record["core_right"], record["core_free"],
                                factors)

def plane_map(records, points, kappa: float) -> PlaneMap:
    r"""Least-squares exponents in :math:`N` over all ``records`` at every point ``(P, 2)``."""
    records = _records(records)
    pts = np.asarray(points, dtype=float)
    if pts.ndim != 2 or pts.shape[1] != 2 or np.any((pts < 0) | (pts >= 0.5)):
        raise ValueError("points must have shape (P, 2) with entries in [0, 1/2)")
    kappa = float(kappa)
    if not kappa > 0:
        raise ValueError(f"kappa must be > 0, got {kappa}")
    L = len(records[0]["top_free"])
    x = np.log([float(r["N"]) for r in records])
    free = np.log(np.array([r["top_free"] for r in records], dtype=float))      # (R, L)
    slope, se, _ = linear_fit(x, free)
    k = np.arange(L)
    term_exp = pts[:, 1:2] + k * pts[:, 0:1] + slope[None, :]
    term_se = np.broadcast_to(se, term_exp.shape).copy()
    sums = np.log(np.array([spike_sum_values(r, pts, kappa) for r in records]))   # (R, P, L+1)
    sum_exp, sum_se, _ = linear_fit(x, sums)
    lam = np.array([n_spikes(a1, a2, L) for a1, a2 in pts])
    e = np.array([[spike_exponent(j, a1, a2) for j in range(L)] for a1, a2 in pts])
    return PlaneMap(pts, lam, e, term_exp, term_se, sum_exp, sum_se, len(records) - 2)

def clearing_width(N, values, threshold: float) -> float:
    r""":math:`N^\star = (\text{threshold}/C)^{1/b}` of the power law :math:`CN^b` fitted to ``values`` at
    widths ``N``; for :math:`b \le 0`, ``inf`` if below ``threshold`` at the largest width, else the
    smallest width."""
    N, values = np.asarray(N, dtype=float), np.asarray(values, dtype=float)
    if N.shape != values.shape or N.ndim != 1 or np.any(N <= 0) or np.any(values <= 0):
        raise ValueError("N and values must be positive 1-d arrays of the same length")
    b, _, a = linear_fit(np.log(N), np.log(values))
    if b <= 0:
        return float(N.min()) if a + b * math.log(N.max()) >= math.log(threshold) else math.inf
    return width_to_reach(threshold, math.exp(a), b)

def extrapolated_width(N, strength, exponent: float, threshold: float) -> dict:
    r""":math:`N^\star` at which ``strength`` (at widths ``N``) reaches ``threshold``: ``n_star`` with the
    theory's ``exponent``, ``n_fit`` with the fitted ``e_fit`` :math:`\pm` ``e_fit_se``."""
    C, _ = power_law_constant(N, strength, exponent)
    e_fit, e_fit_se = loglog_slope(N, strength)
    C_fit, _ = power_law_constant(N, strength, e_fit)
    return {"n_star": width_to_reach(threshold, C, exponent), "e_fit": e_fit,
            "e_fit_se": e_fit_se, "n_fit": width_to_reach(threshold, C_fit, e_fit)}

def spike_widths(N, strengths, settings, threshold: float) -> list:
    r""":func:`extrapolated_width` with :math:`e_k` of every new spike :math:`1\le k\le\Lambda` of every
    setting, from ``strengths`` ``(R, S, L + 1)`` at widths ``N`` ``(R,)``: one dict per spike."""
    N, x = np.asarray(N, dtype=float), np.asarray(strengths, dtype=float)
    if x.ndim != 3 or x.shape[0] != N.size:
        raise ValueError(f"strengths must have shape (len(N), S, L + 1), got {x.shape}")
    rows = []
    for i, (a1, a2) in enumerate(settings):
        lam = n_spikes(a1, a2, x.shape[2] - 1)
        for k in range(1, lam + 1):
            e = spike_exponent(k, a1, a2)
            rows.append(dict(i=i, a1=a1, a2=a2, lam=lam, k=k, e=e,
                             strength_max=float(x[N == N.max(), i, k].mean()),
                             **extrapolated_width(N, x[:, i, k], e, threshold)))
    return rows

def nstar_spread(N, strength, seeds, exponent: float, margins=(0.02, 0.10)) -> dict:
    r"""One spike's growth per doubling :math:`2^{e}` and the range ``lo``, ``hi`` of :math:`N^\star`.
    """
    if not isinstance(margins, (tuple, list)) or len(margins) != 2:
        raise TypeError(f"margins must be a pair (low, high) of margins, got {margins!r}")
    N, strength, seeds = np.asarray(N, dtype=float), np.asarray(strength), np.asarray(seeds)
    constants = [power_law_constant(N[seeds == s], strength[seeds == s], exponent)[0]
                 for s in dict.fromkeys(seeds.tolist())]
    m_lo, m_hi = min(margins), max(margins)
    lo = width_to_reach(outlier_strength(1.0, m_lo), max(constants), exponent)
    hi = width_to_reach(outlier_strength(1.0, m_hi), min(constants), exponent)
    decades = math.log10(hi / lo) if np.isfinite(hi) and np.isfinite(lo) else math.inf
    return {"growth": 2.0 ** exponent, "e": exponent, "lo": lo, "hi": hi, "decades": decades,
            "margin_lo": m_lo, "margin_hi": m_hi}

def predicted_count(spike_sum, edge_own: float, margin: float = 0.05) -> int:
    r"""The count predicted from the spikes: :math:`s_j` of ``spike_sum`` beyond :math:`\theta_\star`.
    """
    values = check_array(spike_sum, "spike_sum", ndim=1)
    edge = check_real(edge_own, "edge_own", low=0.0, low_open=True)
    return int(np.sum(values / (edge / 2) > outlier_strength(1.0, margin)))

def power_gram(a, powers: int) -> np.ndarray:
    r""":math:`|\cos(a^{\circ(i+1)}, a^{\circ(j+1)})|`, ``(powers, powers)`` (Gaussian limit:
    :func:`~twostep.analysis.spikes.power_cosine`)."""
    a = check_array(a, "a", ndim=1)
    powers = check_int(powers, "powers", 1)
    P = np.stack([a ** m / np.linalg.norm(a ** m) for m in range(1, powers + 1)])
    return np.abs(P @ P.T)

@dataclass
class CountTest:
    r"""The count test of one batch (:func:`count_test`): counts, edges, ``nstar`` and the hits."""

    settings: np.ndarray
    lam: np.ndarray
    Ns: list
    seeds: dict
    count: dict
    edge: dict
    nstar: np.ndarray
    hits: np.ndarray
    total: np.ndarray
    spike_hits: np.ndarray
    spike_total: np.ndarray

def count_test(records, batch: str, kappa: float, settings, L: int,
               margins=(0.02, 0.10)) -> CountTest:
    r"""The paper's count where the theory says it can be seen, from ``count_on`` records, with
    :math:`N^\star_j` (low, median, high) per seed and margin (:func:`clearing_width`)."""
    settings = np.asarray(settings, dtype=float).reshape(-1, 2)
    recs = [r for r in records if r["batch"] == batch]
    if not recs:
        raise ValueError(f"records hold no run of batch {batch!r}")
    Ns = sorted({r["N"] for r in recs})
    lam = np.array([n_spikes(a1, a2, L) for a1, a2 in settings])
    count, edge, ratio, seeds = {}, {}, {}, {}
    for N in Ns:
        rows = sorted([r for r in recs if r["N"] == N], key=lambda r: r["seed"])
        seeds[N] = [r["seed"] for r in rows]
        idx = [_point_index(r["points"], kappa, settings) for r in rows]
        count[N] = np.array([r["count_own"][i] for r, i in zip(rows, idx)])
        edge[N] = np.array([r["edge_own"][i] for r, i in zip(rows, idx)])
        ratio[N] = (np.array([r["spike_sum"][i] for r, i in zip(rows, idx)])
                    / (edge[N][..., None] / 2))
    common = sorted(set.intersection(*(set(seeds[N]) for N in Ns)))
    widths_N = np.array(Ns, dtype=float)
    nstar = np.full((len(settings), L, 3), np.nan)
    for s_i in range(len(settings)):
        for j in range(lam[s_i] + 1):
            widths = [clearing_width(widths_N, np.array([ratio[w][seeds[w].index(seed), s_i, j]
                                                         for w in Ns]), outlier_strength(1.0, m))
                      for seed in common for m in margins]
            nstar[s_i, j] = [min(widths), float(np.median(widths)), max(widths)]
    hits, total, spike_hits, spike_total = np.zeros((4, len(settings)), int)
    for s_i in range(len(settings)):
        for N in Ns:
            c = count[N][:, s_i]
            if N >= nstar[s_i, lam[s_i], 2]:
                total[s_i] += c.size
                hits[s_i] += int(np.sum(c == 1 + lam[s_i]))
            for j in range(1, lam[s_i] + 1):
                if N >= nstar[s_i, j, 2]:
                    spike_total[s_i] += c.size
                    spike_hits[s_i] += int(np.sum(c >= 1 + j))
    return CountTest(settings, lam, Ns, seeds, count, edge, nstar, hits, total, spike_hits,
                     spike_total)

def _point_index(points, kappa, settings) -> np.ndarray:
    # The rows of a record's (kappa, alpha1, alpha2) points that hold the settings at kappa.
    points = np.asarray(points, dtype=float)
    out = []
    for a1, a2 in settings:
        hit = np.flatnonzero(np.all(np.isclose(points, [kappa, a1, a2]), axis=1))
        if hit.size != 1:
            raise ValueError(f"the record has no point (kappa, alpha1, alpha2) = "
                             f"({kappa}, {a1}, {a2})")
        out.append(int(hit[0]))
    return np.array(out)

def rank_points(records, points, kappa: float, margins=(0.02, 0.10), top: int = 3) -> dict:
    r"""``{lam: [(alpha1, alpha2, nstar_median), ...]}``, ``top`` each: for :math:`\Lambda\ge1` the
    smallest median :math:`N^\star` of the :math:`(\Lambda+1)`-th value; for :math:`\Lambda = 0` the
    largest smallest :math:`N^\star` of the second, then :math:`e_1` nearest 0."""
    records = _records(records)
    pts = np.asarray(points, dtype=float)
    L = len(records[0]["top_free"])
    by_seed = {}
    for r in records:
        by_seed.setdefault(r["seed"], []).append(r)
    sizes = {s: (np.array([float(r["N"]) for r in rs]),
                 np.array([spike_sum_values(r, pts, kappa) for r in rs]))      # (R_s, P, L+1)
             for s, rs in by_seed.items()}
    thresholds = [outlier_strength(1.0, m) for m in margins]
    rows = {lam: [] for lam in range(L)}
    for i, (a1, a2) in enumerate(pts):
        lam = n_spikes(a1, a2, L)
        j = lam if lam >= 1 else 1
        widths = [clearing_width(N, v[:, i, j], t) for N, v in sizes.values() for t in thresholds]
        if lam >= 1:
            key = (float(np.median(widths)),)
        else:
            key = (-min(widths), -round(spike_exponent(1, a1, a2), 6))
        rows[lam].append((key, i, (round(float(a1), 6), round(float(a2), 6),
                                   float(np.median(widths)))))
    return {lam: [row for _, _, row in sorted(r)[:top]] for lam, r in rows.items()}
