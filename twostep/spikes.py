r"""The spikes of the second step: is each exact term :math:`T_k` its rank-one signal part?

For a polynomial :math:`\sigma` the second update splits exactly as
:math:`W_2 - W_1 = \sum_{k=0}^{L-1}T_k` (:mod:`twostep.decomposition`), and each term has a
predicted rank-one *signal part*

.. math::
    S_k = \frac{\eta_2\mu_{k+1}(\eta_1\mu_1)^k}{k!}\,a^{\circ(k+1)}u_k^\top,\qquad
    u_k = \frac1nX_2^\top\big(y_2\odot s^{\circ k}\big),\quad s = X_2v,

(or its reuse-aware version :math:`\tilde S_k` for a reused batch). Its size
:math:`\|S_k\| \propto N^{\alpha_2-k(1/2-\alpha_1)}` holds almost by construction
(:math:`\|a^{\circ(k+1)}\|\propto N^{-k/2}`); the evidence that the theory describes the
network is that the *exact* :math:`T_k` is that spike: its top singular vectors point along
:math:`a^{\circ(k+1)}` and :math:`u_k`, and :math:`\|T_k-S_k\|_{op}` shrinks relative to
:math:`\|S_k\|` as :math:`N` grows. This module measures exactly that
(:func:`term_diagnostics`, :func:`spike_experiment`), the strength a spike needs to be
counted as an outlier of :math:`W_2` (:func:`outlier_strength`), the extrapolation of a
measured power law to that strength (:func:`power_law_constant`, :func:`width_to_reach`), and,
for any activation (tanh included), the content of a matrix along the powers
:math:`a^{\circ m}` (:func:`power_projections`, :func:`power_projections_null`,
:func:`predicted_spikes`, :func:`rank_one_sum_singular_values`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse.linalg import svds

from ._validation import check_array, check_choice, check_int, check_pairs, check_real, check_rng
from .activations import get_activation
from .decomposition import RankOne, second_step_terms, signal_part
from .network import _check_activation
from .rescaling import StepFamily
from .spectra import bulk_edge, count_outliers
from .targets import Link, get_link
from .training import TwoStepRun, run_two_steps

#: Relative accuracy asked of ARPACK. The chapters compare singular values and
#: cosines at the 1e-3 level; machine precision costs several times more iterations.
SVDS_TOL = 1e-9


def _top(M, k=1, seed=0):
    """Top-k singular triplets (descending) of a dense matrix, ARPACK with a seeded start."""
    v0 = np.random.default_rng(seed).standard_normal(min(M.shape)).astype(M.dtype)
    U, s, Vt = svds(M, k=k, v0=v0, tol=SVDS_TOL, solver="arpack")
    order = np.argsort(s)[::-1]
    return s[order], U[:, order], Vt[order]


def _top_values(M, k, seed=0):
    v0 = np.random.default_rng(seed).standard_normal(min(M.shape)).astype(M.dtype)
    s = svds(M, k=k, v0=v0, tol=SVDS_TOL, solver="arpack", return_singular_vectors=False)
    return np.sort(s)[::-1]


def _cos(x, y) -> float:
    nx, ny = np.linalg.norm(x), np.linalg.norm(y)
    return float(abs(x @ y) / (nx * ny)) if nx > 0 and ny > 0 else 0.0


def term_diagnostics(run: TwoStepRun, kind: str = "auto", terms=None, vectors: bool = False) -> dict:
    r"""For every exact term :math:`T_k`, its size, its predicted spike, and how well they match.

    Parameters
    ----------
    run : TwoStepRun
        With a :class:`~twostep.activations.PolynomialActivation` of degree ``L``.
    kind : {"auto", "mean", "reuse"}
        Which signal part to compare with (see :func:`twostep.signal_part`); ``"auto"``
        uses the reuse-aware :math:`\tilde S_k` for a reused batch and :math:`S_k` for a fresh one.
    terms : list of ndarray, optional
        The exact terms, if already computed (:func:`twostep.second_step_terms`).
    vectors : bool
        Also return the top singular vectors of each :math:`T_k`.

    Returns
    -------
    dict of ndarray, each of shape ``(L,)`` indexed by ``k``
        ``signal``: :math:`\|S_k\|`; ``top``: :math:`s_1(T_k)`;
        ``residual``: :math:`\|T_k-S_k\|_{op}`; ``left``: :math:`|\cos(\hat\ell_k, a^{\circ(k+1)})|`
        for the top left singular vector :math:`\hat\ell_k` of :math:`T_k`; ``right``:
        :math:`|\cos(\hat r_k, \text{right vector of }S_k)|`; ``memorisation``:
        :math:`\max_j|\cos(\hat r_k, x_j)|` over the second batch; ``localisation``:
        :math:`\max_i|(\hat\ell_k)_i|` (1 if the left vector is a single neuron);
        ``localisation_signal``: the same for :math:`a^{\circ(k+1)}/\|a^{\circ(k+1)}\|`;
        ``scale``: :math:`\eta_2\eta_1^k`, the factor by which :math:`T_k` depends on the step
        sizes (:mod:`twostep.rescaling`). With ``vectors=True`` also ``U`` ``(L, N)`` and
        ``Vt`` ``(L, d)``.
    """
    if not isinstance(run, TwoStepRun):
        raise TypeError(f"run must be a TwoStepRun (from run_two_steps), got {type(run).__name__}")
    kind = check_choice(kind, "kind", ("auto", "mean", "reuse"))
    if not isinstance(vectors, bool):
        raise TypeError(f"vectors must be a bool, got {type(vectors).__name__}")
    if terms is None:
        terms = second_step_terms(run)
    L = run.activation.degree
    if not isinstance(terms, (list, tuple)) or len(terms) != L:
        raise ValueError(f"terms must be a list of the L = {L} exact terms, got {type(terms).__name__}")
    keys = ("signal", "top", "residual", "left", "right", "memorisation", "localisation",
            "localisation_signal", "scale")
    out = {key: np.zeros(L) for key in keys}
    if vectors:
        out["U"] = np.zeros((L, run.N))
        out["Vt"] = np.zeros((L, run.d))
    xnorm = np.linalg.norm(run.X2, axis=1)
    for k, T in enumerate(terms):
        T = check_array(T, f"terms[{k}]", shape=(run.N, run.d), dtype=T.dtype)
        S = signal_part(run, k, kind)
        s, U, Vt = _top(T, 1)
        R = T - np.outer((S.value * S.left).astype(T.dtype), S.right.astype(T.dtype))
        out["signal"][k] = S.value
        out["top"][k] = s[0]
        out["residual"][k] = _top_values(R, 1)[0]
        del R
        out["left"][k] = _cos(U[:, 0].astype(float), S.left)
        out["right"][k] = _cos(Vt[0].astype(float), S.right)
        out["memorisation"][k] = float(np.max(np.abs(run.X2 @ Vt[0]) / xnorm)) / float(
            np.linalg.norm(Vt[0]))
        out["localisation"][k] = float(np.max(np.abs(U[:, 0])) / np.linalg.norm(U[:, 0]))
        out["localisation_signal"][k] = float(np.max(np.abs(S.left))) if S.value > 0 else 0.0
        out["scale"][k] = run.eta2 * run.eta1 ** k
        if vectors:
            out["U"][k] = U[:, 0]
            out["Vt"][k] = Vt[0]
    return out


def outlier_strength(ratio: float, margin: float = 0.05) -> float:
    r"""Spike strength :math:`\theta` at which a rank-one spike on :math:`W_0` is counted as an outlier.

    A rank-one :math:`\theta\ell r^\top` added to :math:`W_0` (:math:`N\times d`, entries
    :math:`N(0,1/d)`, :math:`\gamma = N/d`) produces the singular value
    :math:`s_\star(\theta) = \sqrt{(1+\theta^2)(\gamma+\theta^2)}/\theta` above the BBP threshold
    :math:`\theta>\gamma^{1/4}` (:mod:`twostep.spiked`). :func:`twostep.count_outliers` counts
    values above :math:`(1+m)(1+\sqrt\gamma)`; solving :math:`s_\star(\theta) = (1+m)(1+\sqrt\gamma)`
    for :math:`t=\theta^2` gives :math:`t^2 + (1+\gamma-e^2)t + \gamma = 0`, :math:`e=(1+m)(1+\sqrt\gamma)`,
    whose larger root is returned as :math:`\theta=\sqrt t`. For ``margin = 0`` this is
    :math:`\gamma^{1/4}`.

    Parameters
    ----------
    ratio : float
        :math:`\gamma = N/d > 0`.
    margin : float
        Relative margin ``m >= 0`` of :func:`twostep.count_outliers`.
    """
    g = check_real(ratio, "ratio", low=0.0, low_open=True)
    m = check_real(margin, "margin", low=0.0)
    e2 = ((1 + m) * bulk_edge(g)) ** 2
    b = e2 - 1 - g
    disc = max(b * b - 4 * g, 0.0)
    return float(math.sqrt((b + math.sqrt(disc)) / 2))


def power_law_constant(N, size, exponent: float) -> tuple[float, float]:
    r"""Least-squares constant :math:`C` of :math:`\text{size}\approx C\,N^{\text{exponent}}` with the exponent fixed.

    Parameters
    ----------
    N, size : array_like, shape (m,)
        Positive widths and measured sizes (several seeds per width are fine).
    exponent : float

    Returns
    -------
    C : float
        :math:`\exp\big(\overline{\log\text{size} - \text{exponent}\log N}\big)`.
    se_log : float
        Standard error of :math:`\log C` (NaN for a single point).
    """
    N = check_array(N, "N", ndim=1)
    size = check_array(size, "size", shape=N.shape)
    e = check_real(exponent, "exponent")
    if np.any(N <= 0) or np.any(size <= 0):
        raise ValueError("N and size must be positive")
    r = np.log(size) - e * np.log(N)
    se = float(r.std(ddof=1) / math.sqrt(r.size)) if r.size > 1 else float("nan")
    return float(math.exp(r.mean())), se


def width_to_reach(threshold: float, constant: float, exponent: float) -> float:
    r"""The width :math:`N^\star` with :math:`C\,(N^\star)^{e} = \text{threshold}`.

    Returns :math:`(\text{threshold}/C)^{1/e}` for :math:`e>0`; for :math:`e\le0` the size never
    grows, and the result is ``1.0`` if :math:`C` already reaches the threshold at
    :math:`N=1` and ``inf`` otherwise. This is an extrapolation of a power law fitted at the
    simulated sizes, nothing more.
    """
    t = check_real(threshold, "threshold", low=0.0, low_open=True)
    C = check_real(constant, "constant", low=0.0, low_open=True)
    e = check_real(exponent, "exponent")
    if e <= 0:
        return 1.0 if C >= t else math.inf
    return float((t / C) ** (1.0 / e))


def power_projections(M, a, powers: int) -> np.ndarray:
    r"""Norms of the components of ``M`` along the orthonormalised powers of ``a``.

    Let :math:`q_0, \dots, q_{K-1}` be the Gram--Schmidt orthonormalisation (in this order) of
    :math:`a, a^{\circ2}, \dots, a^{\circ K}`, so that :math:`q_m` is the part of
    :math:`a^{\circ(m+1)}` that the lower powers do not explain. Returns
    :math:`\|q_m^\top M\|` for :math:`m = 0..K-1`, shape ``(K,)``. The :math:`k`-th spike of the
    second update, :math:`\propto a^{\circ(k+1)}u_k^\top`, contributes to :math:`m\le k` only, so a
    missing term shows up as a missing component.

    Parameters
    ----------
    M : ndarray, shape (N, d)
    a : ndarray, shape (N,)
    powers : int
        ``K >= 1``; at most 8 (higher powers are numerically collinear).
    """
    M = check_array(M, "M", ndim=2)
    a = check_array(a, "a", shape=(M.shape[0],)).astype(float)
    K = check_int(powers, "powers", 1)
    if K > 8:
        raise ValueError(f"powers must be in [1, 8], got {K}")
    A = np.stack([a ** (m + 1) / np.linalg.norm(a ** (m + 1)) for m in range(K)], axis=1)
    Q, _ = np.linalg.qr(A)
    return np.linalg.norm(Q.T.astype(M.dtype) @ M, axis=1).astype(float)


def power_projections_null(M, a, powers: int, rng: np.random.Generator, draws: int = 20) -> np.ndarray:
    r"""Chance level for :func:`power_projections`: random-sign versions of :math:`q_m`, orthogonal to all powers.

    For each draw, :math:`\tilde q_m = q_m\odot\epsilon` with uniform signs :math:`\epsilon_i=\pm1`,
    projected onto the orthogonal complement of :math:`a, \dots, a^{\circ K}` and normalised.
    Returns the mean of :math:`\|\tilde q_m^\top M\|` over ``draws``, shape ``(K,)``. The vector
    keeps (up to the projection) the weight :math:`|q_m|` puts on the neurons with large
    :math:`|a_i|`, whose rows of the update are larger, but it has no component along any
    power of :math:`a`, so it measures what a projection picks up from the non-spike part.
    """
    M = check_array(M, "M", ndim=2)
    a = check_array(a, "a", shape=(M.shape[0],)).astype(float)
    K = check_int(powers, "powers", 1)
    if K > 8:
        raise ValueError(f"powers must be in [1, 8], got {K}")
    check_rng(rng)
    draws = check_int(draws, "draws", 1)
    A = np.stack([a ** (m + 1) / np.linalg.norm(a ** (m + 1)) for m in range(K)], axis=1)
    Q, _ = np.linalg.qr(A)
    total = np.zeros(K)
    for _ in range(draws):
        R = Q * rng.choice([-1.0, 1.0], size=(M.shape[0], 1))
        R -= Q @ (Q.T @ R)
        R /= np.linalg.norm(R, axis=0, keepdims=True)
        total += np.linalg.norm(R.T.astype(M.dtype) @ M, axis=1)
    return total / draws


def power_cosine(i: int, j: int) -> float:
    r"""Limit of the cosine between :math:`a^{\circ i}` and :math:`a^{\circ j}` for :math:`a` with i.i.d. centred Gaussian entries.

    :math:`\cos(a^{\circ i}, a^{\circ j}) \to m_{i+j}/\sqrt{m_{2i}m_{2j}}` with the Gaussian
    moments :math:`m_p = \mathbb{E}z^p = (p-1)!!` for even :math:`p` and 0 for odd :math:`p`
    (law of large numbers over the :math:`N` entries; the scale of :math:`a` cancels).
    E.g. :math:`\cos(a, a^{\circ3})\to 3/\sqrt{15}`, :math:`\cos(a^{\circ2}, a^{\circ4})\to 15/\sqrt{315}`.
    """
    i, j = check_int(i, "i", 1), check_int(j, "j", 1)

    def m(p):
        return 0.0 if p % 2 else float(math.prod(range(p - 1, 0, -2)))

    return m(i + j) / math.sqrt(m(2 * i) * m(2 * j))


def rank_one_sum_singular_values(parts) -> np.ndarray:
    r"""Singular values of :math:`\sum_k \theta_k\ell_kr_k^\top` for a list of :class:`RankOne`, descending.

    With :math:`L = [\ell_1,\dots,\ell_K] = Q_LR_L` and :math:`R = [r_1,\dots,r_K] = Q_RR_R`
    (thin QR), the sum is :math:`Q_L\,R_L\operatorname{diag}(\theta)R_R^\top\,Q_R^\top`, so its
    non-zero singular values are those of the :math:`K\times K` core; shape ``(K,)``. The
    vectors need not be orthogonal: this is how spikes with correlated left vectors combine.
    """
    parts = list(parts)
    if not parts or not all(isinstance(p, RankOne) for p in parts):
        raise TypeError("parts must be a non-empty list of RankOne")
    left = np.stack([np.asarray(p.left, dtype=float) for p in parts], axis=1)
    right = np.stack([np.asarray(p.right, dtype=float) for p in parts], axis=1)
    if left.shape[0] < len(parts) or right.shape[0] < len(parts):
        raise ValueError("parts must have at least as many entries as there are parts")
    values = np.array([float(p.value) for p in parts])
    _, RL = np.linalg.qr(left)
    _, RR = np.linalg.qr(right)
    return np.linalg.svd(RL @ np.diag(values) @ RR.T, compute_uv=False)


def predicted_spikes(run: TwoStepRun, orders: int) -> list[RankOne]:
    r"""The signal parts :math:`S_0,\dots,S_{K-1}` for any activation with Hermite coefficients.

    Same formula as :func:`twostep.signal_part` with ``kind="mean"``,
    :math:`S_k = \eta_2\mu_{k+1}(\eta_1\mu_1)^k/k!\;a^{\circ(k+1)}u_k^\top`, but with
    :math:`\mu_k` from :meth:`Activation.hermite_coefficients`, so it also applies to tanh
    (where the even :math:`\mu_k` vanish and with them :math:`S_1, S_3, \dots`). For a
    polynomial of degree ``L``, :math:`S_k = 0` for :math:`k\ge L`.
    """
    if not isinstance(run, TwoStepRun):
        raise TypeError(f"run must be a TwoStepRun (from run_two_steps), got {type(run).__name__}")
    K = check_int(orders, "orders", 1)
    mu = np.array(run.activation.hermite_coefficients(K), dtype=float)
    mu[np.abs(mu) < 1e-12] = 0.0  # quadrature noise (~1e-17) on coefficients zero by symmetry
    s = run.X2 @ run.v
    out = []
    for k in range(K):
        u = run.X2.T @ (run.y2 * s ** k) / run.n
        left = run.a ** (k + 1)
        scale = run.eta2 * mu[k + 1] * (run.eta1 * mu[1]) ** k / math.factorial(k)
        value = abs(scale) * float(np.linalg.norm(left)) * float(np.linalg.norm(u))
        if value == 0:
            out.append(RankOne(0.0, np.zeros(run.N), np.zeros(run.d)))
        else:
            out.append(RankOne(value, np.sign(scale) * left / np.linalg.norm(left),
                               u / np.linalg.norm(u)))
    return out


def _resolve(activation, link):
    if isinstance(activation, str):
        activation = get_activation(activation)
    _check_activation(activation)
    if isinstance(link, str):
        link = get_link(link)
    if not isinstance(link, Link):
        raise TypeError(f"link must be a Link or a link name, got {type(link).__name__}")
    return activation, link


def _check_settings(settings, name):
    return [(check_real(a1, f"{name}[{i}][0]", low=0.0, high=0.5, high_open=True),
             check_real(a2, f"{name}[{i}][1]", low=0.0, high=0.5, high_open=True))
            for i, (a1, a2) in enumerate(check_pairs(settings, name, "an (alpha1, alpha2) pair"))]


def spike_experiment(rng: np.random.Generator, N: int, batch: str, activation="poly4",
                     link="he1", c: float = 0.2, alpha1: float = 0.4, alpha2: float = 0.25,
                     settings=(), grid=(), n_top: int = 6, margin: float = 0.05,
                     dtype="float32") -> dict:
    r"""One draw, :math:`N = n = d`: the term diagnostics and the spectrum of :math:`W_2` at many step sizes.

    Runs two steps with :math:`\eta_t = cN^{\alpha_t}` (reference exponents ``alpha1``,
    ``alpha2``), measures :func:`term_diagnostics`, and then, using the exact step-size
    rescaling of :class:`~twostep.rescaling.StepFamily` on the same draw (same constant ``c``):

    * for every :math:`(\alpha_1,\alpha_2)` in ``settings``: the top ``n_top`` singular values
      and the raw outlier counts of :math:`W_2` and :math:`W_1`; the singular values of the
      predicted spike part :math:`\eta_1\mu_1av^\top + \sum_kS_k` (:func:`rank_one_sum_singular_values`;
      reuse-aware :math:`\tilde S_k` for a reused batch); and the comparison of :math:`W_2` with
      :math:`W_{\rm lin} = W_1 + T_0` (one step of size :math:`\eta_1+\eta_2` when reused):
      :math:`\|W_2 - W_{\rm lin}\|_{op} = \|\sum_{k\ge1}T_k\|_{op}` and cosines of top right
      singular vectors with each other and with :math:`\beta^*`;
    * for every point of ``grid``: the raw outlier counts of :math:`W_2` and :math:`W_1` only.

    Parameters
    ----------
    rng : numpy.random.Generator
    N : int
        Width, batch size and dimension (:math:`\psi = \phi = 1`).
    batch : {"reused", "fresh"}
    activation : str or PolynomialActivation
    link : str or Link
        Single-index target link (e.g. ``"he1"``).
    c, alpha1, alpha2 : float
        Reference step sizes :math:`c N^{\alpha_t}`.
    settings, grid : sequence of (alpha1, alpha2)
    n_top : int
        Number of top singular values computed per matrix (a count equal to ``n_top`` means
        "at least").
    margin : float
        Passed to :func:`twostep.count_outliers` (edge :math:`2(1+\text{margin})`).
    dtype : {"float32", "float64"}

    Returns
    -------
    dict
        The arrays of :func:`term_diagnostics` (shape ``(L,)``) and the step-free sizes
        ``top_free``, ``signal_free``, ``residual_free`` (divided by ``scale``); per setting
        (leading axis ``len(settings)``): ``settings_top`` ``(., n_top)``, ``settings_count``,
        ``settings_count_W1``, ``settings_spikes`` ``(., L + 1)``, ``settings_higher``,
        ``settings_lin_overlap``, ``settings_beta_two``, ``settings_beta_lin``; per grid point:
        ``grid_count``, ``grid_count_W1``.
    """
    from .first_step import first_step_spike

    check_rng(rng)
    N = check_int(N, "N", 8)
    activation, link = _resolve(activation, link)
    settings = _check_settings(settings, "settings")
    grid = _check_settings(grid, "grid")
    n_top = check_int(n_top, "n_top", 1)
    if n_top >= N - 1:
        raise ValueError(f"n_top must be < N - 1 = {N - 1}, got {n_top}")
    dtype = check_choice(dtype, "dtype", ("float32", "float64"))
    run = run_two_steps(N, N, N, activation, link, ((c, alpha1), (c, alpha2)), batch, rng,
                        dtype=np.dtype(dtype))
    terms = second_step_terms(run)
    out = term_diagnostics(run, terms=terms)
    for key in ("top", "signal", "residual"):
        out[key + "_free"] = out[key] / out["scale"]
    L = run.activation.degree
    first = first_step_spike(run.a, run.X1, run.y1, run.activation)   # per unit eta1
    parts_free = [signal_part(run, k) for k in range(L)]               # at the reference steps
    beta = run.teacher.directions[0].astype(float)
    eta1_ref, eta2_ref = run.eta1, run.eta2
    family = StepFamily(run, terms)  # rescales the terms in place
    del run, terms
    edge = bulk_edge(1.0)

    def right_vector(M):
        return _top(M, 1)[2][0].astype(float)

    m = len(settings)
    for key, shape in (("settings_top", (m, n_top)), ("settings_spikes", (m, L + 1))):
        out[key] = np.zeros(shape)
    for key in ("settings_higher", "settings_lin_overlap", "settings_beta_two", "settings_beta_lin"):
        out[key] = np.zeros(m)
    out["settings_count"] = np.zeros(m, dtype=int)
    out["settings_count_W1"] = np.zeros(m, dtype=int)
    for i, (a1, a2) in enumerate(settings):
        e1, e2 = c * N ** a1, c * N ** a2
        W2 = family.W2(e1, e2)
        s = _top_values(W2, n_top)
        out["settings_top"][i] = s
        out["settings_count"][i] = count_outliers(s, edge, margin)
        out["settings_count_W1"][i] = count_outliers(_top_values(family.W1(e1), n_top), edge, margin)
        parts = [RankOne(first.value * e1, first.left, first.right)] + [
            RankOne(p.value * e2 * e1 ** k / (eta2_ref * eta1_ref ** k), p.left, p.right)
            for k, p in enumerate(parts_free)]
        out["settings_spikes"][i] = rank_one_sum_singular_values(parts)
        out["settings_higher"][i] = _top_values(family.higher_orders(e1, e2), 1)[0]
        r2, rlin = right_vector(W2), right_vector(family.linearised(e1, e2))
        del W2
        out["settings_lin_overlap"][i] = _cos(r2, rlin)
        out["settings_beta_two"][i] = _cos(r2, beta)
        out["settings_beta_lin"][i] = _cos(rlin, beta)

    out["grid_count"] = np.zeros(len(grid), dtype=int)
    out["grid_count_W1"] = np.zeros(len(grid), dtype=int)
    cache1 = {}
    for i, (a1, a2) in enumerate(grid):
        e1, e2 = c * N ** a1, c * N ** a2
        out["grid_count"][i] = count_outliers(_top_values(family.W2(e1, e2), n_top), edge, margin)
        if a1 not in cache1:
            cache1[a1] = count_outliers(_top_values(family.W1(e1), n_top), edge, margin)
        out["grid_count_W1"][i] = cache1[a1]
    return out
