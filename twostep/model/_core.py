r"""The model's trusted cores: the draws, the blocked gradient and the two steps.

The core of a public function ``f`` is ``f_core``: ``f`` checks its arguments and calls it,
and so do the package's own callers (the experiments, the analysis, the scale-out's device
runs) with arguments already checked or drawn by the package itself; nothing here checks
them again.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .._validation import check_fits, check_real
from .activations import namespace
from .runs import Problem, TwoStepRun
from .targets import Teacher, check_rank, target_links

#: Bytes of the largest temporary the gradient builds: blocks of neurons of 64 MB (16M entries
#: in float32, 8M in float64) keep the N x n pre-activation out of memory from N = 4000 on (in
#: float64 from N = 2900), while each block's product stays large enough for BLAS to run at the
#: speed of one whole product (benchmarks/bench_at_scale.py). How the rows are split does not
#: change a float64 gradient (OpenBLAS sums every entry in the same order).
BLOCK_BYTES = 1 << 26
#: The most entries a block holds (float32).
BLOCK_ELEMENTS = BLOCK_BYTES // 4
#: Entries of the pieces in which :math:`\sigma'` overwrites a block of pre-activations on
#: the host: the one temporary of that step (2 MB in float64).
DERIVATIVE_CHUNK = 1 << 18


def initialise_core(N, d, rng, dt, rows="gaussian", second_layer="gaussian"):
    """:func:`twostep.initialise` of checked arguments (``dt`` a numpy dtype)."""
    W0 = rng.standard_normal((N, d), dtype=dt)
    W0 *= dt.type(1.0 / np.sqrt(d))
    if rows == "unit":
        W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    if second_layer == "constant":
        a = np.full(N, 1.0 / np.sqrt(N), dtype=dt)
    else:
        a = rng.standard_normal(N, dtype=dt)
        a *= dt.type(1.0 / np.sqrt(N))
    return W0, a


def make_teacher_core(target, d, rng, noise) -> Teacher:
    """:func:`twostep.make_teacher` for a checked ``d`` (and ``rng``, unless ``target`` is a
    Teacher): the target and the noise are checked here, as the teacher is made."""
    if isinstance(target, Teacher):
        if target.d != d:
            raise ValueError(f"target (a Teacher) has d={target.d}, but d={d}")
        if noise != 0.0 and noise != target.noise:
            # A given Teacher keeps its own noise; silently dropping this one would lie.
            raise ValueError(f"noise={noise} cannot be applied to a given Teacher (its noise is "
                             f"{target.noise}); build the Teacher with noise={noise} instead")
        return target
    links, _ = target_links(target)
    check_rank(links, d)
    teacher = Teacher.__new__(Teacher)
    teacher._draw(links, d, check_real(noise, "noise", low=0.0), rng)
    return teacher


def sample_core(teacher, n, rng, dt):
    """``teacher.sample`` of checked arguments: inputs ``(n, d)``, then their labels."""
    return teacher._sample(n, rng, dt)


def labels_core(teacher, X, rng=None):
    """``teacher.labels`` of inputs the package drew (``rng``: only for label noise)."""
    return teacher._labels(X, rng)


def draw_problem_core(N, n, d, target, batch, rng, noise, dt) -> Problem:
    """:func:`twostep.model.steps.draw_problem` on checked sizes, batch, generator and dtype (a
    numpy dtype); the target and the noise are checked as the teacher is made."""
    # Before anything is allocated: the two steps hold W0, W1, W2 and a gradient (N x d) and
    # two batches (n x d) at once (the registry's count, twostep.scale.registry).
    check_fits(dt.itemsize * (4 * N * d + 2 * n * d), f"two steps at N={N}, n={n}, d={d} ({dt})")
    teacher = make_teacher_core(target, d, rng, noise)
    W0, a = initialise_core(N, d, rng, dt)
    X1, y1 = teacher._sample(n, rng, dt)
    X2, y2 = (X1, y1) if batch == "reused" else teacher._sample(n, rng, dt)
    return Problem(teacher, W0, a, X1, y1, X2, y2)


def correlation_loss_core(W, a, X, y, activation) -> float:
    """:func:`twostep.model.network.correlation_loss` of checked arrays."""
    return float(-np.dot(y, activation(X @ W.T) @ a) / X.shape[0])


def block_rows(N, n, block_elements=BLOCK_ELEMENTS):
    """Rows of the ``(N, n)`` pre-activation in one block of at most ``block_elements``."""
    return max(1, min(N, block_elements // max(n, 1)))


def _gradient_rows(xp, W, n, block_elements=None):
    # Rows of W per block: BLOCK_BYTES of pre-activations unless given.
    if block_elements is None:
        block_elements = BLOCK_BYTES // (xp.finfo(W.dtype).bits // 8)
    return block_rows(W.shape[0], n, block_elements)


def _derivative_in_place(activation, Z):
    # sigma'(Z) written over Z, a few rows at a time. Every piece starts a multiple of 64
    # entries into Z, so numpy's SIMD loops group the entries as for the whole block and the
    # values are the same bit for bit. An activation whose derivative comes out in a wider type
    # than Z (none of the package's own) keeps its own array.
    step = 64 // math.gcd(Z.shape[1], 64)
    rows = max(step, DERIVATIVE_CHUNK // max(Z.shape[1], 1) // step * step)
    for start in range(0, Z.shape[0], rows):
        piece = activation._derivative(Z[start:start + rows], 1)
        if start == 0 and piece.dtype != Z.dtype:
            return activation._derivative(Z, 1)
        Z[start:start + rows] = piece
    return Z


def pre_activations_into(W, X, out):
    r""":math:`WX^\top` into ``out`` (numpy, ``(N, n)``), by the blocks of
    :func:`gradient_core`'s products: the values a step from ``W`` keeps (``pre_out``) bit
    for bit, without the step's second product."""
    rows = _gradient_rows(np, W, X.shape[0])
    for start in range(0, W.shape[0], rows):
        block = slice(start, min(W.shape[0], start + rows))
        np.matmul(W[block, :], X.T, out=out[block, :])
    return out


def gradient_core(W, a, X, y, activation, block_elements: int | None = None, pre_out=None,
                  pre_in=None):
    r"""The correlation loss's gradient (:func:`twostep.gradient`) on any array library, by
    blocks of neurons: one product for the pre-activations, :math:`\sigma'` and the scalings in
    place, one product into the block's rows. ``pre_out`` (numpy, ``(N, n)``) keeps the
    pre-activations :math:`WX^\top`; ``pre_in`` gives them, computed before
    (:func:`pre_activations_into`) and never written (a block's :math:`\sigma'` goes over a
    copy, so the gradient is the same bit for bit)."""
    xp, W = namespace(W)
    N, n = W.shape[0], X.shape[0]
    rows = _gradient_rows(xp, W, n, block_elements)
    G = xp.empty_like(W)
    for start in range(0, N, rows):
        block = slice(start, min(N, start + rows))
        if pre_in is not None:
            Z = pre_in[block, :].copy()
        elif pre_out is None:
            Z = W[block, :] @ X.T
        else:
            Z = np.matmul(W[block, :], X.T, out=pre_out[block, :])
        # sigma' over Z where nothing needs Z any more (numpy, pre-activations not kept)
        M = (_derivative_in_place(activation, Z) if xp is np and pre_out is None
             else activation._derivative(Z, 1))
        M *= y[None, :]
        M *= (a[block] * (-1.0 / n))[:, None]
        if xp is np:
            np.matmul(M, X, out=G[block, :])  # no temporary of the block's size
        else:
            G[block, :] = M @ X
        del Z, M   # before the next block's product: one block alive at a time
    return G


def one_step_core(W, a, X, y, activation, eta, pre_out=None):
    r""":math:`W - \eta\nabla L(W; X, y)` in the gradient's buffer (``pre_out`` as in
    :func:`gradient_core`)."""
    G = gradient_core(W, a, X, y, activation, pre_out=pre_out)
    G *= -eta
    G += W
    return G


def two_steps_core(p, activation, steps, keep_pre, arrays=None, W1=None, second=True,
                   pre0=None) -> TwoStepRun:
    r""":func:`twostep.model.steps.two_steps` on a problem ``p``. ``arrays``: the problem's
    ``(W0, a, X1, y1, X2, y2)`` as checked on the host, or None for its own. ``W1``: the first
    step of another run of the same ``W0, a, X1, y1`` and :math:`\eta_1`, taken as it is. With
    ``second=False`` (and ``keep_pre``) the second step is not taken (``W2`` is None) and only
    its pre-activations are kept, for measurements that rebuild :math:`W_2` from its exact
    terms. ``pre0`` (with ``keep_pre``): :func:`initial_pre_activations` of the problem,
    shared by several label sets of one draw; never written to."""
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
        # one_step_core from the shared pre-activations, bit for bit.
        Z1 = pre0[0]
        W1 = gradient_core(W0, a, X1, y1, activation, pre_in=Z1)
        W1 *= -eta1
        W1 += W0
    elif W1 is None:
        W1 = one_step_core(W0, a, X1, y1, activation, eta1, Z1)
    if second:
        W2 = one_step_core(W1, a, X2, y2, activation, eta2, Z2)
    else:
        pre_activations_into(W1, X2, Z2)
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


def initial_pre_activations(p):
    r"""``(W0 X1^T, W0 X2^T)`` of a problem drawn with a fresh second batch, as
    :func:`two_steps_core` computes them: the ``pre0`` that runs of the same draw with other
    labels share."""
    Z1 = pre_activations_into(p.W0, p.X1, np.empty((p.W0.shape[0], p.X1.shape[0]),
                                                    dtype=p.W0.dtype))
    return Z1, p.W0 @ p.X2.T


def take_both_batches(p, activation, steps, keep_pre, second=True, pre0=None):
    r"""The reused run, then the fresh run, of a problem drawn with a fresh second batch. A
    reused draw of the same generator state is that problem without ``X2, y2``, so each run is,
    bit for bit, the one drawn and trained alone; the first step is taken once. ``W1`` is made
    read-only: the fresh run steps from it after the caller has measured the reused one."""
    reused = two_steps_core(replace(p, X2=p.X1, y2=p.y1), activation, steps, keep_pre,
                            second=second, pre0=pre0)
    W1 = reused.W1
    if isinstance(W1, np.ndarray):
        W1.flags.writeable = False
    yield reused
    del reused
    yield two_steps_core(p, activation, steps, keep_pre, W1=W1, second=second, pre0=pre0)


def measure_both_batches(p, activation, steps, keep_pre, measure, second=True,
                         pre0=None) -> dict:
    r"""``{"reused": measure(run), "fresh": measure(run)}`` over :func:`take_both_batches`: the
    reused run is measured and freed before the fresh one is trained."""
    out = {}
    for run in take_both_batches(p, activation, steps, keep_pre, second, pre0):
        out[run.batch] = measure(run)
        del run
    return out
