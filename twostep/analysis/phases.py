r"""The phase diagram in :math:`(\alpha_1,\alpha_2)`: the theory's regions and an empirical count.

The theory's count is :math:`\Lambda(\alpha_1,\alpha_2) = \min(L-1, \lfloor\alpha_2/(1/2-\alpha_1)\rfloor)`
(:func:`twostep.n_spikes`): the :math:`k`-th term of the second update has size of order
:math:`N^{e_k}`, :math:`e_k = \alpha_2 - k(1/2-\alpha_1)`, and survives as :math:`N` grows when
:math:`e_k\ge0`.

The empirical count is built from the exact terms. Because
:math:`T_k = \eta_2\eta_1^k\hat T_k` with a step-free :math:`\hat T_k` (:mod:`twostep.rescaling`),
the step sizes change neither the singular vectors of :math:`T_k` nor its spike-to-remainder
ratio; they only multiply its size by :math:`c_2c_1^kN^{\alpha_2+k\alpha_1}`. So, with
:math:`\hat e_k` the measured exponent of :math:`s_1(\hat T_k)` in :math:`N`, the exact term
grows at :math:`(\alpha_1,\alpha_2)` exactly when :math:`\alpha_2 + k\alpha_1 + \hat e_k \ge 0`,
and the empirical count is

.. math::
    \hat\Lambda(\alpha_1,\alpha_2) = \#\{1\le k\le L-1:\ T_k\text{ is a spike and }
        \alpha_2 + k\alpha_1 + \hat e_k \ge 0\},

where ":math:`T_k` is a spike" (the same at every grid point) means that its top singular
vectors are aligned with the predicted ones and its spike-to-remainder ratio grows with
:math:`N` (:func:`is_spike`). The theory's boundary :math:`\alpha_2 = k(1/2-\alpha_1)` is the
case :math:`\hat e_k = -k/2`; :func:`count_margins` gives how far each :math:`\hat e_k` may
stray from it before the count changes at a point of a grid.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_array, check_int, check_real
from .theory import n_spikes

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
    out = np.vectorize(lambda x, y: n_spikes(float(x), float(y), L), otypes=[int])(a1, a2)
    return np.asarray(out, dtype=int)


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
