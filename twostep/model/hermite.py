r"""Gauss--Hermite quadrature of :math:`\mathbb{E}[f(z)]` and
:math:`c_k(f) = \mathbb{E}[f(z)\mathrm{He}_k(z)]`, :math:`z\sim N(0, 1)` (exact below degree
``2 * points``)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.polynomial import hermite_e as H

from .._validation import check_int, check_real

#: Largest rule numpy's ``hermegauss`` computes without overflow (360 works, 380 does not).
MAX_POINTS = 300
#: Default rule: exact below degree 400, ~1e-12 for smooth bounded functions (tanh, sin(2z)).
DEFAULT_POINTS = 200

@lru_cache(maxsize=16)
def _rule(points: int):
    z, w = H.hermegauss(points)
    w = w / np.sqrt(2.0 * np.pi)   # hermegauss integrates against exp(-z^2/2), not N(0, 1)
    z.setflags(write=False)
    w.setflags(write=False)
    return z, w

def gauss_nodes(points: int = DEFAULT_POINTS):
    """Nodes ``z`` and weights ``w``, ``(points,)``: ``sum(w * f(z)) ~ E[f(z)]``."""
    points = check_int(points, "points", 2)
    if points > MAX_POINTS:
        raise ValueError(f"points must be in [2, {MAX_POINTS}], got {points}")
    return _rule(points)

def gaussian_expectation(f, points: int = DEFAULT_POINTS) -> float:
    r""":math:`\mathbb{E}[f(z)]`, :math:`z\sim N(0,1)`, by Gauss--Hermite quadrature.

    Parameters
    ----------
    f : callable
        Maps a 1-d array to an array of the same shape.
    points : int
        Quadrature points, in ``[2, 300]``: exact for polynomials of degree below ``2 * points``.

    Returns
    -------
    float

    Examples
    --------
    >>> import twostep as ts
    >>> round(ts.gaussian_expectation(lambda z: z ** 4), 10)
    3.0
    """
    if not callable(f):
        raise TypeError(f"f must be callable, got {type(f).__name__}")
    z, w = gauss_nodes(points)
    return float(np.dot(w, np.asarray(f(z), dtype=float)))

def hermite_polynomial(k: int, z) -> np.ndarray:
    r""":math:`\mathrm{He}_k(z)` elementwise."""
    k = check_int(k, "k", 0)
    coef = np.zeros(k + 1)
    coef[k] = 1.0
    return H.hermeval(np.asarray(z, dtype=float), coef)

def hermite_coefficients(f, degree: int, points: int = DEFAULT_POINTS) -> np.ndarray:
    r""":math:`c_0(f), \dots, c_{\rm degree}(f)`, shape ``(degree + 1,)``."""
    if not callable(f):
        raise TypeError(f"f must be callable, got {type(f).__name__}")
    degree = check_int(degree, "degree", 0)
    z, w = gauss_nodes(points)
    return H.hermevander(z, degree).T @ (w * np.asarray(f(z), dtype=float))

def information_exponent(coefficients, tol: float = 1e-8) -> int | None:
    r"""Smallest :math:`k \ge 1` with :math:`|c_k| > \text{tol}` (``coefficients``: ``c_0, c_1,
    ...``); ``None`` if all vanish."""
    c = np.asarray(coefficients, dtype=float)
    if c.ndim != 1 or c.size < 2:
        raise ValueError(f"coefficients must be a 1-d array of length >= 2, got shape {c.shape}")
    tol = check_real(tol, "tol", low=0.0)
    nonzero = np.flatnonzero(np.abs(c[1:]) > tol)
    return int(nonzero[0] + 1) if nonzero.size else None
