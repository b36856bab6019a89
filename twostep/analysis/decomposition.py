r"""The exact decomposition of the second update into Hermite-order terms.

Write :math:`P = W_0X_2^\top` and :math:`\Delta = (W_1 - W_0)X_2^\top`
(both :math:`N\times n`). For a polynomial :math:`\sigma` of degree :math:`L`,
Taylor's formula is exact:
:math:`\sigma'(P+\Delta) = \sum_{k=0}^{L-1}\sigma^{(k+1)}(P)\odot\Delta^{\circ k}/k!`, so

.. math::
    W_2 - W_1 = \sum_{k=0}^{L-1} T_k,\qquad
    T_k = \frac{\eta_2}{n\,k!}\operatorname{diag}(a)
          \big[\sigma^{(k+1)}(P)\odot\Delta^{\circ k}\odot\mathbf 1y_2^\top\big]X_2 .

Replacing :math:`\Delta` by its rank-one part :math:`\eta_1\mu_1 a s^\top`
(:math:`s = X_2v`, :math:`v = X_1^\top y_1/n`) and :math:`\sigma^{(k+1)}(P)`
by its mean :math:`\mu_{k+1}` gives the *signal part* of :math:`T_k`,

.. math::
    S_k = \frac{\eta_2\mu_{k+1}(\eta_1\mu_1)^k}{k!}\,a^{\circ(k+1)}u_k^\top,
    \qquad u_k = \frac1n X_2^\top\big(y_2\odot s^{\circ k}\big).

With a reused batch the first update carries, for sample :math:`j`, the
self-term :math:`\eta_1 a_i\sigma'(P_{ij})y_j\|x_j\|^2/n`: it multiplies the
neuron's own :math:`\sigma'(P_{ij})`, not its mean :math:`\mu_1`. Averaging
over :math:`z = P_{ij}\sim N(0,1)` jointly gives the reuse-aware signal part

.. math::
    \tilde S_k = \frac{\eta_2\eta_1^k}{k!}\,a^{\circ(k+1)}\tilde u_k^\top,\quad
    \tilde u_k = \frac1nX_2^\top(y_2\odot m_k),\quad
    m_{k,j} = \mathbb{E}_z\Big[\sigma^{(k+1)}(z)\big(\mu_1 s_j +
              (\sigma'(z)-\mu_1)\,y_j\|x_j\|^2/n\big)^k\Big],

which equals :math:`S_k` for a fresh batch (where the self-term is absent).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.sparse.linalg import LinearOperator

from .._validation import check_array, check_bool, check_choice, check_int, check_type
from ..model.activations import (Activation, PolynomialActivation, as_activation,
                                 check_activation, namespace)
from ..model.hermite import DEFAULT_POINTS, _rule
from ..model.steps import TwoStepRun

SIGNALS = ("auto", "mean", "reuse")


def _check_run(run) -> TwoStepRun:
    check_type(run, "run", TwoStepRun, "a TwoStepRun (from run_two_steps)")
    if not isinstance(run.activation, PolynomialActivation):
        raise ValueError(
            f"the exact decomposition needs a PolynomialActivation, got {run.activation.name}")
    return run


def _check_k(k, L):
    # An order k of a degree-L polynomial activation's terms: 0 <= k <= L - 1.
    k = check_int(k, "k", 0)
    if k > L - 1:
        raise ValueError(f"k must be in [0, L-1] = [0, {L - 1}] for a degree-{L} activation, got {k}")
    return k


def pre_activations(run: TwoStepRun) -> tuple:
    r""":math:`P = W_0X_2^\top` and :math:`\Delta = (W_1 - W_0)X_2^\top`, both ``(N, n)``: the two
    products every exact term needs, computed once and passed on as ``pre=(P, D)``; a run of
    ``two_steps(..., keep_pre=True)`` already holds them (``run.pre``)."""
    return _pre_activations(_check_run(run))


def _pre_activations(run):
    if run.pre is not None:   # kept by the steps (twostep.model.steps.two_steps, keep_pre)
        return run.pre
    return run.W0 @ run.X2.T, (run.W1 - run.W0) @ run.X2.T


def _check_pre(run, pre):
    if pre is None:
        return _pre_activations(run)
    if not (isinstance(pre, tuple) and len(pre) == 2
            and all(tuple(getattr(x, "shape", ())) == (run.N, run.n) for x in pre)):
        raise ValueError(f"pre must be the pair (P, D) of pre_activations(run), two ({run.N}, "
                         f"{run.n}) arrays, got {type(pre).__name__}")
    return pre


def _neuron_sample_factor(run, k, P, D):
    # sigma^(k+1)(P) * Delta^k, (N, n): T_k = eta2/(n k!) diag(a) [factor * 1 y2^T] X2.
    M = run.activation._derivative(P, k + 1)
    for _ in range(k):      # not D ** k: numpy's float32 pow is far slower than products
        M *= D
    return M


def _term_parts(run, k, P, D):
    # T_k = c M X2 with M = diag(a) [factor * 1 y2^T] (N, n) and c = eta2/(n k!).
    M = _neuron_sample_factor(run, k, P, D)
    M *= run.y2[None, :]
    M *= run.a[:, None]
    return M, run.eta2 / (run.n * math.factorial(k))


def _term(run, k, P, D):
    M, c = _term_parts(run, k, P, D)
    T = M @ run.X2
    T *= c
    return T


def _term_operator(run, k, P, D) -> LinearOperator:
    # T_k applied without forming it: a product with a vector passes over M and over X2 once
    # each, where forming T_k is an N x n x d product, a large share of a reuse run.
    M, c = _term_parts(run, k, P, D)
    X2, dt = run.X2, M.dtype
    c = dt.type(c)

    def matvec(x):
        return c * (M @ (X2 @ np.ravel(x).astype(dt, copy=False)))

    def rmatvec(u):
        return c * (X2.T @ (M.T @ np.ravel(u).astype(dt, copy=False)))

    return LinearOperator((run.N, run.d), matvec=matvec, rmatvec=rmatvec, dtype=dt)


def _term_weights(run, k, left, P, D):
    # The weights w = M_k^T left (n,) with which the inputs make up left^T T_k = w^T X2 (T_k
    # itself never formed): w_j = eta2/(n k!) y_j sum_i left_i a_i factor_ij.
    w = (left * run.a) @ _neuron_sample_factor(run, k, P, D)
    w *= run.y2
    w *= run.eta2 / (run.n * math.factorial(k))
    return w


def second_step_term(run: TwoStepRun, k: int, pre=None) -> np.ndarray:
    r"""The exact term :math:`T_k` of :math:`W_2 - W_1`, shape ``(N, d)``; ``pre`` is
    :func:`pre_activations` of ``run`` if already computed."""
    run = _check_run(run)
    k = _check_k(k, run.activation.degree)
    return _term(run, k, *_check_pre(run, pre))


def second_step_term_operator(run: TwoStepRun, k: int, pre=None) -> LinearOperator:
    r"""The exact term :math:`T_k` of :func:`second_step_term` as a ``LinearOperator``
    ``(N, d)``, never formed: :math:`T_kx = \frac{\eta_2}{n\,k!}\,a\odot
    \big(M_k(X_2x)\big)` with :math:`M_k = \sigma^{(k+1)}(P)\odot\Delta^{\circ k}\odot
    \mathbf 1y_2^\top` (``(N, n)``), for :func:`twostep.top_singular`."""
    run = _check_run(run)
    k = _check_k(k, run.activation.degree)
    return _term_operator(run, k, *_check_pre(run, pre))


def second_step_terms(run: TwoStepRun) -> list[np.ndarray]:
    r"""All exact terms :math:`T_0, \dots, T_{L-1}` (each ``(N, d)``); they sum to :math:`W_2 - W_1`."""
    return _second_step_terms(_check_run(run))


def _second_step_terms(run, reuse_first=False):
    # With ``reuse_first`` and a reused batch, T_0 = eta2 G_1 = (eta2/eta1)(W1 - W0) (the second
    # step's gradient at W_0 on X_1 is the first step's) is taken from the first update,
    # saving one N x n x d product; equal up to float rounding of W1 - W0.
    P, D = _pre_activations(run)
    start = 1 if reuse_first and run.batch == "reused" else 0
    terms = [_term(run, k, P, D) for k in range(start, run.activation.degree)]
    if start:
        T0 = run.W1 - run.W0
        T0 *= T0.dtype.type(run.eta2 / run.eta1)
        terms.insert(0, T0)
    return terms


@dataclass
class RankOne:
    r"""A rank-one matrix :math:`\text{value}\cdot\ell r^\top` with unit vectors
    ``left`` (shape ``(N,)``) and ``right`` (shape ``(d,)``); ``value >= 0``
    is its only non-zero singular value."""

    value: float
    left: np.ndarray
    right: np.ndarray

    @classmethod
    def from_vectors(cls, scale: float, left, right) -> "RankOne":
        r""":math:`\text{scale}\cdot\ell r^\top` for any (not necessarily unit) vectors,
        normalised: ``value`` :math:`= |\text{scale}|\,\|\ell\|\,\|r\|`, the sign of ``scale``
        carried by ``left``. A zero product gives ``value = 0`` and zero vectors."""
        xp = namespace(left)[0]
        norm = np.linalg.norm if xp is np else xp.linalg.vector_norm   # numpy, or a device
        nl, nr = float(norm(left)), float(norm(right))
        value = abs(float(scale)) * nl * nr
        if value == 0:
            return cls(0.0, left * 0, right * 0)
        sign = np.sign(scale) if xp is np else math.copysign(1.0, scale)
        return cls(float(value), sign * left / nl, right / nr)

    def scaled(self, factor: float) -> "RankOne":
        """The same spike with its singular value multiplied by ``factor >= 0``."""
        return RankOne(self.value * factor, self.left, self.right)

    def matrix(self) -> np.ndarray:
        """The dense ``(N, d)`` matrix."""
        return self.value * np.outer(self.left, self.right)


def weighted_direction(X, y, weights) -> np.ndarray:
    r""":math:`X^\top(y\odot w)/n` for ``X`` ``(n, d)``, ``y`` and ``w`` ``(n,)`` (or ``w`` ``(n, m)``:
    then shape ``(m, d)``). With :math:`w = 1` this is the first-step direction
    :math:`v`; with :math:`w = s^{\circ k}` the signal direction :math:`u_k`; with
    :math:`w = m_k` its reuse-aware version :math:`\tilde u_k`."""
    # (y w)^T X rather than X^T (y w): with float32 X and float64 weights, numpy casts X to
    # float64 row-major for the former and through its transposed view for the latter, about
    # three times slower; the same product.
    if getattr(weights, "ndim", 0) == 2:
        return ((y[:, None] * weights).T @ X) / X.shape[0]
    return (y * weights) @ X / X.shape[0]


def signal_direction(run: TwoStepRun, k: int) -> np.ndarray:
    r""":math:`u_k = X_2^\top(y_2\odot s^{\circ k})/n` with :math:`s = X_2 v`, shape ``(d,)``."""
    run = _check_run(run)
    k = _check_k(k, run.activation.degree)
    return weighted_direction(run.X2, run.y2, (run.X2 @ run.v) ** k)


def _weight_arguments(run, reused):
    # (mu_1 s, r) of the reuse-aware weights, r = y_j |x_j|^2 / n with the self-term and 0
    # without; device arrays take no numpy operands: Python scalars, zeros on the device.
    on_host = namespace(run.X2)[0] is np
    if reused:
        r = _self_term(run.X2, run.y2)
    else:
        r = np.zeros(run.n) if on_host else run.y2 * 0.0
    mu1 = run.activation.mu[1] if on_host else float(run.activation.mu[1])
    return mu1 * (run.X2 @ run.v), r


def _self_term(X, y):
    # r_j = y_j |x_j|^2 / n: sample j's own contribution to <x_j, v> under reuse.
    xp = namespace(X)[0]
    sq = np.einsum("ij,ij->i", X, X) if xp is np else xp.sum(X * X, axis=1)
    return y * sq / X.shape[0]


def signal_part(run: TwoStepRun, k: int, kind: str = "auto", corrected: bool = False) -> RankOne:
    r"""The rank-one signal part of :math:`T_k`.

    ``kind="mean"`` gives :math:`S_k` (:math:`\sigma^{(k+1)}` and :math:`\sigma'`
    replaced by their means); ``kind="reuse"`` gives :math:`\tilde S_k` (self-term
    kept with the neuron's own :math:`\sigma'`); ``"auto"`` picks ``"reuse"`` for a
    reused batch and ``"mean"`` for a fresh one (where the two coincide).

    ``corrected=True`` adds the neuron-specific part of the first update (the book's
    derivation, chapter *Two steps*): the move of neuron :math:`i` on input :math:`x_l` is
    :math:`\eta_1a_i(\mu_1s_l + \rho_{il})` with :math:`\rho_{il} = \langle r_i, x_l\rangle`
    approximately :math:`N(0, R^2)` (:func:`fluctuation_variance`), and averaging the
    :math:`k`-th power over :math:`\rho` turns :math:`(\mu_1 s)^k` into
    :math:`q_k(s) = \mathbb E_g[(\mu_1s + Rg)^k] = \sum_{m\ \rm even}\binom km(m-1)!!R^m(\mu_1s)^{k-m}`:

    .. math::
        S_k^{\rm corr} = \frac{\eta_2\eta_1^k}{k!}\,a^{\circ(k+1)}\Big(\frac1nX_2^\top
        \big(y_2\odot m_k^{\rm corr}\big)\Big)^\top,\qquad
        m^{\rm corr}_{k,j} = \sum_{m\ \rm even}\binom km(m-1)!!\,R^m\,
        \mathbb E_z\big[\sigma^{(k+1)}(z)\big(\mu_1s_j + (\sigma'(z)-\mu_1)t_j\big)^{k-m}\big],

    with :math:`t_j = y_j\|x_j\|^2/n` for the reuse-aware kind on a reused batch and 0
    otherwise (then :math:`m^{\rm corr}_{k,j} = \mu_{k+1}q_k(s_j)`). Orders :math:`k = 0, 1` are
    unchanged; the left vector is the same.
    """
    run = _check_run(run)
    k = _check_k(k, run.activation.degree)
    return _signal_part(run, k, check_choice(kind, "kind", SIGNALS),
                        check_bool(corrected, "corrected"))


def _signal_part(run, k, kind, corrected):
    if kind == "auto":
        kind = "reuse" if run.batch == "reused" else "mean"
    left = run.a ** (k + 1)
    if kind == "mean" and not (corrected and k >= 2):
        mu = run.activation.mu
        scale = run.eta2 * mu[k + 1] * (run.eta1 * mu[1]) ** k / math.factorial(k)
        return RankOne.from_vectors(scale, left,
                                    weighted_direction(run.X2, run.y2, (run.X2 @ run.v) ** k))
    if not (corrected and k >= 2):
        weights = reuse_weight(run.activation, k, *_weight_arguments(run, run.batch == "reused"))
    else:
        reused = kind == "reuse" and run.batch == "reused"
        R2 = _fluctuation_variance(run, k)
        weights = corrected_weight(run.activation, k, *_weight_arguments(run, reused), R2)
    u = weighted_direction(run.X2, run.y2, weights)
    return RankOne.from_vectors(run.eta2 * run.eta1 ** k / math.factorial(k), left, u)


def signal_directions(X1, y1, ks, X2=None, y2=None, activation=None) -> np.ndarray:
    r"""The directions :math:`u_k = X_2^\top(y_2\odot (X_2v)^{\circ k})/n_2`, :math:`v = X_1^\top y_1/n_1`.

    They depend on the data only, not on the network's weights. With ``activation``
    given, the reuse-aware directions :math:`\tilde u_k = X_2^\top(y_2\odot m_k)/n_2` of
    :func:`twostep.signal_part` (``kind="reuse"``, weights :func:`reuse_weight`) instead.

    Parameters
    ----------
    X1 : ndarray, shape (n1, d)
    y1 : ndarray, shape (n1,)
    ks : sequence of int
        Orders :math:`k \ge 0` (at most :math:`L-1` with an activation of degree :math:`L`).
    X2, y2 : ndarray, shapes (n2, d) and (n2,), optional
        The second batch; omitted (both ``None``) means the first batch is reused.
    activation : PolynomialActivation or str, optional

    Returns
    -------
    ndarray, shape (len(ks), d)
    """
    X1 = check_array(X1, "X1", ndim=2)
    y1 = check_array(y1, "y1", shape=(X1.shape[0],))
    if (X2 is None) != (y2 is None):
        raise ValueError("give both X2 and y2 (fresh batch) or neither (reused batch)")
    reused = X2 is None
    if reused:
        X2, y2 = X1, y1
    else:
        X2 = check_array(X2, "X2", ndim=2, shape=(None, X1.shape[1]))
        y2 = check_array(y2, "y2", shape=(X2.shape[0],))
    if isinstance(ks, (int, np.integer)) or not len(ks):
        raise TypeError(f"ks must be a non-empty sequence of integers >= 0, got {ks!r}")
    if activation is not None:
        activation = polynomial_activation(activation)
    ks = [check_int(k, "k", 0) if activation is None else _check_k(k, activation.degree)
          for k in ks]
    s = X2 @ weighted_direction(X1, y1, 1.0)
    if activation is None:
        return weighted_direction(X2, y2, np.stack([s ** k for k in ks], axis=1))
    r = _self_term(X2, y2) if reused else np.zeros(X2.shape[0])
    return weighted_direction(X2, y2, np.stack(
        [reuse_weight(activation, k, activation.mu[1] * s, r) for k in ks], axis=1))


def polynomial_activation(activation) -> PolynomialActivation:
    """A :class:`PolynomialActivation` from itself or its name (``"poly4"``)."""
    activation = as_activation(activation)
    if not isinstance(activation, PolynomialActivation):
        raise TypeError("activation must be a PolynomialActivation or its name (e.g. 'poly4'), "
                        f"got {activation!r}")
    return activation


def reuse_weight(activation, k: int, mu1_s, r, power: int | None = None) -> np.ndarray:
    r"""The reuse-aware weight :math:`m_k(s, r) = \mathbb{E}_z[\sigma^{(k+1)}(z)(\mu_1 s + (\sigma'(z)-\mu_1)r)^p]`,
    :math:`p` = ``power`` (default :math:`k`), elementwise in ``mu1_s`` :math:`= \mu_1 s` and ``r``
    (same shapes), expanded binomially in :math:`r` with Gauss--Hermite moments of the
    activation (exact for a polynomial)."""
    # m_k = sum_m C(p, m) (mu_1 s)^(p-m) r^m e_m, e_m = E[sigma^(k+1)(z) (sigma'(z) - mu_1)^m].
    p = k if power is None else power
    z, w = _rule(60)
    d1 = activation._derivative(z, 1) - activation.mu[1]
    dk = activation._derivative(z, k + 1)
    e = [np.dot(w, dk * d1 ** m) for m in range(p + 1)]
    if namespace(mu1_s)[0] is not np:
        e = [float(x) for x in e]  # device arrays take Python scalars
    return sum(math.comb(p, m) * mu1_s ** (p - m) * r ** m * e[m] for m in range(p + 1))


def fluctuation_variance(run: TwoStepRun, k: int) -> float:
    r"""The variance :math:`R^2` of the neuron-specific part of the first update, as the
    :math:`k`-th spike sees it.

    Row :math:`i` of :math:`W_1 - W_0` is :math:`\eta_1a_i(\mu_1v + r_i)` with
    :math:`r_i = \frac1n\sum_j(\sigma'(\langle w_i,x_j\rangle)-\mu_1)y_jx_j`; returns the mean of
    :math:`\|r_i\|^2` weighted by :math:`a_i^{2(k+1)}`, the weight of neuron :math:`i` in
    :math:`a^{\circ(k+1)}`. Its limit is :func:`twostep.analysis.theory.fluctuation_variance_limit`,
    :math:`\mathbb E[y^2]\,\mathrm{Var}\,\sigma'(z)/\psi`.
    """
    run = _check_run(run)
    return _fluctuation_variance(run, check_int(k, "k", 0))


#: Entries of one float64 block of rows in :func:`fluctuation_variance` (2 MB: in cache).
_ROW_BLOCK = 1 << 18


def _fluctuation_variance(run, k):
    # The rows r_i from the update itself (no new gradient): (W1 - W0)_i / (eta1 a_i) - mu1 v,
    # in float64 over blocks of rows, so that the float64 copies are (rows, d), not (N, d),
    # on any array library (numpy, CuPy, PyTorch). Neurons with a_i near 0 lose precision here,
    # and the weight a_i^(2k+2) discards them.
    xp = namespace(run.W0)[0]
    f64, mu1 = xp.float64, float(run.activation.mu[1])
    a = xp.astype(run.a, f64)
    v = xp.astype(run.v, f64)[None, :]
    weights = a ** (2 * (k + 1))
    rows = max(1, _ROW_BLOCK // run.d)
    total = 0.0
    for i in range(0, run.N, rows):
        j = min(i + rows, run.N)           # the array API leaves out-of-range stops unspecified
        R = xp.astype(run.W1[i:j, :] - run.W0[i:j, :], f64)
        R /= run.eta1 * a[i:j, None]
        R -= mu1 * v
        total += float(xp.sum(weights[i:j] * xp.sum(R * R, axis=1)))
    return total / float(xp.sum(weights))


def corrected_weight(activation, k: int, mu1_s, r, R2: float) -> np.ndarray:
    r""":math:`m^{\rm corr}_k = \mathbb E_{z,g}[\sigma^{(k+1)}(z)(\mu_1s + (\sigma'(z)-\mu_1)r + Rg)^k]`
    for independent standard Gaussians :math:`z, g`, elementwise: expanding in :math:`g`,
    :math:`\sum_{m\ \rm even}\binom km(m-1)!!R^m` times :func:`reuse_weight` of power
    :math:`k-m`. ``R2 = 0`` gives :func:`reuse_weight`; ``r = 0`` gives
    :math:`\mu_{k+1}\mathbb E_g[(\mu_1s + Rg)^k]`."""
    return sum(math.comb(k, m) * math.prod(range(m - 1, 0, -2)) * R2 ** (m // 2)
               * reuse_weight(activation, k, mu1_s, r, power=k - m) for m in range(0, k + 1, 2))


def first_step_spike(a, X, y, activation: Activation) -> RankOne:
    r"""The rank-one part :math:`\mu_1\,a v^\top` of :math:`G=-\nabla L(W_0)`, :math:`v = X^\top y/n`,
    for ``a`` ``(N,)``, ``X`` ``(n, d)``, ``y`` ``(n,)`` and the activation's
    :math:`\mu_1 = \mathbb{E}[\sigma'(z)]`: ``value`` :math:`= |\mu_1|\,\|a\|\,\|v\|`,
    ``left`` :math:`=\operatorname{sign}(\mu_1)a/\|a\|`, ``right`` :math:`= v/\|v\|`."""
    X = check_array(X, "X", ndim=2)
    a = check_array(a, "a", ndim=1, dtype=X.dtype)
    y = check_array(y, "y", shape=(X.shape[0],), dtype=X.dtype)
    return _first_step_spike(a, X, y, check_activation(activation))


def _first_step_spike(a, X, y, activation):
    # first_step_spike of checked arrays, on any array library.
    mu1 = float(activation._hermite_coefficients(1, DEFAULT_POINTS)[1])
    return RankOne.from_vectors(mu1, a, weighted_direction(X, y, 1.0))
