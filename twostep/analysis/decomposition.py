r"""The exact decomposition of the second update into Hermite-order terms:
:math:`W_2 - W_1 = \sum_{k=0}^{L-1} T_k` for a polynomial :math:`\sigma` of degree :math:`L`,
:math:`T_k` with the signal part :math:`S_k\propto a^{\circ(k+1)}u_k^\top`,
:math:`u_k = X_2^\top(y_2\odot s^{\circ k})/n`, and the reuse-aware :math:`\tilde S_k`."""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import LinearOperator

from .._validation import check_array, check_bool, check_choice, check_int
from ..model.activations import (Activation, PolynomialActivation, as_activation,
                                 check_activation)
from ..model.steps import TwoStepRun
# In _core, below the modules that use them; RankOne and the weights are public here.
from ._core import (RankOne, check_order, check_pre, check_run, corrected_weight,  # noqa: F401
                    exact_term, first_step_spike_core, reuse_weight, run_pre_activations,
                    second_step_terms_core, self_term, signal_part_core, term_operator,
                    weighted_direction)

SIGNALS = ("auto", "mean", "reuse")

def pre_activations(run: TwoStepRun) -> tuple:
    r""":math:`P = W_0X_2^\top` and :math:`\Delta = (W_1 - W_0)X_2^\top`, both ``(N, n)``: the ``pre`` of
    the functions below."""
    return run_pre_activations(check_run(run))

def second_step_term(run: TwoStepRun, k: int, pre=None) -> np.ndarray:
    """The exact term :math:`T_k`, ``(N, d)``."""
    run = check_run(run)
    k = check_order(k, run.activation.degree)
    return exact_term(run, k, *check_pre(run, pre))

def second_step_term_operator(run: TwoStepRun, k: int, pre=None) -> LinearOperator:
    """:math:`T_k` as a never-formed ``LinearOperator`` ``(N, d)``, for :func:`twostep.top_singular`."""
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
        With a reused batch, :math:`T_0 = (\eta_2/\eta_1)(W_1 - W_0)` (equal up to rounding, cheaper).
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
    r"""The rank-one signal part of :math:`T_k`: :math:`S_k` (``kind="mean"``) or :math:`\tilde S_k`
    (``"reuse"``); ``"auto"`` is ``"reuse"`` for a reused batch. ``corrected=True`` (:math:`k \ge 2`)
    averages in the neuron-specific part of the first update, of variance :math:`R^2` measured on the
    run: :math:`\frac{\eta_2\eta_1^k}{k!}a^{\circ(k+1)}(X_2^\top(y_2\odot m^{\rm corr}_k)/n)^\top`
    (:func:`corrected_weight`, :math:`r = 0` but for the reuse-aware kind on a reused batch).

    Parameters
    ----------
    run : TwoStepRun
        With a polynomial activation of degree :math:`L`.
    k : int in [0, L - 1]
    kind : {"auto", "mean", "reuse"}
    corrected : bool
    Returns
    -------
    RankOne
        Left vector along :math:`a^{\circ(k+1)}` ``(N,)``, right along :math:`u_k` ``(d,)``.
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
    r""":math:`u_k = X_2^\top(y_2\odot (X_2v)^{\circ k})/n_2`, :math:`v = X_1^\top y_1/n_1`, for ``k`` in
    ``ks`` (with ``activation``, :math:`\tilde u_k`): ``(len(ks), d)``; no ``X2, y2``: the batch is
    reused."""
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
    """A :class:`PolynomialActivation` from itself or its name."""
    activation = as_activation(activation)
    if not isinstance(activation, PolynomialActivation):
        raise TypeError("activation must be a PolynomialActivation or its name (e.g. 'poly4'), "
                        f"got {activation!r}")
    return activation

def first_step_spike(a, X, y, activation: Activation) -> RankOne:
    r"""The rank-one part :math:`\mu_1\,a v^\top` of :math:`G=-\nabla L(W_0)`, :math:`v = X^\top y/n`.

    Parameters
    ----------
    a : ndarray, shape (N,)
    X : ndarray, shape (n, d)
    y : ndarray, shape (n,)
    activation : Activation
    Returns
    -------
    RankOne
        ``value`` :math:`= |\mu_1|\|a\|\|v\|`, ``left`` along :math:`\operatorname{sign}(\mu_1)a`,
        ``right`` along :math:`v`.
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
