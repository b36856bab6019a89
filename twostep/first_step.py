r"""The first gradient step as a spike plus a small remainder.

At initialisation the negative gradient of the correlation loss (the update
per unit step size) is :math:`G = -\nabla L(W_0)`, :math:`N\times d`. Splitting
:math:`\sigma'(W_0X^\top) = \mu_1\mathbf 1\mathbf 1^\top + \big(\sigma'(W_0X^\top)-\mu_1\big)`
gives

.. math::
    G = \mu_1\, a v^\top + \frac1n\operatorname{diag}(a)
        \big[(\sigma'(W_0X^\top)-\mu_1)\odot\mathbf 1y^\top\big]X,
    \qquad v = \frac1n X^\top y,

so :math:`W_1 = W_0 + \eta_1 G = W_0 + \eta_1\mu_1 av^\top + \Delta_1`. This module
computes the rank-one part, the relative size of the remainder
:math:`\|G-\mu_1av^\top\|_{op}/\|G\|_{op}`, the predicted spike strength, and a
one-call experiment that measures all of it together with the top of the
spectrum of :math:`W_1` for several step sizes.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.sparse.linalg import LinearOperator, svds

from ._validation import check_array, check_int, check_pairs, check_real, check_rng
from .activations import Activation
from .alignment import overlap
from .decomposition import RankOne
from .network import _check_activation, _check_dtype, gaussian_inputs, gradient, initialise
from .targets import Link, Teacher
from .training import step_size


def first_step_spike(a, X, y, activation: Activation) -> RankOne:
    r"""The rank-one part :math:`\mu_1\,a v^\top` of :math:`G=-\nabla L(W_0)`, :math:`v = X^\top y/n`.

    Parameters
    ----------
    a : ndarray, shape (N,)
    X : ndarray, shape (n, d)
    y : ndarray, shape (n,)
    activation : Activation
        Supplies :math:`\mu_1 = \mathbb{E}[\sigma'(z)]`.

    Returns
    -------
    RankOne
        ``value`` :math:`= |\mu_1|\,\|a\|\,\|v\|`, ``left`` :math:`=\operatorname{sign}(\mu_1)a/\|a\|`,
        ``right`` :math:`= v/\|v\|`.
    """
    X = check_array(X, "X", ndim=2)
    a = check_array(a, "a", ndim=1, dtype=X.dtype)
    y = check_array(y, "y", shape=(X.shape[0],), dtype=X.dtype)
    _check_activation(activation)
    mu1 = float(activation.hermite_coefficients(1)[1])
    v = X.T @ y / X.shape[0]
    na, nv = float(np.linalg.norm(a)), float(np.linalg.norm(v))
    value = abs(mu1) * na * nv
    if value == 0:
        return RankOne(0.0, np.zeros_like(a), np.zeros_like(v))
    return RankOne(value, math.copysign(1.0, mu1) * a / na, v / nv)


#: Relative accuracy asked of ARPACK for the squared singular values. The
#: chapters compare quantities at the 1e-3 level; machine precision (what
#: :func:`twostep.top_singular` asks for) costs several times more iterations.
SVDS_TOL = 1e-9


def _top(M, k, seed, vectors=False):
    v0 = np.random.default_rng(seed).standard_normal(min(M.shape)).astype(M.dtype)
    out = svds(M, k=k, v0=v0, tol=SVDS_TOL, solver="arpack",
               return_singular_vectors="vh" if vectors else False)
    if not vectors:
        return np.sort(out)[::-1]
    _, s, Vt = out
    order = np.argsort(s)[::-1]
    return s[order], Vt[order]


def _residual_norm(G, spike, seed) -> float:
    return _residual_top(G, spike, seed, vectors=False)[0]


def _residual_top(G, spike, seed, vectors=True):
    """Top singular value (and right vector, if asked) of G - spike, matrix-free."""
    N, d = G.shape
    lv = G.dtype.type(spike.value) * spike.left.astype(G.dtype, copy=False)
    right = spike.right.astype(G.dtype, copy=False)

    def matvec(x):
        x = np.ravel(x)
        return G @ x - lv * (right @ x)

    def rmatvec(x):
        x = np.ravel(x)
        return G.T @ x - right * (lv @ x)

    R = LinearOperator((N, d), matvec=matvec, rmatvec=rmatvec, dtype=G.dtype)
    if not vectors:
        return float(_top(R, 1, seed)[0]), None
    s, Vt = _top(R, 1, seed, vectors=True)
    return float(s[0]), Vt[0].astype(float)


def rank_one_residual(update, spike: RankOne, seed: int = 0) -> float:
    r"""Relative size :math:`\|G - S\|_{op}/\|G\|_{op}` of what a rank-one matrix leaves of ``update``.

    The difference is applied as a linear operator (no dense copy of
    :math:`G - S`), and both operator norms come from ARPACK (relative
    accuracy about ``SVDS_TOL``).

    Parameters
    ----------
    update : ndarray, shape (N, d)
        The matrix :math:`G`, e.g. :math:`-\nabla L(W_0)`.
    spike : RankOne
        :math:`S = \text{value}\cdot\ell r^\top` with ``left`` of shape ``(N,)`` and ``right`` of shape ``(d,)``.
    seed : int
        Seed of ARPACK's starting vector (results are reproducible).

    Returns
    -------
    float
        In :math:`[0, \infty)`; 0 if ``update`` is exactly ``spike``.
    """
    G = check_array(update, "update", ndim=2)
    if not isinstance(spike, RankOne):
        raise TypeError(f"spike must be a RankOne, got {type(spike).__name__}")
    N, d = G.shape
    left = check_array(spike.left, "spike.left", shape=(N,), dtype=G.dtype)
    right = check_array(spike.right, "spike.right", shape=(d,), dtype=G.dtype)
    seed = check_int(seed, "seed", 0)
    check_real(spike.value, "spike.value", low=0.0)
    if min(N, d) < 3:
        raise ValueError(f"update must have both dimensions >= 3 for ARPACK, got shape {G.shape}")
    if not np.any(G):
        raise ValueError("update must not be the zero matrix")
    norm_g = float(_top(G, 1, seed)[0])
    return _residual_norm(G, RankOne(spike.value, left, right), seed) / norm_g


def spike_strength(eta: float, mu1: float, c1: float, second_moment: float, psi: float) -> float:
    r"""Predicted singular value of the spike :math:`\eta\mu_1 av^\top`:
    :math:`\theta = \eta\,|\mu_1|\sqrt{c_1^2 + \mathbb{E}[y^2]/\psi}`.

    Uses :math:`\|a\|\to1` and :math:`\|v\|^2\to c_1^2+\mathbb{E}[y^2]/\psi`, :math:`\psi=n/d`.
    """
    eta = check_real(eta, "eta", low=0.0)
    mu1 = check_real(mu1, "mu1")
    c1 = check_real(c1, "c1")
    m2 = check_real(second_moment, "second_moment", low=0.0)
    psi = check_real(psi, "psi", low=0.0, low_open=True)
    return eta * abs(mu1) * math.sqrt(c1 * c1 + m2 / psi)


def first_step_diagnostics(N: int, n: int, d: int, activation: Activation, target,
                           rng: np.random.Generator, steps: Sequence = (), top: int = 1,
                           noise: float = 0.0, dtype=np.float64) -> dict:
    r"""Draw a problem, take the first gradient, and measure how close it is to a spike.

    Random draws come in the order of :func:`twostep.run_two_steps` (teacher
    directions, ``W0``, ``a``, ``X``, label noise), so for the same generator
    state :math:`W_0+\eta G` is that function's ``W1``.

    Parameters
    ----------
    N, n, d : int
        Width, batch size, input dimension.
    activation : Activation
    target : Link, sequence of Link, or Teacher
        The first direction ``teacher.directions[0]`` is :math:`\beta^*`.
    rng : numpy.random.Generator
    steps : sequence of (c, alpha)
        Step sizes :math:`\eta = cN^\alpha` at which :math:`W_1 = W_0+\eta G` is examined.
    top : int
        How many top singular values of each :math:`W_1` to return (``1 <= top < min(N, d)``).
    noise : float
        Label-noise standard deviation (ignored when a Teacher is given).
    dtype : float64 or float32

    Returns
    -------
    dict
        ``residual``: :math:`\|G-\mu_1av^\top\|_{op}/\|G\|_{op}`;
        ``remainder_sample_overlap``: cosine between the top right singular vector of
        :math:`G-\mu_1av^\top` and the input :math:`x_{j^*}` with the largest label,
        :math:`j^* = \arg\max_j|y_j|` (near 1 when single extreme labels dominate the remainder);
        ``max_label``: :math:`\max_j|y_j|`;
        ``best_residual``: :math:`s_2(G)/s_1(G)` (what the best rank-one approximation leaves);
        ``update_norm``: :math:`\|G\|_{op}`; ``spike``: :math:`|\mu_1|\|a\|\|v\|`;
        ``v_overlap``: :math:`|\langle v/\|v\|,\beta^*\rangle|`;
        ``eta``: shape ``(len(steps),)``;
        ``top``: shape ``(len(steps), top)``, the largest singular values of each :math:`W_1`;
        ``right_overlap``: shape ``(len(steps),)``, cosine of the top right singular vector of
        :math:`W_1` with :math:`\beta^*`; ``right_v_overlap``: the same with :math:`v`.
    """
    N, n, d = check_int(N, "N"), check_int(n, "n"), check_int(d, "d")
    _check_activation(activation)
    check_rng(rng)
    steps = check_pairs(steps, "steps", "a (c, alpha) pair")
    top = check_int(top, "top", 1)
    if top >= min(N, d) - 1 or min(N, d) < 3:
        raise ValueError(f"top must be in [1, min(N, d) - 2] = [1, {min(N, d) - 2}], got {top}")
    dt = _check_dtype(dtype)
    etas = np.array([step_size(c, alpha, N) for c, alpha in steps], dtype=float)
    if isinstance(target, Teacher):
        if target.d != d:
            raise ValueError(f"target (a Teacher) has d={target.d}, but d={d}")
        teacher = target
    elif isinstance(target, Link) or (isinstance(target, Sequence) and not isinstance(target, str)):
        teacher = Teacher(target, d, rng, noise=noise)
    else:
        raise TypeError(f"target must be a Link, a sequence of Link or a Teacher, got {type(target).__name__}")
    W0, a = initialise(N, d, rng, dt)
    X, y = teacher.sample(n, rng, dt)
    beta = teacher.directions[0]

    G = gradient(W0, a, X, y, activation)
    G *= -1
    spike = first_step_spike(a, X, y, activation)
    sG = _top(G, 2, 0)
    remainder, r1 = _residual_top(G, spike, 0)
    extreme = X[int(np.argmax(np.abs(y)))].astype(float)
    out = {
        "residual": remainder / float(sG[0]),
        "remainder_sample_overlap": overlap(r1, extreme),
        "max_label": float(np.max(np.abs(y))),
        "best_residual": float(sG[1] / sG[0]),
        "update_norm": float(sG[0]),
        "spike": spike.value,
        "v_overlap": overlap(spike.right, beta) if spike.value > 0 else 0.0,
        "eta": etas,
        "top": np.zeros((len(steps), top)),
        "right_overlap": np.zeros(len(steps)),
        "right_v_overlap": np.zeros(len(steps)),
    }
    W1 = np.empty_like(W0)
    for i, eta in enumerate(etas):
        np.multiply(G, dt.type(eta), out=W1)
        W1 += W0
        s, Vt = _top(W1, top, 0, vectors=True)
        out["top"][i] = s
        out["right_overlap"][i] = overlap(Vt[0].astype(float), beta)
        if spike.value > 0:
            out["right_v_overlap"][i] = overlap(Vt[0].astype(float), spike.right.astype(float))
    return out


def finite_size_overlap(c1: float, second_moment: float, cross_moment: float, n: int,
                        d: int) -> float:
    r"""Root-mean-square overlap of :math:`v = X^\top y/n` with :math:`\beta^*` at finite ``n``, ``d``.

    Along :math:`\beta^*`, :math:`v` has mean :math:`c_1` and variance
    :math:`(\mathbb{E}[y^2z^2]-c_1^2)/n` (:math:`z=\langle\beta^*,x\rangle`); orthogonally
    it has squared norm close to :math:`(d-1)\mathbb{E}[y^2]/n`. Hence

    .. math::
        \mathbb{E}\big[\langle v/\|v\|,\beta^*\rangle^2\big] \approx \frac{q}{q + (d-1)\mathbb{E}[y^2]/n},
        \qquad q = c_1^2 + \frac{\mathbb{E}[y^2z^2]-c_1^2}{n},

    which tends to :func:`twostep.one_step_overlap` as :math:`n, d\to\infty`,
    :math:`n/d=\psi`, and for :math:`c_1 = 0` is
    :math:`\approx\sqrt{\mathbb{E}[y^2z^2]/(d\,\mathbb{E}[y^2])}`, of order :math:`d^{-1/2}`.

    Parameters
    ----------
    c1 : float
        :math:`c_1(g) = \mathbb{E}[g(z)z]`.
    second_moment : float
        :math:`\mathbb{E}[y^2] > 0`.
    cross_moment : float
        :math:`\mathbb{E}[y^2z^2] \ge c_1^2` (e.g. ``link.moment(lambda z, g: g**2 * z**2)``).
    n, d : int
    """
    c1 = check_real(c1, "c1")
    m2 = check_real(second_moment, "second_moment", low=0.0, low_open=True)
    m22 = check_real(cross_moment, "cross_moment", low=0.0)
    n, d = check_int(n, "n"), check_int(d, "d")
    if m22 < c1 * c1 * (1 - 1e-9):
        raise ValueError(f"cross_moment must be >= c1**2 = {c1 * c1:g} (Cauchy-Schwarz), got {m22}")
    q = c1 * c1 + max(m22 - c1 * c1, 0.0) / n
    return math.sqrt(q / (q + (d - 1) * m2 / n))


def learned_direction_overlaps(n: int, d: int, links, rng: np.random.Generator,
                               noise: float = 0.0, dtype=np.float64) -> np.ndarray:
    r"""Overlaps :math:`|\langle v_k/\|v_k\|,\beta^*\rangle|` of the one-step directions
    :math:`v_k = X^\top y_k/n` for several single-index targets sharing one batch.

    Draws :math:`\beta^*` (uniform on the sphere), then :math:`X` (``n x d``), then the
    label noise of each link in turn; :math:`y_k = g_k(X\beta^*) + \varepsilon_k`.
    No network is involved: :math:`v` is the data's own first-step direction.

    Returns
    -------
    ndarray, shape (len(links),)
    """
    n, d = check_int(n, "n"), check_int(d, "d")
    if isinstance(links, Link):
        links = [links]
    if isinstance(links, (str, bytes)) or not isinstance(links, Sequence) or not links \
            or not all(isinstance(g, Link) for g in links):
        raise TypeError("links must be a Link or a non-empty sequence of Link")
    check_rng(rng)
    noise = check_real(noise, "noise", low=0.0)
    dt = _check_dtype(dtype)
    beta = rng.standard_normal(d)
    beta /= np.linalg.norm(beta)
    X = gaussian_inputs(n, d, rng, dt)
    z = X @ beta.astype(dt)
    out = np.empty(len(links))
    for k, g in enumerate(links):
        y = np.asarray(g(z), dtype=dt)
        if noise > 0:
            y = y + (noise * rng.standard_normal(n)).astype(dt)
        v = X.T @ y
        nv = np.linalg.norm(v)
        out[k] = abs(float(v @ beta)) / nv if nv > 0 else 0.0
    return out
