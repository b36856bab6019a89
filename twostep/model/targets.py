r"""Links :math:`g` (Hermite coefficients, information exponent) and teachers
:math:`y = \sum_r g_r(\langle\beta^*_r, x\rangle) + \varepsilon`, orthonormal :math:`\beta^*_r`."""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from .._validation import check_array, check_choice, check_dtype, check_int, check_real, check_rng
from . import hermite
from .hermite import DEFAULT_POINTS, gaussian_expectation, hermite_coefficients, hermite_polynomial

MAX_DEGREE = 12

class Link:
    r"""A link :math:`g`: ``func`` (vectorised) and a ``name`` for tables and legends."""

    def __init__(self, func: Callable[[np.ndarray], np.ndarray], name: str):
        if not callable(func):
            raise TypeError(f"func must be callable, got {type(func).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"name must be a string, got {type(name).__name__}")
        self.func, self.name, self._coef = func, name, None

    def __call__(self, z) -> np.ndarray:
        return self.func(np.asarray(z))

    @property
    def coefficients(self) -> np.ndarray:
        r""":math:`c_0, \dots, c_{12}`, shape ``(13,)``, by quadrature."""
        if self._coef is None:
            c = hermite_coefficients(self.func, MAX_DEGREE)
            # zero the ~1e-15 quadrature noise, so the information exponent is exact
            c[np.abs(c) < 1e-10] = 0.0
            self._coef = c
        return self._coef

    @property
    def information_exponent(self) -> int | None:
        """Smallest ``k >= 1`` with ``c_k != 0`` (``None`` if ``g`` is constant)."""
        return hermite.information_exponent(self.coefficients, tol=1e-10)

    @property
    def second_moment(self) -> float:
        r""":math:`\mathbb{E}[g(z)^2]`."""
        return gaussian_expectation(lambda z: self.func(z) ** 2)

    def moment(self, func: Callable[[np.ndarray], np.ndarray]) -> float:
        r""":math:`\mathbb{E}[F(z, g(z))]` for ``func(z, gz)``, e.g. ``lambda z, g: g**3 * z``."""
        return gaussian_expectation(lambda z: func(z, self.func(z)), DEFAULT_POINTS)

    def __add__(self, other: "Link") -> "Link":
        if not isinstance(other, Link):
            return NotImplemented
        f, g = self.func, other.func
        return Link(lambda z: f(z) + g(z), f"{self.name} + {other.name}")

    def __mul__(self, scale) -> "Link":
        scale = check_real(scale, "scale")
        f = self.func
        return Link(lambda z: scale * f(z), f"{scale:g}·{self.name}")

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"Link({self.name})"

def hermite_link(k: int) -> Link:
    r"""Normalised :math:`\mathrm{He}_k/\sqrt{k!}`: unit variance, information exponent ``k``.

    Parameters
    ----------
    k : int
        ``k >= 1``.

    Returns
    -------
    Link

    Examples
    --------
    >>> import twostep as ts
    >>> g = ts.hermite_link(2)
    >>> g.information_exponent, round(g.second_moment, 10), round(float(g.coefficients[2]), 6)
    (2, 1.0, 1.414214)
    """
    k = check_int(k, "k", 1)
    norm = math.sqrt(math.factorial(k))
    return Link(lambda z: hermite_polynomial(k, z) / norm, f"He_{k}")

def odd_bounded_link(frequency: float = 2.0) -> Link:
    r"""A bounded odd link, information exponent 3, unit variance:

    .. math:: g(z) = \frac{\sin(\omega z) - c_1 z}{\sqrt{\mathbb{E}[\sin^2(\omega z)] - c_1^2}},
              \qquad c_1 = \mathbb{E}[z\sin(\omega z)] = \omega e^{-\omega^2/2}.

    Parameters
    ----------
    frequency : float
        :math:`\omega > 0`.

    Returns
    -------
    Link

    Examples
    --------
    >>> import twostep as ts
    >>> g = ts.odd_bounded_link()
    >>> g.information_exponent, round(g.second_moment, 6)
    (3, 1.0)
    """
    w = check_real(frequency, "frequency", low=0.0, low_open=True)
    c1 = w * math.exp(-w * w / 2)
    var = 0.5 * (1.0 - math.exp(-2.0 * w * w)) - c1 * c1
    scale = 1.0 / math.sqrt(var)
    return Link(lambda z: scale * (np.sin(w * z) - c1 * z), f"odd sin({w:g}z)")

LINKS = ("he1", "he2", "he3", "he4", "odd")

def get_link(name: str) -> Link:
    """A link by name.

    Parameters
    ----------
    name : {"he1", "he2", "he3", "he4", "odd"}

    Returns
    -------
    Link

    Examples
    --------
    >>> import twostep as ts
    >>> ts.get_link("odd"), ts.get_link("he3").information_exponent
    (Link(odd sin(2z)), 3)
    """
    check_choice(name, "link name", LINKS)
    return odd_bounded_link() if name == "odd" else hermite_link(int(name[2:]))

class Teacher:
    r"""A multi-index teacher :math:`y = \sum_r g_r(\langle\beta^*_r, x\rangle) + \varepsilon`.

    Parameters
    ----------
    links : Link or sequence of Link
        One link per direction; ``directions`` ``(r, d)`` holds the :math:`\beta^*_r`.
    d : int
    rng : numpy.random.Generator
        Draws the directions (orthonormalised Gaussian vectors).
    noise : float, optional
        Standard deviation of the label noise.

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> rng = np.random.default_rng(0)
    >>> teacher = ts.Teacher(ts.hermite_link(1), 5, rng)
    >>> X, y = teacher.sample(3, rng)
    >>> X.shape, y.shape, np.allclose(y, X @ teacher.directions[0])
    ((3, 5), (3,), True)
    """

    def __init__(self, links, d: int, rng: np.random.Generator, noise: float = 0.0):
        links = check_links(links)
        d = check_int(d, "d", 1)
        check_rank(links, d)
        check_rng(rng)
        self._draw(links, d, check_real(noise, "noise", low=0.0), rng)

    def _draw(self, links, d, noise, rng):
        self.links, self.d, self.noise = list(links), d, noise
        q, r = np.linalg.qr(rng.standard_normal((d, len(links))))
        self.directions = (q * np.sign(np.diag(r))).T.copy()

    @classmethod
    def from_directions(cls, links, directions, noise: float = 0.0) -> "Teacher":
        r"""A teacher with given orthonormal directions (rows of ``directions``, ``(r, d)``)."""
        links = [links] if isinstance(links, Link) else list(links)
        B = check_array(directions, "directions", ndim=2)
        if B.shape[0] != len(links):
            raise ValueError(f"directions must have one row per link ({len(links)}), got {B.shape}")
        if not np.allclose(B @ B.T, np.eye(len(links)), atol=1e-5):
            raise ValueError("directions must be orthonormal rows")
        out = cls.__new__(cls)
        out.links, out.d, out.directions = links, B.shape[1], B.astype(float)
        out.noise = check_real(noise, "noise", low=0.0)
        return out

    @property
    def rank(self) -> int:
        return len(self.links)

    def labels(self, X, rng: np.random.Generator | None = None) -> np.ndarray:
        r"""Labels ``(n,)`` of inputs ``X`` ``(n, d)``; ``rng`` draws the label noise, if any."""
        X = check_array(X, "X", ndim=2, shape=(None, self.d))
        return self._labels(X, check_rng(rng) if self.noise > 0 else rng)

    def _labels(self, X, rng):
        Z = _projections(X, self.directions)
        y = np.zeros(X.shape[0], dtype=X.dtype)
        for r, g in enumerate(self.links):
            y += g(Z[:, r])
        if self.noise > 0:
            y += self.noise * rng.standard_normal(X.shape[0]).astype(X.dtype, copy=False)
        return y

    def sample(self, n: int, rng: np.random.Generator, dtype=np.float64):
        r"""Inputs :math:`x_j\sim N(0, I_d)` ``(n, d)``, then their labels ``(n,)``."""
        n = check_int(n, "n")
        return self._sample(n, check_rng(rng), check_dtype(dtype))

    def _sample(self, n, rng, dt):
        X = rng.standard_normal((n, self.d), dtype=dt)
        return X, self._labels(X, rng)

    def relabelled(self, target, name: str = "target") -> "Teacher":
        """The teacher of ``target`` (same rank, named ``name`` in errors) on these directions:
        the draw of ``target`` from the same generator state."""
        if isinstance(target, Teacher) or self.noise > 0:
            raise ValueError(f"{name}: only the first target may be a Teacher or have label "
                             "noise (the others relabel its draws)")
        links = target_links(target)[0]
        if len(links) != len(self.directions):
            raise ValueError(f"{name} has {len(links)} direction(s), the first target "
                             f"{len(self.directions)}: the draws are shared only between "
                             "targets with the same number of directions")
        return Teacher.from_directions(links, self.directions)

    @property
    def second_moment(self) -> float:
        r""":math:`\mathbb{E}[y^2]` (orthonormal directions: cross terms factorise)."""
        means = [g.coefficients[0] for g in self.links]
        total = sum(g.second_moment for g in self.links) + self.noise ** 2
        total += sum(means) ** 2 - sum(m * m for m in means)
        return float(total)

    def __repr__(self) -> str:
        return f"Teacher([{', '.join(g.name for g in self.links)}], d={self.d}, noise={self.noise:g})"

_ROW_BLOCK = 1 << 18

def _projections(X, directions):
    # X @ directions.T in float64, by blocks of rows: numpy would copy a float32 X whole.
    if X.dtype == directions.dtype:
        return X @ directions.T
    rows = max(1, _ROW_BLOCK // X.shape[1])
    Z = np.empty((X.shape[0], directions.shape[0]))
    for i in range(0, X.shape[0], rows):
        Z[i:i + rows] = X[i:i + rows] @ directions.T
    return Z

def target_links(target):
    r"""``(links, noise)`` of a :class:`Link`, links, a :class:`Teacher`, or link names joined by
    ``"+"`` (``"he1+odd"``: one direction per name)."""
    if isinstance(target, Teacher):
        return list(target.links), target.noise
    if isinstance(target, Link):
        return [target], 0.0
    if isinstance(target, str):
        unknown = [n.strip() for n in target.split("+") if n.strip() not in LINKS]
        if unknown:
            raise ValueError(f"target must be a link name in {list(LINKS)} or names joined by "
                             f"'+' (e.g. 'he1+odd'), got {target!r} ({unknown[0]!r} is unknown)")
        return [get_link(name.strip()) for name in target.split("+")], 0.0
    if isinstance(target, Sequence) and target and all(isinstance(g, Link) for g in target):
        return list(target), 0.0
    raise TypeError("target must be a Link, a sequence of Link, a Teacher, or a link name "
                    f"such as 'odd' or 'he1+odd', got {target!r}")

def make_teacher(target, d: int, rng: np.random.Generator, noise: float = 0.0) -> Teacher:
    r"""A :class:`Teacher` from a Teacher (returned as is) or any target of :func:`target_links`.

    Parameters
    ----------
    target : Link, sequence of Link, Teacher or str
        A link name, or names joined by ``"+"`` (``"he1+odd"``): one direction per link.
    d : int
    rng : numpy.random.Generator
        Draws the directions (not used for a Teacher).
    noise : float

    Returns
    -------
    Teacher

    Examples
    --------
    >>> import numpy as np, twostep as ts
    >>> teacher = ts.make_teacher("he1+odd", 6, np.random.default_rng(0))
    >>> teacher, teacher.directions.shape
    (Teacher([He_1, odd sin(2z)], d=6, noise=0), (2, 6))
    """
    d = check_int(d, "d")
    if not isinstance(target, Teacher):
        check_rng(rng)
    from ._core import make_teacher_core   # _core imports this module
    return make_teacher_core(target, d, rng, noise)

def check_links(links) -> list:
    """A :class:`Link` or a non-empty sequence of them, as a list."""
    if isinstance(links, Link):
        return [links]
    if isinstance(links, (str, bytes)) or not isinstance(links, Sequence) or not links \
            or not all(isinstance(g, Link) for g in links):
        raise TypeError("links must be a Link or a non-empty sequence of Link")
    return list(links)

def check_rank(links, d):
    """At most ``d`` directions."""
    if len(links) > d:
        raise ValueError(f"the number of links ({len(links)}) must be <= d ({d})")
