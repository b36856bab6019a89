r"""The model's cores, on checked arguments: ``f_core`` is public ``f`` without its checks."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .._validation import check_fits, check_real
from .activations import namespace
from .runs import Problem, TwoStepRun
from .targets import Teacher, check_rank, target_links

#: Bytes of the gradient's largest temporary: 64 MB blocks of neurons keep the N x n
#: pre-activation out of memory and still run at BLAS's full speed (benchmarks/bench_at_scale.py).
BLOCK_BYTES = 1 << 26
BLOCK_ELEMENTS = BLOCK_BYTES // 4
#: Entries of the pieces in which sigma' overwrites a block on the host (2 MB in float64).
DERIVATIVE_CHUNK = 1 << 18

def initialise_core(N, d, rng, dt, rows="gaussian", second_layer="gaussian"):
    """:func:`twostep.initialise`."""
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
    """:func:`twostep.make_teacher`; the target and the noise are checked here."""
    if isinstance(target, Teacher):
        if target.d != d:
            raise ValueError(f"target (a Teacher) has d={target.d}, but d={d}")
        if noise != 0.0 and noise != target.noise:
            raise ValueError(f"noise={noise} cannot be applied to a given Teacher (its noise is "
                             f"{target.noise}); build the Teacher with noise={noise} instead")
        return target
    links, _ = target_links(target)
    check_rank(links, d)
    teacher = Teacher.__new__(Teacher)
    teacher._draw(links, d, check_real(noise, "noise", low=0.0), rng)
    return teacher

def sample_core(teacher, n, rng, dt):
    """``teacher.sample``: inputs ``(n, d)``, then their labels."""
    return teacher._sample(n, rng, dt)

def labels_core(teacher, X, rng=None):
    """``teacher.labels`` (``rng``: only for label noise)."""
    return teacher._labels(X, rng)

def draw_problem_core(N, n, d, target, batch, rng, noise, dt) -> Problem:
    """:func:`twostep.model.steps.draw_problem`."""
    # The two steps hold W0, W1, W2, a gradient (N x d) and two batches (n x d) at once.
    check_fits(dt.itemsize * (4 * N * d + 2 * n * d), f"two steps at N={N}, n={n}, d={d} ({dt})")
    teacher = make_teacher_core(target, d, rng, noise)
    W0, a = initialise_core(N, d, rng, dt)
    X1, y1 = teacher._sample(n, rng, dt)
    X2, y2 = (X1, y1) if batch == "reused" else teacher._sample(n, rng, dt)
    return Problem(teacher, W0, a, X1, y1, X2, y2)

def correlation_loss_core(W, a, X, y, activation) -> float:
    r""":math:`L(W) = -\frac1n\sum_j y_ja^\top\sigma(Wx_j)`."""
    return float(-np.dot(y, activation(X @ W.T) @ a) / X.shape[0])

def block_rows(N, n, block_elements=BLOCK_ELEMENTS):
    """Rows of the ``(N, n)`` pre-activation in one block of at most ``block_elements``."""
    return max(1, min(N, block_elements // max(n, 1)))

def _gradient_rows(xp, W, n, block_elements=None):
    if block_elements is None:
        block_elements = BLOCK_BYTES // (xp.finfo(W.dtype).bits // 8)
    return block_rows(W.shape[0], n, block_elements)

def _derivative_in_place(activation, Z):
    # sigma'(Z) over Z by pieces starting at multiples of 64 entries: numpy's SIMD loops then
    # give the bits of the whole block. A derivative of a wider type keeps its own array.
    step = 64 // math.gcd(Z.shape[1], 64)
    rows = max(step, DERIVATIVE_CHUNK // max(Z.shape[1], 1) // step * step)
    for start in range(0, Z.shape[0], rows):
        piece = activation._derivative(Z[start:start + rows], 1)
        if start == 0 and piece.dtype != Z.dtype:
            return activation._derivative(Z, 1)
        Z[start:start + rows] = piece
    return Z

def pre_activations_into(W, X, out):
    r""":math:`WX^\top` into ``out`` ``(N, n)`` by :func:`gradient_core`'s blocks (same bits)."""
    rows = _gradient_rows(np, W, X.shape[0])
    for start in range(0, W.shape[0], rows):
        block = slice(start, min(W.shape[0], start + rows))
        np.matmul(W[block, :], X.T, out=out[block, :])
    return out

def gradient_core(W, a, X, y, activation, block_elements: int | None = None, pre_out=None,
                  pre_in=None):
    r""":func:`twostep.gradient` on any array library, by blocks of neurons. ``pre_out``
    (numpy, ``(N, n)``) keeps :math:`WX^\top`; ``pre_in`` gives it (never written)."""
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
    r""":math:`W - \eta\nabla L(W; X, y)` in the gradient's buffer."""
    G = gradient_core(W, a, X, y, activation, pre_out=pre_out)
    G *= -eta
    G += W
    return G

def two_steps_core(p, activation, steps, keep_pre, arrays=None, W1=None, second=True,
                   pre0=None) -> TwoStepRun:
    r""":func:`twostep.model.steps.two_steps` on ``p`` (``arrays``: its checked arrays). ``W1``:
    the first step, taken already; ``second=False``: no ``W2``, only its pre-activations;
    ``pre0``: :func:`initial_pre_activations`, shared by label sets of one draw."""
    (c1, al1), (c2, al2) = steps
    W0, a, X1, y1, X2, y2 = arrays or (p.W0, p.a, p.X1, p.y1, p.X2, p.y2)
    N, d = W0.shape
    n = X1.shape[0]
    batch = "reused" if p.X2 is p.X1 else "fresh"
    eta1, eta2 = c1 * N ** al1, c2 * N ** al2      # step_size on checked values
    Z1 = np.empty((N, n), dtype=W0.dtype) if keep_pre and W1 is None and pre0 is None else None
    Z2 = np.empty((N, n), dtype=W0.dtype) if keep_pre else None
    if W1 is None and pre0 is not None:
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
    r"""``pre0 = (W0 X1^T, W0 X2^T)`` of a fresh problem, as :func:`two_steps_core` has them."""
    Z1 = pre_activations_into(p.W0, p.X1, np.empty((p.W0.shape[0], p.X1.shape[0]),
                                                    dtype=p.W0.dtype))
    return Z1, p.W0 @ p.X2.T

def take_both_batches(p, activation, steps, keep_pre, second=True, pre0=None):
    r"""The reused run, then the fresh run, of a fresh problem (each bit for bit the run drawn
    alone), the first step taken once and made read-only."""
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
    r"""``{"reused": measure(run), "fresh": measure(run)}`` over :func:`take_both_batches`."""
    out = {}
    for run in take_both_batches(p, activation, steps, keep_pre, second, pre0):
        out[run.batch] = measure(run)
        del run
    return out
