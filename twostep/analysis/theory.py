r"""The theory's predictions, as functions of the step-size exponents and the model: the
number of outliers the second step adds, :math:`\Lambda(\alpha_1,\alpha_2)` (:func:`n_spikes`;
:math:`\Lambda = 0` for :math:`\alpha_1+\alpha_2<1/2`, where the two steps act like one step
of size :math:`\eta_1+\eta_2`), the size of each term of the second update
(:func:`spike_exponent`), the overlap of the first step's :math:`v = X^\top y/n` with
:math:`\beta^*` (:func:`one_step_overlap`, :func:`finite_size_overlap`), the first spike's
strength (:func:`spike_strength`) and the spikes of the features (:func:`feature_spike_count`).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_alpha, check_array, check_int, check_real
from ._core import FLOOR_TOL, spike_count

def spike_exponent(k: int, alpha1: float, alpha2: float) -> float:
    r"""Exponent :math:`\alpha_2 - k(1/2-\alpha_1)` of the size of the :math:`k`-th term.

    Parameters
    ----------
    k : int
        The order, ``>= 0``.
    alpha1, alpha2 : float
        Step-size exponents in ``[0, 1/2)``.

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
    alpha1, alpha2 : float
        Step-size exponents in ``[0, 1/2)``.
    L : int, optional
        The degree of a polynomial activation; ``None`` means no cap.

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
    r"""The orders :math:`k = 1..\Lambda` whose term exists, i.e. :math:`\mu_{k+1}\ne 0`.

    Parameters
    ----------
    alpha1, alpha2 : float
        Step-size exponents in ``[0, 1/2)``.
    mu : array_like
        :math:`\mu_0, \mu_1, \dots` (for a polynomial, up to :math:`\mu_L`; for tanh the
        even ones vanish, removing :math:`k = 1, 3, \dots`).

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
    r"""Limit of :math:`|\langle v/\|v\|, \beta^*\rangle|`: :math:`|c_1|/\sqrt{c_1^2 + \mathbb{E}[y^2]/\psi}`.

    Parameters
    ----------
    c1 : float
        :math:`c_1(g) = \mathbb{E}[g(z)z]`.
    second_moment : float
        :math:`\mathbb{E}[y^2] > 0`.
    psi : float
        :math:`n/d > 0`.

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
    alpha1 : float or array_like
        In ``[0, 1/2)``.
    k : int
        ``>= 1``.

    Returns
    -------
    ndarray
        Of ``alpha1``'s shape.

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
    r"""Predicted singular value of the spike :math:`\eta\mu_1 av^\top`:
    :math:`\theta = \eta\,|\mu_1|\sqrt{c_1^2 + \mathbb{E}[y^2]/\psi}`.

    Uses :math:`\|a\|\to1` and :math:`\|v\|^2\to c_1^2+\mathbb{E}[y^2]/\psi`, :math:`\psi=n/d`.

    Parameters
    ----------
    eta : float
        The step size, ``>= 0``.
    mu1 : float
        :math:`\mu_1` of the activation.
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
    r"""Limit of :math:`\|r_i\|^2`, the neuron-specific part of the first update:
    :math:`R^2 = \mathbb E[y^2]\,\mathrm{Var}\,\sigma'(z)/\psi` with
    :math:`\mathrm{Var}\,\sigma'(z) = \sum_{m\ge1}\mu_{m+1}^2/m!` (the book's derivation; e.g.
    :math:`5/3` for :math:`\sigma_4`, :math:`\mathrm{He}_1` and :math:`\psi = 1`).

    Parameters
    ----------
    mu : array_like, shape (L + 1,)
        Hermite coefficients :math:`\mu_0..\mu_L` of :math:`\sigma`.
    second_moment : float
        :math:`\mathbb E[y^2] \ge 0`.
    psi : float
        :math:`n/d > 0`.
    """
    mu = check_array(mu, "mu", ndim=1)
    m2 = check_real(second_moment, "second_moment", low=0.0)
    psi = check_real(psi, "psi", low=0.0, low_open=True)
    var = sum(mu[m + 1] ** 2 / math.factorial(m) for m in range(1, mu.size - 1))
    return float(m2 * var / psi)


def feature_spike_count(alpha: float, L: int | None = None) -> int:
    r"""Spikes of the feature matrix :math:`\sigma(XW_1^\top)` after one step :math:`\eta = N^{\alpha}`.

    The book's reading of Moniri, Lee, Hassani and Dobriban (2024): the :math:`k`-th term of
    :math:`\sigma(XW_1^\top) = \sum_k \sigma^{(k)}(XW_0^\top)\odot(s\theta^\top)^{\circ k}/k!`
    (:math:`s = Xv`, :math:`\theta = \eta\mu_1 a`) is close to the rank-one
    :math:`\mu_k\,s^{\circ k}(\theta^{\circ k})^\top/k!` of size
    :math:`N^{1 + k\alpha - k/2}`, against a bulk of size :math:`N^{1/2}`; it stands out when
    :math:`k\alpha > (k-1)/2`, i.e. :math:`\alpha > (k-1)/(2k)`. So
    :math:`\ell = \#\{k\ge1 : \alpha > (k-1)/(2k)\} = \lceil 1/(1-2\alpha)\rceil - 1`
    spikes, :math:`\ell` on :math:`((\ell-1)/(2\ell), \ell/(2\ell+2)]`, at most the degree ``L``
    of a polynomial :math:`\sigma` (``None``: no cap). ``alpha`` lies in ``[0, 1/2)``.
    """
    a = check_alpha(alpha, "alpha")
    count = 0
    while (count + 1) * (1 - 2 * a) < 1 * (1 - FLOOR_TOL):
        count += 1
    if L is not None:
        count = min(check_int(L, "L", 1), count)
    return int(count)
