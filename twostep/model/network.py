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

import numpy as np

from array_api_compat import is_array_api_obj

from .._validation import check_array, check_choice, check_dtype, check_fits, check_int, check_rng
from ._core import (BLOCK_BYTES, BLOCK_ELEMENTS, block_rows,  # noqa: F401
                    correlation_loss_core, gradient_core, initialise_core)
from .activations import Activation, check_activation, namespace


def gaussian_inputs(n: int, d: int, rng: np.random.Generator, dtype=np.float64) -> np.ndarray:
    r"""Inputs :math:`x_j \sim N(0, I_d)` stacked as rows.

    Parameters
    ----------
    n, d : int
        Number of inputs and their dimension.
    rng : numpy.random.Generator
    dtype : float64 or float32

    Returns
    -------
    ndarray, shape (n, d)

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> ts.gaussian_inputs(4, 3, np.random.default_rng(0)).shape
    (4, 3)
    """
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

    ``W0`` is drawn before ``a``. The options give the initialisation of other groups' work.

    Parameters
    ----------
    N, d : int
        Width and input dimension.
    rng : numpy.random.Generator
    dtype : float64 or float32
    rows : {"gaussian", "unit"}
        ``"unit"`` divides every row of the same Gaussian draw by its norm (rows uniform on
        the unit sphere).
    second_layer : {"gaussian", "constant"}
        ``"constant"`` sets :math:`a_i = 1/\sqrt N` and draws nothing for it.

    Returns
    -------
    W0 : ndarray, shape (N, d)
        Rows of norm about 1.
    a : ndarray, shape (N,)
        Norm about 1.

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> W0, a = ts.initialise(200, 100, np.random.default_rng(0))
    >>> W0.shape, a.shape, round(float(np.linalg.norm(a)), 1)
    ((200, 100), (200,), 1.0)
    """
    N, d = check_int(N, "N"), check_int(d, "d")
    check_rng(rng)
    check_choice(rows, "rows", ROWS)
    check_choice(second_layer, "second_layer", SECOND_LAYERS)
    dt = check_dtype(dtype)
    check_fits(dt.itemsize * (N * d + N), f"initialise at N={N}, d={d} ({dt})")
    return initialise_core(N, d, rng, dt, rows, second_layer)


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
    return correlation_loss_core(W, a, X, y, check_activation(activation))


def gradient(W, a, X, y, activation: Activation, *, loss: str = "correlation") -> np.ndarray:
    r"""Gradient of the correlation loss in ``W``:

    .. math:: \nabla L(W) = -\frac1n\operatorname{diag}(a)\big[\sigma'(WX^\top)\odot\mathbf 1 y^\top\big]X.

    Host (numpy) input is validated; CuPy or PyTorch arrays are used as they are, on
    their device, with a polynomial activation.

    Parameters
    ----------
    W : ndarray, shape (N, d)
    a : ndarray, shape (N,)
    X : ndarray, shape (n, d)
    y : ndarray, shape (n,)
    activation : Activation
    loss : {"correlation", "squared"}
        ``"squared"``: the gradient of :math:`\frac1{2n}\sum_j(y_j - f(x_j))^2`, the same
        expression with :math:`y` replaced by the residuals :math:`y - f(x)`.

    Returns
    -------
    ndarray, shape (N, d)

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> rng = np.random.default_rng(0)
    >>> W0, a = ts.initialise(20, 10, rng)
    >>> X, y = ts.make_teacher("he1", 10, rng).sample(30, rng)
    >>> ts.gradient(W0, a, X, y, ts.get_activation("poly3")).shape
    (20, 10)
    """
    if not is_array_api_obj(W) or isinstance(W, np.ndarray):
        W, a, X, y = check_network(W, a, X, y)
    check_activation(activation)
    check_choice(loss, "loss", LOSSES)
    if loss == "squared":
        y = residuals(W, a, X, y, activation)
    return gradient_core(W, a, X, y, activation)


def residuals(W, a, X, y, activation: Activation):
    r"""Residuals :math:`y_j - a^\top\sigma(Wx_j)` of the network on a batch, shape ``(n,)``
    (unchecked: the arrays are used as they are, on their device)."""
    return y - activation(X @ W.T) @ a


def block_elements(N: int, n: int) -> int:
    """Entries of one block temporary of the gradient (whole rows of the ``(N, n)`` pre-activation,
    at most :data:`BLOCK_ELEMENTS` (``BLOCK_BYTES`` of float32) unless one row is longer)."""
    return block_rows(N, n) * n
