r"""One and two gradient steps on the first layer (:math:`a` stays fixed):

.. math::
    W_1 = W_0 - \eta_1\nabla L(W_0; X_1, y_1),\qquad
    W_2 = W_1 - \eta_2\nabla L(W_1; X_2, y_2),\qquad \eta_t = c_t N^{\alpha_t},

with :math:`(X_2, y_2) = (X_1, y_1)` for a *reused* batch, an independent one for a *fresh*
batch (:data:`BATCHES`).

>>> import twostep as ts
>>> ts.BATCHES
('reused', 'fresh')
"""

from __future__ import annotations

import numpy as np

from .._validation import (check_alpha, check_bool, check_choice, check_dtype,
                           check_int, check_real, check_rng, check_steps, check_type)
from ._core import draw_problem_core, gradient_core, one_step_core, two_steps_core
from .activations import Activation, check_activation
from .network import host_checked, loss_labels
from .runs import Problem, TwoStepRun

#: The second batch: the first batch again (``"reused"``) or an independent one (``"fresh"``).
BATCHES = ("reused", "fresh")

def step_size(c: float, alpha: float, N: int) -> float:
    r"""Learning rate :math:`\eta = c\,N^{\alpha}`.

    Parameters
    ----------
    c : float
        ``c > 0``.
    alpha : float
        In ``[0, 1/2)``.
    N : int
        The width.

    Returns
    -------
    float

    Examples
    --------
    >>> import twostep as ts
    >>> ts.step_size(0.5, 0.25, 16)
    1.0
    """
    c = check_real(c, "c", low=0.0, low_open=True)
    alpha = check_alpha(alpha)
    N = check_int(N, "N")
    return c * N ** alpha

def one_step(W, a, X, y, activation: Activation, eta: float, *, loss: str = "correlation"):
    r"""One gradient step :math:`W - \eta\nabla L(W; X, y)`, on numpy (validated) or device
    arrays, like :func:`twostep.gradient`.

    Parameters
    ----------
    W, a, X, y, activation
        As in :func:`twostep.gradient`: ``(N, d)``, ``(N,)``, ``(n, d)``, ``(n,)``.
    eta : float
        The step size, any real :math:`\ge 0`.
    loss : {"correlation", "squared"}

    Returns
    -------
    ndarray, shape (N, d)

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> rng = np.random.default_rng(0)
    >>> W0, a = ts.initialise(20, 10, rng)
    >>> X, y = ts.make_teacher("he1", 10, rng).sample(30, rng)
    >>> act = ts.get_activation("poly3")
    >>> W1 = ts.one_step(W0, a, X, y, act, 0.5)
    >>> np.allclose(W1, W0 - 0.5 * ts.gradient(W0, a, X, y, act))
    True
    """
    W, a, X, y = host_checked(W, a, X, y)
    check_activation(activation)
    eta = check_real(eta, "eta", low=0.0)
    return one_step_core(W, a, X, loss_labels(W, a, X, y, activation, loss), activation, eta)

def steps_along(W, a, X, y, activation: Activation, etas) -> tuple:
    r"""``(G, [W - eta G for eta in etas])``, :math:`G = \nabla L(W; X, y)` ``(N, d)``: one
    gradient for several step sizes, each step bit for bit :func:`one_step`'s."""
    W, a, X, y = host_checked(W, a, X, y)
    check_activation(activation)
    etas = [check_real(eta, "etas[i]", low=0.0) for eta in etas]
    G = gradient_core(W, a, X, y, activation)
    out = []
    for eta in etas:
        step = G * -eta     # as one_step_core does it: the same bits
        step += W
        out.append(step)
    return G, out

def draw_problem(N: int, n: int, d: int, target, batch: str, rng: np.random.Generator,
                 noise: float = 0.0, dtype=np.float64) -> Problem:
    r"""Draw the teacher (unless ``target`` is one), ``W0``, ``a``, the first batch and, for
    ``batch="fresh"``, a second one, from ``rng`` in that order: every simulation of the
    package draws through here."""
    N, n, d = check_int(N, "N"), check_int(n, "n"), check_int(d, "d")
    check_choice(batch, "batch", BATCHES)
    check_rng(rng)
    return draw_problem_core(N, n, d, target, batch, rng, noise, check_dtype(dtype))

def run_two_steps(N: int, n: int, d: int, activation: Activation, target, steps,
                  batch: str, rng: np.random.Generator, noise: float = 0.0,
                  dtype=np.float64, keep_pre: bool = False) -> TwoStepRun:
    r"""Draw a problem and take two gradient steps.

    Parameters
    ----------
    N, n, d : int
        Width, batch size, input dimension.
    activation : Activation
    target : Link, sequence of Link, or Teacher
        The link(s) of the teacher; a :class:`Teacher` is used as given.
    steps : ((c1, alpha1), (c2, alpha2))
        Step sizes :math:`\eta_t = c_t N^{\alpha_t}`.
    batch : {"reused", "fresh"}
    rng : numpy.random.Generator
        Draws, in order: teacher directions (if not given), ``W0``, ``a``, ``X1`` and its
        label noise, then ``X2`` and its noise if fresh.
    noise : float
        Label-noise standard deviation (ignored when a Teacher is given).
    dtype : float64 or float32
    keep_pre : bool
        Keep the second step's pre-activations as ``run.pre`` (see :func:`two_steps`).

    Returns
    -------
    TwoStepRun

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> run = ts.run_two_steps(40, 40, 40, ts.get_activation("poly4"), "he1",
    ...                        ((0.2, 0.4), (0.2, 0.25)), "reused", np.random.default_rng(0))
    >>> run.W2.shape, run.batch, round(run.eta1, 3)   # eta1 = 0.2 * 40**0.4
    ((40, 40), 'reused', 0.875)
    """
    N, n, d = check_int(N, "N"), check_int(n, "n"), check_int(d, "d")
    check_activation(activation)
    steps = check_steps(steps)
    check_choice(batch, "batch", BATCHES)
    check_rng(rng)
    dt = check_dtype(dtype)
    check_bool(keep_pre, "keep_pre")
    return two_steps_core(draw_problem_core(N, n, d, target, batch, rng, noise, dt), activation,
                          steps, keep_pre)

def two_steps(problem: Problem, activation: Activation, steps,
              keep_pre: bool = False) -> TwoStepRun:
    r"""The two steps :math:`\eta_t = c_tN^{\alpha_t}` on a drawn :class:`Problem`, on any array
    library (reused: ``problem.X2 is problem.X1``); ``keep_pre`` (numpy) keeps ``run.pre = (P, D)``,
    :math:`P = W_0X_2^\top`, :math:`D = (W_1 - W_0)X_2^\top`, for the exact terms."""
    p = check_type(problem, "problem", Problem, "a Problem (from draw_problem)")
    check_activation(activation)
    steps = check_steps(steps)
    if check_bool(keep_pre, "keep_pre") and not isinstance(p.W0, np.ndarray):
        raise ValueError("keep_pre=True needs numpy arrays (the pre-activations stay on the host)")
    W0, a, X1, y1 = host_checked(p.W0, p.a, p.X1, p.y1)
    X2, y2 = (X1, y1) if p.X2 is p.X1 else host_checked(W0, a, p.X2, p.y2)[2:]
    return two_steps_core(p, activation, steps, keep_pre, (W0, a, X1, y1, X2, y2))
