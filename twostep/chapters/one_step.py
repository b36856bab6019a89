r"""Chapter *One step*: the first gradient step as a spike plus a small remainder.

At initialisation the negative gradient of the correlation loss (the update
per unit step size) is :math:`G = -\nabla L(W_0)`, :math:`N\times d`. Splitting
:math:`\sigma'(W_0X^\top) = \mu_1\mathbf 1\mathbf 1^\top + \big(\sigma'(W_0X^\top)-\mu_1\big)`
gives

.. math::
    G = \mu_1\, a v^\top + \frac1n\operatorname{diag}(a)
        \big[(\sigma'(W_0X^\top)-\mu_1)\odot\mathbf 1y^\top\big]X,
    \qquad v = \frac1n X^\top y,

so :math:`W_1 = W_0 + \eta_1 G = W_0 + \eta_1\mu_1 av^\top + \Delta_1`. The chapter
*One step* measures, with :func:`first_step_diagnostics`, the relative size of the
remainder :math:`\|G-\mu_1av^\top\|_{op}/\|G\|_{op}` and the top of the spectrum of
:math:`W_1` for several step sizes, and with :func:`learned_direction_overlaps` the
overlap of the data's direction :math:`v` for several targets. The formulas they are
compared with live in :mod:`twostep.analysis.theory` and :mod:`twostep.analysis.bbp`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.sparse.linalg import LinearOperator

from .._validation import check_dtype, check_int, check_pairs, check_real, check_rng
from ..analysis.alignment import overlap
from ..analysis.decomposition import first_step_spike
from ..analysis.spectra import SVDS_TOL, top_singular
from ..model.activations import Activation, check_activation
from ..model.network import gaussian_inputs, gradient, initialise
from ..model.steps import step_size
from ..model.targets import Link, make_teacher


def _residual_top(G, spike, seed):
    # Top singular value and right vector of G - spike, applied matrix-free.
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
    s, Vt = top_singular(R, 1, vectors="right", tol=SVDS_TOL, seed=seed)
    return float(s[0]), Vt[0].astype(float)


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
    check_activation(activation)
    check_rng(rng)
    steps = check_pairs(steps, "steps", "a (c, alpha) pair")
    top = check_int(top, "top", 1)
    if top >= min(N, d) - 1 or min(N, d) < 3:
        raise ValueError(f"top must be in [1, min(N, d) - 2] = [1, {min(N, d) - 2}], got {top}")
    dt = check_dtype(dtype)
    etas = np.array([step_size(c, alpha, N) for c, alpha in steps], dtype=float)
    teacher = make_teacher(target, d, rng, noise)
    W0, a = initialise(N, d, rng, dt)
    X, y = teacher.sample(n, rng, dt)
    beta = teacher.directions[0]

    G = gradient(W0, a, X, y, activation)
    G *= -1
    spike = first_step_spike(a, X, y, activation)
    sG = top_singular(G, 2, vectors=False, tol=SVDS_TOL)
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
        s, Vt = top_singular(W1, top, vectors="right", tol=SVDS_TOL)
        out["top"][i] = s
        out["right_overlap"][i] = overlap(Vt[0].astype(float), beta)
        if spike.value > 0:
            out["right_v_overlap"][i] = overlap(Vt[0].astype(float), spike.right.astype(float))
    return out


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
    dt = check_dtype(dtype)
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
