r"""The ridge readout on frozen features :math:`F = \sigma(XW^\top)`, its penalty chosen on a
validation split, and the population error of the best predictor that sees a subspace."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve, eigh, svd
from scipy.linalg.lapack import dormqr, dptsv, dsytrd, dsytrd_lwork

from .._validation import (check_array, check_choice, check_dtype, check_int, check_real,
                           check_rng, check_type)
from ..model.activations import Activation, check_activation
from ..model.targets import Teacher

def features(W, X, activation: Activation) -> np.ndarray:
    r"""Hidden-layer features :math:`F = \sigma(XW^\top)`.

    Parameters
    ----------
    W : ndarray, shape (N, d)
    X : ndarray, shape (n, d)
    activation : Activation
    Returns
    -------
    ndarray, shape (n, N)
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> rng = np.random.default_rng(0)
    >>> W0, _ = ts.initialise(8, 5, rng)
    >>> ts.features(W0, ts.gaussian_inputs(20, 5, rng), ts.Tanh()).shape
    (20, 8)
    """
    W = check_array(W, "W", ndim=2)
    X = check_array(X, "X", ndim=2, shape=(None, W.shape[1]))
    check_activation(activation)
    return activation(X @ W.T)

def ridge_path(F, y, lambdas) -> np.ndarray:
    r""":math:`\hat a_\lambda = V\operatorname{diag}(s_i/(s_i^2 + n\lambda))U^\top y` (:math:`F = USV^\top`)
    for every penalty, ``(len(lambdas), N)``."""
    F = check_array(F, "F", ndim=2)
    y = check_array(y, "y", shape=(F.shape[0],))
    lambdas = check_array(lambdas, "lambdas", ndim=1)
    if lambdas.size == 0 or np.any(lambdas <= 0):
        raise ValueError("lambdas must be a non-empty 1-d array of positive penalties")
    U, s, Vt = svd(F, full_matrices=False, check_finite=False)
    Uy = U.T @ y
    n = F.shape[0]
    shrink = s[None, :] / (s[None, :] ** 2 + n * lambdas[:, None])
    return (shrink * Uy[None, :]) @ Vt

#: Solvers of :func:`ridge`: the thin SVD, or Cholesky of the smaller Gram system (cheaper).
RIDGE_SOLVERS = ("svd", "gram")

def ridge(F, y, lam: float, *, solver: str = "svd") -> np.ndarray:
    r""":math:`\hat a_\lambda`, ``(N,)``; ``solver="gram"``: Cholesky of :math:`F^\top F + n\lambda I` (or
    the dual). Others' ridge on :math:`F/\sqrt N` with penalty :math:`\lambda'` is :math:`\lambda =
    \lambda'N/n`."""
    lam = check_real(lam, "lam", low=0.0, low_open=True)
    check_choice(solver, "solver", RIDGE_SOLVERS)
    if solver == "gram":
        F = check_array(F, "F", ndim=2)
        y = check_array(y, "y", shape=(F.shape[0],))
        return _ridge_solve(F, y, lam)
    return ridge_path(F, y, np.array([lam]))[0]

def mse(F, y, coef) -> float:
    r""":math:`\frac1n\|y - F\hat a\|^2`."""
    F = check_array(F, "F", ndim=2)
    y = check_array(y, "y", shape=(F.shape[0],))
    coef = check_array(coef, "coef", shape=(F.shape[1],))
    r = y - F @ coef
    return float(r @ r / r.size)

def best_linear_error(teacher: Teacher) -> float:
    r"""Population error :math:`\mathbb{E}[y^2] - (\sum_r c_0(g_r))^2 - \sum_r c_1(g_r)^2` of the best
    affine predictor.

    Parameters
    ----------
    teacher : Teacher
    Returns
    -------
    float
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> teacher = ts.make_teacher("he1+he2", 5, np.random.default_rng(0))
    >>> round(ts.best_linear_error(teacher), 6)   # E[y^2] = 2, minus c_1^2 = 1 of He_1
    1.0
    """
    check_type(teacher, "teacher", Teacher, "a Teacher")
    c0 = sum(g.coefficients[0] for g in teacher.links)
    c1 = sum(g.coefficients[1] ** 2 for g in teacher.links)
    return float(teacher.second_moment - c0 ** 2 - c1)

@dataclass
class ReadoutResult:
    """Test error of a ridge readout; ``edge`` ``+1`` (``-1``): the penalty is the grid's largest
    (smallest)."""

    test_mse: float
    train_mse: float
    penalty: float
    edge: int = 0

#: Penalties relative to the features' mean square, :math:`\lambda = \rho\,\overline{F^2}`: the
#: same for features of any scale; from nearly interpolation to a readout of almost zero.
RELATIVE_LAMBDAS = np.logspace(-6, 4, 41)

#: Feature scalings accepted by :func:`paired_readout`.
SCALINGS = ("standardised", "raw")

def feature_scale(F) -> np.ndarray:
    r"""Root mean square :math:`s_i = (\frac1n\sum_j F_{ji}^2)^{1/2}` of every column (1 for a zero column).

    Parameters
    ----------
    F : ndarray, shape (n, N)
    Returns
    -------
    ndarray, shape (N,)
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> ts.feature_scale(np.array([[3.0, 0.0], [4.0, 0.0]])).round(4)
    array([3.5355, 1.    ])
    """
    F = check_array(F, "F", ndim=2)
    s = np.sqrt(np.mean(F * F, axis=0))
    s[s == 0] = 1.0
    return s

def _gram_ridge_path(F, y, lambdas, gram=None) -> np.ndarray:
    # ridge_path from the smaller Gram matrix's eigendecomposition, three times cheaper than the
    # SVD; its errors ~ eps s_max^2 are harmless for the penalties of RELATIVE_LAMBDAS.
    n, N = F.shape
    shift = n * lambdas[:, None]
    if gram is None:
        gram = _gram(F)
    if n >= N:
        s2, V = eigh(gram, check_finite=False)
        b = V.T @ (F.T @ y)
        return (b[None, :] / (np.clip(s2, 0.0, None)[None, :] + shift)) @ V.T
    s2, U = eigh(gram, check_finite=False)
    b = U.T @ y
    return ((b[None, :] / (np.clip(s2, 0.0, None)[None, :] + shift)) @ U.T) @ F

def _validation_path(Fk, yk, Fv, lambdas, Gk, cross=None) -> np.ndarray:
    # Fv a_lam for every penalty, (len(lambdas), len(Fv)), a_lam the ridge of (Fk, yk), from
    # Gk = Q T Q^T (dsytrd; a third of an eigendecomposition's cost): one tridiagonal solve per
    # penalty. Q = diag(1, Q'), Q' applied by dormqr from the same reflectors.
    nk, N = Fk.shape
    m = Gk.shape[0]
    if m < 3:
        # Too small for the reflectors: the eigendecomposition's path.
        return _gram_ridge_path(Fk, yk, lambdas, Gk) @ Fv.T
    primal = nk >= N
    r = Fk.T @ yk if primal else yk
    work = int(dsytrd_lwork(m, lower=1)[0])
    c, d, e, tau, info = dsytrd(Gk, lower=1, lwork=work)
    if info != 0:
        raise np.linalg.LinAlgError(f"dsytrd failed (info = {info})")
    reflectors = c[1:, :-1]

    def apply(B, trans):
        # Q B (trans "N") or Q^T B (trans "T"), B (m, k); the first row is left as it is.
        out = np.array(B, dtype=float, order="F")
        q, _, info = dormqr("L", trans, reflectors, tau, out[1:], max(1, out.shape[1]) * 64)
        if info != 0:
            raise np.linalg.LinAlgError(f"dormqr failed (info = {info})")
        out[1:] = q
        return out

    rhs = apply(r[:, None], "T")[:, 0]
    Z = np.empty((m, lambdas.size))
    for i, shift in enumerate(nk * lambdas):
        *_, Z[:, i], info = dptsv(d + shift, e, rhs)
        if info != 0:
            # Not positive definite to rounding: the eigendecomposition's path (clips).
            return _gram_ridge_path(Fk, yk, lambdas, Gk) @ Fv.T
    QZ = apply(Z, "N")
    return (Fv @ QZ).T if primal else (_cross(Fk, Fv, cross).T @ QZ).T

def _cross(Fk, Fv, cross):
    return Fk @ Fv.T if cross is None else cross

def _gram(F):
    # The smaller Gram matrix of F (n, N): F^T F if n >= N, else F F^T.
    return F.T @ F if F.shape[0] >= F.shape[1] else F @ F.T

def _shifted_solve(G, shift: float, rhs) -> np.ndarray:
    # (G + shift I)^{-1} rhs by Cholesky, G overwritten.
    G[np.diag_indices_from(G)] += shift
    return cho_solve(cho_factor(G, overwrite_a=True, check_finite=False), rhs,
                     check_finite=False)

def _ridge_solve(F, y, lam: float) -> np.ndarray:
    # One penalty: a Cholesky solve of the smaller Gram system.
    n, N = F.shape
    if n >= N:
        return _shifted_solve(_gram(F), n * lam, F.T @ y)
    return F.T @ _shifted_solve(_gram(F), n * lam, y)

def _refit(Fk, yk, Fv, yv, Gk, lam: float, cross=None) -> np.ndarray:
    # _ridge_solve on all rows, its Gram matrix assembled from Gk and the held-out rows' blocks
    # (a fifth of the product that forms it anew, for a fifth held out).
    nk, N = Fk.shape
    n = nk + Fv.shape[0]
    if nk >= N:
        G = Fv.T @ Fv
        G += Gk
        return _shifted_solve(G, n * lam, Fk.T @ yk + Fv.T @ yv)
    cross = _cross(Fk, Fv, cross)
    K = np.block([[Gk, cross], [cross.T, Fv @ Fv.T]])
    dual = _shifted_solve(K, n * lam, np.concatenate([yk, yv]))
    return Fk.T @ dual[:nk] + Fv.T @ dual[nk:]

def fit_readout(F, y, F_test, y_test, val_index, standardise: bool = True,
                relative_lambdas=RELATIVE_LAMBDAS) -> ReadoutResult:
    r"""Ridge readout with the penalty :math:`\lambda = \rho\,\overline{F^2}` (:math:`\rho` in
    ``relative_lambdas``) of least error on the rows ``val_index``, refitted on all rows.

    Parameters
    ----------
    F, y : ndarray, shapes (n, N) and (n,)
    F_test, y_test : ndarray, shapes (m, N) and (m,)
    val_index : ndarray of int
    standardise : bool
        Divide the features by their training :func:`feature_scale`.
    relative_lambdas : ndarray, shape (p,)
    Returns
    -------
    ReadoutResult
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> rng = np.random.default_rng(0)
    >>> teacher = ts.make_teacher("he1", 10, rng)
    >>> (X, y), (Xt, yt) = teacher.sample(60, rng), teacher.sample(40, rng)
    >>> result = ts.fit_readout(X, y, Xt, yt, val_index=np.arange(15))
    >>> result.test_mse < 0.05, result.edge      # a linear target: the smallest penalty
    (True, -1)
    """
    F = check_array(F, "F", ndim=2)
    n, N = F.shape
    y = check_array(y, "y", shape=(n,))
    F_test = check_array(F_test, "F_test", ndim=2, shape=(None, N))
    y_test = check_array(y_test, "y_test", shape=(F_test.shape[0],))
    val = np.asarray(val_index)
    if val.ndim != 1 or val.size == 0 or val.dtype.kind not in "iu":
        raise TypeError("val_index must be a non-empty 1-d integer array")
    if val.min() < 0 or val.max() >= n or np.unique(val).size != val.size:
        raise ValueError(f"val_index must hold distinct row indices in [0, {n})")
    if val.size >= n:
        raise ValueError(f"val_index leaves no training rows (n = {n})")
    if not isinstance(standardise, (bool, np.bool_)):
        raise TypeError(f"standardise must be True or False, got {standardise!r}")
    rel = check_array(relative_lambdas, "relative_lambdas", ndim=1)
    if rel.size == 0 or np.any(rel <= 0):
        raise ValueError("relative_lambdas must be a non-empty 1-d array of positive values")
    if standardise:
        scale = feature_scale(F)
        F, F_test = F / scale, F_test / scale
    lambdas = rel * float(np.mean(F * F))
    keep = np.ones(n, dtype=bool)
    keep[val] = False
    Fk, yk, Fv, yv = F[keep], y[keep], F[val], y[val]
    Gk = _gram(Fk)
    # Fk Fv^T: the validation predictions and the refit both need it when Gk is dual.
    cross = Fk @ Fv.T if Fk.shape[0] < N else None
    val_err = np.mean((yv[None, :] - _validation_path(Fk, yk, Fv, lambdas, Gk, cross)) ** 2,
                      axis=1)
    i = int(np.argmin(val_err))
    coef = _refit(Fk, yk, Fv, yv, Gk, float(lambdas[i]), cross)
    edge = 1 if i == rel.size - 1 else (-1 if i == 0 else 0)
    return ReadoutResult(mse(F_test, y_test, coef), mse(F, y, coef), float(lambdas[i]), edge)

@dataclass(frozen=True)
class Step:
    r"""A first layer :math:`W = B - \eta G` (``weights``, ``base``, ``eta``, ``direction``):
    pre-activations :math:`XB^\top - \eta XG^\top`."""

    weights: np.ndarray
    base: np.ndarray
    eta: float
    direction: np.ndarray

def paired_readout(weights, activation: Activation, teacher: Teacher, n_train: int,
                   n_test: int, rng: np.random.Generator, scalings=("standardised",),
                   relative_lambdas=RELATIVE_LAMBDAS, val_fraction: float = 0.25,
                   linear: bool = True, dtype=np.float64, feature_dtype=None) -> dict:
    r""":func:`fit_readout` of the first layers ``weights`` (a name to an ``(N, d)`` array or a
    :class:`Step`) on the same data: ``n_train`` then ``n_test`` samples of ``teacher`` from ``rng``
    and a validation split of ``val_fraction``; features in ``feature_dtype`` (default ``dtype``),
    fits in float64; ``linear`` also reads out the raw inputs.

    Parameters
    ----------
    weights : mapping
    activation : Activation
    teacher : Teacher
    n_train, n_test : int
    rng : numpy.random.Generator
    scalings : sequence of {"standardised", "raw"}
    relative_lambdas : ndarray
    val_fraction : float in (0, 1)
    linear : bool
    dtype, feature_dtype : float64 or float32
    Returns
    -------
    dict
        ``result[scaling][name]``, a ReadoutResult; ``"zero"`` is the predictor :math:`\hat y = 0`.
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> rng = np.random.default_rng(0)
    >>> teacher = ts.make_teacher("he1", 10, rng)
    >>> W0, _ = ts.initialise(30, 10, rng)
    >>> out = ts.paired_readout({"W0": W0}, ts.Tanh(), teacher, 80, 40, rng)
    >>> sorted(out["standardised"]), out["standardised"]["W0"].test_mse < 0.5
    (['W0', 'linear', 'zero'], True)
    """
    from collections.abc import Mapping

    if not isinstance(weights, Mapping) or not weights:
        raise TypeError("weights must be a non-empty mapping of names to (N, d) arrays")
    check_type(teacher, "teacher", Teacher, "a Teacher")
    check_activation(activation)
    checked = {}
    for name, W in weights.items():
        if not isinstance(name, str) or name in ("linear", "zero"):
            raise ValueError(f"weights' names must be strings other than 'linear' and 'zero', "
                             f"got {name!r}")
        parts = (W.weights, W.base, W.direction) if isinstance(W, Step) else (W,)
        parts = [check_array(P, f"weights[{name!r}]", ndim=2) for P in parts]
        if any(P.shape != parts[0].shape for P in parts) or parts[0].shape[1] != teacher.d:
            raise ValueError(f"weights[{name!r}] must be (N, d) with the teacher's d={teacher.d} "
                             f"(a Step's three matrices alike), got {[P.shape for P in parts]}")
        checked[name] = Step(parts[0], parts[1], float(W.eta), parts[2]) if len(parts) == 3 \
            else parts[0]
    n_train, n_test = check_int(n_train, "n_train", 2), check_int(n_test, "n_test", 1)
    check_rng(rng)
    if isinstance(scalings, str):
        scalings = (scalings,)
    scalings = tuple(scalings)
    if not scalings or any(s not in SCALINGS for s in scalings):
        raise ValueError(f"scalings must be a non-empty sequence of {list(SCALINGS)}, got {scalings!r}")
    val_fraction = check_real(val_fraction, "val_fraction", low=0.0, high=1.0,
                              low_open=True, high_open=True)
    n_val = max(1, int(round(val_fraction * n_train)))
    if n_val >= n_train:
        raise ValueError(f"val_fraction leaves no training rows (n_train = {n_train})")
    dt = check_dtype(dtype)
    ft = dt if feature_dtype is None else check_dtype(feature_dtype, "feature_dtype")
    X, y = teacher.sample(n_train, rng, dt)
    Xt, yt = teacher.sample(n_test, rng, dt)
    val = rng.permutation(n_train)[:n_val]
    y, yt = y.astype(np.float64, copy=False), yt.astype(np.float64, copy=False)
    # The inputs of the linear baseline stay as drawn; the features' products see them in ft.
    Xf, Xtf = X.astype(ft, copy=False), Xt.astype(ft, copy=False)
    out = {s: {} for s in scalings}
    products = {}

    def product(Z, A):
        # Z A^T, once per pair: the bases and directions that several Steps share.
        key = (id(Z), id(A))
        if key not in products:
            products[key] = Z @ A.astype(ft, copy=False).T
        return products[key]

    def pre(W, Z):
        if isinstance(W, Step):
            # B - eta G as (-eta) G + B: the same bits, one temporary less
            out = product(Z, W.direction) * -W.eta
            out += product(Z, W.base)
            return out
        # A layer that is also a Step's base is multiplied once (sigma applies out of place).
        return product(Z, W)

    for name, W in checked.items():
        F = activation(pre(W, Xf)).astype(np.float64, copy=False)
        Ft = activation(pre(W, Xtf)).astype(np.float64, copy=False)
        for s in scalings:
            out[s][name] = fit_readout(F, y, Ft, yt, val, s == "standardised", relative_lambdas)
    X, Xt = X.astype(np.float64, copy=False), Xt.astype(np.float64, copy=False)
    if linear:
        for s in scalings:
            out[s]["linear"] = fit_readout(X, y, Xt, yt, val, s == "standardised",
                                           relative_lambdas)
    for s in scalings:
        out[s]["zero"] = ReadoutResult(float(yt @ yt / n_test), float(y @ y / n_train),
                                       float("inf"))
    return out

def projected_error(teacher: Teacher, M) -> float:
    r"""Population error of the best predictor of :math:`y` from :math:`Px`, :math:`M_{rs} =
    \langle P\beta^*_r, P\beta^*_s\rangle` (Mehler's formula, to degree 12):

    .. math:: \mathbb{E}[y^2] - \Big(\sum_r c_0(g_r)\Big)^2
              - \sum_{k\ge 1}\frac{1}{k!}\sum_{r,s} c_k(g_r)\,c_k(g_s)\,M_{rs}^k .

    Parameters
    ----------
    teacher : Teacher
    M : array_like, shape (r, r)
        Positive semi-definite, diagonal at most 1.
    Returns
    -------
    float
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> teacher = ts.make_teacher("he2", 10, np.random.default_rng(0))
    >>> round(ts.projected_error(teacher, [[0.25]]), 6)   # overlap 1/2 explains 1/16 of He_2
    0.9375
    """
    check_type(teacher, "teacher", Teacher, "a Teacher")
    r = teacher.rank
    M = check_array(M, "M", shape=(r, r))
    if not np.allclose(M, M.T, atol=1e-10) or np.any(np.linalg.eigvalsh(M) < -1e-10) \
            or np.any(np.diag(M) > 1 + 1e-10):
        raise ValueError("M must be a symmetric positive semi-definite (r, r) matrix with diagonal <= 1")
    C = np.array([g.coefficients for g in teacher.links])  # (r, K + 1)
    explained = 0.0
    for k in range(1, C.shape[1]):
        c = C[:, k]
        explained += float(c @ (M ** k) @ c) / math.factorial(k)
    c0 = float(C[:, 0].sum())
    return float(teacher.second_moment - c0 * c0 - explained)

def explained_fraction(teacher: Teacher, rho):
    r""":math:`(c_0^2 + \sum_{k\ge1}c_k^2\rho^{2k}/k!)/\mathbb E[y^2]` of a single-index ``teacher`` for
    overlaps ``rho`` (a float, or a 1-d array)."""
    check_type(teacher, "teacher", Teacher, "a Teacher")
    if len(teacher.links) != 1:
        raise ValueError(f"teacher must be single-index, got {len(teacher.links)} directions")
    r = check_array(rho, "rho", ndim=min(np.ndim(rho), 1))
    if np.any(r < 0) or np.any(r > 1):
        raise ValueError("rho must lie in [0, 1]")
    if r.ndim:
        return np.array([explained_fraction(teacher, x) for x in rho])
    return 1 - projected_error(teacher, [[rho * rho]]) / teacher.second_moment

def asymptotic_ideal(teacher: Teacher, psi, weights=(1.0,)):
    r"""Large-:math:`n` ideal :math:`\mathcal E/\mathbb E[y^2]` of the spike :math:`\sum_t w_tv_t` (batches
    of :math:`n = \psi d`): :func:`projected_error` at :math:`M = \rho\rho^\top`, :math:`\rho_r =
    (\sum_t w_t)c_1(g_r)/\sqrt{(\sum_t w_t)^2\sum_s c_1(g_s)^2 + (\sum_t w_t^2)\mathbb E[y^2]/\psi}`."""
    check_type(teacher, "teacher", Teacher, "a Teacher")
    w = check_array(weights, "weights", ndim=1)
    if w.size == 0 or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be a non-empty sequence of non-negative numbers, not all 0")
    p = check_array(psi, "psi", ndim=min(np.ndim(psi), 1))
    if np.any(p <= 0):
        raise ValueError("psi must be positive")
    if p.ndim:
        return np.array([asymptotic_ideal(teacher, x, weights) for x in psi])
    c1 = np.array([g.coefficients[1] for g in teacher.links])
    m2 = teacher.second_moment
    rho = w.sum() * c1 / np.sqrt(w.sum() ** 2 * (c1 @ c1) + (w @ w) * m2 / psi)
    return projected_error(teacher, np.outer(rho, rho)) / m2

def subspace_error(teacher: Teacher, V) -> float:
    """:func:`twostep.projected_error` for the span of the rows of ``V``.

    Parameters
    ----------
    teacher : Teacher
    V : ndarray, shape (k, d), linearly independent rows, k >= 0
    Returns
    -------
    float
    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> teacher = ts.make_teacher("he2", 10, np.random.default_rng(0))
    >>> [round(abs(ts.subspace_error(teacher, V)), 6) for V in (teacher.directions, np.zeros((0, 10)))]
    [0.0, 1.0]
    """
    check_type(teacher, "teacher", Teacher, "a Teacher")
    V = check_array(np.atleast_2d(V), "V", shape=(None, teacher.d))
    if V.shape[0] == 0:
        return projected_error(teacher, np.zeros((teacher.rank, teacher.rank)))
    if V.shape[0] > V.shape[1]:
        raise ValueError(f"V must have at most d rows, got shape {V.shape}")
    Q, R = np.linalg.qr(V.T)
    if np.any(np.abs(np.diag(R)) <= 1e-12 * max(1.0, np.abs(R).max())):
        raise ValueError("the rows of V must be linearly independent")
    BQ = teacher.directions @ Q
    return projected_error(teacher, BQ @ BQ.T)
