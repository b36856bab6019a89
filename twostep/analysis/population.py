r"""The population limit of the signal directions :math:`u_k = X_2^\top(y_2\odot w)/n`, reused
versus fresh (Gauss--Hermite quadratures; a leave-one-out heuristic)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import erf

from .._validation import check_choice, check_int, check_real
from ..model.activations import as_activation
from ..model.hermite import gauss_nodes, gaussian_expectation
from ..model.steps import BATCHES
from ..model.targets import Link, get_link, target_links
from ._core import check_order
from .decomposition import corrected_weight, polynomial_activation, reuse_weight
from .theory import fluctuation_variance_limit

#: The weights :func:`population_signal` knows (its ``kind``).
KINDS = ("plain", "reuse", "corrected")
#: Largest quadrature grid :func:`population_signal` builds (points per axis multiplied).
MAX_GRID = 4_000_000

@dataclass
class PopulationSignal:
    r"""Large-:math:`n` decomposition of :math:`u_k`: ``along`` :math:`A_r`, ``along_v`` :math:`B`,
    ``rest`` :math:`R`, ``sampling_var`` :math:`\mathrm{Var}(wz_r)` ``(r,)``."""

    k: int
    batch: str
    kind: str
    psi: float
    along: np.ndarray
    along_v: float
    rest: float
    sampling_var: np.ndarray

    @property
    def norm(self) -> float:
        r"""Limit of :math:`\|u_k\|`: :math:`\sqrt{\sum_r A_r^2 + B^2 + R}`."""
        return float(np.sqrt(np.sum(self.along ** 2) + self.along_v ** 2 + self.rest))

    @property
    def overlaps(self) -> np.ndarray:
        r"""Limit of the overlap with each :math:`\beta^*_r`, ``(r,)``."""
        return np.abs(self.along) / self.norm

    def expected_overlaps(self, n: int) -> np.ndarray:
        r"""Mean overlap at batch size ``n``, ``(r,)``: the folded-normal mean
        :math:`\big(\sigma\sqrt{2/\pi}\,e^{-A_r^2/2\sigma^2} +
        A_r\,\mathrm{erf}(A_r/\sqrt2\sigma)\big)/\|u_k\|`, :math:`\sigma^2 = \mathrm{Var}(wz_r)/n`."""
        n = check_int(n, "n")
        sd = np.sqrt(np.maximum(self.sampling_var, 0.0) / n)
        A = np.abs(self.along)
        safe = np.where(sd > 0, sd, 1.0)
        folded = np.where(sd > 0, sd * np.sqrt(2 / np.pi) * np.exp(-A ** 2 / (2 * safe ** 2))
                          + A * erf(A / (np.sqrt(2) * safe)), A)
        return folded / self.norm

def population_signal(target, psi: float, k: int, batch: str = "reused", kind: str = "plain",
                      activation=None, points: int = 80) -> PopulationSignal:
    r"""The large-:math:`n` components of :math:`u_k` along the target directions (module docstring of
    :mod:`twostep.analysis.population`), for the weight ``kind``: :math:`w = y s^k` (``"plain"``), the
    reuse-aware :math:`y\,m_k(s, \rho y/\psi)` (``"reuse"``), or with the neuron-specific part of the
    first update averaged in (``"corrected"``; both need a polynomial ``activation``).

    Parameters
    ----------
    target : Link, sequence of Link, Teacher (with its label noise), or str
    psi : float
        :math:`\psi = n/d > 0`.
    k : int >= 0
    batch : {"reused", "fresh"}
    kind : {"plain", "reuse", "corrected"}
    activation : PolynomialActivation or str, optional
    points : int
        Gauss--Hermite points per target direction.
    Returns
    -------
    PopulationSignal
    Examples
    --------
    >>> import twostep as ts   # the cubic term of a reused batch finds what a fresh one cannot
    >>> [float(ts.population_signal("odd", 1.0, 2, b).overlaps[0].round(4)) for b in ts.BATCHES]
    [0.1757, 0.0]
    """
    links, noise = target_links(target)
    psi = check_real(psi, "psi", low=0.0, low_open=True)
    k = check_int(k, "k", 0)
    batch = check_choice(batch, "batch", BATCHES)
    kind = check_choice(kind, "kind", KINDS)
    points = check_int(points, "points", 2)
    if kind != "plain":
        activation = polynomial_activation(activation)
        check_order(k, activation.degree)
    r = len(links)
    exact = k + 3  # w^2 and w * (s - lin) are polynomials of degree <= 2k + 2 in zeta and the noise
    axes = [gauss_nodes(points)] * r + [gauss_nodes(exact)] + ([gauss_nodes(exact)] if noise else [])
    size = math.prod(len(z) for z, _ in axes)
    if size > MAX_GRID:
        raise ValueError(f"the quadrature grid would have {size} points (> {MAX_GRID}); "
                         f"lower points (got {points}) or use fewer target directions")
    grids = np.meshgrid(*[z for z, _ in axes], indexing="ij")
    # The tensor rule's weights: the product of each axis' weights, broadcast to the grid.
    weight = math.prod(np.meshgrid(*[w for _, w in axes], indexing="ij", sparse=True))
    Z, zeta = grids[:r], grids[r]
    y = sum(g(Zr) for g, Zr in zip(links, Z))
    if noise:
        y = y + noise * grids[r + 1]
    E = lambda f: float(np.sum(weight * f))  # noqa: E731
    Ey2 = E(y * y)
    tau = math.sqrt(Ey2 / psi)
    c = [g.coefficients[1] for g in links]
    lin = sum(cr * Zr for cr, Zr in zip(c, Z))
    rho = 1.0 if batch == "reused" else 0.0
    self_term = rho * y / psi
    s = lin + self_term + tau * zeta
    if kind == "plain":
        w = y * s ** k
    elif kind == "reuse":
        w = y * reuse_weight(activation, k, activation.mu[1] * s, self_term)
    else:
        R2 = fluctuation_variance_limit(activation.mu, Ey2, psi)
        w = y * corrected_weight(activation, k, activation.mu[1] * s, self_term, R2)
    along = np.array([E(w * Zr) for Zr in Z])
    second = np.array([E((w * Zr) ** 2) for Zr in Z])
    along_v = E(w * (s - lin)) / tau
    rest = (E(w * w) - rho * E(w * y) ** 2 / Ey2) / psi
    return PopulationSignal(k=k, batch=batch, kind=kind, psi=psi, along=along,
                            along_v=float(along_v), rest=float(max(rest, 0.0)),
                            sampling_var=second - along ** 2)

def cubed_link_moment(target) -> float:
    r""":math:`\mathbb E[g(z)^3z] = c_1(g^3)` of a link or its name (reused :math:`A_2 = \mathbb
    E[g^3z]/\psi^2`)."""
    link = get_link(target) if isinstance(target, str) else target
    if not isinstance(link, Link):
        raise TypeError(f"target must be a Link or a link name, got {type(target).__name__}")
    return link.moment(lambda z, g: g ** 3 * z)

def self_term_moment(activation) -> float:
    r""":math:`\mathbb E[\sigma'''(z)\sigma'(z)^2]`, which replaces :math:`\mu_3\mu_1^2` in :math:`\tilde
    u_2`'s :math:`A_r`."""
    act = as_activation(activation)
    return gaussian_expectation(lambda z: act.derivative(z, 3) * act.derivative(z, 1) ** 2)

@dataclass
class Limits:
    r"""Large-:math:`n` limits (:func:`population_limits`): ``plain[target, batch, k]`` of :math:`u_k`,
    ``aware[target, batch]`` of :math:`\tilde u_k` at ``aware_order``."""

    psi: float
    orders: tuple
    aware_order: int
    plain: dict
    aware: dict

    def overlap(self, target: str, batch: str, k: int | None = None, n: int | None = None,
                index: int = 0, aware: bool = False) -> float:
        r"""Overlap with :math:`\beta^\star_{\text{index}}` of :math:`u_k` (``aware``: :math:`\tilde u`),
        the limit or the mean at ``n``."""
        sig = self.aware[target, batch] if aware else self.plain[target, batch, k]
        return float((sig.overlaps if n is None else sig.expected_overlaps(int(n)))[index])

    def paired_difference(self, target: str, N):
        r"""Reused-minus-fresh overlap of :math:`T_2`'s top vector at width ``N``: aware limit minus
        :math:`1/\sqrt N`."""
        return self.overlap(target, "reused", aware=True) - 1 / np.sqrt(N)

def population_limits(targets, psi: float, orders, activation, aware_order: int = 2) -> Limits:
    r""":class:`Limits` of :math:`u_k` for each of ``orders`` and of :math:`\tilde u_{\text{aware\_order}}`,
    both batches."""
    if isinstance(targets, str) or not all(isinstance(t, str) for t in targets):
        raise TypeError(f"targets must be a sequence of target names, got {targets!r}")
    targets = list(targets)
    psi = check_real(psi, "psi", low=0.0, low_open=True)
    orders = tuple(check_int(k, "orders[k]", 0) for k in orders)
    aware_order = check_int(aware_order, "aware_order", 0)
    act = as_activation(activation)
    plain = {(t, b, k): population_signal(t, psi, k, b)
             for t in targets for b in BATCHES for k in orders}
    aware = {(t, b): population_signal(t, psi, aware_order, b, kind="reuse", activation=act)
             for t in targets for b in BATCHES}
    return Limits(psi, orders, aware_order, plain, aware)
