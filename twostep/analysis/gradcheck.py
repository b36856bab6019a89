r"""The analytic gradient of the correlation loss against central differences
:math:`(L(W + hE_{ik}) - L(W - hE_{ik}))/2h` (error :math:`O(h^2) + O(\varepsilon/h)`)."""

from __future__ import annotations

import numpy as np

from .._validation import check_real
from ..model.activations import Activation, check_activation
from ..model._core import correlation_loss_core, gradient_core
from ..model.network import check_network

#: Largest N * d for which the entrywise check is allowed (2 N d loss evaluations).
MAX_ENTRIES = 20_000

def gradient_check(W, a, X, y, activation: Activation, h: float = 1e-5) -> float:
    r""":math:`\max_{ik}|\nabla_{ik}-\widehat\nabla_{ik}| / \max_{ik}|\nabla_{ik}|` for the central
    differences :math:`\widehat\nabla`; :math:`2Nd` loss evaluations (``N * d <= MAX_ENTRIES``).

    Parameters
    ----------
    W, a, X, y, activation
        As in :func:`twostep.gradient`.
    h : float
        The difference step, ``> 0``.
    Returns
    -------
    float
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> rng = np.random.default_rng(0)
    >>> W0, a = ts.initialise(4, 3, rng)
    >>> X, y = ts.gaussian_inputs(5, 3, rng), rng.standard_normal(5)
    >>> ts.gradient_check(W0, a, X, y, ts.Tanh()) < 1e-7
    True
    """
    W, a, X, y = check_network(np.asarray(W, dtype=float), a, X, y)
    check_activation(activation)
    h = check_real(h, "h", low=0.0, low_open=True)
    if W.size > MAX_ENTRIES:
        raise ValueError(f"W must have at most {MAX_ENTRIES} entries for a finite-difference "
                         f"check, got shape {W.shape}")
    G = gradient_core(W, a, X, y, activation)
    fd = np.empty_like(W)
    Wp = W.copy()
    for idx in np.ndindex(W.shape):
        Wp[idx] = W[idx] + h
        up = correlation_loss_core(Wp, a, X, y, activation)
        Wp[idx] = W[idx] - h
        down = correlation_loss_core(Wp, a, X, y, activation)
        Wp[idx] = W[idx]
        fd[idx] = (up - down) / (2 * h)
    scale = np.max(np.abs(G))
    if scale == 0:
        raise ValueError("the gradient is identically zero; a relative error is undefined")
    return float(np.max(np.abs(G - fd)) / scale)
