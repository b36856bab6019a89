r"""The BBP transition of :math:`W_0 + \theta uw^\top` (:math:`\gamma = N/d`): threshold
:math:`\theta_c = \gamma^{1/4}`, the outlier :math:`s_\star` and the squared cosines above it."""

from __future__ import annotations

import numpy as np

from .._validation import check_real
from .theory import spike_strength

def _check_theta(theta):
    if isinstance(theta, bool) or not isinstance(theta, (int, float, np.number, np.ndarray, list, tuple)):
        raise TypeError(f"theta must be a real number or an array of reals, got {type(theta).__name__}")
    t = np.asarray(theta, dtype=float)
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError("theta must be finite and in [0, inf)")
    return t

def _out(t, value):
    return float(value) if t.ndim == 0 else value

def bbp_threshold(ratio: float) -> float:
    r"""Critical spike strength :math:`\theta_c = \gamma^{1/4}`, :math:`\gamma` = ``ratio`` :math:`= N/d`.

    Parameters
    ----------
    ratio : float > 0
    Returns
    -------
    float
    Examples
    --------
    >>> import twostep as ts
    >>> ts.bbp_threshold(1.0), ts.bbp_threshold(16.0)
    (1.0, 2.0)
    """
    return float(check_real(ratio, "ratio", low=0.0, low_open=True) ** 0.25)

def spiked_outlier(theta, ratio: float):
    r"""Limit :math:`s_\star(\theta)` (module docstring) of the top singular value of :math:`W_0 + \theta
    uw^\top`.

    Parameters
    ----------
    theta : float or array_like >= 0
    ratio : float
        :math:`\gamma = N/d > 0`.
    Returns
    -------
    float or ndarray of ``theta``'s shape
    Examples
    --------
    >>> import twostep as ts
    >>> ts.spiked_outlier(2.0, 1.0), ts.spiked_outlier(0.5, 1.0)   # (1 + 4) / 2, the edge
    (2.5, 2.0)
    """
    t = _check_theta(theta)
    g = check_real(ratio, "ratio", low=0.0, low_open=True)
    edge = 1.0 + np.sqrt(g)
    above = t > g ** 0.25
    safe = np.where(above, t, 1.0)
    value = np.where(above, np.sqrt((1 + safe ** 2) * (g + safe ** 2)) / safe, edge)
    return _out(t, value)

def spiked_overlaps(theta, ratio: float):
    r"""Limits (module docstring) of the cosines :math:`|\langle\tilde u,u\rangle|` and
    :math:`|\langle\tilde w,w\rangle|`.

    Parameters
    ----------
    theta : float or array_like >= 0
    ratio : float
        :math:`\gamma = N/d > 0`.
    Returns
    -------
    left, right : float or ndarray of ``theta``'s shape
    Examples
    --------
    >>> import twostep as ts
    >>> [round(x, 4) for x in ts.spiked_overlaps(2.0, 1.0)]
    [0.866, 0.866]
    """
    t = _check_theta(theta)
    g = check_real(ratio, "ratio", low=0.0, low_open=True)
    above = t > g ** 0.25
    t2 = np.where(above, t, 1.0) ** 2
    left2 = 1.0 - g * (1 + t2) / (t2 * (g + t2))
    right2 = 1.0 - (g + t2) / (t2 * (1 + t2))
    left = np.where(above, np.sqrt(np.clip(left2, 0.0, None)), 0.0)
    right = np.where(above, np.sqrt(np.clip(right2, 0.0, None)), 0.0)
    return _out(t, left), _out(t, right)

def critical_step(mu1: float, c1: float, second_moment: float, psi: float, ratio: float) -> float:
    r"""First step where :func:`twostep.spike_strength` reaches :math:`\gamma^{1/4}`:
    :math:`\eta_c = \gamma^{1/4}/(|\mu_1|\sqrt{c_1^2 + \mathbb E[y^2]/\psi})`."""
    return bbp_threshold(ratio) / spike_strength(1.0, mu1, c1, second_moment, psi)
