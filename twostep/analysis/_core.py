"""The analysis' trusted cores: ``f_core`` is the public ``f`` on checked arguments."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import svd
from scipy.sparse.linalg import LinearOperator, svds

from .._validation import check_int, check_type
from ..model.activations import PolynomialActivation, namespace
from ..model.hermite import gauss_nodes
from ..model.runs import TwoStepRun
from .lanczos import block_lanczos

# 0.1 / (0.5 - 0.4) is 0.99999... in floating point: the floor needs a relative tolerance.
FLOOR_TOL = 1e-9

def spike_count(a1, a2, L):
    r""":math:`\Lambda = \min(L-1, \lfloor\alpha_2/(1/2-\alpha_1)\rfloor)` on checked exponents,
    elementwise over numpy arrays as on floats (``L`` None: no cap)."""
    count = np.floor(np.divide(a2, 0.5 - np.asarray(a1)) * (1 + FLOOR_TOL))
    return count if L is None else np.minimum(L - 1, count)

def check_run(run) -> TwoStepRun:
    """``run``, a TwoStepRun with a polynomial activation (the exact decomposition needs one)."""
    check_type(run, "run", TwoStepRun, "a TwoStepRun (from run_two_steps)")
    if not isinstance(run.activation, PolynomialActivation):
        raise ValueError(
            f"the exact decomposition needs a PolynomialActivation, got {run.activation.name}")
    return run

def check_order(k, L) -> int:
    """An order ``0 <= k <= L - 1`` of a degree-``L`` activation's terms."""
    k = check_int(k, "k", 0)
    if k > L - 1:
        raise ValueError(f"k must be in [0, L-1] = [0, {L - 1}] for a degree-{L} activation, got {k}")
    return k

def run_pre_activations(run) -> tuple:
    r""":math:`(P, \Delta)` of a checked run: kept by its steps, or computed (two products)."""
    if run.pre is not None:   # kept by the steps (twostep.model.steps.two_steps, keep_pre)
        return run.pre
    return run.W0 @ run.X2.T, (run.W1 - run.W0) @ run.X2.T

def check_pre(run, pre) -> tuple:
    """``pre``, the pair ``(P, D)`` of ``run``'s pre-activations (computed if None)."""
    if pre is None:
        return run_pre_activations(run)
    if not (isinstance(pre, tuple) and len(pre) == 2
            and all(tuple(getattr(x, "shape", ())) == (run.N, run.n) for x in pre)):
        raise ValueError(f"pre must be the pair (P, D) of pre_activations(run), two ({run.N}, "
                         f"{run.n}) arrays, got {type(pre).__name__}")
    return pre

def neuron_sample_factor(run, k, P, D):
    r""":math:`\sigma^{(k+1)}(P)\odot\Delta^{\circ k}`, ``(N, n)``."""
    M = run.activation.derivative(P, k + 1)
    for _ in range(k):      # not D ** k: numpy's float32 pow is far slower than products
        M *= D
    return M

def term_weights(run, k, left, P, D):
    r""":math:`w`, ``(n,)``, with :math:`\ell^\top T_k = w^\top X_2` (:math:`T_k` never formed):
    :math:`w_j = \frac{\eta_2}{n\,k!}y_j\sum_i\ell_ia_i\sigma^{(k+1)}(P_{ij})\Delta_{ij}^k`."""
    w = (left * run.a) @ neuron_sample_factor(run, k, P, D)
    w *= run.y2
    w *= run.eta2 / (run.n * math.factorial(k))
    return w

def term_parts(run, k, P, D):
    # T_k = c M X2 with M = diag(a) [factor * 1 y2^T] (N, n) and c = eta2/(n k!).
    M = neuron_sample_factor(run, k, P, D)
    M *= run.y2[None, :]
    M *= run.a[:, None]
    return M, run.eta2 / (run.n * math.factorial(k))

def exact_term(run, k, P, D):
    M, c = term_parts(run, k, P, D)
    T = M @ run.X2
    T *= c
    return T

def term_operator(run, k, P, D) -> LinearOperator:
    # A product passes over M and X2 once each; forming T_k is an N x n x d product.
    M, c = term_parts(run, k, P, D)
    X2, dt = run.X2, M.dtype
    c = dt.type(c)

    def matvec(x):
        return c * (M @ (X2 @ np.ravel(x).astype(dt, copy=False)))

    def rmatvec(u):
        return c * (X2.T @ (M.T @ np.ravel(u).astype(dt, copy=False)))

    return LinearOperator((run.N, run.d), matvec=matvec, rmatvec=rmatvec, dtype=dt)

@dataclass
class RankOne:
    r"""A rank-one matrix :math:`\text{value}\cdot\ell r^\top`.

    Parameters
    ----------
    value : float
        Its singular value, ``>= 0``.
    left, right : ndarray, shapes (N,) and (d,)
        Unit vectors :math:`\ell` and :math:`r`.
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> S = ts.RankOne.from_vectors(2.0, np.array([3.0, 4.0]), np.array([1.0, 0.0]))
    >>> S.value, S.left.tolist()
    (10.0, [0.6, 0.8])
    >>> S.matrix()
    array([[6., 0.],
           [8., 0.]])
    """

    value: float
    left: np.ndarray
    right: np.ndarray

    @classmethod
    def from_vectors(cls, scale: float, left, right) -> "RankOne":
        r""":math:`\text{scale}\cdot\ell r^\top` normalised: ``value`` :math:`= |\text{scale}|\|\ell\|\|r\|`,
        the sign of ``scale`` in ``left``; zero vectors for a zero product."""
        xp = namespace(left)[0]
        norm = np.linalg.norm if xp is np else xp.linalg.vector_norm   # numpy, or a device
        nl, nr = float(norm(left)), float(norm(right))
        value = abs(float(scale)) * nl * nr
        if value == 0:
            return cls(0.0, left * 0, right * 0)
        sign = np.sign(scale) if xp is np else math.copysign(1.0, scale)
        return cls(float(value), sign * left / nl, right / nr)

    def scaled(self, factor: float) -> "RankOne":
        """The same spike with its singular value multiplied by ``factor >= 0``."""
        return RankOne(self.value * factor, self.left, self.right)

    def matrix(self) -> np.ndarray:
        """The dense ``(N, d)`` matrix."""
        return self.value * np.outer(self.left, self.right)

def weighted_direction(X, y, weights) -> np.ndarray:
    r""":math:`X^\top(y\odot w)/n`, ``(d,)`` (``(m, d)`` for ``w`` ``(n, m)``): :math:`v` for
    :math:`w = 1`, :math:`u_k` for :math:`w = s^{\circ k}`, :math:`\tilde u_k` for :math:`w = m_k`."""
    # (y w)^T X, not X^T (y w): with float32 X and float64 w numpy casts X through its
    # transposed view for the latter, three times slower.
    if getattr(weights, "ndim", 0) == 2:
        return ((y[:, None] * weights).T @ X) / X.shape[0]
    return (y * weights) @ X / X.shape[0]

def _weight_arguments(run, reused):
    # (mu_1 s, r) of the reuse-aware weights, r = y_j |x_j|^2 / n with the self-term and 0
    # without; device arrays take no numpy operands: Python scalars, zeros on the device.
    on_host = namespace(run.X2)[0] is np
    if reused:
        r = self_term(run.X2, run.y2)
    else:
        r = np.zeros(run.n) if on_host else run.y2 * 0.0
    mu1 = run.activation.mu[1] if on_host else float(run.activation.mu[1])
    return mu1 * (run.X2 @ run.v), r

def self_term(X, y):
    # r_j = y_j |x_j|^2 / n: sample j's own contribution to <x_j, v> under reuse.
    xp = namespace(X)[0]
    sq = np.einsum("ij,ij->i", X, X) if xp is np else xp.sum(X * X, axis=1)
    return y * sq / X.shape[0]

def reuse_weight(activation, k: int, mu1_s, r, power: int | None = None) -> np.ndarray:
    r""":math:`m_k(s, r) = \mathbb{E}_z[\sigma^{(k+1)}(z)(\mu_1 s + (\sigma'(z)-\mu_1)r)^p]`, :math:`p` =
    ``power`` (default :math:`k`), elementwise in ``mu1_s`` :math:`= \mu_1 s` and ``r``."""
    # m_k = sum_m C(p, m) (mu_1 s)^(p-m) r^m e_m, e_m = E[sigma^(k+1)(z) (sigma'(z) - mu_1)^m].
    p = k if power is None else power
    z, w = gauss_nodes(60)
    d1 = activation.derivative(z, 1) - activation.mu[1]
    dk = activation.derivative(z, k + 1)
    e = [np.dot(w, dk * d1 ** m) for m in range(p + 1)]
    if namespace(mu1_s)[0] is not np:
        e = [float(x) for x in e]  # device arrays take Python scalars
    return sum(math.comb(p, m) * mu1_s ** (p - m) * r ** m * e[m] for m in range(p + 1))

# Entries of one float64 block of rows in _fluctuation_variance (2 MB: in cache).
_ROW_BLOCK = 1 << 18

def _fluctuation_variance(run, k):
    # R^2: row i of W1 - W0 is eta1 a_i (mu1 v + r_i); the mean of |r_i|^2 weighted by
    # a_i^(2(k+1)), which discards the neurons with a_i near 0 (imprecise). Float64 row blocks.
    xp = namespace(run.W0)[0]
    f64, mu1 = xp.float64, float(run.activation.mu[1])
    a = xp.astype(run.a, f64)
    v = xp.astype(run.v, f64)[None, :]
    weights = a ** (2 * (k + 1))
    rows = max(1, _ROW_BLOCK // run.d)
    total = 0.0
    for i in range(0, run.N, rows):
        j = min(i + rows, run.N)           # the array API leaves out-of-range stops unspecified
        R = xp.astype(run.W1[i:j, :] - run.W0[i:j, :], f64)
        R /= run.eta1 * a[i:j, None]
        R -= mu1 * v
        total += float(xp.sum(weights[i:j] * xp.sum(R * R, axis=1)))
    return total / float(xp.sum(weights))

def corrected_weight(activation, k: int, mu1_s, r, R2: float) -> np.ndarray:
    r""":math:`m^{\rm corr}_k = \mathbb E_{z,g}[\sigma^{(k+1)}(z)(\mu_1s + (\sigma'(z)-\mu_1)r + Rg)^k]`,
    elementwise: :math:`\sum_{m\ \rm even}\binom km(m-1)!!R^m` times :func:`reuse_weight` of power
    :math:`k-m`."""
    return sum(math.comb(k, m) * math.prod(range(m - 1, 0, -2)) * R2 ** (m // 2)
               * reuse_weight(activation, k, mu1_s, r, power=k - m) for m in range(0, k + 1, 2))

def second_step_terms_core(run, reuse_first=False) -> list:
    """:func:`twostep.second_step_terms` of a checked run (numpy, CuPy or PyTorch arrays)."""
    P, D = run_pre_activations(run)
    start = 1 if reuse_first and run.batch == "reused" else 0
    terms = [exact_term(run, k, P, D) for k in range(start, run.activation.degree)]
    if start:
        T0 = run.W1 - run.W0
        T0 *= T0.dtype.type(run.eta2 / run.eta1)
        terms.insert(0, T0)
    return terms

def signal_part_core(run, k, kind, corrected) -> RankOne:
    """:func:`twostep.signal_part` of checked arguments (numpy, CuPy or PyTorch arrays)."""
    if kind == "auto":
        kind = "reuse" if run.batch == "reused" else "mean"
    if kind == "mean" and not (corrected and k >= 2):
        return mean_signal_part(run, k, run.activation.mu)
    if not (corrected and k >= 2):
        weights = reuse_weight(run.activation, k, *_weight_arguments(run, run.batch == "reused"))
    else:
        reused = kind == "reuse" and run.batch == "reused"
        R2 = _fluctuation_variance(run, k)
        weights = corrected_weight(run.activation, k, *_weight_arguments(run, reused), R2)
    u = weighted_direction(run.X2, run.y2, weights)
    return RankOne.from_vectors(run.eta2 * run.eta1 ** k / math.factorial(k), run.a ** (k + 1), u)

def mean_signal_part(run, k, mu) -> RankOne:
    r""":math:`S_k = \eta_2\mu_{k+1}(\eta_1\mu_1)^k/k!\;a^{\circ(k+1)}u_k^\top` for the given ``mu``."""
    scale = run.eta2 * mu[k + 1] * (run.eta1 * mu[1]) ** k / math.factorial(k)
    return RankOne.from_vectors(scale, run.a ** (k + 1),
                                weighted_direction(run.X2, run.y2, (run.X2 @ run.v) ** k))

def first_step_spike_core(a, X, y, activation) -> RankOne:
    """:func:`twostep.first_step_spike` of checked arrays, on any array library."""
    mu1 = float(activation.hermite_coefficients(1)[1])
    return RankOne.from_vectors(mu1, a, weighted_direction(X, y, 1.0))

def top_singular_core(M, k, vectors=True, tol=0.0, seed=0):
    """:func:`twostep.top_singular` of a checked float matrix or LinearOperator, ``1 <= k <= m``."""
    m = min(M.shape)
    if k >= m - 1:
        # ARPACK needs k < min(shape). A LinearOperator is formed as M @ I (np.asarray would
        # give an object array).
        dense = M.matmat(np.eye(M.shape[1], dtype=M.dtype)) if isinstance(M, LinearOperator) else M
        U, s, Vt = svd(np.asarray(dense), full_matrices=False)
        s, U, Vt = s[:k], U[:, :k], Vt[:k]
    else:
        v0 = np.random.default_rng(seed).standard_normal(m).astype(M.dtype)
        want = {True: True, "right": "vh", False: False}[vectors]
        out = svds(M, k=k, v0=v0, tol=tol, solver="arpack", return_singular_vectors=want)
        if vectors is False:
            return np.sort(out)[::-1]
        U, s, Vt = out
        order = np.argsort(s)[::-1]
        s, Vt = s[order], Vt[order]
        U = U[:, order] if vectors is True else None
    if vectors is False:
        return s
    return (s, U, Vt) if vectors is True else (s, Vt)

def overlap_core(u, beta) -> float:
    """:func:`~twostep.analysis.alignment.overlap` of two checked vectors of one shape."""
    nu, nb = np.linalg.norm(u), np.linalg.norm(beta)
    if nu == 0 or nb == 0:
        raise ValueError("u and beta must be non-zero vectors")
    return float(abs(u @ beta) / (nu * nb))

def memorisations_core(V, X) -> tuple:
    """:func:`~twostep.analysis.alignment.memorisations` of checked arrays."""
    c = np.abs(X @ V.T) / (np.linalg.norm(X, axis=1)[:, None] * np.linalg.norm(V, axis=1)[None, :])
    j = np.argmax(c, axis=0)
    return c[j, np.arange(V.shape[0])], j

def power_basis(a, K: int) -> np.ndarray:
    r"""Orthonormal columns ``(N, K)``: Gram--Schmidt of :math:`a, a^{\circ2}, \dots, a^{\circ K}`,
    the span of the left vectors of the spikes of orders :math:`k < K`."""
    A = np.stack([a ** (m + 1) / np.linalg.norm(a ** (m + 1)) for m in range(K)], axis=1)
    return np.linalg.qr(A)[0]

def own_bulk_edge_core(W, a, K) -> float:
    """:func:`~twostep.analysis.spikes.own_bulk_edge` of checked arrays (``a`` as float64)."""
    Q = power_basis(a, K).astype(W.dtype)
    # The bulk's top has no gap below it: tol = 1e-5 stopped on the second value; at 1e-7
    # it agrees with a dense SVD to 1e-6.
    return float(block_lanczos(W, 1, vectors=False, tol=1e-7, project=Q)[0][0])

def term_diagnostics_core(run, kind, terms, vectors, corrected) -> dict:
    """:func:`~twostep.analysis.spikes.term_diagnostics` of checked arguments."""
    rows = []
    for k, T in enumerate(terms):
        S = signal_part_core(run, k, kind, False)
        # Block Lanczos as at scale; the remainder T_k - S_k (its top in a bulk, where ARPACK
        # needed ~60 products) warm-started from T_k's block.
        s, U, V, block, _ = block_lanczos(T, 1)
        u, v = U[:, 0], V[:, 0]
        row = dict(signal=S.value, top=s[0],
                   residual=block_lanczos(T, 1, vectors=False, minus=(S.value, S.left, S.right),
                                          start=block.T)[0][0],
                   left=overlap_core(u.astype(float), S.left) if S.value > 0 else 0.0,
                   right=overlap_core(v.astype(float), S.right) if S.value > 0 else 0.0,
                   memorisation=memorisations_core(v[None, :], run.X2)[0][0],
                   localisation=float(np.max(np.abs(u)) / np.linalg.norm(u)),
                   localisation_signal=float(np.max(np.abs(S.left))) if S.value > 0 else 0.0,
                   scale=run.eta2 * run.eta1 ** k)
        if corrected:
            C = signal_part_core(run, k, kind, True)
            row.update(signal_corrected=C.value, residual_corrected=block_lanczos(
                T, 1, vectors=False, minus=(C.value, C.left, C.right), start=block.T)[0][0],
                right_corrected=overlap_core(v.astype(float), C.right) if C.value > 0 else 0.0)
        if vectors:
            row.update(U=u, Vt=v)
        rows.append(row)
    return {key: np.array([row[key] for row in rows], dtype=float) for key in rows[0]}
