r"""Activation functions and their Hermite coefficients.

An activation :math:`\sigma` enters the theory through
:math:`\mu_k = \mathbb{E}[\sigma(z)\mathrm{He}_k(z)] = \mathbb{E}[\sigma^{(k)}(z)]`
and, in the second step, through its derivatives of every order: the exact
expansion :math:`\sigma'(P+\Delta) = \sum_k \sigma^{(k+1)}(P)\Delta^k/k!`
uses :math:`\sigma^{(k+1)}` up to the degree of :math:`\sigma`. Three families:
:class:`PolynomialActivation` (the case the paper's theory covers exactly; its derivatives
also on CuPy or PyTorch arrays, :func:`namespace`), :class:`Tanh` and :class:`CentredReLU`.
"""

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
    if xp is np and len(coef) > 1:
        # c_L z + c_{L-1} as the first pass (the same bits): filling an array with c_L
        # first would be one more pass over an (N, n) array
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
    """Base class: an elementwise function with derivatives and Hermite coefficients.

    Subclasses implement ``_derivative(z, order)`` for ``order >= 0``.
    ``degree`` is the polynomial degree ``L``, or ``None`` if not a polynomial.
    """

    name = "activation"
    degree: int | None = None

    def __call__(self, z):
        return self._derivative(z, 0)

    def derivative(self, z, order: int = 1) -> np.ndarray:
        r"""Elementwise :math:`\sigma^{(\text{order})}(z)`, same shape as ``z``
        (``order >= 0``, checked here; the subclasses' ``_derivative`` computes it)."""
        return self._derivative(z, check_int(order, "order", 0))

    def hermite_coefficients(self, degree: int, points: int = DEFAULT_POINTS) -> np.ndarray:
        r""":math:`\mu_0,\dots,\mu_{\text{degree}}` with :math:`\mu_k=\mathbb{E}[\sigma(z)\mathrm{He}_k(z)]`,
        by Gauss--Hermite quadrature unless a subclass knows them; shape ``(degree + 1,)``."""
        return self._hermite_coefficients(check_int(degree, "degree", 0), points)

    def _hermite_coefficients(self, degree, points):
        return hermite_coefficients(self, degree, points)

    def __repr__(self) -> str:
        return self.name


class PolynomialActivation(Activation):
    r"""Polynomial activation :math:`\sigma = \sum_{k=0}^{L} \mu_k \mathrm{He}_k / k!`.

    Parameters
    ----------
    mu : sequence of float, length ``L + 1``
        Hermite coefficients :math:`\mu_0, \dots, \mu_L`; ``mu[L]`` must be non-zero.
    name : str, optional
        Label used in tables and legends.
    """

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
        # Cache the monomial coefficients of each derivative: the second step
        # evaluates sigma^(k+1) on N x n matrices for every k, and Horner's
        # rule in place needs one temporary where Clenshaw's needs several.
        while len(self._series) <= order:
            prev = self._series[-1]
            self._series.append(H.hermeder(prev) if prev.size > 1 else np.zeros(1))
        return H.herme2poly(self._series[order])

    def _derivative(self, z, order):
        # By Horner's rule, in place (one temporary of z's shape). z may be a numpy, CuPy or
        # PyTorch array (any library of the array API standard); the result is of the same kind.
        xp, z = namespace(z)
        dtype = np.result_type(z, np.float32) if xp is np else z.dtype
        if order > self.degree:
            return xp.zeros_like(z, dtype=dtype)
        return _horner(xp, z, self._power_coefficients(order), dtype)

    def _hermite_coefficients(self, degree, points):
        # Exact: the stored mu padded with zeros (quadrature would agree).
        out = np.zeros(degree + 1)
        m = min(degree, self.degree) + 1
        out[:m] = self.mu[:m]
        return out


class Tanh(Activation):
    r""":math:`\sigma(z) = \tanh(z)`; odd, so :math:`\mu_{2j} = 0`.

    Derivatives are polynomials in :math:`t = \tanh z`, from
    :math:`\frac{d}{dz} P(t) = P'(t)(1 - t^2)`.
    """

    name = "tanh"
    degree = None

    def __init__(self):
        self._polys = [Polynomial([0.0, 1.0])]

    def _derivative(self, z, order):
        # Horner's rule in place, in z's dtype: numpy's Polynomial evaluates float32 input in
        # float64, and the gradient's product then ran in float64 too (1.4 times the time of
        # sigma_4's at N = 4000). In float64 the two agree bit for bit (the same Horner steps).
        while len(self._polys) <= order:
            self._polys.append(self._polys[-1].deriv() * Polynomial([1.0, 0.0, -1.0]))
        xp, z = namespace(z)
        t = xp.tanh(z)
        if order == 0:
            return t
        return _horner(xp, t, self._polys[order].coef, t.dtype)


class CentredReLU(Activation):
    r""":math:`\sigma(z) = \max(z, 0) - 1/\sqrt{2\pi}`, centred so that :math:`\mu_0 = 0`.

    Only :math:`\sigma` and :math:`\sigma'` exist as functions; the exact
    second-step decomposition needs a polynomial activation.
    """

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
        r"""Closed form, because the kink at 0 spoils Gauss--Hermite quadrature
        (error ~1e-3 at 200 points): :math:`\mu_0 = 0`, :math:`\mu_1 = 1/2`, and
        :math:`\mu_k = \mathbb{E}[\delta^{(k-2)}(z)] = \mathrm{He}_{k-2}(0)/\sqrt{2\pi}` for :math:`k\ge2`."""
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

    ``"polyL"`` (L = 2, 3, 4) is :math:`\sum_{k=1}^{L} \mathrm{He}_k/k!`
    (:math:`\mu_0 = 0`, :math:`\mu_1 = \dots = \mu_L = 1`), the book's
    default family; ``"tanh"``; ``"relu"`` (centred).
    """
    check_choice(name, "name", ACTIVATIONS)
    if name.startswith("poly"):
        L = int(name[4:])
        return PolynomialActivation([0.0] + [1.0] * L, name=f"He_1+...+He_{L}/{L}!")
    return Tanh() if name == "tanh" else CentredReLU()


def as_activation(activation) -> Activation:
    """An :class:`Activation` given as itself or by name (see :func:`get_activation`)."""
    if isinstance(activation, str):
        return get_activation(activation)
    return check_type(activation, "activation", Activation,
                      f"a twostep Activation or one of {list(ACTIVATIONS)}")


def check_activation(activation) -> Activation:
    """``activation`` if it is an :class:`Activation`, else a ``TypeError``."""
    return check_type(activation, "activation", Activation,
                      "a twostep Activation (see twostep.get_activation)")


def host_array(x) -> np.ndarray:
    """A numpy array from a numpy, CuPy or PyTorch array (copied off the device if needed)."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "get"):          # CuPy
        return x.get()
    if hasattr(x, "detach"):       # PyTorch
        return x.detach().cpu().numpy()
    return np.asarray(x)


def namespace(z):
    """``(xp, z)``: for a CuPy, PyTorch or other array-API array, its namespace (through
    ``array_api_compat``) and ``z`` itself; for anything else numpy and ``np.asarray(z)``
    (numpy arrays, lists, scalars; bad input then fails in the numpy checks)."""
    if not isinstance(z, np.ndarray) and is_array_api_obj(z):
        return array_namespace(z), z
    return np, np.asarray(z)
