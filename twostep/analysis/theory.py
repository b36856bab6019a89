"""The theory's predictions from the step-size exponents and the model."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_alpha, check_array, check_int, check_real
from ._core import FLOOR_TOL, spike_count

def spike_exponent(k: int, alpha1: float, alpha2: float) -> float:
    r"""Exponent :math:`\alpha_2 - k(1/2-\alpha_1)` of the size of the :math:`k`-th term.

    Parameters
    ----------
    k : int >= 0
    alpha1, alpha2 : float in [0, 1/2)
    Returns
    -------
    float
    Examples
    --------
    >>> import twostep as ts
    >>> round(ts.spike_exponent(2, 0.4, 0.25), 12)
    0.05
    """
    k = check_int(k, "k", 0)
    return check_alpha(alpha2, "alpha2") - k * (0.5 - check_alpha(alpha1, "alpha1"))

def n_spikes(alpha1: float, alpha2: float, L: int | None = None) -> int:
    r""":math:`\Lambda(\alpha_1,\alpha_2) = \min(L-1, \lfloor\alpha_2/(1/2-\alpha_1)\rfloor)`.

    Parameters
    ----------
    alpha1, alpha2 : float in [0, 1/2)
    L : int, optional
        The degree of a polynomial activation; ``None``: no cap.
    Returns
    -------
    int
    Examples
    --------
    >>> import twostep as ts
    >>> ts.n_spikes(0.4, 0.25, L=4), ts.n_spikes(0.2, 0.25)
    (2, 0)
    """
    a1, a2 = check_alpha(alpha1, "alpha1"), check_alpha(alpha2, "alpha2")
    return int(spike_count(a1, a2, None if L is None else check_int(L, "L", 1)))

def spike_terms(alpha1: float, alpha2: float, mu) -> list[int]:
    r"""The orders :math:`k = 1..\Lambda` with :math:`\mu_{k+1}\ne 0` (``L = len(mu) - 1``).

    Parameters
    ----------
    alpha1, alpha2 : float in [0, 1/2)
    mu : array_like, shape (L + 1,)
    Returns
    -------
    list of int
    Examples
    --------
    >>> import twostep as ts
    >>> ts.spike_terms(0.4, 0.25, ts.get_activation("poly4").mu)
    [1, 2]
    >>> ts.spike_terms(0.4, 0.25, ts.Tanh().hermite_coefficients(8))
    [2]
    """
    mu = check_array(mu, "mu", ndim=1)
    lam = n_spikes(alpha1, alpha2, L=mu.size - 1)
    return [k for k in range(1, lam + 1) if abs(mu[k + 1]) > 1e-12]

def one_step_overlap(c1: float, second_moment: float, psi: float) -> float:
    r"""Limit :math:`|c_1|/\sqrt{c_1^2 + \mathbb{E}[y^2]/\psi}` of :math:`|\langle v/\|v\|, \beta^*\rangle|`,
    :math:`c_1 = \mathbb{E}[g(z)z]`, :math:`\psi = n/d`.

    Parameters
    ----------
    c1, second_moment, psi : float
    Returns
    -------
    float
    Examples
    --------
    >>> import twostep as ts
    >>> round(ts.one_step_overlap(1.0, 1.0, 1.0), 4)   # He_1 at n = d
    0.7071
    """
    c1 = check_real(c1, "c1")
    m2 = check_real(second_moment, "second_moment", low=0.0, low_open=True)
    psi = check_real(psi, "psi", low=0.0, low_open=True)
    return abs(c1) / math.sqrt(c1 * c1 + m2 / psi)

def phase_boundaries(alpha1, k: int) -> np.ndarray:
    r"""The line :math:`\alpha_2 = k(1/2-\alpha_1)` where :math:`\Lambda` steps from :math:`k-1` to :math:`k`.

    Parameters
    ----------
    alpha1 : float or array_like in [0, 1/2)
    k : int >= 1
    Returns
    -------
    ndarray
    Examples
    --------
    >>> import twostep as ts
    >>> ts.phase_boundaries([0.1, 0.3], 1).round(12)
    array([0.4, 0.2])
    """
    k = check_int(k, "k", 1)
    a1 = np.asarray(alpha1, dtype=float)
    if np.any((a1 < 0) | (a1 >= 0.5)):
        raise ValueError("alpha1 must lie in [0, 1/2)")
    return k * (0.5 - a1)

def spike_strength(eta: float, mu1: float, c1: float, second_moment: float, psi: float) -> float:
    r"""Singular value :math:`\theta = \eta\,|\mu_1|\sqrt{c_1^2 + \mathbb{E}[y^2]/\psi}` of the spike
    :math:`\eta\mu_1 av^\top`.

    Parameters
    ----------
    eta, mu1 : float
    c1, second_moment, psi : float
        As in :func:`one_step_overlap`.
    Returns
    -------
    float
    Examples
    --------
    >>> import twostep as ts
    >>> round(ts.spike_strength(1.0, 1.0, 1.0, 1.0, 1.0), 4)
    1.4142
    """
    eta = check_real(eta, "eta", low=0.0)
    mu1 = check_real(mu1, "mu1")
    c1 = check_real(c1, "c1")
    m2 = check_real(second_moment, "second_moment", low=0.0)
    psi = check_real(psi, "psi", low=0.0, low_open=True)
    return eta * abs(mu1) * math.sqrt(c1 * c1 + m2 / psi)

def finite_size_overlap(c1: float, second_moment: float, cross_moment: float, n: int,
                        d: int) -> float:
    r"""Root-mean-square overlap of :math:`v = X^\top y/n` with :math:`\beta^*` at finite ``n``, ``d``:
    :math:`\sqrt{q/(q + (d-1)\mathbb{E}[y^2]/n)}`, :math:`q = c_1^2 + (\mathbb{E}[y^2z^2]-c_1^2)/n`.

    Parameters
    ----------
    c1, second_moment : float
        As in :func:`one_step_overlap`.
    cross_moment : float
        :math:`\mathbb{E}[y^2z^2] \ge c_1^2`.
    n, d : int
    Returns
    -------
    float
    Examples
    --------
    >>> import twostep as ts
    >>> round(ts.finite_size_overlap(1.0, 1.0, 3.0, 10**6, 10**6), 4)   # the limit
    0.7071
    >>> round(ts.finite_size_overlap(0.0, 1.0, 3.0, 1000, 1000), 3)        # c1 = 0: chance
    0.055
    """
    c1 = check_real(c1, "c1")
    m2 = check_real(second_moment, "second_moment", low=0.0, low_open=True)
    m22 = check_real(cross_moment, "cross_moment", low=0.0)
    n, d = check_int(n, "n"), check_int(d, "d")
    if m22 < c1 * c1 * (1 - 1e-9):
        raise ValueError(f"cross_moment must be >= c1**2 = {c1 * c1:g} (Cauchy-Schwarz), got {m22}")
    q = c1 * c1 + max(m22 - c1 * c1, 0.0) / n
    return math.sqrt(q / (q + (d - 1) * m2 / n))

def fluctuation_variance_limit(mu, second_moment: float, psi: float) -> float:
    r""":math:`R^2 = \mathbb E[y^2]\,\mathrm{Var}\,\sigma'(z)/\psi`, :math:`\mathrm{Var}\,\sigma' =
    \sum_{m\ge1}\mu_{m+1}^2/m!` (``mu`` :math:`= \mu_0..\mu_L`): the limit of the neuron-specific
    :math:`\|r_i\|^2`."""
    mu = check_array(mu, "mu", ndim=1)
    m2 = check_real(second_moment, "second_moment", low=0.0)
    psi = check_real(psi, "psi", low=0.0, low_open=True)
    var = sum(mu[m + 1] ** 2 / math.factorial(m) for m in range(1, mu.size - 1))
    return float(m2 * var / psi)

def feature_spike_count(alpha: float, L: int | None = None) -> int:
    r"""Spikes of :math:`\sigma(XW_1^\top)` after one step :math:`\eta = N^{\alpha}` (Moniri et al. 2024):
    :math:`\#\{k\ge1 : \alpha > (k-1)/(2k)\} = \lceil 1/(1-2\alpha)\rceil - 1`, at most ``L``."""
    a = check_alpha(alpha, "alpha")
    count = 0
    while (count + 1) * (1 - 2 * a) < 1 * (1 - FLOOR_TOL):
        count += 1
    if L is not None:
        count = min(check_int(L, "L", 1), count)
    return int(count)
