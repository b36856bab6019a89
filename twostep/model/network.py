r"""The network :math:`f(x) = a^\top\sigma(Wx)`, its initialisation, Gaussian inputs and the
gradient of the correlation loss (numpy, CuPy or PyTorch arrays)."""

from __future__ import annotations

import numpy as np

from array_api_compat import is_array_api_obj

from .._validation import check_array, check_choice, check_dtype, check_fits, check_int, check_rng
from ._core import block_rows, gradient_core, initialise_core
from .activations import Activation, check_activation

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

#: Initialisations of the first and of the second layer accepted by :func:`initialise`.
ROWS = ("gaussian", "unit")
SECOND_LAYERS = ("gaussian", "constant")
#: Losses whose gradient :func:`gradient` and :func:`twostep.one_step` take.
LOSSES = ("correlation", "squared")

def initialise(N: int, d: int, rng: np.random.Generator, dtype=np.float64, *,
               rows: str = "gaussian", second_layer: str = "gaussian"):
    r"""Initial weights: :math:`(W_0)_{ik} \sim N(0, 1/d)`, then :math:`a_i \sim N(0, 1/N)`.

    Parameters
    ----------
    N, d : int
        Width and input dimension.
    rng : numpy.random.Generator
    dtype : float64 or float32
    rows : {"gaussian", "unit"}
        ``"unit"``: each row of the same draw divided by its norm.
    second_layer : {"gaussian", "constant"}
        ``"constant"``: :math:`a_i = 1/\sqrt N`, nothing drawn.

    Returns
    -------
    W0 : ndarray, shape (N, d)
    a : ndarray, shape (N,)

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
    """``W`` ``(N, d)``, ``a`` ``(N,)``, ``X`` ``(n, d)``, ``y`` ``(n,)`` as finite arrays of
    ``W``'s float dtype (float64 unless float32)."""
    W = np.asarray(W)
    dt = W.dtype if W.dtype in (np.float32, np.float64) else np.float64
    W = check_array(W, "W", ndim=2, dtype=dt)
    N, d = W.shape
    a = check_array(a, "a", shape=(N,), dtype=dt)
    X = check_array(X, "X", ndim=2, shape=(None, d), dtype=dt)
    if X.shape[0] == 0:   # every update averages over the batch
        raise ValueError(f"X must hold at least one sample (a batch of shape (n, {d}), n >= 1), "
                         f"got shape {X.shape}")
    if y is None:
        return W, a, X
    y = check_array(y, "y", shape=(X.shape[0],), dtype=dt)
    return W, a, X, y

def host_checked(W, a, X, y):
    """:func:`check_network` of numpy input; device arrays (CuPy, PyTorch) as they are."""
    if not is_array_api_obj(W) or isinstance(W, np.ndarray):
        return check_network(W, a, X, y)
    return W, a, X, y

def loss_labels(W, a, X, y, activation: Activation, loss: str):
    """What the gradient weighs the inputs by: ``y`` (correlation loss), or the residuals
    (squared loss)."""
    check_choice(loss, "loss", LOSSES)
    return residuals(W, a, X, y, activation) if loss == "squared" else y

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
        ``"squared"``: of :math:`\frac1{2n}\sum_j(y_j - f(x_j))^2`, i.e. :math:`y` replaced by
        the residuals :math:`y - f(x)`.

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
    W, a, X, y = host_checked(W, a, X, y)
    check_activation(activation)
    return gradient_core(W, a, X, loss_labels(W, a, X, y, activation, loss), activation)

def residuals(W, a, X, y, activation: Activation):
    r""":math:`y_j - a^\top\sigma(Wx_j)`, ``(n,)`` (unchecked, on the arrays' device)."""
    return y - activation(X @ W.T) @ a

def block_elements(N: int, n: int) -> int:
    """Entries of the gradient's block temporary: whole rows of the ``(N, n)`` pre-activation."""
    return block_rows(N, n) * n
