r"""What the learned features buy: a ridge readout and its test error.

After training the first layer, freeze :math:`W` and fit the second layer on
a fresh training set by ridge regression on the features
:math:`F = \sigma(XW^\top)\in\mathbb{R}^{n\times N}`:

.. math:: \hat a_\lambda = \arg\min_a \frac1n\|y - Fa\|^2 + \lambda\|a\|^2
          = V\,\operatorname{diag}\!\Big(\frac{s_i}{s_i^2 + n\lambda}\Big)U^\top y,

with :math:`F = U\operatorname{diag}(s)V^\top` the thin SVD, so that a whole
path of penalties costs one SVD. The penalty is chosen on a validation split
(a stated rule, the same for every curve), then the readout is refitted on
the full training set and scored on held-out data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import svd

from ._validation import check_array, check_int, check_real, check_rng
from .activations import Activation
from .network import _check_activation, gaussian_inputs
from .targets import Teacher

#: Default penalty path: log-spaced, wide enough that the chosen value is
#: interior for every setting in the book.
DEFAULT_LAMBDAS = np.logspace(-6, 2, 33)


def features(W, X, activation: Activation) -> np.ndarray:
    r"""Hidden-layer features :math:`F = \sigma(XW^\top)`, shape ``(n, N)``."""
    W = check_array(W, "W", ndim=2)
    X = check_array(X, "X", ndim=2, shape=(None, W.shape[1]))
    _check_activation(activation)
    return activation(X @ W.T)


def ridge_path(F, y, lambdas) -> np.ndarray:
    r"""Ridge coefficients :math:`\hat a_\lambda` for every penalty, shape ``(len(lambdas), N)``.

    ``F`` is ``(n, N)``, ``y`` is ``(n,)``; penalties are positive.
    """
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


def ridge(F, y, lam: float) -> np.ndarray:
    r"""Ridge coefficients for one penalty ``lam > 0``, shape ``(N,)``."""
    lam = check_real(lam, "lam", low=0.0, low_open=True)
    return ridge_path(F, y, np.array([lam]))[0]


def mse(F, y, coef) -> float:
    r"""Mean squared error :math:`\frac1n\|y - F\hat a\|^2`."""
    F = check_array(F, "F", ndim=2)
    y = check_array(y, "y", shape=(F.shape[0],))
    coef = check_array(coef, "coef", shape=(F.shape[1],))
    r = y - F @ coef
    return float(r @ r / r.size)


def select_penalty(F, y, rng: np.random.Generator, lambdas=DEFAULT_LAMBDAS,
                   val_fraction: float = 0.25) -> float:
    r"""The penalty with the smallest error on a random validation split.

    A fraction ``val_fraction`` of the rows of ``F`` is held out; the ridge path
    is fitted on the rest. Returns the chosen :math:`\lambda`.
    """
    F = check_array(F, "F", ndim=2)
    y = check_array(y, "y", shape=(F.shape[0],))
    check_rng(rng)
    val_fraction = check_real(val_fraction, "val_fraction", low=0.0, high=1.0,
                              low_open=True, high_open=True)
    n = F.shape[0]
    n_val = max(1, int(round(val_fraction * n)))
    if n_val >= n:
        raise ValueError(f"val_fraction leaves no training rows (n = {n})")
    perm = rng.permutation(n)
    val, tr = perm[:n_val], perm[n_val:]
    lambdas = np.asarray(lambdas, dtype=float)
    coefs = ridge_path(F[tr], y[tr], lambdas)
    errors = np.mean((y[val, None] - F[val] @ coefs.T) ** 2, axis=0)
    return float(lambdas[int(np.argmin(errors))])


@dataclass
class ReadoutResult:
    """Test error of a ridge readout on frozen features."""

    test_mse: float
    train_mse: float
    penalty: float


def readout_error(W, activation: Activation, teacher: Teacher, n_train: int, n_test: int,
                  rng: np.random.Generator, lambdas=DEFAULT_LAMBDAS) -> ReadoutResult:
    r"""Fit the second layer on features of ``W`` by ridge and measure test error.

    Draws ``n_train`` fresh training and ``n_test`` test samples from ``teacher``
    (in that order, from ``rng``), picks :math:`\lambda` by :func:`select_penalty`,
    refits on the whole training set, and returns the test and training MSE.
    """
    W = check_array(W, "W", ndim=2)
    if not isinstance(teacher, Teacher):
        raise TypeError(f"teacher must be a Teacher, got {type(teacher).__name__}")
    if teacher.d != W.shape[1]:
        raise ValueError(f"teacher has d={teacher.d}, but W has {W.shape[1]} columns")
    n_train, n_test = check_int(n_train, "n_train", 2), check_int(n_test, "n_test", 1)
    check_rng(rng)
    X = gaussian_inputs(n_train, W.shape[1], rng)
    y = teacher.labels(X, rng)
    Xt = gaussian_inputs(n_test, W.shape[1], rng)
    yt = teacher.labels(Xt, rng)
    F, Ft = features(W, X, activation), features(W, Xt, activation)
    lam = select_penalty(F, y, rng, lambdas)
    coef = ridge(F, y, lam)
    return ReadoutResult(mse(Ft, yt, coef), mse(F, y, coef), lam)


def best_linear_error(teacher: Teacher) -> float:
    r"""Population error of the best affine predictor :math:`c_0 + \sum_r c_1(g_r)\langle\beta^*_r,x\rangle`:

    .. math:: \mathbb{E}[y^2] - \Big(\sum_r c_0(g_r)\Big)^2 - \sum_r c_1(g_r)^2 .
    """
    if not isinstance(teacher, Teacher):
        raise TypeError(f"teacher must be a Teacher, got {type(teacher).__name__}")
    c0 = sum(g.coefficients[0] for g in teacher.links)
    c1 = sum(g.coefficients[1] ** 2 for g in teacher.links)
    return float(teacher.second_moment - c0 ** 2 - c1)
