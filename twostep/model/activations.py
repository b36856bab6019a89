r"""Activations :math:`\sigma`, their derivatives and Hermite coefficients
:math:`\mu_k = \mathbb{E}[\sigma(z)\mathrm{He}_k(z)]`: polynomials (exact theory; also on CuPy or
PyTorch arrays), tanh and the centred ReLU."""

from __future__ import annotations

import numpy as np
from array_api_compat import array_namespace, is_array_api_obj
from numpy.polynomial import Polynomial
from numpy.polynomial import hermite_e as H
from scipy.special import factorial

from .._validation import check_array, check_choice, check_int, check_type
from .hermite import DEFAULT_POINTS, hermite_coefficients

def _horner(xp, z, coef, dtype):
    # sum_j coef[j] z^j by Horner's rule in place, in ``dtype``: one temporary of z's shape.
    if xp is np and len(coef) > 1:   # c_L z + c_{L-1} first: one pass fewer, the same bits
        out = np.multiply(z, np.dtype(dtype).type(float(coef[-1])), dtype=dtype)
        out += float(coef[-2])
        rest = coef[-3::-1]
    else:
        out, rest = xp.full_like(z, float(coef[-1]), dtype=dtype), coef[-2::-1]
    for c in rest:
        out *= z
        out += float(c)
    return out

class Activation:
    """An elementwise function; subclasses implement ``_derivative(z, order)``. ``degree``: the
    polynomial degree ``L``, or ``None``."""

    name = "activation"
    degree: int | None = None

    def __call__(self, z):
        return self._derivative(z, 0)

    def derivative(self, z, order: int = 1) -> np.ndarray:
        r"""Elementwise :math:`\sigma^{(\text{order})}(z)`, ``z``'s shape."""
        return self._derivative(z, check_int(order, "order", 0))

    def hermite_coefficients(self, degree: int, points: int = DEFAULT_POINTS) -> np.ndarray:
        r""":math:`\mu_0,\dots,\mu_{\text{degree}}`, shape ``(degree + 1,)``."""
        return self._hermite_coefficients(check_int(degree, "degree", 0), points)

    def _hermite_coefficients(self, degree, points):
        return hermite_coefficients(self, degree, points)

    def __repr__(self) -> str:
        return self.name

class PolynomialActivation(Activation):
    r""":math:`\sigma = \sum_{k=0}^{L} \mu_k \mathrm{He}_k / k!` from ``mu`` (length ``L + 1``,
    ``mu[L] != 0``); ``name`` labels it."""

    def __init__(self, mu, name: str | None = None):
        mu = check_array(mu, "mu", ndim=1)
        if mu.size < 2:
            raise ValueError(f"mu must hold at least mu_0 and mu_1 (length >= 2), got length {mu.size}")
        if mu[-1] == 0:
            raise ValueError("mu's last entry (the leading Hermite coefficient mu_L) must be non-zero")
        self.mu = mu.copy()
        self.degree = mu.size - 1
        self._series = [self.mu / factorial(np.arange(self.mu.size))]   # He_k series
        self.name = name or "poly(" + ", ".join(f"{m:g}" for m in mu) + ")"

    def _power_coefficients(self, order: int) -> np.ndarray:
        # Monomial coefficients, cached: Horner's rule in place needs one temporary on the
        # N x n matrices where Clenshaw's needs several.
        while len(self._series) <= order:
            prev = self._series[-1]
            self._series.append(H.hermeder(prev) if prev.size > 1 else np.zeros(1))
        return H.herme2poly(self._series[order])

    def _derivative(self, z, order):
        xp, z = namespace(z)
        dtype = np.result_type(z, np.float32) if xp is np else z.dtype
        if order > self.degree:
            return xp.zeros_like(z, dtype=dtype)
        return _horner(xp, z, self._power_coefficients(order), dtype)

    def _hermite_coefficients(self, degree, points):
        out = np.zeros(degree + 1)
        m = min(degree, self.degree) + 1
        out[:m] = self.mu[:m]
        return out

class Tanh(Activation):
    r""":math:`\sigma(z) = \tanh(z)` (odd: :math:`\mu_{2j} = 0`); ``Tanh()`` takes no argument.

    Derivatives are polynomials in :math:`t = \tanh z`: :math:`\frac{d}{dz} P(t) = P'(t)(1 - t^2)`.

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> ts.Tanh()(np.array([0.0, 1.0])).round(4)
    array([0.    , 0.7616])
    >>> round(float(ts.Tanh().hermite_coefficients(1)[1]), 4)   # mu_1 = E[tanh'(z)]
    0.6057
    """

    name = "tanh"
    degree = None

    def __init__(self):
        self._polys = [Polynomial([0.0, 1.0])]

    def _derivative(self, z, order):
        # Horner's rule in z's dtype: numpy's Polynomial evaluates float32 in float64 (and the
        # gradient's product with it, 1.4 times slower).
        while len(self._polys) <= order:
            self._polys.append(self._polys[-1].deriv() * Polynomial([1.0, 0.0, -1.0]))
        xp, z = namespace(z)
        t = xp.tanh(z)
        if order == 0:
            return t
        return _horner(xp, t, self._polys[order].coef, t.dtype)

class CentredReLU(Activation):
    r""":math:`\sigma(z) = \max(z, 0) - 1/\sqrt{2\pi}` (:math:`\mu_0 = 0`); derivatives of
    order 0 and 1 only."""

    name = "centred ReLU"
    degree = None

    def _derivative(self, z, order):
        z = np.asarray(z)
        if order == 0:
            return np.maximum(z, 0) - 1.0 / np.sqrt(2.0 * np.pi)
        if order == 1:
            return (z > 0).astype(np.result_type(z, np.float32))
        raise ValueError(
            f"order must be 0 or 1 for the centred ReLU (higher derivatives are "
            f"distributions), got {order}")

    def _hermite_coefficients(self, degree, points):
        # Closed form (the kink spoils quadrature): mu_1 = 1/2, mu_k = He_{k-2}(0)/sqrt(2 pi).
        out = np.zeros(degree + 1)
        if degree >= 1:
            out[1] = 0.5
        for k in range(2, degree + 1):
            out[k] = H.hermeval(0.0, np.eye(k - 1)[k - 2]) / np.sqrt(2.0 * np.pi)
        return out

#: Names accepted by :func:`get_activation`.
ACTIVATIONS = ("poly2", "poly3", "poly4", "tanh", "relu")

def get_activation(name: str) -> Activation:
    r"""An activation by name.

    Parameters
    ----------
    name : {"poly2", "poly3", "poly4", "tanh", "relu"}
        ``"polyL"``: :math:`\sum_{k=1}^{L} \mathrm{He}_k/k!`; ``"relu"``: the centred ReLU.

    Returns
    -------
    Activation

    Examples
    --------
    >>> import twostep as ts
    >>> act = ts.get_activation("poly3")
    >>> act.degree, act.mu.tolist()
    (3, [0.0, 1.0, 1.0, 1.0])
    """
    check_choice(name, "name", ACTIVATIONS)
    if name.startswith("poly"):
        L = int(name[4:])
        return PolynomialActivation([0.0] + [1.0] * L, name=f"He_1+...+He_{L}/{L}!")
    return Tanh() if name == "tanh" else CentredReLU()

def as_activation(activation) -> Activation:
    """An :class:`Activation` given as itself or by name (see :func:`get_activation`)."""
    if isinstance(activation, str):
        return get_activation(check_choice(activation, "activation", ACTIVATIONS))
    return check_type(activation, "activation", Activation,
                      f"a twostep Activation or one of {list(ACTIVATIONS)}")

def check_activation(activation) -> Activation:
    """``activation`` if it is an :class:`Activation`."""
    return check_type(activation, "activation", Activation,
                      "a twostep Activation (see twostep.get_activation)")

def host_array(x) -> np.ndarray:
    """A numpy array from a numpy, CuPy or PyTorch array."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "get"):          # CuPy
        return x.get()
    if hasattr(x, "detach"):       # PyTorch
        return x.detach().cpu().numpy()
    return np.asarray(x)

def namespace(z):
    """``(xp, z)``: an array-API array's namespace and itself, else numpy and ``np.asarray(z)``."""
    if not isinstance(z, np.ndarray) and is_array_api_obj(z):
        return array_namespace(z), z
    return np, np.asarray(z)
