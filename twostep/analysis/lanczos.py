r"""The top of a spectrum on any array library: block Lanczos with thick restarts.

ARPACK (:func:`twostep.top_singular`) runs on the host only, one vector at a time. The
measurements of :mod:`twostep.scale.device` need the top singular triplets of ``(N, d)``
matrices that live on a GPU, or on a CPU where a product with a thin block of ``b`` columns
costs little more than one with a single vector. :func:`top_singular_on` works on blocks:
with :math:`A = M^\top M` it keeps an orthonormal basis :math:`K` (``(d, m)``, at most
``depth`` blocks) with its images :math:`Y = MK` and :math:`Z = M^\top Y = AK`, and

.. math:: Y^\top Y = K^\top AK = W\Theta^2W^\top,\qquad
          s_i \approx \theta_i,\quad v_i = KW_{:i},\quad u_i = YW_{:i}/\theta_i,\qquad
          \rho_i = \big\|ZW_{:i}/\theta_i - \theta_i\,KW_{:i}\big\| = \|M^\top u_i - \theta_iv_i\|,

(Rayleigh--Ritz on the whole basis: the small eigenproblem in float64 on the host). The basis
grows by the residual directions :math:`ZW_{:b} - KW_{:b}\Theta_b^2` of the top ``b`` Ritz
pairs, orthogonalised against it: a block Krylov space of :math:`A`, at two passes over
:math:`M` per block, as block subspace iteration (which keeps only its last block) costs,
but converging as Lanczos does, at a rate set by the square root of the gap rather than the
gap. When the basis is full it restarts from its top Ritz vectors (a thick restart, with
their images: no pass over :math:`M`).

Why not the block subspace iteration that came before (the last block only, 40 iterations at
most): in the at-scale spike task at :math:`N = 4000` (reused batch, seed 0) it stopped at its
cap at two grid points and counted 3 outliers at :math:`(\alpha_1, \alpha_2) = (0.23, 0.41)`,
where the fourth singular value, 2.1011, lies above the threshold 2.1 and a dense SVD counts 4;
this solver counts 4. Blocks are small: single vectors for a top-1 spectrum, where on two CPU cores a
pass with one vector (a matrix-vector product) costs a quarter of a pass with nine; the Krylov
basis, not the block, does the oversampling.
"""

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
    r"""Top-``k`` singular triplets of a device (or numpy) matrix ``M`` ``(N, d)`` by block
    Lanczos on :math:`M^\top M` (this module's docstring) with blocks of
    ``b = k + oversample`` columns, stopped by a convergence test. With ``minus = (c, l, r)``
    the matrix is :math:`M - c\,lr^\top`, applied without forming it.

    It stops when every one of the top ``k`` Ritz triplets has
    :math:`\rho_i \le \text{tol}\cdot\theta_1` (its vectors are then accurate to about
    :math:`\rho_i/\text{gap}_i` and its value to about :math:`\rho_i^2/\text{gap}_i`), or after
    ``iterations`` blocks past the first, with a ``RuntimeWarning`` if its test is not met then
    (``tol=0`` runs all of them, silently). With ``vectors=False``
    it also stops when the values have converged by their own estimate,
    :math:`\delta_iq_i/(1-q_i) \le \text{tol}\cdot\theta_1` with :math:`\delta_i` the last change
    of :math:`\theta_i` and :math:`q_i < 1` its ratio to the change before (the tail of a
    geometric series: a remainder's top value inside a bulk never meets the residual test).

    With ``above`` (a count of the values above a threshold :math:`t`) the test is the count's
    instead: a Ritz value never exceeds the singular value of its rank
    (:math:`\theta_i \le s_i`), so :math:`\theta_i > t` is final at once, and
    :math:`\theta_i < t` is taken as final once both :math:`\theta_i + \rho_i < t` (the
    residual interval, which holds a singular value, lies below) and
    :math:`\theta_i + \delta_iq_i/(1-q_i) < t` (the value's extrapolated limit lies below). It is
    a heuristic, as any test of a subspace that cannot see outside itself: a direction not yet
    in the basis is found only by iterating, which is why successive grid points warm-start.

    Parameters
    ----------
    M : array, shape (N, d)
    k : int
        In ``[1, min(N, d)]``.
    iterations : int
        Most blocks added after the first, ``>= 0``; each is two passes over ``M``.
    oversample : int
        Extra columns of a block, ``>= 0``.
    seed : int
        Of the Gaussian start block (drawn on the host).
    vectors : bool
        Return the vectors too.
    minus : (float, array (N,), array (d,)), optional
    tol : float, optional
        ``>= 0``; default ``30 * eps`` of ``M``'s dtype (3.6e-6 in float32), just above the
        residual float32 rounding leaves (about 2e-7 relative, measured at N = 1000).
    start : array, shape (m, d), optional
        Rows that start the first block (a previous call's ``Vt`` or final block, on ``M``'s
        device), the rest Gaussian; ``m <= b`` (more rows are cut).
    above : float, optional
        The count's threshold :math:`t`; ``tol`` is then not used.
    depth : int
        Most blocks in the basis, ``>= 2``.

    Returns
    -------
    s : numpy array, shape (k,)
    U : array, shape (N, k), on ``M``'s device (with ``vectors``)
    Vt : array, shape (k, d), on ``M``'s device (with ``vectors``)

    Compare with :func:`twostep.top_singular` (ARPACK, host only).
    """
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
    """:func:`top_singular_on` on checked arguments (the package's own calls), returning
    ``(s, U, V, Q, blocks)``: ``V`` ``(d, k)``, the top ``b`` Ritz vectors ``Q`` ``(d, b)`` to
    warm-start the next call (``start=Q.T``), and the count of blocks added after the first.
    With ``project`` (an ``(N, K)`` array with orthonormal columns :math:`P`, on ``M``'s
    device) the matrix is :math:`(I - PP^\top)M`, applied without forming it (not with
    ``minus``)."""
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
        # Orthonormal columns (orthogonal to ``basis`` too) from the (b, b) Gram matrix,
        # eigendecomposed in float64 on the host, twice (as CholeskyQR2 after classical
        # Gram-Schmidt: orthonormal to rounding while cond(Q)^2 < 1/(100 eps)); a QR only beyond
        # that (a numerically rank-deficient block, as when the basis holds an invariant
        # subspace), of [basis, Q], so that the new columns stay off the basis. Why not a QR each
        # time: a threaded LAPACK QR of a thin block costs more than a pass over M, and the Gram
        # matrix is one more product of the thin block.
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
        # The values' own convergence: their last change, its ratio q to the change before, and
        # the tail of a geometric series, step q/(1-q); no estimate (inf) before two changes or
        # while q >= 1, none needed once a value stands still.
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
        # The next block: the top b Ritz pairs' residuals A v_i - theta_i^2 v_i, taken off the
        # basis and made orthonormal.
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
    """The numpy array ``a`` on ``x``'s device."""
    if xp is np:
        return a
    dev = getattr(x, "device", None)
    return xp.asarray(a, device=dev) if dev is not None else xp.asarray(a)


def array_dtype(x) -> np.dtype:
    """The numpy dtype of a numpy, CuPy, PyTorch or array-API array."""
    # torch.float32, cupy's numpy dtype, array_api_strict.float32: the name after the last dot.
    return np.dtype(str(x.dtype).rsplit(".", 1)[-1])
