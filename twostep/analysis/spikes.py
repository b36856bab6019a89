r"""The spikes of the second step: is each exact term :math:`T_k` its signal part :math:`S_k`? And
the outlier strength, power-law extrapolation, and a matrix's content along the powers :math:`a^{\circ m}`."""

from __future__ import annotations

import math

import numpy as np

from .._validation import (check_array, check_bool, check_choice, check_int, check_real,
                           check_rng, check_type)
from ..model.steps import TwoStepRun
from ._core import mean_signal_part, own_bulk_edge_core, power_basis, term_diagnostics_core
from .decomposition import SIGNALS, RankOne, second_step_terms
from .spectra import bulk_edges

def term_diagnostics(run: TwoStepRun, kind: str = "auto", terms=None, vectors: bool = False,
                     corrected: bool = False) -> dict:
    r"""``(L,)`` arrays over the terms :math:`T_k` of ``run``: ``signal``, ``top``, ``residual``,
    ``left``, ``right``, ``memorisation``, ``localisation``, ``scale`` (and ``*_corrected``)."""
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
    r"""The :math:`\theta` with :math:`s_\star(\theta) = e = (1+m)(1+\sqrt\gamma)`, :math:`m` = ``margin``:
    the larger root :math:`t = \theta^2` of :math:`t^2 + (1+\gamma-e^2)t + \gamma = 0`."""
    g = check_real(ratio, "ratio", low=0.0, low_open=True)
    m = check_real(margin, "margin", low=0.0)
    e2 = ((1 + m) * bulk_edges(g)[1]) ** 2
    b = e2 - 1 - g
    disc = max(b * b - 4 * g, 0.0)
    return float(math.sqrt((b + math.sqrt(disc)) / 2))

def power_law_constant(N, size, exponent: float) -> tuple[float, float]:
    r"""``(C, se_log)``: :math:`C = \exp\overline{(\log\text{size} - e\log N)}` of
    :math:`\text{size}\approx CN^{e}` for fixed :math:`e`, and the standard error of :math:`\log C`."""
    N = check_array(N, "N", ndim=1)
    size = check_array(size, "size", shape=N.shape)
    e = check_real(exponent, "exponent")
    if np.any(N <= 0) or np.any(size <= 0):
        raise ValueError("N and size must be positive")
    r = np.log(size) - e * np.log(N)
    se = float(r.std(ddof=1) / math.sqrt(r.size)) if r.size > 1 else float("nan")
    return float(math.exp(r.mean())), se

def width_to_reach(threshold: float, constant: float, exponent: float) -> float:
    r""":math:`N^\star = (\text{threshold}/C)^{1/e}` for :math:`e>0`; for :math:`e\le0`, 1 if
    :math:`C \ge` threshold, else ``inf``."""
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
    r""":math:`\|q_m^\top M\|` for :math:`m < K` = ``powers`` (``<= 8``), :math:`q_m` the
    :func:`~twostep.analysis._core.power_basis` of ``a``: ``(K,)``."""
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
    r"""Chance level of :func:`power_projections`: mean over ``draws`` of :math:`\|\tilde q_m^\top M\|`,
    :math:`\tilde q_m \propto q_m\odot\epsilon` (random signs) projected off all the powers."""
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
    r"""Gaussian limit :math:`m_{i+j}/\sqrt{m_{2i}m_{2j}}` of :math:`\cos(a^{\circ i}, a^{\circ j})`,
    :math:`m_p = (p-1)!!` for even :math:`p`, 0 for odd."""
    i, j = check_int(i, "i", 1), check_int(j, "j", 1)

    def m(p):
        return 0.0 if p % 2 else float(math.prod(range(p - 1, 0, -2)))

    return m(i + j) / math.sqrt(m(2 * i) * m(2 * j))

def spike_core(parts) -> tuple:
    r"""``(R_L, R_R, theta)``, :math:`[\ell_k] = Q_LR_L`, :math:`[r_k] = Q_RR_R`:
    :math:`\sum_k\theta_k\ell_kr_k^\top` of the RankOne ``parts`` has the singular values of
    :math:`R_L\operatorname{diag}(\theta)R_R^\top`."""
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
    r"""Singular values of :math:`R_L\operatorname{diag}(\theta\odot f)R_R^\top`, descending: ``(K,)``, or
    ``(P, K)`` for ``factors`` ``(P, K)``."""
    theta = np.asarray(theta, dtype=float)
    f = np.ones_like(theta) if factors is None else np.asarray(factors, dtype=float)
    core = np.einsum("ik,...k,jk->...ij", R_L, theta * f, R_R)
    return np.linalg.svd(core, compute_uv=False)

def spike_sum_factors(eta1, eta2, L: int) -> np.ndarray:
    r"""Scales :math:`(\eta_1, \eta_2, \eta_2\eta_1, \dots, \eta_2\eta_1^{L-1})` of the spike sum's parts,
    ``(..., L + 1)``."""
    e1, e2 = np.asarray(eta1, dtype=float), np.asarray(eta2, dtype=float)
    powers = e1[..., None] ** np.arange(L)
    return np.concatenate([e1[..., None], e2[..., None] * powers], axis=-1)

def rank_one_sum_singular_values(parts) -> np.ndarray:
    r"""Singular values of :math:`\sum_k \theta_k\ell_kr_k^\top`, descending, ``(K,)``."""
    return core_singular_values(*spike_core(parts))

def predicted_spikes(run: TwoStepRun, orders: int) -> list[RankOne]:
    r""":math:`S_k = \eta_2\mu_{k+1}(\eta_1\mu_1)^k/k!\;a^{\circ(k+1)}u_k^\top`, :math:`k < K` = ``orders``,
    with :math:`\mu_k` of ``hermite_coefficients``: any activation (tanh included)."""
    check_type(run, "run", TwoStepRun, "a TwoStepRun (from run_two_steps)")
    K = check_int(orders, "orders", 1)
    mu = np.array(run.activation.hermite_coefficients(K), dtype=float)
    mu[np.abs(mu) < 1e-12] = 0.0  # quadrature noise (~1e-17) on coefficients zero by symmetry
    return [mean_signal_part(run, k, mu) for k in range(K)]

def own_bulk_edge(W, a, orders: int) -> float:
    r"""The edge of ``W``'s bulk from its own spectrum: the top singular value of :math:`(I - QQ^\top)W`,
    :math:`Q` the :func:`~twostep.analysis._core.power_basis` of ``a`` of size ``orders``."""
    W = check_array(W, "W", ndim=2)
    a = check_array(a, "a", shape=(W.shape[0],)).astype(float)
    return own_bulk_edge_core(W, a, check_int(orders, "orders", 1))
