r"""The exact decomposition of the second update into Hermite-order terms.

Write :math:`P = W_0X_2^\top` and :math:`\Delta = (W_1 - W_0)X_2^\top`
(both :math:`N\times n`). For a polynomial :math:`\sigma` of degree :math:`L`,
Taylor's formula is exact:
:math:`\sigma'(P+\Delta) = \sum_{k=0}^{L-1}\sigma^{(k+1)}(P)\odot\Delta^{\circ k}/k!`, so

.. math::
    W_2 - W_1 = \sum_{k=0}^{L-1} T_k,\qquad
    T_k = \frac{\eta_2}{n\,k!}\operatorname{diag}(a)
          \big[\sigma^{(k+1)}(P)\odot\Delta^{\circ k}\odot\mathbf 1y_2^\top\big]X_2 .

Replacing :math:`\Delta` by its rank-one part :math:`\eta_1\mu_1 a s^\top`
(:math:`s = X_2v`, :math:`v = X_1^\top y_1/n`) and :math:`\sigma^{(k+1)}(P)`
by its mean :math:`\mu_{k+1}` gives the *signal part* of :math:`T_k`,

.. math::
    S_k = \frac{\eta_2\mu_{k+1}(\eta_1\mu_1)^k}{k!}\,a^{\circ(k+1)}u_k^\top,
    \qquad u_k = \frac1n X_2^\top\big(y_2\odot s^{\circ k}\big).

With a reused batch the first update carries, for sample :math:`j`, the
self-term :math:`\eta_1 a_i\sigma'(P_{ij})y_j\|x_j\|^2/n`: it multiplies the
neuron's own :math:`\sigma'(P_{ij})`, not its mean :math:`\mu_1`. Averaging
over :math:`z = P_{ij}\sim N(0,1)` jointly gives the reuse-aware signal part

.. math::
    \tilde S_k = \frac{\eta_2\eta_1^k}{k!}\,a^{\circ(k+1)}\tilde u_k^\top,\quad
    \tilde u_k = \frac1nX_2^\top(y_2\odot m_k),\quad
    m_{k,j} = \mathbb{E}_z\Big[\sigma^{(k+1)}(z)\big(\mu_1 s_j +
              (\sigma'(z)-\mu_1)\,y_j\|x_j\|^2/n\big)^k\Big],

which equals :math:`S_k` for a fresh batch (where the self-term is absent).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import check_choice, check_int
from .activations import PolynomialActivation
from .hermite import gauss_nodes
from .training import TwoStepRun

SIGNALS = ("auto", "mean", "reuse")


def _check_run(run) -> TwoStepRun:
    if not isinstance(run, TwoStepRun):
        raise TypeError(f"run must be a TwoStepRun (from run_two_steps), got {type(run).__name__}")
    if not isinstance(run.activation, PolynomialActivation):
        raise ValueError(
            f"the exact decomposition needs a PolynomialActivation, got {run.activation.name}")
    return run


def _check_k(run, k):
    L = run.activation.degree
    k = check_int(k, "k", 0)
    if k > L - 1:
        raise ValueError(f"k must be in [0, L-1] = [0, {L - 1}] for a degree-{L} activation, got {k}")
    return k


def _pre_activations(run):
    P = run.W0 @ run.X2.T
    D = (run.W1 - run.W0) @ run.X2.T
    return P, D


def _term(run, k, P, D):
    M = run.activation.derivative(P, k + 1)
    if k:
        M *= D ** k
    M *= run.y2[None, :]
    M *= run.a[:, None]
    T = M @ run.X2
    T *= run.eta2 / (run.n * math.factorial(k))
    return T


def second_step_term(run: TwoStepRun, k: int) -> np.ndarray:
    r"""The exact term :math:`T_k` of :math:`W_2 - W_1`, shape ``(N, d)``."""
    run = _check_run(run)
    k = _check_k(run, k)
    P, D = _pre_activations(run)
    return _term(run, k, P, D)


def second_step_terms(run: TwoStepRun) -> list[np.ndarray]:
    r"""All exact terms :math:`T_0, \dots, T_{L-1}` (each ``(N, d)``); they sum to :math:`W_2 - W_1`."""
    run = _check_run(run)
    P, D = _pre_activations(run)
    return [_term(run, k, P, D) for k in range(run.activation.degree)]


@dataclass
class RankOne:
    r"""A rank-one matrix :math:`\text{value}\cdot\ell r^\top` with unit vectors
    ``left`` (shape ``(N,)``) and ``right`` (shape ``(d,)``); ``value >= 0``
    is its only non-zero singular value."""

    value: float
    left: np.ndarray
    right: np.ndarray

    def matrix(self) -> np.ndarray:
        """The dense ``(N, d)`` matrix."""
        return self.value * np.outer(self.left, self.right)


def _rank_one(scale, left, right) -> RankOne:
    nl, nr = np.linalg.norm(left), np.linalg.norm(right)
    value = abs(scale) * nl * nr
    if value == 0:
        return RankOne(0.0, left * 0, right * 0)
    return RankOne(float(value), np.sign(scale) * left / nl, right / nr)


def signal_direction(run: TwoStepRun, k: int) -> np.ndarray:
    r""":math:`u_k = X_2^\top(y_2\odot s^{\circ k})/n` with :math:`s = X_2 v`, shape ``(d,)``."""
    run = _check_run(run)
    k = _check_k(run, k)
    s = run.X2 @ run.v
    return run.X2.T @ (run.y2 * s ** k) / run.n


def reuse_weights(run: TwoStepRun, k: int, points: int = 60) -> np.ndarray:
    r"""Per-sample weights :math:`m_{k,j}` of the reuse-aware signal part, shape ``(n,)``.

    :math:`m_{k,j} = \mathbb{E}_z[\sigma^{(k+1)}(z)(\mu_1 s_j + (\sigma'(z)-\mu_1)r_j)^k]`
    with :math:`r_j = y_j\|x_j\|^2/n` under reuse and :math:`r_j = 0` for a fresh batch.
    """
    run = _check_run(run)
    k = _check_k(run, k)
    sigma = run.activation
    mu1 = sigma.mu[1]
    s = run.X2 @ run.v
    if run.batch == "reused":
        r = run.y2 * np.einsum("ij,ij->i", run.X2, run.X2) / run.n
    else:
        r = np.zeros_like(s)
    z, w = gauss_nodes(points)  # exact: the integrand is a polynomial of degree <= L*k
    inner = mu1 * s[:, None] + (sigma.derivative(z, 1) - mu1)[None, :] * r[:, None]
    return (inner ** k * sigma.derivative(z, k + 1)[None, :]) @ w


def signal_part(run: TwoStepRun, k: int, kind: str = "auto") -> RankOne:
    r"""The rank-one signal part of :math:`T_k`.

    ``kind="mean"`` gives :math:`S_k` (:math:`\sigma^{(k+1)}` and :math:`\sigma'`
    replaced by their means); ``kind="reuse"`` gives :math:`\tilde S_k` (self-term
    kept with the neuron's own :math:`\sigma'`); ``"auto"`` picks ``"reuse"`` for a
    reused batch and ``"mean"`` for a fresh one (where the two coincide).
    """
    run = _check_run(run)
    k = _check_k(run, k)
    kind = check_choice(kind, "kind", SIGNALS)
    if kind == "auto":
        kind = "reuse" if run.batch == "reused" else "mean"
    left = run.a ** (k + 1)
    if kind == "mean":
        mu = run.activation.mu
        scale = run.eta2 * mu[k + 1] * (run.eta1 * mu[1]) ** k / math.factorial(k)
        return _rank_one(scale, left, signal_direction(run, k))
    u = run.X2.T @ (run.y2 * reuse_weights(run, k)) / run.n
    return _rank_one(run.eta2 * run.eta1 ** k / math.factorial(k), left, u)
