r"""Spectra: top singular triplets, full singular values, and the Marchenko--Pastur bulk.

:math:`W_0` has i.i.d. :math:`N(0, 1/d)` entries and shape :math:`N\times d`;
with :math:`\gamma = N/d` the non-zero eigenvalues of :math:`W_0W_0^\top`
follow the Marchenko--Pastur law on :math:`[\lambda_-,\lambda_+]`,
:math:`\lambda_\pm = (1\pm\sqrt\gamma)^2`, with density

.. math:: p(\lambda) = \frac{\sqrt{(\lambda_+-\lambda)(\lambda-\lambda_-)}}{2\pi\min(\gamma,1)\,\lambda},

so the non-zero singular values :math:`s=\sqrt\lambda` have density
:math:`q(s) = 2s\,p(s^2)` on :math:`[|1-\sqrt\gamma|,\,1+\sqrt\gamma]`.
The bulk edge is :math:`1+\sqrt\gamma`; a singular value beyond it is an outlier.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigvalsh, svd
from scipy.sparse.linalg import LinearOperator, svds

from .._validation import check_array, check_int, check_real


#: Relative accuracy asked of ARPACK where a chapter compares singular values and
#: cosines at the 1e-3 level; machine precision (``tol=0``) costs several times more
#: iterations.
SVDS_TOL = 1e-9

VECTORS = (True, False, "right")


def top_singular(M, k: int = 1, *, vectors=True, tol: float = 0.0, seed: int = 0):
    r"""Top-``k`` singular triplets of ``M`` (shape ``(N, d)``), largest first.

    Uses ``scipy.sparse.linalg.svds`` (ARPACK) with a starting vector drawn
    from ``seed``, so repeated calls give identical results; ``M`` may also be a
    ``scipy.sparse.linalg.LinearOperator`` (e.g. a matrix minus a spike, never formed).

    Parameters
    ----------
    M : ndarray or LinearOperator, shape (N, d)
    k : int
        In ``[1, min(N, d)]``.
    vectors : {True, False, "right"}
        Which singular vectors to return.
    tol : float
        ARPACK's relative accuracy; 0 is machine precision, :data:`SVDS_TOL` is enough for
        comparisons at the 1e-3 level.
    seed : int

    Returns
    -------
    s : ndarray, shape (k,)
    U : ndarray, shape (N, k)
        Left singular vectors as columns (only for ``vectors=True``).
    Vt : ndarray, shape (k, d)
        Right singular vectors as rows (not for ``vectors=False``).
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
    return _top_singular(M, k, vectors, tol, seed)


def _top_singular(M, k, vectors=True, tol=0.0, seed=0):
    # top_singular of a checked float matrix or LinearOperator (the package's own), 1 <= k <= m.
    m = min(M.shape)
    if k >= m - 1:
        # ARPACK needs k < min(shape); small problems take the dense route.
        # A LinearOperator is formed through its products (np.asarray would give an object
        # array): M @ I, the dense matrix, cheap at the sizes that take this route.
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


def singular_values(M) -> np.ndarray:
    r"""All ``min(N, d)`` singular values of ``M``, descending, from the eigenvalues of
    the smaller Gram matrix (:math:`MM^\top` or :math:`M^\top M`)."""
    M = check_array(M, "M", ndim=2)
    G = M @ M.T if M.shape[0] <= M.shape[1] else M.T @ M
    lam = eigvalsh(G, overwrite_a=True, check_finite=False)
    return np.sqrt(np.clip(lam, 0.0, None))[::-1]


def bulk_edges(ratio: float):
    r"""Support :math:`(|1-\sqrt\gamma|,\ 1+\sqrt\gamma)` of the singular values of :math:`W_0`, :math:`\gamma = N/d`."""
    return _bulk_edges(_check_ratio(ratio))


def _check_ratio(ratio):
    return check_real(ratio, "ratio", low=0.0, low_open=True)


def _bulk_edges(ratio):
    r = np.sqrt(ratio)
    return abs(1.0 - r), 1.0 + r


def bulk_edge(ratio: float) -> float:
    r"""Upper bulk edge :math:`1+\sqrt{N/d}` of the singular values of :math:`W_0`."""
    return bulk_edges(ratio)[1]


def marchenko_pastur_density(s, ratio: float) -> np.ndarray:
    r"""Density :math:`q(s)` of the non-zero singular values of :math:`W_0`, :math:`\gamma = N/d`
    (zero outside the support); same shape as ``s``."""
    g = _check_ratio(ratio)
    s = np.asarray(s, dtype=float)
    lo, hi = _bulk_edges(g)
    lam = s * s
    inside = (s > lo) & (s < hi)
    out = np.zeros_like(s)
    li = lam[inside]
    out[inside] = 2 * s[inside] * np.sqrt((hi ** 2 - li) * (li - lo ** 2)) / (
        2 * np.pi * min(g, 1.0) * li)
    return out


def ks_distance(singular, ratio: float) -> float:
    r"""Kolmogorov--Smirnov distance between the empirical law of ``singular`` and
    the Marchenko--Pastur singular-value law with :math:`\gamma` = ``ratio``, whose
    distribution function is the trapezoidal integral of :func:`marchenko_pastur_density`."""
    s = np.sort(check_array(singular, "singular", ndim=1))
    g = _check_ratio(ratio)
    lo, hi = _bulk_edges(g)
    t = np.linspace(lo, hi, 20001)
    q = marchenko_pastur_density(t, g)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (q[1:] + q[:-1]) * np.diff(t))])
    cdf /= cdf[-1]  # removes the O(grid^-1.5) error of the square-root edges
    F = np.interp(s, t, cdf)
    i = np.arange(1, s.size + 1)
    return float(max(np.max(i / s.size - F), np.max(F - (i - 1) / s.size)))


def count_outliers(singular, edge: float, margin: float = 0.05) -> int:
    r"""Number of singular values above ``edge * (1 + margin)``.

    The margin absorbs finite-size fluctuations of the largest bulk value
    (of order :math:`N^{-2/3}`) and the slight widening of the bulk by the update.
    """
    s = check_array(singular, "singular", ndim=1)
    edge = check_real(edge, "edge", low=0.0, low_open=True)
    margin = check_real(margin, "margin", low=0.0)
    return int(np.sum(s > edge * (1 + margin)))
