r"""The :math:`(\alpha_1, \alpha_2)` plane: the theory's count, the count measured from the exact
terms, and the map of that count over the whole plane from a few draws.

The theory's count is :math:`\Lambda(\alpha_1,\alpha_2) = \min(L-1, \lfloor\alpha_2/(1/2-\alpha_1)\rfloor)`
(:func:`twostep.n_spikes`, :func:`theory_count`): the :math:`k`-th term of the second update has
size of order :math:`N^{e_k}`, :math:`e_k = \alpha_2 - k(1/2-\alpha_1)`, and survives as
:math:`N` grows when :math:`e_k\ge0`.

By the exact rescaling (:mod:`twostep.analysis.rescaling`) one draw at one width gives the
second update at every step size: :math:`T_k = \eta_2\eta_1^k\hat T_k` with a step-free
:math:`\hat T_k`, so the step sizes change neither the singular vectors of :math:`T_k` nor its
spike-to-remainder ratio; they only multiply its size by :math:`c_2c_1^kN^{\alpha_2+k\alpha_1}`.
With :math:`\hat e_k` the measured exponent of :math:`s_1(\hat T_k)` in :math:`N`, the exact
term grows at :math:`(\alpha_1,\alpha_2)` exactly when :math:`\alpha_2 + k\alpha_1 + \hat e_k \ge 0`,
and the empirical count is

.. math::
    \hat\Lambda(\alpha_1,\alpha_2) = \#\{1\le k\le L-1:\ T_k\text{ is a spike and }
        \alpha_2 + k\alpha_1 + \hat e_k \ge 0\},

where ":math:`T_k` is a spike" (the same at every grid point) means that its top singular
vectors are aligned with the predicted ones and its spike-to-remainder ratio grows with
:math:`N` (:func:`is_spike`). The theory's boundary :math:`\alpha_2 = k(1/2-\alpha_1)` is the
case :math:`\hat e_k = -k/2`; :func:`count_margins` gives how far each :math:`\hat e_k` may
stray from it before the count changes at a point of a grid.

The predicted spikes scale the same way, so the size of every term and of the whole spike sum

.. math::
    \Sigma(\eta_1, \eta_2) = \eta_1\mu_1\,av^\top + \sum_{k=0}^{L-1}S_k^{\rm corr}

is known at every point of the plane from the step-free quantities of a draw: the top singular
value :math:`s_1(\hat T_k)` and the :math:`(L+1)\times(L+1)` core of the spike sum
(:func:`~twostep.analysis.spikes.spike_core`). Over draws at several widths
:math:`N = n = d` and seeds, :func:`plane_map` fits at each point :math:`(\alpha_1, \alpha_2)`,
with :math:`\eta_t = \kappa N^{\alpha_t}`, the growth exponent of

* :math:`s_1(T_k)` (for :math:`k = 0..L-1`), against :math:`e_k`;
* :math:`s_{j}(\Sigma)`, the :math:`j`-th singular value of the spike sum (:math:`j = 1..L+1`):
  the outliers of :math:`W_2` are made of :math:`\Sigma`, whose left vectors
  :math:`a, a^{\circ2}, \dots` are far from orthogonal, so the :math:`(k+1)`-th singular value
  of the sum, not :math:`\|S_k\|`, is the size of the :math:`k`-th new outlier.

The *measured count* at a point is the number of orders :math:`k = 1..L-1` whose exponent is
positive, to set beside :math:`\Lambda(\alpha_1,\alpha_2)`. :func:`clearing_width` extrapolates
a fitted power law to the width at which a singular value of the spike sum clears a bulk edge;
:func:`spike_widths` and :func:`nstar_spread` give the width :math:`N^\star` at which each
predicted new spike reaches a strength, and :func:`power_gram` how far from orthogonal the
left vectors :math:`a^{\circ k}` of one draw are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._validation import check_array, check_int, check_real
from .spikes import (core_singular_values, outlier_strength, power_law_constant, spike_sum_factors,
                     width_to_reach)
from .sweep import linear_fit, loglog_slope
from .theory import _n_spikes, n_spikes, spike_exponent

#: Default alignment threshold: a cosine above 1/sqrt(2) means the predicted vector
#: carries more than half of the singular vector's squared norm.
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
    return np.asarray(_n_spikes(a1, a2, L), dtype=int)


def is_spike(left, right, ratio_slope, threshold: float = ALIGNED) -> np.ndarray:
    r"""Whether each term is a spike: ``left >= threshold``, ``right >= threshold`` and ``ratio_slope > 0``.

    Parameters
    ----------
    left, right : array_like, shape (K,)
        Cosines of the top singular vectors of :math:`T_k` with :math:`a^{\circ(k+1)}` and
        :math:`u_k` (e.g. means over seeds at the largest :math:`N`).
    ratio_slope : array_like, shape (K,)
        Exponent in :math:`N` of :math:`\|S_k\|/\|T_k-S_k\|_{op}`; positive if the spike gains
        on the remainder as :math:`N` grows.
    threshold : float in (0, 1]

    Returns
    -------
    ndarray of bool, shape (K,)
    """
    left = check_array(left, "left", ndim=1)
    right = check_array(right, "right", shape=left.shape)
    ratio_slope = check_array(ratio_slope, "ratio_slope", shape=left.shape)
    t = check_real(threshold, "threshold", low=0.0, high=1.0, low_open=True)
    return (left >= t) & (right >= t) & (ratio_slope > 0)


def empirical_boundary(alpha1, k: int, exponent: float) -> np.ndarray:
    r"""The line :math:`\alpha_2 = -\hat e_k - k\alpha_1` on which :math:`s_1(T_k)` stops growing.

    ``exponent`` is :math:`\hat e_k`, the measured exponent of the step-free term; the theory's
    value :math:`-k/2` gives :func:`twostep.phase_boundaries`.
    """
    k = check_int(k, "k", 1)
    e = check_real(exponent, "exponent")
    return -e - k * _alphas(alpha1, "alpha1")


def empirical_count(alpha1, alpha2, exponents, spike, L: int | None = None) -> np.ndarray:
    r""":math:`\hat\Lambda(\alpha_1,\alpha_2)` elementwise over broadcast arrays.

    Parameters
    ----------
    alpha1, alpha2 : array_like
        Exponents in :math:`[0, 1/2)`.
    exponents : array_like, shape (K,)
        :math:`\hat e_k` for :math:`k = 0..K-1` (entry 0 is ignored: :math:`T_0` is the
        first spike's reinforcement, not a new outlier).
    spike : array_like of bool, shape (K,)
        Whether each :math:`T_k` is a spike (:func:`is_spike`); entry 0 ignored.
    L : int, optional
        Degree of the activation; only :math:`k\le L-1` count (default ``K``).

    Returns
    -------
    ndarray of int
        Number of :math:`k\in[1, \min(K, L)-1]` with ``spike[k]`` and
        :math:`\alpha_2 + k\alpha_1 + \hat e_k \ge 0`.
    """
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
    r"""How far each :math:`\hat e_k` may move from :math:`-k/2` before the count changes somewhere.

    At a grid point the order :math:`k` counts iff :math:`e_k + (\hat e_k + k/2)\ge0` with the
    theory's :math:`e_k = \alpha_2 - k(1/2-\alpha_1)`. So the count equals :math:`\Lambda` at every
    point of ``alphas``:sup:`2` (the grid's values on both axes, in :math:`[0, 1/2)`) iff the
    deviation :math:`\delta_k = \hat e_k + k/2` lies in :math:`[-\min_{e_k\ge0}e_k,\
    -\max_{e_k<0}e_k)`. ``exponents``: :math:`\hat e_k`, shape ``(L,)`` (entry 0 ignored).
    Returns ``down``, ``up`` (the window's sides, ``nan`` for a side without grid points) and
    ``dev`` (:math:`\delta_k`), lists over :math:`k = 1..L-1`.
    """
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
    r"""Points :math:`(\alpha_1, \alpha_2)` of a square grid on :math:`[0, 1/2)^2` (``offset``,
    ``offset + step``, ...), without those within ``gap`` of a boundary
    :math:`\alpha_2 = k(1/2-\alpha_1)`, :math:`k = 1..L-1`, of :math:`\Lambda`; shape ``(P, 2)``."""
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
    r"""Measured growth exponents over the plane (:func:`plane_map`).

    ``points`` ``(P, 2)``; ``lam`` ``(P,)`` :math:`\Lambda`; ``e`` ``(P, L)`` the theory's
    :math:`e_k`; ``term_exp``, ``term_se`` ``(P, L)``: fitted exponent of :math:`s_1(T_k)` and its
    standard error; ``sum_exp``, ``sum_se`` ``(P, L + 1)``: of :math:`s_j(\Sigma)`; ``df``: the
    fits' degrees of freedom (records minus 2).
    """

    points: np.ndarray
    lam: np.ndarray
    e: np.ndarray
    term_exp: np.ndarray
    term_se: np.ndarray
    sum_exp: np.ndarray
    sum_se: np.ndarray
    df: int

    def exponents(self, method: str) -> tuple:
        r"""Exponent and standard error of the size of order :math:`k = 1..L-1`, each
        ``(P, L - 1)``: ``"term"`` :math:`s_1(T_k)`, ``"sum"`` :math:`s_{k+1}(\Sigma)`."""
        if method == "term":
            return self.term_exp[:, 1:], self.term_se[:, 1:]
        if method == "sum":
            L = self.term_exp.shape[1]
            return self.sum_exp[:, 1:L], self.sum_se[:, 1:L]
        raise ValueError(f"method must be 'term' or 'sum', got {method!r}")

    def count(self, method: str) -> np.ndarray:
        """Measured count per point: orders ``k >= 1`` whose exponent is positive, ``(P,)``."""
        return np.sum(self.exponents(method)[0] > 0, axis=1)

    def resolved(self, method: str, confidence: float = 0.95) -> np.ndarray:
        """Whether every order's ``confidence`` interval (Student t, ``df``) excludes 0, ``(P,)``:
        where it does not, the measured count could differ by the unresolved orders."""
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
    r"""Singular values of the spike sum :math:`\Sigma` of one draw at each point
    :math:`(\alpha_1, \alpha_2)`, :math:`\eta_t = \kappa N^{\alpha_t}`: shape ``(P, L + 1)``."""
    pts = np.asarray(points, dtype=float).reshape(-1, 2)
    N = float(record["N"])
    L = len(record["core_free"]) - 1
    factors = spike_sum_factors(kappa * N ** pts[:, 0], kappa * N ** pts[:, 1], L)
    return core_singular_values(record["core_left"], record["core_right"], record["core_free"],
                                factors)


def plane_map(records, points, kappa: float) -> PlaneMap:
    r"""Fitted growth exponents at every point of ``points`` ``(P, 2)`` from ``records`` (draws of
    one batch scheme at two or more widths, :data:`RECORD_KEYS`), with
    :math:`\eta_t = \kappa N^{\alpha_t}`.

    Each exponent is the least-squares slope of the log of the size against :math:`\log N`
    over all records (every seed at every width), with its standard error.
    :math:`s_1(T_k) = \kappa^{k+1}N^{\alpha_2+k\alpha_1}s_1(\hat T_k)` exactly, so its exponent is
    :math:`\alpha_2 + k\alpha_1` plus the fitted slope of :math:`s_1(\hat T_k)`.
    """
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
    r"""The width :math:`N^\star` at which a power law :math:`CN^b` fitted (least squares in
    logs) to ``values`` at widths ``N`` (1-d, same length, at least two distinct widths) reaches
    ``threshold``: :math:`(\text{threshold}/C)^{1/b}` for :math:`b > 0`. For :math:`b \le 0`
    the fit never rises: ``inf`` if it lies below ``threshold`` at the largest width, else the
    smallest width (cleared everywhere measured). An extrapolation of the measured trend,
    nothing more."""
    N, values = np.asarray(N, dtype=float), np.asarray(values, dtype=float)
    if N.shape != values.shape or N.ndim != 1 or np.any(N <= 0) or np.any(values <= 0):
        raise ValueError("N and values must be positive 1-d arrays of the same length")
    b, _, a = linear_fit(np.log(N), np.log(values))
    if b <= 0:
        return float(N.min()) if a + b * math.log(N.max()) >= math.log(threshold) else math.inf
    return width_to_reach(threshold, math.exp(a), b)


def extrapolated_width(N, strength, exponent: float, threshold: float) -> dict:
    r"""Width at which a spike of measured ``strength`` at widths ``N`` (1-d, same length; several
    seeds per width) reaches ``threshold``, extrapolated two ways.

    With the theory's exponent :math:`e`, the constant :math:`C` of :math:`CN^{e}`
    (:func:`~twostep.analysis.spikes.power_law_constant`) gives
    :math:`N^\star = (\text{threshold}/C)^{1/e}` (``n_star``); with the exponent fitted in
    logs (``e_fit`` :math:`\pm` ``e_fit_se``), the same gives ``n_fit``. The one definition of
    :math:`N^\star` of a single spike that both the two-steps chapter and the at-scale appendix
    use."""
    C, _ = power_law_constant(N, strength, exponent)
    e_fit, e_fit_se = loglog_slope(N, strength)
    C_fit, _ = power_law_constant(N, strength, e_fit)
    return {"n_star": width_to_reach(threshold, C, exponent), "e_fit": e_fit,
            "e_fit_se": e_fit_se, "n_fit": width_to_reach(threshold, C_fit, e_fit)}


def spike_widths(N, strengths, settings, threshold: float) -> list:
    r""":math:`N^\star` of every predicted new spike: for each setting ``i``,
    :math:`(\alpha_1,\alpha_2)` of ``settings``, and order :math:`1\le k\le\Lambda`, the
    :math:`(k+1)`-th singular value ``strengths[:, i, k]`` of the spike sum over the runs at
    widths ``N`` (shape ``(R,)``; ``strengths`` ``(R, S, L + 1)``) extrapolated to
    ``threshold`` by :func:`extrapolated_width` with :math:`e_k`. One dict per spike: ``i``,
    ``a1``, ``a2``, ``lam``, ``k``, ``e``, ``strength_max`` (mean at the largest width) and the
    keys of :func:`extrapolated_width`."""
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
    r"""What the extrapolation of one spike of theory exponent :math:`e` can and cannot say,
    from its ``strength`` in runs at widths ``N`` with seeds ``seeds`` (all shape ``(R,)``,
    :math:`N = d`): its growth per doubling of :math:`N`, :math:`2^{e}`, and the range of
    :math:`N^\star = (\theta_\star(m)/C)^{1/e}` over the outlier margins :math:`m` of ``margins``
    (:func:`~twostep.analysis.spikes.outlier_strength`) and over the constants :math:`C`
    fitted to each seed's runs separately. Returns ``growth``, ``e``, ``lo``, ``hi``,
    ``decades`` (:math:`\log_{10}(hi/lo)`, ``inf`` when the spike never reaches it) and the
    margins ``margin_lo``, ``margin_hi``."""
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
    r"""The book's finite-:math:`N` prediction of one draw's outlier count: the number of
    singular values :math:`s_j` of the predicted spike sum ``spike_sum`` (1-d) whose strength
    over the draw's own bulk, :math:`s_j/(e_{\rm own}/2)` (``edge_own`` :math:`= e_{\rm own}`,
    scaled to :math:`W_0`'s edge 2 at :math:`N/d = 1`), exceeds the BBP strength
    :math:`\theta_\star` whose outlier clears the edge by ``margin``
    (:func:`~twostep.analysis.spikes.outlier_strength`): the count
    :func:`twostep.scale.device.count_on` measures, predicted from the spikes alone."""
    values = check_array(spike_sum, "spike_sum", ndim=1)
    edge = check_real(edge_own, "edge_own", low=0.0, low_open=True)
    return int(np.sum(values / (edge / 2) > outlier_strength(1.0, margin)))


def power_gram(a, powers: int) -> np.ndarray:
    r"""Absolute cosines between the entrywise powers of ``a``, shape ``(powers, powers)``: the
    left vectors of the spike sum, far from orthogonal.

    Entry :math:`(i, j)` is :math:`|\langle a^{\circ(i+1)}, a^{\circ(j+1)}\rangle|/
    (\|a^{\circ(i+1)}\|\,\|a^{\circ(j+1)}\|)`; for Gaussian ``a`` it tends to
    :func:`twostep.analysis.spikes.power_cosine`.
    """
    a = check_array(a, "a", ndim=1)
    powers = check_int(powers, "powers", 1)
    P = np.stack([a ** m / np.linalg.norm(a ** m) for m in range(1, powers + 1)])
    return np.abs(P @ P.T)


@dataclass
class CountTest:
    r"""The count test at chosen settings (:func:`count_test`), one batch scheme.

    ``settings`` ``(S, 2)``; ``lam`` ``(S,)``; ``Ns`` the widths; ``seeds`` per width;
    ``count``, ``edge`` ``{N: (seeds, S)}``: :math:`W_2`'s outliers beyond its own edge and that
    edge; ``nstar`` ``(S, L, 3)``: for the :math:`j`-th new outlier
    (:math:`j = 1..\Lambda`; row ``j``, row 0 the first spike) the low, median and high
    :math:`N^\star` over seeds and margins (``nan`` beyond :math:`\Lambda`); ``hits``,
    ``total`` ``(S,)``: (seed, width) pairs at or beyond :math:`N^\star_\Lambda` (high) where
    the count is :math:`1+\Lambda`, of how many; ``spike_hits``, ``spike_total`` ``(S,)``: the
    (new outlier :math:`j \le \Lambda`, seed, width) triples at or beyond :math:`N^\star_j`
    (high) where the count is at least :math:`1+j`, of how many.
    """

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

    def nstar_count(self) -> np.ndarray:
        r"""``(S, 3)``: :math:`N^\star` of the full count, that of the :math:`\Lambda`-th new
        outlier (of the first spike where :math:`\Lambda = 0`)."""
        return self.nstar[np.arange(len(self.lam)), self.lam]


def count_test(records, batch: str, kappa: float, settings, L: int,
               margins=(0.02, 0.10)) -> CountTest:
    r"""The paper's count where the theory says it can be seen, from records of
    :func:`twostep.scale.device.count_on` (one per width, batch and seed).

    For each setting :math:`(\alpha_1,\alpha_2)` (at step constant ``kappa``), seed and
    :math:`j = 0..\Lambda`, the :math:`(j+1)`-th singular value of the spike sum over
    :math:`W_2`'s own edge scaled to :math:`W_0`'s, :math:`r_j(N) = s_{j+1}(\Sigma)/(e_{\rm own}/2)`,
    is fitted by a power law over the widths and extrapolated to the strength
    :math:`\theta_\star(m)` that clears the edge (:func:`clearing_width`,
    :func:`~twostep.analysis.spikes.outlier_strength`), for each margin ``m``: the spread over seeds and margins gives
    :math:`N^\star_j`'s low, median and high values. The spike sum is built from the predicted
    rank-one parts, the count from :math:`W_2`'s own spectrum, so the extrapolation does not
    see the count it predicts. The tests: the count :math:`1+\Lambda` at every (seed, width)
    with :math:`N \ge N^\star_\Lambda` (high), and each new outlier, a count of at least
    :math:`1+j`, at every (seed, width) with :math:`N \ge N^\star_j` (high).
    """
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
    r"""The points of the map where the paper's count should be seen soonest, per
    :math:`\Lambda`: ``{lam: [(alpha1, alpha2, nstar_median), ...]}``, best first, ``top`` each.

    From each seed's draws (``records`` of one batch, :data:`RECORD_KEYS`) the singular values
    of the spike sum at the point are extrapolated (:func:`clearing_width`) to the strength that
    clears :math:`W_0`'s edge (:func:`~twostep.analysis.spikes.outlier_strength`) for each margin;
    the median over seeds and margins is the point's :math:`N^\star`. For
    :math:`\Lambda \ge 1` the rank is by the :math:`N^\star` of the :math:`(\Lambda+1)`-th value,
    smallest first. For :math:`\Lambda = 0` it is by the smallest :math:`N^\star` of the
    *second* value, largest first (an extra outlier least likely), ties broken by :math:`e_1`
    nearest 0 (closest to the boundary :math:`\alpha_1+\alpha_2 = 1/2`), then by grid order.
    """
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
