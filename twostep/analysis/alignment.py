r"""Alignment of learned directions with the target directions.

Overlaps are cosines, in :math:`[0, 1]`: a random unit vector in
:math:`\mathbb{R}^d` has overlap about :math:`1/\sqrt d` with any fixed
direction (the chance level), and a subspace of dimension :math:`k`
about :math:`\sqrt{k/d}`.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array, check_int
from ._core import memorisations_core, overlap_core


def overlap(u, beta) -> float:
    r""":math:`|\langle u,\beta\rangle|/(\|u\|\|\beta\|)` for vectors of shape ``(d,)``."""
    u = check_array(u, "u", ndim=1)
    return overlap_core(u, check_array(beta, "beta", shape=u.shape))


def overlaps(V, B) -> np.ndarray:
    r"""Matrix of overlaps between the rows of ``V`` (``(k, d)``) and the rows of
    ``B`` (``(r, d)``): entry ``[i, j]`` is ``overlap(V[i], B[j])``; shape ``(k, r)``."""
    V = np.atleast_2d(check_array(V, "V"))
    B = np.atleast_2d(check_array(B, "B"))
    if V.ndim != 2 or B.ndim != 2 or V.shape[1] != B.shape[1]:
        raise ValueError(f"V and B must be (k, d) and (r, d) with the same d, got {V.shape} and {B.shape}")
    nv, nb = np.linalg.norm(V, axis=1), np.linalg.norm(B, axis=1)
    if np.any(nv == 0) or np.any(nb == 0):
        raise ValueError("rows of V and B must be non-zero")
    return np.abs(V @ B.T) / np.outer(nv, nb)


def subspace_overlap(V, B) -> np.ndarray:
    r"""For each row :math:`\beta_j` of ``B`` (``(r, d)``), the norm of its projection onto
    the span of the rows of ``V`` (``(k, d)``): :math:`\|Q^\top\hat\beta_j\|`; shape ``(r,)``.

    1 means :math:`\beta_j` lies in the learned subspace; chance is about :math:`\sqrt{k/d}`.
    """
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
    r"""Typical overlap of a fixed direction with a random :math:`k`-dimensional subspace.

    Parameters
    ----------
    d : int
        Dimension.
    k : int
        Dimension of the subspace.

    Returns
    -------
    float
        :math:`\sqrt{k/d}`.

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
    r"""Chance level of a maximum: the typical largest of ``count`` chance cosines in
    :math:`\mathbb R^d`, :math:`\sqrt{2\log(\text{count})/d}`.

    It is the reference for the largest :math:`|\cos|` of a random unit vector with one of
    ``count`` fixed inputs (a memorisation, ``count = n``), and for the largest
    :math:`|\text{entry}|` of a random unit vector in :math:`\mathbb R^d` (``count = d``),
    where a single cosine's chance level is :math:`1/\sqrt d`.

    Parameters
    ----------
    count : int or array_like
        Number of cosines, ``>= 2``.
    d : int or array_like
        Dimension, ``>= 1`` (broadcast with ``count``).

    Returns
    -------
    float or ndarray
        Of the broadcast shape.

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
    r"""Largest overlap of a direction with a single input: :math:`\max_j |\cos(u, x_j)|`.

    A value near 1 means ``u`` is one memorised training input rather than a feature; for an
    unrelated unit vector the maximum over :math:`n` inputs is about
    :math:`\sqrt{2\log n / d}` (:func:`chance_maximum`).

    Parameters
    ----------
    u : ndarray, shape (d,)
    X : ndarray, shape (n, d)
        The inputs, as rows.

    Returns
    -------
    value : float
    j : int
        The row of ``X`` that attains it.

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
    r""":func:`memorisation` of every row of ``V`` (``(K, d)``) with the inputs ``X``
    (``(n, d)``) in one product: ``(values, indices)``, each ``(K,)``. The input norms are
    computed once, where ``K`` calls of :func:`memorisation` would compute them ``K`` times."""
    V = np.atleast_2d(check_array(V, "V"))
    X = check_array(X, "X", ndim=2, shape=(None, V.shape[1]))
    return memorisations_core(V, X)


def unmemorised_overlap(V, B, X) -> np.ndarray:
    r"""Overlap of the span of ``V``'s rows with each :math:`\beta_r`, after projecting
    :math:`\beta_r` off the training inputs that ``V``'s rows memorise.

    For each row :math:`v_i` of ``V`` (``(K, d)``) take the input
    :math:`x_{j_i}` with the largest :math:`|\cos(v_i, x_j)|` (:func:`twostep.memorisation`);
    replace each row :math:`\beta_r` of ``B`` (``(r, d)``) by its component orthogonal to
    :math:`\mathrm{span}\{x_{j_1},\dots,x_{j_K}\}` and return
    :func:`subspace_overlap` of ``V`` with those. A memorised input then adds nothing,
    however much of :math:`\beta_r` it happens to carry.

    Parameters
    ----------
    V : ndarray, shape (K, d)
        The learned directions, as rows.
    B : ndarray, shape (r, d)
        The target directions.
    X : ndarray, shape (n, d)
        The training inputs.

    Returns
    -------
    ndarray, shape (r,)

    Examples
    --------
    A direction that is a training input, which happens to carry half of :math:`\beta`:

    >>> import numpy as np, twostep as ts
    >>> X = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    >>> beta = np.array([[1.0, 1.0, 0.0, 0.0]])
    >>> ts.unmemorised_overlap(X[:1], beta, X)
    array([0.])
    """
    return _unmemorised(V, B, X, nested=False)[-1]


def nested_unmemorised_overlaps(V, B, X) -> np.ndarray:
    r""":func:`unmemorised_overlap` of the first :math:`K` rows of ``V`` for every
    :math:`K = 1..\mathrm{len}(V)`, shape ``(len(V), r)``, with each row's memorised input
    found once (:func:`memorisations`): the learned subspaces of :math:`1, 2, \dots`
    singular vectors. ``V``, ``B``, ``X`` as in :func:`unmemorised_overlap`."""
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
