r"""Reused versus fresh batches: the self-interaction and the population signal directions.

The :math:`k`-th term of the second update carries the rank-one signal
:math:`a^{\circ(k+1)}u_k^\top` with (see :mod:`twostep.decomposition`)

.. math:: u_k = \frac1n X_2^\top\big(y_2\odot s^{\circ k}\big),\qquad s = X_2v,\qquad
          v = \frac1n X_1^\top y_1 .

Write :math:`z_{jr} = \langle\beta^*_r, x_j\rangle`, :math:`c_r = c_1(g_r)` and
:math:`\psi = n/d`. In the proportional limit, with :math:`\zeta_j\sim N(0,1)`
independent of :math:`(z_j, y_j)`,

.. math::
    s_j \approx \sum_r c_r z_{jr} + \rho\,\frac{y_j}{\psi} + \tau\zeta_j,\qquad
    \tau^2 = \mathbb{E}[y^2]/\psi,

where :math:`\rho = 1` for a reused batch (sample :math:`j`'s own term
:math:`y_j\|x_j\|^2/n` in :math:`\langle x_j, v\rangle`) and :math:`\rho = 0` for a
fresh one. With :math:`w = y\,s^k` (or, for ``kind="reuse"``, the reuse-aware weight
:math:`y\,m_k` of :func:`twostep.reuse_weights`), :math:`u_k` splits into three
orthogonal pieces:

.. math::
    u_k \approx \sum_r A_r\beta^*_r + B\,\hat v_\perp + \text{(isotropic rest)},\qquad
    A_r = \mathbb{E}[w z_r],\quad
    B = \mathbb{E}\Big[w\big(s - \textstyle\sum_r c_r z_r\big)\Big]/\tau,

:math:`\hat v_\perp` the unit part of :math:`v` orthogonal to the :math:`\beta^*_r`,
and a rest of squared norm :math:`R = \big(\mathbb{E}[w^2] - \rho\,\mathbb{E}[wy]^2/\mathbb{E}[y^2]\big)/\psi`
(under reuse the inputs' remaining coordinates are orthogonal to :math:`y` by
construction of :math:`\hat v_\perp`). So the overlap of :math:`u_k` with
:math:`\beta^*_r` tends to

.. math:: \frac{|A_r|}{\sqrt{\sum_{r'} A_{r'}^2 + B^2 + R}} .

All expectations are Gauss--Hermite quadratures over :math:`(z_1,\dots,z_r,\zeta)`
(and the label noise, if any). With a fresh batch (:math:`\rho = 0`) and :math:`c_r = 0`,
:math:`s` does not depend on :math:`z_r`, so :math:`A_r = c_r\,\mathbb{E}[s^k] = 0` for every
:math:`k`: fresh batches reach only directions whose link has :math:`c_1 \neq 0`. This is a
heuristic (leave-one-out) limit; ``tests/test_reuse.py`` checks it against simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.special import erf

from ._validation import check_alpha, check_array, check_choice, check_int, check_real, check_rng
from .activations import PolynomialActivation, get_activation
from .alignment import memorisation, overlaps, subspace_overlap
from .decomposition import second_step_term, signal_part
from .hermite import gauss_nodes
from .spectra import top_singular
from .targets import Link, Teacher, get_link
from .training import BATCHES, run_two_steps, step_size

KINDS = ("plain", "reuse")

#: Largest quadrature grid :func:`population_signal` builds (points per axis multiplied).
MAX_GRID = 4_000_000


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
        return [get_link(name.strip()) for name in target.split("+")], 0.0
    if isinstance(target, Sequence) and target and all(isinstance(g, Link) for g in target):
        return list(target), 0.0
    raise TypeError("target must be a Link, a sequence of Link, a Teacher, or a link name "
                    f"such as 'odd' or 'he1+odd', got {target!r}")


def signal_directions(X1, y1, ks, X2=None, y2=None, activation=None) -> np.ndarray:
    r"""The directions :math:`u_k = X_2^\top(y_2\odot (X_2v)^{\circ k})/n_2`, :math:`v = X_1^\top y_1/n_1`.

    They depend on the data only, not on the network's weights. With ``activation``
    given, the reuse-aware directions :math:`\tilde u_k = X_2^\top(y_2\odot m_k)/n_2` of
    :func:`twostep.signal_part` (``kind="reuse"``) are returned instead, with
    :math:`m_{k,j} = \mathbb{E}_z[\sigma^{(k+1)}(z)(\mu_1 s_j + (\sigma'(z)-\mu_1)r_j)^k]`,
    :math:`r_j = y_j\|x_j\|^2/n` for a reused batch and :math:`0` for a fresh one.

    Parameters
    ----------
    X1 : ndarray, shape (n1, d)
    y1 : ndarray, shape (n1,)
    ks : sequence of int
        Orders :math:`k \ge 0` (at most :math:`L-1` with an activation of degree :math:`L`).
    X2, y2 : ndarray, shapes (n2, d) and (n2,), optional
        The second batch; omitted (both ``None``) means the first batch is reused.
    activation : PolynomialActivation or str, optional

    Returns
    -------
    ndarray, shape (len(ks), d)
    """
    X1 = check_array(X1, "X1", ndim=2)
    y1 = check_array(y1, "y1", shape=(X1.shape[0],))
    if (X2 is None) != (y2 is None):
        raise ValueError("give both X2 and y2 (fresh batch) or neither (reused batch)")
    reused = X2 is None
    if reused:
        X2, y2 = X1, y1
    else:
        X2 = check_array(X2, "X2", ndim=2, shape=(None, X1.shape[1]))
        y2 = check_array(y2, "y2", shape=(X2.shape[0],))
    if isinstance(ks, (int, np.integer)) or not len(ks):
        raise TypeError(f"ks must be a non-empty sequence of integers >= 0, got {ks!r}")
    ks = [check_int(k, "k", 0) for k in ks]
    n = X2.shape[0]
    s = X2 @ (X1.T @ y1 / X1.shape[0])
    if activation is None:
        W = np.stack([y2 * s ** k for k in ks], axis=1)
    else:
        activation = _activation(activation)
        if max(ks) > activation.degree - 1:
            raise ValueError(f"k must be in [0, L-1] = [0, {activation.degree - 1}] for a "
                             f"degree-{activation.degree} activation, got {max(ks)}")
        r = y2 * np.einsum("ij,ij->i", X2, X2) / n if reused else np.zeros(n)
        mu1 = activation.mu[1]
        W = np.stack([y2 * _reuse_weight(activation, k, mu1 * s, r) for k in ks], axis=1)
    return (X2.T @ W).T / n


@dataclass
class PopulationSignal:
    r"""Large-:math:`n` decomposition of :math:`u_k` (or :math:`\tilde u_k`).

    Attributes
    ----------
    along : ndarray, shape (r,)
        :math:`A_r = \mathbb{E}[w z_r]`, the component along each :math:`\beta^*_r`.
    along_v : float
        :math:`B`, the component along the first step's noise direction :math:`\hat v_\perp`.
    rest : float
        :math:`R`, the squared norm of the isotropic remainder.
    sampling_var : ndarray, shape (r,)
        :math:`\mathrm{Var}(w z_r)`: at finite :math:`n` the component along
        :math:`\beta^*_r` fluctuates around :math:`A_r` with variance ``sampling_var / n``.
    """

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
        r"""Limit of the overlap of :math:`u_k` with each :math:`\beta^*_r`, shape ``(r,)``."""
        return np.abs(self.along) / self.norm

    def expected_overlaps(self, n: int) -> np.ndarray:
        r"""Mean overlap with each :math:`\beta^*_r` at batch size ``n``, shape ``(r,)``.

        The component along :math:`\beta^*_r` is :math:`A_r + \delta`,
        :math:`\delta\sim N(0, \sigma^2)`, :math:`\sigma^2 = \mathrm{Var}(wz_r)/n`, so the mean
        overlap is the folded-normal mean
        :math:`\big(\sigma\sqrt{2/\pi}\,e^{-A_r^2/2\sigma^2} + A_r\,\mathrm{erf}(A_r/\sqrt2\sigma)\big)/\|u_k\|`.
        It tends to :attr:`overlaps` as :math:`n\to\infty`; when :math:`A_r = 0` it is the
        sampling level :math:`\sigma\sqrt{2/\pi}/\|u_k\|`, of order :math:`n^{-1/2}`.
        """
        n = check_int(n, "n")
        sd = np.sqrt(np.maximum(self.sampling_var, 0.0) / n)
        A = np.abs(self.along)
        safe = np.where(sd > 0, sd, 1.0)
        folded = np.where(sd > 0, sd * np.sqrt(2 / np.pi) * np.exp(-A ** 2 / (2 * safe ** 2))
                          + A * erf(A / (np.sqrt(2) * safe)), A)
        return folded / self.norm


def _activation(activation):
    if isinstance(activation, str):
        activation = get_activation(activation)
    if not isinstance(activation, PolynomialActivation):
        raise TypeError("activation must be a PolynomialActivation or its name (e.g. 'poly4'), "
                        f"got {activation!r}")
    return activation


def _reuse_weight_coefficients(activation, k, points=60):
    # e_m = E[sigma^(k+1)(z) (sigma'(z) - mu_1)^m], m = 0..k, so that
    # m_k(s, r) = sum_m C(k, m) (mu_1 s)^(k-m) r^m e_m.
    z, w = gauss_nodes(points)
    d1 = activation.derivative(z, 1) - activation.mu[1]
    dk = activation.derivative(z, k + 1)
    return np.array([np.dot(w, dk * d1 ** m) for m in range(k + 1)])


def _reuse_weight(activation, k, mu1_s, r):
    # m_k = E_z[sigma^(k+1)(z) (mu_1 s + (sigma'(z) - mu_1) r)^k]
    #     = sum_m C(k, m) (mu_1 s)^(k-m) r^m e_m, elementwise in (s, r).
    e = _reuse_weight_coefficients(activation, k)
    return sum(math.comb(k, m) * mu1_s ** (k - m) * r ** m * e[m] for m in range(k + 1))


def population_signal(target, psi: float, k: int, batch: str = "reused", kind: str = "plain",
                      activation=None, points: int = 80) -> PopulationSignal:
    r"""The large-:math:`n` components of :math:`u_k` along the target directions.

    Parameters
    ----------
    target : Link, sequence of Link, Teacher, or str
        See :func:`target_links`; a Teacher's label noise is included.
    psi : float
        :math:`\psi = n/d > 0`.
    k : int
        Order of the term, ``k >= 0``.
    batch : {"reused", "fresh"}
    kind : {"plain", "reuse"}
        ``"plain"``: :math:`w = y s^k` (the direction :math:`u_k`); ``"reuse"``: the
        reuse-aware weight :math:`w = y\,\mathbb{E}_{z'}[\sigma^{(k+1)}(z')(\mu_1 s +
        (\sigma'(z')-\mu_1)\rho y/\psi)^k]` of :func:`twostep.signal_part` with
        ``kind="reuse"`` (needs ``activation``).
    activation : PolynomialActivation or str, optional
        Needed for ``kind="reuse"``.
    points : int
        Gauss--Hermite points per target direction (the :math:`\zeta` and noise axes
        use the exact rule for their polynomial degree).

    Returns
    -------
    PopulationSignal
    """
    links, noise = target_links(target)
    psi = check_real(psi, "psi", low=0.0, low_open=True)
    k = check_int(k, "k", 0)
    batch = check_choice(batch, "batch", BATCHES)
    kind = check_choice(kind, "kind", KINDS)
    points = check_int(points, "points", 2)
    if kind == "reuse":
        activation = _activation(activation)
        if k > activation.degree - 1:
            raise ValueError(f"k must be in [0, L-1] = [0, {activation.degree - 1}] for a "
                             f"degree-{activation.degree} activation, got {k}")
    r = len(links)
    exact = k + 3  # w^2 and w * (s - lin) are polynomials of degree <= 2k + 2 in zeta and the noise
    axes = [gauss_nodes(points)] * r + [gauss_nodes(exact)] + ([gauss_nodes(exact)] if noise else [])
    size = math.prod(len(z) for z, _ in axes)
    if size > MAX_GRID:
        raise ValueError(f"the quadrature grid would have {size} points (> {MAX_GRID}); "
                         f"lower points (got {points}) or use fewer target directions")
    grids = np.meshgrid(*[z for z, _ in axes], indexing="ij")
    weight = np.ones(grids[0].shape)
    for i, (_, w) in enumerate(axes):
        shape = [1] * len(axes)
        shape[i] = -1
        weight = weight * w.reshape(shape)
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
    else:
        w = y * _reuse_weight(activation, k, activation.mu[1] * s, self_term)
    along = np.array([E(w * Zr) for Zr in Z])
    second = np.array([E((w * Zr) ** 2) for Zr in Z])
    along_v = E(w * (s - lin)) / tau
    rest = (E(w * w) - rho * E(w * y) ** 2 / Ey2) / psi
    return PopulationSignal(k=k, batch=batch, kind=kind, psi=psi, along=along,
                            along_v=float(along_v), rest=float(max(rest, 0.0)),
                            sampling_var=second - along ** 2)


def unmemorised_overlap(V, B, X) -> np.ndarray:
    r"""Overlap of the span of ``V``'s rows with each :math:`\beta_r`, after projecting
    :math:`\beta_r` off the training inputs that ``V``'s rows memorise.

    For each row :math:`v_i` of ``V`` (``(K, d)``) take the input
    :math:`x_{j_i}` with the largest :math:`|\cos(v_i, x_j)|` (:func:`twostep.memorisation`);
    replace each row :math:`\beta_r` of ``B`` (``(r, d)``) by its component orthogonal to
    :math:`\mathrm{span}\{x_{j_1},\dots,x_{j_K}\}` and return
    :func:`twostep.subspace_overlap` of ``V`` with those, shape ``(r,)``. A memorised
    input then adds nothing, however much of :math:`\beta_r` it happens to carry.
    """
    V = np.atleast_2d(check_array(V, "V"))
    B = np.atleast_2d(check_array(B, "B"))
    X = check_array(X, "X", ndim=2, shape=(None, V.shape[1]))
    if B.shape[1] != V.shape[1]:
        raise ValueError(f"V and B must have the same number of columns, got {V.shape} and {B.shape}")
    J = sorted({memorisation(v, X)[1] for v in V})
    Q, _ = np.linalg.qr(X[J].T)
    Bc = B - (B @ Q) @ Q.T
    return subspace_overlap(V, Bc)


def signal_overlap_experiment(rng: np.random.Generator, n: int, d: int, target, batch: str,
                              ks=(0, 1, 2, 3), activation=None) -> dict:
    r"""Draw a teacher and data and measure the overlaps of :math:`u_k` with the target directions.

    No network is needed: :math:`u_k` depends on the data only. For :func:`twostep.sweep`.

    Returns
    -------
    dict
        ``overlaps`` (``(len(ks), r)``) and ``norms`` (``(len(ks),)``) of the :math:`u_k`;
        with ``activation`` given, also ``overlaps_reuse`` (``(len(ks), r)``) of the
        reuse-aware :math:`\tilde u_k` (see :func:`signal_directions`).
    """
    check_rng(rng)
    n, d = check_int(n, "n"), check_int(d, "d")
    batch = check_choice(batch, "batch", BATCHES)
    links, noise = target_links(target)
    teacher = Teacher(links, d, rng, noise=noise)
    X1, y1 = teacher.sample(n, rng)
    second = teacher.sample(n, rng) if batch == "fresh" else (None, None)
    U = signal_directions(X1, y1, ks, *second)
    out = {"overlaps": overlaps(U, teacher.directions), "norms": np.linalg.norm(U, axis=1)}
    if activation is not None:
        Ur = signal_directions(X1, y1, ks, *second, activation=activation)
        out["overlaps_reuse"] = overlaps(Ur, teacher.directions)
    return out


def reuse_experiment(rng: np.random.Generator, N: int, target, batch: str, steps,
                     activation="poly4", term: int | None = 2, top: int = 8,
                     alpha2s=()) -> dict:
    r"""Two steps at :math:`N = n = d`, and where the learned directions point.

    Parameters
    ----------
    rng : numpy.random.Generator
    N : int
        Width, batch size and dimension.
    target : see :func:`target_links`
    batch : {"reused", "fresh"}
    steps : ((c1, alpha1), (c2, alpha2))
    activation : PolynomialActivation or str
    term : int or None
        Order :math:`k` of the exact term :math:`T_k` whose top right singular vector is
        measured, and of the reuse-aware direction :math:`\tilde u_k`; ``None`` skips both
        (they cost one more :math:`N\times n\times d` product).
    top : int
        Number of top right singular vectors of :math:`W_2` to measure.
    alpha2s : sequence of float
        Other second-step exponents :math:`\alpha_2'` (same :math:`c_2`, same
        :math:`\alpha_1`) at which to measure the learned subspace of the *same draw*. Since
        :math:`W_2 - W_1 = \eta_2\sum_k\eta_1^k\hat T_k` (:mod:`twostep.rescaling`), at fixed
        :math:`\eta_1` the whole second update scales with :math:`\eta_2`:
        :math:`W_2' = W_1 + (\eta_2'/\eta_2)(W_2 - W_1)` exactly, so no new run is needed.

    Returns
    -------
    dict
        ``signal``: overlaps of :math:`u_0..u_{L-1}` with the directions, ``(L, r)``;
        ``top_values``: top singular values of :math:`W_2`, ``(top,)``;
        ``top_overlap``: their right vectors' overlaps, ``(top, r)``;
        ``top_memorisation``: their :func:`twostep.memorisation`, ``(top,)``;
        ``subspace`` and ``subspace_unmemorised``: overlap of the span of the first
        :math:`K` vectors, :math:`K = 1..top`, without and with memorised inputs set
        aside (:func:`unmemorised_overlap`), ``(top, r)``; if ``term`` is given
        ``signal_reuse`` (``(r,)``), ``term_value``, ``term_overlap`` (``(r,)``),
        ``term_memorisation``; if ``alpha2s`` is given, ``rescaled_subspace`` and
        ``rescaled_subspace_unmemorised``, ``(len(alpha2s), top, r)``, the same two
        quantities for :math:`W_2'` at each :math:`\alpha_2'`.
    """
    check_rng(rng)
    N = check_int(N, "N")
    top = check_int(top, "top")
    if isinstance(alpha2s, (int, float)) or not isinstance(alpha2s, Sequence):
        raise TypeError(f"alpha2s must be a sequence of exponents in [0, 1/2), got {alpha2s!r}")
    alpha2s = [check_alpha(a2, "alpha2s") for a2 in alpha2s]
    if isinstance(activation, str):
        activation = get_activation(activation)
    links, noise = target_links(target)
    teacher = Teacher(links, N, rng, noise=noise)
    run = run_two_steps(N, N, N, activation, teacher, steps, batch, rng)
    B = teacher.directions
    L = activation.degree
    second = (None, None) if run.batch == "reused" else (run.X2, run.y2)
    out = {"signal": overlaps(signal_directions(run.X1, run.y1, range(L), *second), B)}
    if term is not None:
        term = check_int(term, "term", 0)
        out["signal_reuse"] = overlaps(signal_part(run, term, "auto").right, B)[0]
        T = second_step_term(run, term)
        s, _, Vt = top_singular(T, 1)
        del T
        out["term_value"] = float(s[0])
        out["term_overlap"] = overlaps(Vt, B)[0]
        out["term_memorisation"] = memorisation(Vt[0], run.X2)[0]
    s, _, Vt = top_singular(run.W2, top)
    out["top_values"] = s
    out["top_overlap"] = overlaps(Vt, B)
    out["top_memorisation"] = np.array([memorisation(v, run.X2)[0] for v in Vt])
    out["subspace"], out["subspace_unmemorised"] = _learned_subspace(Vt, B, run.X2)
    if alpha2s:
        update = run.W2 - run.W1
        sub, unm = [], []
        for a2 in alpha2s:
            scale = step_size(run.params["c2"], a2, N) / run.eta2
            _, _, Vt = top_singular(run.W1 + scale * update, top)
            sub_a2, unm_a2 = _learned_subspace(Vt, B, run.X2)
            sub.append(sub_a2)
            unm.append(unm_a2)
        out["rescaled_subspace"], out["rescaled_subspace_unmemorised"] = np.array(sub), np.array(unm)
    return out


def _learned_subspace(Vt, B, X):
    # Overlaps of the spans of the first K rows of Vt, K = 1..len(Vt): raw and with memorised
    # inputs set aside; each (len(Vt), r).
    raw = np.array([subspace_overlap(Vt[:K], B) for K in range(1, len(Vt) + 1)])
    clean = np.array([unmemorised_overlap(Vt[:K], B, X) for K in range(1, len(Vt) + 1)])
    return raw, clean
