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

import numpy as np
from scipy.sparse.linalg import LinearOperator

from .._validation import check_array, check_bool, check_choice, check_int
from ..model.activations import (Activation, PolynomialActivation, as_activation,
                                 check_activation)
from ..model.steps import TwoStepRun
# The decomposition's kernels and types live in the analysis' core module, below the other
# modules that use them; RankOne, weighted_direction, reuse_weight and corrected_weight are
# public here.
from ._core import (RankOne, check_order, check_pre, check_run, corrected_weight,  # noqa: F401
                    exact_term, first_step_spike_core, reuse_weight, run_pre_activations,
                    second_step_terms_core, self_term, signal_part_core, term_operator,
                    weighted_direction)

SIGNALS = ("auto", "mean", "reuse")


def pre_activations(run: TwoStepRun) -> tuple:
    r""":math:`P = W_0X_2^\top` and :math:`\Delta = (W_1 - W_0)X_2^\top`, both ``(N, n)``: the two
    products every exact term needs, computed once and passed on as ``pre=(P, D)``; a run of
    ``two_steps(..., keep_pre=True)`` already holds them (``run.pre``)."""
    return run_pre_activations(check_run(run))


def second_step_term(run: TwoStepRun, k: int, pre=None) -> np.ndarray:
    r"""The exact term :math:`T_k` of :math:`W_2 - W_1`, shape ``(N, d)``; ``pre`` is
    :func:`pre_activations` of ``run`` if already computed."""
    run = check_run(run)
    k = check_order(k, run.activation.degree)
    return exact_term(run, k, *check_pre(run, pre))


def second_step_term_operator(run: TwoStepRun, k: int, pre=None) -> LinearOperator:
    r"""The exact term :math:`T_k` of :func:`second_step_term` as a ``LinearOperator``
    ``(N, d)``, never formed: :math:`T_kx = \frac{\eta_2}{n\,k!}\,a\odot
    \big(M_k(X_2x)\big)` with :math:`M_k = \sigma^{(k+1)}(P)\odot\Delta^{\circ k}\odot
    \mathbf 1y_2^\top` (``(N, n)``), for :func:`twostep.top_singular`."""
    run = check_run(run)
    k = check_order(k, run.activation.degree)
    return term_operator(run, k, *check_pre(run, pre))


def second_step_terms(run: TwoStepRun, *, reuse_first: bool = False) -> list[np.ndarray]:
    r"""All exact terms :math:`T_0, \dots, T_{L-1}` (module docstring); they sum to :math:`W_2 - W_1`.

    Parameters
    ----------
    run : TwoStepRun
        With a polynomial activation of degree :math:`L`.
    reuse_first : bool
        With a reused batch, take :math:`T_0 = \eta_2G_1 = (\eta_2/\eta_1)(W_1 - W_0)` from
        the first update (one :math:`N\times n\times d` product less; equal up to rounding).

    Returns
    -------
    list of ndarray, each of shape (N, d)

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> run = ts.run_two_steps(40, 40, 40, ts.get_activation("poly4"), "he1",
    ...                        ((0.2, 0.4), (0.2, 0.25)), "fresh", np.random.default_rng(0))
    >>> terms = ts.second_step_terms(run)
    >>> len(terms), np.allclose(sum(terms), run.W2 - run.W1)
    (4, True)
    """
    return second_step_terms_core(check_run(run), check_bool(reuse_first, "reuse_first"))


def signal_part(run: TwoStepRun, k: int, kind: str = "auto", corrected: bool = False) -> RankOne:
    r"""The rank-one signal part of :math:`T_k`.

    ``kind="mean"`` gives :math:`S_k` (:math:`\sigma^{(k+1)}` and :math:`\sigma'`
    replaced by their means); ``kind="reuse"`` gives :math:`\tilde S_k` (self-term
    kept with the neuron's own :math:`\sigma'`); ``"auto"`` picks ``"reuse"`` for a
    reused batch and ``"mean"`` for a fresh one (where the two coincide).

    ``corrected=True`` adds the neuron-specific part of the first update (the book's
    derivation, chapter *Two steps*): the move of neuron :math:`i` on input :math:`x_l` is
    :math:`\eta_1a_i(\mu_1s_l + \rho_{il})` with :math:`\rho_{il} = \langle r_i, x_l\rangle`
    approximately :math:`N(0, R^2)` (:math:`R^2` the mean of :math:`\|r_i\|^2` weighted by
    :math:`a_i^{2(k+1)}`, measured on the run; its limit is
    :func:`~twostep.analysis.theory.fluctuation_variance_limit`), and averaging the
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

    Parameters
    ----------
    run : TwoStepRun
        With a polynomial activation of degree :math:`L`.
    k : int
        Order, in :math:`[0, L-1]`.
    kind : {"auto", "mean", "reuse"}
    corrected : bool

    Returns
    -------
    RankOne
        Left vector :math:`a^{\circ(k+1)}/\|a^{\circ(k+1)}\|` (``(N,)``), right vector along
        :math:`u_k` (``(d,)``).

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> run = ts.run_two_steps(40, 40, 40, ts.get_activation("poly4"), "he1",
    ...                        ((0.2, 0.4), (0.2, 0.25)), "fresh", np.random.default_rng(0))
    >>> S = ts.signal_part(run, 1)
    >>> round(S.value, 4), S.left.shape, S.right.shape
    (0.4278, (40,), (40,))
    """
    run = check_run(run)
    k = check_order(k, run.activation.degree)
    return signal_part_core(run, k, check_choice(kind, "kind", SIGNALS),
                            check_bool(corrected, "corrected"))


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
    ks = [check_int(k, "k", 0) if activation is None else check_order(k, activation.degree)
          for k in ks]
    s = X2 @ weighted_direction(X1, y1, 1.0)
    if activation is None:
        return weighted_direction(X2, y2, np.stack([s ** k for k in ks], axis=1))
    r = self_term(X2, y2) if reused else np.zeros(X2.shape[0])
    return weighted_direction(X2, y2, np.stack(
        [reuse_weight(activation, k, activation.mu[1] * s, r) for k in ks], axis=1))


def polynomial_activation(activation) -> PolynomialActivation:
    """A :class:`PolynomialActivation` from itself or its name (``"poly4"``)."""
    activation = as_activation(activation)
    if not isinstance(activation, PolynomialActivation):
        raise TypeError("activation must be a PolynomialActivation or its name (e.g. 'poly4'), "
                        f"got {activation!r}")
    return activation


def first_step_spike(a, X, y, activation: Activation) -> RankOne:
    r"""The rank-one part :math:`\mu_1\,a v^\top` of :math:`G=-\nabla L(W_0)`, :math:`v = X^\top y/n`,
    :math:`\mu_1 = \mathbb{E}[\sigma'(z)]`.

    Parameters
    ----------
    a : ndarray, shape (N,)
    X : ndarray, shape (n, d)
    y : ndarray, shape (n,)
    activation : Activation

    Returns
    -------
    RankOne
        ``value`` :math:`= |\mu_1|\,\|a\|\,\|v\|`, ``left``
        :math:`=\operatorname{sign}(\mu_1)a/\|a\|`, ``right`` :math:`= v/\|v\|`.

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> rng = np.random.default_rng(0)
    >>> W0, a = ts.initialise(50, 40, rng)
    >>> teacher = ts.make_teacher("he1", 40, rng)
    >>> X, y = teacher.sample(400, rng)
    >>> spike = ts.first_step_spike(a, X, y, ts.get_activation("poly4"))
    >>> round(abs(float(spike.right @ teacher.directions[0])), 2)   # v leans on beta*
    0.97
    """
    X = check_array(X, "X", ndim=2)
    a = check_array(a, "a", ndim=1, dtype=X.dtype)
    y = check_array(y, "y", shape=(X.shape[0],), dtype=X.dtype)
    return first_step_spike_core(a, X, y, check_activation(activation))
