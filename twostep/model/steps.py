r"""One and two steps of gradient descent on the first layer.

Only :math:`W` is trained; :math:`a` stays at its initial value.

.. math::
    W_1 = W_0 - \eta_1\nabla L(W_0; X_1, y_1),\qquad
    W_2 = W_1 - \eta_2\nabla L(W_1; X_2, y_2),\qquad \eta_t = c_t N^{\alpha_t},

with :math:`(X_2, y_2) = (X_1, y_1)` for a *reused* batch and an
independent batch of the same size for a *fresh* one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from array_api_compat import is_array_api_obj

from .._validation import (check_alpha, check_bool, check_choice, check_dtype, check_fits,
                           check_int, check_real, check_rng, check_steps, check_type)
from .activations import Activation, check_activation
from .network import (LOSSES, _gradient, _initialise, _pre_activations_into, check_network,
                      residuals)
from .targets import Teacher, _make_teacher

BATCHES = ("reused", "fresh")


def step_size(c: float, alpha: float, N: int) -> float:
    r"""Learning rate :math:`\eta = c\,N^{\alpha}`, with ``c > 0`` and ``alpha`` in ``[0, 1/2)``."""
    c = check_real(c, "c", low=0.0, low_open=True)
    alpha = check_alpha(alpha)
    N = check_int(N, "N")
    return c * N ** alpha


def one_step(W, a, X, y, activation: Activation, eta: float, *, loss: str = "correlation"):
    r"""One gradient step :math:`W - \eta\nabla L(W; X, y)`, shape ``(N, d)``.

    ``eta`` is given directly (any real :math:`\ge 0`, not only :math:`cN^{\alpha}` with
    :math:`\alpha < 1/2`). ``loss="squared"`` steps on the squared loss
    :math:`\frac1{2n}\sum_j(y_j - a^\top\sigma(Wx_j))^2` instead of the correlation loss
    (:func:`twostep.model.network.gradient`); the default is the book's correlation loss.

    Like :func:`twostep.model.network.gradient`, it runs on numpy (validated input) and on
    CuPy or PyTorch arrays, on their device.
    """
    W, a, X, y = _host_checked(W, a, X, y)
    check_activation(activation)
    eta = check_real(eta, "eta", low=0.0)
    check_choice(loss, "loss", LOSSES)
    if loss == "squared":
        y = residuals(W, a, X, y, activation)
    return _step(W, a, X, y, activation, eta)


def steps_along(W, a, X, y, activation: Activation, etas) -> tuple:
    r"""The gradient :math:`G = \nabla L(W; X, y)` (``(N, d)``) and the steps :math:`W - \eta G`
    for every :math:`\eta` of ``etas`` (a list of ``(N, d)`` arrays, each equal bit for bit to
    :func:`one_step` with that :math:`\eta`; correlation loss, numpy arrays). Several step
    sizes from one point cost one gradient, where :func:`one_step` would compute it once per
    step size."""
    W, a, X, y = _host_checked(W, a, X, y)
    check_activation(activation)
    etas = [check_real(eta, "etas[i]", low=0.0) for eta in etas]
    G = _gradient(W, a, X, y, activation)
    out = []
    for eta in etas:
        step = G * -eta     # as _step does it, so the values are the same bit for bit
        step += W
        out.append(step)
    return G, out


def _host_checked(W, a, X, y):
    # numpy input is validated (check_network); device arrays are used as they are.
    if not is_array_api_obj(W) or isinstance(W, np.ndarray):
        return check_network(W, a, X, y)
    return W, a, X, y


def _step(W, a, X, y, activation, eta, pre_out=None):
    # W - eta grad on checked arrays, in the gradient's buffer; pre_out as in
    # twostep.model.network._gradient.
    G = _gradient(W, a, X, y, activation, pre_out=pre_out)
    G *= -eta
    G += W
    return G


@dataclass
class TwoStepRun:
    r"""Everything a two-step experiment produced.

    Shapes: ``W0, W1, W2`` are ``(N, d)``; ``a`` is ``(N,)``; ``X1, X2`` are
    ``(n, d)``; ``y1, y2`` are ``(n,)``. With ``batch == "reused"``, ``X2 is X1``. ``W2`` is
    None in the package's own runs whose measurements rebuild it from the exact terms
    (:func:`twostep.experiments.spikes.spike_experiment`), which skip the second step's product.
    """

    W0: np.ndarray
    a: np.ndarray
    W1: np.ndarray
    W2: np.ndarray | None
    X1: np.ndarray
    y1: np.ndarray
    X2: np.ndarray
    y2: np.ndarray
    eta1: float
    eta2: float
    batch: str
    activation: Activation
    teacher: Teacher
    params: dict = field(default_factory=dict)
    #: ``(P, D)`` with :math:`P = W_0X_2^\top`, :math:`D = (W_1 - W_0)X_2^\top` (``(N, n)``),
    #: kept by :func:`two_steps` with ``keep_pre=True``; None otherwise.
    pre: tuple | None = None

    @property
    def N(self) -> int:
        return self.W0.shape[0]

    @property
    def d(self) -> int:
        return self.W0.shape[1]

    @property
    def n(self) -> int:
        return self.X1.shape[0]

    @property
    def v(self) -> np.ndarray:
        r"""First-step direction :math:`v = X_1^\top y_1/n`, shape ``(d,)``."""
        return self.X1.T @ self.y1 / self.n


@dataclass
class Problem:
    """A drawn problem: the teacher, the initial network and the two batches.

    Shapes: ``W0`` ``(N, d)``, ``a`` ``(N,)``, ``X1, X2`` ``(n, d)``, ``y1, y2`` ``(n,)``;
    with a reused batch ``X2 is X1`` and ``y2 is y1``.
    """

    teacher: Teacher
    W0: np.ndarray
    a: np.ndarray
    X1: np.ndarray
    y1: np.ndarray
    X2: np.ndarray
    y2: np.ndarray


def draw_problem(N: int, n: int, d: int, target, batch: str, rng: np.random.Generator,
                 noise: float = 0.0, dtype=np.float64) -> Problem:
    r"""Draw the teacher (unless ``target`` is one), ``W0``, ``a``, the first batch and,
    for ``batch="fresh"``, an independent second batch, from ``rng`` in that order.

    Every routine that simulates the two steps draws through here, so the same
    generator state gives the same network and data everywhere in the package.
    """
    N, n, d = check_int(N, "N"), check_int(n, "n"), check_int(d, "d")
    check_choice(batch, "batch", BATCHES)
    check_rng(rng)
    return _draw_problem(N, n, d, target, batch, rng, noise, check_dtype(dtype))


def _draw_problem(N, n, d, target, batch, rng, noise, dt):
    # draw_problem on checked sizes, batch, generator and dtype (a numpy dtype); the target
    # and the noise are checked as the teacher is made.
    # Before anything is allocated: the two steps hold W0, W1, W2 and a gradient (N x d) and
    # two batches (n x d) at once (the registry's count, twostep.scale.registry).
    check_fits(dt.itemsize * (4 * N * d + 2 * n * d), f"two steps at N={N}, n={n}, d={d} ({dt})")
    teacher = _make_teacher(target, d, rng, noise)
    W0, a = _initialise(N, d, rng, dt)
    X1, y1 = teacher._sample(n, rng, dt)
    X2, y2 = (X1, y1) if batch == "reused" else teacher._sample(n, rng, dt)
    return Problem(teacher, W0, a, X1, y1, X2, y2)


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
        Drawn in this order: teacher directions (if not given), ``W0``, ``a``,
        ``X1``, label noise of batch 1, then ``X2`` and its noise if fresh.
    noise : float
        Label-noise standard deviation (ignored when a Teacher is given).
    dtype : float64 or float32
    keep_pre : bool
        Keep the second step's pre-activations as ``run.pre`` (see :func:`two_steps`).

    Returns
    -------
    TwoStepRun
    """
    N, n, d = check_int(N, "N"), check_int(n, "n"), check_int(d, "d")
    check_activation(activation)
    steps = check_steps(steps)
    check_choice(batch, "batch", BATCHES)
    check_rng(rng)
    dt = check_dtype(dtype)
    check_bool(keep_pre, "keep_pre")
    return _two_steps(_draw_problem(N, n, d, target, batch, rng, noise, dt), activation, steps,
                      keep_pre)


def two_steps(problem: Problem, activation: Activation, steps,
              keep_pre: bool = False) -> TwoStepRun:
    r"""The two gradient steps on a drawn :class:`Problem`, whatever array library holds it.

    :math:`\eta_t = c_tN^{\alpha_t}` for ``steps = ((c1, alpha1), (c2, alpha2))``; the batch
    is reused when ``problem.X2 is problem.X1``. With the arrays on a GPU (CuPy, PyTorch;
    see :mod:`twostep.scale.device`) the steps run there, through the same gradient.

    With ``keep_pre`` (numpy arrays only) the run also keeps ``pre = (P, D)``,
    :math:`P = W_0X_2^\top` and :math:`D = (W_1 - W_0)X_2^\top = W_1X_2^\top - P`, which every
    exact term :math:`T_k` needs (:func:`twostep.analysis.decomposition.pre_activations`): the
    steps compute :math:`W_1X_2^\top`, and :math:`W_0X_1^\top`, which is :math:`P` for a
    reused batch, so the terms then cost no product for a reused batch and one for a fresh one
    (two without). It holds two more ``(N, n)`` arrays.
    """
    p = check_type(problem, "problem", Problem, "a Problem (from draw_problem)")
    check_activation(activation)
    steps = check_steps(steps)
    if check_bool(keep_pre, "keep_pre") and not isinstance(p.W0, np.ndarray):
        raise ValueError("keep_pre=True needs numpy arrays (the pre-activations stay on the host)")
    W0, a, X1, y1 = _host_checked(p.W0, p.a, p.X1, p.y1)
    X2, y2 = (X1, y1) if p.X2 is p.X1 else _host_checked(W0, a, p.X2, p.y2)[2:]
    return _two_steps(p, activation, steps, keep_pre, (W0, a, X1, y1, X2, y2))


def _both_batches(p, activation, steps, keep_pre, second=True, pre0=None):
    # The reused run, then the fresh run, of one problem drawn with a fresh second batch
    # (_draw_problem(..., "fresh", ...)). A reused draw of the same generator state is that
    # problem without X2, y2, so each run is, bit for bit, the one drawn and trained alone; the
    # first step (same W0, a, X1, y1, eta1) is taken once, which saves two of the pair's eight
    # N x n x d products. W1 is made read-only: the fresh run steps from it after the caller
    # has measured the reused one.
    reused = _two_steps(replace(p, X2=p.X1, y2=p.y1), activation, steps, keep_pre, second=second,
                        pre0=pre0)
    W1 = reused.W1
    if isinstance(W1, np.ndarray):
        W1.flags.writeable = False
    yield reused
    del reused
    yield _two_steps(p, activation, steps, keep_pre, W1=W1, second=second, pre0=pre0)


def _measured_both(p, activation, steps, keep_pre, measure, second=True, pre0=None) -> dict:
    # {"reused": measure(run), "fresh": measure(run)} over _both_batches: the reused run is
    # measured and freed before the fresh one is trained.
    out = {}
    for run in _both_batches(p, activation, steps, keep_pre, second, pre0):
        out[run.batch] = measure(run)
        del run
    return out


def _initial_pre_activations(p):
    # (W0 X1^T, W0 X2^T) of a problem drawn with a fresh second batch, as _two_steps computes
    # them: the pre0 that runs of the same W0, X1, X2 with other labels share.
    Z1 = _pre_activations_into(p.W0, p.X1, np.empty((p.W0.shape[0], p.X1.shape[0]),
                                                     dtype=p.W0.dtype))
    return Z1, p.W0 @ p.X2.T


def _two_steps(p, activation, steps, keep_pre, arrays=None, W1=None, second=True, pre0=None):
    # two_steps on checked arguments; ``arrays`` are the problem's (W0, a, X1, y1, X2, y2) as
    # checked on the host, or None for the problem's own (drawn by _draw_problem); ``W1``, the
    # first step of another run of the same W0, a, X1, y1 and eta1, is taken as it is. With
    # ``second=False`` (and keep_pre) the second step is not taken, W2 is None, and only its
    # pre-activations are kept: for measurements that rebuild W2 from its exact terms
    # (StepFamily), which saves the step's N x n x d product. ``pre0`` (with keep_pre) is
    # _initial_pre_activations of the problem's W0, X1, X2, computed once for several label
    # sets of one draw (twostep.experiments.reuse.reuse_cases); never written to.
    (c1, al1), (c2, al2) = steps
    W0, a, X1, y1, X2, y2 = arrays or (p.W0, p.a, p.X1, p.y1, p.X2, p.y2)
    N, d = W0.shape
    n = X1.shape[0]
    batch = "reused" if p.X2 is p.X1 else "fresh"
    eta1, eta2 = c1 * N ** al1, c2 * N ** al2      # step_size on checked values
    # The first step's pre-activations W0 X1^T are P itself for a reused batch.
    Z1 = np.empty((N, n), dtype=W0.dtype) if keep_pre and W1 is None and pre0 is None else None
    Z2 = np.empty((N, n), dtype=W0.dtype) if keep_pre else None
    if W1 is None and pre0 is not None:
        # _step from the shared pre-activations, bit for bit.
        Z1 = pre0[0]
        W1 = _gradient(W0, a, X1, y1, activation, pre_in=Z1)
        W1 *= -eta1
        W1 += W0
    elif W1 is None:
        W1 = _step(W0, a, X1, y1, activation, eta1, Z1)
    if second:
        W2 = _step(W1, a, X2, y2, activation, eta2, Z2)
    else:
        _pre_activations_into(W1, X2, Z2)
        W2 = None
    pre = None
    if keep_pre:
        if batch == "reused" and Z1 is not None:
            P = Z1
        else:
            P = W0 @ X2.T if pre0 is None else pre0[1]
        del Z1
        Z2 -= P
        pre = (P, Z2)
    params = dict(N=N, n=n, d=d, c1=c1, alpha1=al1, c2=c2, alpha2=al2, batch=batch,
                  activation=activation.name, links=[g.name for g in p.teacher.links],
                  noise=p.teacher.noise, dtype=str(p.W0.dtype).rsplit(".", 1)[-1])
    return TwoStepRun(p.W0, p.a, W1, W2, p.X1, p.y1, p.X2, p.y2, eta1, eta2, batch, activation,
                      p.teacher, params, pre)
