"""Overlaps (cosines in :math:`[0, 1]`) of learned directions with the target directions."""

from __future__ import annotations

import numpy as np

from .._validation import check_array, check_int
from ._core import memorisations_core, overlap_core

def overlap(u, beta) -> float:
    r""":math:`|\langle u,\beta\rangle|/(\|u\|\|\beta\|)` for vectors of shape ``(d,)``."""
    u = check_array(u, "u", ndim=1)
    return overlap_core(u, check_array(beta, "beta", shape=u.shape))

def overlaps(V, B) -> np.ndarray:
    """``overlap(V[i], B[j])`` for the rows of ``V`` ``(k, d)`` and ``B`` ``(r, d)``: shape ``(k, r)``."""
    V = np.atleast_2d(check_array(V, "V"))
    B = np.atleast_2d(check_array(B, "B"))
    if V.ndim != 2 or B.ndim != 2 or V.shape[1] != B.shape[1]:
        raise ValueError(f"V and B must be (k, d) and (r, d) with the same d, got {V.shape} and {B.shape}")
    nv, nb = np.linalg.norm(V, axis=1), np.linalg.norm(B, axis=1)
    if np.any(nv == 0) or np.any(nb == 0):
        raise ValueError("rows of V and B must be non-zero")
    return np.abs(V @ B.T) / np.outer(nv, nb)

def subspace_overlap(V, B) -> np.ndarray:
    r""":math:`\|Q^\top\hat\beta_j\|` for each row :math:`\beta_j` of ``B`` ``(r, d)``, :math:`Q` an
    orthonormal basis of the rows of ``V`` ``(k, d)``: shape ``(r,)``; chance about :math:`\sqrt{k/d}`."""
    V, B = _check_subspace(V, B)
    Q, _ = np.linalg.qr(V.T)
    Bn = B / np.linalg.norm(B, axis=1, keepdims=True)
    return np.linalg.norm(Bn @ Q, axis=1)

def _check_subspace(V, B):
    V = np.atleast_2d(check_array(V, "V"))
    B = np.atleast_2d(check_array(B, "B"))
    if V.shape[1] != B.shape[1]:
        raise ValueError(f"V and B must have the same number of columns, got {V.shape} and {B.shape}")
    if V.shape[0] > V.shape[1]:
        raise ValueError(f"V must have at most d rows, got shape {V.shape}")
    return V, B

def chance_overlap(d: int, k: int = 1) -> float:
    r"""Typical overlap :math:`\sqrt{k/d}` of a fixed direction with a random ``k``-dimensional subspace.

    Parameters
    ----------
    d, k : int
    Returns
    -------
    float
    Examples
    --------
    >>> import twostep as ts
    >>> ts.chance_overlap(100), ts.chance_overlap(100, k=4)
    (0.1, 0.2)
    """
    d = check_int(d, "d")
    k = check_int(k, "k")
    return float(np.sqrt(k / d))

def chance_maximum(count, d):
    r"""Typical largest of ``count`` chance cosines in :math:`\mathbb R^d`,
    :math:`\sqrt{2\log(\text{count})/d}` (``count = n`` for a memorisation, ``d`` for the largest entry
    of a unit vector).

    Parameters
    ----------
    count : int or array_like >= 2
    d : int or array_like >= 1
    Returns
    -------
    float or ndarray
    Examples
    --------
    >>> import twostep as ts
    >>> round(ts.chance_maximum(1000, 1000), 4)
    0.1175
    """
    count_a, d_a = np.asarray(count), np.asarray(d)
    for name, x, low in (("count", count_a, 2), ("d", d_a, 1)):
        if x.dtype.kind not in "iuf" or not np.all(np.isfinite(x)) or np.any(x < low):
            raise ValueError(f"{name} must be a number (or array) >= {low}, got {x!r}")
    out = np.sqrt(2 * np.log(count_a) / d_a)
    return float(out) if out.ndim == 0 else out

def memorisation(u, X):
    r"""Largest overlap with a single input, :math:`\max_j |\cos(u, x_j)|`: near 1, ``u`` is a memorised
    input.

    Parameters
    ----------
    u : ndarray, shape (d,)
    X : ndarray, shape (n, d)
    Returns
    -------
    value : float
    j : int, the row of ``X`` that attains it
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> value, j = ts.memorisation(np.array([1.0, 0.1, 0.0]), np.eye(3))
    >>> round(value, 4), j
    (0.995, 0)
    """
    u = check_array(u, "u", ndim=1)
    X = check_array(X, "X", ndim=2, shape=(None, u.size))
    value, j = memorisations_core(u[None, :], X)
    return float(value[0]), int(j[0])

def memorisations(V, X) -> tuple:
    """:func:`memorisation` of every row of ``V`` ``(K, d)`` in one product: ``(values, indices)``, each
    ``(K,)``."""
    V = np.atleast_2d(check_array(V, "V"))
    X = check_array(X, "X", ndim=2, shape=(None, V.shape[1]))
    return memorisations_core(V, X)

def unmemorised_overlap(V, B, X) -> np.ndarray:
    r""":func:`subspace_overlap` of ``V`` with each :math:`\beta_r` projected off the inputs that ``V``'s
    rows memorise (:func:`twostep.memorisation`).

    Parameters
    ----------
    V : ndarray, shape (K, d)
    B : ndarray, shape (r, d)
    X : ndarray, shape (n, d)
    Returns
    -------
    ndarray, shape (r,)
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> X = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    >>> beta = np.array([[1.0, 1.0, 0.0, 0.0]])
    >>> ts.unmemorised_overlap(X[:1], beta, X)   # a training input that carries half of beta
    array([0.])
    """
    return _unmemorised(V, B, X, nested=False)[-1]

def nested_unmemorised_overlaps(V, B, X) -> np.ndarray:
    """:func:`unmemorised_overlap` of the first ``K`` rows of ``V`` for ``K = 1..len(V)``: ``(len(V), r)``."""
    return _unmemorised(V, B, X, nested=True)

def _unmemorised(V, B, X, nested: bool):
    V, B = _check_subspace(V, B)
    X = check_array(X, "X", ndim=2, shape=(None, V.shape[1]))
    J = memorisations_core(V, X)[1]
    out = []
    for K in (range(1, len(V) + 1) if nested else [len(V)]):
        Q, _ = np.linalg.qr(X[sorted(set(J[:K].tolist()))].T)
        out.append(subspace_overlap(V[:K], B - (B @ Q) @ Q.T))
    return np.array(out)
