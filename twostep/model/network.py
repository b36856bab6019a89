r"""The two-layer network, its initialisation, the data, and the correlation loss.

The network is :math:`f(x) = a^\top\sigma(Wx)` with :math:`W\in\mathbb{R}^{N\times d}`
and :math:`a\in\mathbb{R}^N`; inputs are rows of :math:`X\in\mathbb{R}^{n\times d}`.
The correlation loss and its gradient are

.. math::
    L(W) = -\frac1n\sum_{j} y_j f(x_j), \qquad
    \nabla L(W) = -\frac1n \operatorname{diag}(a)
    \big[\sigma'(WX^\top)\odot \mathbf{1}y^\top\big] X,

two matrix products and one elementwise product (no :math:`N\times n\times d` array).
:func:`gradient` is written once for every array library: numpy input is validated, and
CuPy or PyTorch arrays (the array API standard, through ``array_api_compat``) run the same
code on their device.
"""

from __future__ import annotations

import math
import numpy as np

from array_api_compat import is_array_api_obj

from .._validation import check_array, check_choice, check_dtype, check_fits, check_int, check_rng
from .activations import Activation, check_activation, namespace


def gaussian_inputs(n: int, d: int, rng: np.random.Generator, dtype=np.float64) -> np.ndarray:
    r"""Inputs :math:`x_j \sim N(0, I_d)` stacked as rows: shape ``(n, d)``."""
    n, d = check_int(n, "n"), check_int(d, "d")
    check_rng(rng)
    dt = check_dtype(dtype)
    check_fits(dt.itemsize * n * d, f"gaussian_inputs of shape ({n}, {d}) ({dt})")
    return rng.standard_normal((n, d), dtype=dt)


#: Initialisations of the first layer accepted by :func:`initialise`.
ROWS = ("gaussian", "unit")

#: Initialisations of the second layer accepted by :func:`initialise`.
SECOND_LAYERS = ("gaussian", "constant")

#: Losses whose gradient :func:`gradient` and :func:`twostep.one_step` take.
LOSSES = ("correlation", "squared")


def initialise(N: int, d: int, rng: np.random.Generator, dtype=np.float64, *,
               rows: str = "gaussian", second_layer: str = "gaussian"):
    r"""Initial weights: :math:`(W_0)_{ik} \sim N(0, 1/d)`, :math:`(a_0)_i \sim N(0, 1/N)`.

    Returns ``W0`` of shape ``(N, d)`` (rows of norm about 1) and ``a`` of
    shape ``(N,)`` (norm about 1). ``W0`` is drawn before ``a``.

    Two options give the initialisation of other groups' work (the book's own is the
    default, and the defaults draw exactly what they always drew):

    rows : {"gaussian", "unit"}
        ``"unit"`` divides every row of the same Gaussian draw by its norm, so that each
        neuron's weight vector is uniform on the unit sphere (rows of norm exactly 1).
    second_layer : {"gaussian", "constant"}
        ``"constant"`` sets :math:`a_i = 1/\sqrt N` for every neuron (norm exactly 1) and
        draws nothing from ``rng`` for it.
    """
    N, d = check_int(N, "N"), check_int(d, "d")
    check_rng(rng)
    check_choice(rows, "rows", ROWS)
    check_choice(second_layer, "second_layer", SECOND_LAYERS)
    dt = check_dtype(dtype)
    check_fits(dt.itemsize * (N * d + N), f"initialise at N={N}, d={d} ({dt})")
    return _initialise(N, d, rng, dt, rows, second_layer)


def _initialise(N, d, rng, dt, rows="gaussian", second_layer="gaussian"):
    # initialise on checked arguments (dt a numpy dtype).
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


def check_network(W, a, X, y=None):
    """``W`` ``(N, d)``, ``a`` ``(N,)``, ``X`` ``(n, d)`` and ``y`` ``(n,)`` as finite float arrays
    of ``W``'s dtype (float64 unless ``W`` is float32), or a clear error."""
    W = np.asarray(W)
    dt = W.dtype if W.dtype in (np.float32, np.float64) else np.float64
    W = check_array(W, "W", ndim=2, dtype=dt)
    N, d = W.shape
    a = check_array(a, "a", shape=(N,), dtype=dt)
    X = check_array(X, "X", ndim=2, shape=(None, d), dtype=dt)
    if X.shape[0] == 0:
        # Every update averages over the batch: an empty one would divide by zero.
        raise ValueError(f"X must hold at least one sample (a batch of shape (n, {d}), n >= 1), "
                         f"got shape {X.shape}")
    if y is None:
        return W, a, X
    y = check_array(y, "y", shape=(X.shape[0],), dtype=dt)
    return W, a, X, y


def correlation_loss(W, a, X, y, activation: Activation) -> float:
    r""":math:`L(W) = -\frac1n\sum_j y_j f(x_j)`, :math:`f(x) = a^\top\sigma(Wx)`."""
    W, a, X, y = check_network(W, a, X, y)
    return _correlation_loss(W, a, X, y, check_activation(activation))


def _correlation_loss(W, a, X, y, activation):
    return float(-np.dot(y, activation(X @ W.T) @ a) / X.shape[0])


def squared_loss(W, a, X, y, activation: Activation) -> float:
    r""":math:`L_{sq}(W) = \frac1{2n}\sum_j \big(y_j - f(x_j)\big)^2`, :math:`f(x) = a^\top\sigma(Wx)`."""
    W, a, X, y = check_network(W, a, X, y)
    check_activation(activation)
    r = y - activation(X @ W.T) @ a
    return float(r @ r / (2 * X.shape[0]))


def gradient(W, a, X, y, activation: Activation, *, loss: str = "correlation") -> np.ndarray:
    r"""Gradient of the correlation loss in ``W``, shape ``(N, d)``:

    .. math:: \nabla L(W) = -\frac1n\operatorname{diag}(a)\big[\sigma'(WX^\top)\odot\mathbf 1 y^\top\big]X.

    With ``loss="squared"`` it is the gradient of :func:`squared_loss` instead, the same
    expression with the labels :math:`y` replaced by the residuals
    :math:`y - f(x)` of the network at ``W``.

    Host (numpy) input is validated; CuPy or PyTorch arrays are used as they are, on
    their device, with a polynomial activation (its derivative is evaluated by Horner's
    rule on the same device).
    """
    if not is_array_api_obj(W) or isinstance(W, np.ndarray):
        W, a, X, y = check_network(W, a, X, y)
    check_activation(activation)
    check_choice(loss, "loss", LOSSES)
    if loss == "squared":
        y = residuals(W, a, X, y, activation)
    return _gradient(W, a, X, y, activation)


def residuals(W, a, X, y, activation: Activation):
    r"""Residuals :math:`y_j - a^\top\sigma(Wx_j)` of the network on a batch, shape ``(n,)``
    (unchecked: the arrays are used as they are, on their device)."""
    return y - activation(X @ W.T) @ a


#: Bytes of the largest temporary the gradient builds: blocks of neurons of 64 MB (16M entries
#: in float32, 8M in float64) keep the N x n pre-activation out of memory from N = 4000 on (in
#: float64 from N = 2900), while each block's product stays large enough for BLAS to run at the
#: speed of one whole product (at N = 8000 on two cores, float32, blocks of 4M entries cost
#: 1.17 products per product, 16M 1.07; benchmarks/bench_at_scale.py). How the rows are split
#: does not change a float64 gradient (OpenBLAS sums every entry in the same order).
BLOCK_BYTES = 1 << 26
#: The most entries a block holds (float32).
BLOCK_ELEMENTS = BLOCK_BYTES // 4


def block_elements(N: int, n: int) -> int:
    """Entries of one block temporary of the gradient (whole rows of the ``(N, n)`` pre-activation,
    at most ``BLOCK_ELEMENTS`` unless one row is longer)."""
    return _block_rows(N, n) * n


def _block_rows(N, n, block_elements=BLOCK_ELEMENTS):
    return max(1, min(N, block_elements // max(n, 1)))


#: Entries of the pieces in which :math:`\sigma'` overwrites a block of pre-activations on
#: the host: the one temporary of that step (2 MB in float64), where a whole block would be
#: another block's worth of memory.
DERIVATIVE_CHUNK = 1 << 18


def _derivative_in_place(activation, Z):
    # sigma'(Z) written over Z, a few rows at a time, with a temporary of about
    # DERIVATIVE_CHUNK entries. Every piece starts a multiple of 64 entries into Z, so numpy's
    # SIMD loops (np.tanh in float32 among them) group the entries as for the whole block and
    # the values are the same bit for bit. An activation whose derivative comes out in a wider
    # type than Z (none of the package's own) keeps its own array.
    step = 64 // math.gcd(Z.shape[1], 64)
    rows = max(step, DERIVATIVE_CHUNK // max(Z.shape[1], 1) // step * step)
    for start in range(0, Z.shape[0], rows):
        piece = activation._derivative(Z[start:start + rows], 1)
        if start == 0 and piece.dtype != Z.dtype:
            return activation._derivative(Z, 1)
        Z[start:start + rows] = piece
    return Z


def _gradient_rows(xp, W, n, block_elements=None):
    # Rows of W per block of _gradient: BLOCK_BYTES of pre-activations unless given.
    if block_elements is None:
        block_elements = BLOCK_BYTES // (xp.finfo(W.dtype).bits // 8)
    return _block_rows(W.shape[0], n, block_elements)


def _pre_activations_into(W, X, out):
    # W X^T into out ((N, n), numpy), by the blocks of _gradient's products, so that the values
    # are those a step from W would keep (pre_out) bit for bit, without the step's second product.
    rows = _gradient_rows(np, W, X.shape[0])
    for start in range(0, W.shape[0], rows):
        block = slice(start, min(W.shape[0], start + rows))
        np.matmul(W[block, :], X.T, out=out[block, :])
    return out


def _gradient(W, a, X, y, activation, block_elements: int | None = None, pre_out=None,
              pre_in=None):
    # Unchecked core, shared with the training loop and the device backends: per block
    # of neurons, one product for the pre-activations, sigma' and the label/readout
    # scalings in place, one product into the block's rows of G. With ``pre_out`` (numpy,
    # (N, n)) the pre-activations W X^T are kept there: the exact terms of the second step
    # need W_0 X_2^T and W_1 X_2^T, which the steps have just computed. With ``pre_in``
    # (numpy, (N, n)) they were computed before (_pre_activations_into), once for several
    # label sets or activations of one draw, and are read, never written: a block's sigma'
    # goes over a copy, so G is the same bit for bit.
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
