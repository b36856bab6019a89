r"""The spikes of the second step: is each exact term :math:`T_k` its rank-one signal part?

For a polynomial :math:`\sigma` the second update splits exactly as
:math:`W_2 - W_1 = \sum_{k=0}^{L-1}T_k`, and each term has a predicted rank-one *signal part*
:math:`S_k\propto a^{\circ(k+1)}u_k^\top` (or its reuse-aware version :math:`\tilde S_k` for a
reused batch; both in :mod:`twostep.analysis.decomposition`). Its size
:math:`\|S_k\| \propto N^{\alpha_2-k(1/2-\alpha_1)}` holds almost by construction
(:math:`\|a^{\circ(k+1)}\|\propto N^{-k/2}`); the evidence that the theory describes the
network is that the *exact* :math:`T_k` is that spike: its top singular vectors point along
:math:`a^{\circ(k+1)}` and :math:`u_k`, and :math:`\|T_k-S_k\|_{op}` shrinks relative to
:math:`\|S_k\|` as :math:`N` grows. This module measures exactly that
(:func:`term_diagnostics`; the experiment is :func:`twostep.spike_experiment`), the strength a
spike needs to be counted as an outlier of :math:`W_2` (:func:`outlier_strength`), the
extrapolation of a measured power law to that strength (:func:`power_law_constant`,
:func:`width_to_reach`), and, for any activation (tanh included), the content of a matrix
along the powers :math:`a^{\circ m}` (:func:`power_projections`,
:func:`power_projections_null`, :func:`predicted_spikes`, :func:`rank_one_sum_singular_values`).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import (check_array, check_bool, check_choice, check_int, check_real,
                           check_rng, check_type)
from ..model.steps import TwoStepRun
from ._core import own_bulk_edge_core, power_basis, term_diagnostics_core
from .decomposition import SIGNALS, RankOne, second_step_terms, weighted_direction
from .spectra import bulk_edges


def term_diagnostics(run: TwoStepRun, kind: str = "auto", terms=None, vectors: bool = False,
                     corrected: bool = False) -> dict:
    r"""For every exact term :math:`T_k`, its size, its predicted spike, and how well they match.

    Parameters
    ----------
    run : TwoStepRun
        With a :class:`~twostep.model.activations.PolynomialActivation` of degree ``L``.
    kind : {"auto", "mean", "reuse"}
        Which signal part to compare with (:func:`twostep.signal_part`).
    terms : list of ndarray, optional
        The exact terms, if already computed (:func:`twostep.second_step_terms`).
    vectors : bool
        Also return the top singular vectors of each :math:`T_k`.
    corrected : bool
        Also compare with the corrected signal part :math:`S_k^{\rm corr}`
        (:func:`twostep.analysis.decomposition.signal_part` with ``corrected=True``): keys
        ``signal_corrected``, ``residual_corrected``, ``right_corrected``.

    Returns
    -------
    dict of ndarray, each of shape ``(L,)`` indexed by ``k``
        ``signal``: :math:`\|S_k\|`; ``top``: :math:`s_1(T_k)`;
        ``residual``: :math:`\|T_k-S_k\|_{op}`; ``left``: :math:`|\cos(\hat\ell_k, a^{\circ(k+1)})|`
        for the top left singular vector :math:`\hat\ell_k` of :math:`T_k`; ``right``:
        :math:`|\cos(\hat r_k, \text{right vector of }S_k)|`; ``memorisation``:
        :math:`\max_j|\cos(\hat r_k, x_j)|` over the second batch; ``localisation``:
        :math:`\max_i|(\hat\ell_k)_i|` (1 if the left vector is a single neuron);
        ``localisation_signal``: the same for :math:`a^{\circ(k+1)}/\|a^{\circ(k+1)}\|`;
        ``scale``: :math:`\eta_2\eta_1^k`, the factor by which :math:`T_k` depends on the step
        sizes (:mod:`twostep.analysis.rescaling`). With ``vectors=True`` also ``U`` ``(L, N)`` and
        ``Vt`` ``(L, d)``.
    """
    check_type(run, "run", TwoStepRun, "a TwoStepRun (from run_two_steps)")
    kind = check_choice(kind, "kind", SIGNALS)
    check_bool(vectors, "vectors")
    check_bool(corrected, "corrected")
    if terms is None:
        terms = second_step_terms(run)
    L = run.activation.degree
    if not isinstance(terms, (list, tuple)) or len(terms) != L:
        raise ValueError(f"terms must be a list of the L = {L} exact terms, got {type(terms).__name__}")
    terms = [check_array(T, f"terms[{k}]", shape=(run.N, run.d), dtype=T.dtype)
             for k, T in enumerate(terms)]
    return term_diagnostics_core(run, kind, terms, vectors, corrected)


def outlier_strength(ratio: float, margin: float = 0.05) -> float:
    r"""Spike strength :math:`\theta` at which a rank-one spike on :math:`W_0` is counted as an outlier.

    A rank-one :math:`\theta\ell r^\top` added to :math:`W_0` produces the singular value
    :math:`s_\star(\theta)` above the BBP threshold :math:`\theta>\gamma^{1/4}`
    (:mod:`twostep.analysis.bbp`). :func:`twostep.count_outliers` counts
    values above :math:`(1+m)(1+\sqrt\gamma)`; solving :math:`s_\star(\theta) = (1+m)(1+\sqrt\gamma)`
    for :math:`t=\theta^2` gives :math:`t^2 + (1+\gamma-e^2)t + \gamma = 0`, :math:`e=(1+m)(1+\sqrt\gamma)`,
    whose larger root is returned as :math:`\theta=\sqrt t`. For ``margin = 0`` this is
    :math:`\gamma^{1/4}`.

    Parameters
    ----------
    ratio : float
        :math:`\gamma = N/d > 0`.
    margin : float
        Relative margin ``m >= 0`` of :func:`twostep.count_outliers`.
    """
    g = check_real(ratio, "ratio", low=0.0, low_open=True)
    m = check_real(margin, "margin", low=0.0)
    e2 = ((1 + m) * bulk_edges(g)[1]) ** 2
    b = e2 - 1 - g
    disc = max(b * b - 4 * g, 0.0)
    return float(math.sqrt((b + math.sqrt(disc)) / 2))


def power_law_constant(N, size, exponent: float) -> tuple[float, float]:
    r"""Least-squares constant :math:`C` of :math:`\text{size}\approx C\,N^{\text{exponent}}` with the exponent fixed.

    Parameters
    ----------
    N, size : array_like, shape (m,)
        Positive widths and measured sizes (several seeds per width are fine).
    exponent : float

    Returns
    -------
    C : float
        :math:`\exp\big(\overline{\log\text{size} - \text{exponent}\log N}\big)`.
    se_log : float
        Standard error of :math:`\log C` (NaN for a single point).
    """
    N = check_array(N, "N", ndim=1)
    size = check_array(size, "size", shape=N.shape)
    e = check_real(exponent, "exponent")
    if np.any(N <= 0) or np.any(size <= 0):
        raise ValueError("N and size must be positive")
    r = np.log(size) - e * np.log(N)
    se = float(r.std(ddof=1) / math.sqrt(r.size)) if r.size > 1 else float("nan")
    return float(math.exp(r.mean())), se


def width_to_reach(threshold: float, constant: float, exponent: float) -> float:
    r"""The width :math:`N^\star` with :math:`C\,(N^\star)^{e} = \text{threshold}`.

    Returns :math:`(\text{threshold}/C)^{1/e}` for :math:`e>0`; for :math:`e\le0` the size never
    grows, and the result is ``1.0`` if :math:`C` already reaches the threshold at
    :math:`N=1` and ``inf`` otherwise. This is an extrapolation of a power law fitted at the
    simulated sizes, nothing more.
    """
    t = check_real(threshold, "threshold", low=0.0, low_open=True)
    C = check_real(constant, "constant", low=0.0, low_open=True)
    e = check_real(exponent, "exponent")
    if e <= 0:
        return 1.0 if C >= t else math.inf
    try:
        return float((t / C) ** (1.0 / e))
    except OverflowError:  # beyond any float: never, in practice
        return math.inf


def power_projections(M, a, powers: int) -> np.ndarray:
    r"""Norms of the components of ``M`` along the orthonormalised powers of ``a``.

    Let :math:`q_0, \dots, q_{K-1}` be the Gram--Schmidt orthonormalisation (in this order) of
    :math:`a, a^{\circ2}, \dots, a^{\circ K}`, so that :math:`q_m` is the part of
    :math:`a^{\circ(m+1)}` that the lower powers do not explain. Returns
    :math:`\|q_m^\top M\|` for :math:`m = 0..K-1`, shape ``(K,)``. The :math:`k`-th spike of the
    second update, :math:`\propto a^{\circ(k+1)}u_k^\top`, contributes to :math:`m\le k` only, so a
    missing term shows up as a missing component.

    Parameters
    ----------
    M : ndarray, shape (N, d)
    a : ndarray, shape (N,)
    powers : int
        ``K >= 1``; at most 8 (higher powers are numerically collinear).
    """
    M, a, K = _check_powers(M, a, powers)
    Q = power_basis(a, K)
    return np.linalg.norm(Q.T.astype(M.dtype) @ M, axis=1).astype(float)


def _check_powers(M, a, powers):
    M = check_array(M, "M", ndim=2)
    a = check_array(a, "a", shape=(M.shape[0],)).astype(float)
    K = check_int(powers, "powers", 1)
    if K > 8:
        raise ValueError(f"powers must be in [1, 8], got {K}")
    return M, a, K


def power_projections_null(M, a, powers: int, rng: np.random.Generator, draws: int = 20) -> np.ndarray:
    r"""Chance level for :func:`power_projections`: random-sign versions of :math:`q_m`, orthogonal to all powers.

    For each draw, :math:`\tilde q_m = q_m\odot\epsilon` with uniform signs :math:`\epsilon_i=\pm1`,
    projected onto the orthogonal complement of :math:`a, \dots, a^{\circ K}` and normalised.
    Returns the mean of :math:`\|\tilde q_m^\top M\|` over ``draws``, shape ``(K,)``. The vector
    keeps (up to the projection) the weight :math:`|q_m|` puts on the neurons with large
    :math:`|a_i|`, whose rows of the update are larger, but it has no component along any
    power of :math:`a`, so it measures what a projection picks up from the non-spike part.
    """
    M, a, K = _check_powers(M, a, powers)
    check_rng(rng)
    draws = check_int(draws, "draws", 1)
    Q = power_basis(a, K)
    total = np.zeros(K)
    for _ in range(draws):
        R = Q * rng.choice([-1.0, 1.0], size=(M.shape[0], 1))
        R -= Q @ (Q.T @ R)
        R /= np.linalg.norm(R, axis=0, keepdims=True)
        total += np.linalg.norm(R.T.astype(M.dtype) @ M, axis=1)
    return total / draws


def power_cosine(i: int, j: int) -> float:
    r"""Limit of the cosine between :math:`a^{\circ i}` and :math:`a^{\circ j}` for :math:`a` with i.i.d. centred Gaussian entries.

    :math:`\cos(a^{\circ i}, a^{\circ j}) \to m_{i+j}/\sqrt{m_{2i}m_{2j}}` with the Gaussian
    moments :math:`m_p = \mathbb{E}z^p = (p-1)!!` for even :math:`p` and 0 for odd :math:`p`
    (law of large numbers over the :math:`N` entries; the scale of :math:`a` cancels).
    E.g. :math:`\cos(a, a^{\circ3})\to 3/\sqrt{15}`, :math:`\cos(a^{\circ2}, a^{\circ4})\to 15/\sqrt{315}`.
    """
    i, j = check_int(i, "i", 1), check_int(j, "j", 1)

    def m(p):
        return 0.0 if p % 2 else float(math.prod(range(p - 1, 0, -2)))

    return m(i + j) / math.sqrt(m(2 * i) * m(2 * j))


def spike_core(parts) -> tuple:
    r"""The small core of :math:`\sum_k \theta_k\ell_kr_k^\top` for a list of :class:`RankOne`.

    With :math:`L = [\ell_1,\dots,\ell_K] = Q_LR_L` and :math:`R = [r_1,\dots,r_K] = Q_RR_R`
    (thin QR), the sum is :math:`Q_L\,R_L\operatorname{diag}(\theta)R_R^\top\,Q_R^\top`, so
    its non-zero singular values are those of the :math:`K\times K` core
    :math:`R_L\operatorname{diag}(\theta)R_R^\top`, for any rescaling of the
    :math:`\theta_k` (:func:`core_singular_values`). The vectors need not be orthogonal: this
    is how spikes with correlated left vectors combine.

    Returns
    -------
    R_L, R_R : ndarray, shape (K, K)
    theta : ndarray, shape (K,)
    """
    parts = list(parts)
    if not parts or not all(isinstance(p, RankOne) for p in parts):
        raise TypeError("parts must be a non-empty list of RankOne")
    left = np.stack([np.asarray(p.left, dtype=float) for p in parts], axis=1)
    right = np.stack([np.asarray(p.right, dtype=float) for p in parts], axis=1)
    if left.shape[0] < len(parts) or right.shape[0] < len(parts):
        raise ValueError("parts must have at least as many entries as there are parts")
    return (np.linalg.qr(left)[1], np.linalg.qr(right)[1],
            np.array([float(p.value) for p in parts]))


def core_singular_values(R_L, R_R, theta, factors=None) -> np.ndarray:
    r"""Singular values, descending, of :math:`R_L\operatorname{diag}(\theta\odot f)R_R^\top`
    (:func:`spike_core`): shape ``(K,)``, or ``(P, K)`` for ``factors`` of shape ``(P, K)``
    (one rescaling of the spikes per row; ``None``: no rescaling)."""
    theta = np.asarray(theta, dtype=float)
    f = np.ones_like(theta) if factors is None else np.asarray(factors, dtype=float)
    core = np.einsum("ik,...k,jk->...ij", R_L, theta * f, R_R)
    return np.linalg.svd(core, compute_uv=False)


def spike_sum_factors(eta1, eta2, L: int) -> np.ndarray:
    r"""The scale of each part of the spike sum :math:`\eta_1\mu_1av^\top + \sum_{k<L}S_k`
    at step sizes :math:`(\eta_1, \eta_2)`, relative to its step-free part:
    :math:`(\eta_1, \eta_2, \eta_2\eta_1, \dots, \eta_2\eta_1^{L-1})`, shape ``(..., L + 1)``
    for arrays ``eta1``, ``eta2`` of a common shape (:mod:`twostep.analysis.rescaling`)."""
    e1, e2 = np.asarray(eta1, dtype=float), np.asarray(eta2, dtype=float)
    powers = e1[..., None] ** np.arange(L)
    return np.concatenate([e1[..., None], e2[..., None] * powers], axis=-1)


def rank_one_sum_singular_values(parts) -> np.ndarray:
    r"""Singular values of :math:`\sum_k \theta_k\ell_kr_k^\top` for a list of :class:`RankOne`,
    descending, shape ``(K,)``: those of the core of :func:`spike_core`."""
    return core_singular_values(*spike_core(parts))


def predicted_spikes(run: TwoStepRun, orders: int) -> list[RankOne]:
    r"""The signal parts :math:`S_0,\dots,S_{K-1}` for any activation with Hermite coefficients.

    Same formula as :func:`twostep.signal_part` with ``kind="mean"``,
    :math:`S_k = \eta_2\mu_{k+1}(\eta_1\mu_1)^k/k!\;a^{\circ(k+1)}u_k^\top`, but with
    :math:`\mu_k` from :meth:`Activation.hermite_coefficients`, so it also applies to tanh
    (where the even :math:`\mu_k` vanish and with them :math:`S_1, S_3, \dots`). For a
    polynomial of degree ``L``, :math:`S_k = 0` for :math:`k\ge L`.
    """
    check_type(run, "run", TwoStepRun, "a TwoStepRun (from run_two_steps)")
    K = check_int(orders, "orders", 1)
    mu = np.array(run.activation.hermite_coefficients(K), dtype=float)
    mu[np.abs(mu) < 1e-12] = 0.0  # quadrature noise (~1e-17) on coefficients zero by symmetry
    s = run.X2 @ run.v
    return [RankOne.from_vectors(run.eta2 * mu[k + 1] * (run.eta1 * mu[1]) ** k / math.factorial(k),
                                 run.a ** (k + 1), weighted_direction(run.X2, run.y2, s ** k))
            for k in range(K)]


def own_bulk_edge(W, a, orders: int) -> float:
    r"""The bulk edge of ``W`` (``(N, d)``) estimated from its own spectrum: the top singular
    value of :math:`(I - QQ^\top)W`, with :math:`Q` the :func:`power_basis` of ``a`` of size
    ``orders``.

    Every predicted spike of the two steps has its left vector among
    :math:`a, a^{\circ2}, \dots, a^{\circ L}`, so projecting their span out removes the spikes and
    leaves the bulk, widened by the second step's remainder, whose largest value is the edge
    against which :math:`W_2`'s outliers are counted (instead of :math:`W_0`'s edge
    :math:`1+\sqrt{N/d}`). By interlacing, removing :math:`K` dimensions moves the bulk's top by
    at most its :math:`K`-th spacing, which vanishes as :math:`N` grows.
    """
    W = check_array(W, "W", ndim=2)
    a = check_array(a, "a", shape=(W.shape[0],)).astype(float)
    return own_bulk_edge_core(W, a, check_int(orders, "orders", 1))
