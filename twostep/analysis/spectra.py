r"""Spectra and the Marchenko--Pastur bulk of :math:`W_0` (i.i.d. :math:`N(0, 1/d)`, :math:`\gamma = N/d`).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigvalsh
from scipy.sparse.linalg import LinearOperator

from .._validation import check_array, check_int, check_real
from ._core import top_singular_core

#: ARPACK's tolerance for comparisons at the 1e-3 level (``tol=0`` costs several times more).
SVDS_TOL = 1e-9

VECTORS = (True, False, "right")

def top_singular(M, k: int = 1, *, vectors=True, tol: float = 0.0, seed: int = 0):
    """Top-``k`` singular triplets of ``M``, largest first (ARPACK, start vector from ``seed``).

    Parameters
    ----------
    M : ndarray or LinearOperator, shape (N, d)
    k : int in [1, min(N, d)]
    vectors : {True, False, "right"}
    tol : float
        ARPACK's relative accuracy (0: machine precision; :data:`SVDS_TOL` for the 1e-3 level).
    seed : int
    Returns
    -------
    s : ndarray, shape (k,)
    U : ndarray, shape (N, k), for ``vectors=True``
    Vt : ndarray, shape (k, d), not for ``vectors=False``
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> s, U, Vt = ts.top_singular(np.diag([3.0, 2.0, 1.0]), 1)
    >>> s, abs(Vt).round(12)
    (array([3.]), array([[1., 0., 0.]]))
    """
    if not isinstance(M, LinearOperator):
        M = check_array(M, "M", ndim=2)
    k = check_int(k, "k", 1)
    if vectors not in VECTORS or not isinstance(vectors, (bool, str)):
        raise ValueError(f"vectors must be one of {VECTORS}, got {vectors!r}")
    tol = check_real(tol, "tol", low=0.0)
    seed = check_int(seed, "seed", 0)
    m = min(M.shape)
    if k > m:
        raise ValueError(f"k must be in [1, min(M.shape)] = [1, {m}], got {k}")
    return top_singular_core(M, k, vectors, tol, seed)

def singular_values(M) -> np.ndarray:
    """All singular values of ``M``, descending, from the smaller Gram matrix.

    Parameters
    ----------
    M : ndarray, shape (N, d)
    Returns
    -------
    ndarray, shape (min(N, d),)
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> ts.singular_values(np.diag([1.0, 3.0, 2.0])).round(12)
    array([3., 2., 1.])
    """
    M = check_array(M, "M", ndim=2)
    G = M @ M.T if M.shape[0] <= M.shape[1] else M.T @ M
    lam = eigvalsh(G, overwrite_a=True, check_finite=False)
    return np.sqrt(np.clip(lam, 0.0, None))[::-1]

def bulk_edges(ratio: float):
    r"""Support :math:`(|1-\sqrt\gamma|,\ 1+\sqrt\gamma)` of :math:`W_0`'s singular values."""
    r = np.sqrt(_check_ratio(ratio))
    return abs(1.0 - r), 1.0 + r

def _check_ratio(ratio):
    return check_real(ratio, "ratio", low=0.0, low_open=True)

def bulk_edge(ratio: float) -> float:
    r"""Upper bulk edge :math:`1+\sqrt{\gamma}` of the singular values of :math:`W_0`, :math:`\gamma = N/d`.

    Parameters
    ----------
    ratio : float > 0
    Returns
    -------
    float
    Examples
    --------
    >>> import twostep as ts
    >>> float(ts.bulk_edge(1.0)), float(ts.bulk_edge(0.25))
    (2.0, 1.5)
    """
    return bulk_edges(ratio)[1]

def marchenko_pastur_density(s, ratio: float) -> np.ndarray:
    r"""Density :math:`q(s)` of :math:`W_0`'s non-zero singular values (module docstring), :math:`\gamma` =
    ``ratio``.

    Parameters
    ----------
    s : array_like
    ratio : float > 0
    Returns
    -------
    ndarray of ``s``'s shape
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> ts.marchenko_pastur_density(np.array([0.5, 1.0, 2.5]), 1.0).round(4)
    array([0.6164, 0.5513, 0.    ])
    """
    g = _check_ratio(ratio)
    s = np.asarray(s, dtype=float)
    lo, hi = bulk_edges(g)
    lam = s * s
    inside = (s > lo) & (s < hi)
    out = np.zeros_like(s)
    li = lam[inside]
    out[inside] = 2 * s[inside] * np.sqrt((hi ** 2 - li) * (li - lo ** 2)) / (
        2 * np.pi * min(g, 1.0) * li)
    return out

def ks_distance(singular, ratio: float) -> float:
    r"""Kolmogorov--Smirnov distance of ``singular``'s empirical law from the Marchenko--Pastur law.

    Parameters
    ----------
    singular : ndarray, shape (m,)
    ratio : float
        :math:`\gamma = N/d > 0`.
    Returns
    -------
    float
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> W0, _ = ts.initialise(400, 400, np.random.default_rng(0))
    >>> ts.ks_distance(ts.singular_values(W0), 1.0) < 0.05
    True
    """
    s = np.sort(check_array(singular, "singular", ndim=1))
    g = _check_ratio(ratio)
    lo, hi = bulk_edges(g)
    t = np.linspace(lo, hi, 20001)
    q = marchenko_pastur_density(t, g)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (q[1:] + q[:-1]) * np.diff(t))])
    cdf /= cdf[-1]  # removes the O(grid^-1.5) error of the square-root edges
    F = np.interp(s, t, cdf)
    i = np.arange(1, s.size + 1)
    return float(max(np.max(i / s.size - F), np.max(F - (i - 1) / s.size)))

def count_outliers(singular, edge: float, margin: float = 0.05) -> int:
    """Number of singular values above ``edge * (1 + margin)`` (the margin absorbs the edge's fluctuations).

    Parameters
    ----------
    singular : ndarray, shape (m,)
    edge, margin : float
        The bulk edge ``> 0`` and a margin ``>= 0``.
    Returns
    -------
    int
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> ts.count_outliers(np.array([2.5, 2.09, 1.9]), 2.0)   # above 2.1
    1
    """
    s = check_array(singular, "singular", ndim=1)
    edge = check_real(edge, "edge", low=0.0, low_open=True)
    margin = check_real(margin, "margin", low=0.0)
    return int(np.sum(s > edge * (1 + margin)))
