r"""Target functions: link functions and the single- and multi-index teachers.

A *link* :math:`g:\mathbb{R}\to\mathbb{R}` is described by its Hermite
coefficients :math:`c_k(g) = \mathbb{E}[g(z)\mathrm{He}_k(z)]` and its
information exponent, the smallest :math:`k\ge 1` with :math:`c_k(g)\ne 0`.
A teacher draws orthonormal directions :math:`\beta^*_1,\dots,\beta^*_r` and
labels

.. math:: y = \sum_{r} g_r(\langle\beta^*_r, x\rangle) + \varepsilon,
          \qquad \varepsilon\sim N(0, s^2).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from .._validation import check_array, check_choice, check_dtype, check_int, check_real, check_rng
from .hermite import DEFAULT_POINTS, _hermite_polynomial, gaussian_expectation, hermite_coefficients
from .hermite import information_exponent as _information_exponent

#: Hermite degree up to which a link's coefficients are tabulated.
MAX_DEGREE = 12


class Link:
    r"""A link function :math:`g` with its Hermite description.

    Parameters
    ----------
    func : callable
        Vectorised :math:`g`, mapping an array to an array of the same shape.
    name : str
        Label used in tables and legends.
    """

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
            # Quadrature noise on coefficients that vanish by symmetry is
            # ~1e-15; zero it so that the information exponent is exact.
            c[np.abs(c) < 1e-10] = 0.0
            self._coef = c
        return self._coef

    @property
    def information_exponent(self) -> int | None:
        """Smallest ``k >= 1`` with ``c_k != 0`` (``None`` if ``g`` is constant)."""
        return _information_exponent(self.coefficients, tol=1e-10)

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
    r"""Normalised :math:`\mathrm{He}_k/\sqrt{k!}`: unit variance, information exponent ``k``."""
    k = check_int(k, "k", 1)
    norm = math.sqrt(math.factorial(k))
    return Link(lambda z: _hermite_polynomial(k, z) / norm, f"He_{k}")


def odd_bounded_link(frequency: float = 2.0) -> Link:
    r"""A bounded odd link with no linear part, normalised to unit variance:

    .. math:: g(z) = \frac{\sin(\omega z) - c_1 z}{\sqrt{\mathbb{E}[\sin^2(\omega z)] - c_1^2}},
              \qquad c_1 = \mathbb{E}[z\sin(\omega z)] = \omega e^{-\omega^2/2}.

    Odd, so :math:`c_2 = 0`; :math:`c_3 = -\omega^3 e^{-\omega^2/2} \ne 0`:
    information exponent 3, with tails no heavier than linear (unlike He_3).
    """
    w = check_real(frequency, "frequency", low=0.0, low_open=True)
    c1 = w * math.exp(-w * w / 2)
    var = 0.5 * (1.0 - math.exp(-2.0 * w * w)) - c1 * c1
    scale = 1.0 / math.sqrt(var)
    return Link(lambda z: scale * (np.sin(w * z) - c1 * z), f"odd sin({w:g}z)")


#: Names accepted by :func:`get_link`.
LINKS = ("he1", "he2", "he3", "he4", "odd")


def get_link(name: str) -> Link:
    """A link by name: ``"he1"`` ... ``"he4"`` (normalised Hermite), ``"odd"`` (bounded odd)."""
    check_choice(name, "link name", LINKS)
    return odd_bounded_link() if name == "odd" else hermite_link(int(name[2:]))


class Teacher:
    r"""A multi-index teacher :math:`y = \sum_r g_r(\langle\beta^*_r, x\rangle) + \varepsilon`.

    Parameters
    ----------
    links : Link or sequence of Link
        One link per direction.
    d : int
        Input dimension.
    rng : numpy.random.Generator
        Draws the directions (orthonormalised Gaussian vectors).
    noise : float, optional
        Standard deviation ``s >= 0`` of the label noise.

    Attributes
    ----------
    directions : ndarray, shape (r, d)
        Orthonormal rows :math:`\beta^*_r`.
    """

    def __init__(self, links, d: int, rng: np.random.Generator, noise: float = 0.0):
        links = check_links(links)
        d = check_int(d, "d", 1)
        _check_rank(links, d)
        check_rng(rng)
        self._draw(links, d, check_real(noise, "noise", low=0.0), rng)

    def _draw(self, links, d, noise, rng):
        # The teacher of checked arguments: orthonormalised Gaussian directions from rng.
        self.links, self.d, self.noise = list(links), d, noise
        q, r = np.linalg.qr(rng.standard_normal((d, len(links))))
        self.directions = (q * np.sign(np.diag(r))).T.copy()

    @classmethod
    def from_directions(cls, links, directions, noise: float = 0.0) -> "Teacher":
        r"""A teacher with given orthonormal directions (rows of ``directions``, ``(r, d)``),
        e.g. drawn on a GPU by :func:`twostep.scale.device.draw_problem_on`."""
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

    def labels(self, X, rng: np.random.Generator) -> np.ndarray:
        r"""Labels :math:`y_j`, shape ``(n,)``, for inputs ``X`` of shape ``(n, d)``."""
        X = check_array(X, "X", ndim=2, shape=(None, self.d))
        return self._labels(X, check_rng(rng))

    def _labels(self, X, rng):
        Z = _projections(X, self.directions)
        y = np.zeros(X.shape[0], dtype=X.dtype)
        for r, g in enumerate(self.links):
            y += g(Z[:, r])
        if self.noise > 0:
            y += self.noise * rng.standard_normal(X.shape[0]).astype(X.dtype, copy=False)
        return y

    def sample(self, n: int, rng: np.random.Generator, dtype=np.float64):
        r"""A batch: inputs :math:`x_j\sim N(0, I_d)` (``(n, d)``), then their labels (``(n,)``),
        drawn from ``rng`` in that order."""
        n = check_int(n, "n")
        return self._sample(n, check_rng(rng), check_dtype(dtype))

    def _sample(self, n, rng, dt):
        X = rng.standard_normal((n, self.d), dtype=dt)
        return X, self._labels(X, rng)

    @property
    def second_moment(self) -> float:
        r""":math:`\mathbb{E}[y^2]` (directions orthonormal, so cross terms factorise)."""
        means = [g.coefficients[0] for g in self.links]
        total = sum(g.second_moment for g in self.links) + self.noise ** 2
        total += sum(means) ** 2 - sum(m * m for m in means)
        return float(total)

    def __repr__(self) -> str:
        return f"Teacher([{', '.join(g.name for g in self.links)}], d={self.d}, noise={self.noise:g})"


#: Rows of a float32 batch cast to float64 at a time in :func:`_projections` (2 MB blocks).
_ROW_BLOCK = 1 << 18


def _projections(X, directions):
    # X @ directions.T in float64. For a float32 X, numpy would cast all of X to float64 first
    # (an (n, d) copy, one more pass over memory); blocks of rows keep the copy in cache.
    if X.dtype == directions.dtype:
        return X @ directions.T
    rows = max(1, _ROW_BLOCK // X.shape[1])
    Z = np.empty((X.shape[0], directions.shape[0]))
    for i in range(0, X.shape[0], rows):
        Z[i:i + rows] = X[i:i + rows] @ directions.T
    return Z


def target_links(target):
    r"""The links and label-noise level of a target.

    ``target`` is a :class:`Link`, a sequence of links, a :class:`Teacher`, or a
    name understood by :func:`twostep.get_link`; names joined by ``"+"`` (e.g.
    ``"he1+odd"``) give a multi-index target, one direction per name.
    Returns ``(links, noise)``.
    """
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
    r"""A :class:`Teacher` from a Teacher (returned as is) or any target of
    :func:`target_links` (one direction per link, drawn from ``rng``), with label noise of
    standard deviation ``noise``."""
    d = check_int(d, "d")
    if not isinstance(target, Teacher):
        check_rng(rng)
    return _make_teacher(target, d, rng, noise)


def _make_teacher(target, d, rng, noise):
    # make_teacher for a checked d: the target and the noise are checked here, the generator
    # by the caller (it is not used for a given Teacher).
    if isinstance(target, Teacher):
        if target.d != d:
            raise ValueError(f"target (a Teacher) has d={target.d}, but d={d}")
        if noise != 0.0 and noise != target.noise:
            # A given Teacher keeps its own noise; silently dropping this one would lie.
            raise ValueError(f"noise={noise} cannot be applied to a given Teacher (its noise is "
                             f"{target.noise}); build the Teacher with noise={noise} instead")
        return target
    links, _ = target_links(target)
    _check_rank(links, d)
    teacher = Teacher.__new__(Teacher)
    teacher._draw(links, d, check_real(noise, "noise", low=0.0), rng)
    return teacher


def _relabelling(teacher, target, name: str) -> "Teacher":
    # The teacher of ``target`` on ``teacher``'s directions: since a teacher's directions are
    # drawn by its rank alone, its labels of the same inputs are those of a draw of ``target``
    # from the same generator state (the experiments' *_cases share one draw between targets).
    if isinstance(target, Teacher) or teacher.noise > 0:
        raise ValueError(f"{name}: only the first target may be a Teacher or have label noise "
                         "(the others relabel its draws)")
    links = target_links(target)[0]
    if len(links) != len(teacher.directions):
        raise ValueError(f"{name} has {len(links)} direction(s), the first target "
                         f"{len(teacher.directions)}: the draws are shared only between targets "
                         "with the same number of directions")
    return Teacher.from_directions(links, teacher.directions)


def check_links(links) -> list:
    """``links``, a :class:`Link` or a non-empty sequence of them, as a list."""
    if isinstance(links, Link):
        return [links]
    if isinstance(links, (str, bytes)) or not isinstance(links, Sequence) or not links \
            or not all(isinstance(g, Link) for g in links):
        raise TypeError("links must be a Link or a non-empty sequence of Link")
    return list(links)


def _check_rank(links, d):
    if len(links) > d:
        raise ValueError(f"the number of links ({len(links)}) must be <= d ({d})")
