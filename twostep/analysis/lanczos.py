r"""The top of a spectrum on any array library: block Lanczos on :math:`M^\top M` with thick restarts
(Rayleigh--Ritz on the whole basis :math:`K`, :math:`Y = MK`: :math:`Y^\top Y = W\Theta^2W^\top`)."""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import check_int, check_real
from ..model.activations import host_array, namespace

#: Most blocks in the basis before a thick restart (20 vectors for single-vector Lanczos).
DEPTH = 20

def top_singular_on(M, k: int = 1, iterations: int = 100, oversample: int = 0, seed: int = 0,
                    vectors: bool = True, minus=None, tol: float | None = None, start=None,
                    above: float | None = None, depth: int = DEPTH):
    r"""Top-``k`` singular triplets of ``M`` (or of :math:`M - c\,lr^\top`, ``minus = (c, l, r)``)
    on its device, by block Lanczos: ``s`` and with ``vectors`` ``U``, ``Vt``."""
    M = namespace(M)[1]
    k = check_int(k, "k")
    m = min(M.shape)
    if k > m:
        raise ValueError(f"k must be in [1, min(M.shape)] = [1, {m}], got {k}")
    if start is not None and (getattr(start, "ndim", 0) != 2 or start.shape[1] != M.shape[1]):
        raise ValueError(f"start must have shape (m, {M.shape[1]}), got "
                         f"{getattr(start, 'shape', None)}")
    s, U, V, _, _ = block_lanczos(
        M, k, check_int(iterations, "iterations", 0), check_int(oversample, "oversample", 0),
        check_int(seed, "seed", 0), vectors, minus,
        None if tol is None else check_real(tol, "tol", low=0.0), start,
        None if above is None else check_real(above, "above"), check_int(depth, "depth", 2))
    return (s, U, V.T) if vectors else s

def block_lanczos(M, k, iterations=100, oversample=0, seed=0, vectors=True, minus=None,
                  tol=None, start=None, above=None, depth=DEPTH, project=None):
    r""":func:`top_singular_on` on checked arguments: ``(s, U, V, Q, blocks)``, ``V`` ``(d, k)``, ``Q``
    ``(d, b)`` the top Ritz vectors (``start=Q.T`` warm-starts), ``blocks`` added after the first.
    ``project`` ``(N, K)``, orthonormal columns :math:`P`: the matrix is :math:`(I - PP^\top)M`."""
    xp, M = namespace(M)
    m = min(M.shape)
    dt = array_dtype(M)
    tol = 30 * float(np.finfo(dt).eps) if tol is None else tol
    b = min(m, k + oversample)
    # The basis never holds more columns than the space has; a restart keeps half of it.
    most = max(b, min(m, depth * b))
    keep = max(b, most // 2)
    d = M.shape[1]
    G = np.random.default_rng(seed).standard_normal((d, b))
    Q = _like(xp, G.astype(dt), M)
    if start is not None:
        S = start[:b, :].T
        Q = S if S.shape[1] == b else xp.concat([S, Q[:, S.shape[1]:]], axis=1)
    if project is not None:
        def right(Y):
            MY = M @ Y
            return MY - project @ (project.T @ MY)

        def left(Z):
            return M.T @ (Z - project @ (project.T @ Z))
    elif minus is None:
        right, left = (lambda Y: M @ Y), (lambda Z: M.T @ Z)
    else:
        c, lv, rv = minus
        c = float(c)
        # In M's dtype: a float64 spike (a signal part's weights are float64 on the host)
        # would promote every product, and numpy would cast all of M to float64 each time.
        cast = (lambda x: x.astype(M.dtype)) if xp is np else (lambda x: xp.astype(x, M.dtype))
        lv, rv = cast(lv), cast(rv)             # (np.astype is numpy >= 2.1 only)
        right = lambda Y: M @ Y - (c * lv)[:, None] * (rv @ Y)[None, :]      # noqa: E731
        left = lambda Z: M.T @ Z - (c * rv)[:, None] * (lv @ Z)[None, :]     # noqa: E731
    eps = float(np.finfo(dt).eps)

    def on_device(a):
        return _like(xp, np.ascontiguousarray(a).astype(dt), M)

    def orthonormal(Q, basis=None):
        # From the (b, b) Gram matrix twice, as CholeskyQR2 (a threaded QR of a thin block costs
        # more than a pass over M); a QR of [basis, Q] only for a numerically rank-deficient block.
        for _ in range(2):
            if basis is not None:
                Q = Q - basis @ (basis.T @ Q)
            g, E = np.linalg.eigh(host_array(Q.T @ Q).astype(np.float64))
            if not g[0] > 100 * eps * g[-1]:
                if basis is None:
                    return xp.linalg.qr(Q)[0]
                return xp.linalg.qr(xp.concat([basis, Q], axis=1))[0][:, basis.shape[1]:]
            Q = Q @ on_device(E / np.sqrt(g)[None, :])
        return Q

    def unit_columns(R):
        norms = host_array(xp.linalg.vector_norm(R, axis=0)).astype(float)
        return R * on_device(1.0 / np.maximum(norms, norms.max() * eps))[None, :]

    new, K = orthonormal(Q), None
    done, previous = 0, None
    while True:
        Yn = right(new)
        Zn = left(Yn)
        if K is None:
            K, Y, Z = new, Yn, Zn
        else:
            K, Y, Z = (xp.concat([old, add], axis=1) for old, add in ((K, new), (Y, Yn), (Z, Zn)))
        # Rayleigh-Ritz on the whole basis: K is orthonormal, so K^T A K = Y^T Y.
        theta2, W = np.linalg.eigh(host_array(Y.T @ Y).astype(np.float64))
        theta, W = np.sqrt(np.maximum(theta2[::-1], 0.0)), W[:, ::-1]
        Wb = on_device(W[:, :b])
        if theta[0] == 0:
            break
        ZW, KW = Z @ Wb, K @ Wb
        inv = 1.0 / np.maximum(theta[:k], theta[0] * eps)
        rho = host_array(xp.linalg.vector_norm(
            ZW[:, :k] * on_device(inv)[None, :] - KW[:, :k] * on_device(theta[:k])[None, :],
            axis=0)).astype(float)
        # The values' own convergence: the geometric tail step q/(1-q) of their last change
        # (inf before two changes or while q >= 1).
        th = theta[:k]
        step = np.abs(th - previous[0]) if previous is not None else np.full(k, np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = step / (previous[1] if previous is not None else np.nan)
            left_over = np.where(step == 0, 0.0,
                                 np.where(ratio < 1, step * ratio / (1.0 - ratio), np.inf))
        previous = (th.copy(), step)
        if above is not None:
            wait = (th <= above) & ~((th + rho < above) & (th + left_over < above))
        elif vectors:
            wait = rho > tol * theta[0]
        else:
            wait = (rho > tol * theta[0]) & ~(left_over <= tol * theta[0])
        if not wait.any():
            break
        if done == iterations:
            if tol > 0 or above is not None:
                # Not silently: the values and vectors returned are those of an unfinished run.
                warnings.warn(f"top_singular_on: {int(wait.sum())} of the top {k} not converged "
                              f"after {iterations} blocks (largest residual "
                              f"{rho.max() / theta[0]:.1e} of s_1); raise iterations",
                              RuntimeWarning, stacklevel=3)
            break
        # The next block: the top b Ritz residuals A v_i - theta_i^2 v_i, off the basis.
        R = ZW - KW * on_device(theta[:b] ** 2)[None, :]
        new = orthonormal(unit_columns(R - K @ (K.T @ R)), basis=K)
        if K.shape[1] + b > most:
            # Thick restart: the top Ritz vectors with their images; new is orthogonal to them.
            Wr = on_device(W[:, :keep])
            K, Y, Z = K @ Wr, Y @ Wr, Z @ Wr
        done += 1
    YW = Y @ Wb[:, :k]
    s = host_array(xp.linalg.vector_norm(YW, axis=0)).astype(float)
    Q = K @ Wb
    if not vectors:
        return s, None, None, Q, done
    safe = on_device(np.where(s > 0, s, 1.0))
    return s, YW / safe[None, :], Q[:, :k], Q, done

def _like(xp, a: np.ndarray, x):
    if xp is np:
        return a
    dev = getattr(x, "device", None)
    return xp.asarray(a, device=dev) if dev is not None else xp.asarray(a)

def array_dtype(x) -> np.dtype:
    """The numpy dtype of a numpy, CuPy, PyTorch or array-API array."""
    return np.dtype(str(x.dtype).rsplit(".", 1)[-1])
